//! Golly's unbounded plane, on a dense box that follows the pattern: the live cells sit in a
//! bounded plane (`:P`, dead past its edges) with a margin round them, and the box is advanced
//! only as many generations at a time as the margin keeps every edge out of reach (a cell's
//! influence travels `r` cells a generation). Before each such chunk the box is re-cut round the
//! live cells when they came too near an edge, or when it grew four times larger than they need:
//! a glider flying for a million generations holds a box the size of its margins, not the road
//! it travelled. Any simulator runs the box (the CPU's and the GPU's, every rule family), so the
//! plane is exact wherever the bounded plane is.
//!
//! A grid bounded along one side only (Golly's tube `:T0,<h>`, or `:P0,<h>`, and the same
//! turned) is a box whose bounded side is the grid's, joined or dead past its edges as the grid
//! is, and which follows the pattern along the other side only.
//!
//! Coordinates are Golly's (x right, y down, 64-bit); the box's cell (0, 0) sits at `origin`.

use lifegen_gen::rule::RuleSpec;
use lifegen_gen::{BirthOnZero, Rule, Strip, Topology};

use crate::drive::bands::radius;
use crate::reference;
use crate::simulator::{BackendError, Simulator};
use crate::universe::{Universe, UniverseError};

/// Cells and where their top-left cell lies on Golly's plane.
pub type Placed = (Universe, (i64, i64));

/// Makes a simulator for a box (a bounded plane).
pub type MakeBox = dyn Fn(Universe) -> Result<Box<dyn Simulator>, BackendError> + Send;

/// The smallest margin round the live cells, in cells (a multiple of 64).
const MIN_MARGIN: i64 = 64;

/// Live cells' bounding box: first and last column and row, inclusive, in box coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub left: i64,
    pub top: i64,
    pub right: i64,
    pub bottom: i64,
}

impl Bounds {
    pub fn width(&self) -> u64 {
        (self.right - self.left + 1) as u64
    }
    pub fn height(&self) -> u64 {
        (self.bottom - self.top + 1) as u64
    }
}

/// The cells of `universe` that are not dead (any plane), bounded; `None` when there are none.
pub fn live_bounds(universe: &Universe) -> Option<Bounds> {
    let n = universe.words_per_row();
    let mut bounds: Option<Bounds> = None;
    for y in 0..universe.height() {
        let (mut first, mut last) = (None, None);
        for j in 0..n {
            let word = (0..universe.planes()).fold(0, |w, p| w | universe.plane(p)[y * n + j]);
            if word != 0 {
                let lo = 64 * j as i64 + i64::from(word.trailing_zeros());
                let hi = 64 * j as i64 + 63 - i64::from(word.leading_zeros());
                first.get_or_insert(lo);
                last = Some(hi);
            }
        }
        if let (Some(lo), Some(hi)) = (first, last) {
            let y = y as i64;
            bounds = Some(match bounds {
                None => Bounds {
                    left: lo,
                    top: y,
                    right: hi,
                    bottom: y,
                },
                Some(b) => Bounds {
                    left: b.left.min(lo),
                    top: b.top,
                    right: b.right.max(hi),
                    bottom: y,
                },
            });
        }
    }
    bounds
}

/// 64 cells of `row` (a plane's row of `width` cells) from column `x` on, any `x`: cells outside
/// the row are dead.
pub(crate) fn cells_at(row: &[u64], width: i64, x: i64) -> u64 {
    let word = |j: i64| -> u64 {
        if j < 0 || j >= row.len() as i64 {
            0
        } else {
            row[j as usize]
        }
    };
    let (j, bit) = (x.div_euclid(64), x.rem_euclid(64));
    let mut cells = if bit == 0 {
        word(j)
    } else {
        word(j) >> bit | word(j + 1) << (64 - bit)
    };
    // Past the row's last cell.
    let inside = width - x;
    if inside <= 0 {
        cells = 0;
    } else if inside < 64 {
        cells &= (1u64 << inside) - 1;
    }
    // Before the row's first cell, the words read as dead already.
    cells
}

