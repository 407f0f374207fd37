//! The drivers above the simulators: slices and progress, bands and their exchange, universes
//! larger than memory, checkpoints and resume, Golly's unbounded plane (a dense box, active tiles,
//! HashLife), the worker threads.

pub mod active_tiles;
pub mod band_seams;
pub mod bands;
pub mod file_run;
pub mod hashlife;
pub mod out_of_core;
pub mod plane;
pub mod ranked;
pub mod slices;
pub mod switching;
pub mod threads;
