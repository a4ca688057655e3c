//! The least scale `R` of a symmetric log-concave noise `R·X` that makes k sensitivity-1
//! queries (ε, δ)-DP, from the exact privacy loss (docs/maths.md §1.4, "Exact δ of the
//! bounded-noise mechanism"; Dagan & Kur 2022, Definition 2.1).
//!
//! One query shifts the noise by the sensitivity, i.e. `X` by `s = 1/R` on the unit scale;
//! its privacy loss is `ln p(X) − ln p(X + s)`-type with an atom at `+∞` (the mass where the
//! shifted density vanishes), built by [`LogConcaveNoise`]. The k-fold loss is the k-fold
//! convolution ([`PrivacyLoss::self_compose`]) and `δ(ε)` its hockey-stick value. That δ
//! decreases in R, so the least R with `δ ≤ δ_target` is found by a safeguarded
//! Illinois (regula falsi) search on `ln(−ln δ)` against `ln R`, keeping a bracket
//! `[lower, radius]` with `δ(lower) > δ_target ≥ δ(radius)`; the reported radius is the
//! bracket's upper end.
//!
//! Two variants ([`RadiusMode`]):
//! - `Estimate`: the loss on a grid of step `c·σ_L` (σ_L the standard deviation of one
//!   query's loss at the starting radius, from a pilot discretisation) rounded to nearest
//!   with the mean kept ([`Bound::Estimate`]); its bias is second order in `c` and
//!   independent of k (module docs of [`crate::pld`]). Not a bound: state its error by
//!   halving the step.
//! - `Pessimistic`: losses rounded up ([`Bound::Upper`]), truncated tails and
//!   floating-point slack charged to δ, so every δ it computes is an upper bound on the
//!   true δ and the reported R is certified. Rounding up moves each query's loss up by
//!   `rᵢ ∈ [0, Δ)`, and the k-fold loss by `Σ rᵢ`, up to `k·Δ`; instead of paying all of
//!   it we *recentre* ([`certified_shifted_noise_delta`](super::certified_shifted_noise_delta)): the `rᵢ` are i.i.d. with a mean
//!   `r̄` we bound from below, so by Hoeffding `Σ rᵢ ≥ k·r̄ − t` except with probability
//!   `η = exp(−2t²/(kΔ²))`, and `δ(ε) ≤ δ_Upper(ε + k·r̄ − t) + η`. The price is about
//!   `t = Δ·√(k ln(1/η)/2)` instead of `k·Δ/2`, so the step can be `√k` times coarser.

use super::recentred::{certified_shifted_noise_delta_from, eta_for, hoeffding_factor};
use super::shifted_noise::{base_noise, finite_part, shifted_noise_delta_from};
use super::Bound;
use crate::error::{check_delta, out_of_range, CompositionError, Result};

/// Which δ the search drives to the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RadiusMode {
    /// Best estimate of the exact least R ([`Bound::Estimate`]).
    Estimate,
    /// Certified upper bound on the least R ([`Bound::Upper`]).
    Pessimistic,
}

/// Accuracy settings of [`least_radius`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RadiusSettings {
    /// `Estimate` step as a multiple of the standard deviation of one query's loss at the
    /// starting radius, in `[1e-3, 1]`; default `0.1`.
    pub estimate_step: f64,
    /// `Pessimistic` rounding budget `b = t/ε` (t the Hoeffding deviation of the summed
    /// roundings, module docs), in `[1e-3, 0.5]`; default `0.01`.
    pub pessimistic_bias: f64,
    /// Relative width of the final bracket on R, in `[1e-8, 1e-1]`; default `1e-4`.
    pub rel_tol: f64,
}

impl Default for RadiusSettings {
    fn default() -> Self {
        Self {
            estimate_step: 0.1,
            pessimistic_bias: 0.01,
            rel_tol: 1e-4,
        }
    }
}

impl RadiusSettings {
    fn check(&self) -> Result<()> {
        if !(1e-3..=1.0).contains(&self.estimate_step) {
            return Err(out_of_range(
                "estimate_step",
                self.estimate_step,
                "[1e-3, 1]",
            ));
        }
        if !(1e-3..=0.5).contains(&self.pessimistic_bias) {
            return Err(out_of_range(
                "pessimistic_bias",
                self.pessimistic_bias,
                "[1e-3, 0.5]",
            ));
        }
        if !(1e-8..=1e-1).contains(&self.rel_tol) {
            return Err(out_of_range("rel_tol", self.rel_tol, "[1e-8, 1e-1]"));
        }
        Ok(())
    }
}

