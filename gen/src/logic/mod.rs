//! Stage 2: logic networks, adder lowering and the published networks.
pub mod bitsliced;
pub mod lowering;
pub mod named;
pub mod network;
