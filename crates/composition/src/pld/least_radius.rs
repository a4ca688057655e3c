//! The least scale `R` of a symmetric log-concave noise `R·X` that makes k sensitivity-1
//! queries (ε, δ)-DP, from the exact privacy loss (formulas.md §1.4, "Exact (not just
//! certified) δ of the bounded-noise mechanism"; Dagan & Kur 2022, Definition 2.1).
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
//!   it we *recentre* ([`certified_shifted_noise_delta`]): the `rᵢ` are i.i.d. with a mean
//!   `r̄` we bound from below, so by Hoeffding `Σ rᵢ ≥ k·r̄ − t` except with probability
//!   `η = exp(−2t²/(kΔ²))`, and `δ(ε) ≤ δ_Upper(ε + k·r̄ − t) + η`. The price is about
//!   `t = Δ·√(k ln(1/η)/2)` instead of `k·Δ/2`, so the step can be `√k` times coarser.

use super::{Bound, LogConcaveNoise, PldConfig, PrivacyLoss};
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

/// Relative accuracy and node budget of the per-query loss construction: far below the
/// grid's own discretisation error (1e-9 and 2¹⁶ nodes move fig19's radii by at most 1.5e-4,
/// within the stated error), and about 7 ms per construction.
const NOISE_RTOL: f64 = 1e-8;
const NOISE_NODES: usize = 1 << 14;

/// Part of δ given to the truncated tails of the k-fold loss.
const TAIL_SHARE: f64 = 1e-4;

/// δ(ε) of k queries answered with noise `R·X`, `X` with log-density `ln_pdf` (any
/// additive constant, concave) on `support`, from the k-fold privacy loss on a grid of
/// step `step` in the given bound (formulas.md §0 hockey-stick, §1.4 exact δ). The
/// truncation budget per query is `tail_total/k`; `Upper` charges it to δ.
///
/// Errors: k = 0, ε or R or step not finite and `> 0`, `tail_total ∉ [0, 1e-3]`, or
/// `ln_pdf` not concave (see [`LogConcaveNoise`]).
///
/// ```
/// use composition::pld::{shifted_noise_delta, Bound};
/// // Uniform noise on (−1, 1) scaled by R = 2: one query has δ(0) = P(X < −1 + 1/2) = 1/4.
/// let d = shifted_noise_delta(&|_x: f64| 0.0, (-1.0, 1.0), 1, 0.5, 2.0, 1e-3, Bound::Upper, 1e-9)
///     .unwrap();
/// assert!((d - 0.25).abs() < 1e-6);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn shifted_noise_delta<F: Fn(f64) -> f64>(
    ln_pdf: &F,
    support: (f64, f64),
    k: u64,
    epsilon: f64,
    radius: f64,
    step: f64,
    bound: Bound,
    tail_total: f64,
) -> Result<f64> {
    match per_query(ln_pdf, support, k, epsilon, radius, step, bound, tail_total)? {
        None => Ok(1.0),
        Some((_, one)) => one.self_compose(k)?.delta(epsilon),
    }
}

/// Largest k for which the pessimistic (certified) search is supported: beyond 2¹⁴ the
/// composition squares with grid coarsening, whose rounding is charged in full, and the
/// round-off floor grows like k.
pub const PESSIMISTIC_MAX_K: u64 = 100_000;

/// Smallest δ the pessimistic search is asked for at k queries: `max(1e-10, 1e-12·k)`,
/// above the accountant's certified round-off floor (measured: 2.8e-12 at k = 1,
/// 2.8e-10 at k = 1e4, above 1e-8 at k = 1e5). Closer to the floor the radius is valid but
/// loose; below it [`least_radius`] reports [`CompositionError::Unreachable`].
pub fn pessimistic_min_delta(k: u64) -> f64 {
    (1e-12 * k as f64).max(1e-10)
}

/// The Hoeffding failure probability spent by the pessimistic search: a thousandth of δ.
fn eta_for(delta: f64) -> f64 {
    1e-3 * delta
}

