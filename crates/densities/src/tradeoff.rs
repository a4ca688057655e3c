//! Trade-off functions (Dong, Roth & Su 2019; Dong, Su & Zhang 2021, "A central limit
//! theorem for differentially private query answering"; docs/maths.md §0 and §2).
//!
//! The trade-off function of two distributions `P`, `Q` is
//! `T[P, Q](α) = inf { β_φ : α_φ ≤ α }` over tests φ (type I error `α_φ = E_P φ`, type II
//! error `β_φ = 1 − E_Q φ`; docs/maths.md §0). This module gives
//!
//! * the (ε, δ)-DP budget `f_{ε,δ}` ([`f_eps_delta`], docs/maths.md §2),
//! * the Gaussian trade-off `G_μ` ([`gaussian_tradeoff`], docs/maths.md §1.2 and §2),
//! * the closed form of the Laplace mechanism ([`laplace_tradeoff`], docs/maths.md §1.1),
//! * the trade-off `T(α) = F(F⁻¹(1 − α) − Δ)` of any symmetric log-concave noise against
//!   its shift by Δ ([`shift_tradeoff`], docs/maths.md §1.3),
//!
//! each as a function of α and as a [`TradeOff`] value that can be sampled on a grid
//! ([`TradeOff::curve`], [`alpha_grid`]).
//!
//! All functions validate their inputs (α ∈ [0, 1], ε > 0, δ ∈ [0, 1), shifts and scales
//! in range) and return a [`DensityError`] instead of NaN.

use crate::error::{check_open, DensityError};
use crate::laplace::Laplace;
use crate::normal::{self, Normal};
use crate::traits::ContinuousCdf;
use crate::truncated_laplace::TruncatedLaplace;

/// Returns `Ok(x)` when `lo ≤ x ≤ hi` (closed interval; false for NaN), else an
/// [`DensityError::OutOfRange`].
pub(crate) fn check_closed(
    name: &'static str,
    x: f64,
    lo: f64,
    hi: f64,
    allowed: &'static str,
) -> Result<f64, DensityError> {
    if x >= lo && x <= hi {
        Ok(x)
    } else {
        Err(DensityError::OutOfRange {
            name,
            value: x,
            allowed,
        })
    }
}

fn check_alpha(alpha: f64) -> Result<f64, DensityError> {
    check_closed("alpha", alpha, 0.0, 1.0, "[0, 1]")
}

fn check_shift(shift: f64) -> Result<f64, DensityError> {
    check_closed("shift", shift, 0.0, f64::MAX, "[0, inf)")
}

/// The trade-off function of (ε, δ)-DP (Wasserman & Zhou 2010; Kairouz, Oh & Viswanath
/// 2015; Dong, Roth & Su 2019; Dong–Su–Zhang slides "(ε, δ)-DP iff ROC ≥ f_{ε,δ}";
/// docs/maths.md §2):
///
/// `f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)}`.
///
/// A mechanism is (ε, δ)-DP iff its trade-off function is `≥ f_{ε,δ}` for every pair of
/// neighbouring datasets. `ε = 0` is allowed here (the budget is then `1 − δ − α`).
///
/// Errors: ε not in `[0, ∞)`, δ not in `[0, 1)`, α not in `[0, 1]`.
///
/// ```
/// use densities::tradeoff::f_eps_delta;
/// assert_eq!(f_eps_delta(1.0, 0.01, 0.0).unwrap(), 0.99);
/// assert_eq!(f_eps_delta(1.0, 0.01, 1.0).unwrap(), 0.0);
/// // The two linear pieces meet at α = (1 − δ)/(1 + e^ε).
/// let a = 0.99 / (1.0 + 1f64.exp());
/// assert!((f_eps_delta(1.0, 0.01, a).unwrap() - a).abs() < 1e-15);
/// ```
pub fn f_eps_delta(epsilon: f64, delta: f64, alpha: f64) -> Result<f64, DensityError> {
    check_closed("epsilon", epsilon, 0.0, f64::MAX, "[0, inf)")?;
    check_closed("delta", delta, 0.0, 1.0 - f64::EPSILON / 2.0, "[0, 1)")?;
    check_alpha(alpha)?;
    let e = epsilon.exp();
    let first = (1.0 - delta) - e * alpha;
    let second = ((1.0 - delta) - alpha) / e;
    Ok(first.max(second).max(0.0))
}

