//! A pattern put on Golly's unbounded plane in the engine asked for, or the one `auto` picks:
//! what `lifegen run` and the Python package's `run_plane` share.

use lifegen_gen::{BirthOnZero, Rule, Strip};

use crate::backend::{BackendKind, create};
use crate::drive::active_tiles::{ActiveTiles, TileShape, WindowStepper};
use crate::drive::hashlife::HashLife;
use crate::drive::plane::{Placed, PlaneEngine, PlaneError, PlaneSimulator};
use crate::drive::switching::{Holder, Switching};
use crate::formats::pattern::Pattern;
use crate::simulator::BackendError;
use crate::universe::Universe;

/// HashLife's memory budget when none is given: Golly's (bgolly's `-M` default).
pub const HASHLIFE_DEFAULT_BUDGET: u64 = 256 << 20;

/// How the plane is held and stepped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaneAlgo {
    Auto,
    Tiles,
    Dense,
    Hashlife,
    /// What auto runs for a rule of range one (not an `--algo` of its own): HashLife, the
    /// pattern moved to tiles of [`SWITCHING_TILE`] while they run it faster, and back
    /// ([`crate::drive::switching`]).
    Switching,
}

/// The tiles' side where auto moves a pattern out of HashLife: measured faster than the default
/// 128 on the small chaotic patterns it takes (lava to 20000 0.18 s against 0.22; BENCHMARKS.md).
pub const SWITCHING_TILE: i64 = 64;

impl std::str::FromStr for PlaneAlgo {
    type Err = String;
    fn from_str(text: &str) -> Result<PlaneAlgo, String> {
        match text {
            "auto" => Ok(PlaneAlgo::Auto),
            "tiles" => Ok(PlaneAlgo::Tiles),
            "dense" => Ok(PlaneAlgo::Dense),
            "hashlife" => Ok(PlaneAlgo::Hashlife),
            _ => Err(format!(
                "{text:?} is not an engine of the plane: auto, tiles, dense or hashlife"
            )),
        }
    }
}

/// What a run on the plane asks for beside the pattern and the rule.
#[derive(Clone, Copy, Debug)]
pub struct PlaneRequest {
    pub algo: PlaneAlgo,
    pub backend: BackendKind,
    /// A tile's side in cells, for the tiles.
    pub tile: Option<i64>,
    /// Bytes the engine may hold (HashLife's nodes, the tiles, the box; default: see
    /// [`PlaneRequest::budget`]).
    pub host_memory: Option<u64>,
    /// The grid's bounded side, when the rule names a grid bounded along one side only
    /// (`:T0,<h>`): the dense box runs it.
    pub strip: Option<Strip>,
}

impl PlaneRequest {
    /// What `auto` runs for a pattern (`macrocell`: read from a macrocell file): for two-state
    /// and Generations rules of range one (as Golly runs them: its HashLife and its
    /// HashLife-based Generations) HashLife, the pattern moved to the tiles where they run it
    /// faster ([`PlaneAlgo::Switching`]; a macrocell file stays with HashLife, node for node,
    /// where the tiles would expand it: Golly's metacells are boxes of millions of cells a
    /// side), unless a tile size or the GPU was named (HashLife's base nodes run on the CPU);
    /// active tiles otherwise, and for
    /// Larger than Life (Golly's `ltlalgo` is no tree either: HashLife wins on its engineered
    /// patterns and loses by 10x and more where they explode, globe.rle to 1000 14.5 s against
    /// 1.1 s). Measured on one thread against the tiles (BENCHMARKS.md, the unbounded plane):
    /// acorn to 5206 0.12 s against 0.55 s, iwona to 28786 0.66 s against 9.8 s; a 512^2 soup to
    /// 3000 1.5 s against 1.4 s; Golly's Generations folder to 1000: 20 of 25 faster.
    pub fn chosen_algo(&self, rule: &Rule, macrocell: bool) -> PlaneAlgo {
        self.choice(rule, macrocell).0
    }