/// `√(k ln(1/η)/2)`: the Hoeffding deviation of a sum of k i.i.d. variables of range 1.
fn hoeffding_factor(k: u64, eta: f64) -> f64 {
    (k as f64 * (1.0 / eta).ln() / 2.0).sqrt()
}

/// Share of the noise's mass (each side) left out of the rounding-mean bound: dropping
/// mass only lowers the bound (every rounding is ≥ 0), so it stays valid.
const ROUNDING_TAIL: f64 = 1e-4;

/// Loss width of the cells of the rounding-mean bound, as a fraction of the step, for k
/// queries. The bound loses up to about two cell widths per unit mass, k times over in
/// the shift `k·r̄`; `Δ·1.6/√k` keeps that near the Hoeffding deviation
/// `t = Δ·√(k ln(1/η)/2)` for η around 1e-9 (balanced cost and slack), and at most Δ/16.
fn rounding_cell(k: u64) -> f64 {
    (1.6 / (k as f64).sqrt()).min(1.0 / 16.0)
}

/// Certified lower bound on the mean rounding `E[min(⌈L/Δ⌉Δ − L, Δ)]` of one query's
/// loss `L = g(Y)` (finite part; `g` non-increasing in y), `Y` from the noise. The bulk
/// of `Y` is cut into cells whose loss range is at most `cell·Δ`; on a cell the rounding is
/// at least its value at the top loss unless a grid point lies in the cell (then ≥ 0),
/// and the cell's mass is at least `F_lo(y') − F_hi(y)` from the certified CDF brackets.
fn rounding_mean_lower<F: Fn(f64) -> f64>(noise: &LogConcaveNoise<F>, step: f64, cell: f64) -> f64 {
    let (y0, hi) = (noise.y0(), noise.support_hi());
    if y0 >= hi {
        return 0.0;
    }
    // The bulk [ya, yb] of Y (beyond y0, where the loss is finite); only a choice of
    // where to look, so midpoints of the CDF brackets are good enough.
    let quantile = |p: f64| -> f64 {
        let (mut a, mut b) = (y0, hi);
        for _ in 0..200 {
            let m = 0.5 * (a + b);
            if m <= a || m >= b {
                break;
            }
            if noise.cdf(m).mid() < p {
                a = m;
            } else {
                b = m;
            }
        }
        0.5 * (a + b)
    };
    let f0 = noise.cdf(y0).mid();
    let ya = quantile(f0 + ROUNDING_TAIL).max(y0);
    let yb = quantile(1.0 - ROUNDING_TAIL);
    if yb <= ya || yb.is_nan() {
        return 0.0;
    }
    let width = cell * step;
    let mut sum = 0.0;
    let mut y = ya;
    let mut gy = noise.loss(y);
    let mut fy_hi = noise.cdf(y).hi;
    let mut dy = (yb - ya) / 1024.0;
    let min_dy = 1e-15 * (hi - y0);
    let mut cells = 0usize;
    while y < yb && cells < 20_000_000 {
        cells += 1;
        // Next point: a loss drop of at most `width` (halve the stride until it is).
        let (mut y1, mut g1);
        loop {
            y1 = (y + dy).min(yb);
            g1 = noise.loss(y1);
            if !(gy.is_finite() && g1.is_finite()) || gy - g1 <= width || dy < min_dy {
                break;
            }
            dy *= 0.5;
        }
        let f1 = noise.cdf(y1);
        if gy.is_finite() && g1.is_finite() && gy - g1 <= width {
            let mass = (f1.lo - fy_hi).max(0.0);
            // Losses in the cell lie in [g1, gy]; j·Δ is the grid point at or above gy.
            let j = (gy / step).ceil();
            let r_min = if (j - 1.0) * step >= g1 {
                0.0
            } else {
                (j * step - gy).clamp(0.0, step)
            };
            sum += mass * r_min;
        }
        fy_hi = f1.hi;
        y = y1;
        gy = g1;
        dy *= 1.5;
    }
    sum
}

