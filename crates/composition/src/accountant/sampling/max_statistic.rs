//! A certified lower bound for shuffled epochs and balls-in-bins batches (docs/accountant.md
//! §2.9): the loss law of the *largest* of an epoch's t noisy outputs.
//!
//! With every other example's contribution 0, an epoch in which the differing example sits
//! in one uniformly random step of t (a shuffled epoch of t batches, or balls-in-bins) has
//! output `P = (1/t) Σ_j N(μ e_j, I_t)` against `Q = N(0, I_t)`. Any statistic of the output
//! is a post-processing, so its pair leaks at most as much at every ε, and so does the
//! composition of such pairs over epochs: a certified lower bound. The maximum `M = max_j
//! y_j` has closed-form laws, `F_Q(x) = Φ(x)^t` and `F_P(x) = Φ(x − μ)Φ(x)^{t−1}`, and the
//! loss `ℓ(x) = ln((1/t)e^{μx − μ²/2} + ((t − 1)/t)·Φ(x − μ)/Φ(x))` is increasing in x
//! (`Φ(x − μ)/Φ(x)` is, because `φ/Φ` decreases).
//!
//! Only the lower end of a bracket computed from this law means anything for the
//! mechanism; [`crate::accountant::input::spec::MechanismSpec::lower_bound_only`] marks the SPECs that use it.

use crate::accountant::core::numeric::{bracket_root, log_add};
use crate::accountant::laws::{cell_in_output, loss_sd_by_trapezoid, ContinuousRange, LossLaw};
use crate::accountant::sampling::subsampled::Direction;
use crate::error::{out_of_range, Result};
use densities::normal::ln_cdf;

const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// Most steps per epoch.
pub const MAX_STEPS: u64 = 1_000_000;

/// The loss law of the maximum of an epoch's outputs, in one direction.
#[derive(Debug, Clone, Copy)]
pub struct MaxStatisticLaw {
    mu: f64,
    t: f64,
    ln_t: f64,
    ln_tm1: f64,
    dir: Direction,
    scale: f64,
}

impl MaxStatisticLaw {
    /// `mu = s/σ` in `[1e-6, 50]`, `t` steps per epoch in `[1, 1e6]`; `Remove` is the pair
    /// (with the example, without it), `Add` the reverse.
    ///
    /// ```
    /// use composition::accountant::sampling::max_statistic::MaxStatisticLaw;
    /// use composition::accountant::sampling::subsampled::Direction;
    /// use composition::accountant::LossLaw;
    /// let l = MaxStatisticLaw::new(1.0, 100, Direction::Remove).unwrap();
    /// assert!(l.loss_scale() > 0.0);
    /// ```
    pub fn new(mu: f64, t: u64, dir: Direction) -> Result<Self> {
        if !(mu.is_finite() && (1e-6..=50.0).contains(&mu)) {
            return Err(out_of_range("sensitivity/scale", mu, "[1e-6, 50]"));
        }
        if !(1..=MAX_STEPS).contains(&t) {
            return Err(out_of_range("steps per epoch", t as f64, "[1, 1e6]"));
        }
        let tf = t as f64;
        let mut law = Self {
            mu,
            t: tf,
            ln_t: tf.ln(),
            ln_tm1: if t > 1 {
                (tf - 1.0).ln()
            } else {
                f64::NEG_INFINITY
            },
            dir,
            scale: 0.0,
        };
        law.scale = law.loss_sd();
        Ok(law)
    }

    /// `ln f_P(x)`, `ln f_Q(x)` of the pair (with the example, without it).
    fn ln_densities(&self, x: f64) -> (f64, f64) {
        let ln_phi = |z: f64| -0.5 * z * z - LN_SQRT_2PI;
        let lc = ln_cdf(x);
        let lc_mu = ln_cdf(x - self.mu);
        let rest = (self.t - 1.0) * lc;
        let p = log_add(
            ln_phi(x - self.mu) + rest,
            self.ln_tm1 + lc_mu + ln_phi(x) + (self.t - 2.0).max(0.0) * lc,
        );
        let q = self.ln_t + ln_phi(x) + rest;
        (p, q)
    }