/// A `width` x `height` universe (of `src`'s states and `topology`) holding `src`'s cells with
/// `src`'s (0, 0) at (`dx`, `dy`); cells that fall outside are dropped.
pub fn recut(
    src: &Universe,
    (width, height): (u64, u64),
    (dx, dy): (i64, i64),
    topology: Topology,
) -> Result<Universe, UniverseError> {
    let mut out = Universe::new(width, height)?
        .with_states(src.states())?
        .with_topology(topology);
    let (n_in, n_out) = (src.words_per_row(), out.words_per_row());
    let src_width = src.width() as i64;
    for p in 0..src.planes() {
        let from = src.plane(p);
        let to = out.plane_mut(p);
        for y in 0..height as i64 {
            let sy = y - dy;
            if sy < 0 || sy >= src.height() as i64 {
                continue;
            }
            let row = &from[sy as usize * n_in..(sy as usize + 1) * n_in];
            for (j, word) in to[y as usize * n_out..(y as usize + 1) * n_out]
                .iter_mut()
                .enumerate()
            {
                *word = cells_at(row, src_width, 64 * j as i64 - dx);
            }
        }
    }
    let mask = out.last_word_mask();
    for p in 0..out.planes() {
        for row in out.plane_mut(p).chunks_mut(n_out) {
            row[n_out - 1] &= mask;
        }
    }
    Ok(out)
}

#[derive(Debug, thiserror::Error)]
pub enum PlaneError {
    #[error(
        "{0} gives birth on no neighbours (B0), which fills the unbounded plane at once; on the \
         plane lifegen runs B0 as Golly does for two-state rules of the 3x3 neighbourhood only: \
         run it on a bounded grid (a :T or :P suffix, or --size)"
    )]
    BirthOnZero(Box<Rule>),
    #[error(
        "{rule} gives birth on no neighbours (B0) and has no S8, so the plane fills and empties \
         by turns, and Golly holds the complement of the cells at odd generations; {engine} \
         cannot (Golly's HashLife refuses these rules too): --algo tiles runs it"
    )]
    Alternating {
        rule: Box<Rule>,
        engine: &'static str,
    },
    #[error(
        "at generation {generation}, the live cells' box of {width}x{height} cells cannot be held"
    )]
    Grown {
        generation: u64,
        width: u64,
        height: u64,
        source: UniverseError,
    },
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Pattern(#[from] crate::formats::pattern::PatternError),
    #[error(transparent)]
    Write(std::io::Error),
}

/// A pattern on Golly's unbounded plane, however it is held: what a run on the plane asks of it
/// beside a simulator's advance.
pub trait PlaneEngine: Simulator {
    /// The live cells' box and where its top-left cell is on Golly's plane; `None` when the
    /// pattern died out.
    fn live_cells(&mut self) -> Result<Option<Placed>, PlaneError>;
    /// Where the live cells' box lies and its size, `(x, y, width, height)`; `None` when the
    /// pattern died out.
    fn live_box(&mut self) -> Result<Option<(i64, i64, u64, u64)>, PlaneError> {
        Ok(self
            .live_cells()?
            .map(|(cells, (x, y))| (x, y, cells.width() as u64, cells.height() as u64)))
    }
    /// The live cells in pieces that do not overlap, each where it lies on Golly's plane (none
    /// when the pattern died out), or `None` when the pieces would cover more than `most`
    /// cells: this default is the live cells' box as one piece; the tiles give their tiles and
    /// HashLife its live nodes of 64x64, so a pattern whose box is far larger than its cells
    /// (gliders flown far apart) moves without painting the box.
    fn live_pieces(&mut self, most: u64) -> Result<Option<Vec<Placed>>, PlaneError> {
        // Painted once: an engine with a cheaper way to its box gives its own pieces.
        let live = self.live_cells()?;
        let area =
            |(cells, _): &Placed| (cells.width() as u64).saturating_mul(cells.height() as u64);
        if live.as_ref().is_some_and(|placed| area(placed) > most) {
            return Ok(None);
        }
        Ok(Some(live.into_iter().collect()))
    }
    /// Cells not dead, as Golly counts them.
    fn population(&mut self) -> Result<u64, PlaneError>;
    fn generation(&self) -> u64;
    /// Counts generations from `generation` (a file's `#CXRLE Gen=` or `#G`), before any
    /// advance.
    fn start_at(&mut self, generation: u64);
    /// How the engine went about it, for people (one line).
    fn report(&self) -> String;
    /// Cell updates computed since the start (every cell of what was stepped, once a
    /// generation: the tiles', the box's), for an engine whose work is that: the rate a run
    /// says. HashLife's is not.
    fn cell_updates(&self) -> Option<u128> {
        None
    }
    /// Holds the pattern in about `bytes` of memory: an advance that would need more stops
    /// with [`BackendError::OutOfRoom`] at the last generation reached (HashLife first drops
    /// the nodes the pattern no longer uses, between steps).
    fn set_memory_budget(&mut self, bytes: u64);
    /// Writes the live cells as Golly saves RLE (`#CXRLE Pos=x,y Gen=N`, the live cells' box);
    /// this default goes through the live cells' box.
    fn write_rle(
        &mut self,
        rule: &RuleSpec,
        sink: &mut dyn std::io::Write,
    ) -> Result<(), PlaneError> {
        let generation = self.generation();
        let (cells, at) = live_or_none(self, rule.rule.states())?;
        crate::formats::rle::write_plane_to(&cells, rule, at, generation, sink)
            .map_err(PlaneError::Write)
    }
    /// Writes the pattern as a macrocell file, where Golly puts it (`#R rule`, `#G` the
    /// generation); this default goes through the live cells' box.
    fn write_macrocell(
        &mut self,
        rule: &RuleSpec,
        sink: &mut dyn std::io::Write,
    ) -> Result<(), PlaneError> {
        let generation = self.generation();
        let (cells, at) = live_or_none(self, rule.rule.states())?;
        crate::formats::macrocell::write_plane_to(&cells, at, rule, generation, sink)
            .map_err(PlaneError::Write)
    }
}