/// The Gaussian trade-off function `G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)` = `T[N(0,1), N(μ,1)]`
/// (Dong, Roth & Su 2019, definition of μ-GDP; docs/maths.md §1.2 and §2: μ-GDP means
/// `T ≥ G_μ`).
///
/// `Φ⁻¹(1 − α)` is computed as [`normal::upper_quantile`]`(α)` (no rounding of `1 − α`) and
/// `Φ` by the tail-accurate [`normal::cdf`], so `G_μ` keeps relative accuracy for α down
/// to 1e-300 and for values of `G_μ` deep in the lower tail (large α, large μ).
///
/// Errors: μ not in `[0, ∞)`, α not in `[0, 1]`.
///
/// ```
/// use densities::tradeoff::gaussian_tradeoff;
/// assert_eq!(gaussian_tradeoff(0.0, 0.3).unwrap(), 0.7);
/// // G_1(1/2) = Φ(−1).
/// let g = gaussian_tradeoff(1.0, 0.5).unwrap();
/// assert!((g - densities::normal::cdf(-1.0)).abs() < 1e-16);
/// ```
pub fn gaussian_tradeoff(mu: f64, alpha: f64) -> Result<f64, DensityError> {
    check_closed("mu", mu, 0.0, f64::MAX, "[0, inf)")?;
    check_alpha(alpha)?;
    if mu == 0.0 {
        return Ok(1.0 - alpha);
    }
    Ok(normal::cdf(normal::upper_quantile(alpha) - mu))
}

/// Closed-form trade-off function of the Laplace mechanism: `T[Lap(b), Δ + Lap(b)]`
/// (Dong, Roth & Su 2019, Section 2.3; docs/maths.md §1.1). With `μ = Δ/b`:
///
/// * `1 − e^{μ} α` for `α < e^{−μ}/2`,
/// * `e^{−μ}/(4α)` for `e^{−μ}/2 ≤ α ≤ 1/2`,
/// * `e^{−μ}(1 − α)` for `α > 1/2`.
///
/// Derivation: Laplace is symmetric and log-concave, so `T(α) = F(F⁻¹(1 − α) − Δ)`
/// (docs/maths.md §1.3), which by symmetry is `S(F⁻¹(α) + Δ)` with `S = 1 − F`. For
/// `α ≤ 1/2`, `F⁻¹(α) = b ln(2α)`; if `b ln(2α) + Δ ≤ 0` then
/// `S = 1 − ½ e^{ln(2α) + μ} = 1 − e^μ α`, else `S = ½ e^{−ln(2α) − μ} = e^{−μ}/(4α)`. For
/// `α > 1/2`, `F⁻¹(α) = −b ln(2(1 − α)) > 0` and `S = ½ e^{ln(2(1−α)) − μ} = e^{−μ}(1 − α)`.
///
/// Errors: Δ not in `[0, ∞)`, b not in `(0, ∞)`, α not in `[0, 1]`.
///
/// ```
/// use densities::tradeoff::laplace_tradeoff;
/// let mu: f64 = 1.0;
/// assert_eq!(laplace_tradeoff(1.0, 1.0, 0.0).unwrap(), 1.0);
/// assert!((laplace_tradeoff(1.0, 1.0, 0.5).unwrap() - (-mu).exp() / 2.0).abs() < 1e-16);
/// ```
pub fn laplace_tradeoff(shift: f64, b: f64, alpha: f64) -> Result<f64, DensityError> {
    check_shift(shift)?;
    check_open("b", b, 0.0, f64::INFINITY, "(0, inf)")?;
    check_alpha(alpha)?;
    let mu = shift / b;
    let e_neg = (-mu).exp();
    let t = if alpha > 0.5 {
        e_neg * (1.0 - alpha)
    } else if alpha < 0.5 * e_neg {
        // 1 − e^μ α = 1 − α/e^{−μ}; exact 1 at α = 0.
        1.0 - alpha / e_neg
    } else {
        e_neg / (4.0 * alpha)
    };
    Ok(t)
}

/// Marker for one-dimensional noise distributions that are symmetric about their centre
/// and log-concave, so that threshold tests are most powerful against a shift and the
/// trade-off function is `T(α) = F(F⁻¹(1 − α) − Δ)` (docs/maths.md §1.3; Dong, Roth & Su
/// 2019, for log-concave location families: the likelihood ratio is monotone). The CDF,
/// survival function
/// and quantile come from [`ContinuousCdf`].
///
/// Implemented for [`Normal`], [`Laplace`] and [`TruncatedLaplace`].
///
/// ```
/// use densities::tradeoff::{shift_tradeoff, SymmetricLogConcave};
/// fn t_half<D: SymmetricLogConcave>(d: &D) -> f64 {
///     shift_tradeoff(d, 1.0, 0.5).unwrap()
/// }
/// let n = densities::normal::Normal::new(0.0, 1.0).unwrap();
/// assert!((t_half(&n) - densities::normal::cdf(-1.0)).abs() < 1e-16);
/// ```
pub trait SymmetricLogConcave: ContinuousCdf {}

