//! One-dimensional maximisation over the analyst's parameter `t ∈ [0, ε]`: evaluate a
//! set of seeds (a uniform scan plus problem-specific candidates), then refine the best
//! local maxima with argmin's Brent minimiser on the neighbouring seeds' bracket. The
//! result is the best of everything evaluated, so it is never below the best seed.

use argmin::core::{CostFunction, Error as ArgminError, Executor};
use argmin::solver::brent::BrentOpt;

/// The cost handed to argmin: `−exp(ln f(t) − ln_ref)`, a scale-free negated objective.
struct NegRelative<'a> {
    ln_f: &'a dyn Fn(f64) -> f64,
    ln_ref: f64,
}

impl CostFunction for NegRelative<'_> {
    type Param = f64;
    type Output = f64;
    fn cost(&self, t: &f64) -> Result<f64, ArgminError> {
        let v = ((self.ln_f)(*t) - self.ln_ref).exp();
        Ok(if v.is_finite() { -v } else { -f64::MAX })
    }
}

/// `n + 1` equally spaced points on `[0, width]`.
pub(crate) fn uniform_seeds(width: f64, n: usize) -> Vec<f64> {
    (0..=n).map(|j| width * j as f64 / n as f64).collect()
}

/// Maximises `ln_f` (natural log of a non-negative objective; `−∞` where it is 0) over
/// the hull of `seeds`. Every seed is evaluated; then Brent runs on `[s_{j−1}, s_{j+1}]`
/// around the `refine` best local maxima of the sorted seed values. Returns
/// `(argmax, ln max)`.
pub(crate) fn maximize_ln(
    ln_f: &dyn Fn(f64) -> f64,
    mut seeds: Vec<f64>,
    refine: usize,
) -> (f64, f64) {
    seeds.retain(|s| s.is_finite());
    seeds.sort_by(f64::total_cmp);
    seeds.dedup();
    let vals: Vec<f64> = seeds.iter().map(|&s| ln_f(s)).collect();
    let mut best = (seeds[0], vals[0]);
    for (&s, &v) in seeds.iter().zip(&vals) {
        if v > best.1 {
            best = (s, v);
        }
    }
    if best.1 == f64::NEG_INFINITY || seeds.len() < 2 {
        return best;
    }
    // Local maxima of the seed sequence, best first.
    let n = seeds.len();
    let mut peaks: Vec<usize> = (0..n)
        .filter(|&j| (j == 0 || vals[j] >= vals[j - 1]) && (j + 1 == n || vals[j] >= vals[j + 1]))
        .collect();
    peaks.sort_by(|&a, &b| vals[b].total_cmp(&vals[a]));
    for &j in peaks.iter().take(refine) {
        let lo = seeds[j.saturating_sub(1)];
        let hi = seeds[(j + 1).min(n - 1)];
        if hi - lo <= 1e-15 * hi.abs().max(1e-300) {
            continue;
        }
        let problem = NegRelative {
            ln_f,
            ln_ref: best.1,
        };
        let solver = BrentOpt::new(lo, hi).set_tolerance(f64::EPSILON.sqrt(), 1e-13 * (hi - lo));
        if let Ok(res) = Executor::new(problem, solver)
            .configure(|s| s.max_iters(200))
            .run()
        {
            if let Some(&t) = res.state().best_param.as_ref() {
                if t >= lo && t <= hi {
                    let v = ln_f(t);
                    if v > best.1 {
                        best = (t, v);
                    }
                }
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_interior_and_boundary_maxima() {
        // ln f = −(t − 0.3)²: interior maximum.
        let f = |t: f64| -(t - 0.3_f64).powi(2);
        let (t, v) = maximize_ln(&f, uniform_seeds(1.0, 7), 2);
        assert!((t - 0.3).abs() < 1e-7 && v <= 0.0 && v > -1e-14);
        // Increasing: maximum at the right end.
        let g = |t: f64| t;
        let (t, _) = maximize_ln(&g, uniform_seeds(2.0, 4), 1);
        assert_eq!(t, 2.0);
    }
}
