//! Reading and writing universes and patterns: RLE, macrocell, PNG, the GIF animation and the
//! universe files (.npy).

pub mod animation;
mod lines;
pub mod macrocell;
pub mod pattern;
pub mod png;
pub mod rle;
pub mod universe_file;
