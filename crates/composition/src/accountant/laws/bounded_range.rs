//! The ε-bounded-range class (the exponential mechanism's; Durfee & Rogers 2019, Dong,
//! Durfee & Rogers 2020): a pair dominating every ε-BR pair at once, valid however each
//! mechanism of a composition is chosen (docs/accountant.md §2.14).

use super::{ContinuousRange, LossLaw, CELL_REL_ERR};
use crate::error::{out_of_range, Result};

/// The loss law whose privacy curve is the largest of every ε-BR pair's,
/// `δ(x) = (e^{ε/2} − e^{x/2})²/(e^ε − 1)` for `x ∈ [0, ε]`: under P a density
/// `e^{(ε + ℓ)/2}/(2(e^ε − 1))` on `[−ε, ε]`, no atoms (docs/accountant.md §2.14).
#[derive(Debug, Clone, Copy)]
pub struct BoundedRangeLaw {
    eps: f64,
    /// `ln(1 − e^{−ε})`.
    ln_norm: f64,
    scale: f64,
}

impl BoundedRangeLaw {
    /// The dominating law of the ε-BR class, ε ∈ [1e-6, 50].
    ///
    /// ```
    /// use composition::accountant::laws::BoundedRangeLaw;
    /// use composition::accountant::LossLaw;
    /// let b = BoundedRangeLaw::new(1.0).unwrap();
    /// let (lp, _) = b.cell(-1.0, 1.0);
    /// assert!(lp.abs() < 1e-14); // all of its mass
    /// ```
    pub fn new(eps: f64) -> Result<Self> {
        if !(eps.is_finite() && (1e-6..=50.0).contains(&eps)) {
            return Err(out_of_range("epsilon", eps, "[1e-6, 50]"));
        }
        let ln_norm = (-(-eps).exp_m1()).ln();
        // Its standard deviation by the midpoint rule (the grid's scale only).
        let n = 2000;
        let h = 2.0 * eps / n as f64;
        let dens = |l: f64| ((l - eps) / 2.0 - ln_norm).exp() / 2.0;
        let (mut m0, mut m1, mut m2) = (0.0, 0.0, 0.0);
        for i in 0..n {
            let l = -eps + (i as f64 + 0.5) * h;
            let w = dens(l) * h;
            m0 += w;
            m1 += w * l;
            m2 += w * l * l;
        }
        let mean = m1 / m0;
        let scale = (m2 / m0 - mean * mean).max(0.0).sqrt().max(1e-9);
        Ok(Self {
            eps,
            ln_norm,
            scale,
        })
    }

    /// ε.
    pub fn epsilon(&self) -> f64 {
        self.eps
    }
}

