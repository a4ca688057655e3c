//! Bounded-noise families of Dagan & Kur (2022), Definition 2.1 and Corollary 2.3
//! (docs/maths.md §1.4): densities `p(x) = e^{−f(x)} / Z` on `(−1, 1)`.
//!
//! Both families have `f(x) = Σ cₙ x²ⁿ` with every `cₙ ≥ 0` on `(−1, 1)`
//! (`(1 − y)^{−α}` and `e^{1/(1−y)}` expand in `y = x²` with non-negative
//! coefficients). That one fact gives everything the certified bound in the `mgf`
//! crate relies on: `f` is even and convex, `p` is symmetric and log-concave, and for
//! `x ≥ 0` the shifted differences `f(x+s) − f(x−s)` and `f(x+s) + f(x−s) − 2f(x)`
//! are non-decreasing and convex in `x`.

use crate::error::DensityError;

/// A bounded-noise family: the potential `f` of the density `∝ e^{−f}` on `(−1, 1)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BoundedFamily {
    /// `f(x) = (1 − x²)^{−α}`, α > 0 (the authors' experiments use α = 2).
    Power {
        /// The exponent α > 0.
        alpha: f64,
    },
    /// `f(x) = exp(1/(1 − x²))`.
    Exp,
}

/// The two exponents of the shifted potential, `f(x + s) = f(x)·e^{a}` and
/// `f(x − s) = f(x)·e^{b}`, returned as their sum and difference (both computed
/// without cancellation, so they stay accurate for shifts down to 1e-300).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShiftExponents {
    /// `a + b ≥ 0` (second difference of `ln f`, up to higher order).
    pub sum: f64,
    /// `a − b ≥ 0` for `x ≥ 0`.
    pub diff: f64,
}

impl BoundedFamily {
    /// The power family `(1 − x²)^{−α}`; α must be finite and positive.
    ///
    /// ```
    /// use densities::bounded::BoundedFamily;
    /// assert!(BoundedFamily::power(2.0).is_ok());
    /// assert!(BoundedFamily::power(0.0).is_err());
    /// ```
    pub fn power(alpha: f64) -> Result<Self, DensityError> {
        crate::error::check_open("alpha", alpha, 0.0, f64::INFINITY, "(0, inf)")?;
        Ok(Self::Power { alpha })
    }

    /// The family `exp(1/(1 − x²))`.
    pub fn exp() -> Self {
        Self::Exp
    }

    /// Short name as used in manifests and CSVs: `power(2)` or `exp`.
    pub fn name(&self) -> String {
        match self {
            Self::Power { alpha } => format!("power({alpha})"),
            Self::Exp => "exp".to_string(),
        }
    }

    /// The potential `f(x)` for `|x| < 1`; `+∞` for `|x| ≥ 1`.
    pub fn f(&self, x: f64) -> f64 {
        let w = one_minus_sq(x);
        if w <= 0.0 {
            return f64::INFINITY;
        }
        match *self {
            Self::Power { alpha } => (-alpha * w.ln()).exp(),
            Self::Exp => (1.0 / w).exp(),
        }
    }

    /// The derivative `f'(x)` for `|x| < 1`.
    pub fn f_prime(&self, x: f64) -> f64 {
        let w = one_minus_sq(x);
        if w <= 0.0 {
            return f64::INFINITY.copysign(x);
        }
        match *self {
            Self::Power { alpha } => 2.0 * alpha * x * (-(alpha + 1.0) * w.ln()).exp(),
            Self::Exp => self.f(x) * 2.0 * x / (w * w),
        }
    }

