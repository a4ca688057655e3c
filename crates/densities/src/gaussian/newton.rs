//! Newton iterations for the analytic σ and for the profile's inverse in ε (Balle &
//! Wang 2018, Theorem 8; the derivatives below follow from `e^ε φ(b) = φ(a)`).
//!
//! With `a = ε/μ − μ/2`, `b = a + μ` and `δ(ε; μ) = Φ(−a) − e^ε Φ(−b)`:
//!
//! * `∂δ/∂μ = φ(a)` (the two `∓ε/μ²` terms cancel, since `e^ε φ(b) = φ(a)`);
//! * `∂δ/∂ε = −e^ε Φ(−b)`.
//!
//! Both iterations solve (Halley's method for σ, where the second derivative is cheap;
//! Newton's for ε) `G = √(−2 ln δ) = √(−2 ln δ_target)`: for small δ,
//! `ln δ ≈ −a²/2 − O(ln a)`, so `G` is increasing and close to linear in `a` (and in ε
//! at fixed μ). The iteration starts at `a = √(−2 ln δ_target)`, usually just right of
//! the root, and settles in 3 to 5 profile evaluations on the test grids. The steps are
//! kept inside the bracket known so far (bisection otherwise), and the iteration gives
//! up after [`MAX_STEPS`] (the callers then fall back to the last-bit root search).
//!
//! The result is then moved by single ulps to the smallest double, near the root, that
//! passes the profile test of the public functions (`profile_at_most`), so the
//! certification is exactly the one the root search used.

use std::f64::consts::FRAC_1_SQRT_2;

use super::{hockey_parts, ln_scaled, profile_at_most, Hockey, Kernel, Taylor};
use crate::normal::exp_neg_half_sq_mul;

/// `1/√(2π)`.
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
/// Newton steps before giving up.
const MAX_STEPS: usize = 40;
/// Single-ulp moves allowed in the final certification before giving up.
const MAX_WALK: usize = 16;
/// A Newton step this small relative to the scale leaves an error of order its square.
const SETTLED: f64 = 1e-9;
/// A Halley step this small leaves an error of order its cube.
const SETTLED_CUBIC: f64 = 1e-7;

/// The profile `H = δ` at `(a, a + h)` in log space with the two ratios the
/// derivatives need.
struct Point {
    /// `ln H`.
    ln_h: f64,
    /// `φ(a)/H`.
    phi_over_h: f64,
    /// `e^ε Φ(−b)/H`.
    tail_over_h: f64,
}

/// [`Point`] at `a`, `b = a + h`; `None` outside the range where it is finite.
fn point(a: f64, h: f64, want_tail: bool) -> Option<Point> {
    if !(a.abs() < 1e150 && h > 0.0 && h < 1e150) {
        return None;
    }
    let y = (a + h) * FRAC_1_SQRT_2;
    let p = match hockey_parts::<Taylor>(a, h) {
        Hockey::OneMinus(t) => {
            let hv = 1.0 - t;
            let tail = if want_tail {
                exp_neg_half_sq_mul(a, 0.5 * Taylor::erfcx(y)) / hv
            } else {
                0.0
            };
            Point {
                ln_h: (-t).ln_1p(),
                phi_over_h: exp_neg_half_sq_mul(a, FRAC_1_SQRT_2PI) / hv,
                tail_over_h: tail,
            }
        }
        // H = e^{−a²/2} m, φ(a) = e^{−a²/2}/√(2π), e^ε Φ(−b) = ½ e^{−a²/2} erfcx(b/√2).
        Hockey::Scaled(m) => Point {
            ln_h: ln_scaled(a, m),
            phi_over_h: FRAC_1_SQRT_2PI / m,
            tail_over_h: if want_tail {
                0.5 * Taylor::erfcx(y) / m
            } else {
                0.0
            },
        },
    };
    let ok = p.ln_h < 0.0 && p.phi_over_h.is_finite() && p.tail_over_h.is_finite();
    ok.then_some(p)
}

/// One safeguarded Newton step on an increasing function with value `gap` and slope
/// `slope` at `x`, inside the bracket `(lo, hi)` (updated here).
fn step(x: f64, gap: f64, slope: f64, lo: &mut f64, hi: &mut f64) -> f64 {
    if gap == 0.0 {
        return x;
    }
    if gap > 0.0 {
        *hi = x;
    } else {
        *lo = x;
    }
    let next = x - gap / slope;
    if next > *lo && next < *hi {
        return next;
    }
    match (lo.is_finite(), hi.is_finite()) {
        (true, true) => 0.5 * (*lo + *hi),
        (true, false) => *lo + lo.abs().max(1.0),
        (false, true) => *hi - hi.abs().max(1.0),
        (false, false) => f64::NAN,
    }
}

