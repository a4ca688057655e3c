//! Rigorous quadrature, log-MGF and Chernoff bounds, and the certified calibration of
//! the Dagan–Kur bounded-noise mechanism (docs/maths.md §1.4; Dagan & Kur 2022, Section 10).
//!
//! Every quantity here that feeds the certified radius is an *upper* bound on the
//! quantity it stands for (or a lower bound where it enters in a denominator):
//! quadrature, truncation and floating-point rounding all err on the safe side. The
//! argument is sketched in the repository's `docs/maths.md` §1.4.
//!
//! # What is here
//! - [`adaptive`]: [`adaptive::Transfer`], adaptive queries answerable from n samples by
//!   bounded noise and by the Gaussian mechanism (Dagan & Kur, Figure 2).
//! - [`quadrature`]: one-sided quadrature of `e^{−f}` for convex `f` (tangent and chord
//!   bounds on each cell).
//! - [`noise`]: [`BoundedNoise`], a bounded-noise density with certified bounds on its
//!   normaliser, density, tail levels and moments.
//! - [`loss_mgf`]: an upper bound on the log-MGF of one query's truncated privacy loss.
//! - [`deviation`]: the Chernoff bound on Dagan & Kur's deviation integral.
//! - [`certified`]: [`certified_radius`], the least radius R the certificate reaches.
//!
//! # Example: the certified radius
//! ```
//! use densities::bounded::BoundedFamily;
//! use mgf::{certified_radius, BoundedNoise};
//!
//! let family = BoundedFamily::power(2.0).unwrap();
//! let noise = BoundedNoise::new(family).unwrap();
//! let (k, eps, delta) = (1.0, 1.0, 1e-6);
//! let r = certified_radius(&noise, k, eps, delta).unwrap().radius;
//!
//! // Check one query independently: the hockey-stick divergence of X against X + s
//! // (s = 1/R on the unit scale), ∫ (p(x) − e^ε p(x − s))_+ dx, by a midpoint rule.
//! let hockey_stick = |s: f64| {
//!     let n = 400_000;
//!     let h = 2.0 / n as f64;
//!     let p = |x: f64| (-family.f(x)).exp(); // unnormalised; 0 outside (−1, 1)
//!     let (mut z, mut d) = (0.0, 0.0);
//!     for i in 0..n {
//!         let x = -1.0 + (i as f64 + 0.5) * h;
//!         z += p(x) * h;
//!         d += (p(x) - eps.exp() * p(x - s)).max(0.0) * h;
//!     }
//!     d / z
//! };
//! assert!(hockey_stick(1.0 / r) <= delta);
//! // The certificate is not vacuous: with 40 % of that noise, δ is exceeded.
//! assert!(hockey_stick(1.0 / (0.4 * r)) > delta);
//! ```
#![deny(missing_docs)]

pub mod adaptive;
pub mod certified;
pub mod deviation;
pub mod error;
pub mod loss_mgf;
pub mod noise;
pub mod quadrature;

pub use certified::{certified_radius, CertifiedRadius};
pub use error::MgfError;
pub use noise::BoundedNoise;
