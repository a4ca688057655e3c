//! A privacy-loss-distribution (PLD) accountant with FFT composition (Koskela, Jälkö &
//! Honkela 2020; Meiser & Mohammadi 2018 "privacy buckets"; Google's `dp_accounting`;
//! docs/maths.md §0, §1.4 "Exact δ of the bounded-noise mechanism", §3.1 and §3.4).
//!
//! # What is computed
//! For a pair of output distributions `P = M(D)`, `Q = M(D')` the privacy loss is
//! `L = ln(p(Y)/q(Y))` with `Y ~ P` (docs/maths.md §0), a random variable with values in
//! `ℝ ∪ {+∞}` (`+∞` where `q = 0 < p`). The hockey-stick divergence is a functional of the
//! P-law of `L` alone:
//!
//! `δ(ε) = P(L = +∞) + E_P[(1 − e^{ε − L})_+ ; L < ∞]`, for every real ε.
//!
//! Under composition of independent mechanisms the losses add, so the P-law of the total
//! loss is the convolution of the individual P-laws. A [`PrivacyLoss`] stores that law on
//! a grid `i·Δ` (`i` in `[offset, offset + len)`), plus the mass of `+∞`.
//!
//! **Direction.** Everything here is the loss of `P` against `Q`. `δ_{P‖Q}` and `δ_{Q‖P}`
//! differ for asymmetric pairs; a mechanism is (ε, δ)-DP iff *both* are `≤ δ` (docs/maths.md
//! §0). Laplace, Gaussian, randomized response, the truncated Laplacian and every
//! symmetric noise (including the bounded noise of §1.4) give the same PLD in both
//! directions (reflect `y ↦ Δ − y`), so one direction suffices. For an asymmetric pair
//! build both directions (e.g. [`ShiftedNoise::new`] with the reflected noise, or
//! [`DiscreteLoss`] with the roles swapped) and take the larger δ.
//!
//! # Bounds: [`Bound::Upper`], [`Bound::Lower`], [`Bound::Estimate`]
//! The hockey-stick integrand `(1 − e^{ε − ℓ})_+` is non-decreasing in `ℓ`, and so is its
//! composition with any other loss (`x ↦ E[(1 − e^{ε − x − L'})_+]`). Hence if the
//! survival function of a discretised law dominates the true one at every point
//! (`P'(L' > t) ≥ P(L > t)` for all `t`), its δ is an upper bound for every ε, before and
//! after composing with anything that is itself an upper bound (layer-cake formula plus
//! induction over the factors).
//! - `Upper` (pessimistic, certified): every loss value is rounded **up** to the grid
//!   (the mass in `((i−1)Δ, iΔ]` goes to `iΔ`); truncated upper tails are moved to `+∞`
//!   (charged to δ, [`PrivacyLoss::tail_mass`]); truncated lower tails are moved up to the
//!   lowest kept bin. Floating-point error is bounded and added ([`PrivacyLoss::slack`]).
//! - `Lower` (optimistic, certified): losses rounded **down**, truncated lower tails
//!   dropped, truncated upper tails moved down to the highest kept bin, slack subtracted.
//! - `Estimate`: continuous parts rounded to the nearest grid point, atoms split between
//!   the two neighbouring grid points so that the mean is kept; tails truncated during
//!   composition are moved to the nearest kept bin. Not a bound, but its bias is second
//!   order in Δ.
//!
//! `Lower ≤ exact ≤ Upper` holds at every ε, and the pair [`PldBracket`] reports both: the
//! width of that bracket *is* the discretisation error statement.
//!
//! # Why rounding up at a fixed step biases a k-fold sum by up to k·Δ
//! Rounding one loss up moves it by some `r ∈ [0, Δ)`. The composed loss is the sum of
//! `k` independently rounded losses, so it is moved up by `r₁ + … + r_k ∈ [0, kΔ)`: the
//! roundings never cancel, they accumulate. For a continuous loss the `rᵢ` are roughly
//! uniform, so the sum is shifted by about `kΔ/2`, and in the worst case (atoms just
//! above a grid point) by almost `kΔ`. By monotonicity this gives the two-sided statement
//! `δ_exact(ε) ≤ δ_Upper(ε) ≤ δ_exact(ε − kΔ)` (up to the charged tails and slack), and
//! likewise `δ_exact(ε + kΔ) ≤ δ_Lower(ε) ≤ δ_exact(ε)`; in ε at fixed δ the bracket is up
//! to `kΔ` wide. [`PrivacyLoss::max_shift`] tracks that shift exactly (it is 0 for atoms
//! on the grid, e.g. randomized response with `Δ` dividing ε). Per-query losses of the
//! bounded-noise mechanism (§1.4) are ~1e-4 at `k = 1e6`: a certified bracket then needs
//! `Δ ≪ ε/k`; the `Estimate` mode instead keeps the mean and inflates the variance by at
//! most `Δ²/4` per factor, a relative error of order `Δ²/Var(L)` independent of k.
//!
//! # Composition
//! [`PrivacyLoss::compose`] convolves two laws (direct sum for short supports, otherwise a
//! zero-padded linear FFT convolution via `rustfft`, so there is no wrap-around).
//! [`PrivacyLoss::self_compose`] computes the k-fold law by raising the discrete Fourier
//! transform to the k-th power. The transform length is chosen by Chernoff bounds from
//! the discrete law's own moment generating function: the window
//! `[W_lo, W_lo + n)` holds all but a provably tiny mass of the sum; the mass outside
//! wraps around (aliasing) and is accounted for one-sidedly (Upper: the Chernoff bound of
//! the upper tail is charged to δ; Lower: the bound of both tails is subtracted). When even
//! that window exceeds [`PldConfig::max_len`] (huge k), `self_compose` squares repeatedly
//! (binary exponentiation), truncating each partial result's tails within a budget scaled
//! by the number of times it is still going to be multiplied, and coarsening the grid by
//! 2 (with the mode's rounding) whenever the support outgrows `min(max_len/2, 2¹⁷)` bins
//! (a law over 2¹⁷ bins is resolved to ~1e-4 of its width, so this extra rounding is far
//! below the initial discretisation's). `k = 1e10` Gaussians with `Δ = σ_L/20` take about
//! 3 s and reproduce the exact profile to ~1e-5 in `Estimate` mode.
//!
//! At large k the certified pair is only as tight as `k·Δ` allows (see above), and the
//! a-priori floating-point slack grows like `k·u·log₂n` (about 4e-10 for 1e4 Laplace
//! mechanisms on 1.2e6 bins): `Estimate` is the practical answer there, with the bracket
//! at a coarser k or step as its check.
//!
//! # Floating point
//! FFT round-off creates noise of size ~1e-16·‖x‖ in every bin. Negative bins are clamped
//! to 0 (this never moves a value further from a non-negative truth), and an a-priori
//! bound on the ℓ1 norm of the error is carried in [`PrivacyLoss::slack`], propagated
//! through compositions (`s_ab = s_a m_b + s_b m_a + s_a s_b + new`), added to δ in
//! `Upper` and subtracted in `Lower`. The bound uses the standard Cooley–Tukey error
//! analysis (Higham 2002, §24.1: `‖fl(FFT x) − FFT x‖₂ ≤ c·log₂n·u·‖FFT x‖₂`) with
//! `c = 6` and a margin; it is an a-priori model of the algorithm, not machine-checked.
//! δ values are accurate in *absolute* terms (~1e-15 for a well-scaled problem);
//! δ below ~1e-14 is not resolved by an FFT accountant.
//!
//! ```
//! use composition::pld::{Bound, PldConfig, PrivacyLoss};
//! let cfg = PldConfig::new(1e-3, Bound::Upper).unwrap();
//! // 16 Gaussian mechanisms with μ = 0.5 compose to one with μ = 2.
//! let pld = PrivacyLoss::gaussian(0.5, &cfg).unwrap().self_compose(16).unwrap();
//! let exact = densities::gaussian::gaussian_delta(1.0, 2.0);
//! let upper = pld.delta(1.0).unwrap();
//! assert!(upper >= exact && upper < exact + 0.02);
//! ```

