//! Laws made from other laws: subsampling, symmetrization, mixtures (replace-one and
//! group pairs, revealed mixtures of a schedule), a balls-in-bins epoch, the max statistic.

pub mod allocation;
pub mod max_statistic;
pub mod mixture;
pub mod revealed;
pub mod subsampled;
pub mod symmetrized;
