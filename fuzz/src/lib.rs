//! A fuzzer for lifegen's input readers that runs on the stable toolchain.
//!
//! There is no coverage feedback (that needs nightly's sanitizer coverage or an instrumenting
//! compiler such as afl's): inputs are mutated at random from a committed corpus, with bit flips,
//! byte inserts and deletes, copies of ranges, splices of other corpus entries, dictionary tokens
//! of the formats (`x = `, `rule = `, `B3/S23`, `#CXRLE`, `:T`, ...) and interesting numbers.
//! The only feedback is that an input the target *accepts* joins the pool that later inputs are
//! mutated from, so the fuzzer spends more of its time past the header and rule parsers.
//!
//! A target returns [`Outcome`] or a property violation (`Err`); a panic is caught with
//! [`std::panic::catch_unwind`]. Either is a failure: the input is written to the crash
//! directory and the run stops. Everything is deterministic for a seed: with `--iterations` the
//! same inputs run in the same order on every machine.

pub mod driver;
pub mod mutate;
pub mod targets;

pub use driver::{Config, Failure, Report, run};
pub use mutate::{Mutator, Rng};

/// What a target made of an input that broke no property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The reader accepted it (it then joins the mutation pool).
    Accepted,
    /// The reader refused it with an error, as it should refuse malformed input.
    Rejected,
}

/// A fuzz target: an input to an outcome, or `Err` with the property it broke.
pub type Target = fn(&[u8]) -> Result<Outcome, String>;