mod bracket;
mod compose;
mod fft;
mod least_radius;
mod mechanisms;
mod model;
mod recentred;
mod shifted_noise;

pub use bracket::PldBracket;
pub use least_radius::{
    exact_calibration, least_radius, ExactCalibration, LeastRadius, RadiusMode, RadiusSettings,
};
pub use mechanisms::{
    DiscreteLoss, GaussianLoss, LaplaceLoss, LogConcaveNoise, ShiftedNoise, TruncatedLaplaceLoss,
};
pub use model::LossModel;
pub use recentred::{certified_shifted_noise_delta, pessimistic_min_delta, PESSIMISTIC_MAX_K};
pub use shifted_noise::shifted_noise_delta;

use crate::error::{out_of_range, CompositionError, Result};
use crate::invert::next_up;

/// Unit roundoff of `f64` (`2⁻⁵³`).
pub(crate) const U: f64 = f64::EPSILON / 2.0;

/// Which side of the exact δ a discretised privacy-loss law is on (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bound {
    /// Pessimistic: losses rounded up, truncated upper tails charged to δ, floating-point
    /// slack added. `δ ≥ exact` for every ε (certified).
    Upper,
    /// Optimistic: losses rounded down, truncated mass dropped or moved down, slack
    /// subtracted. `δ ≤ exact` for every ε (certified).
    Lower,
    /// Best estimate: continuous parts rounded to nearest, atoms split preserving the
    /// mean. Neither bound; bias second order in the step.
    Estimate,
}

