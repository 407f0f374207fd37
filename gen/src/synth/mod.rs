//! Stage 3: exact synthesis by SAT, the kernel shapes it searches, and the record cache.
pub mod cache;
pub mod request;
pub mod sat;
pub mod search;
pub mod shapes;
