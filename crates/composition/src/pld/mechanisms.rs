//! Privacy-loss laws of concrete mechanisms ([`LossModel`] implementations): Laplace,
//! Gaussian, discrete laws (randomized response), the truncated Laplacian, any noise with
//! a CDF (`densities` traits) and any log-concave noise given by its log-density alone
//! (e.g. the bounded noise of Dagan–Kur, docs/maths.md §1.4).
//!
//! Convention throughout: `P` is the noise `X` (output on D) and `Q` is `X + s` (output on
//! D', shift = sensitivity `s > 0`), so `ℓ(y) = ln p(y) − ln p(y − s)`; `ℓ = +∞` where
//! `p(y) > 0 = p(y − s)`. For log-concave `p` the loss is non-increasing in `y`, so
//! `P(L > t) = P(Y < y*(t))` with `y*(t) = sup{y : ℓ(y) > t}`.

use super::model::LossModel;
use super::{Interval, U};
use crate::error::{check_eps, out_of_range, Result};
use densities::traits::{Continuous, ContinuousCdf};

/// Checks a sensitivity / shift / μ parameter: finite and `> 0`.
fn check_pos(name: &'static str, x: f64) -> Result<f64> {
    check_eps(name, x)
}

// ---------------------------------------------------------------------------------------
// Laplace
// ---------------------------------------------------------------------------------------

/// Privacy loss of the Laplace mechanism `Lap(b)` with sensitivity Δ, `μ = Δ/b`
/// (docs/maths.md §1.1). With `P = Lap(0, 1)`, `Q = Lap(μ, 1)`: `ℓ(y) = |y − μ| − |y|`,
/// i.e. an atom `+μ` of P-mass ½ (`y ≤ 0`), an atom `−μ` of mass `½e^{−μ}` (`y ≥ μ`), and
/// `ℓ = μ − 2y` on `0 < y < μ`, where `P(L_c > t) = ½(1 − e^{−(μ−t)/2})`. Its profile is
/// `δ(ε) = 1 − e^{(ε−μ)/2}` on `[−μ, μ]` (`densities::laplace::laplace_delta`).
/// Symmetric: one direction suffices.
///
/// ```
/// use composition::pld::{LaplaceLoss, LossModel};
/// let m = LaplaceLoss::new(1.0).unwrap();
/// let total: f64 = m.atoms().iter().map(|a| a.1).sum::<f64>()
///     + m.continuous_sf(f64::NEG_INFINITY).hi;
/// assert!((total - 1.0).abs() < 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaplaceLoss {
    mu: f64,
}

impl LaplaceLoss {
    /// `μ = Δ/b`, finite and `> 0`.
    ///
    /// ```
    /// assert!(composition::pld::LaplaceLoss::new(-1.0).is_err());
    /// ```
    pub fn new(mu: f64) -> Result<Self> {
        Ok(Self {
            mu: check_pos("mu", mu)?,
        })
    }
}

impl LossModel for LaplaceLoss {
    fn atoms(&self) -> Vec<(f64, f64)> {
        vec![(self.mu, 0.5), (-self.mu, 0.5 * (-self.mu).exp())]
    }
    fn inf_mass(&self) -> Interval {
        Interval::point(0.0)
    }
    fn continuous_sf(&self, t: f64) -> Interval {
        let mu = self.mu;
        let s = if t >= mu {
            0.0
        } else if t <= -mu {
            -0.5 * (-mu).exp_m1()
        } else {
            -0.5 * (-0.5 * (mu - t)).exp_m1()
        };
        Interval::point(s)
    }
    fn continuous_range(&self, _tail: f64) -> Option<(f64, f64)> {
        Some((-self.mu, self.mu))
    }
}

// ---------------------------------------------------------------------------------------
// Gaussian
// ---------------------------------------------------------------------------------------

/// Privacy loss of the Gaussian mechanism with `μ = Δ/σ` (docs/maths.md §1.2): under P,
/// `L ~ N(μ²/2, μ²)` (no atoms). Symmetric. Its support is unbounded, so discretising it
/// needs `tail > 0`; the cut is at `μ²/2 ± μ·Φ⁻¹(1 − tail/2)`.
///
/// ```
/// use composition::pld::{GaussianLoss, LossModel};
/// let m = GaussianLoss::new(2.0).unwrap();
/// assert!((m.continuous_sf(2.0).hi - 0.5).abs() < 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaussianLoss {
    mu: f64,
}

impl GaussianLoss {
    /// `μ = Δ/σ`, finite and `> 0`.
    ///
    /// ```
    /// assert!(composition::pld::GaussianLoss::new(0.0).is_err());
    /// ```
    pub fn new(mu: f64) -> Result<Self> {
        Ok(Self {
            mu: check_pos("mu", mu)?,
        })
    }
}

impl LossModel for GaussianLoss {
    fn atoms(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    fn inf_mass(&self) -> Interval {
        Interval::point(0.0)
    }
    fn continuous_sf(&self, t: f64) -> Interval {
        let m = 0.5 * self.mu * self.mu;
        Interval::point(densities::normal::sf((t - m) / self.mu))
    }
    fn continuous_range(&self, tail: f64) -> Option<(f64, f64)> {
        let m = 0.5 * self.mu * self.mu;
        let z = densities::normal::upper_quantile(0.5 * tail);
        Some((m - z * self.mu, m + z * self.mu))
    }
}

// ---------------------------------------------------------------------------------------
// Discrete laws
// ---------------------------------------------------------------------------------------

/// A privacy-loss law with finitely many atoms `(loss, P-mass)` and a `+∞` atom, e.g.
/// randomized response (docs/maths.md §3.1) or generalized randomized response (§3.2).
///
/// ```
/// use composition::pld::{DiscreteLoss, LossModel};
/// let rr = DiscreteLoss::randomized_response(1.0).unwrap();
/// let a = rr.atoms();
/// assert!((a[0].1 / a[1].1 - 1f64.exp()).abs() < 1e-14);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DiscreteLoss {
    atoms: Vec<(f64, f64)>,
    inf: f64,
}

impl DiscreteLoss {
    /// Atoms with finite losses and masses `≥ 0`, and `inf_mass ≥ 0`, all summing to at
    /// most 1 (up to 1e-12).
    ///
    /// ```
    /// use composition::pld::DiscreteLoss;
    /// assert!(DiscreteLoss::new(vec![(0.5, 0.7), (-0.5, 0.3)], 0.0).is_ok());
    /// assert!(DiscreteLoss::new(vec![(0.5, 0.9)], 0.2).is_err());
    /// ```
    pub fn new(atoms: Vec<(f64, f64)>, inf_mass: f64) -> Result<Self> {
        let mut total = 0.0;
        for &(l, m) in &atoms {
            if !l.is_finite() {
                return Err(out_of_range("atom loss", l, "finite"));
            }
            if !(m.is_finite() && m >= 0.0) {
                return Err(out_of_range("atom mass", m, "[0, 1]"));
            }
            total += m;
        }
        if !(inf_mass.is_finite() && inf_mass >= 0.0) {
            return Err(out_of_range("inf_mass", inf_mass, "[0, 1]"));
        }
        if total + inf_mass > 1.0 + 1e-12 {
            return Err(out_of_range(
                "total mass",
                total + inf_mass,
                "at most 1 (+1e-12)",
            ));
        }
        Ok(Self {
            atoms,
            inf: inf_mass,
        })
    }

