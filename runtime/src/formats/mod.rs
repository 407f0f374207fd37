//! Reading and writing universes and patterns: RLE, macrocell, PNG, the GIF animation, the
//! universe files (.npy) and plain NumPy arrays (read only).

pub mod animation;
pub mod apgcode;
pub mod cell_lines;
pub mod colours;
mod lines;
pub mod macrocell;
pub mod npy;
pub mod pattern;
pub mod png;
pub mod rle;
pub mod universe_file;
