//! Adaptive data analysis (Dagan & Kur 2022, Section 9 and Figure 2; docs/maths.md §5):
//! how many adaptively chosen statistical queries n samples answer to population accuracy
//! α with confidence 1 − β, by bounded noise and by the Gaussian mechanism, through the
//! transfer theorem of Jung et al. (2020).
//!
//! Transfer: an (ε, δ)-DP mechanism that is (α_s, β_s)-accurate on the sample is, for
//! every c, d > 0, `(α_s + e^ε − 1 + c + 2d, β_s/c + δ/d)`-accurate on the population.
//! k statistical queries on n samples have sensitivity 1/n.
//! - Bounded noise: `α_s = R(k, ε, δ)/n` with probability 1 (β_s = 0, so c → 0), and
//!   `d = δ/β`: k is feasible iff `R(k, ε, δ)/n + e^ε − 1 + 2δ/β ≤ α`, with R the
//!   certified radius ([`certified_radius`], docs/maths.md §1.4), so every reported k is
//!   certified feasible.
//! - Gaussian: `σ = analytic_sigma(ε, δ, √k/n)` (docs/maths.md §1.2), `α_s = σ·t(k, β_s)`
//!   with t the max-of-k quantile (§0); the failure budget is split `β_s/c = wβ`,
//!   `δ/d = (1 − w)β`.
//!
//! For each n the largest k is found by maximising over (ε, δ) (and β_s, w for the
//! Gaussian): a coarse grid, then coordinate-wise Brent (argmin) on log-parameters. Every
//! point the optimiser returns is feasible (the maximisation only chooses among feasible
//! points), so a weak optimum under-reports k: the safe side. For fixed parameters the
//! largest k solves a monotone equation: by bisection for the Gaussian; for bounded noise
//! by a fixed point on the normalised radius `ρ = R·ε/√(k ln(1/δ))` (nearly flat in k),
//! then checked with the certified R itself and stepped down until feasible. Because ρ is
//! nearly flat in k, the best (ε, δ) for bounded noise hardly depends on n: it is
//! optimised once (ρ at k = 10⁶), which keeps the certified-radius evaluations to a few
//! hundred.
//!
//! ```
//! use mgf::adaptive::Transfer;
//! let t = Transfer::new(0.1, 0.05).unwrap();
//! let g = t.best_gaussian(1e6);
//! // The reported point spends no more than the accuracy and failure budgets.
//! assert!(g.alpha_s + g.epsilon.exp_m1() + g.c + 2.0 * g.d <= 0.1 * (1.0 + 1e-12));
//! assert!(g.beta_s / g.c + g.delta / g.d <= 0.05 * (1.0 + 1e-12));
//! assert!(g.k > 1e4);
//! ```

use crate::{certified_radius, BoundedNoise, MgfError};
use argmin::core::{CostFunction, Error as ArgminError, Executor};
use argmin::solver::brent::BrentOpt;
use densities::gaussian::analytic_sigma;
use densities::normal::max_abs_quantile;

/// The population accuracy target of the transfer theorem: error at most `alpha` with
/// probability at least `1 − beta` (docs/maths.md §5).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transfer {
    /// Population accuracy α, in (0, 1).
    pub alpha: f64,
    /// Failure probability β, in (0, 1).
    pub beta: f64,
}

/// One mechanism's operating point at one sample size: the number of queries `k` and the
/// parameters of the transfer theorem that reach it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Plan {
    /// Largest feasible number of queries (an integer for the `best_*` results; 0 when
    /// not even one query is feasible).
    pub k: f64,
    /// Privacy parameter ε of the mechanism.
    pub epsilon: f64,
    /// Privacy parameter δ of the mechanism.
    pub delta: f64,
    /// Sample failure probability β_s (0 for bounded noise).
    pub beta_s: f64,
    /// Transfer constant c (0 for bounded noise).
    pub c: f64,
    /// Transfer constant d.
    pub d: f64,
    /// Sample accuracy α_s left after the transfer terms.
    pub alpha_s: f64,
}

/// The search box of [`Transfer::gaussian_point`]'s parameters
/// `[ln ε, ln ln(1/δ), ln β_s, logit w]`.
pub type GaussianBox = [(f64, f64); 4];

impl Transfer {
    /// A target with α, β in (0, 1).
    pub fn new(alpha: f64, beta: f64) -> Result<Self, MgfError> {
        densities::error::check_open("alpha", alpha, 0.0, 1.0, "(0, 1)")?;
        densities::error::check_open("beta", beta, 0.0, 1.0, "(0, 1)")?;
        Ok(Self { alpha, beta })
    }

    /// Accuracy budget left for α_s after the transfer terms: `α − (e^ε − 1) − c − 2d`.
    pub fn budget(&self, eps: f64, c: f64, d: f64) -> f64 {
        self.alpha - eps.exp_m1() - c - 2.0 * d
    }

