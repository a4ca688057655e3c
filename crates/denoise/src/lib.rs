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
//! Every denoiser is post-processing of the release, so the privacy guarantee is
//! unchanged. Formulas are derived in the repository's `docs/maths.md` (cited per item as
//! "docs/maths.md §x.y").
//!
//! # Example: denoising a Gaussian release
//! ```
//! use denoise::shrink::{james_stein_positive, soft_threshold};
//! use rand::SeedableRng;
//! use rand_distr::{Distribution, StandardNormal};
//!
//! // A sparse signal in d = 1000 dimensions released with N(0, σ²I) noise (σ = 1).
//! let (d, sigma) = (1000, 1.0);
//! let truth: Vec<f64> = (0..d).map(|i| if i < 10 { 20.0 } else { 0.0 }).collect();
//! let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
//! let release: Vec<f64> = truth
//!     .iter()
//!     .map(|t| {
//!         let z: f64 = StandardNormal.sample(&mut rng);
//!         t + sigma * z
//!     })
//!     .collect();
//! let err = |y: &[f64]| y.iter().zip(&truth).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt();
//!
//! // Soft thresholding at σ√(2 ln d) and positive-part James–Stein both beat the raw
//! // release (about √d·σ ≈ 31.6 away from the truth).
//! let soft = soft_threshold(&release, sigma).unwrap();
//! let js = james_stein_positive(&release, sigma).unwrap();
//! assert!(err(&soft) < 0.5 * err(&release));
//! assert!(err(&js) < err(&release));
//! ```
#![deny(missing_docs)]

pub mod city;
pub mod error;
pub mod haar;
pub mod isotonic;
pub mod mean_estimation;
pub mod shrink;

pub use error::DenoiseError;