    /// Randomized response, the worst ε-DP mechanism: loss `+ε` with P-probability
    /// `e^ε/(1+e^ε)`, `−ε` with `1/(1+e^ε)` (docs/maths.md §3.1).
    ///
    /// ```
    /// assert!(composition::pld::DiscreteLoss::randomized_response(0.0).is_err());
    /// ```
    pub fn randomized_response(eps: f64) -> Result<Self> {
        let eps = check_pos("epsilon", eps)?;
        let (theta, one_m_theta) = crate::dp::rr_probs(eps);
        Ok(Self {
            atoms: vec![(eps, one_m_theta), (-eps, theta)],
            inf: 0.0,
        })
    }
}

impl LossModel for DiscreteLoss {
    fn atoms(&self) -> Vec<(f64, f64)> {
        self.atoms.clone()
    }
    fn inf_mass(&self) -> Interval {
        Interval::point(self.inf)
    }
    fn continuous_sf(&self, _t: f64) -> Interval {
        Interval::point(0.0)
    }
    fn continuous_range(&self, _tail: f64) -> Option<(f64, f64)> {
        None
    }
}

// ---------------------------------------------------------------------------------------
// Truncated Laplace
// ---------------------------------------------------------------------------------------

/// Privacy loss of the truncated Laplacian noise (Geng et al. 2018, eq. 7; docs/maths.md
/// §1.3) against its shift by `s` (the sensitivity). With `λ`, `A` the noise's scale and
/// half-width: `ℓ = +∞` on `[−A, s − A)` (Q has no density there; P-mass
/// `P(X < s − A)`, which equals δ at the calibrated sensitivity), then
/// `ℓ = (|y − s| − |y|)/λ`: an atom `s/λ` on `[s − A, 0]`, an atom `−s/λ` on `[s, A]`,
/// and `(s − 2y)/λ` in between. Symmetric: one direction suffices.
///
/// ```
/// use composition::pld::{LossModel, TruncatedLaplaceLoss};
/// use densities::truncated_laplace::TruncatedLaplace;
/// let tl = TruncatedLaplace::new(0.1, 1e-5, 1.0).unwrap();
/// let m = TruncatedLaplaceLoss::new(&tl, 1.0).unwrap();
/// assert!((m.inf_mass().hi / 1e-5 - 1.0).abs() < 1e-9);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TruncatedLaplaceLoss {
    noise: densities::truncated_laplace::TruncatedLaplace,
    s: f64,
}

impl TruncatedLaplaceLoss {
    /// The noise and the shift `s > 0` (finite).
    ///
    /// ```
    /// use densities::truncated_laplace::TruncatedLaplace;
    /// let tl = TruncatedLaplace::new(1.0, 1e-3, 1.0).unwrap();
    /// assert!(composition::pld::TruncatedLaplaceLoss::new(&tl, 0.0).is_err());
    /// ```
    pub fn new(
        noise: &densities::truncated_laplace::TruncatedLaplace,
        sensitivity: f64,
    ) -> Result<Self> {
        Ok(Self {
            noise: *noise,
            s: check_pos("sensitivity", sensitivity)?,
        })
    }

    /// `P(lo < X < hi)`, from the lower or upper tail, whichever is smaller.
    fn mass(&self, lo: f64, hi: f64) -> f64 {
        if hi <= lo {
            return 0.0;
        }
        let n = &self.noise;
        if hi <= 0.0 {
            n.cdf(hi) - n.cdf(lo)
        } else if lo >= 0.0 {
            n.sf(lo) - n.sf(hi)
        } else {
            (n.cdf(0.0) - n.cdf(lo)) + (n.sf(0.0) - n.sf(hi))
        }
    }

    /// The `y` interval of the linear middle part.
    fn middle(&self) -> (f64, f64) {
        let a = self.noise.a;
        ((self.s - a).max(0.0), self.s.min(a))
    }
}

impl LossModel for TruncatedLaplaceLoss {
    fn atoms(&self) -> Vec<(f64, f64)> {
        let (a, s, lam) = (self.noise.a, self.s, self.noise.lambda);
        if s >= 2.0 * a {
            return Vec::new();
        }
        let e = s / lam;
        vec![(e, self.mass(s - a, 0.0)), (-e, self.mass(s, a))]
    }
    fn inf_mass(&self) -> Interval {
        let a = self.noise.a;
        if self.s >= 2.0 * a {
            return Interval::point(1.0);
        }
        Interval::point(self.noise.cdf(self.s - a))
    }
    fn continuous_sf(&self, t: f64) -> Interval {
        if self.s >= 2.0 * self.noise.a {
            return Interval::point(0.0);
        }
        let (y0, y1) = self.middle();
        let yt = (0.5 * (self.s - self.noise.lambda * t)).clamp(y0, y1);
        Interval::point(self.mass(y0, yt))
    }
    fn continuous_range(&self, _tail: f64) -> Option<(f64, f64)> {
        let (y0, y1) = self.middle();
        if self.s >= 2.0 * self.noise.a || y1 <= y0 {
            return None;
        }
        let lam = self.noise.lambda;
        Some(((self.s - 2.0 * y1) / lam, (self.s - 2.0 * y0) / lam))
    }
}

// ---------------------------------------------------------------------------------------
// Any noise with a CDF
// ---------------------------------------------------------------------------------------

/// One bisection of a loss-root bracket `ℓ(a) − t = ga > 0 ≥ gb = ℓ(b) − t` (the step
/// [`bisect_loss`] and [`bracket_loss_from`] take when a trial failed to halve it);
/// `false` when no float lies strictly between the ends.
fn halve(
    loss: &dyn Fn(f64) -> f64,
    t: f64,
    (a, ga): (&mut f64, &mut f64),
    (b, gb): (&mut f64, &mut f64),
) -> bool {
    let mid = *a + 0.5 * (*b - *a);
    if mid <= *a || mid >= *b {
        return false;
    }
    let gm = loss(mid) - t;
    if gm > 0.0 {
        (*a, *ga) = (mid, gm);
    } else {
        (*b, *gb) = (mid, gm);
    }
    true
}