    /// [`Self::chosen_algo`], and why, for the run to say.
    pub fn choice(&self, rule: &Rule, macrocell: bool) -> (PlaneAlgo, &'static str) {
        if self.algo != PlaneAlgo::Auto {
            return (self.algo, "as --algo asks");
        }
        if self.strip.is_some() {
            return (
                PlaneAlgo::Dense,
                "auto: the grid is bounded along one side, which the dense box holds",
            );
        }
        if self.tile.is_some() {
            return (PlaneAlgo::Tiles, "auto: --tile sizes the tiles");
        }
        if self.backend == BackendKind::Gpu {
            return if macrocell {
                (
                    PlaneAlgo::Hashlife,
                    "auto: a macrocell file goes to HashLife node for node, its base nodes on \
                     the CPU (the GPU's tiles would expand it: --algo tiles asks for them)",
                )
            } else {
                (
                    PlaneAlgo::Tiles,
                    "auto: --backend gpu runs the tiles there (HashLife's base nodes run on \
                     the CPU)",
                )
            };
        }
        if rule.larger_than_life().is_some() {
            return (
                PlaneAlgo::Tiles,
                "auto: Larger than Life (decaying too: Golly's ltlalgo), whose patterns often \
                 explode, where HashLife's memo pays nothing (--algo hashlife runs ranges up to 8)",
            );
        }
        if rule.birth_on_zero() == Some(BirthOnZero::Alternating) {
            return (
                PlaneAlgo::Tiles,
                "auto: birth on no neighbours without S8 alternates the background, which \
                 HashLife does not hold",
            );
        }
        if macrocell {
            return (
                PlaneAlgo::Hashlife,
                "auto: a macrocell file goes to HashLife node for node",
            );
        }
        (
            PlaneAlgo::Switching,
            "auto: a rule of range one: HashLife, whose memo pays for engineered patterns, the \
             pattern moved to tiles of 64 while timed trials find them clearly faster (a \
             chaotic one), and back when the tree pays again",
        )
    }

    /// Why this request cannot run `rule`, before anything is read.
    pub fn check(&self, rule: &Rule, macrocell: bool) -> Result<PlaneAlgo, String> {
        let algo = self.chosen_algo(rule, macrocell);
        if let Some(strip) = self.strip.filter(|_| algo != PlaneAlgo::Dense) {
            return Err(format!(
                "{}{} is bounded along one side only, which the dense box runs (--algo dense, or \
                 auto); the tiles and HashLife hold the unbounded plane",
                rule,
                strip.suffix()
            ));
        }
        if self.tile.is_some() && algo != PlaneAlgo::Tiles {
            return Err(format!(
                "--tile sizes the tiles of --algo tiles; {}",
                if algo == PlaneAlgo::Dense {
                    "--algo dense runs one box"
                } else {
                    "HashLife's nodes are its own"
                }
            ));
        }
        Ok(algo)
    }

    /// `pattern` under `rule` on the plane, at the generation its file gives; a macrocell
    /// file's tree goes to HashLife node for node, never expanded.
    pub fn open_pattern(
        &self,
        pattern: Pattern,
        rule: Rule,
    ) -> Result<Box<dyn PlaneEngine>, PlaneError> {
        let algo = self
            .check(&rule, pattern.macrocell().is_some())
            .map_err(refused)?;
        let rule = rule_golly_runs(rule);
        let generation = pattern.generation();
        // A file of more states than the rule's goes the other way, to its clear error.
        let tree = pattern
            .macrocell()
            .filter(|_| algo == PlaneAlgo::Hashlife)
            .filter(|tree| u16::from(tree.highest_state()) < rule.states());
        let mut engine = match tree {
            Some(tree) => {
                let mut tree = HashLife::from_macrocell(rule, tree, self.base_maker(rule))?;
                tree.set_memory_budget(self.budget(algo));
                Box::new(tree) as Box<dyn PlaneEngine>
            }
            None => {
                let (width, height) = pattern.size();
                let position = match self.strip {
                    Some(strip) => pattern.strip_position(strip),
                    None => pattern.plane_position(),
                }
                .map_err(|e| refused(e.to_string()))?;
                let mut cells = Universe::new(width.max(1), height.max(1))
                    .and_then(|u| u.with_states(rule.states()))
                    .map_err(|e| refused(e.to_string()))?;
                pattern.read_into(&mut cells)?;
                self.open_cells_as(algo, cells, position, rule)?
            }
        };
        engine.start_at(generation);
        Ok(engine)
    }

    /// `cells` under `rule` on the plane, their top-left cell at Golly's `position`.
    pub fn open_cells(
        &self,
        cells: Universe,
        position: (i64, i64),
        rule: Rule,
    ) -> Result<Box<dyn PlaneEngine>, PlaneError> {
        let algo = self.check(&rule, false).map_err(refused)?;
        self.open_cells_as(algo, cells, position, rule_golly_runs(rule))
    }

