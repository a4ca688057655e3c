//! Inversion of a decreasing privacy profile `ε_g ↦ δ(ε_g)`: the least `ε_g` with
//! `δ(ε_g) ≤ δ_target`, by a bracketing root finder (Illinois regula falsi on `ln δ`, with
//! bisection whenever `ln δ` is not finite or the secant stalls).
//!
//! One-sidedness: the bracket `[lo, hi]` always satisfies `δ(lo) > δ_target ≥ δ(hi)`
//! (as evaluated), and the *upper* end `hi` is returned. So the returned `ε_g` is safe:
//! `δ(ε_g) ≤ δ_target`, and it exceeds the exact root by at most the final bracket width
//! (a few ulps of `ε_g`, or `1e-16·ε` when the root is at 0).

/// Whether `δ = exp(ln_value)` is `≤ target`. The test is done on δ itself (rounded
/// exactly as the public δ functions round it) wherever δ is a normal number, so that a
/// returned point satisfies `δ(x) ≤ target` for the public function, not only
/// `ln δ(x) ≤ ln target`; below 1e-290 it is done in log space.
pub(crate) fn at_or_below(ln_value: f64, target: f64) -> bool {
    if target > 1e-290 {
        ln_value.exp() <= target
    } else {
        ln_value <= target.ln()
    }
}

/// The next representable `f64` above a finite `x ≥ 0`.
pub(crate) fn next_up(x: f64) -> f64 {
    if x == 0.0 {
        f64::from_bits(1)
    } else {
        f64::from_bits(x.to_bits() + 1)
    }
}

/// Smallest `x ∈ [lo, hi]` (up to the bracket width) with `δ(x) ≤ target`, given
/// `δ(lo) > target ≥ δ(hi)` and `ln_delta = ln δ` non-increasing.
/// `abs_tol` is the absolute bracket width at which to stop when the root is near 0.
pub(crate) fn invert_decreasing(
    ln_delta: impl Fn(f64) -> f64,
    target: f64,
    mut lo: f64,
    mut hi: f64,
    abs_tol: f64,
) -> f64 {
    let ln_target = target.ln();
    let g = |x: f64| {
        let l = ln_delta(x);
        let above = !at_or_below(l, target);
        let v = l - ln_target;
        // Keep the sign consistent with the side test (rounding can disagree by an ulp).
        match (above, v > 0.0) {
            (true, false) => f64::MIN_POSITIVE,
            (false, true) => 0.0,
            _ => v,
        }
    };
    let mut glo = g(lo);
    let mut ghi = g(hi);
    debug_assert!(glo > 0.0 && ghi <= 0.0);
    // Which end was kept in the previous step (−1 lo, +1 hi), for Illinois' halving.
    let mut kept = 0i8;
    let mut width_before = hi - lo;
    for iter in 0..400 {
        let width = hi - lo;
        if width <= (4.0 * f64::EPSILON * hi.abs()).max(abs_tol) {
            break;
        }
        let mid = lo + 0.5 * width;
        // Every third step, require that the bracket has at least halved; else bisect.
        let force_bisect = iter % 3 == 2 && width > 0.5 * width_before;
        if iter % 3 == 2 {
            width_before = width;
        }
        let x = if !force_bisect && glo.is_finite() && ghi.is_finite() && glo != ghi {
            let s = hi - ghi * (hi - lo) / (ghi - glo);
            if s > lo && s < hi {
                s
            } else {
                mid
            }
        } else {
            mid
        };
        let gx = g(x);
        if gx > 0.0 {
            lo = x;
            glo = gx;
            if kept == 1 && ghi.is_finite() {
                ghi *= 0.5;
            }
            kept = 1;
        } else {
            hi = x;
            ghi = gx;
            if kept == -1 && glo.is_finite() {
                glo *= 0.5;
            }
            kept = -1;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_root_of_smooth_and_kinked_maps() {
        // ln δ = −x: root at x = −ln target.
        let x = invert_decreasing(|x| -x, (-3f64).exp(), 0.0, 10.0, 1e-300);
        assert!((x - 3.0).abs() < 1e-14 && (-x).exp() <= (-3f64).exp());
        // A map with a kink and a −∞ plateau.
        let f = |x: f64| {
            if x >= 5.0 {
                f64::NEG_INFINITY
            } else if x < 1.0 {
                -x
            } else {
                -1.0 - 10.0 * (x - 1.0)
            }
        };
        let x = invert_decreasing(f, (-2.5f64).exp(), 0.0, 5.0, 1e-300);
        assert!((x - 1.15).abs() < 1e-14 && f(x).exp() <= (-2.5f64).exp());
    }
}