/// The box round `pieces` (universes with their (0, 0) at a place on Golly's plane): its
/// top-left cell and size; `None` for no pieces.
pub(crate) fn pieces_box<'a>(
    pieces: impl Iterator<Item = (&'a Universe, (i64, i64))>,
) -> Option<((i64, i64), (u64, u64))> {
    pieces
        .map(|(cells, (x, y))| (x, y, x + cells.width() as i64, y + cells.height() as i64))
        .reduce(|(l, t, r, b), (x0, y0, x1, y1)| (l.min(x0), t.min(y0), r.max(x1), b.max(y1)))
        .map(|(l, t, r, b)| ((l, t), ((r - l) as u64, (b - t) as u64)))
}

/// What a file of `engine`'s pattern is written from: its live cells' box and where it lies,
/// or when none lives, [`no_cells`] at (0, 0).
fn live_or_none<E: PlaneEngine + ?Sized>(
    engine: &mut E,
    states: u16,
) -> Result<Placed, PlaneError> {
    match engine.live_cells()? {
        Some(placed) => Ok(placed),
        None => Ok((no_cells(states)?, (0, 0))),
    }
}

/// One dead cell in `states` states: a pattern with none alive, as a file writes it.
pub(crate) fn no_cells(states: u16) -> Result<Universe, PlaneError> {
    Universe::new(1, 1)
        .and_then(|u| u.with_states(states))
        .map_err(|e| PlaneError::Backend(BackendError::Plane(e.to_string())))
}

/// What a plane engine's [`Simulator::universe`] gives: the live cells' box from `live`, made
/// once and kept in `cache` until the next advance clears it; one dead cell when none lives.
pub(crate) fn cached_live_universe(
    cache: &mut Option<Universe>,
    states: u16,
    live: impl FnOnce() -> Result<Option<Placed>, PlaneError>,
) -> Result<&Universe, BackendError> {
    if cache.is_none() {
        let plane_error = |e: &dyn std::fmt::Display| BackendError::Plane(e.to_string());
        let cells = match live().map_err(|e| plane_error(&e))? {
            Some((cells, _)) => cells,
            None => Universe::new(1, 1)
                .and_then(|u| u.with_states(states))
                .map_err(|e| plane_error(&e))?,
        };
        *cache = Some(cells);
    }
    Ok(cache.as_ref().expect("made above"))
}

/// A pattern on Golly's unbounded plane, advanced by a simulator of its box.
pub struct PlaneSimulator {
    make: Box<MakeBox>,
    sim: Box<dyn Simulator>,
    radius: i64,
    /// The box keeps even sides and an even corner (a rule that depends on parity).
    even: bool,
    /// Golly's coordinates of the box's cell (0, 0).
    origin: (i64, i64),
    generation: u64,
    /// Times the box was re-cut round the cells.
    recuts: u64,
    /// The box's cells times the generations it was stepped.
    cell_updates: u128,
    /// The grid's bounded side, when only one is.
    strip: Option<Strip>,
    /// Bytes a box may take.
    memory_limit: u64,
    /// The box's size now, in cells, and its bytes.
    box_size: (u64, u64, u64),
}

impl PlaneSimulator {
    /// `cells` (its live cells anywhere in it) with its cell (0, 0) at Golly's `origin`, run by
    /// simulators `make` builds.
    pub fn new(
        rule: Rule,
        cells: Universe,
        origin: (i64, i64),
        make: Box<MakeBox>,
    ) -> Result<PlaneSimulator, PlaneError> {
        PlaneSimulator::on_strip(rule, cells, origin, None, make)
    }