impl SymmetricLogConcave for Normal {}
impl SymmetricLogConcave for Laplace {}
impl SymmetricLogConcave for TruncatedLaplace {}

/// The trade-off function `T[X, X + Δ](α) = F(F⁻¹(1 − α) − Δ)` of symmetric log-concave
/// noise `X` with CDF `F` against its shift by `Δ ≥ 0` (docs/maths.md §1.3; Dong, Su &
/// Zhang 2021, Section 2; the most powerful test rejects above a threshold).
///
/// Evaluated as `S(F⁻¹(α) + Δ)` with `S = 1 − F` the survival function: for noise
/// symmetric about `m`, `F⁻¹(1 − α) = 2m − F⁻¹(α)` and `F(2m − y) = S(y)`. This avoids
/// rounding `1 − α` and keeps the relative accuracy of `S` in the upper tail. At α = 0
/// it gives `F(sup supp − Δ)` (e.g. `1` for Normal and Laplace, `1 − δ` for the
/// truncated Laplacian calibrated to (ε, δ) at sensitivity Δ).
///
/// Errors: Δ not in `[0, ∞)`, α not in `[0, 1]`.
///
/// ```
/// use densities::laplace::Laplace;
/// use densities::tradeoff::{laplace_tradeoff, shift_tradeoff};
/// let l = Laplace::new(2.0).unwrap();
/// let t = shift_tradeoff(&l, 1.0, 0.1).unwrap();
/// assert!((t - laplace_tradeoff(1.0, 2.0, 0.1).unwrap()).abs() < 1e-15);
/// ```
pub fn shift_tradeoff<D: SymmetricLogConcave + ?Sized>(
    noise: &D,
    shift: f64,
    alpha: f64,
) -> Result<f64, DensityError> {
    check_shift(shift)?;
    check_alpha(alpha)?;
    let q = noise.quantile(alpha);
    let t = noise.sf(q + shift);
    // Clamp rounding excursions (e.g. S slightly above 1 − α): T ≤ 1 − α always.
    Ok(t.clamp(0.0, 1.0 - alpha))
}

/// A trade-off function `α ↦ T(α)` on `[0, 1]` (docs/maths.md §0), so that experiments
/// can treat the budget `f_{ε,δ}`, `G_μ` and a mechanism's curve alike.
///
/// ```
/// use densities::tradeoff::{alpha_grid, EpsDelta, TradeOff};
/// let f = EpsDelta::new(1.0, 0.01).unwrap();
/// let c = f.curve(&alpha_grid(11).unwrap()).unwrap();
/// assert_eq!(c[0], (0.0, 0.99));
/// assert_eq!(c[10], (1.0, 0.0));
/// ```
pub trait TradeOff {
    /// `T(α)`; errors for α outside `[0, 1]`.
    fn beta(&self, alpha: f64) -> Result<f64, DensityError>;

    /// The curve `(α, T(α))` on a grid of α (docs/maths.md §0), in the grid's order.
    fn curve(&self, alphas: &[f64]) -> Result<Vec<(f64, f64)>, DensityError> {
        alphas
            .iter()
            .map(|&a| self.beta(a).map(|b| (a, b)))
            .collect()
    }
}

/// The (ε, δ)-DP budget `f_{ε,δ}` as a [`TradeOff`] (docs/maths.md §2; see
/// [`f_eps_delta`]).
///
/// ```
/// use densities::tradeoff::{EpsDelta, TradeOff};
/// assert_eq!(EpsDelta::new(1.0, 0.0).unwrap().beta(0.0).unwrap(), 1.0);
/// assert!(EpsDelta::new(-1.0, 0.0).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpsDelta {
    /// ε ≥ 0.
    pub epsilon: f64,
    /// δ ∈ [0, 1).
    pub delta: f64,
}

impl EpsDelta {
    /// Validates ε ∈ `[0, ∞)` and δ ∈ `[0, 1)` (docs/maths.md §0, §2).
    pub fn new(epsilon: f64, delta: f64) -> Result<Self, DensityError> {
        f_eps_delta(epsilon, delta, 0.0)?;
        Ok(Self { epsilon, delta })
    }
}

impl TradeOff for EpsDelta {
    fn beta(&self, alpha: f64) -> Result<f64, DensityError> {
        f_eps_delta(self.epsilon, self.delta, alpha)
    }
}

/// The Gaussian trade-off `G_μ` as a [`TradeOff`] (docs/maths.md §1.2, §2; see
/// [`gaussian_tradeoff`]).
///
/// ```
/// use densities::tradeoff::{Gdp, TradeOff};
/// let g = Gdp::new(1.0).unwrap();
/// assert!((g.beta(0.5).unwrap() - densities::normal::cdf(-1.0)).abs() < 1e-16);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gdp {
    /// μ ≥ 0.
    pub mu: f64,
}