/// Certified upper bound on δ(ε) of k queries with noise `R·X` (as
/// [`shifted_noise_delta`] with [`Bound::Upper`]), tightened by recentring the rounding
/// (module docs): with `c = k·r̄_lo − t`, `t = w·√(k ln(1/η)/2)` (w the rounding's range,
/// Δ plus a float margin) and `r̄_lo` a certified lower bound on the mean rounding,
/// returns `min(δ_Upper(ε), δ_Upper(ε + c) + η)`.
///
/// Why it is an upper bound: the discretised per-query law dominates `⌈L⌉` (L rounded up
/// to the grid) and, coupled monotonically, gives `L'ᵢ ≥ Lᵢ + r̃ᵢ` with
/// `r̃ᵢ = min(⌈Lᵢ⌉ − Lᵢ, Δ)`, i.i.d. in `[−margin, Δ]`; so `ΣL ≤ ΣL' − Σr̃`, and on the
/// event `Σr̃ ≥ c` (probability at least `1 − η` by Hoeffding, as `k·E r̃ ≥ k·r̄_lo`)
/// the hockey-stick integrand, non-decreasing and at most 1, is at most its value at
/// `ΣL' − c`. Everything the accountant does after the per-query rounding moves mass up
/// or charges it to δ.
///
/// Errors: as [`shifted_noise_delta`]; `η ∉ (0, 1)`.
///
/// ```
/// use composition::pld::{certified_shifted_noise_delta, shifted_noise_delta, Bound};
/// let g = |x: f64| -0.5 * x * x;
/// let (k, eps, r, step) = (1000, 1.0, 40.0, 1e-4);
/// let sup = (-30.0, 30.0);
/// let rc = certified_shifted_noise_delta(&g, sup, k, eps, r, step, 1e-12, 1e-9).unwrap();
/// let plain = shifted_noise_delta(&g, sup, k, eps, r, step, Bound::Upper, 1e-12).unwrap();
/// let exact = densities::gaussian::gaussian_delta(eps, (k as f64).sqrt() / r);
/// assert!(exact <= rc && rc < plain);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn certified_shifted_noise_delta<F: Fn(f64) -> f64>(
    ln_pdf: &F,
    support: (f64, f64),
    k: u64,
    epsilon: f64,
    radius: f64,
    step: f64,
    tail_total: f64,
    eta: f64,
) -> Result<f64> {
    if !(eta > 0.0 && eta < 1.0) {
        return Err(out_of_range("eta", eta, "(0, 1)"));
    }
    let Some((noise, one)) = per_query(
        ln_pdf,
        support,
        k,
        epsilon,
        radius,
        step,
        Bound::Upper,
        tail_total,
    )?
    else {
        return Ok(1.0);
    };
    let composed = one.self_compose(k)?;
    let plain = composed.delta(epsilon)?;
    // Float margin of the rounding: grid points are computed as j·Δ in floating point.
    let extent = one.loss(0).abs().max(one.loss(one.pmf().len() - 1).abs()) + step;
    let margin = 64.0 * f64::EPSILON * extent;
    let r_lo = rounding_mean_lower(&noise, step, rounding_cell(k)) - margin;
    let t = (step + margin) * hoeffding_factor(k, eta);
    let c = k as f64 * r_lo - t;
    if c <= 0.0 {
        return Ok(plain);
    }
    let shifted = composed.delta(epsilon + c)? + eta;
    Ok(plain.min(shifted).min(1.0))
}

