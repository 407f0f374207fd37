//! `lifegen run` on Golly's unbounded plane: a pattern file whose rule names no bounded grid,
//! run without `--size`, as Golly runs it (`lifegen_runtime::drive::plane`).

use std::path::Path;

use anyhow::{Context, Result, bail};
use lifegen_gen::rule::RuleSpec;
use lifegen_runtime::drive::active_tiles::{ActiveTiles, TileShape};
use lifegen_runtime::drive::hashlife::HashLife;
use lifegen_runtime::drive::plane::{PlaneEngine, PlaneSimulator};
use lifegen_runtime::formats::pattern::{Pattern, is_macrocell, is_universe_file};
use lifegen_runtime::formats::rle;
use lifegen_runtime::{BackendKind, Universe};

use crate::output::{self, Pending};
use crate::run::{PlaneAlgo, RunArgs, advance_with_progress};

/// Whether a run of `pattern` under `rule` goes on the unbounded plane: a pattern file (not a
/// universe file or array) whose rule has no bounded-grid suffix, no `--size`, and no universe
/// file to run into.
pub fn wanted(args: &RunArgs, pattern: Option<&Pattern>, rule: &RuleSpec) -> bool {
    pattern.is_some_and(|p| !is_universe_file(p.path()))
        && args.size.is_none()
        && rule.size.is_none()
        && rule.topology == lifegen_gen::Topology::Torus
        && !args.output.as_deref().is_some_and(is_universe_file)
}