/// The result of [`least_radius`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeastRadius {
    /// Upper end of the final bracket: `δ(radius) ≤ δ_target` on this grid and mode.
    pub radius: f64,
    /// Lower end of the final bracket: `δ(lower) > δ_target`.
    pub lower: f64,
    /// The grid step Δ of the loss used throughout the search.
    pub step: f64,
    /// δ at `radius` as computed (≤ target).
    pub delta: f64,
    /// Number of δ evaluations (each one a k-fold FFT composition).
    pub evaluations: usize,
}

/// Part of δ given to the truncated tails of the k-fold loss.
const TAIL_SHARE: f64 = 1e-4;

/// Standard deviation of one query's privacy loss (its finite part) at radius `r`:
/// `ℓ(y) = g(y) − g(y − s)` (`s = 1/r`, `g = ln_pdf`) under the density, over the outputs
/// `y > lo + s` where it is finite, by a midpoint rule on 20,000 points of the density's
/// finite part. Only chooses a grid step, so its own accuracy is not critical (a pilot
/// discretisation of the loss did the same at several times the cost).
fn loss_std<F: Fn(f64) -> f64>(ln_pdf: &F, support: (f64, f64), r: f64) -> Result<f64> {
    let s = 1.0 / r;
    if s >= support.1 - support.0 {
        return Err(out_of_range(
            "start",
            r,
            "a radius with 1/R below the support width",
        ));
    }
    let (lo, hi) = finite_part(ln_pdf, support);
    let a = (lo + s).min(hi);
    let n = 20_000;
    let h = (hi - a) / n as f64;
    let peak = ln_pdf(0.5 * (lo + hi));
    let (mut m0, mut m1, mut m2) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let y = a + (i as f64 + 0.5) * h;
        let (gy, gs) = (ln_pdf(y), ln_pdf(y - s));
        if !(gy.is_finite() && gs.is_finite()) {
            continue;
        }
        let w = (gy - peak).exp();
        let l = gy - gs;
        m0 += w;
        m1 += w * l;
        m2 += w * l * l;
    }
    let sd = if m0 > 0.0 {
        (m2 / m0 - (m1 / m0).powi(2)).max(0.0).sqrt()
    } else {
        0.0
    };
    // The loss is at least of order s for any density of finite Fisher information.
    Ok(sd.max(1e-6 * s))
}

/// The least R such that noise `R·X` (X with log-density `ln_pdf` on `support`, symmetric
/// and log-concave) on each of k sensitivity-1 queries is (ε, δ)-DP, by the exact privacy
/// loss in the chosen [`RadiusMode`] (module docs). `start` is a radius believed to pass
/// (e.g. the certified bound of `mgf::certified_radius`); the search widens the bracket
/// if it does not. The `Estimate` step is fixed from `start` so that every evaluation of
/// the search uses the same grid.
///
/// Errors: k = 0; ε, `start` not finite and `> 0`; `δ ∉ (0, 1)`; bad settings;
/// [`CompositionError::Unreachable`] when no radius up to `2¹⁰⁰·start` (`Estimate`) or
/// `8·start` (`Pessimistic`) reaches δ: in `Pessimistic` mode the floating-point slack,
/// of order `1e-12·k`, can exceed a very small δ.
///
/// ```
/// use composition::pld::{least_radius, RadiusMode, RadiusSettings};
/// // Gaussian noise (its support cut where the density is below e^-450): the least σ
/// // for one query at (ε, δ) = (1, 1e-5) is the analytic Gaussian mechanism's.
/// let g = |x: f64| -0.5 * x * x;
/// let r = least_radius(&g, (-30.0, 30.0), 1, 1.0, 1e-5, RadiusMode::Estimate, 5.0,
///     &RadiusSettings::default()).unwrap();
/// let sigma = densities::gaussian::analytic_sigma(1.0, 1e-5, 1.0).unwrap();
/// assert!((r.radius / sigma - 1.0).abs() < 2e-3);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn least_radius<F: Fn(f64) -> f64>(
    ln_pdf: &F,
    support: (f64, f64),
    k: u64,
    epsilon: f64,
    delta: f64,
    mode: RadiusMode,
    start: f64,
    settings: &RadiusSettings,
) -> Result<LeastRadius> {
    search(
        ln_pdf, support, k, epsilon, delta, mode, start, 0.8, settings,
    )
}