/// A closed interval `[lo, hi]` (a bracket of masses, of δ, or of ε).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

impl Interval {
    /// The interval `[lo, hi]` (no validation; `lo ≤ hi` expected).
    ///
    /// ```
    /// let i = composition::pld::Interval::new(0.1, 0.3);
    /// assert!((i.width() - 0.2).abs() < 1e-16 && i.contains(0.2));
    /// ```
    pub fn new(lo: f64, hi: f64) -> Self {
        Self { lo, hi }
    }
    /// A degenerate interval `[x, x]` (an exactly known value).
    ///
    /// ```
    /// assert_eq!(composition::pld::Interval::point(0.5).width(), 0.0);
    /// ```
    pub fn point(x: f64) -> Self {
        Self { lo: x, hi: x }
    }
    /// `hi − lo`.
    ///
    /// ```
    /// assert_eq!(composition::pld::Interval::new(1.0, 3.0).width(), 2.0);
    /// ```
    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }
    /// Midpoint `(lo + hi)/2`.
    ///
    /// ```
    /// assert_eq!(composition::pld::Interval::new(1.0, 3.0).mid(), 2.0);
    /// ```
    pub fn mid(&self) -> f64 {
        0.5 * (self.lo + self.hi)
    }
    /// Whether `lo ≤ x ≤ hi`.
    ///
    /// ```
    /// assert!(!composition::pld::Interval::new(1.0, 3.0).contains(3.5));
    /// ```
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }
}

/// Discretisation and composition settings of a [`PrivacyLoss`].
///
/// ```
/// use composition::pld::{Bound, PldConfig};
/// let cfg = PldConfig::new(1e-4, Bound::Upper).unwrap().with_tail(1e-14).unwrap();
/// assert_eq!(cfg.step, 1e-4);
/// assert!(PldConfig::new(0.0, Bound::Upper).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PldConfig {
    /// Grid step Δ of the loss (natural-log units), finite and `> 0`.
    pub step: f64,
    /// Which side of the exact value to be on.
    pub bound: Bound,
    /// Truncation budget: the largest P-mass that one discretisation (or one stage of a
    /// composition) may cut from the tails, in `[0, 1e-3]`; default `1e-15`. In `Upper`
    /// mode the cut upper tail is charged to δ (see [`PrivacyLoss::tail_mass`]).
    /// Unbounded losses (Gaussian) need it `> 0`.
    pub tail: f64,
    /// Largest FFT length (and support length) used; default `2²²`. Beyond it,
    /// [`PrivacyLoss::self_compose`] switches to repeated squaring with grid coarsening.
    pub max_len: usize,
}

impl PldConfig {
    /// Settings with step `Δ` and the given bound; `tail = 1e-15`, `max_len = 2²²`.
    ///
    /// Errors: `step` not finite and `> 0`.
    ///
    /// ```
    /// let c = composition::pld::PldConfig::new(0.01, composition::pld::Bound::Lower).unwrap();
    /// assert_eq!(c.tail, 1e-15);
    /// ```
    pub fn new(step: f64, bound: Bound) -> Result<Self> {
        if !(step.is_finite() && step > 0.0) {
            return Err(out_of_range("step", step, "(0, inf), finite"));
        }
        Ok(Self {
            step,
            bound,
            tail: 1e-15,
            max_len: 1 << 22,
        })
    }

