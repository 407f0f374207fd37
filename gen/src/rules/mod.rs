//! Stage 1: rule strings and topologies, the truth tables (specs) a network must meet.
pub mod echo;
pub mod generations;
pub mod life;
pub mod map;
pub mod rule;
pub mod spec;
pub mod topology;
