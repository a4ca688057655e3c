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
    alpha * rho + (ln_inv_delta - am1.ln() + alpha * ln_one_minus_inv(alpha)) / am1
}

/// `ln(1 − 1/α)` for α > 1 without cancelling: `ln(α − 1) − ln α` near 1 (`α − 1` exact
/// there, Sterbenz), `ln_1p(−1/α)` from 2 on. Error at most `2u(|ln(α − 1)| + 1)` plus
/// two ulps of the result.
fn ln_one_minus_inv(alpha: f64) -> f64 {
    if alpha <= 2.0 {
        (alpha - 1.0).ln() - alpha.ln()
    } else {
        (-1.0 / alpha).ln_1p()
    }
}

/// The sum of the magnitudes the CKS exponent at α is formed from, divided as it is:
/// 32u times it bounds the rounding error of [`cks_epsilon_at`] (`scale = 1/(α − 1)`) and
/// of [`cks_ln_delta_at`] (`scale = 1`, with `(α − 1)(αρ + ε)` for its first term): about
/// eight operations, each within an ulp or two of its result, [`ln_one_minus_inv`]'s
/// bound, and the rounding of `α − 1` inside the logarithm (the `+ 1`).
fn cks_magnitudes(first: f64, rest: f64, alpha: f64, scale: f64) -> f64 {
    let am1 = alpha - 1.0;
    let lf = ln_one_minus_inv(alpha);
    first.abs()
        + scale * (rest.abs() + am1.ln().abs() + alpha * (am1.ln().abs() + 1.0 + lf.abs()) + 1.0)
}

