//! lifegen-runtime: the executor. Universes, RLE, macrocell and PNG, the reference simulator,
//! the backends.

pub mod backend;
pub mod cpu;
pub mod drive;
pub mod formats;
pub mod gpu;
pub mod interrupt;
pub mod memory;
pub mod plane_engines;
pub mod ranks;
pub mod records;
pub mod reference;
pub mod simulator;
pub mod universe;
pub mod window;

pub use backend::{BackendKind, create, create_on_gpus, create_with_plan};
pub use simulator::{BackendError, Simulator};
pub use universe::Universe;