/// The part of `support` where `ln_pdf` is above `ln_pdf(mid) − 1e6` (an interval, by
/// concavity), found by bisection from the midpoint to float resolution. Beyond it the
/// density is below `e^{−1e6}` times its peak, zero in any floating-point sense, but its
/// potential can be so steep (`exp(1/(1 − x²))` overflows for |x| > 0.9993) that the
/// certified brackets of [`LogConcaveNoise`] overflow. Moving the shifted mass there into
/// the `+∞` atom is pessimistic.
fn finite_part<F: Fn(f64) -> f64>(ln_pdf: &F, support: (f64, f64)) -> (f64, f64) {
    let (lo, hi) = support;
    let mid = 0.5 * (lo + hi);
    let peak = ln_pdf(mid);
    if !peak.is_finite() {
        return support;
    }
    let ok = |x: f64| {
        let v = ln_pdf(x);
        v.is_finite() && v >= peak - 1e6
    };
    let edge = |end: f64| -> f64 {
        if ok(end) {
            return end;
        }
        // ln_pdf(inside) finite, ln_pdf(outside) not.
        let (mut inside, mut outside) = (mid, end);
        for _ in 0..200 {
            let m = 0.5 * (inside + outside);
            if m == inside || m == outside {
                break;
            }
            if ok(m) {
                inside = m;
            } else {
                outside = m;
            }
        }
        inside
    };
    (edge(lo), edge(hi))
}

/// One query's noise model and discretised loss at radius R, or `None` when the shift
/// `1/R` exceeds the support (disjoint supports: every output separates them, δ = 1).
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn per_query<F: Fn(f64) -> f64>(
    ln_pdf: &F,
    support: (f64, f64),
    k: u64,
    epsilon: f64,
    radius: f64,
    step: f64,
    bound: Bound,
    tail_total: f64,
) -> Result<Option<(LogConcaveNoise<&F>, PrivacyLoss)>> {
    check_common(k, epsilon, radius, tail_total)?;
    let s = 1.0 / radius;
    if s >= support.1 - support.0 {
        return Ok(None);
    }
    let noise = LogConcaveNoise::with_accuracy(
        ln_pdf,
        finite_part(ln_pdf, support),
        s,
        NOISE_RTOL,
        NOISE_NODES,
    )?;
    let cfg = PldConfig::new(step, bound)?.with_tail(tail_total / k as f64)?;
    let one = PrivacyLoss::from_model(&noise, &cfg)?;
    Ok(Some((noise, one)))
}

fn check_common(k: u64, epsilon: f64, radius: f64, tail_total: f64) -> Result<()> {
    if k == 0 {
        return Err(out_of_range("k", 0.0, "[1, inf)"));
    }
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(out_of_range("epsilon", epsilon, "(0, inf), finite"));
    }
    if !(radius.is_finite() && radius > 0.0) {
        return Err(out_of_range("radius", radius, "(0, inf), finite"));
    }
    if !(0.0..=1e-3).contains(&tail_total) {
        return Err(out_of_range("tail_total", tail_total, "[0, 1e-3]"));
    }
    Ok(())
}