    /// The loss of (with, without) at x, increasing.
    fn remove_loss(&self, x: f64) -> f64 {
        let a = self.mu * x - 0.5 * self.mu * self.mu;
        let b = self.ln_tm1 + ln_cdf(x - self.mu) - ln_cdf(x);
        log_add(a, b) - self.ln_t
    }

    fn loss(&self, x: f64) -> f64 {
        match self.dir {
            Direction::Remove => self.remove_loss(x),
            Direction::Add => -self.remove_loss(x),
        }
    }

    /// `ln` of this direction's P-density of the maximum at x.
    fn ln_p(&self, x: f64) -> f64 {
        let (p, q) = self.ln_densities(x);
        match self.dir {
            Direction::Remove => p,
            Direction::Add => q,
        }
    }

    /// Where the maximum lives: `[lo, hi]` holds all but `e^{ln_tail}` of both laws on
    /// each side (below: `F ≤ Φ(x)`; above: `1 − F ≤ t·Φ(μ − x)`).
    fn x_range(&self, ln_tail: f64) -> (f64, f64) {
        let z = (2.0 * (-ln_tail).max(1.0)).sqrt() + 1.0;
        let z_hi = (2.0 * ((-ln_tail).max(1.0) + self.ln_t)).sqrt() + 1.0;
        (-z, self.mu + z_hi)
    }

    fn loss_sd(&self) -> f64 {
        let (lo, hi) = self.x_range(-40.0);
        loss_sd_by_trapezoid(lo, hi, |x| self.ln_p(x), |x| self.loss(x))
    }

    fn x_of_loss(&self, l: f64) -> f64 {
        let target = match self.dir {
            Direction::Remove => l,
            Direction::Add => -l,
        };
        // Start from the dominant term's inverse, e^{μx − μ²/2}/t ≈ e^ℓ (exact far up).
        let x0 = (target + self.ln_t + 0.5 * self.mu * self.mu) / self.mu;
        bracket_root(|m| self.remove_loss(m) < target, x0, -1e4, 1e4)
    }

    fn cell_given(&self, a: f64, b: f64, x_a: Option<f64>, x_b: Option<f64>) -> (f64, f64) {
        let xa = x_a.unwrap_or_else(|| self.x_of_loss(a));
        let xb = x_b.unwrap_or_else(|| self.x_of_loss(b));
        let (u, v) = if xa < xb { (xa, xb) } else { (xb, xa) };
        let ln_p = |x: f64| self.ln_p(x);
        let loss = |x: f64| self.loss(x);
        cell_in_output(u, v, 32.0, a, &ln_p, &loss)
    }
}

impl LossLaw for MaxStatisticLaw {
    fn atoms(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    fn ln_inf_mass(&self) -> f64 {
        f64::NEG_INFINITY
    }
    fn continuous_range(&self, ln_tail: f64) -> Option<ContinuousRange> {
        let (lo, hi) = self.x_range(ln_tail);
        let (l1, l2) = (self.loss(lo), self.loss(hi));
        let (a, b) = if l1 < l2 { (l1, l2) } else { (l2, l1) };
        Some(ContinuousRange {
            lo: a,
            hi: b,
            ln_below: ln_tail,
            ln_above: ln_tail,
        })
    }
    fn cell(&self, a: f64, b: f64) -> (f64, f64) {
        self.cell_given(a, b, None, None)
    }
    fn cells(&self, edges: &[f64]) -> Vec<(f64, f64)> {
        let xs: Vec<f64> = edges.iter().map(|&e| self.x_of_loss(e)).collect();
        edges
            .windows(2)
            .zip(xs.windows(2))
            .map(|(e, x)| self.cell_given(e[0], e[1], Some(x[0]), Some(x[1])))
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
