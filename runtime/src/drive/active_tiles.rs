//! Golly's unbounded plane on active tiles (the idea of Golly's QuickLife): the plane is cut
//! into square tiles of `side` cells, only tiles with live cells are held, and a tile is stepped
//! only when it or one of its eight neighbours changed in the last chunk of generations.
//!
//! A chunk advances `chunk` generations at once. A run of neighbouring active tiles of one row
//! of tiles is stepped in one window: the tiles with a margin of `chunk * r` rows above and below
//! and `halo` columns each side, read from their neighbours. The windows are laid side by side
//! in bands, and bands one under another, in one torus run by any simulator (the CPU's native
//! kernels, the GPU's): a window's margin is at least
//! as wide as the influence of `chunk` generations travels, so whatever its neighbours in the
//! torus (or the torus's wrap) do at a window's edges never reaches its tile, which is cut out
//! again afterwards.
//!
//! A rule that gives birth on no neighbours (B0) and has no S8 fills the plane and empties it
//! by turns; Golly holds the complement of its cells at odd generations
//! ([`lifegen_gen::BirthOnZero::Alternating`]), and so do the tiles: a window is complemented
//! when it is gathered at an odd generation, stepped by the rule itself (whose empty plane is
//! the window's complemented margin), and its tile complemented again when the chunk ends at
//! an odd generation.
//!
//! On the GPU, active tiles that fill at least half of their box are stepped as one window of
//! the whole box, in chunks of up to a tile's side (margins about a 48th of the box): a soup at
//! full activity then runs at 0.7-0.87x the dense torus's rate in tiles of 512 and 1024, where
//! windows of blocks ran at 0.13-0.2x (BENCHMARKS.md, nineteenth session).
//!
//! A tile equal after a chunk to what it was before, with eight neighbours that did not change
//! either, would be stepped from the same window again: it is left alone, whatever its period
//! as long as the period divides `chunk` (still lifes, blinkers, the period-2, 4, 8, 16 and 32
//! oscillators of Life). A chunk of another length steps every tile with live cells.

use std::collections::HashMap;
use std::sync::Mutex;

use lifegen_gen::generations::Generations;
use lifegen_gen::{BirthOnZero, Rule, Topology};
use rayon::prelude::*;

use crate::cpu::tiles::{Row, TILE_WORDS, WindowKernel, with_scratch};
use crate::drive::bands::radius;
use crate::drive::plane::{
    Placed, PlaneEngine, PlaneError, births_from_nothing, cached_live_universe, cells_at,
};
use crate::gpu::tiles::{TilePool, TileWords};
use crate::simulator::{BackendError, Simulator};
use crate::universe::Universe;
use lifegen_gen::emit::ptx_tiles::ALIVE_FLAG;
use lifegen_gen::key_hasher::{KeyMap, KeySet};

use super::plane::MakeBox;

/// Cells a stacked batch of windows holds at most.
const BATCH_CELLS: u64 = 1 << 24;

type Key = (i64, i64);

/// A tile and its eight neighbours, as offsets in tiles.
const NEIGHBOURHOOD: [Key; 9] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (0, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

/// Words a band of a batch's torus holds at most: the widest row the CPU's tile kernels step in
/// one tile (a narrower torus is padded to the kernel's vector width, so one window of three
/// words a row ran at three words in eight).
const BAND_WORDS: usize = TILE_WORDS - 2;

/// Words a tile's row may have for a cut-out's bookkeeping to stay on the stack.
const STACKED_WORDS: usize = 16;

/// Tile rows a block of a busy region spans: its window's margins above and below are paid
/// once for them all (see [`blocks`]).
const BLOCK_ROWS: usize = 4;

/// Neighbouring tiles stepped in one window: `len` tiles of each of `rows` rows of tiles, from
/// `first` rightwards and downwards. Neighbours share their margins, so a block costs margins at
/// its edges only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Block {
    first: Key,
    len: usize,
    rows: usize,
}

impl Block {
    /// Each tile of the block, with its column and row in the block.
    fn tiles(self) -> impl Iterator<Item = (Key, usize, usize)> {
        (0..self.rows).flat_map(move |k| {
            (0..self.len).map(move |i| ((self.first.0 + i as i64, self.first.1 + k as i64), i, k))
        })
    }
}

/// The runs of neighbouring tiles of `active` (sorted by row, then column) in one row each.
fn runs(active: &[Key]) -> Vec<Block> {
    let mut runs: Vec<Block> = Vec::new();
    for &(x, y) in active {
        match runs.last_mut() {
            Some(run) if run.first.1 == y && run.first.0 + run.len as i64 == x => run.len += 1,
            _ => runs.push(Block {
                first: (x, y),
                len: 1,
                rows: 1,
            }),
        }
    }
    runs
}

/// The blocks `active` (sorted by row, then column) is stepped in: in each group of `rows`
/// rows of tiles, blocks `rows` high over the columns active in any of them, or a block a row
/// for each run of one row, whichever costs less by `cost` (of a block's length and rows). A
/// block steps tiles that were not active too: they come out as they were, since their window
/// did not change since it gave them.
fn blocks(active: &[Key], rows: usize, cost: impl Fn(usize, usize) -> u64) -> Vec<Block> {
    let group_of = |y: i64| y.div_euclid(rows as i64);
    let mut blocks = Vec::new();
    for group in active.chunk_by(|a, b| group_of(a.1) == group_of(b.1)) {
        let alone = runs(group);
        if rows == 1 {
            blocks.extend(alone);
            continue;
        }
        let top = group_of(group[0].1) * rows as i64;
        let mut columns: Vec<Key> = group.iter().map(|&(x, _)| (x, top)).collect();
        columns.sort_unstable();
        columns.dedup();
        let together: Vec<Block> = runs(&columns)
            .into_iter()
            .map(|run| Block { rows, ..run })
            .collect();
        let total = |blocks: &[Block]| blocks.iter().map(|b| cost(b.len, b.rows)).sum::<u64>();
        if total(&together) < total(&alone) {
            blocks.extend(together);
        } else {
            blocks.extend(alone);
        }
    }
    blocks
}

/// How a batch's windows lie in its torus: bands of `words` words a row, `bands` one under
/// another (the words a power of two or the widest band, the bands 1, 2, 4 or a multiple of 4,
/// so few shapes of simulator are made), each band holding windows side by side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Layout {
    words: usize,
    bands: usize,
}

/// Where each window of a batch lies: its band and its first word in it.
type Slot = (usize, usize);

impl Layout {
    /// The layout of a batch of windows, from each window's band (counted from the batch's
    /// first) and the word its row ends at.
    fn of(ends: impl Iterator<Item = (usize, usize)>) -> Layout {
        let (bands, words) = ends.fold((1, 0), |(bands, words), (band, end)| {
            (bands.max(band + 1), words.max(end))
        });
        Layout {
            words: if bands == 1 {
                words.next_power_of_two().min(BAND_WORDS.max(words))
            } else {
                BAND_WORDS.max(words)
            },
            bands: if bands <= 4 {
                bands.next_power_of_two()
            } else {
                bands.next_multiple_of(4)
            },
        }
    }
}

/// Lays the windows of `blocks` (tiles of `words` words, halos of `halo_words` in all) side by
/// side in bands of at most `band_words`, in order: a block is cut where its band is full and
/// goes on in the next.
fn pack(
    blocks: Vec<Block>,
    words: usize,
    halo_words: usize,
    band_words: usize,
) -> Vec<(Block, Slot)> {
    let (mut band, mut used) = (0, 0);
    let mut packed = Vec::with_capacity(blocks.len());
    for mut block in blocks {
        while block.len > 0 {
            let room = band_words.saturating_sub(used + halo_words) / words;
            if room == 0 && used > 0 {
                (band, used) = (band + 1, 0);
                continue;
            }
            let part = Block {
                len: block.len.min(room.max(1)),
                ..block
            };
            packed.push((part, (band, used)));
            used += part.len * words + halo_words;
            block = Block {
                first: (block.first.0 + part.len as i64, block.first.1),
                len: block.len - part.len,
                ..block
            };
        }
    }
    packed
}

/// Cells a side of the tiles held on the GPU unless `--tile` says otherwise. Measured on one
/// H200 (BENCHMARKS.md, nineteenth session) against 128, 256 and 512: soups of 4096^2 and
/// 16384^2 to 1000 generations ran fastest in tiles of 1024 (0.82-0.87x the dense torus's rate
/// at 16384^2, 512: 0.69-0.77x, 128: 0.15-0.22x); seven sparse patterns of Golly's collection to
/// 10^4 within 0.75-1.3x of tiles of 512 and 256, all faster than tiles of 128.
pub const GPU_TILE_SIDE: i64 = 1024;

/// How tiles are cut and stepped: measured choices, see [`TileShape::for_radius`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileShape {
    /// A tile's side in cells (a multiple of 64).
    pub side: i64,
    /// Generations a chunk advances.
    pub chunk: u64,
    /// Columns read from each side neighbour (a multiple of 32).
    pub halo: i64,
    /// Generations the halo's columns allow a chunk, whatever the side.
    pub reach: u64,
}

