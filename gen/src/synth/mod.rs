//! Stage 3: exact synthesis by SAT, the kernel shapes it searches, the records it keeps (in
//! kernels_out and the per-user cache), and the bounded search a run makes for a rule without one.
pub mod cache;
pub mod on_demand;
pub mod pair;
pub mod request;
pub mod sat;
pub mod search;
pub mod shapes;
