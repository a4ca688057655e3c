//! Concentration bound for any adaptive mix of ε-DP, ε-BR and concentrated-DP mechanisms
//! (Cesar & Rogers, eq. 3, from their Lemmas 3.1–3.3; docs/maths.md §3.3):
//!
//! `ε_g = ℓ·ε(e^ε−1)/(e^ε+1) + m·(ε/(1−e^{−ε}) − 1 − ln(ε/(1−e^{−ε}))) + Σ μ_j
//!        + √(2 (ℓε² + mε²/4 + Σ τ_j²) ln(1/δ))`.
//!
//! Each term is an expected loss plus a subgaussian parameter (Hoeffding: a loss confined to
//! an interval of width `w` is `w/2`-subgaussian, so DP contributes `ε²` and BR `ε²/4`).
//! With `ℓ = k` this is the advanced composition bound of Kairouz–Oh–Viswanath / Dwork–
//! Rothblum–Vadhan, with `m = k` Dong–Durfee–Rogers 2019, Corollary 3.1. It is an upper
//! bound on every optimal composition in this crate (and is tested to be).

use super::dp::expected_loss_unchecked;
use super::worst_case::br_expected_loss_max_unchecked;
use crate::error::{check_delta, check_eps, out_of_range, CompositionError, Result};

/// A `(μ, τ)`-concentrated-DP mechanism (Dwork & Rothblum 2016; Cesar–Rogers Def. 2.7):
/// privacy loss with mean at most `μ` whose centred version is `τ`-subgaussian.
///
/// ```
/// use composition::Cdp;
/// // Gaussian mechanism with sensitivity/σ = 0.5: μ = 0.125, τ = 0.5.
/// let g = Cdp::gaussian(0.5).unwrap();
/// assert_eq!((g.mu(), g.tau()), (0.125, 0.5));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cdp {
    mu: f64,
    tau: f64,
}

impl Cdp {
    /// Validates `μ ≥ 0` and `τ ≥ 0`, both finite.
    pub fn new(mu: f64, tau: f64) -> Result<Self> {
        if !(mu.is_finite() && mu >= 0.0) {
            return Err(out_of_range("mu", mu, "[0, inf), finite"));
        }
        if !(tau.is_finite() && tau >= 0.0) {
            return Err(out_of_range("tau", tau, "[0, inf), finite"));
        }
        Ok(Self { mu, tau })
    }

    /// `ρ`-zCDP as `(ρ, √(2ρ))`-CDP (Bun & Steinke 2016, Prop. 1.4's loss is N(ρ, 2ρ)).
    pub fn zcdp(rho: f64) -> Result<Self> {
        if !(rho.is_finite() && rho >= 0.0) {
            return Err(out_of_range("rho", rho, "[0, inf), finite"));
        }
        Self::new(rho, (2.0 * rho).sqrt())
    }

    /// Gaussian mechanism with `r = Δ/σ`: loss `N(r²/2, r²)`, i.e. `(r²/2, r)`-CDP.
    pub fn gaussian(sensitivity_over_sigma: f64) -> Result<Self> {
        let r = sensitivity_over_sigma;
        if !(r.is_finite() && r >= 0.0) {
            return Err(out_of_range("sensitivity/sigma", r, "[0, inf), finite"));
        }
        Self::new(0.5 * r * r, r)
    }

    /// Mean bound μ.
    pub fn mu(&self) -> f64 {
        self.mu
    }

    /// Subgaussian parameter τ.
    pub fn tau(&self) -> f64 {
        self.tau
    }
}

pub(crate) fn concentration_unchecked(l: u64, m: u64, eps: f64, cdp: &[Cdp], delta: f64) -> f64 {
    let (lf, mf) = (l as f64, m as f64);
    let mean = lf * expected_loss_unchecked(eps)
        + mf * br_expected_loss_max_unchecked(eps)
        + cdp.iter().map(|c| c.mu).sum::<f64>();
    let var =
        lf * eps * eps + 0.25 * mf * eps * eps + cdp.iter().map(|c| c.tau * c.tau).sum::<f64>();
    mean + (2.0 * var * -delta.ln()).sqrt()
}

/// Overall `ε_g` at level δ for `ℓ` ε-DP, `m` ε-BR and the listed CDP mechanisms, in any
/// adaptive order (Cesar–Rogers eq. 3 / Lemmas 3.1–3.3; docs/maths.md §3.3):
/// `ℓ ε(e^ε−1)/(e^ε+1) + m (ε/(1−e^{−ε}) − 1 − ln(ε/(1−e^{−ε}))) + Σμ_j
/// + √(2(ℓε² + mε²/4 + Στ_j²) ln(1/δ))`.
///
/// `ε` must be valid even when `ℓ = m = 0`; at least one mechanism is required.
///
/// ```
/// // ℓ = k: advanced composition, ε√(2k ln(1/δ)) + kε(e^ε−1)/(e^ε+1).
/// let (k, e, d) = (100u64, 0.1f64, 1e-6f64);
/// let c = composition::concentration_epsilon(k, 0, e, &[], d).unwrap();
/// let ac = e * (2.0 * k as f64 * (1.0 / d).ln()).sqrt()
///     + k as f64 * e * (e.exp() - 1.0) / (e.exp() + 1.0);
/// assert!((c / ac - 1.0).abs() < 1e-14);
/// ```
pub fn concentration_epsilon(l: u64, m: u64, eps: f64, cdp: &[Cdp], delta: f64) -> Result<f64> {
    check_eps("epsilon", eps)?;
    check_delta("delta", delta)?;
    if l == 0 && m == 0 && cdp.is_empty() {
        return Err(CompositionError::Empty {
            name: "mechanism list (l + m + number of CDP mechanisms)",
        });
    }
    Ok(concentration_unchecked(l, m, eps, cdp, delta))
}