impl TileShape {
    /// Tiles of 128 cells (or four times the margin, for wide neighbourhoods), stepped as many
    /// generations a chunk as a margin of 32 columns allows (32 for Life), and at most an eighth
    /// of the side. Measured on Golly's p52 gun, acorn, iwona and a 512^2 soup (BENCHMARKS.md,
    /// the unbounded plane): smaller tiles win on sparse patterns, larger ones on soups.
    pub fn for_radius(r: i64) -> TileShape {
        let reach = (32 / r).max(1) as u64;
        let halo = (reach * r as u64).div_ceil(32) as i64 * 32;
        let side = (4 * halo as u64).max(128).div_ceil(64) as i64 * 64;
        TileShape {
            side,
            chunk: Self::chunk(reach, side),
            halo,
            reach,
        }
    }

    /// The tiles of [`Self::for_radius`] at least [`GPU_TILE_SIDE`] cells a side, for tiles
    /// held on the GPU.
    pub fn for_gpu(r: i64) -> TileShape {
        let shape = Self::for_radius(r);
        let side = shape.side.max(GPU_TILE_SIDE);
        TileShape {
            side,
            chunk: Self::chunk(shape.reach, side),
            ..shape
        }
    }

    fn chunk(reach: u64, side: i64) -> u64 {
        reach.min(side as u64 / 8).max(1)
    }

    /// The same with tiles of `side` cells (a multiple of 64, at least the margin).
    pub fn with_side(self, side: i64) -> Result<TileShape, String> {
        if side < 64 || side % 64 != 0 || side < self.halo {
            return Err(format!(
                "a tile's side is a multiple of 64 cells, at least {}: {side}",
                self.halo.max(64)
            ));
        }
        Ok(TileShape {
            side,
            chunk: Self::chunk(self.reach, side),
            ..self
        })
    }
}

/// How the windows of a chunk are stepped.
pub enum WindowStepper {
    /// The CPU's kernel generated for the rule, run on each band of windows where it was
    /// gathered: no torus around it and no copies in and out, halos a word wide.
    Kernel(WindowKernel),
    /// Bands of windows stacked in a torus, run by a simulator `make` builds: any rule, any
    /// backend.
    Simulators(Box<MakeBox>),
}

/// A stepped tile: where it is, its cells, and which tiles' windows see its change
/// ([`Tiles::reach`]).
type Stepped = (Key, Box<[u64]>, u16);

/// How a stepped tile is cut out of its window: the window's `place` (its first tile row at
/// `place.row`), the tile's column and row in its block, the window's `halo` columns each side,
/// what complements the cells (`flip`), and the chunk's generations.
#[derive(Clone, Copy)]
struct Cut {
    place: Place,
    tile: (usize, usize),
    halo: i64,
    flip: u64,
    gens: u64,
}

/// Where a window lies in rows of words: rows of `stride` words, its first row at `row`, its
/// first word at `word`.
#[derive(Clone, Copy)]
struct Place {
    stride: usize,
    row: usize,
    word: usize,
}

/// The tiles with live cells and how they are cut: what windows are read from and stepped
/// tiles are cut out of.
struct Tiles {
    planes: usize,
    radius: i64,
    shape: TileShape,
    /// Words in a tile's row.
    words: usize,
    /// Tiles with live cells, by tile coordinates (tile (i, j) holds cells from (i, j) * side).
    held: KeyMap<Key, Box<[u64]>>,
    /// Tiles no longer held, for stepped tiles to be cut out into (a fresh zeroed allocation
    /// and its free were 7% of a 4096^2 soup's run).
    spare: Mutex<Vec<Box<[u64]>>>,
}

/// A pattern on Golly's unbounded plane, held as tiles and stepped where it changes.
pub struct ActiveTiles {
    tiles: Tiles,
    stepper: WindowStepper,
    states: u16,
    /// Whether the cells held at odd generations are the complement of the rule's
    /// ([`BirthOnZero::Alternating`]).
    alternating: bool,
    /// Tiles (held or not) whose window the last chunk changed: the tile itself, or the cells of
    /// a neighbour within reach of it.
    touched: KeySet<Key>,
    /// Generations the last chunk advanced (0 before the first).
    last_chunk: u64,
    /// One simulator per batch shape (the grid of windows, and a window's rows), and the
    /// universe each gave back last, to stack the next batch of that shape in.
    simulators: HashMap<(Layout, u64), Box<dyn Simulator>>,
    spare: HashMap<(Layout, u64), Universe>,
    generation: u64,
    /// Tiles stepped (not left alone) since the start.
    steps: u64,
    /// Their cells times the generations each was stepped.
    cell_updates: u128,
    /// The live cells as one universe, made when asked for.
    gathered: Option<Universe>,
    /// What steps the windows.
    description: String,
    /// Bytes the tiles may take.
    memory_limit: u64,
    /// The tiles' cells when the simulators run on the GPU (made at the first chunk): `held`
    /// then holds empty tiles, filled from here when the cells are asked for.
    on_gpu: Option<GpuTiles>,
    /// Words of a row one strip of the GPU simulators' kernel writes (0 on the CPU).
    gpu_strip_words: usize,
    /// Generations a launch of the GPU simulators' kernel steps (0 on the CPU).
    gpu_launch: u64,
    /// The next chunk's generations when the last stepped one box of tiles on the GPU
    /// ([`ActiveTiles::one_box`]).
    box_chunk: Option<u64>,
}

/// Tiles held on the GPU: the pool, each held tile's slot, and the slots free.
struct GpuTiles {
    pool: TilePool,
    slots: KeyMap<Key, u32>,
    free: Vec<u32>,
    /// Whether `held`'s tiles are the pool's now.
    home: bool,
}

impl GpuTiles {
    /// At least `more` free slots.
    fn reserve(&mut self, more: usize) -> Result<(), BackendError> {
        let capacity = self.pool.capacity();
        if self.free.len() >= more {
            return Ok(());
        }
        self.pool.grow(capacity + more - self.free.len())?;
        self.free
            .extend((capacity as u32..self.pool.capacity() as u32).rev());
        Ok(())
    }
}

/// What a chunk on the GPU steps: the windows of blocks (each group with its rows of tiles),
/// or one box of tiles in one window.
enum GpuChunk {
    Windows([(Vec<Block>, usize); 2]),
    Box(Block),
}

impl GpuChunk {
    /// Tiles stepped.
    fn tiles(&self) -> usize {
        match self {
            GpuChunk::Windows(groups) => groups
                .iter()
                .flat_map(|(blocks, _)| blocks)
                .map(|b| b.len * b.rows)
                .sum(),
            GpuChunk::Box(block) => block.len * block.rows,
        }
    }
}

/// Active tiles stepped a chunk on the GPU when they fill at least this share of their box:
/// then one window of the box steps them (and the few idle tiles among them) in one torus
/// with margins at its edges only, in longer chunks.
const BOX_FILL: f64 = 0.5;

/// Columns a window's halo holds for `gens` generations of radius `radius`: whole 32-bit words.
fn box_halo(gens: u64, radius: i64) -> i64 {
    (gens * radius as u64).next_multiple_of(32) as i64
}

/// A chunk's launches on the GPU: each batch of windows gathered, stepped and cut out, the
/// stepped tiles (key, old slot, new slot) in the order of their flags.
struct GpuLaunch<'a> {
    tiles: &'a Tiles,
    gpu: &'a mut GpuTiles,
    simulators: &'a mut HashMap<(Layout, u64), Box<dyn Simulator>>,
    make: &'a MakeBox,
    states: u16,
    gens: u64,
    flips: (u64, u64),
    stepped: Vec<(Key, u32, u32)>,
}

impl GpuLaunch<'_> {
    /// Steps the windows of `batch` (their bands counted from `first_band`) in the torus of
    /// `shape`'s layout, bands of `shape.1` rows; the windows `window_h` rows high with `halo`
    /// columns each side.
    fn batch(
        &mut self,
        batch: &[(Block, Slot)],
        first_band: usize,
        shape: (Layout, u64),
        window_h: u64,
        halo: i64,
    ) -> Result<(), BackendError> {
        let tiles = self.tiles;
        let side = tiles.shape.side as usize;
        let margin = self.gens as usize * tiles.radius as usize;
        let (layout, band_h) = shape;
        let mut sim = match self.simulators.remove(&shape) {
            Some(sim) => sim,
            None => (self.make)(torus(
                self.states,
                64 * layout.words as u64,
                band_h * layout.bands as u64,
            )?)?,
        };
        let GpuTiles {
            pool, slots, free, ..
        } = &mut *self.gpu;
        let slot_of = |key: &Key| slots.get(key).copied().unwrap_or(u32::MAX);
        let (mut windows, mut table, mut cuts) = (Vec::new(), Vec::new(), Vec::new());
        let first_cut = self.stepped.len();
        for &(block, (band, word)) in batch {
            let top = (band - first_band) * band_h as usize;
            windows.extend(
                [
                    top,
                    2 * word,
                    block.len,
                    2 * tiles.window_words(block.len, halo),
                    window_h as usize,
                    table.len(),
                ]
                .map(|n| n as u32),
            );
            let (x, y) = block.first;
            for dy in -1..=block.rows as i64 {
                for dx in -1..=block.len as i64 {
                    table.push(slot_of(&(x + dx, y + dy)));
                }
            }
            for (key, i, k) in block.tiles() {
                let old = slot_of(&key);
                let new = free.pop().expect("slots reserved for every tile stepped");
                cuts.extend([
                    (top + margin + k * side) as u32,
                    (2 * word + halo as usize / 32 + i * side / 32) as u32,
                    old,
                    new,
                ]);
                self.stepped.push((key, old, new));
            }
        }
        let band = sim
            .device_band()
            .ok_or_else(|| BackendError::Plane("the tiles' simulators left the GPU".into()))?;
        let (flip_in, flip_out) = self.flips;
        let around = (margin as u32, halo as u32);
        pool.gather(band, &windows, &table, around, flip_in as u32)?;
        band.enqueue(self.gens)?;
        pool.cut(band, &cuts, first_cut, around, flip_out as u32)?;
        self.simulators.insert(shape, sim);
        Ok(())
    }
}