    /// The same on a grid bounded along one side only, `strip`, when it is given.
    pub fn on_strip(
        rule: Rule,
        cells: Universe,
        origin: (i64, i64),
        strip: Option<Strip>,
        make: Box<MakeBox>,
    ) -> Result<PlaneSimulator, PlaneError> {
        refuse_birth_on_zero(&rule, "a dense box")?;
        if let (Some(strip), Some(b)) = (strip, live_bounds(&cells)) {
            let (first, last, along) = if strip.rows {
                (b.top + origin.1, b.bottom + origin.1, "rows")
            } else {
                (b.left + origin.0, b.right + origin.0, "columns")
            };
            let grid = strip.first()..strip.first() + strip.cells as i64;
            if !grid.contains(&first) || !grid.contains(&last) {
                return Err(PlaneError::Backend(BackendError::Plane(format!(
                    "the pattern's {along} {first} to {last} do not fit in the {along} {} to {} \
                     of its grid {}",
                    grid.start,
                    grid.end - 1,
                    strip.suffix()
                ))));
            }
        }
        let radius = radius(&rule) as i64;
        let even = rule.depends_on_parity();
        let (universe, shift) = fitted(&cells, (radius, even), 0, strip, origin, u64::MAX)?;
        let box_size = size_of(&universe);
        let sim = make(universe)?;
        Ok(PlaneSimulator {
            make,
            sim,
            radius,
            even,
            origin: (origin.0 - shift.0, origin.1 - shift.1),
            generation: 0,
            recuts: 0,
            cell_updates: 0,
            strip,
            memory_limit: u64::MAX,
            box_size,
        })
    }

    /// Golly's coordinates of the box's cell (0, 0).
    pub fn origin(&self) -> (i64, i64) {
        self.origin
    }

    /// The box's size now, in cells.
    pub fn universe_size(&mut self) -> (u64, u64) {
        self.sim
            .universe()
            .map_or((0, 0), |u| (u.width() as u64, u.height() as u64))
    }

    /// Times the box was re-cut round the cells.
    pub fn recuts(&self) -> u64 {
        self.recuts
    }

    /// Advances `gens` generations, re-cutting the box whenever the cells near its edges.
    pub fn advance_plane(&mut self, gens: u64) -> Result<(), PlaneError> {
        let r = self.radius;
        let mut left = gens;
        while left > 0 {
            let universe = self.sim.universe()?;
            let Some(b) = live_bounds(universe) else {
                // Nothing lives and nothing is born from nothing: it stays empty.
                self.generation += left;
                return Ok(());
            };
            let (w, h) = (universe.width() as i64, universe.height() as i64);
            let (room_x, room_y) = (b.left.min(w - 1 - b.right), b.top.min(h - 1 - b.bottom));
            // Along a strip's bounded side the box is the grid: only the other side counts.
            let (room, box_along, cells_along) = match self.strip {
                None => (room_x.min(room_y), w * h, b.width().max(b.height())),
                Some(s) if s.rows => (room_x, w, b.width()),
                Some(_) => (room_y, h, b.height()),
            };
            // Cells within r of an edge after g generations need g + 1 radii of room.
            let reach = room / r - 1;
            let needed = (cells_along as i64 / 4).max(MIN_MARGIN) / r;
            let oversized = match self.strip {
                None => oversized(box_along as u64, &b, r, self.even),
                Some(_) => box_along as f64 > 4.0 * (cells_along + 2 * MIN_MARGIN as u64) as f64,
            };
            if reach < needed.min(left as i64).max(1) || oversized {
                let current = self.sim.universe()?.clone();
                let (universe, shift) = fitted(
                    &current,
                    (r, self.even),
                    self.generation,
                    self.strip,
                    self.origin,
                    self.memory_limit,
                )?;
                self.origin = (self.origin.0 - shift.0, self.origin.1 - shift.1);
                self.box_size = size_of(&universe);
                // A box of the same size (a spaceship's) keeps its simulator and its kernels.
                if (universe.width(), universe.height()) == (current.width(), current.height()) {
                    self.sim.replace(universe)?;
                } else {
                    self.sim = (self.make)(universe)?;
                }
                self.recuts += 1;
                continue;
            }
            let step = (reach as u64).min(left);
            self.sim.advance(step)?;
            self.cell_updates += (w * h) as u128 * u128::from(step);
            self.generation += step;
            left -= step;
        }
        Ok(())
    }
}

