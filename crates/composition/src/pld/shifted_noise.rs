//! δ of k queries answered with shifted log-concave noise `R·X` (one query shifts `X` by
//! `s = 1/R`), from the k-fold privacy-loss distribution of one query's loss with its
//! `+∞` atom (docs/maths.md §0 hockey-stick, §1.4 "exact δ"): the per-query construction
//! shared by the estimate and the certified accountants.

use super::{Bound, LogConcaveNoise, PldConfig, PrivacyLoss};
use crate::error::{out_of_range, Result};

/// Relative accuracy and node budget of the per-query loss construction: far below the
/// grid's own discretisation error (1e-9 and 2¹⁶ nodes move fig19's radii by at most 1.5e-4,
/// within the stated error), and about 7 ms per construction.
pub(super) const NOISE_RTOL: f64 = 1e-8;
pub(super) const NOISE_NODES: usize = 1 << 14;

/// δ(ε) of k queries answered with noise `R·X`, `X` with log-density `ln_pdf` (any
/// additive constant, concave) on `support`, from the k-fold privacy loss on a grid of
/// step `step` in the given bound (docs/maths.md §0 hockey-stick, §1.4 exact δ). The
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
    shifted_noise_delta_from(
        None, ln_pdf, support, k, epsilon, radius, step, bound, tail_total,
    )
}

/// [`shifted_noise_delta`] with the noise's quadrature taken from `base` (built by
/// [`base_noise`] for the same `ln_pdf` and `support`) when given.
#[allow(clippy::too_many_arguments)]
pub(super) fn shifted_noise_delta_from<F: Fn(f64) -> f64>(
    base: Option<&LogConcaveNoise<&F>>,
    ln_pdf: &F,
    support: (f64, f64),
    k: u64,
    epsilon: f64,
    radius: f64,
    step: f64,
    bound: Bound,
    tail_total: f64,
) -> Result<f64> {
    match per_query(
        base, ln_pdf, support, k, epsilon, radius, step, bound, tail_total,
    )? {
        None => Ok(1.0),
        Some((_, one)) => one.self_compose(k)?.delta(epsilon),
    }
}

/// The noise of `ln_pdf` on `support` (its finite part) with its quadrature, for
/// [`per_query`] to reuse at every radius of a search (the shift is set there).
pub(super) fn base_noise<F: Fn(f64) -> f64>(
    ln_pdf: &F,
    support: (f64, f64),
) -> Result<LogConcaveNoise<&F>> {
    LogConcaveNoise::with_accuracy(
        ln_pdf,
        finite_part(ln_pdf, support),
        1.0,
        NOISE_RTOL,
        NOISE_NODES,
    )
}

/// The part of `support` where `ln_pdf` is above `ln_pdf(mid) − 1e6` (an interval, by
/// concavity), found by bisection from the midpoint to float resolution. Beyond it the
/// density is below `e^{−1e6}` times its peak, zero in any floating-point sense, but its
/// potential can be so steep (`exp(1/(1 − x²))` overflows for |x| > 0.9993) that the
/// certified brackets of [`LogConcaveNoise`] overflow. Moving the shifted mass there into
/// the `+∞` atom is pessimistic.
pub(super) fn finite_part<F: Fn(f64) -> f64>(ln_pdf: &F, support: (f64, f64)) -> (f64, f64) {
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
pub(super) fn per_query<'f, F: Fn(f64) -> f64>(
    base: Option<&LogConcaveNoise<&'f F>>,
    ln_pdf: &'f F,
    support: (f64, f64),
    k: u64,
    epsilon: f64,
    radius: f64,
    step: f64,
    bound: Bound,
    tail_total: f64,
) -> Result<Option<(LogConcaveNoise<&'f F>, PrivacyLoss)>> {
    check_common(k, epsilon, radius, tail_total)?;
    let s = 1.0 / radius;
    if s >= support.1 - support.0 {
        return Ok(None);
    }
    let noise = match base {
        Some(b) => b.with_shift(s),
        None => LogConcaveNoise::with_accuracy(
            ln_pdf,
            finite_part(ln_pdf, support),
            s,
            NOISE_RTOL,
            NOISE_NODES,
        )?,
    };
    let cfg = PldConfig::new(step, bound)?.with_tail(tail_total / k as f64)?;
    let one = PrivacyLoss::from_model(&noise, &cfg)?;
    Ok(Some((noise, one)))
}

pub(super) fn check_common(k: u64, epsilon: f64, radius: f64, tail_total: f64) -> Result<()> {
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
