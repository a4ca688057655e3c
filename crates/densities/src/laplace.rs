//! The Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006; docs/maths.md §1.1):
//! density `p(x) = e^{−|x|/b}/(2b)`, ε-DP for sensitivity Δ when `b = Δ/ε`.

use crate::error::{check_open, DensityError};
use crate::traits::{Continuous, ContinuousCdf, NoiseMoments};

/// The centred Laplace distribution with scale `b` (docs/maths.md §1.1):
/// `p(x) = e^{−|x|/b}/(2b)`, `E|X| = b`, `E X² = 2b²`.
///
/// ```
/// use densities::laplace::Laplace;
/// use densities::traits::{ContinuousCdf, NoiseMoments};
/// let l = Laplace::new(2.0).unwrap();
/// assert_eq!(l.mean_abs(), 2.0);
/// assert_eq!(l.second_moment(), 8.0);
/// assert_eq!(l.cdf(0.0), 0.5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Laplace {
    /// Scale `b > 0`.
    pub b: f64,
}

impl Laplace {
    /// Laplace with scale `b ∈ (0, ∞)` (docs/maths.md §1.1; for ε-DP use
    /// [`laplace_scale`]).
    ///
    /// Errors: `b` not in `(0, ∞)`.
    pub fn new(b: f64) -> Result<Self, DensityError> {
        check_open("b", b, 0.0, f64::INFINITY, "(0, inf)")?;
        Ok(Self { b })
    }
}

impl Continuous for Laplace {
    fn pdf(&self, x: f64) -> f64 {
        (-x.abs() / self.b).exp() / (2.0 * self.b)
    }
    fn ln_pdf(&self, x: f64) -> f64 {
        -x.abs() / self.b - (2.0 * self.b).ln()
    }
}

impl ContinuousCdf for Laplace {
    /// `½ e^{x/b}` for `x ≤ 0`, `1 − ½ e^{−x/b}` above.
    fn cdf(&self, x: f64) -> f64 {
        if x <= 0.0 {
            0.5 * (x / self.b).exp()
        } else {
            1.0 - 0.5 * (-x / self.b).exp()
        }
    }
    /// `P(X > x) = F(−x)` (symmetry), relatively accurate in the upper tail.
    fn sf(&self, x: f64) -> f64 {
        self.cdf(-x)
    }
    /// `b ln(2p)` for `p ≤ ½`, `−b ln(2(1 − p))` above (`1 − p` exact there).
    fn quantile(&self, p: f64) -> f64 {
        if !(0.0..=1.0).contains(&p) {
            f64::NAN
        } else if p <= 0.5 {
            self.b * (2.0 * p).ln()
        } else {
            -self.b * (2.0 * (1.0 - p)).ln()
        }
    }
}

impl NoiseMoments for Laplace {
    /// `E|X| = b` (docs/maths.md §1.1).
    fn mean_abs(&self) -> f64 {
        self.b
    }
    /// `E X² = 2b²` (docs/maths.md §1.1).
    fn second_moment(&self) -> f64 {
        2.0 * self.b * self.b
    }
}

/// Scale of the Laplace mechanism: `b = Δ/ε` gives ε-DP for ℓ1 sensitivity Δ
/// (Dwork et al. 2006; docs/maths.md §1.1).
///
/// Errors: ε or Δ not in `(0, ∞)`.
///
/// ```
/// assert_eq!(densities::laplace::laplace_scale(0.5, 2.0).unwrap(), 4.0);
/// assert!(densities::laplace::laplace_scale(0.0, 1.0).is_err());
/// ```
pub fn laplace_scale(epsilon: f64, sensitivity: f64) -> Result<f64, DensityError> {
    check_open("epsilon", epsilon, 0.0, f64::INFINITY, "(0, inf)")?;
    check_open("sensitivity", sensitivity, 0.0, f64::INFINITY, "(0, inf)")?;
    Ok(sensitivity / epsilon)
}

/// Privacy profile of the Laplace mechanism (docs/maths.md §0 and §1.1): the hockey-stick
/// divergence between `Laplace(b)` and its shift by Δ, with `μ = Δ/b`:
///
/// `δ(ε) = max(0, 1 − e^{(ε − μ)/2})`, computed as `−expm1((ε − μ)/2)` (no cancellation
/// for ε close to μ).
///
/// The formula holds for `ε ≥ −μ`; below that (privacy loss bounded by μ) the divergence
/// is `1 − e^ε`, which is returned there. `μ` is used as `|μ|`.
///
/// ```
/// use densities::laplace::laplace_delta;
/// assert_eq!(laplace_delta(1.0, 1.0), 0.0);
/// assert!((laplace_delta(0.0, 1.0) - (1.0 - (-0.5f64).exp())).abs() < 1e-16);
/// ```
pub fn laplace_delta(epsilon: f64, mu: f64) -> f64 {
    if epsilon.is_nan() || mu.is_nan() {
        return f64::NAN;
    }
    let mu = mu.abs();
    if epsilon >= mu {
        0.0
    } else if epsilon >= -mu {
        -(0.5 * (epsilon - mu)).exp_m1()
    } else {
        -epsilon.exp_m1()
    }
}
