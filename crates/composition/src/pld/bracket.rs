//! A certified bracket `[Lower, Upper]` of the exact privacy profile: the pessimistic and
//! optimistic laws computed side by side; the width is the error statement.

use super::{Bound, Interval, LossModel, PldConfig, PrivacyLoss};
use crate::error::Result;

/// The optimistic ([`Bound::Lower`]) and pessimistic ([`Bound::Upper`]) laws of the same
/// mechanism on the same grid. Every query returns an [`Interval`] that contains the exact
/// value; its width bounds the discretisation, truncation and floating-point error
/// (roughly `k·Δ` in ε after `k` compositions, module docs of [`super`]).
///
/// ```
/// use composition::pld::{GaussianLoss, PldBracket, PldConfig, Bound};
/// let cfg = PldConfig::new(1e-4, Bound::Upper).unwrap();
/// let b = PldBracket::from_model(&GaussianLoss::new(0.5).unwrap(), &cfg).unwrap();
/// let b16 = b.self_compose(16).unwrap();
/// let d = b16.delta(1.0).unwrap();
/// let exact = densities::gaussian::gaussian_delta(1.0, 2.0);
/// assert!(d.contains(exact) && d.width() < 1e-3);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PldBracket {
    /// The optimistic law (`δ ≤ exact`).
    pub lower: PrivacyLoss,
    /// The pessimistic law (`δ ≥ exact`).
    pub upper: PrivacyLoss,
}

impl PldBracket {
    /// Discretises `model` twice, rounding down and up (the bound in `config` is ignored).
    ///
    /// ```
    /// use composition::pld::{LaplaceLoss, PldBracket, PldConfig, Bound};
    /// let cfg = PldConfig::new(1e-3, Bound::Estimate).unwrap();
    /// let b = PldBracket::from_model(&LaplaceLoss::new(1.0).unwrap(), &cfg).unwrap();
    /// assert!(b.delta(0.3).unwrap().contains(densities::laplace::laplace_delta(0.3, 1.0)));
    /// ```
    pub fn from_model(model: &dyn LossModel, config: &PldConfig) -> Result<Self> {
        Ok(Self {
            lower: PrivacyLoss::from_model(model, &config.with_bound(Bound::Lower))?,
            upper: PrivacyLoss::from_model(model, &config.with_bound(Bound::Upper))?,
        })
    }

    /// Both laws composed with the corresponding laws of `other`
    /// ([`PrivacyLoss::compose`]).
    ///
    /// ```
    /// use composition::pld::{GaussianLoss, PldBracket, PldConfig, Bound};
    /// let cfg = PldConfig::new(1e-3, Bound::Upper).unwrap();
    /// let a = PldBracket::from_model(&GaussianLoss::new(0.6).unwrap(), &cfg).unwrap();
    /// let b = PldBracket::from_model(&GaussianLoss::new(0.8).unwrap(), &cfg).unwrap();
    /// let d = a.compose(&b).unwrap().delta(0.5).unwrap();
    /// assert!(d.contains(densities::gaussian::gaussian_delta(0.5, 1.0)));
    /// ```
    pub fn compose(&self, other: &PldBracket) -> Result<Self> {
        Ok(Self {
            lower: self.lower.compose(&other.lower)?,
            upper: self.upper.compose(&other.upper)?,
        })
    }

    /// Both laws composed `k` times ([`PrivacyLoss::self_compose`]).
    ///
    /// ```
    /// use composition::pld::{DiscreteLoss, PldBracket, PldConfig, Bound};
    /// let cfg = PldConfig::new(0.03, Bound::Upper).unwrap();
    /// let rr = PldBracket::from_model(&DiscreteLoss::randomized_response(0.1).unwrap(), &cfg)
    ///     .unwrap();
    /// let d = rr.self_compose(50).unwrap().delta(1.0).unwrap();
    /// assert!(d.contains(composition::dp_delta(50, 0.1, 1.0).unwrap()));
    /// ```
    pub fn self_compose(&self, k: u64) -> Result<Self> {
        Ok(Self {
            lower: self.lower.self_compose(k)?,
            upper: self.upper.self_compose(k)?,
        })
    }

    /// `[δ_Lower(ε), δ_Upper(ε)]`, which contains the exact `δ(ε)`.
    ///
    /// Errors: ε not finite.
    ///
    /// ```
    /// use composition::pld::{LaplaceLoss, PldBracket, PldConfig, Bound};
    /// let cfg = PldConfig::new(1e-3, Bound::Upper).unwrap();
    /// let b = PldBracket::from_model(&LaplaceLoss::new(0.5).unwrap(), &cfg).unwrap();
    /// assert!(b.delta(f64::NAN).is_err());
    /// ```
    pub fn delta(&self, eps: f64) -> Result<Interval> {
        Ok(Interval::new(
            self.lower.delta(eps)?,
            self.upper.delta(eps)?,
        ))
    }

    /// `[ε_Lower(δ), ε_Upper(δ)]`, which contains the exact least ε with `δ(ε) ≤ δ`.
    ///
    /// Errors: as [`PrivacyLoss::epsilon`] (an unreachable target for the upper law is an
    /// error: nothing certified can then be said).
    ///
    /// ```
    /// use composition::pld::{GaussianLoss, PldBracket, PldConfig, Bound};
    /// let cfg = PldConfig::new(1e-3, Bound::Upper).unwrap();
    /// let b = PldBracket::from_model(&GaussianLoss::new(1.0).unwrap(), &cfg).unwrap();
    /// let e = b.epsilon(1e-5).unwrap();
    /// assert!(e.contains(densities::gaussian::gaussian_epsilon(1e-5, 1.0)));
    /// ```
    pub fn epsilon(&self, delta: f64) -> Result<Interval> {
        Ok(Interval::new(
            self.lower.epsilon(delta)?,
            self.upper.epsilon(delta)?,
        ))
    }
}