    /// The same settings with another truncation budget, in `[0, 1e-3]`.
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig};
    /// assert!(PldConfig::new(0.1, Bound::Upper).unwrap().with_tail(0.5).is_err());
    /// ```
    pub fn with_tail(mut self, tail: f64) -> Result<Self> {
        if !(0.0..=1e-3).contains(&tail) {
            return Err(out_of_range("tail", tail, "[0, 1e-3]"));
        }
        self.tail = tail;
        Ok(self)
    }

    /// The same settings with another FFT length limit, in `[2¹⁰, 2²⁸]`.
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig};
    /// assert!(PldConfig::new(0.1, Bound::Upper).unwrap().with_max_len(1 << 12).is_ok());
    /// assert!(PldConfig::new(0.1, Bound::Upper).unwrap().with_max_len(10).is_err());
    /// ```
    pub fn with_max_len(mut self, max_len: usize) -> Result<Self> {
        if !((1 << 10)..=(1 << 28)).contains(&max_len) {
            return Err(out_of_range("max_len", max_len as f64, "[2^10, 2^28]"));
        }
        self.max_len = max_len;
        Ok(self)
    }

    /// The same settings with another bound.
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig};
    /// let c = PldConfig::new(0.1, Bound::Upper).unwrap().with_bound(Bound::Lower);
    /// assert_eq!(c.bound, Bound::Lower);
    /// ```
    pub fn with_bound(mut self, bound: Bound) -> Self {
        self.bound = bound;
        self
    }
}

/// The P-law of a privacy loss on the grid `i·Δ`, `i ∈ [offset, offset + len)`, with an
/// atom at `+∞`, the truncated mass, a floating-point slack and the accumulated rounding
/// shift (module docs for the meaning of each under each [`Bound`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PrivacyLoss {
    pub(crate) step: f64,
    pub(crate) bound: Bound,
    pub(crate) tail_budget: f64,
    pub(crate) max_len: usize,
    pub(crate) offset: i64,
    pub(crate) pmf: Vec<f64>,
    pub(crate) inf_mass: f64,
    pub(crate) tail_mass: f64,
    pub(crate) slack: f64,
    pub(crate) shift: f64,
}

/// Parts of a [`PrivacyLoss`] other than its settings.
pub(crate) struct Parts {
    pub offset: i64,
    pub pmf: Vec<f64>,
    pub inf_mass: f64,
    pub tail_mass: f64,
    pub slack: f64,
    pub shift: f64,
}

impl PrivacyLoss {
    /// Assembles a law from parts, trimming zero bins at both ends.
    pub(crate) fn assemble(cfg: &PldConfig, step: f64, parts: Parts) -> Self {
        let mut out = Self {
            step,
            bound: cfg.bound,
            tail_budget: cfg.tail,
            max_len: cfg.max_len,
            offset: parts.offset,
            pmf: parts.pmf,
            inf_mass: parts.inf_mass.clamp(0.0, 1.0),
            tail_mass: parts.tail_mass.max(0.0),
            slack: parts.slack.max(0.0),
            shift: parts.shift.max(0.0),
        };
        out.trim();
        out
    }

    /// The settings this law carries (its current step, which coarsening may have grown).
    pub(crate) fn config(&self) -> PldConfig {
        PldConfig {
            step: self.step,
            bound: self.bound,
            tail: self.tail_budget,
            max_len: self.max_len,
        }
    }

    /// Removes exact-zero bins at both ends (keeps at least one bin).
    pub(crate) fn trim(&mut self) {
        for v in self.pmf.iter_mut() {
            if v.is_nan() || *v < 0.0 {
                *v = 0.0;
            }
        }
        let first = self.pmf.iter().position(|&v| v > 0.0);
        match first {
            None => {
                self.pmf = vec![0.0];
                self.offset = 0;
            }
            Some(f) => {
                let last = self.pmf.iter().rposition(|&v| v > 0.0).unwrap_or(f);
                self.pmf.truncate(last + 1);
                self.pmf.drain(..f);
                self.offset += f as i64;
            }
        }
    }

