//! Directed rounding for certified ends (docs/accountant.md §5).
//!
//! A certified bound is one-sided only if the floating-point operations that form it
//! *after* the last charged error term (a product of a count and a grid step, a sum, an
//! `exp` of a final `ln δ`, a reciprocal, a decimal printout) are rounded away from the
//! side they bound. Rust rounds to nearest; these helpers move a result outward by whole
//! ulps, which covers any operation whose error is at most that many ulps (IEEE `+ − × ÷`
//! are correctly rounded, within half an ulp; the platform's `exp` and `ln` within one).

/// The next representable `f64` above `x` (`+∞` and NaN unchanged; `-0.0` and `0.0`
/// give the least positive subnormal).
pub fn up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let b = x.to_bits();
    f64::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

/// The next representable `f64` below `x` (`−∞` and NaN unchanged).
pub fn down(x: f64) -> f64 {
    -up(-x)
}

/// `x` moved `n` ulps up: an upper bound on a value that `x` approximates within `n` ulps.
pub fn up_by(x: f64, n: u32) -> f64 {
    (0..n).fold(x, |v, _| up(v))
}

/// `x` moved `n` ulps down: a lower bound on a value that `x` approximates within `n` ulps.
pub fn down_by(x: f64, n: u32) -> f64 {
    (0..n).fold(x, |v, _| down(v))
}

/// Upper bound on `e^x` whatever the platform's `exp` (within one ulp): its result moved
/// two ulps up (`+∞` stays; `e^{−∞} = 0` exactly).
pub fn exp_up(x: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        return 0.0;
    }
    up_by(x.exp(), 2)
}

/// Lower bound on `e^x`, at least 0: the platform's `exp` moved two ulps down.
pub fn exp_down(x: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        return 0.0;
    }
    down_by(x.exp(), 2).max(0.0)
}

/// `x > 0` rounded onto the lattice `(1 + ρ)^k`: down (`up = false`) or up, exactly (the
/// lattice point computed, then moved a step if floating point put it on the wrong side).
///
/// ```
/// use densities::outward::to_lattice;
/// let (lo, hi) = (to_lattice(1.234, 0.01, false), to_lattice(1.234, 0.01, true));
/// assert!(lo <= 1.234 && 1.234 <= hi && hi / lo < 1.0101);
/// assert_eq!(to_lattice(1.0, 0.3, true), 1.0);
/// ```
pub fn to_lattice(x: f64, rho: f64, up: bool) -> f64 {
    let b = (1.0 + rho).ln();
    let k = (x.ln() / b).floor() as i32;
    let at = |k: i32| (k as f64 * b).exp();
    if up {
        let mut k = k;
        while at(k) < x {
            k += 1;
        }
        at(k)
    } else {
        let mut k = k + 1;
        while at(k) > x {
            k -= 1;
        }
        at(k)
    }
}

/// Upper bound on `a·b` for finite `a, b ≥ 0` (one rounding: one ulp up unless exact).
pub fn mul_up(a: f64, b: f64) -> f64 {
    let p = a * b;
    // The exact residual a·b − p by fma: up only when p fell below the product.
    if a.mul_add(b, -p) > 0.0 {
        up(p)
    } else {
        p
    }
}

/// Lower bound on `a·b` for finite `a, b ≥ 0`.
pub fn mul_down(a: f64, b: f64) -> f64 {
    let p = a * b;
    if a.mul_add(b, -p) < 0.0 {
        down(p)
    } else {
        p
    }
}

/// Upper bound on `a/b` for finite `a ≥ 0`, `b > 0`.
pub fn div_up(a: f64, b: f64) -> f64 {
    let q = a / b;
    // q·b − a < 0 ⇔ q < a/b (b > 0), decided exactly by fma.
    if q.is_finite() && q.mul_add(b, -a) < 0.0 {
        up(q)
    } else {
        q
    }
}

/// Lower bound on `a/b` for finite `a ≥ 0`, `b > 0`.
pub fn div_down(a: f64, b: f64) -> f64 {
    let q = a / b;
    // q·b − a > 0 ⇔ q > a/b (b > 0), decided exactly by fma.
    if q.is_finite() && q.mul_add(b, -a) > 0.0 {
        down(q)
    } else {
        q
    }
}

