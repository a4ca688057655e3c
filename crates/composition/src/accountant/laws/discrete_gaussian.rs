//! Discrete Gaussian noise on the integers (Canonne, Kamath & Steinke 2020;
//! docs/accountant.md §2.13): `P(x) ∝ e^{−x²/2σ²}`, integer sensitivity s.

use super::discrete::atoms_sd;
use super::{ContinuousRange, LossLaw, CELL_REL_ERR};
use crate::accountant::core::numeric::log_add;
use crate::error::{out_of_range, Result};

/// Largest σ of the discrete Gaussian (its law keeps about 72σ atoms).
pub const MAX_DISCRETE_SIGMA: f64 = 1e4;

/// Largest exponent `x²/2σ²` of an atom kept: every kept mass is then at least
/// `e^{−650}/Z`, a normal float, and the rest is charged as cut mass.
const KEPT_EXPONENT: f64 = 650.0;

/// The loss of the discrete Gaussian pair `(N_ℤ(0, σ²), N_ℤ(s, σ²))` under P:
/// `ℓ(x) = s(s − 2x)/2σ²` with P-mass `e^{−x²/2σ²}/Z`, one atom per integer x with
/// `x²/2σ² ≤ 650`. The atoms' positions and masses carry the bounds of their
/// floating-point errors ([`LossLaw::atom_position_err`], [`LossLaw::mass_rel_err`]);
/// the two cut tails' mass is a `+∞` atom on the dominating side and dropped on the
/// dominated ([`LossLaw::ln_inf_mass_lower`]).
#[derive(Debug, Clone)]
pub struct DiscreteGaussianLaw {
    atoms: Vec<(f64, f64)>,
    ln_cut: f64,
    mass_err: f64,
    pos_err: f64,
    scale: f64,
}

impl DiscreteGaussianLaw {
    /// The law at σ ∈ [0.5, 1e4] and integer sensitivity s ∈ [1, 1e5] with s/σ ≤ 100.
    ///
    /// ```
    /// use composition::accountant::laws::DiscreteGaussianLaw;
    /// use composition::accountant::LossLaw;
    /// let g = DiscreteGaussianLaw::new(3.0, 1).unwrap();
    /// let total: f64 = g.atoms().iter().map(|a| a.1).sum();
    /// assert!((total - 1.0).abs() < 1e-12 && g.ln_inf_mass() < -600.0);
    /// ```
    pub fn new(sigma: f64, s: u64) -> Result<Self> {
        if !(sigma.is_finite() && (0.5..=MAX_DISCRETE_SIGMA).contains(&sigma)) {
            return Err(out_of_range("sigma", sigma, "[0.5, 1e4]"));
        }
        if !(1..=100_000).contains(&s) || s as f64 / sigma > 100.0 {
            return Err(out_of_range(
                "sensitivity",
                s as f64,
                "an integer in [1, 1e5] with sensitivity/sigma at most 100",
            ));
        }
        let u = f64::EPSILON / 2.0;
        // v = 1/2σ², within 2u of the exact value (σ² and the quotient round; ×2 exact).
        let v = 1.0 / (2.0 * (sigma * sigma));
        let m = (KEPT_EXPONENT / v).sqrt().floor() as i64;
        // x² is exact (|x| ≤ 4e5); each exponent x²v within 3u of x²/2σ² relatively.
        let weights: Vec<f64> = (-m..=m).map(|x| (-((x * x) as f64) * v).exp()).collect();
        let z: f64 = weights.iter().sum();
        let n = weights.len() as f64;
        // Each weight within 3u·650 + u of the exact (exp within an ulp); their sum
        // within that plus (n − 1)u (positive terms); a mass within both plus the
        // quotient's u. The kept Z is below the full one by at most the cut mass: a
        // mass formed with it is larger, by a relative e^{−650} or so, far inside this.
        let term = 3.0 * u * KEPT_EXPONENT * 1.01 + 2.0 * u;
        let mass_err = (2.0 * term + (n + 2.0) * u) * 1.5;
        let si = s as i64;
        let atoms: Vec<(f64, f64)> = (-m..=m)
            .rev()
            .zip(weights.iter().rev())
            .map(|(x, w)| (((si * si - 2 * si * x) as f64) * v, w / z))
            .collect();
        let k_max = (si * si + 2 * si * m) as f64;
        // Each loss k·v: k exact, v within 2u, the product one more rounding.
        let pos_err = 4.0 * u * k_max * v;
        // The tails x > m and x < −m: each at most e^{−(m+1)²v}/(1 − e^{−(2m+3)v}) over
        // Z ((x+1)² − x² ≥ 2m + 3 beyond m), the exponents taken a hair smaller and the
        // result a hair larger for their roundings.
        let e1 = ((m + 1) * (m + 1)) as f64 * v * (1.0 - 8.0 * u);
        let ratio = (2 * m + 3) as f64 * v * (1.0 - 8.0 * u);
        let ln_one_tail = -e1 - (-(-ratio).exp_m1()).ln() - z.ln();
        let ln_cut = log_add(ln_one_tail, ln_one_tail);
        let ln_cut = ln_cut + 1e-9 * (ln_cut.abs() + 1.0);
        let scale = atoms_sd(&atoms).max(1e-12);
        Ok(Self {
            atoms,
            ln_cut,
            mass_err: mass_err.max(CELL_REL_ERR),
            pos_err,
            scale,
        })
    }
}