impl ActiveTiles {
    /// The cells of `pieces` (universes that do not overlap, each with its cell (0, 0) at a
    /// place on Golly's plane), in tiles of `shape`, stepped by `stepper`: HashLife's live
    /// nodes move here without their box painted.
    pub fn new(
        rule: Rule,
        pieces: &[(&Universe, (i64, i64))],
        shape: Option<TileShape>,
        stepper: WindowStepper,
    ) -> Result<ActiveTiles, PlaneError> {
        let alternating = rule.birth_on_zero() == Some(BirthOnZero::Alternating);
        if births_from_nothing(&rule) && !alternating {
            return Err(PlaneError::BirthOnZero(Box::new(rule)));
        }
        let radius = radius(&rule) as i64;
        let shape = shape.unwrap_or_else(|| TileShape::for_radius(radius));
        if let Some((cells, _)) = pieces.iter().find(|(c, _)| c.states() != rule.states()) {
            return Err(PlaneError::Backend(BackendError::Plane(format!(
                "cells of {} states for {rule}, a rule of {}",
                cells.states(),
                rule.states()
            ))));
        }
        let mut tiles = Tiles {
            planes: Generations::planes_for(rule.states()) as usize,
            radius,
            shape,
            words: (shape.side / 64) as usize,
            held: KeyMap::default(),
            spare: Mutex::new(Vec::new()),
        };
        for &(cells, origin) in pieces {
            tiles.place(cells, origin);
        }
        let mut engine = ActiveTiles {
            tiles,
            stepper,
            states: rule.states(),
            alternating,
            touched: KeySet::default(),
            last_chunk: 0,
            simulators: HashMap::new(),
            spare: HashMap::new(),
            generation: 0,
            steps: 0,
            cell_updates: 0,
            gathered: None,
            description: String::new(),
            memory_limit: u64::MAX,
            on_gpu: None,
            gpu_strip_words: 0,
            gpu_launch: 0,
            box_chunk: None,
        };
        engine.description = match &engine.stepper {
            WindowStepper::Kernel(kernel) => {
                if radius != 1 {
                    return Err(PlaneError::Backend(BackendError::Plane(format!(
                        "the generated tile kernels step range-1 rules, not {rule}"
                    ))));
                }
                // The kernel's pass: longer chunks cost more margin than they save (tiles of 256
                // on the 4096^2 soup, one thread: 32 generations a chunk 13% slower than 16).
                let pass = crate::cpu::tiles::DEFAULT_GENS_PER_PASS as u64;
                engine.tiles.shape.chunk = engine.tiles.shape.chunk.min(pass);
                let threads = rayon::current_num_threads();
                format!(
                    "cpu (generated tile kernel {}, {}, windows in place, {threads} thread{})",
                    kernel.rule(),
                    kernel.isa().name(),
                    if threads == 1 { "" } else { "s" }
                )
            }
            WindowStepper::Simulators(make) => {
                // The simulator of one window a chunk long, made now so the run can say what
                // runs.
                let t = &engine.tiles;
                let (words, height) = (
                    t.window_words(1, t.shape.halo),
                    t.window_height(shape.chunk, 1),
                );
                let layout = Layout::of(std::iter::once((0, words)));
                let mut first = make(torus(engine.states, 64 * layout.words as u64, height)?)?;
                // Two 32-bit words of the GPU's a host word.
                engine.gpu_strip_words = first
                    .device_band()
                    .map_or(0, |band| (band.strip_words() as usize / 2).max(1));
                let on_gpu = engine.gpu_strip_words > 0;
                // A GPU kernel steps a fixed number of generations a launch; a chunk of another
                // length is a kernel more to compile for each shape of batch.
                let launch = first.preferred_step();
                if on_gpu && (2..=shape.chunk).contains(&launch) {
                    engine.tiles.shape.chunk = shape.chunk / launch * launch;
                }
                let held = if on_gpu {
                    engine.gpu_launch = launch;
                    format!(
                        "; the tiles held on the GPU, gathered into windows and cut out there, \
                         tiles that fill their box in one window of up to {} generations a visit",
                        engine.box_chunk_within(u64::MAX)
                    )
                } else {
                    String::new()
                };
                let description = format!("{}{held}", first.describe());
                engine.simulators.insert((layout, height), first);
                description
            }
        };
        Ok(engine)
    }

    pub fn shape(&self) -> TileShape {
        self.tiles.shape
    }

    /// Tiles stepped since the start, a tile each chunk it was stepped.
    pub fn tile_steps(&self) -> u64 {
        self.steps
    }

    /// Advances one chunk of `gens` generations (at most [`TileShape::chunk`]).
    fn advance_chunk(&mut self, gens: u64) -> Result<(), BackendError> {
        // An odd chunk of an alternating rule starts at the other parity next time, where the
        // cells held step by another rule.
        let fresh = gens != self.last_chunk || (self.alternating && gens % 2 == 1);
        let active = self.active(fresh);
        let held = &self.tiles.held;
        let born = active.iter().filter(|k| !held.contains_key(k)).count();
        let bytes = self.tiles.bytes(held.len() + born);
        if bytes > self.memory_limit {
            let side = self.tiles.shape.side;
            return Err(BackendError::OutOfRoom(format!(
                "at generation {} the tiles would hold up to {} tiles of {side}x{side} cells \
                 ({}), over the {} they may use (--host-memory)",
                self.generation,
                held.len() + born,
                crate::memory::human_bytes(bytes),
                crate::memory::human_bytes(self.memory_limit)
            )));
        }

        let flips = (
            self.complemented_at(self.generation),
            self.complemented_at(self.generation + gens),
        );
        self.steps += active.len() as u64;
        let side = self.tiles.shape.side as u128;
        self.cell_updates += active.len() as u128 * side * side * u128::from(gens);
        if self.on_gpu.is_some() || self.gpu_band_offered() {
            let chunk = match self.one_box(&active, gens) {
                Some((block, next)) => {
                    self.box_chunk = next;
                    GpuChunk::Box(block)
                }
                None => {
                    self.box_chunk = None;
                    GpuChunk::Windows(self.block_groups(&active, gens))
                }
            };
            return self.step_on_gpu(chunk, gens, flips);
        }
        let (words, halo_words) = (self.tiles.words, self.tiles.window_words(0, self.halo()));
        let mut results: Vec<Stepped> = Vec::with_capacity(active.len());
        for (group, rows) in self.block_groups(&active, gens) {
            if group.is_empty() {
                continue;
            }
            match &self.stepper {
                WindowStepper::Kernel(kernel) => {
                    let packed = pack(group, words, halo_words, TILE_WORDS);
                    results.extend(
                        self.tiles
                            .step_in_kernel(*kernel, &packed, rows, gens, flips),
                    );
                }
                WindowStepper::Simulators(_) => {
                    let packed = pack(group, words, halo_words, BAND_WORDS);
                    self.step_in_simulators(&packed, rows, gens, flips, &mut results)?;
                }
            }
        }

        self.touched.clear();
        let mut spare = std::mem::take(self.tiles.spare.get_mut().expect("no cut-out panicked"));
        for (key, tile, reach) in results {
            for (i, (dx, dy)) in NEIGHBOURHOOD.iter().enumerate() {
                if reach >> i & 1 == 1 {
                    self.touched.insert((key.0 + dx, key.1 + dy));
                }
            }
            let freed = if tile.iter().any(|&w| w != 0) {
                self.tiles.held.insert(key, tile)
            } else {
                spare.extend(self.tiles.held.remove(&key));
                Some(tile)
            };
            spare.extend(freed);
        }
        spare.truncate(self.tiles.held.len());
        *self.tiles.spare.get_mut().expect("no cut-out panicked") = spare;
        self.chunk_done(gens);
        Ok(())
    }

    /// The blocks `active`'s windows are stepped in for a chunk of `gens` ([`blocks`], windows
    /// costed by their cells), runs of one row of tiles and blocks of [`BLOCK_ROWS`] apart, each
    /// with its rows of tiles.
    fn block_groups(&self, active: &[Key], gens: u64) -> [(Vec<Block>, usize); 2] {
        let (words, halo_words) = (self.tiles.words, self.tiles.window_words(0, self.halo()));
        let cost = |len: usize, rows: usize| {
            ((len * words + halo_words) as u64) * self.tiles.window_height(gens, rows)
        };
        let (tall, short): (Vec<Block>, Vec<Block>) = blocks(active, BLOCK_ROWS, cost)
            .into_iter()
            .partition(|b| b.rows > 1);
        [(short, 1), (tall, BLOCK_ROWS)]
    }