impl LossLaw for BoundedRangeLaw {
    fn atoms(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    fn ln_inf_mass(&self) -> f64 {
        f64::NEG_INFINITY
    }
    fn continuous_range(&self, _ln_tail: f64) -> Option<ContinuousRange> {
        Some(ContinuousRange {
            lo: -self.eps,
            hi: self.eps,
            ln_below: f64::NEG_INFINITY,
            ln_above: f64::NEG_INFINITY,
        })
    }
    /// `P(a < L ≤ b) = e^{(b − ε)/2}(1 − e^{(a' − b)/2})/(1 − e^{−ε})` and
    /// `E_P[1 − e^{a − L}; a < L ≤ b] = e^{(a' − ε)/2}((2 sinh(w/4))² + (1 − e^{−g})(1 − e^{−w/2}))/(1 − e^{−ε})`
    /// with `a' = max(a, −ε)`, `g = a' − a`, `w = min(b, ε) − a'`: the second number is
    /// taken against the cell's own left end `a` even where the support starts inside
    /// the cell (against `a'` it would send too little of the cell up, an optimistic
    /// split). Every term of each logarithm is at most about ε + 100 in magnitude
    /// ([`LossLaw::mass_rel_err`]); `g` is exact (Sterbenz: `a' = −ε` and `a` within a
    /// factor 2 whenever the step is below ε).
    fn cell(&self, a: f64, b: f64) -> (f64, f64) {
        let (a2, b2) = (a.max(-self.eps), b.min(self.eps));
        if b2.partial_cmp(&a2) != Some(std::cmp::Ordering::Greater) {
            return (f64::NEG_INFINITY, f64::NEG_INFINITY);
        }
        let w = b2 - a2;
        let up_w = -(-0.5 * w).exp_m1(); // 1 − e^{−w/2}
        let lp = 0.5 * (b2 - self.eps) + up_w.ln() - self.ln_norm;
        let sh = (0.25 * w).exp_m1() - (-0.25 * w).exp_m1(); // 2 sinh(w/4)
        let gap = -(-(a2 - a)).exp_m1(); // 1 − e^{−g}, 0 when the cell is inside
        let lm = 0.5 * (a2 - self.eps) + sh.mul_add(sh, gap * up_w).ln() - self.ln_norm;
        (lp, lm)
    }
    fn pointwise_cells(&self) -> bool {
        true
    }
    /// Each logarithm of [`LossLaw::cell`] is a sum of four terms, of magnitude at most
    /// ε, `2|ln(w/2)|` (w the cell's width: at least an ulp of ε ≥ 1e-6, so
    /// `|ln w| ≤ 51`) and `|ln(1 − e^{−ε})| ≤ 14`, each rounded once or formed by
    /// exp_m1 and ln within an ulp or two: 16u·(ε + 120) bounds the error of their sum.
    fn mass_rel_err(&self) -> f64 {
        (16.0 * f64::EPSILON * (self.eps + 120.0)).max(CELL_REL_ERR)
    }
    fn loss_scale(&self) -> f64 {
        self.scale
    }
    fn grid_unit(&self) -> Option<f64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accountant::core::exact_exp::{exp_enclosure, rat};
    use num_bigint::BigInt;
    use num_rational::BigRational;
    use num_traits::One;

    /// In exact arithmetic (ε and the edges the floats themselves): each cell's two
    /// numbers within [`LossLaw::mass_rel_err`] of `(e^{(ε+b)/2} − e^{(ε+a')/2})/(e^ε − 1)`
    /// and `(e^{(ε+b)/2} − e^{(ε+a')/2} − e^{a+(ε−a')/2} + e^{(ε+2a−b)/2})/(e^ε − 1)`
    /// (`a' = max(a, −ε)`; b inside the support), the exponentials
    /// enclosed at 1800 bits. Fails if the bound is too small for the roundings.
    #[test]
    fn the_cells_hold_their_error_bound_in_exact_arithmetic() {
        let e = |d: BigRational| exp_enclosure(&d);
        let half = BigRational::new(BigInt::one(), BigInt::from(2));
        for &eps in &[1e-6, 0.3, 5.0, 50.0] {
            let law = BoundedRangeLaw::new(eps).unwrap();
            let err = rat(law.mass_rel_err());
            let one = BigRational::one();
            for &(fa, fb) in &[
                (-1.0, 1.0),
                (-1.0, -1.0 + 1e-12),
                (0.25, 0.25 + 1e-9),
                (0.3, 0.7),
                (1.0 - 1e-15, 1.0),
                // Cells the support's lower end cuts (m is still against a).
                (-1.3, -0.6),
                (-1.0 - 1e-9, -1.0 + 1e-9),
                (-1.9, -0.99),
            ] {
                let (a, b) = (fa * eps, fb * eps);
                let (lp, lm) = law.cell(a, b);
                let (re, ra, rb) = (rat(eps), rat(a), rat(b));
                let rc = rat(a.max(-eps)); // a', where the support starts in the cell
                let (eb_lo, eb_hi) = e((&re + &rb) * &half);
                let (ea_lo, ea_hi) = e((&re + &rc) * &half);
                // e^{a + (ε − a')/2} and e^{a + (ε − b)/2}: the Q-side terms.
                let (ef_lo, ef_hi) = e((&ra * BigInt::from(2) + &re - &rc) * &half);
                let (ec_lo, ec_hi) = e((&re + &ra * BigInt::from(2) - &rb) * &half);
                let (ee_lo, ee_hi) = e(re.clone());
                let (den_lo, den_hi) = (&ee_lo - &one, &ee_hi - &one);
                let p_lo = (&eb_lo - &ea_hi) / &den_hi;
                let p_hi = (&eb_hi - &ea_lo) / &den_lo;
                let m_lo = (&eb_lo - &ea_hi - &ef_hi + &ec_lo) / &den_hi;
                let m_hi = (&eb_hi - &ea_lo - &ef_lo + &ec_hi) / &den_lo;
                for (got, lo, hi, what) in [(lp, p_lo, p_hi, "P"), (lm, m_lo, m_hi, "m")] {
                    let (g_lo, g_hi) = e(rat(got));
                    assert!(
                        g_lo * (&one + &err) >= hi && g_hi * (&one - &err) <= lo,
                        "ε = {eps}, [{a}, {b}]: {what} outside its bound"
                    );
                }
            }
        }
    }
}