    /// Discretises a [`LossModel`] on the grid of `config` with its rounding
    /// (module docs; survival-function dominance for `Upper`/`Lower`).
    ///
    /// Errors: invalid model output (negative masses, non-finite loss range), a range
    /// that is unbounded while `config.tail = 0`, or more than `config.max_len` bins.
    ///
    /// ```
    /// use composition::pld::{Bound, LaplaceLoss, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(1e-3, Bound::Upper).unwrap();
    /// let pld = PrivacyLoss::from_model(&LaplaceLoss::new(1.0).unwrap(), &cfg).unwrap();
    /// assert!((pld.mass() - 1.0).abs() < 1e-12);
    /// ```
    pub fn from_model(model: &dyn LossModel, config: &PldConfig) -> Result<Self> {
        model::discretise(model, config)
    }

    /// The Laplace mechanism `Lap(b)` with sensitivity Δ, `μ = Δ/b` (docs/maths.md §1.1):
    /// atoms at `±μ` plus a continuous part on `(−μ, μ)` ([`LaplaceLoss`]).
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(1e-3, Bound::Upper).unwrap();
    /// let d = PrivacyLoss::laplace(1.0, &cfg).unwrap().delta(0.5).unwrap();
    /// assert!(d >= densities::laplace::laplace_delta(0.5, 1.0));
    /// ```
    pub fn laplace(mu: f64, config: &PldConfig) -> Result<Self> {
        Self::from_model(&LaplaceLoss::new(mu)?, config)
    }

    /// The Gaussian mechanism with `μ = Δ/σ`: `L ~ N(μ²/2, μ²)` under P (docs/maths.md §1.2;
    /// [`GaussianLoss`]). Needs `config.tail > 0`.
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(1e-3, Bound::Lower).unwrap();
    /// let d = PrivacyLoss::gaussian(1.0, &cfg).unwrap().delta(0.5).unwrap();
    /// assert!(d <= densities::gaussian::gaussian_delta(0.5, 1.0));
    /// ```
    pub fn gaussian(mu: f64, config: &PldConfig) -> Result<Self> {
        Self::from_model(&GaussianLoss::new(mu)?, config)
    }

    /// Randomized response, the worst case of ε-DP: loss `+ε` with P-probability
    /// `e^ε/(1+e^ε)`, `−ε` otherwise (docs/maths.md §3.1; [`DiscreteLoss`]).
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(0.125, Bound::Upper).unwrap();
    /// let d = PrivacyLoss::randomized_response(0.5, &cfg).unwrap().delta(0.0).unwrap();
    /// assert!((d - composition::dp_delta(1, 0.5, 0.0).unwrap()).abs() < 1e-14);
    /// ```
    pub fn randomized_response(eps: f64, config: &PldConfig) -> Result<Self> {
        Self::from_model(&DiscreteLoss::randomized_response(eps)?, config)
    }

    /// The truncated Laplacian noise (docs/maths.md §1.3) against its shift by
    /// `sensitivity`, with its `+∞` atom ([`TruncatedLaplaceLoss`]).
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// use densities::truncated_laplace::TruncatedLaplace;
    /// let tl = TruncatedLaplace::new(0.5, 1e-3, 1.0).unwrap();
    /// let cfg = PldConfig::new(0.05, Bound::Upper).unwrap();
    /// let pld = PrivacyLoss::truncated_laplace(&tl, 1.0, &cfg).unwrap();
    /// // Theorem 1 is tight: δ(ε) = δ.
    /// assert!((pld.delta(0.5).unwrap() - 1e-3).abs() < 1e-12);
    /// ```
    pub fn truncated_laplace(
        noise: &densities::truncated_laplace::TruncatedLaplace,
        sensitivity: f64,
        config: &PldConfig,
    ) -> Result<Self> {
        Self::from_model(&TruncatedLaplaceLoss::new(noise, sensitivity)?, config)
    }

    /// A law given by finite atoms `(loss, P-mass)` and the P-mass of `+∞`
    /// ([`DiscreteLoss`]).
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(0.5, Bound::Upper).unwrap();
    /// let pld = PrivacyLoss::from_atoms(&[(1.0, 0.5), (-1.0, 0.4)], 0.1, &cfg).unwrap();
    /// assert!((pld.delta(1.0).unwrap() - 0.1).abs() < 1e-15);
    /// ```
    pub fn from_atoms(atoms: &[(f64, f64)], inf_mass: f64, config: &PldConfig) -> Result<Self> {
        Self::from_model(&DiscreteLoss::new(atoms.to_vec(), inf_mass)?, config)
    }

