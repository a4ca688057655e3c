//! Zero-concentrated DP (zCDP) and its conversion to (ε, δ)-DP, as Cesar & Rogers use it
//! for Gaussian noise on histograms (their Lemma 6.3; docs/maths.md §3.4).
//!
//! - A Gaussian mechanism with L2 sensitivity Δ and noise σ is ρ-zCDP with
//!   `ρ = Δ²/(2σ²)`, and ρ's add up under composition (Bun & Steinke 2016, Prop. 1.6 and
//!   Lemma 2.3).
//! - Bun–Steinke conversion (their Prop. 1.3): `ε = ρ + 2√(ρ ln(1/δ))`.
//! - The tighter Canonne–Kamath–Steinke (2020) conversion:
//!   `δ = inf_{α>1} exp((α−1)(αρ − ε))/(α−1) · (1 − 1/α)^α`, inverted here for ε:
//!   `ε(α) = αρ + [ln(1/δ) − ln(α−1) + α ln(1 − 1/α)]/(α−1)`, minimised over α.
//!
//! Every α gives a valid ε, so the numerical minimum over α (the best value evaluated) is
//! never below the true infimum: the conversion stays on the safe side.

use super::optimize::maximize_ln;
use crate::error::{check_delta, out_of_range, Result};

/// `ρ = Δ²/(2σ²)`: the zCDP parameter of a Gaussian mechanism with L2 sensitivity Δ and
/// standard deviation σ (Bun & Steinke 2016, Prop. 1.6; docs/maths.md §3.4).
///
/// ```
/// assert_eq!(composition::zcdp::gaussian_rho(1.0, 1.0).unwrap(), 0.5);
/// ```
pub fn gaussian_rho(l2_sensitivity: f64, sigma: f64) -> Result<f64> {
    if !(l2_sensitivity.is_finite() && l2_sensitivity > 0.0) {
        return Err(out_of_range("sensitivity", l2_sensitivity, "(0, inf)"));
    }
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(out_of_range("sigma", sigma, "(0, inf)"));
    }
    Ok(l2_sensitivity * l2_sensitivity / (2.0 * sigma * sigma))
}

fn check_rho(rho: f64) -> Result<f64> {
    if rho.is_finite() && rho > 0.0 {
        Ok(rho)
    } else {
        Err(out_of_range("rho", rho, "(0, inf)"))
    }
}

/// Bun–Steinke conversion of ρ-zCDP to (ε, δ)-DP: `ε = ρ + 2√(ρ ln(1/δ))` (Bun & Steinke
/// 2016, Prop. 1.3; Cesar–Rogers Lemma 6.3; docs/maths.md §3.4).
///
/// ```
/// let e = composition::zcdp::epsilon_bun_steinke(0.5, 1e-6).unwrap();
/// assert!((e - (0.5 + 2.0 * (0.5 * (1e6f64).ln()).sqrt())).abs() < 1e-12);
/// ```
pub fn epsilon_bun_steinke(rho: f64, delta: f64) -> Result<f64> {
    let rho = check_rho(rho)?;
    let delta = check_delta("delta", delta)?;
    Ok(rho + 2.0 * (rho * -delta.ln()).sqrt())
}

/// The ρ whose Bun–Steinke conversion gives exactly `epsilon` at `delta` (the inverse
/// of [`epsilon_bun_steinke`]): `√ρ = √(L + ε) − √L` with `L = ln(1/δ)`, computed as
/// `ε/(√(L + ε) + √L)` to avoid cancellation.
///
/// ```
/// use composition::zcdp::{epsilon_bun_steinke, rho_for_epsilon_bun_steinke};
/// let rho = rho_for_epsilon_bun_steinke(1.0, 1e-6).unwrap();
/// assert!((epsilon_bun_steinke(rho, 1e-6).unwrap() - 1.0).abs() < 1e-12);
/// ```
pub fn rho_for_epsilon_bun_steinke(epsilon: f64, delta: f64) -> Result<f64> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(out_of_range("epsilon", epsilon, "(0, inf)"));
    }
    let l = -check_delta("delta", delta)?.ln();
    let s = epsilon / ((l + epsilon).sqrt() + l.sqrt());
    Ok(s * s)
}

/// `ε(α)` of the Canonne–Kamath–Steinke conversion for one Rényi order α > 1.
fn cks_epsilon_at(rho: f64, ln_inv_delta: f64, alpha: f64) -> f64 {
    let am1 = alpha - 1.0;
    // α ln(1 − 1/α) = α ln_1p(−1/α).
    alpha * rho + (ln_inv_delta - am1.ln() + alpha * (-1.0 / alpha).ln_1p()) / am1
}