/// A universe's width, height and bytes.
fn size_of(universe: &Universe) -> (u64, u64, u64) {
    let (width, height) = (universe.width() as u64, universe.height() as u64);
    let words = universe.words_per_row() as u64 * height * universe.planes() as u64;
    (width, height, 8 * words)
}

/// The width and height of [`fitted`]'s box round live cells of bounds `b` whose side that
/// counts is `along` cells, and its margin.
fn box_round(b: &Bounds, along: u64, radius: i64, even: bool) -> (u64, u64, i64) {
    let margin = ((along / 4).max(MIN_MARGIN as u64) + 2 * radius as u64).div_ceil(64) * 64;
    let (width, height) = if even {
        // Room for a column and a row more before the cells.
        (
            (b.width() + 2 * margin + 1).div_ceil(64) * 64,
            b.height() + 2 * margin + 1,
        )
    } else {
        (
            (b.width() + 2 * margin).div_ceil(64) * 64,
            b.height() + 2 * margin,
        )
    };
    (width, height, margin as i64)
}

/// Whether a box of `area` cells round live cells of bounds `b` is far larger than they need:
/// eight times the box [`fitted`] would cut, which itself never is (a fixed multiple of the
/// cells' box once re-cut a 3000x1 line's fitted box forever: its margin is a quarter of its
/// length on every side).
fn oversized(area: u64, b: &Bounds, radius: i64, even: bool) -> bool {
    let (width, height, _) = box_round(b, b.width().max(b.height()), radius, even);
    area as f64 > 8.0 * width as f64 * height as f64
}

/// A box round `cells`' live cells with a margin of a quarter of their larger side (at least
/// [`MIN_MARGIN`] cells), its width a multiple of 64; and the shift of the cells into it. On a
/// `strip`, the box's bounded side is the grid's (`cells`' (0, 0) at Golly's `origin`). A box
/// of more than `budget` bytes is [`BackendError::OutOfRoom`]. With `even` (a rule that
/// depends on the parity of a cell's place), the box's sides and its corner on Golly's plane
/// are even.
fn fitted(
    cells: &Universe,
    (radius, even): (i64, bool),
    generation: u64,
    strip: Option<Strip>,
    origin: (i64, i64),
    budget: u64,
) -> Result<(Universe, (i64, i64)), PlaneError> {
    let b = live_bounds(cells).unwrap_or(Bounds {
        left: 0,
        top: 0,
        right: 0,
        bottom: 0,
    });
    let along = match strip {
        None => b.width().max(b.height()),
        Some(s) if s.rows => b.width(),
        Some(_) => b.height(),
    };
    let (mut width, mut height, margin) = box_round(&b, along, radius, even);
    let mut shift = (margin - b.left, margin - b.top);
    if even {
        shift.0 += (origin.0 - shift.0).rem_euclid(2);
        shift.1 += (origin.1 - shift.1).rem_euclid(2);
        height += height % 2;
    }
    let mut topology = Topology::Plane;
    if let Some(s) = strip {
        if s.joined {
            topology = Topology::Torus;
        }
        if s.rows {
            (height, shift.1) = (s.cells, origin.1 - s.first());
        } else {
            (width, shift.0) = (s.cells, origin.0 - s.first());
        }
    }
    let bytes = width
        .div_ceil(64)
        .saturating_mul(8 * height)
        .saturating_mul(cells.planes() as u64);
    if bytes > budget {
        return Err(PlaneError::Backend(BackendError::OutOfRoom(format!(
            "at generation {generation} the box round the live cells would be {width}x{height} \
             cells ({}), over the {} it may use (--host-memory)",
            crate::memory::human_bytes(bytes),
            crate::memory::human_bytes(budget)
        ))));
    }
    let universe =
        recut(cells, (width, height), shift, topology).map_err(|source| PlaneError::Grown {
            generation,
            width,
            height,
            source,
        })?;
    Ok((universe, shift))
}

/// Whether dead cells with no live neighbours come alive (B0): one dead cell on a bounded
/// plane, where every neighbour is dead (a torus of 2r + 2 cells a side cost the reference
/// (2r + 2)^2 (2r + 1)^2 reads: 12 s at r = 100).
/// Refuses a rule that gives birth on no neighbours, for an engine (named `engine`) that runs
/// neither the rule Golly runs in its place nor Golly's alternation.
pub(crate) fn refuse_birth_on_zero(rule: &Rule, engine: &'static str) -> Result<(), PlaneError> {
    match rule.birth_on_zero() {
        Some(BirthOnZero::Alternating) => Err(PlaneError::Alternating {
            rule: Box::new(*rule),
            engine,
        }),
        _ if births_from_nothing(rule) => Err(PlaneError::BirthOnZero(Box::new(*rule))),
        _ => Ok(()),
    }
}

