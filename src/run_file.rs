//! `lifegen run --output FILE.npy`: a run into a universe file, with checkpoints, resuming, and
//! universes larger than memory in bands (runtime/src/out_of_core.rs).

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lifegen_gen::Rule;
use lifegen_runtime::Universe;
use lifegen_runtime::drive::out_of_core::{self, Budget, Job, Progress, Source};
use lifegen_runtime::formats::universe_file::{RunRecord, UniverseFile};
use lifegen_runtime::memory::{self, human_bytes};

use lifegen_runtime::formats::pattern::Pattern;

use crate::run::RunArgs;

/// Parses a byte count: `4096`, `512MiB`, `8GiB`, `1.5G`, `2TB` (K, M, G, T are powers of 1024
/// with or without `iB`; `KB`, `MB`, `GB`, `TB` powers of 1000).
pub fn parse_bytes(text: &str) -> Result<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: f64 = number
        .parse()
        .with_context(|| format!("bad size {text:?}: expected a number of bytes, like 8GiB"))?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024f64.powi(2),
        "g" | "gib" => 1024f64.powi(3),
        "t" | "tib" => 1024f64.powi(4),
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        _ => {
            bail!("bad size {text:?}: the unit is not one of B, KiB, MiB, GiB, TiB, KB, MB, GB, TB")
        }
    };
    let bytes = number * scale;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        bail!("bad size {text:?}: too large");
    }
    Ok(bytes as u64)
}

/// What identifies a run's start, so that the same command finds its own checkpoint: a soup's
/// parameters, or the input's size and cells.
fn source_identity(source: &Source, start_generation: u64) -> String {
    match source {
        Source::Soup {
            width,
            height,
            density,
            seed,
        } => format!("soup {width}x{height} density {density} seed {seed}"),
        Source::File(file) => {
            let checksums: Vec<u8> = file
                .metadata()
                .checksums
                .blocks
                .iter()
                .flat_map(|c| c.to_le_bytes())
                .collect();
            format!(
                "universe file {}x{} at generation {start_generation}, block checksums' crc32 {:08x}",
                file.width(),
                file.height(),
                crc32fast::hash(&checksums)
            )
        }
        Source::Memory(universe) => {
            let bytes: Vec<u8> = universe
                .words()
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect();
            format!(
                "pattern {}x{}, cells' crc32 {:08x}",
                universe.width(),
                universe.height(),
                crc32fast::hash(&bytes)
            )
        }
    }
}

struct Bar(ProgressBar);

impl Progress for Bar {
    fn update(&mut self, generations: f64) {
        self.0.set_position(generations as u64);
    }
    fn note(&mut self, line: &str) {
        self.0.suspend(|| println!("{line}"));
    }
}

