//! lifegen-gen: the compiler. Rules, specs, logic networks, verification and lowering.
//! Pure: no GPU, no universes.

pub mod cache;
pub mod ceilings;
pub mod count;
pub mod kernel;
pub mod life;
pub mod lowering;
pub mod named;
pub mod network;
pub mod plan;
pub mod ptx;
pub mod regen;
pub mod rule;
pub mod rust_emit;
pub mod sass;
pub mod sat;
pub mod shapes;
pub mod spec;
pub mod synth;

pub use lowering::Basis;
pub use network::{Gate, Network, NetworkBuilder, OpCounts, Wire};
pub use rule::{LargerThanLife, LifeLike, Neighbourhood, Rule, RuleError, RuleSpec};
pub use spec::{Spec, VerifiedNetwork, VerifyError, verify};
