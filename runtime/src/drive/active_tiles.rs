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
//! A tile equal after a chunk to what it was before, with eight neighbours that did not change
//! either, would be stepped from the same window again: it is left alone, whatever its period
//! as long as the period divides `chunk` (still lifes, blinkers, the period-2, 4, 8, 16 and 32
//! oscillators of Life). A chunk of another length steps every tile with live cells.

use std::collections::{HashMap, HashSet};

use lifegen_gen::{BirthOnZero, Rule, Topology};

use crate::drive::bands::radius;
use crate::drive::plane::{
    Placed, PlaneEngine, PlaneError, births_from_nothing, cached_live_universe, cells_at,
};
use crate::simulator::{BackendError, Simulator};
use crate::universe::Universe;

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
const BAND_WORDS: usize = crate::cpu::tiles::TILE_WORDS - 2;

/// Neighbouring active tiles of one row of tiles, stepped in one window: `len` tiles from
/// `first` rightwards. Neighbours share their margins, so a row of active tiles costs a margin
/// at its two ends only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    first: Key,
    len: usize,
}

impl Run {
    fn tiles(self) -> impl Iterator<Item = Key> {
        (0..self.len as i64).map(move |i| (self.first.0 + i, self.first.1))
    }
}

/// The runs of `active` (sorted by row, then column).
fn runs(active: &[Key]) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for &(x, y) in active {
        match runs.last_mut() {
            Some(run) if run.first.1 == y && run.first.0 + run.len as i64 == x => run.len += 1,
            _ => runs.push(Run {
                first: (x, y),
                len: 1,
            }),
        }
    }
    runs
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

/// Lays the windows of `runs` (tiles of `words` words, halos of `halo_words` in all) side by
/// side in bands of at most [`BAND_WORDS`], in order: a run is cut where its band is full and
/// goes on in the next.
fn pack(runs: Vec<Run>, words: usize, halo_words: usize) -> Vec<(Run, Slot)> {
    let (mut band, mut used) = (0, 0);
    let mut packed = Vec::with_capacity(runs.len());
    for mut run in runs {
        while run.len > 0 {
            let room = BAND_WORDS.saturating_sub(used + halo_words) / words;
            if room == 0 && used > 0 {
                (band, used) = (band + 1, 0);
                continue;
            }
            let part = Run {
                len: run.len.min(room.max(1)),
                ..run
            };
            packed.push((part, (band, used)));
            used += part.len * words + halo_words;
            run = Run {
                first: (run.first.0 + part.len as i64, run.first.1),
                len: run.len - part.len,
            };
        }
    }
    packed
}

/// How tiles are cut and stepped: measured choices, see [`TileShape::for_radius`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileShape {
    /// A tile's side in cells (a multiple of 64).
    pub side: i64,
    /// Generations a chunk advances.
    pub chunk: u64,
    /// Columns read from each side neighbour (a multiple of 32).
    pub halo: i64,
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
            chunk: Self::chunk(self.chunk, side),
            ..self
        })
    }
}

/// A pattern on Golly's unbounded plane, held as tiles and stepped where it changes.
pub struct ActiveTiles {
    make: Box<MakeBox>,
    states: u16,
    planes: usize,
    radius: i64,
    /// Whether the cells held at odd generations are the complement of the rule's
    /// ([`BirthOnZero::Alternating`]).
    alternating: bool,
    shape: TileShape,
    /// Words in a tile's row.
    words: usize,
    /// Tiles with live cells, by tile coordinates (tile (i, j) holds cells from (i, j) * side).
    tiles: HashMap<Key, Box<[u64]>>,
    /// Tiles (held or not) whose window the last chunk changed: the tile itself, or the cells of
    /// a neighbour within reach of it.
    touched: HashSet<Key>,
    /// Generations the last chunk advanced (0 before the first).
    last_chunk: u64,
    /// One simulator per batch shape (the grid of windows, and a window's rows), and the
    /// universe each gave back last, to stack the next batch of that shape in.
    simulators: HashMap<(Layout, u64), Box<dyn Simulator>>,
    spare: HashMap<(Layout, u64), Universe>,
    generation: u64,
    /// Tiles stepped (not left alone) since the start.
    steps: u64,
    /// The live cells as one universe, made when asked for.
    gathered: Option<Universe>,
    /// What the simulators say they are.
    description: String,
    /// Bytes the tiles may take.
    memory_limit: u64,
}