/// [`least_radius`] with the first failing radius tried at `lo_factor·start` (when
/// `start` passes): close to 1 when the root is known to lie just below `start`.
#[allow(clippy::too_many_arguments)]
fn search<F: Fn(f64) -> f64>(
    ln_pdf: &F,
    support: (f64, f64),
    k: u64,
    epsilon: f64,
    delta: f64,
    mode: RadiusMode,
    start: f64,
    lo_factor: f64,
    settings: &RadiusSettings,
) -> Result<LeastRadius> {
    settings.check()?;
    check_delta("delta", delta)?;
    if !(start.is_finite() && start > 0.0) {
        return Err(out_of_range("start", start, "(0, inf), finite"));
    }
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(out_of_range("epsilon", epsilon, "(0, inf), finite"));
    }
    if k == 0 {
        return Err(out_of_range("k", 0.0, "[1, inf)"));
    }
    let (step, bound) = match mode {
        RadiusMode::Estimate => (
            settings.estimate_step * loss_std(ln_pdf, support, start)?,
            Bound::Estimate,
        ),
        RadiusMode::Pessimistic => (
            settings.pessimistic_bias * epsilon / hoeffding_factor(k, eta_for(delta)),
            Bound::Upper,
        ),
    };
    let tail_total = (TAIL_SHARE * delta).min(1e-3);
    let mut evaluations = 0usize;
    // The density's quadrature does not depend on the radius: built once.
    let base = base_noise(ln_pdf, support)?;
    let mut eval = |r: f64| -> Result<f64> {
        evaluations += 1;
        match bound {
            Bound::Upper => certified_shifted_noise_delta_from(
                Some(&base),
                ln_pdf,
                support,
                k,
                epsilon,
                r,
                step,
                tail_total,
                eta_for(delta),
            ),
            _ => shifted_noise_delta_from(
                Some(&base),
                ln_pdf,
                support,
                k,
                epsilon,
                r,
                step,
                bound,
                tail_total,
            ),
        }
    };
    // φ(x) = ln(−ln δ_target) − ln(−ln δ(e^x)): decreasing, > 0 below the least radius.
    // δ falls off like e^{−cR²} (sub-Gaussian losses), so φ is close to linear in ln R
    // and regula falsi converges in a few steps.
    let target_ll = (-delta.ln()).ln();
    let phi = |d: f64| {
        if d >= 1.0 {
            f64::INFINITY
        } else if d > 0.0 {
            target_ll - (-d.ln()).ln()
        } else {
            f64::NEG_INFINITY
        }
    };

    // Upper end: a radius that passes.
    let mut hi = start;
    let mut d_hi = eval(hi)?;
    // The pessimistic δ has a floor (charged tails and round-off) that no radius removes;
    // beyond a few doublings past the start the target is below it: say so rather than
    // return an absurd radius.
    let max_grow = match mode {
        RadiusMode::Estimate => 100,
        RadiusMode::Pessimistic => 3,
    };
    let mut grow = 0;
    let mut failed: Option<(f64, f64)> = None;
    while d_hi > delta {
        grow += 1;
        if grow > max_grow {
            return Err(CompositionError::Unreachable {
                target: delta,
                floor: d_hi,
            });
        }
        failed = Some((hi, d_hi));
        hi *= 2.0;
        d_hi = eval(hi)?;
    }
    // Lower end: a radius that fails (the last one that did while growing, or shrink
    // geometrically from the passing end).
    let (mut lo, mut d_lo) = match failed {
        Some(v) => v,
        None => {
            let lo = hi * lo_factor;
            (lo, eval(lo)?)
        }
    };
    while d_lo <= delta {
        hi = lo;
        d_hi = d_lo;
        lo *= 0.5;
        if lo * (support.1 - support.0) < 1.0 {
            // δ = 1 below this radius: a failing end for any δ < 1.
            lo = 1.0 / (support.1 - support.0);
            d_lo = 1.0;
            break;
        }
        d_lo = eval(lo)?;
    }

    // Illinois regula falsi on x = ln R, with bisection when φ is infinite or the
    // interpolant stalls.
    let (mut xl, mut xh) = (lo.ln(), hi.ln());
    let (mut fl, mut fh) = (phi(d_lo), phi(d_hi));
    let (mut r_lo, mut r_hi) = (lo, hi);
    let mut side = 0i8;
    for _ in 0..200 {
        if (xh - xl).exp_m1() <= settings.rel_tol {
            break;
        }
        let mid = 0.5 * (xl + xh);
        let mut x = if fl.is_finite() && fh.is_finite() && fl > fh {
            xl + (xh - xl) * fl / (fl - fh)
        } else {
            mid
        };
        // Step at least a fraction of the tolerance away from either end: when the
        // interpolant sits on the root, the next trial lands just past it and the bracket
        // collapses to the tolerance at once.
        let guard = 0.4 * settings.rel_tol.ln_1p();
        x = if x.is_finite() {
            x.clamp(xl + guard, xh - guard)
        } else {
            mid
        };
        let r = x.exp();
        let d = eval(r)?;
        let f = phi(d);
        if d <= delta {
            xh = x;
            r_hi = r;
            fh = f;
            d_hi = d;
            if side == 1 {
                fl *= 0.5;
            }
            side = 1;
        } else {
            xl = x;
            r_lo = r;
            fl = f;
            if side == -1 {
                fh *= 0.5;
            }
            side = -1;
        }
    }
    Ok(LeastRadius {
        radius: r_hi,
        lower: r_lo,
        step,
        delta: d_hi,
        evaluations,
    })
}

