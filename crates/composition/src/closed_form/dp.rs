//! Optimal homogeneous composition of `k` ε-DP mechanisms (Kairouz, Oh & Viswanath 2015,
//! Theorem 3.3; Murtagh & Vadhan 2016; docs/maths.md §3.1), and its (ε, δ₀) variant.
//!
//! The worst case for one ε-DP mechanism is randomized response: privacy loss `+ε` with
//! P-probability `q = e^ε/(1+e^ε)` and `−ε` with probability `1 − q`. After `k` rounds with
//! `i` losses of `−ε` the loss is `(k − 2i)ε`, so
//!
//! `δ(ε_g) = Σ_{i : (k−2i)ε > ε_g} b(i; k, 1−q) · (1 − e^{ε_g − (k−2i)ε})`,
//!
//! which is docs/maths.md §3.1's `(1+e^ε)^{−k} Σ C(k,i) (e^{(k−i)ε} − e^{ε_g+iε})_+` with the
//! factor `e^{(k−i)ε}` absorbed into the binomial probability `b(i; k, 1−q)`.
//!
//! # Numerics
//! Only the positive terms `i < (k − ε_g/ε)/2` are summed; the factor
//! `1 − e^{ε_g − (k−2i)ε}` is `−expm1(·)` (no cancellation next to the threshold). The sum
//! starts at `i_s = min(mode, i_max)` with `ln b(i_s)` from Loader's saddle-point form
//! (Loader 2000; crate-private `binomial` module) and runs outward with the exact ratio
//! `b(i)/b(i+1) = (i+1)/(k−i)·e^ε`, in linear space relative to `b(i_s)`, until the bound on the
//! remaining terms is below 1e-17 of the sum. So `ln δ` is accurate to ~1e-13 relative for
//! any `k ≤ 2⁵²` and never overflows; the cost is O(√k) terms (about 1500 at `k = 1e5`).

use super::binomial::ln_binom_pmf;
use super::invert::{at_or_below, invert_decreasing, next_up};
use crate::error::{
    check_delta, check_delta0, check_dp_count, check_eps, check_eps_g, CompositionError, Result,
};

/// Relative size of the neglected tail of the sum.
const TAIL: f64 = 1e-17;

/// `(θ, 1−θ)`: P-probabilities of the losses `−ε` and `+ε` of randomized response,
/// `θ = 1/(1+e^ε)`, both with full relative accuracy for every `ε > 0`.
pub(crate) fn rr_probs(eps: f64) -> (f64, f64) {
    let e = (-eps).exp();
    (e / (1.0 + e), 1.0 / (1.0 + e))
}

/// `ln δ(ε_g)` of `k`-fold composition of ε-DP (docs/maths.md §3.1), for valid inputs.
pub(crate) fn ln_delta_unchecked(k: u64, eps: f64, eps_g: f64) -> f64 {
    let kf = k as f64;
    // Exponent of the hinge factor of term i; term i is active iff it is < 0.
    let expo = |i: u64| eps_g - (kf - 2.0 * i as f64) * eps;
    // Largest active i.
    let r = 0.5 * (kf - eps_g / eps);
    let mut i_max: i64 = (r.ceil() - 1.0).clamp(-1.0, kf) as i64;
    while i_max >= 0 && expo(i_max as u64) >= 0.0 {
        i_max -= 1;
    }
    while i_max < k as i64 && expo((i_max + 1) as u64) < 0.0 {
        i_max += 1;
    }
    if i_max < 0 {
        return f64::NEG_INFINITY;
    }
    let i_max = i_max as u64;
    let (theta, one_m_theta) = rr_probs(eps);
    let mode = (((kf + 1.0) * theta).floor() as u64).min(k);
    let i_s = mode.min(i_max);
    let ln_start = ln_binom_pmf(i_s, k, theta, one_m_theta);
    let up = (-eps).exp(); // b(i+1)/b(i) = (k−i)/(i+1) · e^{−ε}
    let down = eps.exp(); // b(i)/b(i+1) = (i+1)/(k−i) · e^{ε}
    let h = |i: u64| -(expo(i).exp_m1());

    let mut sum = h(i_s);
    // Downward from i_s: binomial weights decrease (i_s ≤ mode), h increases towards 1.
    let mut v = 1.0;
    let mut i = i_s;
    while i > 0 {
        i -= 1;
        let rho = (i + 1) as f64 / (k - i) as f64 * down;
        v *= rho;
        if v == 0.0 {
            break;
        }
        sum += v * h(i);
        // Remaining terms ≤ v·(ρ + ρ² + …) since the ratios keep decreasing and h ≤ 1.
        if rho < 1.0 && v * rho / (1.0 - rho) < TAIL * sum {
            break;
        }
    }
    // Upward from the mode to i_max (only when i_s = mode < i_max): both factors decrease.
    let mut v = 1.0;
    let mut i = i_s;
    while i < i_max {
        let rho = (k - i) as f64 / (i + 1) as f64 * up;
        i += 1;
        v *= rho;
        if v == 0.0 {
            break;
        }
        let hi = h(i);
        sum += v * hi;
        let rho_next = (k - i) as f64 / (i + 1) as f64 * up;
        if rho_next < 1.0 && v * hi * rho_next / (1.0 - rho_next) < TAIL * sum {
            break;
        }
    }
    ln_start + sum.ln()
}