pub fn run(args: &RunArgs, pattern: Pattern, rule: RuleSpec) -> Result<()> {
    let rule = rule.rule;
    if args.gif.is_some() {
        bail!(
            "--gif draws a bounded universe; give the run one (--size WxH, or a :T or :P suffix \
             on --rule)"
        );
    }
    let outputs: Vec<(&str, &Path)> = [("--output", &args.output), ("--png", &args.png)]
        .into_iter()
        .filter_map(|(flag, path)| Some((flag, path.as_deref()?)))
        .collect();
    output::check_distinct(&outputs)?;
    let mut rle_out = args.output.as_deref().map(Pending::create).transpose()?;
    let mut png_out = args.png.as_deref().map(Pending::create).transpose()?;

    let (width, height) = pattern.size();
    let position = pattern.plane_position()?;
    let origin = pattern.origin();
    let pattern_generation = pattern.generation();
    let algo = chosen_algo(args.algo, &rule, backend_given(args) || args.tile.is_some());
    if args.host_memory.is_some() && algo != PlaneAlgo::Hashlife {
        bail!(
            "--host-memory bounds HashLife's tree on the plane; this run holds the plane on {} \
             (HashLife runs rules of two states and a range of one cell, with no --backend \
             or --tile given)",
            if algo == PlaneAlgo::Dense {
                "a dense box"
            } else {
                "active tiles"
            }
        );
    }
    // A file of more states than the rule's goes the other way, to its clear error.
    let from_tree = algo == PlaneAlgo::Hashlife
        && rule.states() == 2
        && pattern
            .macrocell()
            .is_some_and(|tree| tree.highest_state() <= 1);
    // The tree is read node for node, never expanded: the pattern is kept for it.
    let (cells, tree_file) = if from_tree {
        (Universe::new(1, 1)?, Some(pattern))
    } else {
        let mut cells = Universe::new(width.max(1), height.max(1))?.with_states(rule.states())?;
        pattern.read_into(&mut cells)?;
        (cells, None)
    };
    let backend = args.backend;
    let make = Box::new(move |universe| lifegen_runtime::create(backend, &rule, universe));
    let mut plane: Box<dyn PlaneEngine> = match algo {
        PlaneAlgo::Tiles | PlaneAlgo::Auto => {
            let shape = args
                .tile
                .map(|side| {
                    TileShape::for_radius(lifegen_runtime::drive::bands::radius(&rule) as i64)
                        .with_side(side)
                })
                .transpose()
                .map_err(|e| anyhow::anyhow!("--tile {e}"))?;
            Box::new(ActiveTiles::new(rule, &cells, position, shape, make)?)
        }
        PlaneAlgo::Hashlife => {
            if args.tile.is_some() {
                bail!("--tile sizes the tiles of --algo tiles; HashLife's nodes are its own");
            }
            // A base node is 64x64 cells: the CPU's kernels, never a GPU launch each.
            let kind = match backend {
                BackendKind::Reference => BackendKind::Reference,
                _ => BackendKind::Cpu,
            };
            let base = Box::new(move |universe| lifegen_runtime::create(kind, &rule, universe));
            let mut engine = match tree_file.as_ref().and_then(|p| p.macrocell()) {
                Some(tree) => HashLife::from_macrocell(rule, tree, base)?,
                None => HashLife::new(rule, &cells, position, base)?,
            };
            let budget = match &args.host_memory {
                Some(text) => crate::run_file::parse_bytes(text)
                    .with_context(|| format!("--host-memory {text:?}"))?,
                None => lifegen_runtime::memory::headroom().map_or(4 << 30, |(bytes, _)| bytes / 2),
            };
            engine.set_memory_budget(budget);
            Box::new(engine)
        }
        PlaneAlgo::Dense => {
            if args.tile.is_some() {
                bail!("--tile sizes the tiles of --algo tiles; --algo dense runs one box");
            }
            Box::new(PlaneSimulator::new(rule, cells, position, make)?)
        }
    };
    let start = pattern_generation;
    if start.checked_add(args.gens).is_none() {
        bail!(
            "the pattern is at generation {start} (its file says so) and --gens {} would pass \
             2^64 - 1, the most generations lifegen counts",
            args.gens
        );
    }
    plane.start_at(start);
    println!("rule: {rule}");
    println!(
        "universe: Golly's unbounded plane (the rule names no bounded grid and no --size was \
         given), {origin}: {width}x{height} at ({}, {})",
        position.0, position.1
    );
    println!("backend: {}", plane.describe());
    let elapsed = advance_with_progress(plane.as_mut(), args.gens, None)?;
    let now = if start > 0 {
        format!(
            " (generation {} now: the file's pattern was at {start})",
            start + args.gens
        )
    } else {
        String::new()
    };
    println!(
        "generations: {} in {:.3} s{now}",
        args.gens,
        elapsed.as_secs_f64()
    );
    let population = plane.population()?;
    println!("population: {population}");
    match plane.live_box()? {
        Some((x, y, width, height)) => println!(
            "live cells: {width}x{height} at ({x}, {y}); {}",
            plane.report()
        ),
        None => println!("live cells: none"),
    }
    // A macrocell file from the engine itself (HashLife writes its tree, never the cells).
    let mut mc_out = rle_out.take_if(|out| is_macrocell(out.path()));
    if let Some(out) = &mut mc_out {
        plane
            .write_macrocell(&rule, out.sink())
            .with_context(|| format!("cannot write {}", out.path().display()))?;
        out.finish()?;
    }
    // The cells themselves only for an output that needs them: a tree's box can be far larger
    // than memory.
    if rle_out.is_some() || png_out.is_some() {
        let live = plane.live_cells()?;
        let empty = Universe::new(1, 1)?.with_states(rule.states())?;
        let (cells, at) = match &live {
            Some((cells, at)) => (cells, *at),
            None => (&empty, (0, 0)),
        };
        if let Some(out) = &mut rle_out {
            rle::write_plane_to(cells, &rule, at, plane.generation(), out.sink())
                .with_context(|| format!("cannot write {}", out.path().display()))?;
            out.finish()?;
        }
        if let Some(out) = &mut png_out {
            lifegen_runtime::formats::png::check_size(cells.width(), cells.height())
                .with_context(|| format!("cannot write {}", out.path().display()))?;
            lifegen_runtime::formats::png::write(cells, out.sink())
                .with_context(|| format!("cannot write {}", out.path().display()))?;
            out.finish()?;
        }
    }
    for out in [mc_out, rle_out, png_out].into_iter().flatten() {
        out.commit()?;
    }
    Ok(())
}

/// Whether the run named a backend other than auto.
fn backend_given(args: &RunArgs) -> bool {
    args.backend != BackendKind::Auto
}

/// What `--algo auto` runs: HashLife for the rules it runs (two states, a range of one cell),
/// unless a backend or a tile size was named (HashLife's base nodes run on the CPU); active
/// tiles otherwise.
/// Measured on one thread against the tiles (BENCHMARKS.md, the unbounded plane): acorn to 5206
/// 0.12 s against 0.55 s, iwona to 28786 0.66 s against 9.8 s; a 512^2 soup to 3000 1.5 s against
/// 1.4 s.
fn chosen_algo(asked: PlaneAlgo, rule: &lifegen_gen::Rule, tiles_hinted: bool) -> PlaneAlgo {
    let hashlife_runs_it = rule.states() == 2 && lifegen_runtime::drive::bands::radius(rule) == 1;
    match asked {
        PlaneAlgo::Auto if hashlife_runs_it && !tiles_hinted => PlaneAlgo::Hashlife,
        PlaneAlgo::Auto => PlaneAlgo::Tiles,
        other => other,
    }
}