/// Bisection for `y*(t)`: returns `[yl, yr]` with `ℓ(yl) > t ≥ ℓ(yr)` (as evaluated),
/// adjacent floats or 200 halvings apart, for `ℓ` non-increasing on `[a, b]` with
/// `ℓ(a) > t ≥ ℓ(b)`.
fn bisect_loss(loss: &dyn Fn(f64) -> f64, t: f64, mut a: f64, mut b: f64) -> (f64, f64) {
    // Regula falsi with the Illinois modification, keeping `loss(a) > t ≥ loss(b)` at
    // every step and bisecting whenever a step fails to halve the bracket: it ends on the
    // adjacent floats bisection ends on, in a fraction of the loss evaluations.
    let (mut ga, mut gb) = (loss(a) - t, loss(b) - t);
    let mut kept = 0i8; // which end the last step kept (Illinois)
    for _ in 0..200 {
        let w = b - a;
        let mid = a + 0.5 * w;
        if mid <= a || mid >= b {
            break;
        }
        let falsi = if ga.is_finite() && gb.is_finite() && ga > gb {
            a + w * ga / (ga - gb)
        } else {
            f64::NAN
        };
        let m = if falsi > a && falsi < b { falsi } else { mid };
        let gm = loss(m) - t;
        if gm > 0.0 {
            (a, ga) = (m, gm);
            if kept == -1 {
                gb *= 0.5;
            }
            kept = -1;
        } else {
            (b, gb) = (m, gm);
            if kept == 1 {
                ga *= 0.5;
            }
            kept = 1;
        }
        if b - a > 0.5 * w {
            if !halve(loss, t, (&mut a, &mut ga), (&mut b, &mut gb)) {
                break;
            }
            kept = 0;
        }
    }
    (a, b)
}

/// As [`bisect_loss`], for a root wanted only to `min_width > 0`: each regula falsi
/// trial (Illinois; bisection while an end is infinite) is followed by a probe just
/// past the root it predicts (twice its predicted error, from the bracket's secant, plus
/// half the width asked), which closes the bracket from the other side: a smooth loss
/// converges in about three trials of two evaluations instead of thirty when regula falsi
/// keeps one end fixed. Returns `[yl, yr]` with `ℓ(yl) > t ≥ ℓ(yr)` (as evaluated) and
/// `yr − yl ≤ min_width` (or adjacent floats, or 100 trials).
fn bracket_loss(loss: &dyn Fn(f64) -> f64, t: f64, a: f64, b: f64, min_width: f64) -> (f64, f64) {
    bracket_loss_from(loss, t, (a, loss(a) - t), (b, loss(b) - t), min_width)
}

/// [`bracket_loss`] with the ends' values `ℓ − t` already known.
fn bracket_loss_from(
    loss: &dyn Fn(f64) -> f64,
    t: f64,
    (mut a, mut ga): (f64, f64),
    (mut b, mut gb): (f64, f64),
    min_width: f64,
) -> (f64, f64) {
    let mut kept = 0i8;
    for _ in 0..100 {
        let w = b - a;
        let mid = a + 0.5 * w;
        if w <= min_width || mid <= a || mid >= b {
            break;
        }
        let secant_ok = ga.is_finite() && gb.is_finite() && ga > gb;
        let m = if secant_ok {
            let f = a + w * ga / (ga - gb);
            if f > a && f < b {
                f
            } else {
                mid
            }
        } else {
            mid
        };
        let gm = loss(m) - t;
        // Predicted distance from m to the root, by the secant through the bracket.
        let err = if secant_ok {
            (gm * w / (ga - gb)).abs()
        } else {
            f64::INFINITY
        };
        if gm > 0.0 {
            (a, ga) = (m, gm);
            if kept == -1 {
                gb *= 0.5;
            }
            kept = -1;
            let p = m + 2.0 * err + 0.5 * min_width;
            if p < b {
                let gp = loss(p) - t;
                if gp > 0.0 {
                    (a, ga) = (p, gp);
                } else {
                    (b, gb) = (p, gp);
                    kept = 0;
                }
            }
        } else {
            (b, gb) = (m, gm);
            if kept == 1 {
                ga *= 0.5;
            }
            kept = 1;
            let p = m - 2.0 * err - 0.5 * min_width;
            if p > a {
                let gp = loss(p) - t;
                if gp > 0.0 {
                    (a, ga) = (p, gp);
                    kept = 0;
                } else {
                    (b, gb) = (p, gp);
                }
            }
        }
        // A trial that did not halve the bracket (rounding noise in the loss, or an
        // interpolant far off) is followed by a bisection step.
        if b - a > 0.5 * w {
            if !halve(loss, t, (&mut a, &mut ga), (&mut b, &mut gb)) {
                break;
            }
            kept = 0;
        }
    }
    (a, b)
}

/// Bisection for the boundary of a monotone predicate on `[a, b]` with `pred(a)` true and
/// `pred(b)` false; returns the final `(a, b)` (adjacent floats or 200 halvings apart).
fn bisect_pred(pred: &dyn Fn(f64) -> bool, mut a: f64, mut b: f64) -> (f64, f64) {
    for _ in 0..200 {
        let m = a + 0.5 * (b - a);
        if m <= a.min(b) || m >= a.max(b) {
            break;
        }
        if pred(m) {
            a = m;
        } else {
            b = m;
        }
    }
    (a, b)
}

/// Privacy loss of additive noise with a CDF (any `densities` noise implementing
/// [`Continuous`] and [`ContinuousCdf`], e.g. `Laplace`, `Normal`, `TruncatedLaplace`)
/// against its shift by `s`: `ℓ(y) = ln p(y) − ln p(y − s)`.
///
/// Requires a log-concave density (so that `ℓ` is non-increasing; then threshold sets
/// are intervals, docs/maths.md §1.3). Masses are CDF differences at the roots `y*(t)`,
/// found by bisection to the last bit and returned as brackets, so the discretisation is
/// certified up to those roots. Flat stretches of `ℓ` (atoms, as for Laplace) are treated
/// as continuous: exact when the atom is off the grid, otherwise its placement is only as
/// good as the rounding of `ℓ` (use [`LaplaceLoss`] or [`TruncatedLaplaceLoss`] there).
/// For a density positive at the left end `lo` of its support, `[lo, lo + s)` is the
/// `+∞` atom.
///
/// ```
/// use composition::pld::{Bound, PldConfig, PrivacyLoss, ShiftedNoise};
/// let n = densities::normal::Normal::new(0.0, 2.0).unwrap();
/// let cfg = PldConfig::new(1e-3, Bound::Upper).unwrap();
/// let p = PrivacyLoss::from_model(&ShiftedNoise::new(n, 1.0).unwrap(), &cfg).unwrap();
/// let exact = densities::gaussian::gaussian_delta(0.2, 0.5);
/// assert!(p.delta(0.2).unwrap() >= exact);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShiftedNoise<D> {
    noise: D,
    s: f64,
    lo: f64,
    hi: f64,
}

impl<D: Continuous + ContinuousCdf> ShiftedNoise<D> {
    /// Noise and shift `s > 0`; the support is read from `quantile(0)`, `quantile(1)`.
    ///
    /// ```
    /// let n = densities::laplace::Laplace::new(1.0).unwrap();
    /// assert!(composition::pld::ShiftedNoise::new(n, f64::NAN).is_err());
    /// ```
    pub fn new(noise: D, shift: f64) -> Result<Self> {
        let s = check_pos("shift", shift)?;
        let lo = noise.quantile(0.0);
        let hi = noise.quantile(1.0);
        if lo.is_nan() || hi.is_nan() || lo >= hi {
            return Err(out_of_range("support", lo, "non-empty interval"));
        }
        Ok(Self { noise, s, lo, hi })
    }

