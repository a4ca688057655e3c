//! Typed errors for invalid inputs to the denoisers and experiments.

use densities::DensityError;

/// An input the denoisers or the experiments cannot work with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DenoiseError {
    /// `name` had `value`, which is not in `allowed`.
    #[error("{name} = {value} is outside the allowed range {allowed}")]
    OutOfRange {
        /// Parameter name as the papers write it (e.g. "sigma").
        name: &'static str,
        /// The offending value.
        value: f64,
        /// Human-readable allowed range, e.g. "(0, inf)".
        allowed: &'static str,
    },
    /// A vector too short for the method (James–Stein needs `d ≥ 3`).
    #[error("{method} needs dimension d >= {min}, got d = {d}")]
    DimensionTooSmall {
        /// The method that was asked for.
        method: &'static str,
        /// The dimension given.
        d: usize,
        /// The smallest dimension the method accepts.
        min: usize,
    },
    /// A 2-D field whose shape the Haar transform cannot take: it must be square with a
    /// power-of-two side.
    #[error("a {rows}x{cols} field must be square with a power-of-two side")]
    BadGrid {
        /// The number of rows given.
        rows: usize,
        /// The number of columns given.
        cols: usize,
    },
    /// An integer count outside its allowed range (e.g. zero datasets).
    #[error("{name} = {value} is outside the allowed range {allowed}")]
    BadCount {
        /// Parameter name (e.g. "datasets").
        name: &'static str,
        /// The offending value.
        value: usize,
        /// Human-readable allowed range, e.g. ">= 1".
        allowed: &'static str,
    },
    /// A noise calibration from `densities` refused its parameters.
    #[error(transparent)]
    Calibration(#[from] DensityError),
}

/// `Ok(x)` when `lo < x < hi` (open interval), else [`DenoiseError::OutOfRange`].
pub(crate) fn check_open(
    name: &'static str,
    x: f64,
    lo: f64,
    hi: f64,
    allowed: &'static str,
) -> Result<f64, DenoiseError> {
    if x > lo && x < hi {
        Ok(x)
    } else {
        Err(DenoiseError::OutOfRange {
            name,
            value: x,
            allowed,
        })
    }
}

/// `Ok(σ)` for a noise scale `σ ∈ (0, ∞)`.
pub(crate) fn check_sigma(sigma: f64) -> Result<f64, DenoiseError> {
    check_open("sigma", sigma, 0.0, f64::INFINITY, "(0, inf)")
}