/// Optimal δ of the `k`-fold (adaptive) composition of ε-DP mechanisms at overall budget
/// `ε_g`: `δ(ε_g) = (1+e^ε)^{−k} Σ_{i=0}^{k} C(k,i) (e^{(k−i)ε} − e^{ε_g+iε})_+`
/// (Kairouz–Oh–Viswanath 2015, Thm 3.3; Murtagh–Vadhan 2016; docs/maths.md §3.1).
///
/// Exact up to floating point (relative error ~1e-13 for every `k ≤ 2⁵²`); may underflow
/// to 0 where [`dp_ln_delta`] is still finite.
///
/// ```
/// // One mechanism: δ(0) is the total variation tanh(ε/2) of randomized response.
/// let d = composition::dp_delta(1, 1.0, 0.0).unwrap();
/// assert!((d - (0.5f64).tanh()).abs() < 1e-15);
/// ```
pub fn dp_delta(k: u64, eps: f64, eps_g: f64) -> Result<f64> {
    dp_ln_delta(k, eps, eps_g).map(f64::exp)
}

/// Natural log of [`dp_delta`] (docs/maths.md §3.1), finite far below the underflow of δ;
/// `−∞` when `ε_g ≥ kε`.
///
/// ```
/// let l = composition::dp_ln_delta(100_000, 1.0, 99_000.0).unwrap();
/// assert!(l.is_finite() && l < -1000.0);
/// ```
pub fn dp_ln_delta(k: u64, eps: f64, eps_g: f64) -> Result<f64> {
    check_dp_count("k", k)?;
    check_eps("epsilon", eps)?;
    check_eps_g(eps_g)?;
    Ok(ln_delta_unchecked(k, eps, eps_g))
}

/// Least `ε_g ≥ 0` with `δ(ε_g) ≤ δ` for `k`-fold composition of ε-DP, inverting the
/// decreasing map of [`dp_delta`] (docs/maths.md §3.1; Kairouz–Oh–Viswanath 2015, Thm 3.3).
///
/// Returns 0 when `δ ≥ δ(0)`. Otherwise a bracketing root finder runs to machine precision
/// and returns the upper end of its final bracket, so `dp_delta(k, ε, returned) ≤ δ`.
///
/// ```
/// let e = composition::dp_epsilon(100, 0.1, 1e-6).unwrap();
/// assert!(composition::dp_delta(100, 0.1, e).unwrap() <= 1e-6);
/// assert!(e < 100.0 * 0.1);
/// ```
pub fn dp_epsilon(k: u64, eps: f64, delta: f64) -> Result<f64> {
    check_dp_count("k", k)?;
    check_eps("epsilon", eps)?;
    check_delta("delta", delta)?;
    Ok(epsilon_unchecked(k, eps, delta))
}

fn epsilon_unchecked(k: u64, eps: f64, target: f64) -> f64 {
    let f = |x: f64| ln_delta_unchecked(k, eps, x);
    if at_or_below(f(0.0), target) {
        return 0.0;
    }
    let ln_target = target.ln();
    let kf = k as f64;
    let top = kf * eps;
    // Advanced composition (docs/maths.md §3.3 with ℓ = k) is a valid upper bound on the
    // optimum: use it to shrink the bracket when it is below kε and passes the test.
    let ac = kf * expected_loss_unchecked(eps) + eps * (-2.0 * kf * ln_target).sqrt();
    let hi = if ac < top && at_or_below(f(ac), target) {
        ac
    } else {
        top
    };
    invert_decreasing(f, target, 0.0, hi, 1e-16 * eps)
}

