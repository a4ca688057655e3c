//! Pairs of Gaussian mixtures: the dominating pairs of Poisson sampling under replace-one
//! neighbours and of groups under Poisson sampling (docs/accountant.md §2.7).
//!
//! `P = Σ_i w_i N(a_i, 1)` and `Q = Σ_j v_j N(b_j, 1)` (shifts in units of σ). The loss
//! `ℓ(y) = ln Σ_i w_i e^{a_i y − a_i²/2} − ln Σ_j v_j e^{b_j y − b_j²/2}` has slope
//! `E[a | y] − E[b | y]` (posterior means of the two shifts), so it is increasing when
//! every `a_i ≥` every `b_j` and decreasing when every `a_i ≤` every `b_j`; only such pairs
//! are accepted. Cells in loss are then intervals in `y`, integrated like those of
//! [`crate::accountant::sampling::subsampled`] (8-point Gauss–Legendre, closed-form CDFs over a half-line).

use crate::accountant::core::numeric::bracket_root;
use crate::accountant::laws::{
    cell_in_output, loss_sd_by_trapezoid, range_from_ends, ContinuousRange, LossLaw,
};
use crate::error::{out_of_range, Result};
use densities::normal::ln_cdf;

const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// Largest shift (in units of σ) of a component: one use at a shift of 50 is already
/// ε ≈ 50 (as for [`crate::accountant::sampling::subsampled::SubsampledLaw`]).
pub const MAX_SHIFT: f64 = 50.0;

/// The loss law of a pair of Gaussian mixtures with a monotone loss.
#[derive(Debug, Clone)]
pub struct MixtureLaw {
    /// `(ln w_i, a_i)` of P.
    p: Vec<(f64, f64)>,
    /// `(ln v_j, b_j)` of Q.
    q: Vec<(f64, f64)>,
    increasing: bool,
    /// The loss's limits as `y → −∞` and `y → +∞` (in that order for an increasing loss).
    lo: f64,
    hi: f64,
    scale: f64,
}

