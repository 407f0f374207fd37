//! The GPU backend: PTX kernels of the kernel IR run through the CUDA driver (cudarc, loaded
//! at run time, so a machine without a GPU or driver gets an error value, not a crash).

pub mod ceilings;
pub mod device;
pub(crate) mod device_universe;
pub mod exchange;
pub mod nccl;
pub(crate) mod staging;
pub mod stream;
pub mod tiles;