/// δ of `k` mechanisms that are each (ε, δ₀)-DP, composed optimally:
/// `δ_total(ε_g) = 1 − (1 − δ₀)^k (1 − δ(ε_g))` with δ(ε_g) of [`dp_delta`]
/// (Kairouz–Oh–Viswanath 2015, Thm 3.3; docs/maths.md §3.1). Computed as
/// `−expm1(k·ln1p(−δ₀) + ln1p(−δ(ε_g)))`.
///
/// ```
/// let d = composition::dp_delta_approx(10, 0.5, 1e-8, 2.0).unwrap();
/// let pure = composition::dp_delta(10, 0.5, 2.0).unwrap();
/// assert!(d > pure && d < pure + 1e-7);
/// ```
pub fn dp_delta_approx(k: u64, eps: f64, delta0: f64, eps_g: f64) -> Result<f64> {
    check_delta0(delta0)?;
    let d = dp_delta(k, eps, eps_g)?;
    Ok(-((k as f64) * (-delta0).ln_1p() + (-d).ln_1p()).exp_m1())
}

/// Least `ε_g` with `δ_total(ε_g) ≤ δ` for `k` mechanisms each (ε, δ₀)-DP (inverse of
/// [`dp_delta_approx`]; Kairouz–Oh–Viswanath 2015, Thm 3.3; docs/maths.md §3.1).
///
/// The pure part must reach `δ' = 1 − (1−δ)/(1−δ₀)^k`; if `δ' ≤ 0` the target is below
/// `1 − (1−δ₀)^k` and [`CompositionError::Unreachable`] is returned. Safe side as in
/// [`dp_epsilon`].
///
/// ```
/// let e = composition::dp_epsilon_approx(20, 0.3, 1e-9, 1e-6).unwrap();
/// assert!(composition::dp_delta_approx(20, 0.3, 1e-9, e).unwrap() <= 1e-6);
/// assert!(composition::dp_epsilon_approx(20, 0.3, 1e-6, 1e-6).is_err());
/// ```
pub fn dp_epsilon_approx(k: u64, eps: f64, delta0: f64, delta: f64) -> Result<f64> {
    check_dp_count("k", k)?;
    check_eps("epsilon", eps)?;
    check_delta0(delta0)?;
    check_delta("delta", delta)?;
    let ln_keep = (k as f64) * (-delta0).ln_1p();
    let inner = -((-delta).ln_1p() - ln_keep).exp_m1();
    if inner <= 0.0 {
        return Err(CompositionError::Unreachable {
            target: delta,
            floor: -ln_keep.exp_m1(),
        });
    }
    let mut e = epsilon_unchecked(k, eps, inner);
    // Rounding in the conversion δ ↔ δ_total may disagree by an ulp: step up until the
    // public δ_total is on the safe side.
    let total = |x: f64| {
        -((k as f64) * (-delta0).ln_1p() + (-ln_delta_unchecked(k, eps, x).exp()).ln_1p()).exp_m1()
    };
    for _ in 0..64 {
        if total(e) <= delta {
            break;
        }
        e = next_up(e);
    }
    Ok(e)
}

/// `ε tanh(ε/2) = ε(e^ε − 1)/(e^ε + 1)`, for valid `ε`.
pub(crate) fn expected_loss_unchecked(eps: f64) -> f64 {
    eps * (0.5 * eps).tanh()
}

/// Expected privacy loss of one ε-DP mechanism in its worst case (randomized response):
/// `E_P[L] = qε − (1−q)ε = ε(e^ε − 1)/(e^ε + 1)` (≈ ε²/2; Cesar–Rogers Lemma 3.2,
/// docs/maths.md §3.2), computed as `ε·tanh(ε/2)`.
///
/// ```
/// let e = 0.5f64;
/// let d = composition::dp_expected_loss(e).unwrap();
/// assert!((d - e * (e.exp() - 1.0) / (e.exp() + 1.0)).abs() < 1e-16);
/// ```
pub fn dp_expected_loss(eps: f64) -> Result<f64> {
    check_eps("epsilon", eps)?;
    Ok(expected_loss_unchecked(eps))
}