    /// Grid step Δ (grows by factors of 2 when [`Self::self_compose`] coarsens).
    ///
    /// ```
    /// # use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(0.01, Bound::Upper).unwrap();
    /// assert_eq!(PrivacyLoss::laplace(1.0, &cfg).unwrap().step(), 0.01);
    /// ```
    pub fn step(&self) -> f64 {
        self.step
    }

    /// Which side of the exact value this law is on.
    ///
    /// ```
    /// # use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(0.01, Bound::Lower).unwrap();
    /// assert_eq!(PrivacyLoss::laplace(1.0, &cfg).unwrap().bound(), Bound::Lower);
    /// ```
    pub fn bound(&self) -> Bound {
        self.bound
    }

    /// Grid index of the first bin: bin `j` of [`Self::pmf`] is the loss `(offset + j)·Δ`.
    ///
    /// ```
    /// # use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(0.5, Bound::Upper).unwrap();
    /// let p = PrivacyLoss::randomized_response(1.0, &cfg).unwrap();
    /// assert_eq!((p.offset(), p.pmf().len()), (-2, 5));
    /// ```
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// P-masses of the finite grid losses.
    ///
    /// ```
    /// # use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(0.5, Bound::Upper).unwrap();
    /// let p = PrivacyLoss::randomized_response(1.0, &cfg).unwrap();
    /// assert!((p.pmf()[4] - 1.0 / (1.0 + (-1f64).exp())).abs() < 1e-15);
    /// ```
    pub fn pmf(&self) -> &[f64] {
        &self.pmf
    }

    /// The grid loss of bin `j`: `(offset + j)·Δ`.
    ///
    /// ```
    /// # use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(0.5, Bound::Upper).unwrap();
    /// let p = PrivacyLoss::randomized_response(1.0, &cfg).unwrap();
    /// assert_eq!(p.loss(0), -1.0);
    /// ```
    pub fn loss(&self, j: usize) -> f64 {
        (self.offset + j as i64) as f64 * self.step
    }

    /// P-probability of the loss `+∞` (where Q has no density; e.g. the truncated
    /// Laplacian, the bounded noise), composed as `1 − Π(1 − pᵢ)`.
    ///
    /// ```
    /// # use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(0.5, Bound::Upper).unwrap();
    /// let p = PrivacyLoss::from_atoms(&[(0.0, 0.9)], 0.1, &cfg).unwrap();
    /// assert!((p.self_compose(2).unwrap().inf_mass() - 0.19).abs() < 1e-15);
    /// ```
    pub fn inf_mass(&self) -> f64 {
        self.inf_mass
    }

    /// Truncated mass. `Upper`/`Estimate`: mass moved to `+∞` (counted in δ); `Lower`:
    /// mass dropped (not counted). At most a small multiple of `tail` per operation.
    ///
    /// ```
    /// # use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(1e-2, Bound::Upper).unwrap();
    /// let p = PrivacyLoss::gaussian(1.0, &cfg).unwrap();
    /// assert!(p.tail_mass() > 0.0 && p.tail_mass() <= 1e-15);
    /// ```
    pub fn tail_mass(&self) -> f64 {
        self.tail_mass
    }

    /// Bound on the ℓ1 norm of the floating-point (and aliasing, in `Lower`) error of the
    /// bins: added to δ in `Upper`, subtracted in `Lower`, ignored in `Estimate`.
    ///
    /// ```
    /// # use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(1e-3, Bound::Upper).unwrap();
    /// let p = PrivacyLoss::laplace(0.1, &cfg).unwrap().self_compose(100).unwrap();
    /// assert!(p.slack() > 0.0 && p.slack() < 1e-10);
    /// ```
    pub fn slack(&self) -> f64 {
        self.slack
    }

    /// Largest total displacement of a loss value by rounding (loss units): `Upper` moved
    /// every (non-truncated) loss up by at most this much, `Lower` down. This is the `k·Δ`
    /// of the module docs, smaller when atoms sit on the grid.
    ///
    /// ```
    /// # use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(1e-3, Bound::Upper).unwrap();
    /// let p = PrivacyLoss::gaussian(0.5, &cfg).unwrap().self_compose(10).unwrap();
    /// assert!((p.max_shift() - 10.0 * 1e-3).abs() < 1e-12);
    /// ```
    pub fn max_shift(&self) -> f64 {
        self.shift
    }