/// Standard deviation of one query's privacy loss (its finite part) at radius `r`, from
/// a pilot discretisation on a grid of step `s/16` (`s = 1/r`; the loss is at least of
/// order `s` for any density of finite Fisher information) refined until the grid is
/// below a tenth of the deviation. Only chooses a step: its own accuracy is not critical.
fn loss_std<F: Fn(f64) -> f64>(ln_pdf: &F, support: (f64, f64), r: f64) -> Result<f64> {
    let s = 1.0 / r;
    if s >= support.1 - support.0 {
        return Err(out_of_range(
            "start",
            r,
            "a radius with 1/R below the support width",
        ));
    }
    let noise =
        LogConcaveNoise::with_accuracy(ln_pdf, finite_part(ln_pdf, support), s, 1e-6, 1 << 12)?;
    let mut step = s / 16.0;
    loop {
        let cfg = PldConfig::new(step, Bound::Estimate)?.with_tail(1e-12)?;
        let pl = PrivacyLoss::from_model(&noise, &cfg)?;
        let (mut m0, mut m1, mut m2) = (0.0, 0.0, 0.0);
        for (j, &p) in pl.pmf().iter().enumerate() {
            let l = pl.loss(j);
            m0 += p;
            m1 += p * l;
            m2 += p * l * l;
        }
        let sd = if m0 > 0.0 {
            (m2 / m0 - (m1 / m0).powi(2)).max(0.0).sqrt()
        } else {
            0.0
        };
        if sd >= 10.0 * step || step < 1e-6 * s {
            return Ok(sd.max(step));
        }
        step /= 8.0;
    }
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
    let mut eval = |r: f64| -> Result<f64> {
        evaluations += 1;
        match bound {
            Bound::Upper => certified_shifted_noise_delta(
                ln_pdf,
                support,
                k,
                epsilon,
                r,
                step,
                tail_total,
                eta_for(delta),
            ),
            _ => shifted_noise_delta(ln_pdf, support, k, epsilon, r, step, bound, tail_total),
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
    while d_hi > delta {
        grow += 1;
        if grow > max_grow {
            return Err(CompositionError::Unreachable {
                target: delta,
                floor: d_hi,
            });
        }
        hi *= 2.0;
        d_hi = eval(hi)?;
    }
    // Lower end: a radius that fails (shrink geometrically from the passing end).
    let mut lo = hi * 0.8;
    let mut d_lo = eval(lo)?;
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

/// Exact calibration of noise `R·X` for k sensitivity-1 queries at (ε, δ) (formulas.md
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
    let search = |mode, start: f64, settings: &RadiusSettings| {
        least_radius(ln_pdf, support, k, epsilon, delta, mode, start, settings)
    };
    let coarse = search(RadiusMode::Estimate, start, settings)?;
    // The finer grid starts from the coarse answer; its step is derived from the start,
    // so it is (about) half the coarse step.
    let fine = search(
        RadiusMode::Estimate,
        coarse.radius * (1.0 + 2.0 * settings.rel_tol),
        &RadiusSettings {
            estimate_step: 0.5 * settings.estimate_step,
            ..*settings
        },
    )?;
    let pess = if pessimistic {
        Some(search(
            RadiusMode::Pessimistic,
            fine.radius * (1.0 + 2.0 * settings.pessimistic_bias),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `E[min(⌈L/Δ⌉Δ − L, Δ)]` for Gaussian noise (loss `ln p(y) − ln p(y − s) =
    /// s²/2 − s·y`) by a midpoint rule on a very fine y-grid: an independent estimate of
    /// what [`rounding_mean_lower`] bounds from below.
    fn rounding_mean_quadrature(s: f64, step: f64) -> f64 {
        let n = 4_000_000;
        let (lo, hi) = (-12.0, 12.0);
        let h = (hi - lo) / n as f64;
        let mut num = 0.0;
        let mut den = 0.0;
        for i in 0..n {
            let y = lo + (i as f64 + 0.5) * h;
            let p = (-0.5 * y * y).exp();
            // ln p(y) − ln p(y − s)
            let l = -0.5 * y * y + 0.5 * (y - s) * (y - s);
            let r = ((l / step).ceil() * step - l).min(step);
            num += p * r;
            den += p;
        }
        num / den
    }

    #[test]
    fn rounding_mean_bound_is_below_and_close_to_quadrature() {
        let g = |x: f64| -0.5 * x * x;
        for &(s, step) in &[(0.1, 3e-3), (0.01, 1e-4), (0.5, 0.2), (0.02, 1e-3)] {
            let noise =
                LogConcaveNoise::with_accuracy(&g, (-30.0, 30.0), s, 1e-10, 1 << 16).unwrap();
            let lower = rounding_mean_lower(&noise, step, 1.0 / 64.0);
            let q = rounding_mean_quadrature(s, step);
            assert!(lower <= q * (1.0 + 1e-6), "s = {s}: {lower} > {q}");
            assert!(lower >= 0.95 * q, "s = {s}: {lower} ≪ {q}");
        }
    }
}
