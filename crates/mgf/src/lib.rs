//! Rigorous quadrature, log-MGF and Chernoff bounds, and the certified calibration of
//! the Dagan–Kur bounded-noise mechanism (docs/maths.md §1.4; Dagan & Kur 2022, Section 10).
//!
//! Every quantity here that feeds the certified radius is an *upper* bound on the
//! quantity it stands for (or a lower bound where it enters in a denominator):
//! quadrature, truncation and floating-point rounding all err on the safe side.

pub mod certified;
pub mod deviation;
pub mod error;
pub mod loss_mgf;
pub mod noise;
pub mod quadrature;

pub use certified::{certified_radius, CertifiedRadius};
pub use error::MgfError;
pub use noise::BoundedNoise;
