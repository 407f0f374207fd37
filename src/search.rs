//! `lifegen search`: the smallest network for a rule's cell update in a kernel shape, with proof.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use lifegen_gen::cache::SearchRecord;
use lifegen_gen::sat::SolverKind;
use lifegen_gen::shapes::Shape;
use lifegen_gen::synth::search::{self as synth, SearchOptions, SizeAnswer};
use lifegen_gen::{Basis, LifeLike, Network, Rule, rule};

/// The largest `--timeout` accepted, in seconds.
const MAX_TIMEOUT_SECS: f64 = 1e7;

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// A life-like rule: B3/S23, b3s23, 23/3.
    #[arg(long, default_value = "B3/S23")]
    rule: String,
    /// monolithic (9 inputs), blog (6 adder LUTs fixed), or row-shared (7 inputs).
    #[arg(long, default_value = "monolithic")]
    shape: String,
    /// lut3 (any 3-input function per op) or gate2 (any 2-input function per op).
    #[arg(long, default_value = "lut3")]
    basis: String,
    /// Smallest size to try; optimality is proven only when the search starts at 1.
    #[arg(long, default_value_t = 1)]
    min: usize,
    /// Largest size to try.
    #[arg(long, default_value_t = 40)]
    max: usize,
    /// The SAT solver: varisat, or cadical in a build with `--features cadical`.
    #[arg(long, default_value = "varisat")]
    solver: String,
    /// Wall-clock budget in seconds for the whole search.
    #[arg(long, default_value_t = 600.0, allow_negative_numbers = true)]
    timeout: f64,
    /// Keep the result in kernels_out/networks/ (unless the record there is as good or better).
    #[arg(long)]
    save: bool,
    /// The repository root that holds kernels_out/ (default: the current directory or the nearest
    /// one above it with Cargo.toml and kernels_out/networks/). Needed by --save; without it the
    /// search starts from the lowered network instead of a stored one.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

pub fn search(args: SearchArgs) -> Result<()> {
    let rule = match rule::parse(&args.rule)?.rule {
        Rule::LifeLike(life) => life,
        Rule::LargerThanLife(_) => bail!(
            "search takes life-like rules; {} is Larger-than-Life",
            args.rule
        ),
    };
    // --save writes into the repository, so it must be found; a plain search only reads the
    // stored records when they are there.
    let root = if args.save {
        Some(crate::regen::find_root(args.root.clone())?)
    } else {
        crate::regen::find_root(args.root.clone()).ok()
    };
    let shape = Shape::from_name(&args.shape).with_context(|| {
        format!(
            "unknown shape {:?}; use monolithic, blog or row-shared",
            args.shape
        )
    })?;
    let basis = match args.basis.as_str() {
        "lut3" => Basis::Lut3,
        "gate2" => Basis::Gate2,
        other => bail!("unknown basis {other:?}; use lut3 or gate2"),
    };
    // Finite and positive (this also rejects NaN), and small enough that
    // `Duration::from_secs_f64` cannot overflow: 1e7 seconds is about 116 days.
    if !(args.timeout > 0.0 && args.timeout <= MAX_TIMEOUT_SECS) {
        bail!(
            "--timeout must be a positive number of seconds, at most {MAX_TIMEOUT_SECS:e}; got {}",
            args.timeout
        );
    }
    if args.min > args.max {
        bail!("--min {} is above --max {}", args.min, args.max);
    }
    let solver = SolverKind::from_name(&args.solver).map_err(anyhow::Error::msg)?;
    let spec = shape.spec(&rule);
    println!(
        "rule {rule}, shape {}, basis {}: {} inputs, sizes {}..={}",
        shape.name(),
        basis.name(),
        spec.num_inputs(),
        args.min,
        args.max
    );
    let budget = Duration::from_secs_f64(args.timeout);
    let options = SearchOptions {
        basis,
        solver,
        min: args.min,
        max: args.max,
        budget,
        known: Some(upper_bound(&rule, shape, basis, root.as_deref())),
    };
    let started = Instant::now();
    let result = synth::search(&spec, &options, |attempt| {
        let answer = match attempt.answer {
            SizeAnswer::Sat(_) => "SAT",
            SizeAnswer::Unsat => "UNSAT",
            SizeAnswer::Timeout => "timeout",
        };
        println!(
            "size {:>2}: {answer:<7} {:.2} s",
            attempt.gates,
            attempt.time.as_secs_f64()
        );
    })?;
    match &result.best {
        Some(network) => {
            println!("{network}");
            let n = network.gates().len();
            let fixed = shape.fixed_ops_per_word(basis);
            if fixed > 0 {
                println!("per word: {fixed} fixed + {n} searched = {} ops", fixed + n);
            }
            let proof = if result.proven_optimal {
                "proven optimal"
            } else {
                "not proven optimal"
            };
            if args.save {
                let record = SearchRecord {
                    rule,
                    shape,
                    basis,
                    network: network.clone(),
                    proven_optimal: result.proven_optimal,
                    refuted: {
                        let mut sizes: Vec<usize> = result
                            .attempts
                            .iter()
                            .filter(|a| a.answer == SizeAnswer::Unsat)
                            .map(|a| a.gates)
                            .collect();
                        sizes.sort_unstable();
                        sizes
                    },
                    solver: solver.name().to_string(),
                    seconds: started.elapsed().as_secs_f64(),
                };
                save(
                    root.as_deref().expect("--save found the repository"),
                    &record,
                )?;
            }
            println!("result: {n} gates, {proof}");
        }
        None => println!("result: none within budget"),
    }
    Ok(())
}

/// Writes `record` unless the stored one is as good or better.
fn save(root: &std::path::Path, record: &SearchRecord) -> Result<()> {
    let path = SearchRecord::path(root, &record.rule, record.shape, record.basis);
    if let Ok(text) = std::fs::read_to_string(&path) {
        let old = SearchRecord::parse(&path.display().to_string(), &text)?;
        if !record.improves_on(&old) {
            println!(
                "kept {}: it holds {} gates, {}",
                path.display(),
                old.gates(),
                if old.proven_optimal {
                    "proven optimal"
                } else {
                    "not proven optimal"
                }
            );
            return Ok(());
        }
    }
    let dir = path.parent().expect("records live in a rule folder");
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::write(&path, record.render())
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("saved {}", path.display());
    Ok(())
}

/// The smallest verified network known without searching: the lowered one, or for the
/// row-shared shape in LUT3 a full adder composed with the stored blog-shape network.
fn upper_bound(
    rule: &LifeLike,
    shape: Shape,
    basis: Basis,
    root: Option<&std::path::Path>,
) -> Network {
    let lowered = shape.lowered(rule, basis);
    let Some(root) = root.filter(|_| shape == Shape::RowShared && basis == Basis::Lut3) else {
        return lowered;
    };
    let blog = SearchRecord::path(root, rule, Shape::Blog, Basis::Lut3);
    std::fs::read_to_string(&blog)
        .ok()
        .and_then(|text| SearchRecord::parse(&blog.display().to_string(), &text).ok())
        .map(|record| lifegen_gen::kernel::row_shared::compose_from_blog(&record.network))
        .filter(|composed| composed.gates().len() < lowered.gates().len())
        .filter(|composed| lifegen_gen::verify(composed, &shape.spec(rule)).is_ok())
        .unwrap_or(lowered)
}