impl ActiveTiles {
    /// `cells` with its cell (0, 0) at Golly's `origin`, in tiles of `shape`, stepped by
    /// simulators `make` builds.
    pub fn new(
        rule: Rule,
        cells: &Universe,
        origin: (i64, i64),
        shape: Option<TileShape>,
        make: Box<MakeBox>,
    ) -> Result<ActiveTiles, PlaneError> {
        let alternating = rule.birth_on_zero() == Some(BirthOnZero::Alternating);
        if births_from_nothing(&rule) && !alternating {
            return Err(PlaneError::BirthOnZero(Box::new(rule)));
        }
        let radius = radius(&rule) as i64;
        let shape = shape.unwrap_or_else(|| TileShape::for_radius(radius));
        let mut tiles = ActiveTiles {
            make,
            states: rule.states(),
            planes: cells.planes(),
            radius,
            alternating,
            shape,
            words: (shape.side / 64) as usize,
            tiles: HashMap::new(),
            touched: HashSet::new(),
            last_chunk: 0,
            simulators: HashMap::new(),
            spare: HashMap::new(),
            generation: 0,
            steps: 0,
            gathered: None,
            description: String::new(),
            memory_limit: u64::MAX,
        };
        tiles.place(cells, origin);
        // The simulator of one window a chunk long, made now so the run can say what runs.
        let (words, height) = (tiles.window_words(1), tiles.window_height(shape.chunk));
        let layout = Layout::of(std::iter::once((0, words)));
        let first = (tiles.make)(tiles.torus(64 * layout.words as u64, height)?)?;
        tiles.description = first.describe();
        tiles.simulators.insert((layout, height), first);
        Ok(tiles)
    }

    pub fn shape(&self) -> TileShape {
        self.shape
    }

    /// Tiles stepped since the start, a tile each chunk it was stepped.
    pub fn tile_steps(&self) -> u64 {
        self.steps
    }

    /// Bytes `tiles` tiles take.
    fn tile_bytes(&self, tiles: usize) -> u64 {
        (tiles as u64).saturating_mul(8 * self.tile_len() as u64)
    }

    fn tile_len(&self) -> usize {
        self.planes * self.shape.side as usize * self.words
    }

    /// Writes `cells` (its (0, 0) at `origin`) into the tiles.
    fn place(&mut self, cells: &Universe, origin: (i64, i64)) {
        let side = self.shape.side;
        let (w, h) = (cells.width() as i64, cells.height() as i64);
        let n = cells.words_per_row();
        let first = (origin.0.div_euclid(side), origin.1.div_euclid(side));
        let last = (
            (origin.0 + w - 1).div_euclid(side),
            (origin.1 + h - 1).div_euclid(side),
        );
        let len = self.tile_len();
        for ty in first.1..=last.1 {
            for tx in first.0..=last.0 {
                let mut tile = vec![0u64; len].into_boxed_slice();
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
                if tile.iter().any(|&word| word != 0) {
                    self.tiles.insert((tx, ty), tile);
                }
            }
        }
    }

    /// Index of word `j` of row `row` of plane `p` in a tile.
    fn at(&self, p: usize, row: usize, j: usize) -> usize {
        (p * self.shape.side as usize + row) * self.words + j
    }

