//! Choosing and creating a simulator for a rule and a universe size.

use lifegen_gen::Rule;

use crate::cpu::{Isa, NetworkStepper, UnsupportedIsa, best_program};
use crate::reference;
use crate::universe::{Universe, UniverseError};
use crate::window::WindowStepper;

/// The backends a user can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// The fastest backend available for the rule.
    Auto,
    /// Bit-parallel networks for life-like rules, window sums for Larger-than-Life.
    Cpu,
    /// The plain reference simulator.
    Reference,
}

impl std::str::FromStr for BackendKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(BackendKind::Auto),
            "cpu" => Ok(BackendKind::Cpu),
            "reference" => Ok(BackendKind::Reference),
            "gpu" => Err("the GPU backend is not built yet; use auto, cpu or reference".into()),
            other => Err(format!(
                "unknown backend {other:?}; use auto, cpu or reference"
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BackendError {
    #[error(transparent)]
    Universe(#[from] UniverseError),
    #[error(transparent)]
    UnsupportedIsa(#[from] UnsupportedIsa),
}

/// A simulator bound to one rule and one universe size.
pub trait Simulator: Send {
    /// What runs, for people: backend and kernel.
    fn describe(&self) -> String;
    fn advance(&mut self, universe: &mut Universe, gens: u64);
}

struct Reference(Rule);

impl Simulator for Reference {
    fn describe(&self) -> String {
        "reference (one cell at a time)".into()
    }
    fn advance(&mut self, universe: &mut Universe, gens: u64) {
        *universe = reference::run(universe, &self.0, gens);
    }
}

impl Simulator for NetworkStepper {
    fn describe(&self) -> String {
        let threads = rayon::current_num_threads();
        format!(
            "cpu (bit-parallel network {}, {}, {threads} thread{})",
            self.program().name(),
            self.isa().name(),
            if threads == 1 { "" } else { "s" }
        )
    }
    fn advance(&mut self, universe: &mut Universe, gens: u64) {
        NetworkStepper::advance(self, universe, gens)
    }
}

impl Simulator for WindowStepper {
    fn describe(&self) -> String {
        format!(
            "cpu (window sums, {} threads)",
            rayon::current_num_threads()
        )
    }
    fn advance(&mut self, universe: &mut Universe, gens: u64) {
        WindowStepper::advance(self, universe, gens)
    }
}

/// A simulator of `kind` for `rule` on a `width` x `height` torus.
pub fn create(
    kind: BackendKind,
    rule: &Rule,
    width: u64,
    height: u64,
) -> Result<Box<dyn Simulator>, BackendError> {
    Ok(match (kind, rule) {
        (BackendKind::Reference, _) => Box::new(Reference(*rule)),
        (BackendKind::Auto | BackendKind::Cpu, Rule::LifeLike(life)) => {
            let isa = Isa::from_environment()?;
            Box::new(NetworkStepper::new(best_program(life), isa, width, height)?)
        }
        (BackendKind::Auto | BackendKind::Cpu, Rule::LargerThanLife(ltl)) => {
            Box::new(WindowStepper::new(*ltl, width, height)?)
        }
    })
}