    fn loss(&self, y: f64) -> f64 {
        let a = self.noise.ln_pdf(y);
        let b = self.noise.ln_pdf(y - self.s);
        if b == f64::NEG_INFINITY {
            if a == f64::NEG_INFINITY {
                f64::NAN
            } else {
                f64::INFINITY
            }
        } else {
            a - b
        }
    }

    /// Left end of the finite-loss region (`lo + s`, or `−∞`).
    fn y0(&self) -> f64 {
        self.lo + self.s
    }

    /// `P(X < y0)` (the `+∞` atom).
    fn f0(&self) -> f64 {
        if self.lo.is_finite() {
            self.noise.cdf(self.y0())
        } else {
            0.0
        }
    }

    /// A point where the lower tail mass `cdf(y) − F0` is at most `m` (searching left
    /// from the median by doubling steps, then bisecting).
    fn lower_cut(&self, m: f64) -> f64 {
        let f0 = self.f0();
        let ok = |y: f64| self.noise.cdf(y) - f0 <= m;
        let start = if self.lo.is_finite() {
            self.y0()
        } else {
            f64::NEG_INFINITY
        };
        if start.is_finite() && !ok(start) {
            return start;
        }
        let mut scale = (self.noise.quantile(0.75) - self.noise.quantile(0.25)).max(1e-300);
        let (mut far, mut near) = (self.noise.quantile(0.5), self.noise.quantile(0.5));
        while !ok(far) {
            near = far;
            far -= scale;
            scale *= 2.0;
            if far <= start {
                return start;
            }
            if !far.is_finite() {
                return far;
            }
        }
        if far == near {
            return far;
        }
        bisect_pred(&ok, far, near).0
    }

    /// A point where the upper tail mass `sf(y)` is at most `m`.
    fn upper_cut(&self, m: f64) -> f64 {
        let ok = |y: f64| self.noise.sf(y) <= m;
        let mut scale = (self.noise.quantile(0.75) - self.noise.quantile(0.25)).max(1e-300);
        let (mut far, mut near) = (self.noise.quantile(0.5), self.noise.quantile(0.5));
        while !ok(far) {
            near = far;
            far += scale;
            scale *= 2.0;
            if far >= self.hi {
                return self.hi;
            }
            if !far.is_finite() {
                return far;
            }
        }
        if far == near {
            return far;
        }
        let not_ok = |y: f64| !ok(y);
        bisect_pred(&not_ok, near, far).1
    }
}

impl<D: Continuous + ContinuousCdf> LossModel for ShiftedNoise<D> {
    fn atoms(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    fn inf_mass(&self) -> Interval {
        if self.s >= self.hi - self.lo {
            return Interval::point(1.0);
        }
        Interval::point(self.f0())
    }
    fn continuous_sf(&self, t: f64) -> Interval {
        if self.s >= self.hi - self.lo {
            return Interval::point(0.0);
        }
        let f0 = self.f0();
        let total = if self.lo.is_finite() {
            self.noise.sf(self.y0())
        } else {
            1.0
        };
        if t == f64::NEG_INFINITY {
            return Interval::point(total);
        }
        // Finite brackets for the root search.
        let a = if self.lo.is_finite() {
            self.y0()
        } else {
            self.noise.quantile(1e-300).max(-1e300)
        };
        let b = if self.hi.is_finite() {
            self.hi
        } else {
            self.noise.quantile(1.0 - f64::EPSILON / 2.0).min(1e300)
        };
        let loss = |y: f64| self.loss(y);
        let la = loss(a);
        if la.is_nan() || la <= t {
            // ℓ ≤ t on the whole finite-loss region (or the region left of a, whose
            // mass is below F(a) − F0).
            let cap = if self.lo.is_finite() {
                0.0
            } else {
                self.noise.cdf(a)
            };
            return Interval::new(0.0, cap);
        }
        if loss(b) > t {
            let lo = (self.noise.cdf(b) - f0).max(0.0);
            return Interval::new(lo, total);
        }
        let (yl, yr) = bisect_loss(&loss, t, a, b);
        let lo = (self.noise.cdf(yl) - f0).max(0.0);
        let hi = (self.noise.cdf(yr) - f0).max(0.0);
        Interval::new(lo, hi.max(lo))
    }
    fn continuous_range(&self, tail: f64) -> Option<(f64, f64)> {
        if self.s >= self.hi - self.lo {
            return None;
        }
        let ya = self.lower_cut(0.5 * tail);
        let yb = self.upper_cut(0.5 * tail);
        let top = self.loss(ya.max(self.y0()));
        let bottom = self.loss(yb);
        Some((bottom.min(top), top))
    }
}

// ---------------------------------------------------------------------------------------
// Log-concave noise from its log-density alone
// ---------------------------------------------------------------------------------------

/// `∫₀¹ e^{a + (b − a)u} du`, without cancellation; `−∞` ends give the limit.
fn mean_exp(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY || b == f64::NEG_INFINITY {
        return 0.0;
    }
    if a == b {
        return a.exp();
    }
    let (m, d) = if a > b { (a, a - b) } else { (b, b - a) };
    m.exp() * -(-d).exp_m1() / d
}

/// Bracket of `∫_{y0}^{y0+w} e^{g}` for concave `g` with end values `g0`, `g1`, given
/// `sl ≥ g'(y0⁺)` and `sr ≤ g'((y0+w)⁻)` (either may be unknown). Lower: the chord
/// (concave `g` lies above it). Upper: `g ≤ min(g0 + sl(y − y0), g1 + sr(y − y1))`.
fn cell_bracket(w: f64, g0: f64, g1: f64, sl: Option<f64>, sr: Option<f64>) -> (f64, f64) {
    if w <= 0.0 {
        return (0.0, 0.0);
    }
    let lower = w * mean_exp(g0, g1);
    let l1 = sl.filter(|s| s.is_finite() && g0.is_finite());
    let l2 = sr.filter(|s| s.is_finite() && g1.is_finite());
    let upper = match (l1, l2) {
        (Some(a), Some(b)) => {
            if a > b {
                // Left tangent up to the split `d`, right tangent after it: an upper bound
                // for any `d ∈ [0, w]` (each tangent is above g everywhere), tightest where
                // they cross; a rounded `d` only loosens it. `d = w` and `d = 0` are the
                // single-tangent bounds, so they need no separate evaluation.
                let c = (g1 - g0) / w;
                let d = (w * (c - b) / (a - b)).clamp(0.0, w);
                d * mean_exp(g0, g0 + a * d) + (w - d) * mean_exp(g1 - b * (w - d), g1)
            } else {
                let only_1 = w * mean_exp(g0, g0 + a * w);
                let only_2 = w * mean_exp(g1 - b * w, g1);
                only_1.min(only_2)
            }
        }
        (Some(a), None) => w * mean_exp(g0, g0 + a * w),
        (None, Some(b)) => w * mean_exp(g1 - b * w, g1),
        (None, None) => f64::INFINITY,
    };
    (
        lower * (1.0 - 16.0 * U),
        (upper * (1.0 + 16.0 * U)).max(lower),
    )
}

/// Privacy loss of a log-concave noise given only by its (unnormalised) log-density `g`
/// on a bounded support `(lo, hi)`, against its shift by `s`: `ℓ(y) = g(y) − g(y − s)`,
/// with the `+∞` atom `P(X < lo + s)`. This is the per-query loss of the bounded noise
/// of Dagan–Kur (docs/maths.md §1.4: `g = −f`, the atom `P(X < −1 + s)`); for the scaled
/// mechanism `R·X` with sensitivity 1 use `s = 1/R`.
///
/// The normaliser and all masses are integrated with **certified brackets**: on each cell
/// of an adaptively refined node set, concavity of `g` puts it above the chord and below
/// the tangents, whose slopes are bounded by the neighbouring cells' chords. Cells are
/// bisected until the bracket's relative width is below `rtol` (or the node budget is
/// spent; the brackets stay valid, only wider). A CDF value is `A/(A + B)` with `A`, `B`
/// the masses left and right of the point, bracketed accordingly. A (numerically)
/// non-concave `g` is rejected.
///
/// ```
/// use composition::pld::{Bound, LogConcaveNoise, PldConfig, PrivacyLoss};
/// use densities::bounded::BoundedFamily;
/// let fam = BoundedFamily::power(2.0).unwrap();
/// let noise = LogConcaveNoise::new(move |x: f64| -fam.f(x), (-1.0, 1.0), 0.05).unwrap();
/// let cfg = PldConfig::new(1e-3, Bound::Upper).unwrap().with_tail(1e-12).unwrap();
/// let p = PrivacyLoss::from_model(&noise, &cfg).unwrap();
/// assert!(p.inf_mass() > 0.0 && p.delta(0.5).unwrap() < 1.0);
/// ```
pub struct LogConcaveNoise<F> {
    ln_pdf: F,
    lo: f64,
    hi: f64,
    s: f64,
    nodes: Vec<f64>,
    /// `g − g_max` at the nodes.
    g: Vec<f64>,
    g_max: f64,
    /// Concavity tolerance added to slope bounds.
    slope_tol: f64,
    a_lo: Vec<f64>,
    a_hi: Vec<f64>,
    b_lo: Vec<f64>,
    b_hi: Vec<f64>,
}

impl<F> std::fmt::Debug for LogConcaveNoise<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogConcaveNoise")
            .field("support", &(self.lo, self.hi))
            .field("shift", &self.s)
            .field("nodes", &self.nodes.len())
            .finish()
    }
}

