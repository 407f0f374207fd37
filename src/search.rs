//! `lifegen search`: the smallest network for a rule's cell update in a kernel shape, with proof.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use lifegen_gen::cache::SearchRecord;
use lifegen_gen::synth::request;

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
    let rule = request::life_like(&args.rule)?;
    // --save writes into the repository, so it must be found; a plain search only reads the
    // stored records when they are there.
    let root = if args.save {
        Some(crate::regen::find_root(args.root.clone())?)
    } else {
        crate::regen::find_root(args.root.clone()).ok()
    };
    let settings = request::SearchArgs {
        shape: &args.shape,
        basis: &args.basis,
        min: args.min,
        max: args.max,
        solver: &args.solver,
        timeout: args.timeout,
    };
    let prepared = request::prepare(rule, &settings, root.as_deref())?;
    println!("{}", prepared.header());
    let outcome = prepared.run(|attempt| {
        println!(
            "size {:>2}: {:<7} {:.2} s",
            attempt.gates,
            attempt.answer.label(),
            attempt.time.as_secs_f64()
        );
    })?;
    match (&outcome.result.best, prepared.record(&outcome)) {
        (Some(network), Some(record)) => {
            println!("{network}");
            let n = network.gates().len();
            let fixed = prepared.fixed_ops_per_word();
            if fixed > 0 {
                println!("per word: {fixed} fixed + {n} searched = {} ops", fixed + n);
            }
            let proof = if outcome.result.proven_optimal {
                "proven optimal"
            } else {
                "not proven optimal"
            };
            if args.save {
                save(
                    root.as_deref().expect("--save found the repository"),
                    &record,
                )?;
            }
            println!("result: {n} gates, {proof}");
        }
        _ => println!("result: none within budget"),
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