/// `δ(ε)` of the Canonne–Kamath–Steinke conversion at one Rényi order α > 1.
fn cks_ln_delta_at(rho: f64, epsilon: f64, alpha: f64) -> f64 {
    let am1 = alpha - 1.0;
    am1 * (alpha * rho - epsilon) - am1.ln() + alpha * ln_one_minus_inv(alpha)
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

/// [`epsilon_cks`] with its α, rounded outward: the conversion at the best α found plus
/// 32u times [`cks_magnitudes`], moved up an ulp (the sum's own rounding).
pub(crate) fn epsilon_cks_up_at(rho: f64, delta: f64) -> Result<(f64, f64)> {
    let rho = check_rho(rho)?;
    let l = -check_delta("delta", delta)?.ln();
    let neg = |u: f64| -cks_epsilon_at(rho, l, 1.0 + u.exp());
    let (u, _) = maximize_ln(&neg, alpha_seeds(), 3);
    let alpha = 1.0 + u.exp();
    let err = 32.0 * f64::EPSILON * cks_magnitudes(alpha * rho, l, alpha, 1.0 / (alpha - 1.0));
    let e = cks_epsilon_at(rho, l, alpha) + err;
    Ok((alpha, densities::outward::up(e).max(0.0)))
}

/// An ε at which every ρ-zCDP mechanism is (ε, δ)-DP, certified: the Canonne–Kamath–Steinke
/// conversion ([`epsilon_cks`]) at its best α, rounded outward (docs/accountant.md §2.14;
/// checked in exact arithmetic).
///
/// ```
/// let e = composition::zcdp::epsilon_cks_up(0.5, 1e-6).unwrap();
/// assert!(e >= composition::zcdp::epsilon_cks(0.5, 1e-6).unwrap());
/// ```
pub fn epsilon_cks_up(rho: f64, delta: f64) -> Result<f64> {
    epsilon_cks_up_at(rho, delta).map(|r| r.1)
}

/// [`delta_cks`] with its α, rounded outward: `ln δ` at the best α found plus a bound on
/// its rounding error (32u times [`cks_magnitudes`]), then an upward exp.
pub(crate) fn delta_cks_up_at(rho: f64, epsilon: f64) -> Result<(f64, f64)> {
    let rho = check_rho(rho)?;
    if !(epsilon.is_finite() && epsilon >= 0.0) {
        return Err(out_of_range("epsilon", epsilon, "[0, inf)"));
    }
    let neg = |u: f64| -cks_ln_delta_at(rho, epsilon, 1.0 + u.exp());
    let (u, _) = maximize_ln(&neg, alpha_seeds(), 3);
    let alpha = 1.0 + u.exp();
    let first = (alpha - 1.0) * (alpha * rho + epsilon);
    let ld = cks_ln_delta_at(rho, epsilon, alpha)
        + 32.0 * f64::EPSILON * cks_magnitudes(first, 0.0, alpha, 1.0);
    Ok((
        alpha,
        densities::outward::exp_up(densities::outward::up(ld)).min(1.0),
    ))
}

/// A δ at which every ρ-zCDP mechanism is (ε, δ)-DP, certified: [`delta_cks`] at its best
/// α, rounded outward (docs/accountant.md §2.14; checked in exact arithmetic).
pub fn delta_cks_up(rho: f64, epsilon: f64) -> Result<f64> {
    delta_cks_up_at(rho, epsilon).map(|r| r.1)
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

    /// In exact arithmetic: at the α each certified conversion used, the CKS bound
    /// `exp((α−1)(αρ − ε) − ln(α−1) + α ln(1 − 1/α))` with the returned ε is at most δ
    /// (and with the returned δ, at the given ε, at most it). Logarithms enter as rationals
    /// whose exponentials, enclosed at high precision, show them on the safe side; the
    /// f64 values without the outward step are seen to fail somewhere.
    #[test]
    fn certified_conversions_hold_in_exact_arithmetic() {
        use crate::accountant::core::exact_exp::{exp_enclosure as e, rat};
        use num_rational::BigRational;
        use num_traits::One;
        // A rational r ≤ ln y (`below`) or ≥ ln y for the real y (`approx` its float), its
        // exponential's enclosure checked against y.
        let ln_side = |y: &BigRational, approx: f64, below: bool| -> BigRational {
            let r = approx.ln();
            let mut step = f64::EPSILON * r.abs().max(1e-300);
            for _ in 0..200 {
                let q = rat(r);
                let (lo, hi) = e(&q);
                if (below && &hi <= y) || (!below && &lo >= y) {
                    return q;
                }
                // Doubling steps away from the float logarithm, to the safe side.
                let r2 = if below { r - step } else { r + step };
                let q2 = rat(r2);
                let (lo, hi) = e(&q2);
                if (below && &hi <= y) || (!below && &lo >= y) {
                    return q2;
                }
                step *= 2.0;
            }
            panic!("no rational logarithm of {approx} on its side");
        };
        // exp of an upper bound on the CKS exponent at most `bound`?
        let holds = |rho: f64, eps: f64, alpha: f64, bound: f64| -> bool {
            let (ra, rr, re) = (rat(alpha), rat(rho), rat(eps));
            let am1 = &ra - BigRational::one();
            let frac = BigRational::one() - BigRational::one() / &ra;
            let lo_ln_am1 = ln_side(&am1, alpha - 1.0, true);
            let hi_ln_frac = ln_side(&frac, (alpha - 1.0) / alpha, false);
            let expo = &am1 * (&ra * &rr - &re) - lo_ln_am1 + &ra * hi_ln_frac;
            let (_, hi) = e(&expo);
            hi <= rat(bound)
        };
        let mut unrounded_fails = 0;
        for &(rho, delta) in &[(12.5f64, 1e-6), (0.02, 1e-5), (0.3, 1e-10), (1e-4, 0.01)] {
            let (alpha, eps) = epsilon_cks_up_at(rho, delta).unwrap();
            assert!(
                holds(rho, eps, alpha, delta),
                "ρ = {rho}, δ = {delta}: ε = {eps}"
            );
            let plain = cks_epsilon_at(rho, -delta.ln(), alpha);
            if !holds(rho, densities::outward::down_by(plain, 2), alpha, delta) {
                unrounded_fails += 1;
            }
            for &x in &[0.5f64, 3.0, 30.0] {
                let (a2, d) = delta_cks_up_at(rho, x).unwrap();
                if d < 1.0 {
                    assert!(holds(rho, x, a2, d), "ρ = {rho}, ε = {x}: δ = {d}");
                }
            }
        }
        assert!(unrounded_fails > 0, "the test cannot tell a rounded-down ε");
    }

    #[test]
    fn invalid_inputs_are_errors() {
        assert!(epsilon_bun_steinke(0.0, 1e-6).is_err());
        assert!(epsilon_cks(0.1, 1.0).is_err());
        assert!(gaussian_rho(1.0, 0.0).is_err());
        assert!(delta_cks(0.1, -1.0).is_err());
    }
}
