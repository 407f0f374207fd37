//! `lifegen run --output FILE.npy`: what a run into a universe file prints. The run and its
//! decisions (resuming, the memory budgets, checkpoints, bands) are the runtime's
//! (runtime/src/drive/file_run.rs).

use std::io::IsTerminal;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lifegen_runtime::drive::file_run::{self, FileRun, Outcome};
use lifegen_runtime::drive::out_of_core::{Progress, Simulators};

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

/// The progress bar, and whether this process speaks (among ranks, only the first does).
struct Bar(ProgressBar, bool);

impl Progress for Bar {
    fn start(&mut self, generations: u64) {
        self.0.set_length(generations);
        if self.1 && std::io::stderr().is_terminal() {
            self.0.set_draw_target(ProgressDrawTarget::stderr());
        }
    }
    fn update(&mut self, generations: f64) {
        self.0.set_position(generations as u64);
    }
    fn note(&mut self, line: &str) {
        if self.1 {
            self.0.suspend(|| println!("{line}"));
        }
    }
}

/// Runs `run` and prints what it did; among ranks, only the `leader` prints.
pub fn run(
    run: FileRun,
    simulators: Simulators,
    (width, height): (u64, u64),
    (origin, leader): (&str, bool),
) -> Result<()> {
    macro_rules! say {
        ($($text:tt)*) => {
            if leader {
                println!($($text)*);
            }
        };
    }
    let (rule, output, target) = (run.rule, run.output.clone(), run.target_generation);
    let topology = run.topology;
    say!("rule: {rule}{}", topology.suffix(Some((width, height))));
    say!("universe: {width}x{height} {}, {origin}", topology.name());
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} generations, {elapsed} (eta {eta})")
            .expect("the template is valid"),
    );
    let mut progress = Bar(bar.clone(), leader);
    let outcome = file_run::run(run, simulators, &mut progress)
        .with_context(|| format!("cannot run into {}", output.display()))?;
    let (gens, report) = match outcome {
        Outcome::AlreadyDone { population } => {
            say!(
                "{} already holds generation {target} of this run; nothing to do",
                output.display()
            );
            say!("population: {population}");
            return Ok(());
        }
        Outcome::Ran { gens, report } => (gens, report),
    };
    bar.finish_and_clear();
    let times = &report.times;
    say!("backend: {}", report.backend);
    say!("layout: {}, {} file writes", report.layout, report.passes);
    say!(
        "generations: {gens} in {:.3} s (to generation {target})",
        times.wall
    );
    say!("population: {}", report.population);
    let rate = if times.wall > 0.0 {
        (width * height) as f64 * gens as f64 / times.wall
    } else {
        0.0
    };
    say!("cell updates/s: {rate:.3e}");
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
    say!(
        "time: reading {:.3} s, writing {:.3} s, simulating {:.3} s{kernel}{overlap}",
        times.read,
        times.write,
        times.simulate
    );
    if let Some(traffic) = report.traffic {
        let stream = |what: &str, bytes: u64, seconds: f64| {
            let rate = if seconds > 0.0 {
                bytes as f64 / seconds / 1e9
            } else {
                0.0
            };
            format!(
                "{what} {:.2} GB at {rate:.2} GB/s ({seconds:.1} s)",
                bytes as f64 / 1e9
            )
        };
        let mut streams = vec![
            stream("reading", traffic.read, times.read),
            stream("writing", traffic.written, times.write),
        ];
        if traffic.copied > 0 {
            streams.push(stream(
                "copies to and from the GPU",
                traffic.copied,
                times.copies,
            ));
        }
        let bound = traffic.bound(times);
        let best = if bound > 0.0 {
            (width * height) as f64 * gens as f64 / bound
        } else {
            0.0
        };
        say!(
            "bound: {}; overlapped, at these rates, at best {bound:.1} s ({best:.3e} cell \
             updates/s); this run took {:.2}x that",
            streams.join(", "),
            if bound > 0.0 { times.wall / bound } else { 0.0 },
        );
    }
    Ok(())
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