/// `ln Σ e^{t}` over a slice.
fn log_sum_exp(t: impl Iterator<Item = f64> + Clone) -> f64 {
    let m = t.clone().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + t.map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// `(ln C(g, k) + k ln q + (g − k) ln(1 − q), k)` for `k = 0..=g`: the binomial number
/// of a group's members that a Poisson sample of rate q holds.
fn binomial_ln_weights(g: u32, q: f64) -> Vec<(f64, u32)> {
    let (ln_q, ln_1mq) = (q.ln(), (-q).ln_1p());
    let mut ln_c = 0.0;
    (0..=g)
        .map(|k| {
            if k > 0 {
                ln_c += ((g - k + 1) as f64).ln() - (k as f64).ln();
            }
            let t = |n: u32, l: f64| if n == 0 { 0.0 } else { n as f64 * l };
            (ln_c + t(k, ln_q) + t(g - k, ln_1mq), k)
        })
        .filter(|&(w, _)| w > f64::NEG_INFINITY)
        .collect()
}

impl MixtureLaw {
    /// The pair `(P, Q)` from components `(weight, shift)`; weights positive and summing
    /// to 1 (within 1e-12), shifts in `[−50, 50]`, every P-shift on one side of every
    /// Q-shift (a monotone loss), and the two laws different.
    ///
    /// ```
    /// use composition::accountant::sampling::mixture::MixtureLaw;
    /// use composition::accountant::LossLaw;
    /// // Poisson sampling at q = 0.1 under replace-one, sensitivity/σ = 1.
    /// let l = MixtureLaw::new(&[(0.9, 0.0), (0.1, 1.0)], &[(0.9, 0.0), (0.1, -1.0)]).unwrap();
    /// assert!(l.loss_scale() > 0.0);
    /// ```
    pub fn new(p: &[(f64, f64)], q: &[(f64, f64)]) -> Result<Self> {
        let ln = |c: &[(f64, f64)]| -> Result<Vec<(f64, f64)>> {
            let mut sum = 0.0;
            let mut out = Vec::with_capacity(c.len());
            for &(w, a) in c {
                if !(w.is_finite() && w >= 0.0) {
                    return Err(out_of_range("mixture weight", w, "[0, 1]"));
                }
                if !(a.is_finite() && a.abs() <= MAX_SHIFT) {
                    return Err(out_of_range("mixture shift", a, "[-50, 50]"));
                }
                sum += w;
                if w > 0.0 {
                    out.push((w.ln(), a));
                }
            }
            if (sum - 1.0).abs() > 1e-12 || out.is_empty() {
                return Err(out_of_range("sum of mixture weights", sum, "1"));
            }
            Ok(out)
        };
        Self::from_ln(ln(p)?, ln(q)?)
    }

    /// A group of `g` examples under Poisson sampling at rate `q`, `mu = s/σ`: `K ~
    /// Bin(g, q)` of them are in the sample. Add/remove (`replace = false`): the pair
    /// `(Σ_k b_k N(kμ), N(0))` and its reverse; replace-one: `(Σ_k b_k N(kμ),
    /// Σ_k b_k N(−kμ))`, symmetric: swapping P and Q is the reflection `y ↦ −y`
    /// (docs/accountant.md §2.7; g = 1 is Poisson sampling under replace-one). Returns
    /// `(P‖Q, Q‖P)`, the second `None` when symmetric.
    pub fn poisson_group(mu: f64, q: f64, g: u32, replace: bool) -> Result<(Self, Option<Self>)> {
        if !(mu.is_finite() && mu >= 1e-6 && mu * g as f64 <= MAX_SHIFT) {
            return Err(out_of_range(
                "sensitivity/scale × group",
                mu * g as f64,
                "[1e-6, 50]",
            ));
        }
        if !(1e-9..=1.0).contains(&q) {
            return Err(out_of_range("q", q, "[1e-9, 1]"));
        }
        if g == 0 {
            return Err(out_of_range("group", 0.0, "[1, 1000]"));
        }
        let comps = binomial_ln_weights(g, q);
        let up: Vec<(f64, f64)> = comps.iter().map(|&(w, k)| (w, k as f64 * mu)).collect();
        if replace {
            let down: Vec<(f64, f64)> = comps.iter().map(|&(w, k)| (w, -(k as f64) * mu)).collect();
            Ok((Self::from_ln(up, down)?, None))
        } else {
            let base = vec![(0.0, 0.0)];
            Ok((
                Self::from_ln(up.clone(), base.clone())?,
                Some(Self::from_ln(base, up)?),
            ))
        }
    }

    fn from_ln(p: Vec<(f64, f64)>, q: Vec<(f64, f64)>) -> Result<Self> {
        let (pa, pb) = min_max(&p);
        let (qa, qb) = min_max(&q);
        let increasing = pa >= qb;
        if !(increasing || pb <= qa) || (pa == pb && qa == qb && pa == qa) {
            // Every shift of P must lie on one side of every shift of Q (and the laws
            // must differ): the loss is then monotone.
            return Err(out_of_range(
                "least P-shift minus greatest Q-shift",
                pa - qb,
                "(0, 100] (or the mirror image)",
            ));
        }
        // Limits of the loss: at each end the components of extreme shift dominate; the
        // loss is unbounded there unless the extreme shifts of P and Q coincide.
        let end = |y_up: bool| -> f64 {
            let ext = |c: &[(f64, f64)]| -> (f64, f64) {
                let a = if y_up { min_max(c).1 } else { min_max(c).0 };
                let w = log_sum_exp(c.iter().filter(|x| x.1 == a).map(|x| x.0));
                (a, w)
            };
            let ((a, wa), (b, wb)) = (ext(&p), ext(&q));
            if a == b {
                wa - wb
            } else if (a > b) == y_up {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            }
        };
        let (l_minus, l_plus) = (end(false), end(true));
        let (lo, hi) = if increasing {
            (l_minus, l_plus)
        } else {
            (l_plus, l_minus)
        };
        let mut law = Self {
            p,
            q,
            increasing,
            lo,
            hi,
            scale: 0.0,
        };
        law.scale = law.loss_sd();
        Ok(law)
    }

    /// Loss at `y`.
    fn loss(&self, y: f64) -> f64 {
        let t = |c: &[(f64, f64)]| log_sum_exp(c.iter().map(|&(w, a)| w + a * y - 0.5 * a * a));
        t(&self.p) - t(&self.q)
    }

    /// `ln` of the P-density at `y`.
    fn ln_p(&self, y: f64) -> f64 {
        log_sum_exp(self.p.iter().map(|&(w, a)| w - 0.5 * (y - a) * (y - a))) - LN_SQRT_2PI
    }

    /// `ln P(Y ≤ y)` (`upper = false`) or `ln P(Y > y)` of a mixture.
    fn ln_tail(c: &[(f64, f64)], y: f64, upper: bool) -> f64 {
        log_sum_exp(
            c.iter()
                .map(|&(w, a)| w + if upper { ln_cdf(a - y) } else { ln_cdf(y - a) }),
        )
    }

    /// The standard deviation of the loss under P, by the trapezoid rule on a fine grid
    /// over the P-mass (the grid's first step is a fraction of it; docs/accountant.md §6).
    fn loss_sd(&self) -> f64 {
        let (a, b) = min_max(&self.p);
        loss_sd_by_trapezoid(a - 12.0, b + 12.0, |y| self.ln_p(y), |y| self.loss(y))
    }

    /// The `y` at which the loss equals `l` (strictly inside the loss range): Newton's
    /// method from `y = 0` for a start, then [`bracket_root`] to adjacent floats.
    fn y_of_loss(&self, l: f64) -> f64 {
        let slope = |y: f64| -> f64 {
            let mean = |c: &[(f64, f64)]| {
                let t: Vec<f64> = c.iter().map(|&(w, a)| w + a * y - 0.5 * a * a).collect();
                let m = t.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let (mut s, mut sa) = (0.0, 0.0);
                for (&x, &(_, a)) in t.iter().zip(c) {
                    let e = (x - m).exp();
                    s += e;
                    sa += e * a;
                }
                sa / s
            };
            mean(&self.p) - mean(&self.q)
        };
        let mut y = 0.0f64;
        for _ in 0..60 {
            let d = slope(y);
            if d.is_nan() || d.abs() <= 1e-300 {
                break;
            }
            let step = ((self.loss(y) - l) / d).clamp(-4.0, 4.0);
            y -= step;
            if step.abs() <= 1e-14 * y.abs().max(1.0) {
                break;
            }
        }
        let increasing = self.increasing;
        bracket_root(|m| (self.loss(m) < l) == increasing, y, -1e4, 1e4)
    }

    fn cell_given(&self, a: f64, b: f64, y_a: Option<f64>, y_b: Option<f64>) -> (f64, f64) {
        let (a2, b2) = (a.max(self.lo), b.min(self.hi));
        if b2 <= a2 {
            return (f64::NEG_INFINITY, f64::NEG_INFINITY);
        }
        let ya = (a2 > self.lo).then(|| y_a.unwrap_or_else(|| self.y_of_loss(a2)));
        let yb = (b2 < self.hi).then(|| y_b.unwrap_or_else(|| self.y_of_loss(b2)));
        let (u, v) = if self.increasing { (ya, yb) } else { (yb, ya) };
        // A half-line (the cell reaches an end of the loss range): closed forms for P and Q,
        // m = P − e^a·Q.
        if u.is_none() || v.is_none() {
            let (lp, lq) = match (u, v) {
                (None, Some(v)) => (
                    Self::ln_tail(&self.p, v, false),
                    Self::ln_tail(&self.q, v, false),
                ),
                (Some(u), None) => (
                    Self::ln_tail(&self.p, u, true),
                    Self::ln_tail(&self.q, u, true),
                ),
                // The whole line: P(ℝ) = 1, m = 1 − e^a.
                _ => (0.0, 0.0),
            };
            let r = (a + lq - lp).exp();
            let lm = if r < 1.0 {
                lp + (-r).ln_1p()
            } else {
                f64::NEG_INFINITY
            };
            return (lp, lm);
        }
        let (u, v) = (u.unwrap(), v.unwrap());
        let (u, v) = if u < v { (u, v) } else { (v, u) };
        let ln_p = |y: f64| self.ln_p(y);
        let loss = |y: f64| self.loss(y);
        cell_in_output(u, v, 32.0, a, &ln_p, &loss)
    }
}

/// Least and greatest shift of a mixture.
fn min_max(c: &[(f64, f64)]) -> (f64, f64) {
    c.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(_, a)| {
            (lo.min(a), hi.max(a))
        })
}