/// `δ(ε)` of the Canonne–Kamath–Steinke conversion at one Rényi order α > 1.
fn cks_ln_delta_at(rho: f64, epsilon: f64, alpha: f64) -> f64 {
    let am1 = alpha - 1.0;
    am1 * (alpha * rho - epsilon) - am1.ln() + alpha * (-1.0 / alpha).ln_1p()
}

/// Seeds over `u = ln(α − 1)`: α from 1 + e⁻²⁰ to 1 + e¹⁵.
fn alpha_seeds() -> Vec<f64> {
    (0..=140).map(|j| -20.0 + 0.25 * j as f64).collect()
}

/// Canonne–Kamath–Steinke (2020) conversion of ρ-zCDP to (ε, δ)-DP, the smallest ε over
/// Rényi orders α > 1 (docs/maths.md §3.4); clamped at 0. Scan over ln(α − 1) and Brent
/// (argmin) refinement; the best ε evaluated is returned, which is a valid ε for `delta`
/// (the safe side of the infimum).
///
/// ```
/// use composition::zcdp::{epsilon_bun_steinke, epsilon_cks};
/// let (rho, delta) = (0.5, 1e-6);
/// assert!(epsilon_cks(rho, delta).unwrap() < epsilon_bun_steinke(rho, delta).unwrap());
/// ```
pub fn epsilon_cks(rho: f64, delta: f64) -> Result<f64> {
    let rho = check_rho(rho)?;
    let l = -check_delta("delta", delta)?.ln();
    let neg = |u: f64| -cks_epsilon_at(rho, l, 1.0 + u.exp());
    let (_, best) = maximize_ln(&neg, alpha_seeds(), 3);
    Ok((-best).max(0.0))
}

/// `δ(ε)` of the Canonne–Kamath–Steinke conversion: the smallest δ over Rényi orders
/// α > 1 (docs/maths.md §3.4), minimised like [`epsilon_cks`] (the best value evaluated:
/// never below the true infimum).
///
/// ```
/// // docs/maths.md §3.4: μ = 1 (ρ = 1/2), ε = 2 gives δ ≈ 0.0543.
/// let d = composition::zcdp::delta_cks(0.5, 2.0).unwrap();
/// assert!((d - 0.0543).abs() < 5e-4);
/// ```
pub fn delta_cks(rho: f64, epsilon: f64) -> Result<f64> {
    let rho = check_rho(rho)?;
    if !(epsilon.is_finite() && epsilon >= 0.0) {
        return Err(out_of_range("epsilon", epsilon, "[0, inf)"));
    }
    let neg = |u: f64| -cks_ln_delta_at(rho, epsilon, 1.0 + u.exp());
    let (_, best) = maximize_ln(&neg, alpha_seeds(), 3);
    Ok((-best).exp().min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cks_optimum_matches_a_dense_scan() {
        for &(rho, delta) in &[(0.5, 1e-6), (0.01, 1e-3), (5.0, 1e-10), (0.005, 0.1)] {
            let l = -f64::ln(delta);
            let scan = (0..200_000)
                .map(|j| cks_epsilon_at(rho, l, 1.0 + (-20.0 + 35.0 * j as f64 / 2e5).exp()))
                .fold(f64::INFINITY, f64::min)
                .max(0.0);
            let e = epsilon_cks(rho, delta).unwrap();
            assert!(e <= scan * (1.0 + 1e-9) + 1e-15, "{e} vs scan {scan}");
            assert!(e >= scan * (1.0 - 1e-6), "{e} vs scan {scan}");
        }
    }

    #[test]
    fn cks_delta_and_epsilon_are_inverse() {
        for &(rho, delta) in &[(0.5, 1e-6), (0.02, 1e-4)] {
            let e = epsilon_cks(rho, delta).unwrap();
            let d = delta_cks(rho, e).unwrap();
            assert!((d / delta - 1.0).abs() < 1e-6, "{d} vs {delta}");
        }
    }

    #[test]
    fn invalid_inputs_are_errors() {
        assert!(epsilon_bun_steinke(0.0, 1e-6).is_err());
        assert!(epsilon_cks(0.1, 1.0).is_err());
        assert!(gaussian_rho(1.0, 0.0).is_err());
        assert!(delta_cks(0.1, -1.0).is_err());
    }
}