/// Moves `x` (positive) by single ulps to the smallest double near it for which `passes`
/// holds; `None` if that takes more than [`MAX_WALK`] moves.
fn certify(mut x: f64, passes: impl Fn(f64) -> bool) -> Option<f64> {
    let down = |v: f64| f64::from_bits(v.to_bits() - 1);
    let up = |v: f64| f64::from_bits(v.to_bits() + 1);
    if passes(x) {
        for _ in 0..MAX_WALK {
            let below = down(x);
            if below <= 0.0 || !passes(below) {
                return Some(x);
            }
            x = below;
        }
    } else {
        for _ in 0..MAX_WALK {
            x = up(x);
            if !x.is_finite() {
                return None;
            }
            if passes(x) {
                return Some(x);
            }
        }
    }
    None
}

/// `μ` with `ε/μ − μ/2 = a`, i.e. `μ = √(a² + 2ε) − a`, without cancellation; and `b`.
fn mu_of_a(epsilon: f64, a: f64) -> (f64, f64) {
    let b = (a * a + 2.0 * epsilon).sqrt();
    let mu = if a >= 0.0 {
        2.0 * epsilon / (a + b)
    } else {
        b - a
    };
    (mu, b)
}

/// The analytic σ (see [`super::analytic_sigma`]) for valid arguments, or `None` if the
/// iteration does not settle.
pub(super) fn sigma(epsilon: f64, delta: f64, ln_delta: f64, sensitivity: f64) -> Option<f64> {
    let target = (-2.0 * ln_delta).sqrt();
    let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
    let mut a = target;
    let mut settled = false;
    for _ in 0..MAX_STEPS {
        let (mu, b) = mu_of_a(epsilon, a);
        let p = point(a, mu, false)?;
        let g = (-2.0 * p.ln_h).sqrt();
        // L = ln δ: L′ = −q r with q = φ(a)/δ, r = μ/b (dμ/da = −μ/b); q′ = q(q r − a)
        // (φ′ = −aφ), r′ = −(r/b)(1 + a/b), so L″ = q r (a − q r + (1 + a/b)/b).
        // G = √(−2L): G′ = −L′/G, G″ = (−L″ − G′²)/G. Halley's step −f/(G′ − f G″/(2G′)),
        // f = G − target, is Newton's with that slope.
        // (Reciprocals taken once: divisions dominate the step's own cost.)
        let (inv_b, inv_g) = (1.0 / b, 1.0 / g);
        let qr = p.phi_over_h * mu * inv_b;
        let d1 = qr * inv_g;
        let l2 = qr * (a - qr + (1.0 + a * inv_b) * inv_b);
        let d2 = (-l2 - d1 * d1) * inv_g;
        let f = g - target;
        let halley = d1 - f * d2 * (0.5 / d1);
        let slope = if halley > 0.5 * d1 && halley.is_finite() {
            halley
        } else {
            d1
        };
        let next = step(a, f, slope, &mut lo, &mut hi);
        if !next.is_finite() {
            return None;
        }
        let moved = (next - a).abs();
        a = next;
        if moved <= SETTLED_CUBIC * b {
            settled = true;
            break;
        }
    }
    if !settled {
        return None;
    }
    let sigma = sensitivity / mu_of_a(epsilon, a).0;
    if !(sigma.is_finite() && sigma > 0.0) {
        return None;
    }
    certify(sigma, |s| {
        profile_at_most::<Taylor>(epsilon, sensitivity / s, delta, ln_delta)
    })
}

/// The least ε (see [`super::gaussian_epsilon`]) for `μ ∈ (0, ∞)`, `δ ∈ (0, 1)` not met
/// at ε = 0, or `None` if the iteration does not settle.
pub(super) fn epsilon(delta: f64, ln_delta: f64, mu: f64) -> Option<f64> {
    let target = (-2.0 * ln_delta).sqrt();
    let (mut lo, mut hi) = (0.0, f64::INFINITY);
    // Start where a = √(−2 ln δ): G ≥ a there, so at or right of the root.
    let mut e = mu * (target + 0.5 * mu);
    let mut settled = false;
    for _ in 0..MAX_STEPS {
        let a = e / mu - 0.5 * mu;
        let p = point(a, mu, true)?;
        let g = (-2.0 * p.ln_h).sqrt();
        // dG/dε = −(d ln δ/dε)/G = (e^ε Φ(−b)/δ)/G.
        let slope = p.tail_over_h / g;
        let next = step(e, g - target, slope, &mut lo, &mut hi);
        if !next.is_finite() {
            return None;
        }
        let moved = (next - e).abs();
        e = next;
        if moved <= SETTLED * e {
            settled = true;
            break;
        }
    }
    if !settled || e.is_nan() || e <= 0.0 {
        return None;
    }
    certify(e, |x| profile_at_most::<Taylor>(x, mu, delta, ln_delta))
}