/// ε of `k` Gaussian mechanisms (μ₀ = sensitivity/σ each) when each is first turned into
/// an (ε₀, δ₀)-DP guarantee on its own and the k guarantees are composed optimally:
/// `min over ε₀ of dp_epsilon_approx(k, ε₀, δ₀(ε₀), δ)` with `δ₀` the Gaussian profile at
/// μ₀ (Cesar & Rogers, Section 6, the per-release calibration of Lemma 6.1 composed by
/// Kairouz–Oh–Viswanath 2015, Thm 3.3; docs/maths.md §3.4 and §3.1). Every ε₀ gives a
/// valid ε, so the numerical minimum (a scan of ln ε₀ over [−9, 3] in steps of 0.001,
/// then Brent's method) can only sit above the true infimum: the safe
/// side. The objective has kinks (the binomial sum's terms switch on and off with ε₀) and
/// several valleys, so Brent runs in each of the scan's 20 lowest local minima (one
/// Brent after a scan in steps of 0.05 stopped in a valley 0.13 % above the best).
///
/// ```
/// let e = composition::dp::gaussian_via_dp_epsilon(0.5, 20, 1e-6).unwrap();
/// // Never better than the exact composition, the Gaussian with μ = √20·μ₀, and never
/// // worse than basic composition of 20 releases at δ/20 each (a feasible ε₀).
/// let exact = densities::gaussian::gaussian_epsilon(1e-6, 0.5 * 20f64.sqrt());
/// let basic = 20.0 * densities::gaussian::gaussian_epsilon(1e-6 / 20.0, 0.5);
/// assert!(exact <= e && e <= basic);
/// ```
pub fn gaussian_via_dp_epsilon(mu0: f64, k: u64, delta: f64) -> Result<f64> {
    use argmin::core::{CostFunction, Error as ArgminError, Executor, State};
    use argmin::solver::brent::BrentOpt;
    check_delta("delta", delta)?;
    check_dp_count("k", k)?;
    if !(mu0.is_finite() && mu0 > 0.0) {
        return Err(crate::error::out_of_range("mu0", mu0, "(0, inf)"));
    }
    let total = |u: f64| -> f64 {
        let e0 = u.exp();
        let d0 = densities::gaussian::gaussian_delta(e0, mu0);
        dp_epsilon_approx(k, e0, d0, delta).unwrap_or(f64::INFINITY)
    };
    let seeds: Vec<f64> = (0..=12_000).map(|j| -9.0 + 0.001 * j as f64).collect();
    let vals: Vec<f64> = seeds.iter().map(|&u| total(u)).collect();
    let best = vals.iter().copied().fold(f64::INFINITY, f64::min);
    if !best.is_finite() {
        // δ₀ falls with ε₀: at the scan's top, the least δ any per-release ε₀ leaves.
        let d0 = densities::gaussian::gaussian_delta(3f64.exp(), mu0);
        return Err(CompositionError::Unreachable {
            target: delta,
            floor: -(k as f64 * (-d0).ln_1p()).exp_m1(),
        });
    }
    struct Cost<'a>(&'a dyn Fn(f64) -> f64);
    impl CostFunction for Cost<'_> {
        type Param = f64;
        type Output = f64;
        fn cost(&self, u: &f64) -> std::result::Result<f64, ArgminError> {
            Ok((self.0)(*u))
        }
    }
    // The objective has kinks where the binomial sum's terms switch on and off, hence
    // several valleys: Brent in each of the 20 lowest local minima of the scan.
    let mut minima: Vec<usize> = (0..vals.len())
        .filter(|&j| {
            vals[j].is_finite()
                && (j == 0 || vals[j] <= vals[j - 1])
                && (j + 1 == vals.len() || vals[j] <= vals[j + 1])
        })
        .collect();
    minima.sort_by(|&a, &b| vals[a].total_cmp(&vals[b]));
    let mut out = best;
    // Below ε₀* with δ₀(ε₀*) = 1 − (1 − δ)^{1/k} nothing is reachable, and just above it
    // the bound tends to the basic composition kε₀* (all of δ spent on the δ₀'s): often
    // the infimum, at the edge of a valley no scan resolves. Points just above ε₀*.
    let d0_star = -((-delta).ln_1p() / k as f64).exp_m1();
    let u_star = densities::gaussian::gaussian_epsilon(d0_star, mu0).ln();
    if u_star.is_finite() {
        for step in [1e-13, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6] {
            out = out.min(total(u_star + step * u_star.abs().max(1.0)));
        }
    }
    for &j in minima.iter().take(20) {
        let lo = seeds[j.saturating_sub(1)];
        let hi = seeds[(j + 1).min(seeds.len() - 1)];
        let refined = Executor::new(
            Cost(&total),
            BrentOpt::new(lo, hi).set_tolerance(1e-10, 1e-12),
        )
        .configure(|st| st.max_iters(100))
        .run()
        .ok()
        .and_then(|r| r.state().get_best_param().copied())
        .map(total)
        .unwrap_or(f64::INFINITY);
        out = out.min(refined);
    }
    Ok(out)
}