pub fn run(
    args: RunArgs,
    pattern: Option<Pattern>,
    rule: Rule,
    (width, height): (u64, u64),
) -> Result<()> {
    let output = args.output.clone().expect("called for a .npy output");
    for (flag, given) in [("--png", args.png.is_some()), ("--gif", args.gif.is_some())] {
        if given {
            bail!(
                "{flag} cannot go with a universe-file --output; write it from the file afterwards \
                 (lifegen run --input {} --gens 0 {flag} ...)",
                output.display()
            );
        }
    }
    if let Some(input) = &args.input
        && same_file(input, &output)
    {
        bail!(
            "--input and --output are the same file; give another --output (the input stays as \
             the run's start, so a killed run can resume)"
        );
    }
    Universe::check_size(width, height)?;
    let (source, start_generation, origin) = match pattern {
        None => (
            Source::Soup {
                width,
                height,
                density: args.density,
                seed: args.seed,
            },
            0,
            format!("random soup, density {}, seed {}", args.density, args.seed),
        ),
        Some(pattern) => match pattern.into_universe_file() {
            Ok(file) => {
                // Its rows are checked as the run reads them.
                let generation = file.metadata().generation;
                let name = format!(
                    "universe file {} at generation {generation}",
                    file.path().display()
                );
                (Source::File(file), generation, name)
            }
            Err(pattern) => {
                let origin = format!("pattern {}", pattern.path().display());
                let mut universe = Universe::new(width, height)?;
                pattern.read_into(&mut universe)?;
                (Source::Memory(universe), 0, origin)
            }
        },
    };
    let target = start_generation
        .checked_add(args.gens)
        .context("--gens takes the generation past 2^64")?;
    let record = RunRecord {
        source: source_identity(&source, start_generation),
        rule: rule.to_string(),
        target_generation: target,
    };
    println!("rule: {rule}");
    println!("universe: {width}x{height} torus, {origin}");
    let (source, from) = match resume_point(&output, &record)? {
        Some(file) => {
            let generation = file.metadata().generation;
            if generation == target {
                println!(
                    "{} already holds generation {target} of this run; nothing to do",
                    output.display()
                );
                let universe = file.read_verified()?;
                println!("population: {}", universe.population());
                return Ok(());
            }
            println!(
                "resuming from generation {generation} in {} ({} of {} generations done)",
                output.display(),
                generation - start_generation,
                args.gens
            );
            (Source::File(file), generation)
        }
        None => (source, start_generation),
    };
    let simulators = lifegen_runtime::backend::simulators(args.backend, &rule, width, args.gpus)?;
    let budget = budget(&args, simulators.on_gpu)?;
    let gens = target - from;
    let bar = ProgressBar::with_draw_target(Some(gens), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} generations, {elapsed} (eta {eta})")
            .expect("the template is valid"),
    );
    if std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
    }
    let mut progress = Bar(bar.clone());
    let job = Job {
        source,
        start_generation: from,
        rule,
        simulators,
        gens,
        output: output.clone(),
        run: record,
        budget,
        checkpoint_every: Duration::from_secs(args.checkpoint_every.unwrap_or(600)),
        gens_per_pass: args.gens_per_pass,
    };
    let report = out_of_core::run(job, &mut progress)
        .with_context(|| format!("cannot run into {}", output.display()))?;
    bar.finish_and_clear();
    let times = &report.times;
    println!("backend: {}", report.backend);
    println!("layout: {}, {} file writes", report.layout, report.passes);
    println!(
        "generations: {gens} in {:.3} s (to generation {target})",
        times.wall
    );
    println!("population: {}", report.population);
    let rate = if times.wall > 0.0 {
        (width * height) as f64 * gens as f64 / times.wall
    } else {
        0.0
    };
    println!("cell updates/s: {rate:.3e}");
    let kernel = times.kernel.map_or(String::new(), |k| {
        format!(
            " (kernels {k:.3} s, copies to and from the device and launches {:.3} s)",
            times.simulate - k
        )
    });
    let overlap = if report.layout.contains("band") {
        "; reading and writing overlap the simulation"
    } else {
        ""
    };
    println!(
        "time: reading {:.3} s, writing {:.3} s, simulating {:.3} s{kernel}{overlap}",
        times.read, times.write, times.simulate
    );
    Ok(())
}

/// The output file, when it is a checkpoint of this very run (same start, rule and target).
/// Anything else there is replaced by the run, as other outputs are; a damaged checkpoint is
/// reported and the run starts over.
fn resume_point(output: &Path, record: &RunRecord) -> Result<Option<UniverseFile>> {
    if !output.exists() {
        return Ok(None);
    }
    let file = match UniverseFile::open(output) {
        Ok(file) => file,
        Err(why) => {
            println!("note: {why}; the run replaces it");
            return Ok(None);
        }
    };
    if file.metadata().run.as_ref() != Some(record) {
        return Ok(None);
    }
    if let Err(why) = file.verify() {
        println!("note: cannot resume: {why}; the run starts over and replaces it");
        return Ok(None);
    }
    Ok(Some(file))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The memory budgets: the flags, else 80% of the host's headroom and the GPU's free memory.
fn budget(args: &RunArgs, on_gpu: bool) -> Result<Budget> {
    let host_bytes = match &args.host_memory {
        Some(text) => parse_bytes(text).context("--host-memory")?,
        None => memory::headroom().map_or(4 << 30, |(bytes, _)| bytes / 5 * 4),
    };
    let gpu_bytes = if on_gpu {
        let free = out_of_core::gpu_free_bytes()?;
        Some(match &args.gpu_memory {
            Some(text) => {
                let asked = parse_bytes(text).context("--gpu-memory")?;
                if asked > free {
                    println!(
                        "note: --gpu-memory {text} is more than the {} free; using {}",
                        human_bytes(free),
                        human_bytes(free)
                    );
                }
                asked.min(free)
            }
            None => free,
        })
    } else {
        if args.gpu_memory.is_some() {
            bail!("--gpu-memory is for runs on the GPU; this run is on the CPU");
        }
        None
    };
    Ok(Budget {
        host_bytes,
        gpu_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts() {
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_bytes("1.5g").unwrap(), 3 << 29);
        assert_eq!(parse_bytes("2GB").unwrap(), 2_000_000_000);
        assert!(
            parse_bytes("2 parsecs")
                .unwrap_err()
                .to_string()
                .contains("unit")
        );
        assert!(parse_bytes("lots").is_err());
    }
}