impl Gdp {
    /// Validates μ ∈ `[0, ∞)` (docs/maths.md §2).
    pub fn new(mu: f64) -> Result<Self, DensityError> {
        gaussian_tradeoff(mu, 0.0)?;
        Ok(Self { mu })
    }
}

impl TradeOff for Gdp {
    fn beta(&self, alpha: f64) -> Result<f64, DensityError> {
        gaussian_tradeoff(self.mu, alpha)
    }
}

/// The closed-form Laplace trade-off as a [`TradeOff`] (docs/maths.md §1.1; see
/// [`laplace_tradeoff`]).
///
/// ```
/// use densities::tradeoff::{LaplaceShift, TradeOff};
/// let t = LaplaceShift::new(1.0, 1.0).unwrap();
/// assert!((t.beta(0.9).unwrap() - 0.1 * (-1f64).exp()).abs() < 1e-16);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaplaceShift {
    /// Shift Δ ≥ 0.
    pub shift: f64,
    /// Scale b > 0.
    pub b: f64,
}

impl LaplaceShift {
    /// Validates Δ ∈ `[0, ∞)` and b ∈ `(0, ∞)` (docs/maths.md §1.1).
    pub fn new(shift: f64, b: f64) -> Result<Self, DensityError> {
        laplace_tradeoff(shift, b, 0.0)?;
        Ok(Self { shift, b })
    }
}

impl TradeOff for LaplaceShift {
    fn beta(&self, alpha: f64) -> Result<f64, DensityError> {
        laplace_tradeoff(self.shift, self.b, alpha)
    }
}

/// `T[X, X + Δ]` for symmetric log-concave noise as a [`TradeOff`] (docs/maths.md §1.3;
/// see [`shift_tradeoff`]).
///
/// ```
/// use densities::tradeoff::{Shifted, TradeOff};
/// use densities::truncated_laplace::TruncatedLaplace;
/// let t = Shifted::new(TruncatedLaplace::new(1.0, 0.01, 1.0).unwrap(), 1.0).unwrap();
/// assert!((t.beta(0.0).unwrap() - 0.99).abs() < 1e-12); // T(0) = 1 − δ
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shifted<D> {
    /// The noise distribution.
    pub noise: D,
    /// Shift Δ ≥ 0.
    pub shift: f64,
}

impl<D: SymmetricLogConcave> Shifted<D> {
    /// Validates Δ ∈ `[0, ∞)` (docs/maths.md §1.3).
    pub fn new(noise: D, shift: f64) -> Result<Self, DensityError> {
        check_shift(shift)?;
        Ok(Self { noise, shift })
    }
}

impl<D: SymmetricLogConcave> TradeOff for Shifted<D> {
    fn beta(&self, alpha: f64) -> Result<f64, DensityError> {
        shift_tradeoff(&self.noise, self.shift, alpha)
    }
}

/// `n ≥ 2` equally spaced values of α from 0 to 1 inclusive (`α_i = i/(n − 1)`), the
/// default grid for trade-off curves (docs/maths.md §0).
///
/// Errors: `n < 2`.
///
/// ```
/// let g = densities::tradeoff::alpha_grid(5).unwrap();
/// assert_eq!(g, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
/// assert!(densities::tradeoff::alpha_grid(1).is_err());
/// ```
pub fn alpha_grid(n: usize) -> Result<Vec<f64>, DensityError> {
    if n < 2 {
        return Err(DensityError::OutOfRange {
            name: "n",
            value: n as f64,
            allowed: "{2, 3, ...}",
        });
    }
    let m = (n - 1) as f64;
    Ok((0..n).map(|i| i as f64 / m).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_inputs_are_errors() {
        assert!(f_eps_delta(f64::NAN, 0.1, 0.5).is_err());
        assert!(f_eps_delta(1.0, 1.0, 0.5).is_err());
        assert!(f_eps_delta(1.0, 0.1, 1.5).is_err());
        assert!(gaussian_tradeoff(-1.0, 0.5).is_err());
        assert!(gaussian_tradeoff(f64::INFINITY, 0.5).is_err());
        assert!(laplace_tradeoff(1.0, 0.0, 0.5).is_err());
        assert!(laplace_tradeoff(-1.0, 1.0, 0.5).is_err());
        let n = Normal::new(0.0, 1.0).unwrap();
        assert!(shift_tradeoff(&n, 1.0, f64::NAN).is_err());
        assert!(shift_tradeoff(&n, -0.1, 0.5).is_err());
    }
}
