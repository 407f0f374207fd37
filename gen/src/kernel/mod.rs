//! Stage 4: kernels. The word-level IR every back end translates, and one front end per rule
//! family that builds programs of it.
pub mod eval;
pub mod generations;
pub mod ir;
pub mod ltl;
pub mod map;
pub mod plan;
pub mod row_shared;
