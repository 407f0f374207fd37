//! `lifegen run` on Golly's unbounded plane: a pattern file whose rule names no bounded grid,
//! run without `--size`, as Golly runs it (`lifegen_runtime::drive::plane`).

use anyhow::{Context, Result, bail};
use lifegen_gen::rule::RuleSpec;
use lifegen_runtime::drive::plane::PlaneEngine;
use lifegen_runtime::formats::animation::{self, PlaneFrames};
use lifegen_runtime::formats::pattern::{Pattern, is_macrocell, is_universe_file};
use lifegen_runtime::plane_engines::{PlaneAlgo, PlaneRequest};
use lifegen_runtime::{BackendError, Universe};

use crate::output::Pending;
use crate::run::{RunArgs, advance_with_progress};

/// Whether a run of `pattern` under `rule` goes on the unbounded plane: a pattern file (not a
/// universe file or array) whose rule has no bounded-grid suffix (or one bounded along one side
/// only, `:T0,<h>`), no `--size`, and no universe file to run into.
pub fn wanted(args: &RunArgs, pattern: Option<&Pattern>, rule: &RuleSpec) -> bool {
    let unbounded = rule.strip().is_some()
        || (rule.size.is_none() && rule.topology == lifegen_gen::Topology::Torus);
    pattern.is_some_and(|p| !is_universe_file(p.path()))
        && args.size.is_none()
        && unbounded
        && !args.output.as_deref().is_some_and(is_universe_file)
}

/// The workers a run of `pattern` on the plane wants before its engine is made: one where it
/// goes to HashLife alone, whose steps run on one thread (a pool of more only waits beside
/// them); auto's engine keeps them for the tiles it may move the pattern to.
pub fn threads(args: &RunArgs, pattern: &Pattern, spec: &RuleSpec) -> Result<Option<usize>> {
    let (algo, _) = request(args, spec)?.choice(&spec.rule, pattern.macrocell().is_some());
    Ok((algo == PlaneAlgo::Hashlife).then_some(1))
}

fn request(args: &RunArgs, spec: &RuleSpec) -> Result<PlaneRequest> {
    Ok(PlaneRequest {
        algo: args.algo,
        backend: args.backend,
        tile: args.tile,
        host_memory: args
            .host_memory
            .as_deref()
            .map(|text| {
                crate::run_file::parse_bytes(text)
                    .with_context(|| format!("--host-memory {text:?}"))
            })
            .transpose()?,
        strip: spec.strip(),
    })
}