pub(crate) fn births_from_nothing(rule: &Rule) -> bool {
    Universe::new(1, 1)
        .and_then(|u| u.with_states(rule.states()))
        .map(|u| reference::run(&u.with_topology(Topology::Plane), rule, 1).population() > 0)
        .unwrap_or(false)
}

impl PlaneEngine for PlaneSimulator {
    /// The live cells' box and where its top-left cell is on Golly's plane; `None` when the
    /// pattern died out.
    fn live_cells(&mut self) -> Result<Option<Placed>, PlaneError> {
        let origin = self.origin;
        let universe = self.sim.universe()?;
        let Some(b) = live_bounds(universe) else {
            return Ok(None);
        };
        let cells = recut(
            universe,
            (b.width(), b.height()),
            (-b.left, -b.top),
            Topology::Torus,
        )
        .map_err(|source| PlaneError::Grown {
            generation: self.generation,
            width: b.width(),
            height: b.height(),
            source,
        })?;
        Ok(Some((cells, (origin.0 + b.left, origin.1 + b.top))))
    }

    fn population(&mut self) -> Result<u64, PlaneError> {
        Ok(self.sim.universe()?.population())
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
        let (width, height, bytes) = self.box_size;
        format!(
            "the box was re-cut {} times; it is {width}x{height} cells ({})",
            self.recuts,
            crate::memory::human_bytes(bytes)
        )
    }
    fn cell_updates(&self) -> Option<u128> {
        Some(self.cell_updates)
    }
}

impl Simulator for PlaneSimulator {
    fn describe(&self) -> String {
        let grid = match self.strip {
            None => "Golly's unbounded plane".to_string(),
            Some(strip) => format!("Golly's grid {}", strip.suffix()),
        };
        format!(
            "{grid} on a box that follows the pattern (re-cut {} time{} so far), run by: {}",
            self.recuts,
            if self.recuts == 1 { "" } else { "s" },
            self.sim.describe()
        )
    }
    fn advance(&mut self, gens: u64) -> Result<(), BackendError> {
        self.advance_plane(gens).map_err(|e| match e {
            PlaneError::Backend(e) => e,
            other => BackendError::Plane(other.to_string()),
        })
    }
    fn universe(&mut self) -> Result<&Universe, BackendError> {
        self.sim.universe()
    }
    fn replace(&mut self, _: Universe) -> Result<Universe, BackendError> {
        Err(BackendError::Plane(
            "a pattern on the unbounded plane is not swapped for a band".into(),
        ))
    }
    fn kernel_seconds(&self) -> Option<f64> {
        self.sim.kernel_seconds()
    }
    fn preferred_step(&self) -> u64 {
        self.sim.preferred_step().max(64)
    }
    fn prepare(&mut self, gens: u64) -> Result<(), BackendError> {
        self.sim.prepare(gens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_at_any_offset_read_the_row_with_dead_cells_round_it() {
        let row = [0x8000_0000_0000_0001u64, 0b101];
        let width = 67;
        for x in -130..140i64 {
            let expected = (0..64).fold(0u64, |acc, i| {
                let c = x + i;
                let alive = (0..width).contains(&c) && row[(c / 64) as usize] >> (c % 64) & 1 == 1;
                acc | u64::from(alive) << i
            });
            assert_eq!(cells_at(&row, width, x), expected, "x = {x}");
        }
    }

    #[test]
    fn a_recut_moves_every_cell_by_the_shift() {
        let mut u = Universe::new(130, 20).unwrap();
        for (x, y) in [(0, 0), (63, 5), (64, 6), (129, 19), (70, 10)] {
            u.set(x, y, true);
        }
        let out = recut(&u, (300, 50), (37, 11), Topology::Plane).unwrap();
        assert_eq!(out.population(), 5);
        for (x, y) in [(0, 0), (63, 5), (64, 6), (129, 19), (70, 10)] {
            assert!(out.get(x + 37, y + 11));
        }
        let b = live_bounds(&out).unwrap();
        assert_eq!((b.left, b.top, b.right, b.bottom), (37, 11, 166, 30));
    }
}
