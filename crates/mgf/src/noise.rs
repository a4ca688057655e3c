//! A bounded-noise density `p = e^{−f}/Z` on `(−1, 1)` with certified bounds on its
//! normaliser `Z` (docs/maths.md §1.4; Dagan & Kur 2022, Definition 2.1).

use crate::error::MgfError;
use crate::quadrature::{integral_bounds, partition_upper, SubCell, ROUNDING_SLACK};
use densities::bounded::BoundedFamily;

/// Above this potential `e^{−f}` is below 1e-323 and contributes nothing representable;
/// the neglected remainder is bounded explicitly where it matters.
const F_CUTOFF: f64 = 745.0;

/// A bounded-noise density with rigorous bounds `z_lower ≤ Z ≤ z_upper`.
///
/// ```
/// use densities::bounded::BoundedFamily;
/// use mgf::BoundedNoise;
/// let noise = BoundedNoise::new(BoundedFamily::power(2.0).unwrap()).unwrap();
/// let l = noise.tail_level(1e-6);
/// assert!(l > 0.5 && l < 1.0);
/// ```
#[derive(Debug, Clone)]
pub struct BoundedNoise {
    family: BoundedFamily,
    z_lower: f64,
    z_upper: f64,
}

impl BoundedNoise {
    /// Builds the density and brackets its normaliser `Z = 2∫₀¹ e^{−f}` by the chord and
    /// tangent bounds of [`crate::quadrature`].
    pub fn new(family: BoundedFamily) -> Result<Self, MgfError> {
        let end = cutoff_point(&family);
        let (lo, hi) = integral_bounds(|x| family.f(x), |x| family.f_prime(x), end, 1e-3, 1e-2);
        // Beyond `end`, e^{−f} ≤ e^{−745} on a length ≤ 1: add it to the upper bound only.
        let tail = (1.0 - end) * (-F_CUTOFF).exp();
        Ok(Self {
            family,
            z_lower: 2.0 * lo,
            z_upper: 2.0 * (hi + tail) * (1.0 + ROUNDING_SLACK),
        })
    }

    /// The family.
    pub fn family(&self) -> BoundedFamily {
        self.family
    }

    /// Rigorous lower bound on the normaliser `Z`.
    pub fn z_lower(&self) -> f64 {
        self.z_lower
    }

    /// Rigorous upper bound on the normaliser `Z`.
    pub fn z_upper(&self) -> f64 {
        self.z_upper
    }

    /// Upper bound on the density `p(x) = e^{−f(x)}/Z`.
    pub fn pdf_upper(&self, x: f64) -> f64 {
        (-self.family.f(x)).exp() / self.z_lower
    }

