//! The questions asked of a composition: ε(δ), δ(ε) and the refinement of the grid
//! step ([`accountant::Accountant`]), the two-sided composition of SPECs, the trade-off
//! function, the solver for one unknown, bounded noise's least radius.

pub mod accountant;
pub mod composition;
pub mod radius;
pub mod solve;
pub(crate) mod steps;
pub mod target;
pub mod tradeoff;
