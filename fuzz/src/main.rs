//! `lifegen-fuzz <rle|rule|universe|numpy|cells> [--iterations N] [--seconds S] [--seed N] [--max-len BYTES]
//! [--corpus DIR] [--crashes DIR] [--replay FILE]`
//!
//! Replays the target's corpus (fuzz/corpus/<target>/), then fuzzes it until the budget is spent;
//! a failing input is written to the crash directory (fuzz/crashes/) and the exit status is 1.
//! The command-line target runs from the `lifegen` binary's tests:
//! `LIFEGEN_FUZZ_ITERATIONS=N cargo test --profile fuzz --bin lifegen fuzz_cli_long -- --ignored`.

use std::path::PathBuf;
use std::process::ExitCode;

use lifegen_fuzz::driver::{self, Config};
use lifegen_fuzz::{Target, targets};

fn usage() -> ExitCode {
    eprintln!(
        "usage: lifegen-fuzz <rle|rule|universe|numpy|cells> [--iterations N] [--seconds S] [--seed N] \
         [--max-len BYTES] [--corpus DIR] [--crashes DIR] [--replay FILE]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(name) = args.next() else {
        return usage();
    };
    let (target, dictionary): (Target, &[&'static str]) = match name.as_str() {
        "rle" => (targets::rle, targets::RLE_DICTIONARY),
        "rule" => (targets::rule, targets::RULE_DICTIONARY),
        "universe" => (targets::universe, targets::UNIVERSE_DICTIONARY),
        "numpy" => (targets::numpy, targets::NUMPY_DICTIONARY),
        "cells" => (targets::cell_lines, targets::CELL_LINES_DICTIONARY),
        _ => return usage(),
    };
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut config = Config {
        seed: 1,
        iterations: None,
        seconds: None,
        // A universe file's header alone is 4096 bytes.
        max_len: if name == "universe" { 16384 } else { 4096 },
        dictionary: dictionary.to_vec(),
    };
    let mut corpus_dir = here.join("corpus").join(&name);
    let mut crash_dir = here.join("crashes");
    let mut replay = None;
    while let Some(flag) = args.next() {
        let Some(value) = args.next() else {
            return usage();
        };
        let ok = match flag.as_str() {
            "--iterations" => value.parse().map(|n| config.iterations = Some(n)).is_ok(),
            "--seconds" => value
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| config.seconds = Some(s))
                .is_some(),
            "--seed" => value.parse().map(|n| config.seed = n).is_ok(),
            "--max-len" => value.parse().map(|n| config.max_len = n).is_ok(),
            "--corpus" => {
                corpus_dir = value.into();
                true
            }
            "--crashes" => {
                crash_dir = value.into();
                true
            }
            "--replay" => {
                replay = Some(PathBuf::from(value));
                true
            }
            _ => false,
        };
        if !ok {
            return usage();
        }
    }

    if let Some(path) = replay {
        let input = match std::fs::read(&path) {
            Ok(input) => input,
            Err(e) => {
                eprintln!("cannot read {}: {e}", path.display());
                return ExitCode::from(2);
            }
        };
        return match driver::execute(target, &input) {
            Ok(outcome) => {
                println!("{name}: {}: {outcome:?}", path.display());
                ExitCode::SUCCESS
            }
            Err(message) => {
                println!("{name}: {}: FAILS: {message}", path.display());
                ExitCode::FAILURE
            }
        };
    }

    let corpus = match driver::load_corpus(&corpus_dir) {
        Ok(corpus) if !corpus.is_empty() => corpus,
        Ok(_) => {
            eprintln!("the corpus {} is empty", corpus_dir.display());
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("cannot read the corpus {}: {e}", corpus_dir.display());
            return ExitCode::from(2);
        }
    };
    // One worker thread, and the targets run on it: the universe's parallel loops then run
    // inline instead of waking other threads for every input, and the fuzzer takes one core.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a thread starts");
    let report = pool.install(|| driver::run(target, &corpus, &config));
    println!(
        "{name}: {} executions ({} accepted, {} corpus inputs) in {:.2} s: {:.3e} executions/s, \
         seed {}",
        report.executions,
        report.accepted,
        corpus.len(),
        report.elapsed.as_secs_f64(),
        report.per_second(),
        config.seed
    );
    match report.failure {
        None => {
            println!("{name}: 0 crashes");
            ExitCode::SUCCESS
        }
        Some(failure) => {
            println!("{name}: FAILURE: {}", failure.message);
            match driver::save_failure(&crash_dir, &name, &failure) {
                Ok(path) => println!("{name}: input written to {}", path.display()),
                Err(e) => println!(
                    "{name}: cannot write the input: {e}; it is {:?}",
                    failure.input
                ),
            }
            ExitCode::FAILURE
        }
    }
}