impl<F: Copy> LogConcaveNoise<F> {
    /// The same noise against shift `s > 0`: the quadrature of the density does not
    /// depend on the shift, so a search over radii builds it once.
    pub(crate) fn with_shift(&self, s: f64) -> Self {
        Self {
            ln_pdf: self.ln_pdf,
            lo: self.lo,
            hi: self.hi,
            s,
            nodes: self.nodes.clone(),
            g: self.g.clone(),
            g_max: self.g_max,
            slope_tol: self.slope_tol,
            a_lo: self.a_lo.clone(),
            a_hi: self.a_hi.clone(),
            b_lo: self.b_lo.clone(),
            b_hi: self.b_hi.clone(),
        }
    }
}

impl<F: Fn(f64) -> f64> LogConcaveNoise<F> {
    /// Log-density `ln_pdf` (any additive constant), support `(lo, hi)` (finite), shift
    /// `s > 0`; `rtol = 1e-11`, at most 2²⁰ nodes.
    ///
    /// Errors: bad support or shift, `ln_pdf` NaN or `+∞` somewhere, or not concave.
    ///
    /// ```
    /// use composition::pld::LogConcaveNoise;
    /// assert!(LogConcaveNoise::new(|x: f64| x * x, (-1.0, 1.0), 0.1).is_err()); // convex
    /// ```
    pub fn new(ln_pdf: F, support: (f64, f64), shift: f64) -> Result<Self> {
        Self::with_accuracy(ln_pdf, support, shift, 1e-11, 1 << 20)
    }