    /// The tiles a chunk steps, by row and then column: every tile held and its neighbours
    /// when the chunk is `fresh`, else those the last chunk touched; a tile with no neighbour
    /// held stays dead (no birth from nothing on the plane).
    fn active(&self, fresh: bool) -> Vec<Key> {
        let held = &self.tiles.held;
        let mut active: Vec<Key> = if fresh {
            held.keys()
                .flat_map(|&(x, y)| {
                    (-1..=1).flat_map(move |dy| (-1..=1).map(move |dx| (x + dx, y + dy)))
                })
                .collect::<KeySet<Key>>()
                .into_iter()
                .collect()
        } else {
            self.touched.iter().copied().collect()
        };
        active.sort_unstable_by_key(|&(x, y)| (y, x));
        active.retain(|&(x, y)| {
            (-1..=1).any(|dy| (-1..=1).any(|dx| held.contains_key(&(x + dx, y + dy))))
        });
        active
    }

    fn chunk_done(&mut self, gens: u64) {
        self.last_chunk = gens;
        self.generation += gens;
        self.gathered = None;
    }

    /// Whether the windows' simulators run on a GPU, where the tiles are then held.
    fn gpu_band_offered(&mut self) -> bool {
        matches!(self.stepper, WindowStepper::Simulators(_))
            && self
                .simulators
                .values_mut()
                .next()
                .is_some_and(|sim| sim.device_band().is_some())
    }

    /// Steps `chunk`'s windows by `gens` in GPU simulators, gathered from and cut out into the
    /// tiles held on the GPU (moved there at the first chunk).
    fn step_on_gpu(
        &mut self,
        chunk: GpuChunk,
        gens: u64,
        flips: (u64, u64),
    ) -> Result<(), BackendError> {
        if self.on_gpu.is_none() {
            self.on_gpu = Some(self.move_to_gpu()?);
        }
        let boxed = match &chunk {
            GpuChunk::Box(block) => Some(self.box_shape(*block, gens)),
            GpuChunk::Windows(_) => None,
        };
        let WindowStepper::Simulators(make) = &self.stepper else {
            unreachable!("tiles on the GPU are stepped by GPU simulators")
        };
        let tiles = &self.tiles;
        let stepped_tiles = chunk.tiles();
        let gpu = self.on_gpu.as_mut().expect("made above");
        gpu.reserve(stepped_tiles)?;
        gpu.pool.begin_chunk(stepped_tiles)?;
        let mut launch = GpuLaunch {
            tiles,
            gpu,
            simulators: &mut self.simulators,
            make,
            states: self.states,
            gens,
            flips,
            stepped: Vec::with_capacity(stepped_tiles),
        };
        let strip = self.gpu_strip_words;
        match chunk {
            GpuChunk::Windows(groups) => {
                let halo = tiles.shape.halo;
                let (words, halo_words) = (tiles.words, tiles.window_words(0, halo));
                let band_words = GPU_BAND_STRIPS * strip;
                for (group, rows) in groups {
                    if group.is_empty() {
                        continue;
                    }
                    let packed = pack(group, words, halo_words, band_words);
                    let window_h = tiles.window_height(gens, rows);
                    let per_batch = gpu_batch_bands(window_h, band_words);
                    for batch in packed.chunk_by(|a, b| a.1.0 / per_batch == b.1.0 / per_batch) {
                        let first_band = batch[0].1.0;
                        let mut layout = Layout::of(batch.iter().map(|(block, slot)| {
                            (
                                slot.0 - first_band,
                                slot.1 + tiles.window_words(block.len, halo),
                            )
                        }));
                        // Few shapes of simulator (making one takes 5-10 ms): whole strips of
                        // the kernel, and bands in few counts.
                        layout.words = layout.words.max(band_words).next_multiple_of(strip);
                        layout.bands = gpu_bands(layout.bands);
                        launch.batch(batch, first_band, (layout, window_h), window_h, halo)?;
                    }
                }
            }
            GpuChunk::Box(block) => {
                let (shape, window_h, halo) = boxed.expect("a box's shape");
                launch.batch(&[(block, (0, 0))], 0, shape, window_h, halo)?;
            }
        }
        let GpuLaunch { stepped, .. } = launch;
        let GpuTiles {
            pool,
            slots,
            free,
            home,
        } = self.on_gpu.as_mut().expect("made above");
        let flags = pool.finish_chunk(stepped.len())?;
        self.touched.clear();
        for ((key, old, new), flags) in stepped.into_iter().zip(flags) {
            for (i, (dx, dy)) in NEIGHBOURHOOD.iter().enumerate() {
                if flags >> i & 1 == 1 {
                    self.touched.insert((key.0 + dx, key.1 + dy));
                }
            }
            free.extend((old != u32::MAX).then_some(old));
            if flags & ALIVE_FLAG != 0 {
                slots.insert(key, new);
                self.tiles.held.insert(key, Box::new([]));
            } else {
                slots.remove(&key);
                free.push(new);
                self.tiles.held.remove(&key);
            }
        }
        *home = false;
        self.chunk_done(gens);
        Ok(())
    }

    /// The torus `block` is stepped in for `gens` generations, the window's rows and halo
    /// ([`Tiles::box_torus`]): the one made for an earlier box where the window fits in it at
    /// little cost, else one with room for the box grown by a tile each side (a soup's box grows
    /// so at once, as its edge spills into the tiles around it; making a torus of 20000^2 took
    /// 18 ms on an H200's host). One box's torus is kept at a time.
    fn box_shape(&mut self, block: Block, gens: u64) -> ((Layout, u64), u64, i64) {
        let strip = self.gpu_strip_words;
        let ((need, rows), window_h, halo) = self.tiles.box_torus(block, gens, strip);
        let holds = |&(layout, h): &(Layout, u64)| {
            layout.bands == 1 && layout.words >= need.words && h >= rows
        };
        let cheap = |&(layout, h): &(Layout, u64)| {
            2 * layout.words as u64 * h <= 3 * need.words as u64 * rows
        };
        let found = self
            .simulators
            .keys()
            .copied()
            .filter(|shape| holds(shape) && cheap(shape))
            .min_by_key(|(layout, h)| layout.words as u64 * h);
        let shape = found.unwrap_or_else(|| {
            let grown = Block {
                first: (block.first.0 - 1, block.first.1 - 1),
                len: block.len + 2,
                rows: block.rows + 2,
            };
            self.tiles.box_torus(grown, gens, strip).0
        });
        self.simulators
            .retain(|key, _| key.0.bands != 1 || *key == shape);
        (shape, window_h, halo)
    }

    /// The box of `active`'s tiles, stepped as one window on the GPU when they fill at least
    /// [`BOX_FILL`] of it, or when `gens` is longer than the windows' halo allows (the last
    /// chunk was such a box); with the chunk the next box may take, or `None` when the windows
    /// should go on alone.
    fn one_box(&self, active: &[Key], gens: u64) -> Option<(Block, Option<u64>)> {
        let (&first, rest) = active.split_first()?;
        let (mut x0, mut x1, y0, mut y1) = (first.0, first.0, first.1, first.1);
        for &(x, y) in rest {
            (x0, x1, y1) = (x0.min(x), x1.max(x), y1.max(y));
        }
        let block = Block {
            first: (x0, y0),
            len: (x1 - x0 + 1) as usize,
            rows: (y1 - y0 + 1) as usize,
        };
        let area = block.len * block.rows;
        let full = active.len() as f64 >= BOX_FILL * area as f64;
        if !full && gens <= self.tiles.shape.chunk {
            return None;
        }
        Some((block, full.then(|| self.box_chunk(block))))
    }

    /// Generations a box of tiles is stepped a chunk: margins of about 1/48 of its shorter
    /// side (a chunk's fixed costs, its launches, copies and the wait for its flags, and its
    /// margins' work, are then about even on a soup of 16384^2 in tiles of 1024), at most
    /// a tile's side, in whole launches of the GPU's kernel, and at least a chunk of windows.
    fn box_chunk(&self, block: Block) -> u64 {
        let cells = block.len.min(block.rows) as u64 * self.tiles.shape.side as u64;
        self.box_chunk_within(cells / 48)
    }

    /// Generations a box's chunk steps with margins of at most `cells` (and a tile's side).
    fn box_chunk_within(&self, cells: u64) -> u64 {
        let shape = self.tiles.shape;
        let reach = cells.min(shape.side as u64) / self.tiles.radius as u64;
        let launch = self.gpu_launch.max(1);
        (reach / launch * launch).max(shape.chunk)
    }
    /// The held tiles copied to a pool on the GPU of the simulators, `held` left holding empty
    /// tiles.
    fn move_to_gpu(&mut self) -> Result<GpuTiles, BackendError> {
        let tiles = &mut self.tiles;
        let words = TileWords {
            side: tiles.shape.side as u32,
            planes: tiles.planes as u32,
        };
        let sim = self
            .simulators
            .values_mut()
            .next()
            .expect("a simulator made with the engine");
        let band = sim.device_band().expect("a GPU simulator");
        let count = tiles.held.len();
        let mut gpu = GpuTiles {
            pool: TilePool::new(band, words, 2 * count + 64)?,
            slots: KeyMap::default(),
            free: Vec::new(),
            home: false,
        };
        // Slots 0, 1, ... in one copy.
        let mut cells = Vec::with_capacity(count * tiles.tile_len());
        for (slot, (&key, tile)) in tiles.held.iter_mut().enumerate() {
            cells.extend_from_slice(tile);
            gpu.slots.insert(key, slot as u32);
            *tile = Box::new([]);
        }
        gpu.pool.upload(&cells)?;
        gpu.free = (count as u32..gpu.pool.capacity() as u32).rev().collect();
        Ok(gpu)
    }

