//! Composition of discretised laws: cumulants and saddle points, the tilted FFT sum and
//! its error terms, the one-jump split for heavy tails, staged plans, and ε or δ read at
//! one grid step (docs/accountant.md §4–5).

pub(crate) mod at_step;
pub(crate) mod cumulants;
pub(crate) mod jump;
pub(crate) mod levels;
pub(crate) mod plan;
pub mod tilted;
