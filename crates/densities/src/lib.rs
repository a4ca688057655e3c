//! Noise distributions for differential privacy: densities, tail-accurate normal
//! functions, and calibration of each mechanism to (ε, δ).
//!
//! Formulas are derived in the repository's `docs/maths.md` (cited per item as
//! "docs/maths.md §x.y").

pub mod bounded;
mod erfcx_taylor;
pub mod error;
pub mod gaussian;
pub mod laplace;
pub mod lp_noise;
pub mod normal;
pub mod tradeoff;
pub mod traits;
pub mod truncated_laplace;

pub use error::DensityError;