impl LossLaw for MixtureLaw {
    fn atoms(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    fn ln_inf_mass(&self) -> f64 {
        f64::NEG_INFINITY
    }
    fn continuous_range(&self, ln_tail: f64) -> Option<ContinuousRange> {
        // y in [min a − z, max a + z] holds all but e^{ln_tail} of P on each side (each
        // component's tail beyond z is Φ(−z) < e^{−z²/2}).
        let z = (2.0 * (-ln_tail).max(1.0)).sqrt() + 1.0;
        let (a, b) = min_max(&self.p);
        Some(range_from_ends(
            self.loss(a - z),
            self.loss(b + z),
            self.lo,
            self.hi,
            ln_tail,
        ))
    }
    fn cell(&self, a: f64, b: f64) -> (f64, f64) {
        self.cell_given(a, b, None, None)
    }
    fn cells(&self, edges: &[f64]) -> Vec<(f64, f64)> {
        let ys: Vec<Option<f64>> = edges
            .iter()
            .map(|&e| (e > self.lo && e < self.hi).then(|| self.y_of_loss(e)))
            .collect();
        edges
            .windows(2)
            .zip(ys.windows(2))
            .map(|(e, y)| self.cell_given(e[0], e[1], y[0], y[1]))
            .collect()
    }
    fn loss_scale(&self) -> f64 {
        self.scale
    }
    fn pilot_step(&self) -> bool {
        false
    }
    fn grid_unit(&self) -> Option<f64> {
        None
    }
}
