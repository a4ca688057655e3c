//! Errors of the certified computations.

/// An input outside its range, or a computation that could not certify anything.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MgfError {
    /// A parameter outside its allowed range.
    #[error(transparent)]
    Density(#[from] densities::DensityError),
    /// No radius up to the search limit passed the certificate.
    #[error("no certified radius found: {0}")]
    NotCertified(String),
}
