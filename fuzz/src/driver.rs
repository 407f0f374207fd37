//! The fuzz loop: replay the corpus, then mutate from the pool until the budget is spent.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::mutate::Mutator;
use crate::{Outcome, Target};

/// How long and from what a run goes.
#[derive(Clone, Debug)]
pub struct Config {
    pub seed: u64,
    /// Stop after this many executions (the corpus replay included).
    pub iterations: Option<u64>,
    /// Stop after this long.
    pub seconds: Option<f64>,
    /// The longest input tried, in bytes.
    pub max_len: usize,
    /// Tokens of the input format for the mutator.
    pub dictionary: Vec<&'static str>,
}

/// An input that panicked or broke a property.
#[derive(Clone, Debug)]
pub struct Failure {
    pub input: Vec<u8>,
    pub message: String,
}

#[derive(Clone, Debug)]
pub struct Report {
    pub executions: u64,
    pub accepted: u64,
    pub elapsed: Duration,
    /// The first failure; the run stops there.
    pub failure: Option<Failure>,
}

impl Report {
    pub fn per_second(&self) -> f64 {
        self.executions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The most accepted inputs kept in the pool besides the corpus.
const POOL_LIMIT: usize = 4096;

/// Runs `target` on one input, a panic caught and turned into a failure message.
pub fn execute(target: Target, input: &[u8]) -> Result<Outcome, String> {
    match catch_unwind(AssertUnwindSafe(|| target(input))) {
        Ok(result) => result,
        Err(panic) => {
            let text = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(format!("panic: {text}"))
        }
    }
}

/// Runs the corpus through `target` unchanged, then mutants of the pool (the corpus and every
/// accepted input) until `config`'s budget is spent or an input fails. With neither
/// `iterations` nor `seconds`, only the corpus runs.
pub fn run(target: Target, corpus: &[Vec<u8>], config: &Config) -> Report {
    let start = Instant::now();
    let mut pool: Vec<Vec<u8>> = corpus.to_vec();
    let mut mutator = Mutator::new(config.seed, &config.dictionary, config.max_len);
    let mut report = Report {
        executions: 0,
        accepted: 0,
        elapsed: Duration::ZERO,
        failure: None,
    };
    let deadline = config.seconds.map(|s| start + Duration::from_secs_f64(s));
    let done = |report: &Report| {
        let by_count = config
            .iterations
            .is_some_and(|limit| report.executions >= limit);
        // The clock is read every 256 executions only.
        let by_time = report.executions.is_multiple_of(256)
            && deadline.is_some_and(|deadline| Instant::now() >= deadline);
        by_count || by_time
    };
    let mut input = Vec::with_capacity(config.max_len);
    let mut index = 0usize;
    loop {
        if done(&report) {
            break;
        }
        if index < corpus.len() {
            input.clone_from(&corpus[index]);
            index += 1;
        } else if config.iterations.is_none() && config.seconds.is_none() {
            break;
        } else {
            input.clone_from(&pool[mutator.rng.below(pool.len())]);
            mutator.mutate(&mut input, &pool);
        }
        report.executions += 1;
        match execute(target, &input) {
            Ok(Outcome::Accepted) => {
                report.accepted += 1;
                if pool.len() < corpus.len() + POOL_LIMIT {
                    pool.push(input.clone());
                } else if mutator.rng.chance(16) {
                    let slot = corpus.len() + mutator.rng.below(POOL_LIMIT);
                    pool[slot].clone_from(&input);
                }
            }
            Ok(Outcome::Rejected) => {}
            Err(message) => {
                report.failure = Some(Failure {
                    input: input.clone(),
                    message,
                });
                break;
            }
        }
    }
    report.elapsed = start.elapsed();
    report
}

/// Every file in `dir`, in name order (so a run is the same on every machine).
pub fn load_corpus(dir: &Path) -> std::io::Result<Vec<Vec<u8>>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    paths.retain(|p| p.is_file());
    paths.sort();
    paths.iter().map(std::fs::read).collect()
}

/// Writes a failing input to `dir/<name>-<hash>`, and returns the path.
pub fn save_failure(dir: &Path, name: &str, failure: &Failure) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    // FNV-1a: a stable name for the same input.
    let hash = failure
        .input
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
    let path = dir.join(format!("{name}-{hash:016x}"));
    std::fs::write(&path, &failure.input)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(iterations: u64) -> Config {
        Config {
            seed: 1,
            iterations: Some(iterations),
            seconds: None,
            max_len: 64,
            dictionary: vec!["!"],
        }
    }

    /// Panics on any input holding both "!!" and a '7': the fuzzer must find that from "7".
    fn planted(data: &[u8]) -> Result<Outcome, String> {
        if data.windows(2).any(|w| w == b"!!") && data.contains(&b'7') {
            panic!("planted bug");
        }
        Ok(Outcome::Rejected)
    }

    #[test]
    fn a_planted_panic_is_caught_and_reported() {
        let report = run(planted, &[b"7".to_vec()], &config(1_000_000));
        let failure = report.failure.expect("the fuzzer finds the planted panic");
        assert_eq!(failure.message, "panic: planted bug");
        assert!(execute(planted, &failure.input).is_err());
        assert!(report.executions < 1_000_000);
    }

    #[test]
    fn a_broken_property_stops_the_run() {
        fn odd(data: &[u8]) -> Result<Outcome, String> {
            if data.len() % 2 == 1 {
                Err("odd length".into())
            } else {
                Ok(Outcome::Accepted)
            }
        }
        let report = run(odd, &[b"ab".to_vec()], &config(10_000));
        assert_eq!(report.failure.unwrap().message, "odd length");
    }

    #[test]
    fn iterations_are_counted_exactly() {
        fn fine(_: &[u8]) -> Result<Outcome, String> {
            Ok(Outcome::Accepted)
        }
        let report = run(fine, &[b"a".to_vec(), b"b".to_vec()], &config(5000));
        assert_eq!((report.executions, report.accepted), (5000, 5000));
        assert!(report.failure.is_none());
    }
}
