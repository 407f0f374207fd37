//! Stage 5: back ends (PTX, Rust SIMD source) of the kernel IR and `regen`, which writes
//! kernels_out/.
pub mod ptx_edges;
pub mod ptx_stream;
pub mod ptx_tiles;
pub mod regen;
pub mod rust_emit;
pub mod rust_stream;
pub mod x86;
