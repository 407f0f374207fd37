//! `lifegen search` as a library: its arguments checked, the search run from the best network
//! known, and the record `--save` keeps. The command line prints what this returns; the Python
//! package returns it as a dict.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::cache::SearchRecord;
use crate::lowering::Basis;
use crate::network::Network;
use crate::rule::{self, LifeLike, Rule, RuleError};
use crate::sat::SolverKind;
use crate::shapes::Shape;
use crate::spec::Spec;
use crate::synth::search::{self, SearchOptions, SearchResult, SizeAnswer, SynthError};

/// The largest timeout accepted, in seconds: about 116 days, small enough that
/// `Duration::from_secs_f64` cannot overflow.
pub const MAX_TIMEOUT_SECS: f64 = 1e7;

/// Why a search cannot start. The wording names the command line's flags.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestError {
    #[error(transparent)]
    Rule(#[from] RuleError),
    #[error("search takes life-like rules; {0} is Larger-than-Life")]
    NotLifeLike(String),
    #[error("unknown shape {0:?}; use monolithic, blog or row-shared")]
    Shape(String),
    #[error("unknown basis {0:?}; use lut3 or gate2")]
    Basis(String),
    #[error(
        "--timeout must be a positive number of seconds, at most {MAX_TIMEOUT_SECS:e}; got {0}"
    )]
    Timeout(f64),
    #[error("--min {0} is above --max {1}")]
    MinAboveMax(usize, usize),
    #[error("{0}")]
    Solver(String),
}

/// The life-like rule `text` names; Larger-than-Life is refused.
pub fn life_like(text: &str) -> Result<LifeLike, RequestError> {
    match rule::parse(text)?.rule {
        Rule::LifeLike(life) => Ok(life),
        Rule::LargerThanLife(_) | Rule::Map(_) | Rule::Generations(_) => {
            Err(RequestError::NotLifeLike(text.to_string()))
        }
    }
}

/// A search's settings as given, by name.
#[derive(Clone, Debug)]
pub struct SearchArgs<'a> {
    /// monolithic, blog or row-shared.
    pub shape: &'a str,
    /// lut3 or gate2.
    pub basis: &'a str,
    /// Smallest size to try; optimality is proven only when the search starts at 1.
    pub min: usize,
    /// Largest size to try.
    pub max: usize,
    /// varisat, or cadical in a build with it.
    pub solver: &'a str,
    /// Wall-clock budget in seconds for the whole search.
    pub timeout: f64,
}

/// A checked search, ready to run.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub rule: LifeLike,
    pub shape: Shape,
    pub basis: Basis,
    pub spec: Spec,
    pub options: SearchOptions,
}

/// A finished search.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub result: SearchResult,
    /// Wall-clock seconds of the whole search.
    pub seconds: f64,
}

/// Checks `args` for `rule`. With `root` (a repository holding kernels_out/networks/), a stored
/// network can bound the search from above (see [`upper_bound`]).
pub fn prepare(
    rule: LifeLike,
    args: &SearchArgs,
    root: Option<&Path>,
) -> Result<Prepared, RequestError> {
    let shape =
        Shape::from_name(args.shape).ok_or_else(|| RequestError::Shape(args.shape.into()))?;
    let basis = match args.basis {
        "lut3" => Basis::Lut3,
        "gate2" => Basis::Gate2,
        other => return Err(RequestError::Basis(other.into())),
    };
    // Finite and positive (this also rejects NaN), and within MAX_TIMEOUT_SECS.
    if !(args.timeout > 0.0 && args.timeout <= MAX_TIMEOUT_SECS) {
        return Err(RequestError::Timeout(args.timeout));
    }
    if args.min > args.max {
        return Err(RequestError::MinAboveMax(args.min, args.max));
    }
    let solver = SolverKind::from_name(args.solver).map_err(RequestError::Solver)?;
    let spec = shape.spec(&rule);
    let options = SearchOptions {
        basis,
        solver,
        min: args.min,
        max: args.max,
        budget: Duration::from_secs_f64(args.timeout),
        known: Some(upper_bound(&rule, shape, basis, root)),
        descend: false,
    };
    Ok(Prepared {
        rule,
        shape,
        basis,
        spec,
        options,
    })
}

impl Prepared {
    /// The line `lifegen search` starts with.
    pub fn header(&self) -> String {
        format!(
            "rule {}, shape {}, basis {}: {} inputs, sizes {}..={}",
            self.rule,
            self.shape.name(),
            self.basis.name(),
            self.spec.num_inputs(),
            self.options.min,
            self.options.max
        )
    }

    /// Runs the search; `report` hears each size tried as it ends.
    pub fn run(&self, report: impl FnMut(&search::Attempt)) -> Result<Outcome, SynthError> {
        let started = Instant::now();
        let result = search::search(&self.spec, &self.options, report)?;
        Ok(Outcome {
            result,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Ops a word that the shape fixes, besides the searched network's.
    pub fn fixed_ops_per_word(&self) -> usize {
        self.shape.fixed_ops_per_word(self.basis)
    }

    /// The record `--save` keeps for `outcome`, when it found a network.
    pub fn record(&self, outcome: &Outcome) -> Option<SearchRecord> {
        let network = outcome.result.best.clone()?;
        let mut refuted: Vec<usize> = outcome
            .result
            .attempts
            .iter()
            .filter(|a| a.answer == SizeAnswer::Unsat)
            .map(|a| a.gates)
            .collect();
        refuted.sort_unstable();
        Some(SearchRecord {
            rule: self.rule,
            shape: self.shape,
            basis: self.basis,
            network,
            proven_optimal: outcome.result.proven_optimal,
            refuted,
            solver: self.options.solver.name().to_string(),
            seconds: outcome.seconds,
        })
    }
}

/// The smallest verified network known without searching: the lowered one, or for the
/// row-shared shape in LUT3 a full adder composed with the blog-shape network stored below
/// `root`.
pub fn upper_bound(rule: &LifeLike, shape: Shape, basis: Basis, root: Option<&Path>) -> Network {
    let lowered = shape.lowered(rule, basis);
    let Some(root) = root.filter(|_| shape == Shape::RowShared && basis == Basis::Lut3) else {
        return lowered;
    };
    let blog = SearchRecord::path(root, rule, Shape::Blog, Basis::Lut3);
    std::fs::read_to_string(&blog)
        .ok()
        .and_then(|text| SearchRecord::parse(&blog.display().to_string(), &text).ok())
        .map(|record| crate::kernel::row_shared::compose_from_blog(&record.network))
        .filter(|composed| composed.gates().len() < lowered.gates().len())
        .filter(|composed| crate::verify(composed, &shape.spec(rule)).is_ok())
        .unwrap_or(lowered)
}