/// `(lower, upper)` bounds on `a − b` (finite): the rounded difference, moved one ulp
/// where Knuth's TwoSum shows it inexact, on the side it fell.
pub fn sub_bounds(a: f64, b: f64) -> (f64, f64) {
    let s = a - b;
    let bv = s - a;
    let err = (a - (s - bv)) + (-b - bv);
    if err > 0.0 {
        (s, up(s))
    } else if err < 0.0 {
        (down(s), s)
    } else {
        (s, s)
    }
}

/// A decimal string of `10^l10 · (1 ± rel)` in scientific notation with `digits`
/// decimals, rounded up (`upper`) or down in its last digit: a certified printout of a
/// number known only by its decimal logarithm `l10` to within `rel` relative (below
/// `f64`'s range, say).
pub fn sci_from_log10(l10: f64, rel: f64, digits: usize, upper: bool) -> String {
    let mut e = l10.floor();
    let m = 10f64.powf(l10 - e);
    // powf is within a few ulps; `rel` covers the error of l10 itself.
    let mut m = if upper {
        m * (1.0 + rel + 1e-15)
    } else {
        m * (1.0 - rel - 1e-15)
    };
    if m < 1.0 {
        m *= 10.0;
        e -= 1.0;
    } else if m >= 10.0 {
        m /= 10.0;
        e += 1.0;
    }
    let scale = 10f64.powi(digits as i32);
    let mut t = if upper {
        (m * scale).ceil()
    } else {
        (m * scale).floor()
    };
    if t >= 10.0 * scale {
        // 9.99…95 rounded up: exactly the next power of ten.
        t = scale;
        e += 1.0;
    }
    let int = t as u64;
    let p = 10u64.pow(digits as u32);
    let (lead, frac) = (int / p, int % p);
    if digits == 0 {
        format!("{lead}e{e}")
    } else {
        format!("{lead}.{frac:0digits$}e{e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_single_ulps() {
        assert_eq!(up(1.0), 1.0 + f64::EPSILON);
        assert_eq!(down(1.0), 1.0 - f64::EPSILON / 2.0);
        assert_eq!(up(-1.0), -1.0 + f64::EPSILON / 2.0);
        assert_eq!(up(0.0), f64::from_bits(1));
        assert_eq!(down(0.0), -f64::from_bits(1));
        assert_eq!(up(f64::INFINITY), f64::INFINITY);
        assert_eq!(down(f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert_eq!(up(f64::MAX), f64::INFINITY);
        assert_eq!(exp_down(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp_up(f64::NEG_INFINITY), 0.0);
        assert!(exp_up(-800.0) > 0.0 && exp_up(0.0) > 1.0 && exp_down(0.0) < 1.0);
    }

    #[test]
    fn products_and_quotients_bracket_the_exact_value() {
        // 62 × 1.5388 rounds below the product (the bug of issue 33); 3 × 0.1 above.
        let (a, b) = (62.0, 1.5388);
        assert!(a * b < mul_up(a, b) && mul_down(a, b) == a * b);
        assert_eq!(mul_up(2.0, 0.75), 1.5);
        assert_eq!(mul_down(2.0, 0.75), 1.5);
        assert!(div_up(1.0, 3.0) > 1.0 / 3.0 || (1.0f64 / 3.0).mul_add(3.0, -1.0) >= 0.0);
        assert_eq!(div_up(1.0, 4.0), 0.25);
        assert_eq!(sub_bounds(1.0, 0.25), (0.75, 0.75));
        let (lo, hi) = sub_bounds(1.0, 1e-20);
        assert!(lo < 1.0 && hi == 1.0);
    }

    #[test]
    fn scientific_printout_rounds_outward() {
        // 10^-400.5 = 3.1622776601683793…e-401.
        let up = sci_from_log10(-400.5, 1e-13, 11, true);
        let down = sci_from_log10(-400.5, 1e-13, 11, false);
        assert_eq!(up, "3.16227766017e-401");
        assert_eq!(down, "3.16227766016e-401");
        // Carries across a power of ten.
        assert_eq!(sci_from_log10(-3.0 - 1e-17, 1e-13, 3, true), "1.001e-3");
        assert_eq!(sci_from_log10(-3.0, 1e-13, 3, false), "9.999e-4");
        // 10^-2·(1 + 1e-13) needs the next digit up.
        assert_eq!(sci_from_log10(-2.0 - 1e-14, 1e-13, 2, true), "1.01e-2");
        assert_eq!(sci_from_log10(-2.0 - 1e-14, 0.0, 2, true), "1.00e-2");
    }
}