/// The exact calibration of [`exact_calibration`]: the estimate with its stated error and,
/// if asked, the certified (pessimistic) radius.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExactCalibration {
    /// The estimate on the finer grid (step `estimate_step/2` times the loss deviation).
    pub estimate: LeastRadius,
    /// Its stated relative error: the change from the grid twice as coarse, and at least
    /// the search tolerance.
    pub estimate_error: f64,
    /// The least radius by the certified accountant ([`RadiusMode::Pessimistic`]).
    pub pessimistic: Option<LeastRadius>,
}

/// Exact calibration of noise `R·X` for k sensitivity-1 queries at (ε, δ) (docs/maths.md
/// §1.4 "exact δ"): the `Estimate` least radius on a grid of step `c·σ_L` and again at
/// `c/2·σ_L` (the finer one is reported, the relative change is its stated error), and,
/// when `pessimistic`, the certified least radius started just above the estimate.
/// `start` as in [`least_radius`] (e.g. the certified Chernoff radius).
///
/// Errors: as [`least_radius`], and `settings.estimate_step / 2` must be at least 1e-3.
///
/// ```
/// use composition::pld::{exact_calibration, RadiusSettings};
/// let g = |x: f64| -0.5 * x * x; // Gaussian noise: the exact answer is analytic
/// let cal = exact_calibration(&g, (-30.0, 30.0), 4, 1.0, 1e-6, 10.0, &RadiusSettings::default(), true)
///     .unwrap();
/// let sigma = densities::gaussian::analytic_sigma(1.0, 1e-6, 2.0).unwrap();
/// assert!((cal.estimate.radius / sigma - 1.0).abs() < 10.0 * cal.estimate_error);
/// assert!(cal.pessimistic.unwrap().radius >= sigma);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn exact_calibration<F: Fn(f64) -> f64>(
    ln_pdf: &F,
    support: (f64, f64),
    k: u64,
    epsilon: f64,
    delta: f64,
    start: f64,
    settings: &RadiusSettings,
    pessimistic: bool,
) -> Result<ExactCalibration> {
    let find = |mode, start: f64, lo_factor: f64, settings: &RadiusSettings| {
        search(
            ln_pdf, support, k, epsilon, delta, mode, start, lo_factor, settings,
        )
    };
    let coarse = find(RadiusMode::Estimate, start, 0.8, settings)?;
    // The finer grid starts from the coarse answer; its step is derived from the start,
    // so it is (about) half the coarse step. Halving the step moves the root by well under
    // 1 % (the stated error, measured ≤ 1.5e-4 on fig19), so the first failing trial is
    // 1 % below.
    let fine = find(
        RadiusMode::Estimate,
        coarse.radius * (1.0 + 2.0 * settings.rel_tol),
        0.99,
        &RadiusSettings {
            estimate_step: 0.5 * settings.estimate_step,
            ..*settings
        },
    )?;
    // The certified radius lies above the estimate by about the rounding budget: start
    // at twice it, with the estimate itself as the first failing trial.
    let pess = if pessimistic {
        let up = 1.0 + 2.0 * settings.pessimistic_bias;
        Some(find(
            RadiusMode::Pessimistic,
            fine.radius * up,
            1.0 / up,
            settings,
        )?)
    } else {
        None
    };
    Ok(ExactCalibration {
        estimate: fine,
        estimate_error: (coarse.radius / fine.radius - 1.0)
            .abs()
            .max(settings.rel_tol),
        pessimistic: pess,
    })
}