    /// As [`Self::new`] with the relative bracket width `rtol ∈ [1e-15, 1e-2]` and the
    /// node budget `max_nodes ∈ [64, 2²⁴]`.
    ///
    /// ```
    /// use composition::pld::LogConcaveNoise;
    /// let n = LogConcaveNoise::with_accuracy(|x: f64| -x * x, (-3.0, 3.0), 0.1, 1e-6, 4096);
    /// assert!(n.is_ok());
    /// ```
    pub fn with_accuracy(
        ln_pdf: F,
        support: (f64, f64),
        shift: f64,
        rtol: f64,
        max_nodes: usize,
    ) -> Result<Self> {
        let (lo, hi) = support;
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return Err(out_of_range("support", lo, "finite (lo, hi) with lo < hi"));
        }
        let s = check_pos("shift", shift)?;
        if !(1e-15..=1e-2).contains(&rtol) {
            return Err(out_of_range("rtol", rtol, "[1e-15, 1e-2]"));
        }
        if !(64..=(1 << 24)).contains(&max_nodes) {
            return Err(out_of_range("max_nodes", max_nodes as f64, "[64, 2^24]"));
        }
        let eval = |y: f64| -> Result<f64> {
            let v = ln_pdf(y);
            if v.is_nan() || v == f64::INFINITY {
                Err(out_of_range(
                    "ln_pdf(y)",
                    y,
                    "ln_pdf finite or -inf on the support",
                ))
            } else {
                Ok(v)
            }
        };
        let n0 = 1024usize.min(max_nodes - 1);
        let w0 = (hi - lo) / n0 as f64;
        let mut nodes: Vec<f64> = (0..=n0).map(|k| lo + k as f64 * w0).collect();
        nodes[n0] = hi;
        let mut graw: Vec<f64> = nodes.iter().map(|&y| eval(y)).collect::<Result<_>>()?;
        let min_w = 1e-14 * (hi - lo);
        loop {
            let g_max = graw.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            if g_max == f64::NEG_INFINITY {
                return Err(out_of_range(
                    "ln_pdf",
                    g_max,
                    "finite somewhere on the support",
                ));
            }
            let g: Vec<f64> = graw.iter().map(|&v| v - g_max).collect();
            let tol = slope_tolerance(&nodes, &g);
            let cells = cell_brackets(&nodes, &g, tol)?;
            let total: f64 = cells.iter().map(|c| c.1).sum();
            let mut marked: Vec<usize> = Vec::new();
            for (k, &(l, h)) in cells.iter().enumerate() {
                let w = nodes[k + 1] - nodes[k];
                if h - l > rtol * h && h > 1e-280 * total && w > min_w {
                    marked.push(k);
                }
            }
            let room = max_nodes.saturating_sub(nodes.len());
            if marked.len() > room {
                // Refine the widest brackets (in absolute mass) first.
                marked.sort_by(|&a, &b| {
                    let ga = cells[a].1 - cells[a].0;
                    let gb = cells[b].1 - cells[b].0;
                    gb.total_cmp(&ga)
                });
                marked.truncate(room);
                marked.sort_unstable();
            }
            if marked.is_empty() {
                let mut out = Self {
                    ln_pdf,
                    lo,
                    hi,
                    s,
                    nodes,
                    g,
                    g_max,
                    slope_tol: tol,
                    a_lo: Vec::new(),
                    a_hi: Vec::new(),
                    b_lo: Vec::new(),
                    b_hi: Vec::new(),
                };
                out.cumulate(&cells);
                return Ok(out);
            }
            let mut new_nodes = Vec::with_capacity(nodes.len() + marked.len());
            let mut new_g = Vec::with_capacity(nodes.len() + marked.len());
            let mut mi = 0;
            for k in 0..nodes.len() {
                new_nodes.push(nodes[k]);
                new_g.push(graw[k]);
                if mi < marked.len() && marked[mi] == k {
                    let m = 0.5 * (nodes[k] + nodes[k + 1]);
                    new_nodes.push(m);
                    new_g.push(eval(m)?);
                    mi += 1;
                }
            }
            nodes = new_nodes;
            graw = new_g;
        }
    }

    fn cumulate(&mut self, cells: &[(f64, f64)]) {
        let n = cells.len();
        self.a_lo = vec![0.0; n + 1];
        self.a_hi = vec![0.0; n + 1];
        self.b_lo = vec![0.0; n + 1];
        self.b_hi = vec![0.0; n + 1];
        for (k, c) in cells.iter().enumerate() {
            self.a_lo[k + 1] = self.a_lo[k] + c.0;
            self.a_hi[k + 1] = self.a_hi[k] + c.1;
        }
        for k in (0..n).rev() {
            self.b_lo[k] = self.b_lo[k + 1] + cells[k].0;
            self.b_hi[k] = self.b_hi[k + 1] + cells[k].1;
        }
        // Summation rounding (non-negative terms): widen by n·u.
        let f = (n as f64 + 4.0) * U;
        for v in self.a_lo.iter_mut().chain(self.b_lo.iter_mut()) {
            *v *= 1.0 - f;
        }
        for v in self.a_hi.iter_mut().chain(self.b_hi.iter_mut()) {
            *v *= 1.0 + f;
        }
    }

    /// Number of quadrature nodes after refinement.
    ///
    /// ```
    /// use composition::pld::LogConcaveNoise;
    /// let n = LogConcaveNoise::new(|x: f64| -x * x, (-3.0, 3.0), 0.1).unwrap();
    /// assert!(n.nodes() > 1024);
    /// ```
    pub fn nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Certified bracket of the normalising constant `∫ e^{g}` over the support.
    ///
    /// ```
    /// use composition::pld::LogConcaveNoise;
    /// let n = LogConcaveNoise::new(|x: f64| -0.5 * x * x, (-40.0, 40.0), 0.1).unwrap();
    /// let z = n.normaliser();
    /// assert!(z.contains((2.0 * std::f64::consts::PI).sqrt()));
    /// ```
    pub fn normaliser(&self) -> Interval {
        let n = self.a_lo.len() - 1;
        let e = self.g_max.exp();
        Interval::new(self.a_lo[n] * e, self.a_hi[n] * e)
    }

    fn g_at(&self, y: f64) -> f64 {
        (self.ln_pdf)(y) - self.g_max
    }

    /// Certified bracket of the CDF `P(X ≤ y)`.
    ///
    /// ```
    /// use composition::pld::LogConcaveNoise;
    /// let n = LogConcaveNoise::new(|x: f64| -0.5 * x * x, (-40.0, 40.0), 0.1).unwrap();
    /// let f = n.cdf(-1.0);
    /// assert!(f.contains(densities::normal::cdf(-1.0)) && f.width() < 1e-9);
    /// ```
    pub fn cdf(&self, y: f64) -> Interval {
        if y <= self.lo {
            return Interval::point(0.0);
        }
        if y >= self.hi {
            return Interval::point(1.0);
        }
        let k = self.nodes.partition_point(|&v| v <= y) - 1;
        let (a_lo, a_hi, b_lo, b_hi) = if y == self.nodes[k] {
            (self.a_lo[k], self.a_hi[k], self.b_lo[k], self.b_hi[k])
        } else {
            let (y0, y1) = (self.nodes[k], self.nodes[k + 1]);
            let (g0, g1) = (self.g[k], self.g[k + 1]);
            let gy = self.g_at(y);
            let tol = self.slope_tol;
            let sl = if k > 0 {
                slope(self.nodes[k - 1], y0, self.g[k - 1], g0).map(|v| v + tol)
            } else {
                None
            };
            let sr = if k + 2 < self.nodes.len() {
                slope(y1, self.nodes[k + 2], g1, self.g[k + 2]).map(|v| v - tol)
            } else {
                None
            };
            let mid_r = slope(y, y1, gy, g1).map(|v| v - tol);
            let mid_l = slope(y0, y, g0, gy).map(|v| v + tol);
            let left = cell_bracket(y - y0, g0, gy, sl, mid_r);
            let right = cell_bracket(y1 - y, gy, g1, mid_l, sr);
            (
                self.a_lo[k] + left.0,
                self.a_hi[k] + left.1,
                self.b_lo[k + 1] + right.0,
                self.b_hi[k + 1] + right.1,
            )
        };
        let lo = if a_lo > 0.0 {
            a_lo / (a_lo + b_hi)
        } else {
            0.0
        };
        let hi = if a_hi > 0.0 {
            a_hi / (a_hi + b_lo)
        } else {
            0.0
        };
        Interval::new(lo.clamp(0.0, 1.0), hi.clamp(0.0, 1.0))
    }

    pub(crate) fn loss(&self, y: f64) -> f64 {
        let a = (self.ln_pdf)(y);
        let b = if y - self.s <= self.lo {
            f64::NEG_INFINITY
        } else {
            (self.ln_pdf)(y - self.s)
        };
        if b == f64::NEG_INFINITY {
            if a == f64::NEG_INFINITY {
                f64::NAN
            } else {
                f64::INFINITY
            }
        } else {
            a - b
        }
    }

    pub(crate) fn y0(&self) -> f64 {
        self.lo + self.s
    }

    /// Upper end of the support.
    pub(crate) fn support_hi(&self) -> f64 {
        self.hi
    }
}

/// Chord slope, `None` unless both values are finite.
fn slope(y0: f64, y1: f64, g0: f64, g1: f64) -> Option<f64> {
    if g0.is_finite() && g1.is_finite() && y1 > y0 {
        Some((g1 - g0) / (y1 - y0))
    } else {
        None
    }
}

/// Slope slack covering the rounding of `g` (a few ulps of `|g|` over the narrowest cell).
fn slope_tolerance(nodes: &[f64], g: &[f64]) -> f64 {
    let gmax_abs = g
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let wmin = nodes
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    64.0 * U * (gmax_abs + 1.0) / wmin
}

