//! Stage 6: measurement: instruction counts per technique, SASS, GPU issue-rate ceilings.
pub mod ceilings;
pub mod count;
pub mod sass;