    /// Total P-mass of the finite bins (`≈ 1 − inf_mass − tail_mass`).
    ///
    /// ```
    /// # use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(1e-3, Bound::Upper).unwrap();
    /// assert!((PrivacyLoss::laplace(1.0, &cfg).unwrap().mass() - 1.0).abs() < 1e-13);
    /// ```
    pub fn mass(&self) -> f64 {
        self.pmf.iter().sum()
    }

    /// Mean of the finite part of the grid law, `Σ pᵢ·iΔ / Σ pᵢ` (the expected privacy
    /// loss when there is no `+∞` mass).
    ///
    /// ```
    /// # use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(1e-3, Bound::Estimate).unwrap();
    /// let m = PrivacyLoss::gaussian(1.0, &cfg).unwrap().mean();
    /// assert!((m - 0.5).abs() < 1e-6);
    /// ```
    pub fn mean(&self) -> f64 {
        let s: f64 = self
            .pmf
            .iter()
            .enumerate()
            .map(|(j, &p)| p * j as f64)
            .sum();
        (self.offset as f64 + s / self.mass()) * self.step
    }

    /// `Σ_{iΔ > ε} pᵢ (1 − e^{ε − iΔ})`, summed directly.
    fn hinge_sum(&self, eps: f64) -> f64 {
        let n = self.pmf.len();
        let mut start = ((eps / self.step).floor() as i64)
            .saturating_add(1)
            .saturating_sub(self.offset)
            .clamp(0, n as i64) as usize;
        while start > 0 && self.loss(start - 1) > eps {
            start -= 1;
        }
        while start < n && self.loss(start) <= eps {
            start += 1;
        }
        let mut s = 0.0;
        for j in start..n {
            s += self.pmf[j] * -(eps - self.loss(j)).exp_m1();
        }
        s
    }

    /// Relative rounding allowance of a sum of `len` non-negative terms.
    fn sum_allowance(&self) -> f64 {
        4.0 * (self.pmf.len() as f64 + 8.0) * U
    }

    /// The constant part of δ (what every ε pays) and the factor on the hinge sum.
    fn delta_affine(&self) -> (f64, f64) {
        match self.bound {
            Bound::Upper => (
                self.inf_mass + self.tail_mass + self.slack,
                1.0 + self.sum_allowance(),
            ),
            Bound::Lower => (self.inf_mass - self.slack, 1.0 - self.sum_allowance()),
            Bound::Estimate => (self.inf_mass + self.tail_mass, 1.0),
        }
    }

    fn delta_unchecked(&self, eps: f64) -> f64 {
        let (c, f) = self.delta_affine();
        (c + f * self.hinge_sum(eps)).clamp(0.0, 1.0)
    }

    /// `δ(ε) = P(L = ∞) + Σᵢ pᵢ (1 − e^{ε − iΔ})_+` (docs/maths.md §0, hockey-stick via the
    /// privacy loss under P), with the bound's allowances: `Upper` adds the truncated tail
    /// and the slack, `Lower` subtracts the slack (module docs). Any finite ε is allowed
    /// (negative ε gives the full hockey-stick curve).
    ///
    /// Errors: ε not finite.
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(0.1, Bound::Upper).unwrap();
    /// let rr = PrivacyLoss::randomized_response(1.0, &cfg).unwrap();
    /// let want = composition::dp_delta(1, 1.0, 0.3).unwrap();
    /// assert!((rr.delta(0.3).unwrap() - want).abs() < 1e-14);
    /// ```
    pub fn delta(&self, eps: f64) -> Result<f64> {
        if !eps.is_finite() {
            return Err(out_of_range("epsilon", eps, "finite"));
        }
        Ok(self.delta_unchecked(eps))
    }

