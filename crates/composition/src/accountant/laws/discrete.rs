//! Laws with finitely many loss values, given as atoms (docs/accountant.md §2).

use super::{ContinuousRange, LossLaw};
use crate::error::{out_of_range, Result};

/// A loss with finitely many atoms only (randomized response, docs/accountant.md §2.4).
#[derive(Debug, Clone)]
pub struct DiscreteLaw {
    atoms: Vec<(f64, f64)>,
    ln_inf: f64,
    unit: Option<f64>,
}

impl DiscreteLaw {
    /// A law of finite atoms `(loss, P-mass)` and `ln P(L = +∞)`, with no grid unit (the
    /// loss laws of a balls-in-bins epoch, [`crate::accountant::sampling::allocation`]).
    pub fn from_atoms(atoms: Vec<(f64, f64)>, ln_inf: f64) -> Self {
        Self {
            atoms,
            ln_inf,
            unit: None,
        }
    }

    /// Binary randomized response with parameter ε₀ ∈ [1e-8, 700]: `L = ±ε₀` with P-masses
    /// `e^{ε₀}/(1 + e^{ε₀})` and `1/(1 + e^{ε₀})`.
    ///
    /// ```
    /// use composition::accountant::{DiscreteLaw, LossLaw};
    /// let rr = DiscreteLaw::randomized_response(1.0).unwrap();
    /// assert!((rr.atoms()[1].1 - 1f64.exp() / (1.0 + 1f64.exp())).abs() < 1e-15);
    /// ```
    pub fn randomized_response(eps0: f64) -> Result<Self> {
        if !(eps0.is_finite() && (1e-8..=700.0).contains(&eps0)) {
            return Err(out_of_range("epsilon", eps0, "[1e-8, 700]"));
        }
        let low = 1.0 / (1.0 + eps0.exp());
        let high = 1.0 / (1.0 + (-eps0).exp());
        Ok(Self {
            atoms: vec![(-eps0, low), (eps0, high)],
            ln_inf: f64::NEG_INFINITY,
            unit: Some(eps0),
        })
    }
}

impl DiscreteLaw {
    /// The worst case of any (ε₀, δ₀)-DP mechanism (Kairouz, Oh & Viswanath 2015, the proof
    /// of their optimal composition, Thm 3.3; docs/accountant.md §2.11): `L = +∞` with
    /// P-mass δ₀, and `L = ±ε₀` with P-masses `(1 − δ₀)/(1 + e^{∓ε₀})`. Every (ε₀, δ₀)-DP
    /// pair, under any neighbour relation the guarantee is stated for, is a
    /// post-processing of this one, also when each mechanism of a composition is chosen
    /// after seeing the earlier outputs. ε₀ ∈ [1e-8, 700], δ₀ ∈ [0, 1) (δ₀ = 0: an ε₀-DP
    /// black box, the law of randomized response).
    ///
    /// ```
    /// use composition::accountant::{DiscreteLaw, LossLaw};
    /// let b = DiscreteLaw::approx_dp(1.0, 1e-6).unwrap();
    /// let total: f64 = b.atoms().iter().map(|a| a.1).sum::<f64>() + b.ln_inf_mass().exp();
    /// assert!((total - 1.0).abs() < 1e-15);
    /// ```
    pub fn approx_dp(eps0: f64, delta0: f64) -> Result<Self> {
        if !(eps0.is_finite() && (1e-8..=700.0).contains(&eps0)) {
            return Err(out_of_range("epsilon", eps0, "[1e-8, 700]"));
        }
        if !(0.0..1.0).contains(&delta0) {
            return Err(out_of_range("delta", delta0, "[0, 1)"));
        }
        // Each mass a few roundings from the exact one, inside the CELL_REL_ERR (18 ulps)
        // the lattice widens every atom by: 1 − δ₀ exact or one rounding, e^{±ε₀} one,
        // the sum one, the quotient one.
        let keep = 1.0 - delta0;
        let low = keep / (1.0 + eps0.exp());
        let high = keep / (1.0 + (-eps0).exp());
        Ok(Self {
            atoms: vec![(-eps0, low), (eps0, high)],
            ln_inf: if delta0 > 0.0 {
                delta0.ln()
            } else {
                f64::NEG_INFINITY
            },
            unit: Some(eps0),
        })
    }
}

/// The standard deviation of a finite law of atoms `(loss, P-mass)` (the scale a first
/// grid step is a fraction of).
pub(crate) fn atoms_sd(atoms: &[(f64, f64)]) -> f64 {
    let m: f64 = atoms.iter().map(|&(x, p)| x * p).sum();
    let v: f64 = atoms.iter().map(|&(x, p)| p * (x - m) * (x - m)).sum();
    v.sqrt()
}

/// Largest integer sensitivity of the discrete Laplace mechanism (its law has one atom
/// per loss value, `s + 1` of them).
pub const MAX_DISCRETE_SENSITIVITY: u64 = 100_000;