    /// Advances one chunk of `gens` generations (at most [`TileShape::chunk`]).
    fn advance_chunk(&mut self, gens: u64) -> Result<(), BackendError> {
        // An odd chunk of an alternating rule starts at the other parity next time, where the
        // cells held step by another rule.
        let fresh = gens != self.last_chunk || (self.alternating && gens % 2 == 1);
        let mut active: Vec<Key> = if fresh {
            self.tiles
                .keys()
                .flat_map(|&(x, y)| {
                    (-1..=1).flat_map(move |dy| (-1..=1).map(move |dx| (x + dx, y + dy)))
                })
                .collect::<HashSet<Key>>()
                .into_iter()
                .collect()
        } else {
            self.touched.iter().copied().collect()
        };
        active.sort_unstable_by_key(|&(x, y)| (y, x));
        // A window of dead cells stays dead (no birth from nothing on the plane).
        active.retain(|&(x, y)| {
            (-1..=1).any(|dy| (-1..=1).any(|dx| self.tiles.contains_key(&(x + dx, y + dy))))
        });
        let born = active
            .iter()
            .filter(|k| !self.tiles.contains_key(k))
            .count();
        let bytes = self.tile_bytes(self.tiles.len() + born);
        if bytes > self.memory_limit {
            return Err(BackendError::OutOfRoom(format!(
                "at generation {} the tiles would hold up to {} tiles of {}x{} cells ({}), over \
                 the {} they may use (--host-memory)",
                self.generation,
                self.tiles.len() + born,
                self.shape.side,
                self.shape.side,
                crate::memory::human_bytes(bytes),
                crate::memory::human_bytes(self.memory_limit)
            )));
        }

        let window_h = self.window_height(gens);
        let (runs, slots): (Vec<Run>, Vec<Slot>) =
            pack(runs(&active), self.words, self.halo_words())
                .into_iter()
                .unzip();
        // Whole batches of a power of two of bands: one shape of simulator for all but the last.
        let per_batch = 1
            << (BATCH_CELLS / (BAND_WORDS as u64 * 64 * window_h))
                .max(1)
                .ilog2();
        let mut results: Vec<(Key, Box<[u64]>)> = Vec::with_capacity(active.len());
        let mut next = 0;
        while next < runs.len() {
            let first_band = slots[next].0;
            let end = next + slots[next..].partition_point(|s| s.0 < first_band + per_batch);
            let (batch, batch_slots) = (&runs[next..end], &slots[next..end]);
            next = end;
            let layout = Layout::of(
                batch
                    .iter()
                    .zip(batch_slots)
                    .map(|(run, slot)| (slot.0 - first_band, slot.1 + self.window_words(run.len))),
            );
            let key = (layout, window_h);
            let mut stacked = match self.spare.remove(&key) {
                Some(mut universe) => {
                    for p in 0..self.planes {
                        universe.plane_mut(p).fill(0);
                    }
                    universe
                }
                None => self.torus(64 * layout.words as u64, window_h * layout.bands as u64)?,
            };
            for (run, &(band, word)) in batch.iter().zip(batch_slots) {
                self.gather(*run, gens, &mut stacked, (band - first_band, word));
            }
            let mut sim = match self.simulators.remove(&key) {
                Some(mut sim) => {
                    self.spare.insert(key, sim.replace(stacked)?);
                    sim
                }
                None => (self.make)(stacked)?,
            };
            sim.advance(gens)?;
            let stepped = sim.universe()?;
            for (run, &(band, word)) in batch.iter().zip(batch_slots) {
                for (i, tile) in run.tiles().enumerate() {
                    results.push((
                        tile,
                        self.scatter(stepped, gens, (band - first_band, word), i),
                    ));
                }
            }
            self.simulators.insert(key, sim);
        }
        self.steps += active.len() as u64;

        self.touched.clear();
        for (key, tile) in results {
            let live = tile.iter().any(|&w| w != 0);
            let reach = self.changed_reach(self.tiles.get(&key).map(|t| &t[..]), &tile, gens);
            for (i, (dx, dy)) in NEIGHBOURHOOD.iter().enumerate() {
                if reach >> i & 1 == 1 {
                    self.touched.insert((key.0 + dx, key.1 + dy));
                }
            }
            if live {
                self.tiles.insert(key, tile);
            } else {
                self.tiles.remove(&key);
            }
        }
        self.last_chunk = gens;
        self.generation += gens;
        self.gathered = None;
        Ok(())
    }

    /// Which tiles' windows see a change from `before` (`None`: dead) to `after` in a chunk of
    /// `gens`: bit `i` for the tile at offset [`NEIGHBOURHOOD`]`[i]`. A neighbour's window reads
    /// `halo` columns and `gens * r` rows of this tile on the side facing it.
    fn changed_reach(&self, before: Option<&[u64]>, after: &[u64], gens: u64) -> u16 {
        let side = self.shape.side as usize;
        let rows = (gens as i64 * self.radius) as usize;
        let halo = self.shape.halo;
        let per_plane = side * self.words;
        // Columns of the left edge, the whole row, the right edge.
        let column_masks: Vec<[u64; 3]> = (0..self.words)
            .map(|j| {
                let edge = |from: i64, to: i64| -> u64 {
                    let (lo, hi) = ((from - 64 * j as i64).max(0), (to - 64 * j as i64).min(64));
                    if lo >= hi {
                        0
                    } else {
                        (!0u64 >> (64 - (hi - lo))) << lo
                    }
                };
                [edge(0, halo), !0, edge(side as i64 - halo, side as i64)]
            })
            .collect();
        // [column class][row class]: rows of the top edge, every row, the bottom edge.
        let mut seen = [[false; 3]; 3];
        for row in 0..side {
            let row_classes = [row < rows, true, row >= side - rows];
            for (j, masks) in column_masks.iter().enumerate() {
                let diff = (0..self.planes).fold(0u64, |d, p| {
                    let i = p * per_plane + row * self.words + j;
                    d | (before.map_or(0, |b| b[i]) ^ after[i])
                });
                if diff == 0 {
                    continue;
                }
                for (c, mask) in masks.iter().enumerate() {
                    if diff & mask != 0 {
                        for (r, &in_class) in row_classes.iter().enumerate() {
                            seen[c][r] |= in_class;
                        }
                    }
                }
            }
        }
        NEIGHBOURHOOD
            .iter()
            .enumerate()
            .filter(|(_, (dx, dy))| seen[(dx + 1) as usize][(dy + 1) as usize])
            .fold(0, |bits, (i, _)| bits | 1 << i)
    }

