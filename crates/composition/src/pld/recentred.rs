//! The certified (pessimistic) δ of shifted log-concave noise, with the summed per-query
//! rounding recentred by Hoeffding's inequality (see [`certified_shifted_noise_delta`]
//! and the module docs of `least_radius`): the rounding up to the grid then costs about
//! `Δ·√k` instead of `k·Δ`.

use super::shifted_noise::per_query;
use super::{Bound, LogConcaveNoise};
use crate::error::{out_of_range, Result};

/// Largest k for which the pessimistic (certified) search is supported: beyond 2¹⁴ the
/// composition squares with grid coarsening, whose rounding is charged in full, and the
/// round-off floor grows like k.
pub const PESSIMISTIC_MAX_K: u64 = 100_000;

/// Smallest δ the pessimistic search is asked for at k queries: `max(1e-10, 1e-12·k)`,
/// above the accountant's certified round-off floor (measured: 2.8e-12 at k = 1,
/// 2.8e-10 at k = 1e4, above 1e-8 at k = 1e5). Closer to the floor the radius is valid but
/// loose; below it [`least_radius`](super::least_radius) reports
/// [`CompositionError::Unreachable`](crate::CompositionError::Unreachable).
pub fn pessimistic_min_delta(k: u64) -> f64 {
    (1e-12 * k as f64).max(1e-10)
}

/// The Hoeffding failure probability spent by the pessimistic search: a thousandth of δ.
pub(super) fn eta_for(delta: f64) -> f64 {
    1e-3 * delta
}

/// `√(k ln(1/η)/2)`: the Hoeffding deviation of a sum of k i.i.d. variables of range 1.
pub(super) fn hoeffding_factor(k: u64, eta: f64) -> f64 {
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
/// [`shifted_noise_delta`](super::shifted_noise_delta) with [`Bound::Upper`]), tightened
/// by recentring the rounding (module docs): with `c = k·r̄_lo − t`,
/// `t = w·√(k ln(1/η)/2)` (w the rounding's range, Δ plus a float margin) and `r̄_lo` a
/// certified lower bound on the mean rounding,
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
/// Errors: as [`shifted_noise_delta`](super::shifted_noise_delta); `η ∉ (0, 1)`.
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
    certified_shifted_noise_delta_from(
        None, ln_pdf, support, k, epsilon, radius, step, tail_total, eta,
    )
}

/// [`certified_shifted_noise_delta`] with the noise's quadrature taken from `base` when
/// given (see `shifted_noise::base_noise`).
#[allow(clippy::too_many_arguments)]
pub(super) fn certified_shifted_noise_delta_from<F: Fn(f64) -> f64>(
    base: Option<&LogConcaveNoise<&F>>,
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
        base,
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