    /// The cells of `pieces` (see [`ActiveTiles::new`]) on active tiles, as `--algo tiles`
    /// runs them.
    fn open_tiles(
        &self,
        pieces: &[(&Universe, (i64, i64))],
        rule: Rule,
    ) -> Result<ActiveTiles, PlaneError> {
        let backend = self.backend;
        let radius = crate::drive::bands::radius(&rule) as i64;
        let shape = match (self.tile, backend) {
            (Some(side), _) => Some(
                TileShape::for_radius(radius)
                    .with_side(side)
                    .map_err(|e| refused(format!("--tile {e}")))?,
            ),
            (None, BackendKind::Gpu) => Some(TileShape::for_gpu(radius)),
            (None, _) => None,
        };
        // Tiles held on the GPU pay a few launches, copies of descriptions up and of
        // flags down, and a wait each chunk, and 15-20 ms for each shape of batch: on
        // sparse patterns no faster than the CPU's tiles (BENCHMARKS.md, tenth session),
        // so auto steps the tiles on the CPU; --backend gpu puts them there.
        let backend = match backend {
            BackendKind::Auto => BackendKind::Cpu,
            chosen => chosen,
        };
        let kernel = match (backend, rule) {
            (BackendKind::Cpu, Rule::LifeLike(life)) => {
                crate::backend::generated_kernel(&life).map_err(PlaneError::Backend)?
            }
            _ => None,
        };
        let stepper = match kernel {
            Some(kernel) => WindowStepper::Kernel(kernel),
            None => WindowStepper::Simulators(Box::new(move |universe| {
                create(backend, &rule, universe)
            })),
        };
        ActiveTiles::new(rule, pieces, shape, stepper)
    }

    /// [`Self::open_cells`] in `algo`, the engine [`Self::check`] chose, in its memory budget.
    fn open_cells_as(
        &self,
        algo: PlaneAlgo,
        cells: Universe,
        position: (i64, i64),
        rule: Rule,
    ) -> Result<Box<dyn PlaneEngine>, PlaneError> {
        let backend = self.backend;
        let mut engine: Box<dyn PlaneEngine> = match algo {
            PlaneAlgo::Switching => {
                let tree = self.open_cells_as(PlaneAlgo::Hashlife, cells, position, rule)?;
                let tiles = PlaneRequest {
                    tile: Some(SWITCHING_TILE),
                    ..*self
                };
                let (request, tiles_request) = (*self, tiles);
                let open = move |holder, pieces: Vec<Placed>| {
                    let pieces: Vec<_> = pieces.iter().map(|(cells, at)| (cells, *at)).collect();
                    let (mut engine, algo): (Box<dyn PlaneEngine>, _) = match holder {
                        Holder::Tree => (
                            Box::new(HashLife::from_pieces(
                                rule,
                                &pieces,
                                request.base_maker(rule),
                            )?),
                            PlaneAlgo::Hashlife,
                        ),
                        Holder::Tiles => (
                            Box::new(tiles_request.open_tiles(&pieces, rule)?),
                            PlaneAlgo::Tiles,
                        ),
                    };
                    engine.set_memory_budget(request.budget(algo));
                    Ok(engine)
                };
                return Ok(Box::new(Switching::new(Holder::Tree, tree, Box::new(open))));
            }
            PlaneAlgo::Tiles | PlaneAlgo::Auto => {
                Box::new(self.open_tiles(&[(&cells, position)], rule)?)
            }
            PlaneAlgo::Hashlife => Box::new(HashLife::new(
                rule,
                &cells,
                position,
                self.base_maker(rule),
            )?),
            PlaneAlgo::Dense => Box::new(PlaneSimulator::on_strip(
                rule,
                cells,
                position,
                self.strip,
                Box::new(move |universe| create(backend, &rule, universe)),
            )?),
        };
        engine.set_memory_budget(self.budget(algo));
        Ok(engine)
    }

    /// HashLife's base nodes: the CPU's kernels (a GPU launch each would cost more than the
    /// work), or the reference.
    fn base_maker(&self, rule: Rule) -> Box<crate::drive::plane::MakeBox> {
        let kind = match self.backend {
            BackendKind::Reference => BackendKind::Reference,
            _ => BackendKind::Cpu,
        };
        Box::new(move |universe| create(kind, &rule, universe))
    }

    /// `--host-memory`, else half of what is free; for HashLife, which collects what it no
    /// longer needs as it goes, at most bgolly's own default (`-M 256`), the peak Golly's users
    /// expect (logarithmic-width to 2^30: 29 s in 2.1 GB without a collection, 21-30 s in 266
    /// MB with twelve; Golly 21-27 s in 267 MB). A pattern whose memo outgrows it runs with
    /// fewer futures kept; `--host-memory` gives it more.
    fn budget(&self, algo: PlaneAlgo) -> u64 {
        self.host_memory.unwrap_or_else(|| {
            let half_free = crate::memory::headroom().map_or(4 << 30, |(bytes, _)| bytes / 2);
            match algo {
                PlaneAlgo::Hashlife => half_free.min(HASHLIFE_DEFAULT_BUDGET),
                _ => half_free,
            }
        })
    }
}

/// The rule Golly steps in place of `rule`: its dual when it gives birth on no neighbours and
/// keeps a full neighbourhood alive ([`BirthOnZero::Dual`]).
fn rule_golly_runs(rule: Rule) -> Rule {
    match rule.birth_on_zero() {
        Some(BirthOnZero::Dual(dual)) => dual,
        _ => rule,
    }
}

fn refused(reason: String) -> PlaneError {
    PlaneError::Backend(BackendError::Plane(reason))
}
