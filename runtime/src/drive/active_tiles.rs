//! Golly's unbounded plane on active tiles (the idea of Golly's QuickLife): the plane is cut
//! into square tiles of `side` cells, only tiles with live cells are held, and a tile is stepped
//! only when it or one of its eight neighbours changed in the last chunk of generations.
//!
//! A chunk advances `chunk` generations at once. Each active tile is stepped in a window: the
//! tile with a margin of `chunk * r` rows above and below and `halo` columns each side, read
//! from its neighbours. The windows are laid side by side and one under another in one torus
//! and run by any simulator (the CPU's native kernels, the GPU's): a window's margin is at least
//! as wide as the influence of `chunk` generations travels, so whatever its neighbours in the
//! torus (or the torus's wrap) do at a window's edges never reaches its tile, which is cut out
//! again afterwards.
//!
//! A tile equal after a chunk to what it was before, with eight neighbours that did not change
//! either, would be stepped from the same window again: it is left alone, whatever its period
//! as long as the period divides `chunk` (still lifes, blinkers, the period-2, 4, 8, 16 and 32
//! oscillators of Life). A chunk of another length steps every tile with live cells.

use std::collections::{HashMap, HashSet};

use lifegen_gen::{Rule, Topology};

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

/// Windows a batch's torus holds side by side at most: as many as fit in the widest row the
/// CPU's tile kernels step in one tile (a narrower torus is padded to the kernel's vector width,
/// so one window of three words a row ran at three words in eight).
const GRID_WORDS: usize = crate::cpu::tiles::TILE_WORDS - 2;

/// How a batch of windows lies in its torus: `columns` side by side, `rows` one under another
/// (powers of two, or the widest row that fits, so few shapes of simulator are made).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Grid {
    columns: usize,
    rows: usize,
}

impl Grid {
    fn for_windows(windows: usize, window_w: u64) -> Grid {
        let widest = (GRID_WORDS / (window_w as usize / 64)).max(1);
        let columns = windows.next_power_of_two().min(widest);
        Grid {
            columns,
            rows: windows.div_ceil(columns).next_power_of_two(),
        }
    }

