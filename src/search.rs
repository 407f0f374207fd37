//! `lifegen search`: the smallest network for a rule's cell update in a kernel shape, with proof.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use lifegen_gen::cache::{PairRecord, SearchRecord};
use lifegen_gen::kernel::map;
use lifegen_gen::map::MapRule;
use lifegen_gen::rule::{self, Rule};
use lifegen_gen::synth::request;

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// A life-like rule (B3/S23, b3s23, 23/3), or an isotropic non-totalistic one (B2-a/S12),
    /// whose pair shape is searched (--shape, --basis, --max and --solver do not apply; --min is
    /// the smallest total of feature and finish gates tried jointly).
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
    /// A table rule's pair shape: seconds for each split of a total between the feature and
    /// the finish, after which the split is passed over.
    #[arg(long, default_value_t = 60.0)]
    size_timeout: f64,
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
    if let Rule::Map(map) = rule::parse(&args.rule)?.rule {
        return search_pair(&map, &args);
    }
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

/// The pair shape of a table rule ([`map::search_pair`]), kept in kernels_out/pairs/ with
/// --save, where every run reads it.
fn search_pair(rule: &MapRule, args: &SearchArgs) -> Result<()> {
    let root = if args.save {
        Some(crate::regen::find_root(args.root.clone())?)
    } else {
        None
    };
    println!(
        "rule {rule}: pair shape, beside {}",
        map::nearest_totalistic(rule)
    );
    let deadline =
        std::time::Instant::now() + std::time::Duration::from_secs_f64(args.timeout.max(0.0));
    let per_size = std::time::Duration::from_secs_f64(args.size_timeout.max(0.0));
    let found = map::search_pair(
        rule,
        (deadline, per_size),
        args.min,
        |feature, finish, answer, seconds| {
            let label = match answer {
                Some(true) => "sat",
                Some(false) => "unsat",
                None => "timeout",
            };
            if finish == 0 {
                println!("feature {feature}, finish table (two steps): {label:<7} {seconds:.2} s");
            } else {
                println!("feature {feature} + finish {finish}: {label:<7} {seconds:.2} s");
            }
        },
    );
    let Some(found) = found else {
        println!("result: none within budget (or not an isotropic Moore rule)");
        return Ok(());
    };
    let record = found.record;
    println!("{}\n{}", record.feature, record.finish);
    let proof = if found.smallest {
        "smallest total of its shape"
    } else {
        "smaller totals not all refuted"
    };
    println!(
        "result: {} gates ({} + {}), {proof}",
        record.gates(),
        record.feature.gates().len(),
        record.finish.gates().len()
    );
    if let Some(root) = root {
        let path = PairRecord::path(&root, rule);
        if let Ok(text) = std::fs::read_to_string(&path) {
            let old = PairRecord::parse(&path.display().to_string(), &text)?;
            if !record.improves_on(&old) {
                println!("kept {}: it holds {} gates", path.display(), old.gates());
                return Ok(());
            }
        }
        let dir = path.parent().expect("records live in a folder");
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::write(&path, record.render())
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("saved {}", path.display());
    }
    Ok(())
}