    /// Fills `held`'s tiles from the GPU, where they are held there.
    fn bring_home(&mut self) -> Result<(), BackendError> {
        let Some(gpu) = self.on_gpu.as_mut() else {
            return Ok(());
        };
        if gpu.home {
            return Ok(());
        }
        let (keys, slots): (Vec<Key>, Vec<u32>) = gpu.slots.iter().map(|(k, s)| (*k, *s)).unzip();
        let cells = gpu.pool.download(&slots)?;
        let n = self.tiles.tile_len();
        for (key, tile) in keys.into_iter().zip(cells.chunks(n)) {
            self.tiles.held.insert(key, tile.into());
        }
        gpu.home = true;
        Ok(())
    }

    /// Columns a window reads from each side neighbour: a word for the generated kernel, the
    /// shape's halo in a torus.
    fn halo(&self) -> i64 {
        match self.stepper {
            WindowStepper::Kernel(_) => 64,
            WindowStepper::Simulators(_) => self.tiles.shape.halo,
        }
    }

    /// Steps the windows of `packed` (blocks of `rows` rows of tiles) by `gens` in tori, batches
    /// of bands at a time, and adds each stepped tile to `results`.
    fn step_in_simulators(
        &mut self,
        packed: &[(Block, Slot)],
        rows: usize,
        gens: u64,
        (flip_in, flip_out): (u64, u64),
        results: &mut Vec<Stepped>,
    ) -> Result<(), BackendError> {
        let WindowStepper::Simulators(make) = &self.stepper else {
            unreachable!("stacked windows are stepped by simulators")
        };
        let tiles = &self.tiles;
        let halo = tiles.shape.halo;
        let window_h = tiles.window_height(gens, rows);
        let margin = gens as usize * tiles.radius as usize;
        let per_batch = batch_bands(window_h);
        for batch in packed.chunk_by(|a, b| a.1.0 / per_batch == b.1.0 / per_batch) {
            let first_band = batch[0].1.0;
            let layout = Layout::of(batch.iter().map(|(block, slot)| {
                (
                    slot.0 - first_band,
                    slot.1 + tiles.window_words(block.len, halo),
                )
            }));
            let key = (layout, window_h);
            let mut stacked = match self.spare.remove(&key) {
                Some(mut universe) => {
                    for p in 0..tiles.planes {
                        universe.plane_mut(p).fill(0);
                    }
                    universe
                }
                None => torus(
                    self.states,
                    64 * layout.words as u64,
                    window_h * layout.bands as u64,
                )?,
            };
            let n = stacked.words_per_row();
            let place = |&(band, word): &Slot, row: usize| Place {
                stride: n,
                row: (band - first_band) * window_h as usize + row,
                word,
            };
            for (block, slot) in batch {
                for p in 0..tiles.planes {
                    let to = stacked.plane_mut(p);
                    tiles.gather(*block, gens, halo, flip_in, p, to, place(slot, 0));
                }
            }
            let mut sim = match self.simulators.remove(&key) {
                Some(mut sim) => {
                    self.spare.insert(key, sim.replace(stacked)?);
                    sim
                }
                None => make(stacked)?,
            };
            sim.advance(gens)?;
            let stepped = sim.universe()?;
            let planes: Vec<&[u64]> = (0..tiles.planes).map(|p| stepped.plane(p)).collect();
            for (block, slot) in batch {
                for (key, i, k) in block.tiles() {
                    let cut = Cut {
                        place: place(slot, margin),
                        tile: (i, k),
                        halo,
                        flip: flip_out,
                        gens,
                    };
                    results.push(tiles.cut_out(key, &planes, cut));
                }
            }
            self.simulators.insert(key, sim);
        }
        Ok(())
    }

    /// The word that complements the cells held at `generation`, or 0.
    fn complemented_at(&self, generation: u64) -> u64 {
        if self.alternating && generation % 2 == 1 {
            !0
        } else {
            0
        }
    }

    /// Advances `gens` generations in chunks.
    pub fn advance_plane(&mut self, gens: u64) -> Result<(), BackendError> {
        let mut left = gens;
        while left > 0 {
            if self.tiles.held.is_empty() {
                self.generation += left;
                return Ok(());
            }
            let step = left.min(self.box_chunk.unwrap_or(self.tiles.shape.chunk));
            self.advance_chunk(step)?;
            left -= step;
        }
        Ok(())
    }
}

/// Bands of windows `window_h` rows high a batch holds: whole batches of a power of two of
/// bands, one shape of simulator for all but the last.
fn batch_bands(window_h: u64) -> usize {
    1 << (BATCH_CELLS / (BAND_WORDS as u64 * 64 * window_h))
        .max(1)
        .ilog2()
}

/// Bands a batch of windows on the GPU holds at least.
const GPU_BANDS: usize = 16;

/// Bands of the torus of a batch of `bands` bands on the GPU: at least [`GPU_BANDS`], else the
/// next multiple of an eighth of the next power of two (four shapes an octave, a quarter more rows at most). The stream
/// kernel steps every row of its torus, idle bands too: rounded up to a power of two, a 16384^2
/// soup's batches stepped 1.9x the rows they held (BENCHMARKS.md, thirteenth session).
fn gpu_bands(bands: usize) -> usize {
    if bands <= GPU_BANDS {
        return GPU_BANDS;
    }
    bands.next_multiple_of(bands.next_power_of_two() / 8)
}

/// Strips of the GPU kernel a band of a batch spans: measured against one and four on soups of
/// 4096^2 and 16384^2 in tiles of 128, 512 and 1024 (BENCHMARKS.md, thirteenth session), two
/// was fastest or within noise of it everywhere (tiles of 128 on the 4096^2 soup: 1.5x).
const GPU_BAND_STRIPS: usize = 2;

/// The same on the GPU, whose batches are a launch and copies each: windows of up to 2^28 cells
/// (32 MiB a bit-plane) a batch, in bands of `band_words`.
fn gpu_batch_bands(window_h: u64, band_words: usize) -> usize {
    1 << ((1u64 << 28) / (band_words as u64 * 64 * window_h))
        .max(1)
        .ilog2()
}

/// An empty torus of `states` states, for windows to be stacked in.
fn torus(states: u16, width: u64, height: u64) -> Result<Universe, BackendError> {
    Ok(Universe::new(width, height)
        .and_then(|u| u.with_states(states))
        .map_err(|e| BackendError::Plane(e.to_string()))?
        .with_topology(Topology::Torus))
}

impl Tiles {
    /// The torus a box of tiles is stepped in for `gens` generations (its layout and rows, in
    /// whole strips of `strip` words), the window's rows and its halo's columns. The torus is a
    /// little larger than the window, so a growing box makes a new simulator now and then, not
    /// every chunk.
    fn box_torus(&self, block: Block, gens: u64, strip: usize) -> ((Layout, u64), u64, i64) {
        let halo = box_halo(gens, self.radius);
        let window_h = self.window_height(gens, block.rows);
        let words = self.window_words(block.len, halo);
        let layout = Layout {
            words: words.next_multiple_of(strip.max(words.next_power_of_two() / 16)),
            bands: 1,
        };
        let rows = window_h.next_multiple_of(window_h.next_power_of_two() / 16);
        ((layout, rows), window_h, halo)
    }

    /// Bytes `tiles` tiles take.
    fn bytes(&self, tiles: usize) -> u64 {
        (tiles as u64).saturating_mul(8 * self.tile_len() as u64)
    }

    fn tile_len(&self) -> usize {
        self.planes * self.shape.side as usize * self.words
    }

    /// Adds `cells` (its (0, 0) at `origin`) to the tiles: the tiles where it has live cells
    /// (a sparse box of millions of tiles holds none of its empty ones, even for a moment).
    fn place(&mut self, cells: &Universe, origin: (i64, i64)) {
        let side = self.shape.side;
        let (w, h) = (cells.width() as i64, cells.height() as i64);
        let n = cells.words_per_row();
        let first = (origin.0.div_euclid(side), origin.1.div_euclid(side));
        let last = (
            (origin.0 + w - 1).div_euclid(side),
            (origin.1 + h - 1).div_euclid(side),
        );
        let mut tile = vec![0u64; self.tile_len()].into_boxed_slice();
        for ty in first.1..=last.1 {
            for tx in first.0..=last.0 {
                tile.fill(0);
                for p in 0..self.planes {
                    let from = cells.plane(p);
                    for row in 0..side {
                        let y = ty * side + row - origin.1;
                        if !(0..h).contains(&y) {
                            continue;
                        }
                        let src = &from[y as usize * n..(y as usize + 1) * n];
                        for j in 0..self.words {
                            tile[self.at(p, row as usize, j)] =
                                cells_at(src, w, tx * side + 64 * j as i64 - origin.0);
                        }
                    }
                }
                if tile.iter().all(|&word| word == 0) {
                    continue;
                }
                match self.held.get_mut(&(tx, ty)) {
                    // A neighbouring piece's cells share the tile.
                    Some(held) => held.iter_mut().zip(&tile).for_each(|(h, t)| *h |= t),
                    None => {
                        self.held.insert((tx, ty), tile.clone());
                    }
                }
            }
        }
    }

