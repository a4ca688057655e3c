//! Discretisation of a loss law on both sides of the truth ([`lattice::Lattice`]) and
//! the graded cells a question focuses (docs/accountant.md §3).

pub(crate) mod graded;
pub mod lattice;
