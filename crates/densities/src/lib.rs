//! Noise distributions for differential privacy: densities, tail-accurate normal
//! functions, and calibration of each mechanism to (ε, δ).
//!
//! # What is here
//! - [`normal`]: `Φ`, `ln Φ`, `Φ⁻¹` with full relative accuracy in the tails (down to
//!   δ far below 1e-300), the max-of-k quantile, and the [`normal::Normal`] noise.
//! - [`gaussian`]: the classical and the analytic (exact) calibration of the Gaussian
//!   mechanism, its privacy profile `δ(ε)` and the inverse `ε(δ)`.
//! - [`laplace`]: the Laplace mechanism, its scale and privacy profile.
//! - [`truncated_laplace`]: the truncated Laplacian of Geng, Ding, Guo & Kumar with its
//!   closed-form moments.
//! - [`bounded`]: the bounded-noise families `power(α)` and `exp` of Dagan & Kur (their
//!   certified radius is in the `mgf` crate).
//! - [`tradeoff`]: trade-off functions (`f_{ε,δ}`, `G_μ`, Laplace, any symmetric
//!   log-concave noise against its shift).
//! - [`lp_noise`]: the d-dimensional noise `∝ exp(−‖x‖_p^a)` of Dong, Su & Zhang, with an
//!   exact sampler, Fisher information and Monte Carlo trade-off curves.
//! - [`traits`]: one small trait per capability (CDF, quantile, moments, …).
//!
//! Every formula is derived in the repository's `docs/maths.md` and cited per item as
//! "docs/maths.md §x.y"; invalid inputs give a [`DensityError`], never a NaN.
//!
//! # Example: calibrating noise to (ε, δ)
//! ```
//! use densities::gaussian::{analytic_sigma, classical_sigma, gaussian_delta};
//! use densities::laplace::laplace_scale;
//! use densities::traits::NoiseMoments;
//! use densities::truncated_laplace::TruncatedLaplace;
//!
//! let (eps, delta, sensitivity) = (0.5, 1e-6, 1.0);
//! // The analytic Gaussian mechanism: the least σ whose privacy profile at the shift
//! // Δ/σ is at most δ (Balle & Wang, Theorem 8) ...
//! let sigma = analytic_sigma(eps, delta, sensitivity).unwrap();
//! assert!(gaussian_delta(eps, sensitivity / sigma) <= delta);
//! // ... and no less: 0.1 % less noise already leaks more than δ.
//! assert!(gaussian_delta(eps, sensitivity / (0.999 * sigma)) > delta);
//! // The classical calibration (valid for ε < 1 only) asks for more.
//! assert!(classical_sigma(eps, delta, sensitivity).unwrap() > sigma);
//!
//! // Pure ε-DP with Laplace noise, and the truncated Laplacian at (ε, δ), whose noise
//! // power is below Laplace's 2b².
//! let b = laplace_scale(eps, sensitivity).unwrap();
//! let tl = TruncatedLaplace::new(eps, delta, sensitivity).unwrap();
//! assert!(tl.second_moment() < 2.0 * b * b);
//! ```
#![deny(missing_docs)]

pub mod bounded;
mod erfcx_taylor;
pub mod error;
pub mod gaussian;
pub mod laplace;
pub mod lp_noise;
pub mod normal;
pub mod outward;
pub mod tradeoff;
pub mod traits;
pub mod truncated_laplace;

pub use error::DensityError;
