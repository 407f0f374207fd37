//! lifegen-runtime: the executor. Universes, RLE, macrocell and PNG, the reference simulator,
//! the backends.

pub mod animation;
pub mod backend;
pub mod bands;
pub mod cpu;
pub mod gpu;
pub mod gpu_stream;
mod gpu_universe;
mod lines;
pub mod macrocell;
pub mod memory;
pub mod out_of_core;
pub mod pattern;
pub mod png;
pub mod records;
pub mod reference;
pub mod rle;
pub mod slices;
pub mod stream;
pub mod stream_compiled;
pub mod threads;
pub mod tiles;
pub mod universe;
pub mod universe_file;
pub mod window;

pub use backend::{BackendError, BackendKind, Simulator, create, create_on_gpus, create_with_plan};
pub use universe::Universe;