    /// Largest real k with `√k·t(k, β_s) ≤ limit` (t the two-sided max-of-k normal
    /// quantile), by bisection on ln k ∈ [0, 50]; 0 when not even k = 1 fits.
    pub fn gaussian_k(limit: f64, beta_s: f64) -> f64 {
        let g = |k: f64| k.sqrt() * max_abs_quantile(k, beta_s);
        if limit.is_nan() || limit <= 0.0 || g(1.0) > limit {
            return 0.0;
        }
        let (mut lo, mut hi) = (0.0f64, 50.0f64);
        if g(hi.exp()) <= limit {
            return hi.exp();
        }
        for _ in 0..80 {
            let mid = 0.5 * (lo + hi);
            if g(mid.exp()) <= limit {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo.exp()
    }

    /// The Gaussian mechanism at parameters `x = [ln ε, ln ln(1/δ), ln β_s, logit w]`:
    /// the largest real k the transfer theorem allows at n samples, with its point.
    pub fn gaussian_point(&self, n: f64, x: &[f64; 4]) -> Plan {
        let eps = x[0].exp();
        let delta = (-x[1].exp()).exp();
        let beta_s = x[2].exp().min(0.999);
        let w = 1.0 / (1.0 + (-x[3]).exp());
        let c = beta_s / (self.beta * w);
        let d = delta / (self.beta * (1.0 - w));
        let a = self.budget(eps, c, d);
        let Ok(s) = analytic_sigma(eps, delta, 1.0) else {
            return Plan::default();
        };
        let k = Self::gaussian_k(n * a / s, beta_s);
        Plan {
            k,
            epsilon: eps,
            delta,
            beta_s,
            c,
            d,
            alpha_s: a,
        }
    }

    /// The box [`Transfer::best_gaussian`] searches: ε up to `ln(1 + α)` (beyond it the
    /// budget is negative), δ from e^-1 down to e^-700, β_s from e^-30 to 1/2, logit w
    /// in [−6, 6].
    pub fn gaussian_box(&self) -> GaussianBox {
        let eps_hi = self.alpha.ln_1p().ln();
        [
            (eps_hi - 9.0, eps_hi - 1e-3),
            (0.0, 700.0f64.ln()),
            (-30.0, 0.5f64.ln()),
            (-6.0, 6.0),
        ]
    }

    /// The Gaussian mechanism's largest integer k at n samples, maximised over the box of
    /// [`Transfer::gaussian_box`] (a 5⁴ grid start, then three rounds of coordinate-wise
    /// Brent).
    pub fn best_gaussian(&self, n: f64) -> Plan {
        let bounds = self.gaussian_box();
        let f = |x: &[f64]| {
            let x: [f64; 4] = [x[0], x[1], x[2], x[3]];
            self.gaussian_point(n, &x).k.max(1e-300).ln()
        };
        let start = grid_start(&f, &bounds, 5);
        let x = coordinate_ascent(&f, &bounds, &start, 3, 40);
        let mut b = self.gaussian_point(n, &[x[0], x[1], x[2], x[3]]);
        b.k = b.k.floor();
        b
    }

    /// Bounded noise at (ε, δ): the largest integer k whose certified radius passes the
    /// transfer condition at n samples (`exact`), or the fixed point's real estimate of
    /// it (not `exact`, uncertified, for the optimiser); 0 when none.
    pub fn bounded_k(
        &self,
        noise: &BoundedNoise,
        n: f64,
        eps: f64,
        delta: f64,
        exact: bool,
    ) -> f64 {
        let d = delta / self.beta;
        let limit = n * self.budget(eps, 0.0, d);
        if limit.is_nan() || limit <= 0.0 {
            return 0.0;
        }
        let radius = |k: f64| {
            certified_radius(noise, k, eps, delta)
                .map(|c| c.radius)
                .unwrap_or(f64::INFINITY)
        };
        if radius(1.0) > limit {
            return 0.0;
        }
        let l = -delta.ln();
        // Fixed point on the normalised radius ρ = R ε/√(k L).
        let mut k = 1e6f64;
        for _ in 0..3 {
            let rho = radius(k) * eps / (k * l).sqrt();
            k = ((limit * eps / rho).powi(2) / l).max(1.0);
        }
        if !exact {
            return k;
        }
        let mut k = k.floor().max(1.0);
        for _ in 0..60 {
            let r = radius(k);
            if r <= limit {
                return k;
            }
            k = (k * (limit / r).powi(2) * 0.999).floor().max(1.0);
        }
        0.0
    }

    /// The box over `[ln ε, ln ln(1/δ)]` searched for bounded noise: δ at most αβ/2 (a
    /// larger δ spends the whole accuracy budget on `2δ/β`) and at least e^-100 (k falls
    /// like 1/ln(1/δ) at a nearly fixed normalised radius, so the optimum sits near
    /// e^-9 for fig2; the radius at δ = e^-386 took 0.4 s a call).
    pub fn bounded_box(&self) -> [(f64, f64); 2] {
        let eps_hi = self.alpha.ln_1p().ln();
        let ln_ln_min = (1.0 / (0.5 * self.alpha * self.beta)).ln().ln();
        [(eps_hi - 7.0, eps_hi - 1e-3), (ln_ln_min, 100.0f64.ln())]
    }

    /// The `[ln ε, ln ln(1/δ)]` that maximise k for large k, independent of n: with the
    /// normalised radius ρ = Rε/√(kL) taken at k = 10⁶ (nearly flat in k), the largest k
    /// is `(n·A·ε/ρ)²/L`, so maximise `ln(A ε/ρ) − ½ ln L` once for all n.
    pub fn bounded_start(&self, noise: &BoundedNoise) -> [f64; 2] {
        let k_ref = 1e6;
        let h = |x: &[f64]| {
            let (eps, delta) = (x[0].exp(), (-x[1].exp()).exp());
            let a = self.budget(eps, 0.0, delta / self.beta);
            let l = -delta.ln();
            match certified_radius(noise, k_ref, eps, delta) {
                Ok(c) if a > 0.0 => {
                    (a * eps / (c.radius * eps / (k_ref * l).sqrt())).ln() - 0.5 * l.ln()
                }
                _ => f64::NEG_INFINITY,
            }
        };
        let bounds = self.bounded_box();
        let start = grid_start(&h, &bounds, 4);
        let x = coordinate_ascent(&h, &bounds, &start, 3, 30);
        [x[0], x[1]]
    }

    /// Bounded noise at n samples with `[ln ε, ln ln(1/δ)]` = `x` (from
    /// [`Transfer::bounded_start`]; a per-n polish was measured to change k by less than
    /// 1e-5 relative): the largest certified-feasible integer k and its point.
    pub fn best_bounded(&self, noise: &BoundedNoise, n: f64, x: &[f64; 2]) -> Plan {
        let (eps, delta) = (x[0].exp(), (-x[1].exp()).exp());
        let k = self.bounded_k(noise, n, eps, delta, true);
        let d = delta / self.beta;
        Plan {
            k,
            epsilon: eps,
            delta,
            beta_s: 0.0,
            c: 0.0,
            d,
            alpha_s: self.budget(eps, 0.0, d),
        }
    }
}

struct Neg<'a> {
    f: &'a dyn Fn(f64) -> f64,
}

impl CostFunction for Neg<'_> {
    type Param = f64;
    type Output = f64;
    fn cost(&self, x: &f64) -> Result<f64, ArgminError> {
        let v = (self.f)(*x);
        Ok(if v.is_finite() { -v } else { f64::MAX })
    }
}

