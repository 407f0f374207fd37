//! lifegen-gen: the compiler. Rules, specs, logic networks, verification and lowering, synthesis,
//! kernels and their emitters. Pure: no GPU, no universes.
//!
//! One folder a stage: `rules` -> `logic` -> `synth` -> `kernel` -> `emit`, and `measure`.
//! The stage modules are re-exported flat (`lifegen_gen::rule`, `lifegen_gen::ptx_stream`, ...).

pub mod emit;
pub mod kernel;
pub mod key_hasher;
pub mod logic;
pub mod measure;
pub mod rules;
pub mod synth;

pub use emit::{ptx_stream, regen, rust_emit};
pub use kernel::plan;
pub use logic::{lowering, named, network};
pub use measure::{ceilings, count, sass};
pub use rules::{echo, generations, life, map, rule, spec, topology};
pub use synth::{cache, on_demand, sat, shapes};

pub use lowering::Basis;
pub use map::MapRule;
pub use network::{Gate, Network, NetworkBuilder, OpCounts, Wire};
pub use rule::{
    BirthOnZero, LargerThanLife, LifeLike, Neighbourhood, Rule, RuleError, RuleSpec, Strip,
    Topology,
};
pub use spec::{Spec, VerifiedNetwork, VerifyError, verify};
pub use topology::{Shift, Twisted};
