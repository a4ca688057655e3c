//! Privacy-loss laws of single mechanisms ([`LossLaw`]), one file per family.
//!
//! A new mechanism family is a new file here implementing [`LossLaw`], registered in
//! [`crate::accountant::input::spec`] (docs/architecture.md).

pub mod bounded_noise;
pub mod bounded_range;
pub mod clipped_laplace;
pub mod discrete;
pub mod discrete_gaussian;
pub mod gaussian;
pub mod loss_law;

pub use bounded_noise::BoundedNoiseLaw;
pub use bounded_range::BoundedRangeLaw;
pub use clipped_laplace::ClippedLaplaceLaw;
pub use discrete::DiscreteLaw;
pub use discrete_gaussian::DiscreteGaussianLaw;
pub use gaussian::GaussianLaw;
pub(crate) use loss_law::{
    cell_by_density, cell_in_output, gauss_legendre8, loss_sd_by_trapezoid, range_from_ends,
};
pub use loss_law::{ContinuousRange, LossLaw, CELL_REL_ERR};