    /// Exponents of `f(x ± s)/f(x)` for `0 ≤ x`, `s > 0`, `x + s < 1`.
    ///
    /// For the power family `a = −α ln(1 − (2xs + s²)/w)`, `b = −α ln(1 − (s² − 2xs)/w)`
    /// with `w = 1 − x²`; expanding the products by hand gives
    /// `a + b = −α ln(1 − s²(2 + 2x² − s²)/w²)` and
    /// `a − b = −α ln(1 − 4xs/(w − s² + 2xs))`.
    /// For the exp family `a = 1/(1 − (x+s)²) − 1/w`, and
    /// `a + b = 2s²(1 + 3x² − s²)/(w w₊ w₋)`, `a − b = 4xs/(w₊ w₋)` with
    /// `w± = 1 − (x ± s)²`. Each form is free of cancellation.
    pub fn shift_exponents(&self, x: f64, s: f64) -> ShiftExponents {
        let w = one_minus_sq(x);
        let s2 = s * s;
        match *self {
            Self::Power { alpha } => {
                let sum = -alpha * (-(s2 * (2.0 + 2.0 * x * x - s2)) / (w * w)).ln_1p();
                let diff = -alpha * (-(4.0 * x * s) / (w - s2 + 2.0 * x * s)).ln_1p();
                ShiftExponents { sum, diff }
            }
            Self::Exp => {
                let wp = one_minus_sq(x + s);
                let wm = one_minus_sq(x - s);
                let sum = 2.0 * s2 * (1.0 + 3.0 * x * x - s2) / (w * wp * wm);
                let diff = 4.0 * x * s / (wp * wm);
                ShiftExponents { sum, diff }
            }
        }
    }
}

/// `1 − x²` computed as `(1 − x)(1 + x)`, accurate near `|x| = 1`.
pub fn one_minus_sq(x: f64) -> f64 {
    (1.0 - x) * (1.0 + x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed-form exponents agree with a direct evaluation where the direct one is
    /// accurate (large shifts), for both families.
    #[test]
    fn shift_exponents_match_direct_differences() {
        for fam in [
            BoundedFamily::Power { alpha: 2.0 },
            BoundedFamily::Power { alpha: 0.7 },
            BoundedFamily::Exp,
        ] {
            for &x in &[0.0, 0.1, 0.5, 0.8] {
                for &s in &[0.01, 0.05, 0.1] {
                    let fx = fam.f(x);
                    let a = (fam.f(x + s) / fx).ln();
                    let b = (fam.f(x - s) / fx).ln();
                    let e = fam.shift_exponents(x, s);
                    assert!(
                        (e.sum - (a + b)).abs() <= 1e-9 * (a + b).abs().max(1e-12),
                        "{fam:?} {x} {s}"
                    );
                    assert!(
                        (e.diff - (a - b)).abs() <= 1e-9 * (a - b).abs().max(1e-12),
                        "{fam:?} {x} {s}"
                    );
                }
            }
        }
    }

    /// For tiny shifts the sum must be the second-order term `s² (ln f)''`, which a
    /// direct difference cannot resolve; check against the analytic second derivative.
    #[test]
    fn shift_exponents_second_order_for_tiny_shift() {
        let s = 1e-9;
        let x: f64 = 0.3;
        // ln f = −α ln(1 − x²): (ln f)'' = 2α (1 + x²)/(1 − x²)².
        let alpha = 2.0;
        let expected = s * s * 2.0 * alpha * (1.0 + x * x) / (1.0 - x * x).powi(2);
        let e = BoundedFamily::Power { alpha }.shift_exponents(x, s);
        assert!(
            (e.sum / expected - 1.0).abs() < 1e-6,
            "{} vs {}",
            e.sum,
            expected
        );
        // (ln f)' = 2αx/(1 − x²), so a − b ≈ 2 s (ln f)'.
        let d = 2.0 * s * 2.0 * alpha * x / (1.0 - x * x);
        assert!((e.diff / d - 1.0).abs() < 1e-6);
        // exp family: ln f = 1/(1 − x²); (ln f)'' = (2 + 6x²)/(1 − x²)³.
        let e = BoundedFamily::Exp.shift_exponents(x, s);
        let expected = s * s * (2.0 + 6.0 * x * x) / (1.0 - x * x).powi(3);
        assert!((e.sum / expected - 1.0).abs() < 1e-6);
    }

    #[test]
    fn derivative_matches_central_difference() {
        for fam in [BoundedFamily::Power { alpha: 2.0 }, BoundedFamily::Exp] {
            for &x in &[-0.7, -0.2, 0.0, 0.3, 0.9] {
                let h = 1e-6;
                let fd = (fam.f(x + h) - fam.f(x - h)) / (2.0 * h);
                let d = fam.f_prime(x);
                assert!(
                    (fd - d).abs() <= 1e-6 * d.abs().max(1.0),
                    "{fam:?} {x}: {fd} vs {d}"
                );
            }
        }
    }
}
