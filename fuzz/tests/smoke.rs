//! The short fuzz run CI makes: every committed corpus input, then 20000 executions per target
//! (a few seconds). A panic or a broken property fails the test, the input written to
//! fuzz/crashes/ and shown.

use std::path::Path;

use lifegen_fuzz::driver::{self, Config};
use lifegen_fuzz::{Target, targets};

/// `min_accepted`: how many mutants must get past the parser (a universe file's length must
/// match its header and trailer, so most byte insertions are refused at once).
fn smoke(
    name: &str,
    target: Target,
    dictionary: &[&'static str],
    max_len: usize,
    min_accepted: u64,
) {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = driver::load_corpus(&here.join("corpus").join(name)).unwrap();
    assert!(
        corpus.len() >= 10,
        "{name}: only {} corpus inputs",
        corpus.len()
    );
    let config = Config {
        seed: 20261123,
        iterations: Some(20_000),
        seconds: None,
        max_len,
        dictionary: dictionary.to_vec(),
    };
    let report = driver::run(target, &corpus, &config);
    eprintln!(
        "{name}: {} executions, {} accepted, {:.3e}/s",
        report.executions,
        report.accepted,
        report.per_second()
    );
    if let Some(failure) = report.failure {
        let saved = driver::save_failure(&here.join("crashes"), name, &failure);
        panic!(
            "{name}: {}\ninput {:?}\nsaved: {saved:?}",
            failure.message,
            String::from_utf8_lossy(&failure.input)
        );
    }
    assert_eq!(report.executions, 20_000);
    // The mutants get past the parser often enough to test what lies beyond it.
    assert!(
        report.accepted > min_accepted,
        "{name}: {} accepted",
        report.accepted
    );
}

#[test]
fn rle_smoke() {
    smoke("rle", targets::rle, targets::RLE_DICTIONARY, 4096, 500);
}

#[test]
fn rule_smoke() {
    smoke("rule", targets::rule, targets::RULE_DICTIONARY, 4096, 500);
}

#[test]
fn universe_smoke() {
    smoke(
        "universe",
        targets::universe,
        targets::UNIVERSE_DICTIONARY,
        16384,
        200,
    );
}

#[test]
fn numpy_smoke() {
    smoke(
        "numpy",
        targets::numpy,
        targets::NUMPY_DICTIONARY,
        4096,
        200,
    );
}

#[test]
fn cell_lines_smoke() {
    smoke(
        "cells",
        targets::cell_lines,
        targets::CELL_LINES_DICTIONARY,
        4096,
        500,
    );
}