    /// A level `L ∈ [0, 1)` with `P(|X| > L) ≤ prob`, certified through
    /// `P(|X| > L) = 2∫_L^1 p ≤ 2(1 − L) p(L)` (p decreases in |x|; docs/maths.md §1.4
    /// step 2). Bisection returns the end of the bracket that satisfies the bound.
    pub fn tail_level(&self, prob: f64) -> f64 {
        if prob >= 1.0 {
            return 0.0;
        }
        let ln_target = prob.ln();
        let ln_bound = |l: f64| (2.0 * (1.0 - l)).ln() - self.family.f(l) - self.z_lower.ln();
        if ln_bound(0.0) <= ln_target {
            return 0.0;
        }
        let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
        while hi - lo > 1e-15 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if ln_bound(mid) <= ln_target {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    }

    /// Upper bounds on `(E|X|, E X²)` for the unit-radius noise, from the tangent bounds
    /// on `[0, x₇₄₅]` (where `f` reaches 745) plus the remainder beyond, at most
    /// `(1 − x₇₄₅)e^{−745}/Z`. Tight to about 1e-5 relative.
    pub fn moments_upper(&self) -> (f64, f64) {
        let end = cutoff_point(&self.family);
        let cells = self.partition(end);
        let rest = (1.0 - end) * (-F_CUTOFF).exp() / self.z_lower;
        let mut m1 = rest;
        let mut m2 = rest;
        for c in &cells {
            // With x = z + u on [z, z + h]: ∫ x p = z t1 + t2 and
            // ∫ x² p = z² t1 + 2z t2 + ∫ u² p ≤ z² t1 + 2z t2 + h t2 (u ≤ h).
            m1 += c.z * c.t1 + c.t2;
            m2 += c.z * c.z * c.t1 + (2.0 * c.z + c.h) * c.t2;
        }
        (
            2.0 * m1 * (1.0 + ROUNDING_SLACK),
            2.0 * m2 * (1.0 + ROUNDING_SLACK),
        )
    }

    /// Fine partition of `[0, end]` with rigorous upper bounds on the *normalised*
    /// moments `∫ p` and `∫ p (x − z)` per sub-cell (already divided by `z_lower`).
    pub fn partition(&self, end: f64) -> Vec<SubCell> {
        let fam = self.family;
        let mut cells = partition_upper(|x| fam.f(x), |x| fam.f_prime(x), end, 1e-3, 1e-2);
        for c in &mut cells {
            c.t1 /= self.z_lower;
            c.t2 /= self.z_lower;
        }
        cells
    }
}

/// The point in `[0, 1)` where `f` reaches [`F_CUTOFF`] (bisection; `f` increases on `[0, 1)`).
fn cutoff_point(fam: &BoundedFamily) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if fam.f(mid) < F_CUTOFF {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Independent route: composite Simpson on a substitution that resolves the edge.
    fn z_simpson(fam: BoundedFamily) -> f64 {
        // x = 1 − e^{−u}... simpler: Simpson on [0, 1) with 2·10⁶ panels; the integrand
        // is smooth and vanishes with all derivatives at 1.
        let n = 2_000_000;
        let h = 1.0 / n as f64;
        let g = |x: f64| if x >= 1.0 { 0.0 } else { (-fam.f(x)).exp() };
        let mut s = g(0.0) + g(1.0);
        for i in 1..n {
            let w = if i % 2 == 1 { 4.0 } else { 2.0 };
            s += w * g(i as f64 * h);
        }
        2.0 * s * h / 3.0
    }

    #[test]
    fn normaliser_bounds_bracket_simpson_and_are_tight() {
        for fam in [
            BoundedFamily::Power { alpha: 2.0 },
            BoundedFamily::Power { alpha: 0.5 },
            BoundedFamily::Exp,
        ] {
            let noise = BoundedNoise::new(fam).unwrap();
            let z = z_simpson(fam);
            assert!(
                noise.z_lower() <= z && z <= noise.z_upper(),
                "{fam:?}: {} {} {}",
                noise.z_lower(),
                z,
                noise.z_upper()
            );
            assert!(noise.z_upper() / noise.z_lower() - 1.0 < 1e-5);
        }
    }

    #[test]
    fn moments_bound_simpson_and_are_tight() {
        let fam = BoundedFamily::Power { alpha: 2.0 };
        let noise = BoundedNoise::new(fam).unwrap();
        let z = z_simpson(fam);
        let n = 1_000_000;
        let h = 1.0 / n as f64;
        let (mut a, mut b) = (0.0, 0.0);
        for i in 0..=n {
            let x = i as f64 * h;
            let w = if i == 0 || i == n {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            let p = if x >= 1.0 { 0.0 } else { (-fam.f(x)).exp() / z };
            a += w * x * p;
            b += w * x * x * p;
        }
        let (a, b) = (2.0 * a * h / 3.0, 2.0 * b * h / 3.0);
        let (m1, m2) = noise.moments_upper();
        assert!(m1 >= a && m1 < a * (1.0 + 1e-4), "{m1} vs {a}");
        assert!(m2 >= b && m2 < b * (1.0 + 1e-4), "{m2} vs {b}");
    }

    #[test]
    fn tail_level_is_certified() {
        let fam = BoundedFamily::Power { alpha: 2.0 };
        let noise = BoundedNoise::new(fam).unwrap();
        for &prob in &[0.05, 1e-6, 1e-14] {
            let l = noise.tail_level(prob);
            // Independent: P(|X| > L) by Simpson on [L, 1] divided by the Simpson Z.
            let n = 200_000;
            let h = (1.0 - l) / n as f64;
            let g = |x: f64| if x >= 1.0 { 0.0 } else { (-fam.f(x)).exp() };
            let mut s = g(l) + g(1.0);
            for i in 1..n {
                s += if i % 2 == 1 { 4.0 } else { 2.0 } * g(l + i as f64 * h);
            }
            let tail = 2.0 * s * h / 3.0 / z_simpson(fam);
            assert!(tail <= prob, "P(|X|>{l}) = {tail} > {prob}");
            // Not absurdly conservative: the level for prob/1e3 is further out.
            assert!(noise.tail_level(prob / 1e3) > l);
        }
    }
}
