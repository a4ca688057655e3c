//! Small distribution traits shared by every noise family of the crate (in the
//! spirit of `statrs`: one trait per capability, so a family implements only what it
//! can compute accurately).
//!
//! The noise distributions are those of docs/maths.md §1 (Laplace §1.1, Gaussian §1.2,
//! truncated Laplace §1.3); the moments are the "noise amplitude" `E|X|` and "noise
//! power" `E X²` used to compare mechanisms (Geng, Ding, Guo & Kumar 2018, Theorems 2–3;
//! Balle & Wang 2018, Section 4).

/// A distribution on ℝ with a density (the `p`, `q` of the hockey-stick divergence,
/// docs/maths.md §0).
pub trait Continuous {
    /// The density `p(x)`; `0` outside the support.
    fn pdf(&self, x: f64) -> f64;
    /// `ln p(x)`; `−∞` outside the support. Implementations compute it directly
    /// (not as `pdf(x).ln()`), so it stays finite where `p(x)` underflows.
    fn ln_pdf(&self, x: f64) -> f64;
}

/// A distribution on ℝ with a cumulative distribution function (trade-off functions of
/// log-concave noise are `F(F⁻¹(1 − α) − Δ)`, docs/maths.md §1.3).
pub trait ContinuousCdf {
    /// `F(x) = P(X ≤ x)`.
    fn cdf(&self, x: f64) -> f64;
    /// Survival function `1 − F(x) = P(X > x)`, computed without the cancellation of
    /// `1 − cdf(x)` (relative accuracy in the upper tail).
    fn sf(&self, x: f64) -> f64;
    /// Quantile `F⁻¹(p)` for `p ∈ [0, 1]` (the support's ends at 0 and 1; NaN outside).
    fn quantile(&self, p: f64) -> f64;
}

/// The two moments used to compare additive noise mechanisms (docs/maths.md §1.1–§1.3;
/// Geng et al. 2018, Theorems 2–3).
pub trait NoiseMoments {
    /// Noise amplitude `E|X|`.
    fn mean_abs(&self) -> f64;
    /// Noise power `E X²` (the second raw moment, not the variance).
    fn second_moment(&self) -> f64;
}