impl LossLaw for DiscreteGaussianLaw {
    fn atoms(&self) -> Vec<(f64, f64)> {
        self.atoms.clone()
    }
    fn ln_inf_mass(&self) -> f64 {
        self.ln_cut
    }
    fn ln_inf_mass_lower(&self) -> f64 {
        f64::NEG_INFINITY
    }
    fn mass_rel_err(&self) -> f64 {
        self.mass_err
    }
    fn atom_position_err(&self) -> f64 {
        self.pos_err
    }
    fn continuous_range(&self, _ln_tail: f64) -> Option<ContinuousRange> {
        None
    }
    fn cell(&self, _a: f64, _b: f64) -> (f64, f64) {
        (f64::NEG_INFINITY, f64::NEG_INFINITY)
    }
    fn loss_scale(&self) -> f64 {
        self.scale
    }
    fn grid_unit(&self) -> Option<f64> {
        // The losses are multiples of s/σ² only up to their roundings: no exact unit.
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accountant::core::exact_exp::{exp_fixed, rat, P};
    use num_bigint::BigInt;
    use num_rational::BigRational;
    use num_traits::{One, Zero};

    /// In exact arithmetic (σ the float itself, as a rational): every atom's loss within
    /// its position bound of `s(s − 2x)/2σ²`, every mass within its relative bound of
    /// `e^{−x²/2σ²}/Z` (Z over all the integers, its tails summed until they fall below
    /// the fixed point's resolution), and the `+∞` atom at least the cut tails' mass.
    /// Fails if a bound is too small for the roundings it covers.
    #[test]
    fn the_atoms_and_the_cut_hold_their_bounds_in_exact_arithmetic() {
        let one = BigRational::one();
        let fixed = |i: &BigInt| BigRational::new(i.clone(), BigInt::one() << P);
        for &(sigma, s) in &[(0.5, 1u64), (1.3, 2), (2.7, 1), (4.1, 3)] {
            let law = DiscreteGaussianLaw::new(sigma, s).unwrap();
            let m = (law.atoms.len() as i64 - 1) / 2;
            let two_var = rat(2.0) * rat(sigma) * rat(sigma);
            let w =
                |x: i64| exp_fixed(&(-BigRational::from_integer(BigInt::from(x * x)) / &two_var));
            let weights: Vec<(BigInt, BigInt)> = (-m..=m).map(w).collect();
            let (mut z_lo, mut z_hi) = (BigInt::zero(), BigInt::zero());
            for (l, h) in &weights {
                z_lo += l;
                z_hi += h;
            }
            // One tail to where its terms fall below 2^-P (x²/2σ² ≥ 1300 > P ln 2),
            // the rest two units of the fixed point at most.
            let v = 1.0 / (2.0 * sigma * sigma);
            let far = (1300.0 / v).sqrt().ceil() as i64 + 1;
            let (mut t_lo, mut t_hi) = (BigInt::zero(), BigInt::from(2));
            for x in m + 1..=far {
                let (l, h) = w(x);
                t_lo += l;
                t_hi += h;
            }
            let (t_lo, t_hi) = (t_lo * 2, t_hi * 2);
            let z_all_lo = fixed(&(&z_lo + &t_lo));
            let z_all_hi = fixed(&(&z_hi + &t_hi));
            let err = rat(law.mass_err);
            let pos = rat(law.pos_err);
            let si = s as i64;
            for (i, &(l, p)) in law.atoms.iter().enumerate() {
                let x = m - i as i64;
                let exact =
                    BigRational::from_integer(BigInt::from(si * si - 2 * si * x)) / &two_var;
                let off = rat(l) - &exact;
                let off = if off < BigRational::zero() { -off } else { off };
                assert!(
                    off <= pos,
                    "σ = {sigma}, x = {x}: loss off by more than its bound"
                );
                let (wl, wh) = &weights[(x + m) as usize];
                let p_lo = fixed(wl) / &z_all_hi;
                let p_hi = fixed(wh) / &z_all_lo;
                assert!(
                    rat(p) * (&one + &err) >= p_hi,
                    "σ = {sigma}, x = {x}: mass too low"
                );
                assert!(
                    rat(p) * (&one - &err) <= p_lo,
                    "σ = {sigma}, x = {x}: mass too high"
                );
            }
            // e^{ln_cut} ≥ the tails' mass over Z, in fixed point.
            let (cut_lo, _) = exp_fixed(&rat(law.ln_cut));
            assert!(
                fixed(&cut_lo) * &z_all_lo >= fixed(&t_hi),
                "σ = {sigma}: the +∞ atom is below the cut tails' mass"
            );
        }
    }
}