    /// Least `ε ≥ 0` with `δ(ε) ≤ δ_target` (inverse of the non-increasing map
    /// [`Self::delta`]). Within a grid cell δ is `a − b·e^{ε}`, so the root is solved in
    /// closed form from suffix sums and then polished by bisection on the public
    /// [`Self::delta`]; the returned ε is the *upper* end of a bracket at most 1e-13
    /// relative wide in
    /// `Upper`/`Estimate` (safe side: `δ(ε) ≤ δ_target`), the *lower* end in `Lower`
    /// (so it stays below the exact ε).
    ///
    /// Errors: `δ_target ∉ (0, 1)`; [`CompositionError::Unreachable`] when δ never gets
    /// to `δ_target` (the `+∞` mass, plus tail and slack in `Upper`, is above it).
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(1e-3, Bound::Upper).unwrap();
    /// let p = PrivacyLoss::gaussian(1.0, &cfg).unwrap();
    /// let e = p.epsilon(1e-6).unwrap();
    /// assert!(p.delta(e).unwrap() <= 1e-6);
    /// assert!(e >= densities::gaussian::gaussian_epsilon(1e-6, 1.0));
    /// ```
    pub fn epsilon(&self, delta: f64) -> Result<f64> {
        crate::error::check_delta("delta", delta)?;
        let target = delta;
        let ok = |x: f64| self.delta_unchecked(x) <= target;
        if ok(0.0) {
            return Ok(0.0);
        }
        let (c, f) = self.delta_affine();
        let n = self.pmf.len();
        let top = self.loss(n - 1).max(0.0);
        if !ok(top) {
            return Err(CompositionError::Unreachable {
                target,
                floor: self.delta_unchecked(top),
            });
        }
        // Suffix sums: e[j] = Σ_{i≥j} pᵢ e^{−(i−j)Δ}, d[j] = Σ_{i>j} pᵢ (1 − e^{−(i−j)Δ}).
        let q = (-self.step).exp();
        let one_m_q = -(-self.step).exp_m1();
        let mut e = vec![0.0; n + 1];
        let mut d = vec![0.0; n + 1];
        for j in (0..n).rev() {
            e[j] = self.pmf[j] + q * e[j + 1];
            d[j] = d[j + 1] + one_m_q * e[j + 1];
        }
        // δ at grid point j (as the suffix sums see it); non-increasing in j.
        let at = |j: usize| c + f * d[j];
        // Smallest j with δ(t_j) ≤ target.
        let (mut lo_j, mut hi_j) = (0usize, n - 1);
        if at(0) <= target {
            hi_j = 0;
        } else {
            while hi_j - lo_j > 1 {
                let m = lo_j + (hi_j - lo_j) / 2;
                if at(m) <= target {
                    hi_j = m;
                } else {
                    lo_j = m;
                }
            }
        }
        let j = hi_j;
        let tj = self.loss(j);
        // δ(ε) = c + f (d[j] + e[j](1 − e^{ε − t_j})) on (t_{j−1}, t_j].
        let r = ((target - c) / f - d[j]) / e[j];
        let cand = if r.is_finite() && (0.0..1.0).contains(&r) {
            tj + (-r).ln_1p()
        } else {
            tj
        };
        let cell_lo = if j > 0 { self.loss(j - 1) } else { f64::MIN };
        let cand = cand.clamp(cell_lo.max(0.0), tj.max(0.0));
        // Bracket [lo, hi] with δ(lo) > target ≥ δ(hi) around the candidate, then bisect.
        let w = 1e-12 * cand.abs().max(self.step);
        let mut hi = cand + w;
        if !ok(hi) {
            hi = top;
            // The closed form was off (rounding): gallop over the next grid points.
            let (mut jj, mut stride) = (j, 1);
            while jj < n {
                let t = self.loss(jj).max(0.0);
                if t >= cand && ok(t) {
                    hi = t;
                    break;
                }
                jj += stride;
                stride *= 2;
            }
        }
        let mut lo = (cand - w).max(0.0);
        if ok(lo) {
            lo = 0.0; // δ(0) > target was checked
            if cand - w > 0.0 {
                // search downward for a point that fails
                let mut s = w;
                let mut x = cand - w;
                while x > 0.0 && ok(x) {
                    hi = x;
                    s *= 16.0;
                    x = (cand - s).max(0.0);
                }
                lo = if ok(x) { 0.0 } else { x };
            }
        }
        // Each step is a pass over the bins: stop at 1e-13 relative (a few hundred ulps),
        // far inside any grid's own error.
        for _ in 0..200 {
            let mid = lo + 0.5 * (hi - lo);
            if mid <= lo || mid >= hi || hi <= next_up(next_up(lo)) || hi - lo <= 1e-13 * hi {
                break;
            }
            if ok(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Ok(match self.bound {
            Bound::Lower => lo,
            _ => hi,
        })
    }
}

/// FFT length and componentwise error constant, shared with [`crate::accountant`].
pub(crate) use fft::{eta as fft_eta, fast_len as fft_len_pub};
