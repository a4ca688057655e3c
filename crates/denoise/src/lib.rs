//! Denoisers for Gaussian-mechanism outputs and the denoising experiments of Balle &
//! Wang (2018, "Improving the Gaussian Mechanism for Differential Privacy: Analytical
//! Calibration and Optimal Denoising", Sections 4 and 5.2).
//!
//! - [`shrink`]: James–Stein (plain and positive-part), soft thresholding at
//!   `σ √(2 ln d)`, Bayes shrinkage under a Gaussian prior (docs/maths.md §4).
//! - [`haar`]: orthonormal 2-D Haar transform and wavelet soft thresholding.
//! - [`mean_estimation`]: private mean estimation, cGM / aGM / denoised aGM / Laplace
//!   (fig5).
//! - [`city`]: a synthetic city-like heat map and its denoised aGM release (fig6).
//! - [`isotonic`]: ordered least squares for top-k counts (Cesar–Rogers Algorithm 1).
//!
//! Formulas are derived in the repository's `docs/maths.md` (cited per item as
//! "docs/maths.md §x.y").
#![warn(missing_docs)]

pub mod city;
pub mod error;
pub mod haar;
pub mod isotonic;
pub mod mean_estimation;
pub mod shrink;

pub use error::DenoiseError;