    /// The column and row of window `i`.
    fn slot(&self, i: usize) -> (usize, usize) {
        (i % self.columns, i / self.columns)
    }
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
    simulators: HashMap<(Grid, u64), Box<dyn Simulator>>,
    spare: HashMap<(Grid, u64), Universe>,
    generation: u64,
    /// Tiles stepped (not left alone) since the start.
    steps: u64,
    /// The live cells as one universe, made when asked for.
    gathered: Option<Universe>,
    /// What the simulators say they are.
    description: String,
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
        if births_from_nothing(&rule) {
            return Err(PlaneError::BirthOnZero(rule));
        }
        let radius = radius(&rule) as i64;
        let shape = shape.unwrap_or_else(|| TileShape::for_radius(radius));
        let mut tiles = ActiveTiles {
            make,
            states: rule.states(),
            planes: cells.planes(),
            radius,
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
        };
        tiles.place(cells, origin);
        // The simulator of one window a chunk long, made now so the run can say what runs.
        let (width, height) = tiles.window_size(shape.chunk);
        let first = (tiles.make)(tiles.torus(width, height)?)?;
        tiles.description = first.describe();
        tiles
            .simulators
            .insert((Grid::for_windows(1, width), height), first);
        Ok(tiles)
    }

    pub fn shape(&self) -> TileShape {
        self.shape
    }

    /// Tiles stepped since the start, a tile each chunk it was stepped.
    pub fn tile_steps(&self) -> u64 {
        self.steps
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
        let fresh = gens != self.last_chunk;
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
        active.sort_unstable();
        // A window of dead cells stays dead (no birth from nothing on the plane).
        active.retain(|&(x, y)| {
            (-1..=1).any(|dy| (-1..=1).any(|dx| self.tiles.contains_key(&(x + dx, y + dy))))
        });

        let (window_w, window_h) = self.window_size(gens);
        let capacity_max = (BATCH_CELLS / (window_w * window_h)).max(1) as usize;
        let mut results: Vec<(Key, Box<[u64]>)> = Vec::with_capacity(active.len());
        for batch in active.chunks(capacity_max) {
            let grid = Grid::for_windows(batch.len(), window_w);
            let key = (grid, window_h);
            let mut stacked = match self.spare.remove(&key) {
                Some(mut universe) => {
                    for p in 0..self.planes {
                        universe.plane_mut(p).fill(0);
                    }
                    universe
                }
                None => self.torus(window_w * grid.columns as u64, window_h * grid.rows as u64)?,
            };
            for (i, &key) in batch.iter().enumerate() {
                self.gather(key, gens, &mut stacked, grid.slot(i));
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
            for (i, &tile) in batch.iter().enumerate() {
                results.push((tile, self.scatter(stepped, gens, grid.slot(i))));
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

    /// A window's width and height for a chunk of `gens` generations.
    /// An empty torus of the rule's states, for windows to be stacked in.
    fn torus(&self, width: u64, height: u64) -> Result<Universe, BackendError> {
        Ok(Universe::new(width, height)
            .and_then(|u| u.with_states(self.states))
            .map_err(|e| BackendError::Plane(e.to_string()))?
            .with_topology(Topology::Torus))
    }

    fn window_size(&self, gens: u64) -> (u64, u64) {
        let rows = gens as i64 * self.radius;
        (
            (self.shape.side + 2 * self.shape.halo) as u64,
            (self.shape.side + 2 * rows) as u64,
        )
    }

    /// Writes the window of tile `key` for a chunk of `gens` into `slot` of `stacked`.
    fn gather(&self, (tx, ty): Key, gens: u64, stacked: &mut Universe, slot: (usize, usize)) {
        let side = self.shape.side;
        let rows = gens as i64 * self.radius;
        let (window_w, window_h) = self.window_size(gens);
        let (n, words) = (stacked.words_per_row(), window_w as usize / 64);
        let around: Vec<Option<&[u64]>> = (-1..=1)
            .flat_map(|dy| (-1..=1).map(move |dx| (tx + dx, ty + dy)))
            .map(|key| self.tiles.get(&key).map(|tile| &tile[..]))
            .collect();
        let mut line = vec![0u64; 3 * self.words];
        for p in 0..self.planes {
            let to = stacked.plane_mut(p);
            for wy in 0..window_h as i64 {
                let dy = wy - rows;
                let (row_tile, row) = (dy.div_euclid(side), dy.rem_euclid(side) as usize);
                let mut any = false;
                for (i, part) in line.chunks_mut(self.words).enumerate() {
                    match around[(3 * (row_tile + 1)) as usize + i] {
                        Some(tile) => {
                            let at = self.at(p, row, 0);
                            part.copy_from_slice(&tile[at..at + self.words]);
                            any = true;
                        }
                        None => part.fill(0),
                    }
                }
                if !any {
                    continue;
                }
                let out = (slot.1 * window_h as usize + wy as usize) * n + slot.0 * words;
                for (j, word) in to[out..out + words].iter_mut().enumerate() {
                    *word = cells_at(&line, 3 * side, side - self.shape.halo + 64 * j as i64);
                }
            }
        }
    }

    /// The cells of the tile in `slot`, cut out of the stepped windows.
    fn scatter(&self, stepped: &Universe, gens: u64, slot: (usize, usize)) -> Box<[u64]> {
        let side = self.shape.side as usize;
        let rows = (gens as i64 * self.radius) as usize;
        let (window_w, window_h) = self.window_size(gens);
        let (n, words) = (stepped.words_per_row(), window_w as usize / 64);
        let mut tile = vec![0u64; self.tile_len()].into_boxed_slice();
        for p in 0..self.planes {
            let from = stepped.plane(p);
            for row in 0..side {
                let at = (slot.1 * window_h as usize + rows + row) * n + slot.0 * words;
                let src = &from[at..at + words];
                for j in 0..self.words {
                    tile[self.at(p, row, j)] =
                        cells_at(src, window_w as i64, self.shape.halo + 64 * j as i64);
                }
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
    fn report(&self) -> String {
        format!(
            "{} tiles hold it; {} tile steps in all",
            self.tiles.len(),
            self.steps
        )
    }
}