/// Maximises `f` over `[lo, hi]` near `x0` (Brent on the bracket); returns the best point
/// evaluated, never worse than `x0`.
fn brent_max(f: &dyn Fn(f64) -> f64, lo: f64, hi: f64, x0: f64, iters: u64) -> f64 {
    let f0 = f(x0);
    let solver = BrentOpt::new(lo, hi).set_tolerance(1e-4, 1e-6);
    let r = Executor::new(Neg { f }, solver)
        .configure(|s| s.max_iters(iters))
        .run()
        .ok()
        .and_then(|r| r.state().best_param);
    match r {
        Some(x) if f(x) > f0 => x,
        _ => x0,
    }
}

/// Coordinate ascent of `f` over a box from `start`: `rounds` of 1-D Brent (at most
/// `iters` steps) per coordinate.
fn coordinate_ascent(
    f: &dyn Fn(&[f64]) -> f64,
    bounds: &[(f64, f64)],
    start: &[f64],
    rounds: usize,
    iters: u64,
) -> Vec<f64> {
    let mut x = start.to_vec();
    for _ in 0..rounds {
        for i in 0..x.len() {
            let fi = |v: f64| {
                let mut y = x.clone();
                y[i] = v;
                f(&y)
            };
            x[i] = brent_max(&fi, bounds[i].0, bounds[i].1, x[i], iters);
        }
    }
    x
}

/// Best point of a coarse grid over the box (`m` cell midpoints per coordinate).
fn grid_start(f: &dyn Fn(&[f64]) -> f64, bounds: &[(f64, f64)], m: usize) -> Vec<f64> {
    let dims = bounds.len();
    let mut best = (f64::NEG_INFINITY, vec![0.0; dims]);
    for idx in 0..m.pow(dims as u32) {
        let mut x = Vec::with_capacity(dims);
        let mut r = idx;
        for &(lo, hi) in bounds {
            let j = r % m;
            r /= m;
            x.push(lo + (hi - lo) * (j as f64 + 0.5) / m as f64);
        }
        let v = f(&x);
        if v > best.0 {
            best = (v, x);
        }
    }
    best.1
}
