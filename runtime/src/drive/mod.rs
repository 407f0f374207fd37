//! The drivers above the simulators: slices and progress, bands and their exchange, universes
//! larger than memory, checkpoints and resume, the worker threads.

pub mod bands;
pub mod file_run;
pub mod out_of_core;
pub mod slices;
pub mod threads;
