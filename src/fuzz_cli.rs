//! The command-line fuzz target (issue: fuzzing on stable). It lives here, in the binary's own
//! tests, because the clap definitions are the binary's; the driver and mutator are the
//! `lifegen-fuzz` crate's. An input is an argument vector, one argument a line (not necessarily
//! UTF-8), after `lifegen`. Properties: parsing with the real definitions never panics; an error
//! renders; an accepted command line builds the typed `Cli` too; and the checks each command makes
//! of its arguments before it starts work (the rule, the size, the universe's memory, the search
//! shape and solver) never panic. Nothing is run, opened or written.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use clap::{ArgMatches, CommandFactory, FromArgMatches};
use lifegen_fuzz::Outcome;
use lifegen_fuzz::driver::{self, Config};
use lifegen_gen::rule;
use lifegen_runtime::BackendKind;

use crate::Cli;

const DICTIONARY: &[&str] = &[
    "run",
    "count",
    "search",
    "bench",
    "regen",
    "--rule",
    "--size",
    "--gens",
    "--threads",
    "--backend",
    "--density",
    "--seed",
    "--input",
    "--output",
    "--png",
    "--plan",
    "--ceilings",
    "--runs",
    "--shape",
    "--basis",
    "--min",
    "--max",
    "--solver",
    "--timeout",
    "--save",
    "--root",
    "--json",
    "--markdown",
    "--sass",
    "--check",
    "--help",
    "-h",
    "--version",
    "-V",
    "auto",
    "cpu",
    "gpu",
    "reference",
    "k2-t10-funnel",
    "k1-t12",
    "4096x4096",
    "64x64",
    "x",
    "=",
    "--",
    "-",
    "\n",
    "B3/S23",
    "R5,C0,M1,S34..58,B34..45,NM",
    ":T100,100",
    "NaN",
    "inf",
    "-inf",
    "1e400",
    "0.5",
];

/// A raw value of `id` as text, when the command has that argument and it has a value.
fn text(matches: &ArgMatches, id: &str) -> Option<String> {
    let mut raw = matches.try_get_raw(id).ok()??;
    raw.next().map(|v| v.to_string_lossy().into_owned())
}

pub fn cli(data: &[u8]) -> Result<Outcome, String> {
    let args = std::iter::once(OsString::from("lifegen")).chain(
        data.split(|&b| b == b'\n')
            .map(|a| OsString::from_vec(a.to_vec())),
    );
    let matches = match Cli::command().try_get_matches_from(args) {
        Ok(matches) => matches,
        Err(e) => {
            let _ = e.render().to_string();
            return Ok(Outcome::Rejected);
        }
    };
    Cli::from_arg_matches(&matches)
        .map_err(|e| format!("clap accepted the line, the typed Cli did not: {e}"))?;
    let Some((name, sub)) = matches.subcommand() else {
        return Err("no subcommand accepted".into());
    };
    // The checks each command makes before it starts: errors are expected, panics are not.
    match name {
        "run" | "bench" => {
            let rule_text = text(sub, "rule");
            let spec = match &rule_text {
                Some(t) => match rule::parse(t) {
                    Ok(spec) => spec,
                    Err(_) => return Ok(Outcome::Accepted),
                },
                None => rule::parse("B3/S23").expect("B3/S23 reads"),
            };
            let backend: BackendKind = text(sub, "backend")
                .ok_or("no backend")?
                .parse()
                .map_err(|e| format!("the backend clap accepted does not read: {e}"))?;
            let side = if name == "run" { 4096 } else { 16384 };
            let given = rule_text.is_some() || name == "bench";
            if let Ok((w, h)) =
                crate::run::universe_size(text(sub, "size").as_deref(), &spec, given, (side, side))
            {
                let _ = crate::run::check_before_start(w, h, backend, &spec.rule);
            }
        }
        "count" | "search" => {
            if let Some(t) = text(sub, "rule") {
                let _ = rule::parse(&t);
            }
            if let Some(shape) = text(sub, "shape") {
                let _ = lifegen_gen::shapes::Shape::from_name(&shape);
            }
            if let Some(solver) = text(sub, "solver") {
                let _ = lifegen_gen::sat::SolverKind::from_name(&solver);
            }
        }
        _ => {}
    }
    Ok(Outcome::Accepted)
}

fn fuzz(iterations: Option<u64>, seconds: Option<f64>, seed: u64) -> driver::Report {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = driver::load_corpus(&here.join("fuzz/corpus/cli")).expect("the cli corpus");
    assert!(
        corpus.len() >= 10,
        "only {} cli corpus inputs",
        corpus.len()
    );
    let config = Config {
        seed,
        iterations,
        seconds,
        max_len: 512,
        dictionary: DICTIONARY.to_vec(),
    };
    let report = driver::run(cli, &corpus, &config);
    eprintln!(
        "cli: {} executions ({} accepted) in {:.2} s: {:.3e} executions/s, seed {seed}",
        report.executions,
        report.accepted,
        report.elapsed.as_secs_f64(),
        report.per_second()
    );
    if let Some(failure) = &report.failure {
        let saved = driver::save_failure(&here.join("fuzz/crashes"), "cli", failure);
        panic!(
            "cli: {}\ninput {:?}\nsaved: {saved:?}",
            failure.message,
            String::from_utf8_lossy(&failure.input)
        );
    }
    report
}

/// The short run `cargo test` makes.
#[test]
fn fuzz_cli_smoke() {
    let report = fuzz(Some(20_000), None, 20261123);
    assert_eq!(report.executions, 20_000);
    assert!(report.accepted > 500, "{} accepted", report.accepted);
}

/// The long run: `LIFEGEN_FUZZ_ITERATIONS=N` (or `LIFEGEN_FUZZ_SECONDS=S`) and
/// `LIFEGEN_FUZZ_SEED`, `cargo test --profile fuzz --bin lifegen fuzz_cli_long -- --ignored`.
#[test]
#[ignore]
fn fuzz_cli_long() {
    let var = |name: &str| std::env::var(name).ok();
    let iterations = var("LIFEGEN_FUZZ_ITERATIONS").map(|v| v.parse().expect("a count"));
    let seconds = var("LIFEGEN_FUZZ_SECONDS").map(|v| v.parse().expect("seconds"));
    let seed = var("LIFEGEN_FUZZ_SEED").map_or(1, |v| v.parse().expect("a seed"));
    fuzz(
        iterations.or(seconds.is_none().then_some(1_000_000)),
        seconds,
        seed,
    );
}
