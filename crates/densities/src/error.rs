//! Typed errors for invalid parameters.

/// A parameter outside its allowed range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DensityError {
    /// `name` had `value`, which is not in `allowed`.
    #[error("{name} = {value} is outside the allowed range {allowed}")]
    OutOfRange {
        /// Parameter name as the papers write it (e.g. "epsilon").
        name: &'static str,
        /// The offending value.
        value: f64,
        /// Human-readable allowed range, e.g. "(0, 1)".
        allowed: &'static str,
    },
}

/// Returns `Ok(x)` when `lo < x < hi` (open interval), else an [`DensityError::OutOfRange`].
pub fn check_open(
    name: &'static str,
    x: f64,
    lo: f64,
    hi: f64,
    allowed: &'static str,
) -> Result<f64, DensityError> {
    if x > lo && x < hi {
        Ok(x)
    } else {
        Err(DensityError::OutOfRange {
            name,
            value: x,
            allowed,
        })
    }
}
