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
        let m: f64 = self.atoms.iter().map(|&(x, p)| x * p).sum();
        let v: f64 = self.atoms.iter().map(|&(x, p)| p * (x - m) * (x - m)).sum();
        v.sqrt().max(self.unit.unwrap_or(0.0) / 4.0)
    }
    fn grid_unit(&self) -> Option<f64> {
        self.unit
    }
}