    /// An empty torus of the rule's states, for windows to be stacked in.
    fn torus(&self, width: u64, height: u64) -> Result<Universe, BackendError> {
        Ok(Universe::new(width, height)
            .and_then(|u| u.with_states(self.states))
            .map_err(|e| BackendError::Plane(e.to_string()))?
            .with_topology(Topology::Torus))
    }

    /// A window's rows for a chunk of `gens` generations: a tile's and a margin above and below.
    fn window_height(&self, gens: u64) -> u64 {
        (self.shape.side + 2 * gens as i64 * self.radius) as u64
    }

    /// Words in a row of the window of a run of `len` tiles: theirs and a halo each side.
    fn window_words(&self, len: usize) -> usize {
        len * self.words + self.halo_words()
    }

    /// Words the two halos of a window take.
    fn halo_words(&self) -> usize {
        (2 * self.shape.halo as usize).div_ceil(64)
    }

    /// Writes the window of `run` for a chunk of `gens` into `slot` of `stacked`.
    fn gather(&self, run: Run, gens: u64, stacked: &mut Universe, slot: Slot) {
        let side = self.shape.side;
        let rows = gens as i64 * self.radius;
        let window_h = self.window_height(gens) as usize;
        let (n, words) = (stacked.words_per_row(), self.window_words(run.len));
        let (tx, ty) = run.first;
        let across = run.len + 2;
        let around: Vec<Option<&[u64]>> = (-1..=1)
            .flat_map(|dy| (-1..=across as i64 - 2).map(move |dx| (tx + dx, ty + dy)))
            .map(|key| self.tiles.get(&key).map(|tile| &tile[..]))
            .collect();
        // The row of the tiles across, from the left neighbour's first cell.
        let mut line = vec![0u64; across * self.words + 1];
        let first_cell = (side - self.shape.halo) as usize;
        let flip = self.complemented_at(self.generation);
        for p in 0..self.planes {
            let to = stacked.plane_mut(p);
            for wy in 0..window_h {
                let dy = wy as i64 - rows;
                let (row_tile, row) = (dy.div_euclid(side), dy.rem_euclid(side) as usize);
                let tiles = &around[(row_tile + 1) as usize * across..][..across];
                if flip == 0 && tiles.iter().all(Option::is_none) {
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
                let out = (slot.0 * window_h + wy) * n + slot.1;
                cells_from(&mut to[out..out + words], &line, first_cell, flip);
            }
        }
    }

    /// The word that complements the cells held at `generation`, or 0.
    fn complemented_at(&self, generation: u64) -> u64 {
        if self.alternating && generation % 2 == 1 {
            !0
        } else {
            0
        }
    }

    /// The cells of tile `i` of the run stepped in `slot`, cut out of the stepped windows.
    fn scatter(&self, stepped: &Universe, gens: u64, slot: Slot, i: usize) -> Box<[u64]> {
        let side = self.shape.side as usize;
        let rows = (gens as i64 * self.radius) as usize;
        let window_h = self.window_height(gens) as usize;
        let n = stepped.words_per_row();
        let first_cell = self.shape.halo as usize + i * side;
        let flip = self.complemented_at(self.generation + gens);
        let mut tile = vec![0u64; self.tile_len()].into_boxed_slice();
        for p in 0..self.planes {
            let from = stepped.plane(p);
            for row in 0..side {
                let at = (slot.0 * window_h + rows + row) * n + slot.1;
                let out = self.at(p, row, 0);
                cells_from(
                    &mut tile[out..out + self.words],
                    &from[at..at + self.window_words(i + 1)],
                    first_cell,
                    flip,
                );
            }
        }
        tile
    }

    /// Cells not dead, as Golly counts them.
    fn count_population(&self) -> u64 {
        let per_plane = self.shape.side as usize * self.words;
        self.tiles
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

    /// The live cells' box and where its top-left cell is on Golly's plane; `None` when the
    /// pattern died out.
    fn gather_live_cells(&self) -> Result<Option<Placed>, PlaneError> {
        let side = self.shape.side;
        let Some(bounds) = self.live_bounds() else {
            return Ok(None);
        };
        let (left, top, right, bottom) = bounds;
        let (width, height) = ((right - left + 1) as u64, (bottom - top + 1) as u64);
        let grown = |source| PlaneError::Grown {
            generation: self.generation,
            width,
            height,
            source,
        };
        let mut cells = Universe::new(width, height)
            .and_then(|u| u.with_states(self.states))
            .map_err(grown)?;
        let n = cells.words_per_row();
        for (&(tx, ty), tile) in &self.tiles {
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

    /// First and last column and row with a live cell, in Golly's coordinates.
    fn live_bounds(&self) -> Option<(i64, i64, i64, i64)> {
        let side = self.shape.side;
        let per_plane = side as usize * self.words;
        let mut bounds: Option<(i64, i64, i64, i64)> = None;
        for (&(tx, ty), tile) in &self.tiles {
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

    /// Advances `gens` generations in chunks.
    pub fn advance_plane(&mut self, gens: u64) -> Result<(), BackendError> {
        let mut left = gens;
        while left > 0 {
            if self.tiles.is_empty() {
                self.generation += left;
                return Ok(());
            }
            let step = left.min(self.shape.chunk);
            self.advance_chunk(step)?;
            left -= step;
        }
        Ok(())
    }
}

/// Fills `out` with the cells of the row `words` from cell `first` on, complemented where
/// `flip` has ones; `words` holds every cell asked for (and the word they end in).
fn cells_from(out: &mut [u64], words: &[u64], first: usize, flip: u64) {
    let (j, bit) = (first / 64, (first % 64) as u32);
    let words = &words[j..];
    if bit == 0 {
        assert!(words.len() >= out.len(), "a row of {} words", words.len());
        for (o, w) in out.iter_mut().zip(words) {
            *o = w ^ flip;
        }
    } else {
        assert!(words.len() > out.len(), "a row of {} words", words.len());
        for (o, pair) in out.iter_mut().zip(words.windows(2)) {
            *o = (pair[0] >> bit | pair[1] << (64 - bit)) ^ flip;
        }
    }
}

impl Simulator for ActiveTiles {
    fn describe(&self) -> String {
        let s = self.shape;
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
        let mut cache = self.gathered.take();
        cached_live_universe(&mut cache, self.states, || self.gather_live_cells())?;
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
        self.shape.chunk * (64 / self.shape.chunk).max(1)
    }
}

impl PlaneEngine for ActiveTiles {
    fn live_cells(&mut self) -> Result<Option<Placed>, PlaneError> {
        self.gather_live_cells()
    }
    fn population(&mut self) -> Result<u64, PlaneError> {
        Ok(self.count_population())
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
            self.tiles.len(),
            crate::memory::human_bytes(self.tile_bytes(self.tiles.len())),
            self.steps
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                Run {
                    first: (0, 0),
                    len: 40
                },
                Run {
                    first: (0, 1),
                    len: 3
                },
                Run {
                    first: (5, 1),
                    len: 2
                },
                Run {
                    first: (-3, 7),
                    len: 1
                },
            ]
        );
        for (words, halo_words) in [(2, 1), (1, 1), (4, 2), (32, 16)] {
            let packed = pack(found.clone(), words, halo_words);
            let stepped: Vec<Key> = packed.iter().flat_map(|(run, _)| run.tiles()).collect();
            let mut sorted = stepped.clone();
            sorted.sort_unstable_by_key(|&(x, y)| (y, x));
            assert_eq!(sorted, active, "{words} words a tile");
            let mut end_of_band: HashMap<usize, usize> = HashMap::new();
            for (run, (band, first)) in &packed {
                let end = first + run.len * words + halo_words;
                assert!(end <= BAND_WORDS, "{run:?} ends at word {end}");
                let last = end_of_band.entry(*band).or_default();
                assert_eq!(*last, *first, "windows of a band lie side by side");
                *last = end;
            }
            // Bands are filled before the next is begun.
            for band in 1..end_of_band.len() {
                let room = BAND_WORDS - end_of_band[&(band - 1)];
                assert!(
                    room < words + halo_words,
                    "band {} left {room} words",
                    band - 1
                );
            }
        }
    }
}