    /// A tile's room, its words any.
    fn spare_tile(&self) -> Box<[u64]> {
        let spare = self.spare.lock().expect("no cut-out panicked").pop();
        spare.unwrap_or_else(|| vec![0u64; self.tile_len()].into_boxed_slice())
    }

    /// Index of word `j` of row `row` of plane `p` in a tile.
    fn at(&self, p: usize, row: usize, j: usize) -> usize {
        (p * self.shape.side as usize + row) * self.words + j
    }

    /// Steps the windows of `packed` (blocks of `rows` rows of tiles) by `gens` through the
    /// generated kernel, a band at a time where it was gathered, the bands on rayon's threads;
    /// every stepped tile.
    fn step_in_kernel(
        &self,
        kernel: WindowKernel,
        packed: &[(Block, Slot)],
        rows: usize,
        gens: u64,
        (flip_in, flip_out): (u64, u64),
    ) -> Vec<Stepped> {
        let bands: Vec<&[(Block, Slot)]> = packed.chunk_by(|a, b| a.1.0 == b.1.0).collect();
        let (side, t) = (self.shape.side as usize, gens as usize);
        let place = |word| Place {
            stride: TILE_WORDS,
            row: 0,
            word,
        };
        bands
            .par_iter()
            .map(|band| {
                with_scratch(rows * side, t, |scratch| {
                    let used = band
                        .iter()
                        .map(|(block, slot)| slot.1 + self.window_words(block.len, 64))
                        .max()
                        .unwrap_or(0);
                    let words = used.next_multiple_of(8);
                    for row in &mut scratch.rows_in {
                        row.0[used..words].fill(0);
                    }
                    let input = Row::words_mut(&mut scratch.rows_in);
                    for &(block, (_, word)) in band.iter() {
                        self.gather(block, gens, 64, flip_in, 0, input, place(word));
                    }
                    kernel.step(
                        &scratch.rows_in,
                        &mut scratch.rows_out,
                        &mut scratch.levels,
                        words,
                    );
                    let output = [Row::words(&scratch.rows_out)];
                    band.iter()
                        .flat_map(|&(block, (_, word))| {
                            block.tiles().map(move |(key, i, k)| (key, word, i, k))
                        })
                        .map(|(key, word, i, k)| {
                            let cut = Cut {
                                place: place(word),
                                tile: (i, k),
                                halo: 64,
                                flip: flip_out,
                                gens,
                            };
                            self.cut_out(key, &output, cut)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .flatten()
            .collect()
    }

    /// Which tiles' windows see a tile's change in a chunk of `gens`, from `changed` (for each
    /// word of a row, the bits that changed in its top `gens * r` rows, in any row, in its bottom
    /// ones): bit `i` for the tile at offset [`NEIGHBOURHOOD`]`[i]`. A neighbour's window reads
    /// `halo` columns and `gens * r` rows of this tile on the side facing it (the generated
    /// kernel's windows read a word, but what lies past `halo` cannot reach the neighbour).
    fn reach(&self, changed: &[[u64; 3]]) -> u16 {
        let side = self.shape.side;
        let halo = self.shape.halo;
        // Columns of the left edge, any column, the right edge.
        let edge = |j: usize, from: i64, to: i64| -> u64 {
            let (lo, hi) = ((from - 64 * j as i64).max(0), (to - 64 * j as i64).min(64));
            if lo >= hi {
                0
            } else {
                (!0u64 >> (64 - (hi - lo))) << lo
            }
        };
        let mut seen = [[false; 3]; 3];
        for (j, by_rows) in changed.iter().enumerate() {
            let masks = [edge(j, 0, halo), !0, edge(j, side - halo, side)];
            for (c, mask) in masks.iter().enumerate() {
                for (r, bits) in by_rows.iter().enumerate() {
                    seen[c][r] |= bits & mask != 0;
                }
            }
        }
        NEIGHBOURHOOD
            .iter()
            .enumerate()
            .filter(|(_, (dx, dy))| seen[(dx + 1) as usize][(dy + 1) as usize])
            .fold(0, |bits, (i, _)| bits | 1 << i)
    }

    /// A window's rows for a chunk of `gens` generations: `rows` rows of tiles and a margin
    /// above and below.
    fn window_height(&self, gens: u64, rows: usize) -> u64 {
        (rows as i64 * self.shape.side + 2 * gens as i64 * self.radius) as u64
    }

    /// Words in a row of the window of `len` tiles across: theirs and `halo` columns each side.
    fn window_words(&self, len: usize, halo: i64) -> usize {
        len * self.words + (2 * halo as usize).div_ceil(64)
    }

    /// Writes plane `p` of the window of `block` for a chunk of `gens`, with `halo` columns each
    /// side and complemented where `flip` has ones, into `to` at `place`.
    #[allow(clippy::too_many_arguments)]
    fn gather(
        &self,
        block: Block,
        gens: u64,
        halo: i64,
        flip: u64,
        p: usize,
        to: &mut [u64],
        place: Place,
    ) {
        let side = self.shape.side;
        let margin = gens as i64 * self.radius;
        let window_h = self.window_height(gens, block.rows) as usize;
        let words = self.window_words(block.len, halo);
        let (tx, ty) = block.first;
        let across = block.len + 2;
        let around: Vec<Option<&[u64]>> = (-1..=block.rows as i64)
            .flat_map(|dy| (-1..=block.len as i64).map(move |dx| (tx + dx, ty + dy)))
            .map(|key| self.held.get(&key).map(|tile| &tile[..]))
            .collect();
        let first_cell = (side - halo) as usize;
        if first_cell.is_multiple_of(64) {
            // Whole words: each tile's rows go straight to their place in the window, a tile at
            // a time.
            for (r, tiles) in around.chunks(across).enumerate() {
                let tile_top = (r as i64 - 1) * side + margin;
                let top = tile_top.max(0) as usize;
                let bottom = ((tile_top + side) as usize).min(window_h);
                if top >= bottom {
                    continue;
                }
                let first_row = (top as i64 - tile_top) as usize;
                let mut filled = 0;
                for (c, tile) in tiles.iter().enumerate() {
                    let from = if c == 0 { first_cell / 64 } else { 0 };
                    let n = (self.words - from).min(words - filled);
                    let start = (place.row + top) * place.stride + place.word + filled;
                    if let (Some(tile), 2) = (tile, n) {
                        // Tiles of 128 cells: a row's two words at once.
                        let first = self.at(p, first_row, from);
                        for row in 0..bottom - top {
                            let (s, d) = (first + row * self.words, start + row * place.stride);
                            let [a, b]: [u64; 2] = tile[s..s + 2].try_into().expect("two words");
                            to[d..d + 2].copy_from_slice(&[a ^ flip, b ^ flip]);
                        }
                        filled += n;
                        continue;
                    }
                    // A word at a time down the rows (a tile's row is too few words for a loop
                    // along it to pay its set-up; measured: half the instructions).
                    for j in 0..n {
                        let at = start + j;
                        match tile {
                            Some(tile) => {
                                let first = self.at(p, first_row, from + j);
                                for row in 0..bottom - top {
                                    to[at + row * place.stride] =
                                        tile[first + row * self.words] ^ flip;
                                }
                            }
                            None => {
                                for row in 0..bottom - top {
                                    to[at + row * place.stride] = flip;
                                }
                            }
                        }
                    }
                    filled += n;
                }
            }
            return;
        }
        // Else the row of the tiles across, from the left neighbour's first cell, shifted.
        let mut line = vec![0u64; across * self.words + 1];
        for wy in 0..window_h {
            let dy = wy as i64 - margin;
            let (row_tile, row) = (dy.div_euclid(side), dy.rem_euclid(side) as usize);
            let tiles = &around[(row_tile + 1) as usize * across..][..across];
            let at = (place.row + wy) * place.stride + place.word;
            let out = &mut to[at..at + words];
            if tiles.iter().all(Option::is_none) {
                out.fill(flip);
                continue;
            }
            for (part, tile) in line.chunks_mut(self.words).zip(tiles) {
                match tile {
                    Some(tile) => {
                        let at = self.at(p, row, 0);
                        part.copy_from_slice(&tile[at..at + self.words]);
                    }
                    None => part.fill(0),
                }
            }
            cells_from(out, &line, first_cell, flip);
        }
    }

    /// Tile `key`, cut out of the windows stepped in `planes` as `cut` says, and which tiles'
    /// windows see its change ([`Self::reach`]).
    fn cut_out(&self, key: Key, planes: &[&[u64]], cut: Cut) -> Stepped {
        match self.words {
            1 => self.cut_out_rows_of::<1>(key, planes, cut),
            2 => self.cut_out_rows_of::<2>(key, planes, cut),
            4 => self.cut_out_rows_of::<4>(key, planes, cut),
            _ => self.cut_out_rows_of::<0>(key, planes, cut),
        }
    }

    /// [`Self::cut_out`] for tiles `W` words wide (0: any width). A row of a tile is a few
    /// words, too few for a loop along it to pay its set-up: a width known when compiled unrolls.
    fn cut_out_rows_of<const W: usize>(&self, key: Key, planes: &[&[u64]], cut: Cut) -> Stepped {
        let w = if W == 0 { self.words } else { W };
        let side = self.shape.side as usize;
        let (i, k) = cut.tile;
        let first_cell = cut.halo as usize + i * side;
        let (j0, bit) = (first_cell / 64, (first_cell % 64) as u32);
        let reach = (cut.gens as i64 * self.radius) as usize;
        let before = self.held.get(&key);
        // Every word of it is written below.
        let mut tile = self.spare_tile();
        // The bits that changed in the top rows within reach, the rows between, the bottom ones
        // (on the stack for tiles up to 1024 cells wide: a tile step is too short for an
        // allocation).
        let (mut on_stack, mut on_heap) = ([0u64; 3 * STACKED_WORDS], Vec::new());
        let changed: &mut [u64] = if w <= STACKED_WORDS {
            &mut on_stack[..3 * w]
        } else {
            on_heap.resize(3 * w, 0);
            &mut on_heap
        };
        let per_plane = side * w;
        let stride = cut.place.stride;
        let classes = [0..reach, reach..side - reach, side - reach..side];
        for (p, from) in planes.iter().enumerate() {
            let start = (cut.place.row + k * side) * stride + cut.place.word + j0;
            for (class, rows) in classes.iter().enumerate() {
                let seen = &mut changed[class * w..(class + 1) * w];
                for row in rows.clone() {
                    let at = start + row * stride;
                    let source = &from[at..at + w + usize::from(bit != 0)];
                    let to = p * per_plane + row * w;
                    let out = &mut tile[to..to + w];
                    let old = before.map(|b| &b[to..to + w]);
                    for j in 0..w {
                        let word = if bit == 0 {
                            source[j]
                        } else {
                            source[j] >> bit | source[j + 1] << (64 - bit)
                        } ^ cut.flip;
                        out[j] = word;
                        seen[j] |= word ^ old.map_or(0, |old| old[j]);
                    }
                }
            }
        }
        let mut by_word = [[0u64; 3]; STACKED_WORDS];
        let mut by_word_heap = Vec::new();
        let by_word: &mut [[u64; 3]] = if w <= STACKED_WORDS {
            &mut by_word[..w]
        } else {
            by_word_heap.resize(w, [0; 3]);
            &mut by_word_heap
        };
        for (j, word) in by_word.iter_mut().enumerate() {
            let (top, between, bottom) = (changed[j], changed[w + j], changed[2 * w + j]);
            *word = [top, top | between | bottom, bottom];
        }
        (key, tile, self.reach(by_word))
    }

    /// Cells not dead, as Golly counts them.
    fn count_population(&self) -> u64 {
        let per_plane = self.shape.side as usize * self.words;
        self.held
            .values()
            .map(|tile| {
                (0..per_plane)
                    .map(|i| {
                        (0..self.planes)
                            .fold(0u64, |any, p| any | tile[p * per_plane + i])
                            .count_ones() as u64
                    })
                    .sum::<u64>()
            })
            .sum()
    }

    /// The live cells' box (of `states` states) and where its top-left cell is on Golly's
    /// plane; `None` when the pattern died out.
    fn gather_live_cells(
        &self,
        states: u16,
        generation: u64,
    ) -> Result<Option<Placed>, PlaneError> {
        let side = self.shape.side;
        let Some(bounds) = self.live_bounds() else {
            return Ok(None);
        };
        let (left, top, right, bottom) = bounds;
        let (width, height) = ((right - left + 1) as u64, (bottom - top + 1) as u64);
        let grown = |source| PlaneError::Grown {
            generation,
            width,
            height,
            source,
        };
        let mut cells = Universe::new(width, height)
            .and_then(|u| u.with_states(states))
            .map_err(grown)?;
        let n = cells.words_per_row();
        for (&(tx, ty), tile) in &self.held {
            for p in 0..self.planes {
                let to = cells.plane_mut(p);
                for row in 0..side {
                    let y = ty * side + row - top;
                    if !(0..height as i64).contains(&y) {
                        continue;
                    }
                    let at = self.at(p, row as usize, 0);
                    let src = &tile[at..at + self.words];
                    for (j, word) in to[y as usize * n..(y as usize + 1) * n]
                        .iter_mut()
                        .enumerate()
                    {
                        *word |= cells_at(src, side, left + 64 * j as i64 - tx * side);
                    }
                }
            }
        }
        Ok(Some((cells, (left, top))))
    }

    /// Each tile holding a live cell as a universe of its own, where it lies.
    fn live_tiles(&self, states: u16) -> Result<Vec<Placed>, PlaneError> {
        let side = self.shape.side;
        let per_plane = side as usize * self.words;
        let mut pieces = Vec::new();
        for (&(tx, ty), tile) in &self.held {
            if tile[..self.planes * per_plane]
                .iter()
                .all(|&word| word == 0)
            {
                continue;
            }
            let mut cells = Universe::new(side as u64, side as u64)
                .and_then(|u| u.with_states(states))
                .map_err(|e| PlaneError::Backend(BackendError::Plane(e.to_string())))?;
            for p in 0..self.planes {
                cells
                    .plane_mut(p)
                    .copy_from_slice(&tile[p * per_plane..(p + 1) * per_plane]);
            }
            pieces.push((cells, (tx * side, ty * side)));
        }
        Ok(pieces)
    }

    /// First and last column and row with a live cell, in Golly's coordinates.
    fn live_bounds(&self) -> Option<(i64, i64, i64, i64)> {
        let side = self.shape.side;
        let per_plane = side as usize * self.words;
        let mut bounds: Option<(i64, i64, i64, i64)> = None;
        for (&(tx, ty), tile) in &self.held {
            for row in 0..side as usize {
                for j in 0..self.words {
                    let word = (0..self.planes).fold(0u64, |any, p| {
                        any | tile[p * per_plane + row * self.words + j]
                    });
                    if word == 0 {
                        continue;
                    }
                    let x0 = tx * side + 64 * j as i64;
                    let lo = x0 + i64::from(word.trailing_zeros());
                    let hi = x0 + 63 - i64::from(word.leading_zeros());
                    let y = ty * side + row as i64;
                    bounds = Some(match bounds {
                        None => (lo, y, hi, y),
                        Some((l, t, r, b)) => (l.min(lo), t.min(y), r.max(hi), b.max(y)),
                    });
                }
            }
        }
        bounds
    }
}

/// Fills `out` with the cells of the row `words` from cell `first` on, complemented where
/// `flip` has ones; `words` holds every cell asked for (and the word they end in).
fn cells_from(out: &mut [u64], words: &[u64], first: usize, flip: u64) {
    let (j, bit) = (first / 64, (first % 64) as u32);
    let n = out.len();
    if bit == 0 {
        for (o, w) in out.iter_mut().zip(&words[j..j + n]) {
            *o = w ^ flip;
        }
    } else {
        let (low, high) = (&words[j..j + n], &words[j + 1..j + n + 1]);
        for ((o, a), b) in out.iter_mut().zip(low).zip(high) {
            *o = (a >> bit | b << (64 - bit)) ^ flip;
        }
    }
}

impl Simulator for ActiveTiles {
    fn describe(&self) -> String {
        let s = self.tiles.shape;
        format!(
            "Golly's unbounded plane on active tiles of {0}x{0} cells, {1} generation{2} a visit, \
             stepped in batches by: {3}",
            s.side,
            s.chunk,
            if s.chunk == 1 { "" } else { "s" },
            self.description
        )
    }
    fn advance(&mut self, gens: u64) -> Result<(), BackendError> {
        self.advance_plane(gens)
    }
    fn universe(&mut self) -> Result<&Universe, BackendError> {
        self.bring_home()?;
        let mut cache = self.gathered.take();
        cached_live_universe(&mut cache, self.states, || {
            self.tiles.gather_live_cells(self.states, self.generation)
        })?;
        self.gathered = cache;
        Ok(self.gathered.as_ref().expect("made above"))
    }
    fn replace(&mut self, _: Universe) -> Result<Universe, BackendError> {
        Err(BackendError::Plane(
            "a pattern on the unbounded plane is not swapped for a band".into(),
        ))
    }
    fn kernel_seconds(&self) -> Option<f64> {
        None
    }
    fn preferred_step(&self) -> u64 {
        let chunk = self.tiles.shape.chunk;
        chunk * (64 / chunk).max(1)
    }
    /// On the GPU: the tiles moved there, and the simulator of the first chunk's box made,
    /// before the run's clock (as a dense universe is uploaded before it); a box's first chunk
    /// as long as the next.
    fn prepare(&mut self, gens: u64) -> Result<(), BackendError> {
        if !self.gpu_band_offered() || gens == 0 {
            return Ok(());
        }
        if self.on_gpu.is_none() {
            self.on_gpu = Some(self.move_to_gpu()?);
        }
        let first = gens.min(self.tiles.shape.chunk);
        let active = self.active(true);
        let Some((block, next)) = self.one_box(&active, first) else {
            return Ok(());
        };
        // The first chunk as long as a box's.
        self.box_chunk = next;
        let first = gens.min(next.unwrap_or(first));
        let ((layout, rows), ..) = self.box_shape(block, first);
        if let WindowStepper::Simulators(make) = &self.stepper
            && !self.simulators.contains_key(&(layout, rows))
        {
            let mut sim = make(torus(self.states, 64 * layout.words as u64, rows)?)?;
            sim.prepare(first)?;
            self.simulators.insert((layout, rows), sim);
        }
        Ok(())
    }
}

impl PlaneEngine for ActiveTiles {
    fn live_cells(&mut self) -> Result<Option<Placed>, PlaneError> {
        self.bring_home()?;
        self.tiles.gather_live_cells(self.states, self.generation)
    }
    fn live_pieces(&mut self, most: u64) -> Result<Option<Vec<Placed>>, PlaneError> {
        self.bring_home()?;
        let side = self.tiles.shape.side as u64;
        if (self.tiles.held.len() as u64).saturating_mul(side * side) > most {
            return Ok(None);
        }
        self.tiles.live_tiles(self.states).map(Some)
    }
    fn live_box(&mut self) -> Result<Option<(i64, i64, u64, u64)>, PlaneError> {
        self.bring_home()?;
        // From the tiles, without painting the box (a glider stream's spans millions of cells).
        Ok(self.tiles.live_bounds().map(|(left, top, right, bottom)| {
            (
                left,
                top,
                (right - left + 1) as u64,
                (bottom - top + 1) as u64,
            )
        }))
    }
    fn population(&mut self) -> Result<u64, PlaneError> {
        self.bring_home()?;
        Ok(self.tiles.count_population())
    }
    fn generation(&self) -> u64 {
        self.generation
    }
    fn start_at(&mut self, generation: u64) {
        self.generation = generation;
    }
    fn set_memory_budget(&mut self, bytes: u64) {
        self.memory_limit = bytes;
    }
    fn report(&self) -> String {
        format!(
            "{} tiles hold it ({}); {} tile steps in all",
            self.tiles.held.len(),
            crate::memory::human_bytes(self.tiles.bytes(self.tiles.held.len())),
            self.steps
        )
    }
    fn cell_updates(&self) -> Option<u128> {
        Some(self.cell_updates)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn run(first: Key, len: usize) -> Block {
        Block {
            first,
            len,
            rows: 1,
        }
    }

    #[test]
    fn a_chunk_is_as_long_as_the_halo_allows_and_an_eighth_of_the_side() {
        // Life: 32 generations in a margin of 32 columns; 16 for tiles of 128 cells.
        let life = TileShape::for_radius(1);
        assert_eq!((life.side, life.chunk, life.halo), (128, 16, 32));
        let chunk = |side| life.with_side(side).unwrap().chunk;
        assert_eq!(
            [chunk(64), chunk(128), chunk(256), chunk(1024)],
            [8, 16, 32, 32]
        );
        // A range of 5: six generations in the same 32 columns.
        let r5 = TileShape::for_radius(5);
        assert_eq!((r5.chunk, r5.with_side(1024).unwrap().chunk), (6, 6));
        // On the GPU: tiles of 1024 cells, or the tiles a wide neighbourhood needs.
        assert_eq!(TileShape::for_gpu(1), life.with_side(1024).unwrap());
        let wide = TileShape::for_radius(500);
        assert_eq!((wide.side, TileShape::for_gpu(500)), (2048, wide));
    }

    #[test]
    fn gpu_batches_step_few_idle_bands_in_few_shapes() {
        let shapes: std::collections::BTreeSet<usize> = (1..=4096).map(gpu_bands).collect();
        for bands in 1..=4096 {
            let rows = gpu_bands(bands);
            assert!(rows >= bands.max(GPU_BANDS), "{bands}: {rows}");
            assert!(rows <= GPU_BANDS.max(bands + bands / 4), "{bands}: {rows}");
        }
        // 16, then four an octave from 32 to 4096.
        assert_eq!(shapes.len(), 1 + 4 * 8, "{shapes:?}");
    }

    #[test]
    fn runs_are_cut_where_a_band_is_full_and_every_tile_is_stepped_once() {
        // A row of 40 tiles, then two short runs with a gap, then a lone tile.
        let mut active: Vec<Key> = (0..40).map(|x| (x, 0)).collect();
        active.extend([(0, 1), (1, 1), (2, 1), (5, 1), (6, 1), (-3, 7)]);
        active.sort_unstable_by_key(|&(x, y)| (y, x));
        let found = runs(&active);
        assert_eq!(
            found,
            [
                run((0, 0), 40),
                run((0, 1), 3),
                run((5, 1), 2),
                run((-3, 7), 1)
            ]
        );
        for (words, halo_words, band_words) in [(2, 1, 62), (1, 1, 62), (4, 2, 64), (32, 16, 62)] {
            let packed = pack(found.clone(), words, halo_words, band_words);
            let stepped: Vec<Key> = packed
                .iter()
                .flat_map(|(block, _)| block.tiles().map(|(key, _, _)| key))
                .collect();
            let mut sorted = stepped.clone();
            sorted.sort_unstable_by_key(|&(x, y)| (y, x));
            assert_eq!(sorted, active, "{words} words a tile");
            let mut end_of_band: HashMap<usize, usize> = HashMap::new();
            for (block, (band, first)) in &packed {
                let end = first + block.len * words + halo_words;
                assert!(end <= band_words, "{block:?} ends at word {end}");
                let last = end_of_band.entry(*band).or_default();
                assert_eq!(*last, *first, "windows of a band lie side by side");
                *last = end;
            }
            // Bands are filled before the next is begun.
            for band in 1..end_of_band.len() {
                let room = band_words - end_of_band[&(band - 1)];
                assert!(
                    room < words + halo_words,
                    "band {} left {room} words",
                    band - 1
                );
            }
        }
    }

    #[test]
    fn busy_rows_of_tiles_go_in_tall_blocks_and_sparse_ones_in_runs() {
        // Rows 0-3: a 5x4 square with one hole; rows 4-7: two tiles far apart.
        let mut active: Vec<Key> = (0..4)
            .flat_map(|y| (0..5).map(move |x| (x, y)))
            .filter(|&k| k != (2, 2))
            .collect();
        active.extend([(0, 5), (40, 6)]);
        active.sort_unstable_by_key(|&(x, y)| (y, x));
        // A window's cells: tiles of 2 words and a halo of 1, 128 rows a tile, margins of 16.
        let cost = |len: usize, rows: usize| ((len * 2 + 1) * (rows * 128 + 32)) as u64;
        let found = blocks(&active, 4, cost);
        assert_eq!(
            found,
            [
                Block {
                    first: (0, 0),
                    len: 5,
                    rows: 4
                },
                run((0, 5), 1),
                run((40, 6), 1),
            ]
        );
        // Every active tile is in a block; the hole is stepped too.
        let stepped: HashSet<Key> = found
            .iter()
            .flat_map(|b| b.tiles().map(|(key, _, _)| key))
            .collect();
        assert!(active.iter().all(|k| stepped.contains(k)));
        assert_eq!(stepped.len(), active.len() + 1);
        // Rows of one block each are the runs.
        assert_eq!(blocks(&active, 1, cost), runs(&active));
    }

    #[test]
    fn tiles_that_fill_their_box_step_as_one_window_in_longer_chunks() {
        let rule = lifegen_gen::rule::parse("B3/S23").unwrap().rule;
        let make = Box::new(move |u| crate::create(crate::BackendKind::Cpu, &rule, u));
        let cells = Universe::new(64, 64).unwrap();
        let engine = ActiveTiles::new(
            rule,
            &[(&cells, (0, 0))],
            None,
            WindowStepper::Simulators(make),
        )
        .unwrap();
        let shape = engine.shape();
        assert_eq!((shape.side, shape.chunk), (128, 16));
        // 40x30 tiles, all but one active: one window, the next chunks 40 generations of the
        // 30 tiles' 3840 cells (their 48th part is 80; a launch on the CPU is a generation).
        let mut active: Vec<Key> = (0..30)
            .flat_map(|y| (0..40).map(move |x| (x - 7, y + 3)))
            .filter(|&k| k != (5, 5))
            .collect();
        let whole = Block {
            first: (-7, 3),
            len: 40,
            rows: 30,
        };
        assert_eq!(engine.one_box(&active, 16), Some((whole, Some(80))));
        // A chunk longer than the windows' halo allows is one box, even a sparse one, and the
        // next goes back to windows.
        active = vec![(0, 0), (100, 3)];
        assert_eq!(engine.one_box(&active, 16), None);
        let sparse = Block {
            first: (0, 0),
            len: 101,
            rows: 4,
        };
        assert_eq!(engine.one_box(&active, 80), Some((sparse, None)));
        assert_eq!(engine.one_box(&[], 80), None);
        // Small boxes step the windows' chunk; large ones a tile's side at most.
        let small = Block {
            len: 2,
            rows: 2,
            ..whole
        };
        assert_eq!(engine.box_chunk(small), 16);
        let large = Block {
            len: 500,
            rows: 500,
            ..whole
        };
        assert_eq!(engine.box_chunk(large), 128);
    }
}
