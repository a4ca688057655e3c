//! Noise distributions for differential privacy: densities, tail-accurate normal
//! functions, and calibration of each mechanism to (ε, δ).
//!
//! Formulas follow `shared/spec/formulas.md` (cited per item as "formulas.md §x.y").

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