/// A bound on `1/scale`, the rate `t` of the discrete Laplace mechanism `P(x) ∝ e^{−|x|/b}`,
/// on the side asked (`up`: at least `1/b`, else at most), with so few significant bits
/// that every loss `k·t`, `|k| ≤ s`, is a float exactly: the atoms then lie on the grid
/// points of the unit `t` (docs/accountant.md §2.12). Its relative distance to `1/b` is
/// below `2^{bits(s) − 51}` (6e-11 for `s ≤ 1e5`). `None` for a scale that is not positive and finite.
pub fn discrete_laplace_rate(scale: f64, s: u64, up: bool) -> Option<f64> {
    if !(scale.is_finite() && scale > 0.0) || s == 0 {
        return None;
    }
    let q = 1.0 / scale;
    if !(q.is_finite() && q > f64::MIN_POSITIVE) {
        return None;
    }
    // The side of q: q·b − 1 exactly (one fma), so q ≥ 1/b iff it is ≥ 0.
    let above = q.mul_add(scale, -1.0) >= 0.0;
    let t = match (up, above) {
        (true, true) | (false, false) => q,
        (true, false) => q.next_up(),
        (false, true) => q.next_down(),
    };
    // Drop the low mantissa bits, outward: k·t exact for k < 2^bits(s).
    let drop = 64 - s.leading_zeros();
    let mask = (1u64 << drop) - 1;
    let bits = t.to_bits();
    let kept = if up && bits & mask != 0 {
        (bits | mask) + 1
    } else {
        bits & !mask
    };
    Some(f64::from_bits(kept))
}

impl DiscreteLaw {
    /// The discrete Laplace mechanism `P(x) = tanh(t/2)·e^{−t|x|}` on the integers, at
    /// integer sensitivity `s` (docs/accountant.md §2.12): the loss
    /// `ℓ(x) = t(|x − s| − |x|)` takes `s + 1` values, `st` (x ≤ 0, P-mass
    /// `1/(1 + e^{−t})`), `−st` (x ≥ s, `e^{−st}/(1 + e^{−t})`) and `(s − 2x)t` between
    /// (`tanh(t/2)·e^{−xt}`). `t` in [1e-9, 700] with `st ≤ 700` (the smallest mass a
    /// normal float) and few enough significant bits that every `kt`, `|k| ≤ s`, is exact
    /// ([`discrete_laplace_rate`]); `s` in [1, [`MAX_DISCRETE_SENSITIVITY`]].
    ///
    /// ```
    /// use composition::accountant::laws::discrete::discrete_laplace_rate;
    /// use composition::accountant::{DiscreteLaw, LossLaw};
    /// let t = discrete_laplace_rate(2.0, 3, true).unwrap();
    /// let d = DiscreteLaw::discrete_laplace(t, 3).unwrap();
    /// let total: f64 = d.atoms().iter().map(|a| a.1).sum();
    /// assert_eq!(d.atoms().len(), 4);
    /// assert!((total - 1.0).abs() < 1e-15);
    /// ```
    pub fn discrete_laplace(t: f64, s: u64) -> Result<Self> {
        if !(t.is_finite() && (1e-9..=700.0).contains(&t)) {
            return Err(out_of_range("1/scale", t, "[1e-9, 700]"));
        }
        if !(1..=MAX_DISCRETE_SENSITIVITY).contains(&s) {
            return Err(out_of_range(
                "sensitivity",
                s as f64,
                "an integer in [1, 1e5]",
            ));
        }
        let top = s as f64 * t;
        let bits_of_s = 64 - s.leading_zeros();
        if t.to_bits().trailing_zeros() < bits_of_s || top > 700.0 {
            return Err(out_of_range(
                "sensitivity/scale",
                top,
                "(0, 700], the rate with few enough bits that every loss is exact",
            ));
        }
        // Every mass a few roundings from the exact one (each exponent kt is exact, exp
        // and expm1 within an ulp), inside the CELL_REL_ERR (18 ulps) the lattice widens
        // every atom by.
        let a = (-t).exp();
        let norm = 1.0 + a;
        let mid = -(-t).exp_m1() / norm; // tanh(t/2)
        let mut atoms = Vec::with_capacity(s as usize + 1);
        atoms.push((-top, (-top).exp() / norm));
        for x in (1..s).rev() {
            let k = s as f64 - 2.0 * x as f64;
            atoms.push((k * t, mid * (-(x as f64) * t).exp()));
        }
        atoms.push((top, 1.0 / norm));
        Ok(Self {
            atoms,
            ln_inf: f64::NEG_INFINITY,
            unit: Some(t),
        })
    }
}

impl LossLaw for DiscreteLaw {
    fn atoms(&self) -> Vec<(f64, f64)> {
        self.atoms.clone()
    }
    fn ln_inf_mass(&self) -> f64 {
        self.ln_inf
    }
    fn continuous_range(&self, _ln_tail: f64) -> Option<ContinuousRange> {
        None
    }
    fn cell(&self, _a: f64, _b: f64) -> (f64, f64) {
        (f64::NEG_INFINITY, f64::NEG_INFINITY)
    }
    fn loss_scale(&self) -> f64 {
        atoms_sd(&self.atoms).max(self.unit.unwrap_or(0.0) / 4.0)
    }
    fn grid_unit(&self) -> Option<f64> {
        self.unit
    }
}
