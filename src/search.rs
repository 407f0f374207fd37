//! `lifegen search`: the smallest network for a rule's cell update in a kernel shape, with proof.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use lifegen_gen::sat::SolverKind;
use lifegen_gen::shapes::Shape;
use lifegen_gen::synth::{self, SearchOptions, SizeAnswer};
use lifegen_gen::{Basis, Rule, rule};

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
    #[arg(long, default_value_t = 600.0)]
    timeout: f64,
}

pub fn search(args: SearchArgs) -> Result<()> {
    let rule = match rule::parse(&args.rule)?.rule {
        Rule::LifeLike(life) => life,
        Rule::LargerThanLife(_) => bail!(
            "search takes life-like rules; {} is Larger-than-Life",
            args.rule
        ),
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
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        bail!("--timeout must be a positive number of seconds");
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
        known: Some(shape.lowered(&rule, basis)),
    };
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
            println!("result: {n} gates, {proof}");
        }
        None => println!("result: none within budget"),
    }
    Ok(())
}
