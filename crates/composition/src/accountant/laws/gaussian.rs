//! The Gaussian mechanism's loss law (docs/accountant.md §2.1).

use super::{cell_by_density, ContinuousRange, LossLaw};
use crate::error::{out_of_range, Result};

/// Gaussian mechanism with `μ = sensitivity/σ`: `L ~ N(μ²/2, μ²)` under P (docs/accountant.md §2.1).
#[derive(Debug, Clone, Copy)]
pub struct GaussianLaw {
    mu: f64,
}

impl GaussianLaw {
    /// `μ = Δ/σ`, finite, in `[1e-8, 1e4]`.
    ///
    /// ```
    /// use composition::accountant::{GaussianLaw, LossLaw};
    /// assert_eq!(GaussianLaw::new(2.0).unwrap().loss_scale(), 2.0);
    /// assert!(GaussianLaw::new(0.0).is_err());
    /// ```
    pub fn new(mu: f64) -> Result<Self> {
        if !(mu.is_finite() && (1e-8..=1e4).contains(&mu)) {
            return Err(out_of_range("mu = sensitivity/sigma", mu, "[1e-8, 1e4]"));
        }
        Ok(Self { mu })
    }
}

impl LossLaw for GaussianLaw {
    fn atoms(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    fn ln_inf_mass(&self) -> f64 {
        f64::NEG_INFINITY
    }
    fn continuous_range(&self, ln_tail: f64) -> Option<ContinuousRange> {
        // Φ̄(z) ≤ e^{−z²/2}/2 for z ≥ 0.
        let z = (2.0 * (-ln_tail - std::f64::consts::LN_2).max(0.0)).sqrt();
        let m = 0.5 * self.mu * self.mu;
        Some(ContinuousRange {
            lo: m - z * self.mu,
            hi: m + z * self.mu,
            ln_below: ln_tail,
            ln_above: ln_tail,
        })
    }
    fn cell(&self, a: f64, b: f64) -> (f64, f64) {
        let (mu, m) = (self.mu, 0.5 * self.mu * self.mu);
        let c = -(mu * (2.0 * std::f64::consts::PI).sqrt()).ln();
        let g = move |l: f64| {
            let z = (l - m) / mu;
            c - 0.5 * z * z
        };
        cell_by_density(&g, a, a, b)
    }
    fn loss_scale(&self) -> f64 {
        self.mu
    }
    fn grid_unit(&self) -> Option<f64> {
        None
    }
}