pub fn run(args: &RunArgs, pattern: Pattern, spec: RuleSpec) -> Result<()> {
    let rule = spec.rule;
    let strip = spec.strip();
    args.check_output_paths()?;
    // The GIF's frames are kept until the run ends: its picture is the box that holds them all.
    let mut frames = match &args.gif {
        Some(path) => {
            if args.every == 0 {
                bail!("--every must be at least 1");
            }
            let count = animation::frame_count(args.gens, args.every);
            animation::check(1, 1, args.scale, count)
                .with_context(|| format!("cannot write {}", path.display()))?;
            Some(PlaneFrames::new(args.scale)?)
        }
        None => None,
    };
    let mut rle_out = args.output.as_deref().map(Pending::create).transpose()?;
    let mut png_out = args.png.as_deref().map(Pending::create).transpose()?;
    let mut gif_out = args.gif.as_deref().map(Pending::create).transpose()?;

    let (width, height) = pattern.size();
    let position = match strip {
        Some(strip) => pattern.strip_position(strip)?,
        None => pattern.plane_position()?,
    };
    let origin = pattern.origin();
    let start = pattern.generation();
    if start.checked_add(args.gens).is_none() {
        bail!(
            "the pattern is at generation {start} (its file says so) and --gens {} would pass \
             2^64 - 1, the most generations lifegen counts",
            args.gens
        );
    }
    let request = request(args, &spec)?;
    let why = request.choice(&rule, pattern.macrocell().is_some()).1;
    let mut plane = request.open_pattern(pattern, rule)?;
    println!("rule: {spec}");
    let universe = match strip {
        None => "Golly's unbounded plane (the rule names no bounded grid and no --size was given)"
            .to_string(),
        Some(strip) => format!(
            "Golly's grid {} ({} {} to {}{}, unbounded {})",
            strip.suffix(),
            if strip.rows { "rows" } else { "columns" },
            strip.first(),
            strip.first() + strip.cells as i64 - 1,
            if strip.joined {
                " joined"
            } else {
                ", dead past them"
            },
            if strip.rows {
                "left and right"
            } else {
                "above and below"
            }
        ),
    };
    println!(
        "universe: {universe}, {origin}: {width}x{height} at ({}, {})",
        position.0, position.1
    );
    println!("engine: {why}");
    println!("backend: {}", plane.describe());
    let started = std::time::Instant::now();
    let mut status = |plane: &mut (dyn PlaneEngine + 'static)| {
        let population = plane
            .population()
            .map_or_else(|_| "?".to_string(), |n| n.to_string());
        format!("population {population}; {}", plane.report())
    };
    let advanced = match &mut frames {
        None => advance_with_progress(plane.as_mut(), args.gens, None, Some(&mut status)),
        Some(frames) => {
            let path = args.gif.as_deref().expect("frames are kept for --gif only");
            let mut frame = |plane: &mut (dyn PlaneEngine + 'static)| -> Result<()> {
                frames
                    .record(plane.live_cells()?)
                    .with_context(|| format!("cannot write {}", path.display()))
            };
            frame(plane.as_mut())?;
            advance_with_progress(
                plane.as_mut(),
                args.gens,
                Some((args.every, &mut frame)),
                Some(&mut status),
            )
        }
    };
    // A pattern that outgrew its memory stops whole at the generation it reached, which the
    // outputs then hold.
    let (elapsed, stopped) = match advanced {
        Ok(elapsed) => (elapsed, None),
        Err(error) => match error.downcast_ref::<BackendError>() {
            Some(BackendError::OutOfRoom(reason)) => (started.elapsed(), Some(reason.clone())),
            _ => return Err(error),
        },
    };
    let done = plane.generation() - start;
    let now = if start > 0 {
        format!(
            " (generation {} now: the file's pattern was at {start})",
            start + done
        )
    } else {
        String::new()
    };
    match &stopped {
        None => println!(
            "generations: {} in {:.3} s{now}",
            args.gens,
            elapsed.as_secs_f64()
        ),
        Some(_) => println!(
            "generations: {done} of {} in {:.3} s (stopped: out of memory){now}",
            args.gens,
            elapsed.as_secs_f64()
        ),
    }
    let population = plane.population()?;
    println!("population: {population}");
    if let Some(updates) = plane.cell_updates().filter(|_| !elapsed.is_zero()) {
        println!(
            "cell updates/s: {:.3e} (every cell it stepped, a generation each)",
            updates as f64 / elapsed.as_secs_f64()
        );
    }
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
            .write_macrocell(&spec, out.sink())
            .with_context(|| format!("cannot write {}", out.path().display()))?;
        out.finish()?;
    }
    // RLE from the engine too (HashLife walks its tree: a box far larger than memory writes).
    if let Some(out) = &mut rle_out {
        plane
            .write_rle(&spec, out.sink())
            .with_context(|| format!("cannot write {}", out.path().display()))?;
        out.finish()?;
    }
    // The cells themselves only for an output that needs them.
    if png_out.is_some() {
        let live = plane.live_cells()?;
        let empty = Universe::new(1, 1)?.with_states(rule.states())?;
        let cells = live.as_ref().map_or(&empty, |(cells, _)| cells);
        if let Some(out) = &mut png_out {
            lifegen_runtime::formats::png::check_size(cells.width(), cells.height())
                .with_context(|| format!("cannot write {}", out.path().display()))?;
            lifegen_runtime::formats::png::write(cells, out.sink())
                .with_context(|| format!("cannot write {}", out.path().display()))?;
            out.finish()?;
        }
    }
    if let (Some(out), Some(frames)) = (&mut gif_out, frames) {
        let ((x, y), (width, height)) = frames.picture();
        let count = frames.len();
        let path = out.path().to_path_buf();
        frames
            .write(out.sink(), rule.states())
            .with_context(|| format!("cannot write {}", path.display()))?;
        out.finish()?;
        println!("gif: {count} frames of the {width}x{height} cells from ({x}, {y})");
    }
    for out in [mc_out, rle_out, png_out, gif_out].into_iter().flatten() {
        out.commit()?;
    }
    if let Some(reason) = stopped {
        bail!(
            "stopped at generation {} of {}: {reason}; the outputs hold generation {}",
            plane.generation(),
            start + args.gens,
            plane.generation()
        );
    }
    Ok(())
}