/// Brackets of every cell's integral; errors if the chords are not (numerically)
/// non-increasing, i.e. `g` is not concave.
fn cell_brackets(nodes: &[f64], g: &[f64], tol: f64) -> Result<Vec<(f64, f64)>> {
    let n = nodes.len() - 1;
    let chords: Vec<Option<f64>> = (0..n)
        .map(|k| slope(nodes[k], nodes[k + 1], g[k], g[k + 1]))
        .collect();
    for k in 1..n {
        if let (Some(a), Some(b)) = (chords[k - 1], chords[k]) {
            if b > a + 2.0 * tol + 1e-9 * a.abs().max(b.abs()) {
                return Err(out_of_range(
                    "ln_pdf",
                    nodes[k],
                    "concave (log-concave density); its chord slopes increase here",
                ));
            }
        }
    }
    Ok((0..n)
        .map(|k| {
            let sl = if k > 0 {
                chords[k - 1].map(|v| v + tol)
            } else {
                None
            };
            let sr = if k + 1 < n {
                chords[k + 1].map(|v| v - tol)
            } else {
                None
            };
            cell_bracket(nodes[k + 1] - nodes[k], g[k], g[k + 1], sl, sr)
        })
        .collect())
}

impl<F: Fn(f64) -> f64> LossModel for LogConcaveNoise<F> {
    fn atoms(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    fn inf_mass(&self) -> Interval {
        if self.y0() >= self.hi {
            return Interval::point(1.0);
        }
        self.cdf(self.y0())
    }
    fn continuous_sf(&self, t: f64) -> Interval {
        let y0 = self.y0();
        if y0 >= self.hi {
            return Interval::point(0.0);
        }
        let f0 = self.cdf(y0);
        if t == f64::NEG_INFINITY {
            return Interval::new((1.0 - f0.hi).max(0.0), 1.0 - f0.lo);
        }
        let loss = |y: f64| self.loss(y);
        let l0 = loss(y0);
        if l0.is_nan() || l0 <= t {
            return Interval::point(0.0);
        }
        // The root is wanted only to a width whose mass is ≤ 1e-12 (the density is at
        // most 1/Z): the bracket's two CDFs keep it certified, and closer in the loss is
        // rounding noise (the loss is a difference of two log-densities), where a search
        // to adjacent floats spent ~30 evaluations per edge.
        let z_lo = self.a_lo[self.a_lo.len() - 1];
        let (yl, yr) = if loss(self.hi) > t {
            (self.hi, self.hi)
        } else {
            bracket_loss(&loss, t, y0, self.hi, 1e-12 * z_lo)
        };
        let lo = (self.cdf(yl).lo - f0.hi).max(0.0);
        let hi = (self.cdf(yr).hi - f0.lo).max(lo);
        Interval::new(lo, hi)
    }
    /// One sweep over ascending `t`: the root `y*(t)` moves left as t grows, so the last
    /// root's right end is a valid right end for the next, and a left end is found by
    /// stepping left by twice the last spacing (doubling until the loss exceeds t).
    fn continuous_sf_many(&self, ts: &[f64]) -> Vec<Interval> {
        let y0 = self.y0();
        if y0 >= self.hi {
            return vec![Interval::point(0.0); ts.len()];
        }
        let f0 = self.cdf(y0);
        let loss = |y: f64| self.loss(y);
        let l0 = loss(y0);
        let l_hi = loss(self.hi);
        let z_lo = self.a_lo[self.a_lo.len() - 1];
        let min_width = 1e-12 * z_lo;
        let mut out = Vec::with_capacity(ts.len());
        // (yr, ℓ(yr)) of the last root, and the last spacing of roots.
        let mut last: Option<(f64, f64)> = None;
        let mut spacing = 0.0f64;
        for &t in ts {
            if t == f64::NEG_INFINITY {
                out.push(Interval::new((1.0 - f0.hi).max(0.0), 1.0 - f0.lo));
                continue;
            }
            if l0.is_nan() || l0 <= t {
                out.push(Interval::point(0.0));
                continue;
            }
            let (yl, yr) = if l_hi > t {
                (self.hi, self.hi)
            } else {
                // Right end: the last root's (ℓ ≤ t_prev ≤ t) or the support's end.
                let (b, lb) = match last {
                    Some((y, l)) if l <= t => (y, l),
                    _ => (self.hi, l_hi),
                };
                // Left end: ℓ(a) > t, stepping left from b.
                let mut h = (2.0 * spacing).max(min_width);
                let (mut bb, mut lbb) = (b, lb);
                let mut a = (b - h).max(y0);
                let mut la = loss(a);
                // (`> t` is false for NaN too: such a point is not a left end.)
                let above = |l: f64| l.partial_cmp(&t) == Some(std::cmp::Ordering::Greater);
                while !above(la) && a > y0 {
                    (bb, lbb) = (a, la);
                    h *= 4.0;
                    a = (b - h).max(y0);
                    la = loss(a);
                }
                if !above(la) {
                    // ℓ(y0) > t was checked: y0 itself is a left end.
                    (a, la) = (y0, l0);
                }
                bracket_loss_from(&loss, t, (a, la - t), (bb, lbb - t), min_width)
            };
            if let Some((y, _)) = last {
                spacing = (y - yr).abs();
            }
            last = Some((yr, loss(yr)));
            // One CDF for both ends: F(yr) ≤ F(yl) + ∫_{yl}^{yr} e^g / Z. For concave g,
            // g ≤ g(yl) + g'(yl⁺)(y − yl) and g'(yl⁺) is at most the chord slope from
            // yl − w, w = yr − yl: so g ≤ g(yl) + max(0, g(yl) − g(yl − w)) on [yl, yr]
            // (plus rounding slack), two log-density calls instead of a second CDF.
            let f = self.cdf(yl);
            let lo = (f.lo - f0.hi).max(0.0);
            let w = yr - yl;
            let f_yr = if w == 0.0 {
                f.hi
            } else if yl - w > self.lo {
                let (gl, gm) = (self.g_at(yl), self.g_at(yl - w));
                let sup = gl + (gl - gm).max(0.0) + 8.0 * U * (gl.abs() + gm.abs() + 1.0);
                f.hi + w * sup.exp() / z_lo * (1.0 + 1e-12)
            } else {
                self.cdf(yr).hi
            };
            let hi = (f_yr - f0.lo).max(lo);
            out.push(Interval::new(lo, hi));
        }
        out
    }
    fn continuous_range(&self, tail: f64) -> Option<(f64, f64)> {
        let y0 = self.y0();
        if y0 >= self.hi {
            return None;
        }
        let f0 = self.cdf(y0);
        let m = 0.5 * tail;
        let left_ok = |y: f64| self.cdf(y).hi - f0.lo <= m;
        let ya = if !left_ok(y0) {
            y0
        } else if left_ok(self.hi) {
            self.hi
        } else {
            bisect_pred(&left_ok, y0, self.hi).0
        };
        let not_right = |y: f64| 1.0 - self.cdf(y).lo > m;
        let yb = if not_right(y0) {
            bisect_pred(&not_right, y0, self.hi).1
        } else {
            y0
        };
        let top = self.loss(ya);
        let bottom = self.loss(yb);
        Some((bottom.min(top), top))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// Composite Simpson rule of `e^g` on `[a, b]` (the independent reference).
    fn simpson_exp(g: &dyn Fn(f64) -> f64, a: f64, b: f64, n: usize) -> f64 {
        let h = (b - a) / n as f64;
        let mut acc = g(a).exp() + g(b).exp();
        for i in 1..n {
            acc += if i % 2 == 1 { 4.0 } else { 2.0 } * g(a + i as f64 * h).exp();
        }
        acc * h / 3.0
    }

    /// `cell_bracket` against Simpson quadrature on cells of concave functions, with the
    /// tangent slopes from the exact derivatives (and from looser bounds): the bracket
    /// holds the integral, and with exact slopes its width is second order in the cell.
    #[test]
    fn cell_bracket_holds_the_integral_of_concave_exponentials() {
        type G = Box<dyn Fn(f64) -> f64>;
        let fams: Vec<(G, G)> = vec![
            (Box::new(|y: f64| -0.5 * y * y), Box::new(|y: f64| -y)),
            (
                Box::new(|y: f64| -y.powi(4) + 0.3 * y),
                Box::new(|y: f64| -4.0 * y.powi(3) + 0.3),
            ),
            (
                Box::new(|y: f64| (1.0 - y * y).ln()),
                Box::new(|y: f64| -2.0 * y / (1.0 - y * y)),
            ),
        ];
        let mut checked = 0;
        for (g, dg) in &fams {
            for &(y0, w) in &[
                (-0.9, 0.05),
                (-0.3, 0.4),
                (0.1, 0.01),
                (0.5, 0.3),
                (0.2, 1e-4),
            ] {
                let y1 = y0 + w;
                let exact = simpson_exp(g.as_ref(), y0, y1, 20_000);
                for slack in [0.0, 0.3] {
                    let (lo, hi) =
                        cell_bracket(w, g(y0), g(y1), Some(dg(y0) + slack), Some(dg(y1) - slack));
                    assert!(lo <= exact * (1.0 + 1e-12), "y0 {y0} w {w}: {lo} > {exact}");
                    assert!(hi >= exact * (1.0 - 1e-12), "y0 {y0} w {w}: {hi} < {exact}");
                    if slack == 0.0 {
                        let curv = (dg(y0) - dg(y1)).abs();
                        assert!((hi - lo) / exact <= curv * w + 1e-12, "{lo} {hi} {exact}");
                    }
                    checked += 1;
                }
                // One tangent only, then none.
                let (lo, hi) = cell_bracket(w, g(y0), g(y1), Some(dg(y0)), None);
                assert!(lo <= exact * (1.0 + 1e-12) && hi >= exact * (1.0 - 1e-12));
                let (_, hi) = cell_bracket(w, g(y0), g(y1), None, None);
                assert_eq!(hi, f64::INFINITY);
            }
        }
        assert_eq!(checked, 30);
    }

    /// The sweep of `continuous_sf_many` against one `continuous_sf` per point (each a
    /// certified bracket of the same survival function): they agree to 1e-11, every
    /// bracket is ordered, and both are non-increasing in t; for bounded noise and a
    /// Gaussian, at two shifts each.
    #[test]
    fn continuous_sf_sweep_matches_one_root_search_per_point() {
        let fam = densities::bounded::BoundedFamily::power(2.0).unwrap();
        let bounded = move |x: f64| -fam.f(x);
        let gauss = |x: f64| -0.5 * x * x;
        for (name, s) in [("bounded", 1e-4), ("bounded", 0.05)] {
            let noise =
                LogConcaveNoise::with_accuracy(&bounded, (-1.0, 1.0), s, 1e-8, 1 << 14).unwrap();
            check_sweep(name, &noise);
        }
        for s in [0.01, 1.0] {
            let noise =
                LogConcaveNoise::with_accuracy(&gauss, (-30.0, 30.0), s, 1e-8, 1 << 14).unwrap();
            check_sweep("gaussian", &noise);
        }
    }

    fn check_sweep<F: Fn(f64) -> f64>(name: &str, noise: &LogConcaveNoise<F>) {
        let (a, b) = noise.continuous_range(1e-14).unwrap();
        let ts: Vec<f64> = (0..=2000)
            .map(|i| a + (b - a) * i as f64 / 2000.0)
            .collect();
        let many = noise.continuous_sf_many(&ts);
        let mut prev = Interval::point(1.0);
        for (&t, m) in ts.iter().zip(&many) {
            let one = noise.continuous_sf(t);
            assert!(m.lo <= m.hi, "{name} t {t}: {m:?}");
            assert!(
                (m.lo - one.lo).abs() <= 1e-11 && (m.hi - one.hi).abs() <= 1e-11,
                "{name} t {t}: sweep {m:?} vs one {one:?}"
            );
            assert!(
                m.lo <= prev.lo + 1e-11 && m.hi <= prev.hi + 1e-11,
                "{name} t {t}"
            );
            prev = *m;
        }
    }

    /// [`bracket_loss`] against plain bisection to adjacent floats ([`bisect_loss`] with no
    /// width): on smooth decreasing losses, one with `+∞` at the left end like the bounded
    /// noise's, its bracket holds `ℓ(yl) > t ≥ ℓ(yr)`, is at most the asked width, contains
    /// the bisection's root, and costs far fewer evaluations.
    #[test]
    fn bracket_loss_brackets_the_root_to_the_width_in_few_evaluations() {
        let calls = Cell::new(0usize);
        type Loss = Box<dyn Fn(f64) -> f64>;
        let losses: [(&str, Loss); 3] = [
            ("linear", Box::new(|y: f64| 1.0 - 2.0 * y)),
            ("cubic", Box::new(|y: f64| -y * y * y - y)),
            (
                "log-barrier",
                Box::new(|y: f64| {
                    if y <= -1.0 {
                        f64::INFINITY
                    } else {
                        -(1.0 + y).ln() - 3.0 * y
                    }
                }),
            ),
        ];
        for (name, l) in &losses {
            let loss = |y: f64| {
                calls.set(calls.get() + 1);
                l(y)
            };
            let (a, b) = (-1.0, 1.0);
            let (mut ours, mut plain) = (0, 0);
            for i in 0..200 {
                let t = loss(b) + (i as f64 + 0.5) / 200.0 * (loss(-0.999) - loss(b));
                for width in [1e-6, 1e-12] {
                    calls.set(0);
                    let (yl, yr) = bracket_loss(&loss, t, a, b, width);
                    ours += calls.get();
                    calls.set(0);
                    let (pl, pr) = bisect_loss(&loss, t, a, b);
                    plain += calls.get();
                    assert!(loss(yl) > t && t >= loss(yr), "{name} t {t}: [{yl}, {yr}]");
                    assert!(yr - yl <= width, "{name} t {t}: width {}", yr - yl);
                    assert!(yl <= pl && pr <= yr, "{name} t {t}: misses [{pl}, {pr}]");
                }
            }
            assert!(
                2 * ours < plain,
                "{name}: {ours} evaluations against {plain}"
            );
        }
    }
}
