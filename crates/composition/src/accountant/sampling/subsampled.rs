//! Poisson-subsampled Gaussian and Laplace mechanisms (DP-SGD accounting; docs/accountant.md
//! §2.6): with sampling rate q, the output law is the mixture
//! `M = (1 − q)·B + q·B_s` of the base noise `B` and its copy shifted by the sensitivity.
//! Under add/remove neighbours the two pairs `(M, B)` ("remove") and `(B, M)` ("add") are
//! both possible; their privacy losses differ, so a composition is accounted in both
//! directions and the larger δ (or ε) is reported.
//!
//! With `g(y) = ln(b(y − s)/b(y))` the base loss, the loss of `(M, B)` is
//! `ℓ(y) = ln(1 − q + q e^{g(y)})` with `y ~ M`, and that of `(B, M)` is `−ℓ(y)` with
//! `y ~ B`; both are monotone in `y` where `g` is, so cells in loss are intervals in `y`,
//! integrated by 8-point Gauss–Legendre (a cell reaching the end of the loss range uses
//! the closed-form CDFs).

use crate::accountant::core::numeric::{bisect, bracket_root, log_add};
use crate::accountant::laws::{cell_in_output, range_from_ends, ContinuousRange, LossLaw};
use crate::accountant::sampling::symmetrized::SymmetrizedLaw;
use crate::error::{out_of_range, Result};
use densities::normal::ln_cdf;
use special::Error as _;

/// The base noise of a subsampled mechanism, in units of its scale (`μ = s/σ` or `s/b`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Base {
    /// Gaussian: `g(y) = μy − μ²/2`, `y` in units of σ.
    Gaussian,
    /// Laplace: `g(y) = |y| − |y − μ|` clipped to `[−μ, μ]`, `y` in units of b.
    Laplace,
}

/// Which pair: `Remove` is `(M, B)`, `Add` is `(B, M)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// P = mixture, Q = base.
    Remove,
    /// P = base, Q = mixture.
    Add,
}

/// The loss law of one subsampled use in one direction.
#[derive(Debug, Clone, Copy)]
pub struct SubsampledLaw {
    base: Base,
    mu: f64,
    q: f64,
    dir: Direction,
    ln_1mq: f64,
    ln_q: f64,
    exact_zero: bool,
}

const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// Where a Gaussian cell's left tail is cut (in units of σ): see `cell_given`.
const FAR_Y: f64 = 40.0;

impl SubsampledLaw {
    /// `μ` = sensitivity/scale in `[1e-6, 50]` (one use at μ = 50 is already ε ≈ 50, no
    /// privacy left to account), `q` in `[1e-9, 1]`.
    ///
    /// ```
    /// use composition::accountant::sampling::subsampled::{Base, Direction, SubsampledLaw};
    /// use composition::accountant::LossLaw;
    /// let l = SubsampledLaw::new(Base::Gaussian, 1.0, 0.01, Direction::Remove).unwrap();
    /// assert!(l.loss_scale() > 0.0);
    /// ```
    pub fn new(base: Base, mu: f64, q: f64, dir: Direction) -> Result<Self> {
        if !(mu.is_finite() && (1e-6..=50.0).contains(&mu)) {
            return Err(out_of_range("sensitivity/scale", mu, "[1e-6, 50]"));
        }
        // The low end a few ulps wide: a rate B/N rounded down for a lower end
        // (`MechanismSpec::lower_laws`) may fall an ulp below 1e-9 where B/N is 1e-9.
        if !(1e-9 * (1.0 - 4.0 * f64::EPSILON)..=1.0).contains(&q) {
            return Err(out_of_range("q", q, "[1e-9, 1]"));
        }
        Ok(Self {
            base,
            mu,
            q,
            dir,
            ln_1mq: (-q).ln_1p(),
            ln_q: q.ln(),
            exact_zero: false,
        })
    }

    fn g(&self, y: f64) -> f64 {
        match self.base {
            Base::Gaussian => self.mu * y - 0.5 * self.mu * self.mu,
            Base::Laplace => (y.abs() - (y - self.mu).abs()).clamp(-self.mu, self.mu),
        }
    }

    /// `ln(1 − q + q e^{g})` without cancellation.
    fn mix_loss(&self, g: f64) -> f64 {
        log_add(self.ln_1mq, self.ln_q + g)
    }

    /// Loss at `y` in this direction.
    fn loss(&self, y: f64) -> f64 {
        let l = self.mix_loss(self.g(y));
        match self.dir {
            Direction::Remove => l,
            Direction::Add => -l,
        }
    }

    /// `ln` of the base density at `y`.
    fn ln_base(&self, y: f64) -> f64 {
        match self.base {
            Base::Gaussian => -0.5 * y * y - LN_SQRT_2PI,
            Base::Laplace => -y.abs() - std::f64::consts::LN_2,
        }
    }

    /// `ln` of the P-density at `y` (mixture for Remove, base for Add).
    fn ln_p(&self, y: f64) -> f64 {
        match self.dir {
            Direction::Remove => log_add(
                self.ln_1mq + self.ln_base(y),
                self.ln_q + self.ln_base(y - self.mu),
            ),
            Direction::Add => self.ln_base(y),
        }
    }

    /// `ln` of the base CDF at `y`.
    fn ln_base_cdf(&self, y: f64) -> f64 {
        match self.base {
            Base::Gaussian => ln_cdf(y),
            Base::Laplace => {
                if y <= 0.0 {
                    y - std::f64::consts::LN_2
                } else {
                    (-0.5 * (-y).exp()).ln_1p()
                }
            }
        }
    }

    /// `ln P(Y ≤ y)` under P.
    fn ln_p_cdf(&self, y: f64) -> f64 {
        match self.dir {
            Direction::Remove => log_add(
                self.ln_1mq + self.ln_base_cdf(y),
                self.ln_q + self.ln_base_cdf(y - self.mu),
            ),
            Direction::Add => self.ln_base_cdf(y),
        }
    }

    /// `ln P(Y > y)` under P (by symmetry of the base: `P_B(Y > y) = P_B(Y ≤ −y)`).
    fn ln_p_sf(&self, y: f64) -> f64 {
        match self.dir {
            Direction::Remove => log_add(
                self.ln_1mq + self.ln_base_cdf(-y),
                self.ln_q + self.ln_base_cdf(self.mu - y),
            ),
            Direction::Add => self.ln_base_cdf(-y),
        }
    }

    /// The `y` at which the loss equals `l` on the monotone part (bisection).
    fn y_of_loss(&self, l: f64) -> f64 {
        // Loss 0 is g = 0, at y = μ/2 exactly for both bases (for the symmetrised law's
        // parts: the other laws keep the cells their figures were made with). The bisection below finds
        // where the *computed* loss changes sign, which at small q is off by its
        // rounding over its slope (1e-23/(qμ) = 9e-12 at q = 1e-8, μ = 2e-4): the
        // symmetrised law joins the two directions' cells there, and that gap had lost
        // 7e-12 of mass a use (accountant/symmetrized.rs).
        if l == 0.0 && self.exact_zero {
            return 0.5 * self.mu;
        }
        let (lo, hi) = match self.base {
            Base::Gaussian => (-1e4, 1e4),
            Base::Laplace => (0.0, self.mu),
        };
        let increasing = self.dir == Direction::Remove;
        // m lies left of the root.
        let left = |m: f64| (self.loss(m) < l) == increasing;
        // Start next to the closed-form inverse (g = ln((e^{±l} − 1 + q)/q), then y from g).
        let sl = if increasing { l } else { -l };
        let g = (sl.exp_m1() + self.q).ln() - self.ln_q;
        let y0 = match self.base {
            Base::Gaussian => (g + 0.5 * self.mu * self.mu) / self.mu,
            Base::Laplace => 0.5 * (g + self.mu),
        };
        bracket_root(left, y0, lo, hi)
    }

    fn loss_bounds(&self) -> (f64, f64) {
        let (lo, hi) = match self.base {
            Base::Gaussian => (self.ln_1mq, f64::INFINITY),
            Base::Laplace => (self.mix_loss(-self.mu), self.mix_loss(self.mu)),
        };
        match self.dir {
            Direction::Remove => (lo, hi),
            Direction::Add => (-hi, -lo),
        }
    }
}

impl LossLaw for SubsampledLaw {
    fn atoms(&self) -> Vec<(f64, f64)> {
        match self.base {
            Base::Gaussian => Vec::new(),
            Base::Laplace => {
                // y ≤ 0: g = −μ; y ≥ μ: g = μ.
                let low = (self.loss(-1.0), self.ln_p_cdf(0.0).exp());
                let high = (self.loss(self.mu + 1.0), self.ln_p_sf(self.mu).exp());
                vec![low, high]
            }
        }
    }
    fn ln_inf_mass(&self) -> f64 {
        f64::NEG_INFINITY
    }
    fn continuous_range(&self, ln_tail: f64) -> Option<ContinuousRange> {
        let (lo, hi) = self.loss_bounds();
        if self.base == Base::Laplace {
            return Some(ContinuousRange {
                lo,
                hi,
                ln_below: f64::NEG_INFINITY,
                ln_above: f64::NEG_INFINITY,
            });
        }
        // Gaussian: the loss is bounded on one side (kept exactly, nothing beyond it) and
        // unbounded as y → +∞ on the other (up for Remove, down for Add), where the range
        // stops at the least y whose P-mass above is at most e^{ln_tail}.
        let z = (2.0 * (-ln_tail).max(1.0)).sqrt() + 1.0;
        let y_hi = self.y_above(ln_tail, z + self.mu);
        Some(range_from_ends(
            self.loss(-z),
            self.loss(y_hi),
            lo,
            hi,
            ln_tail,
        ))
    }
    fn cell(&self, a: f64, b: f64) -> (f64, f64) {
        self.cell_given(a, b, None, None)
    }
    fn cells(&self, edges: &[f64]) -> Vec<(f64, f64)> {
        // Each inner edge's y once, for the two cells that share it (the inverse of the
        // loss is two thirds of a cell's work); the same values `cell` computes.
        let (lo, hi) = self.loss_bounds();
        let ys: Vec<Option<f64>> = edges
            .iter()
            .map(|&e| (e > lo && e < hi).then(|| self.y_of_loss(e)))
            .collect();
        edges
            .windows(2)
            .zip(ys.windows(2))
            .map(|(e, y)| self.cell_given(e[0], e[1], y[0], y[1]))
            .collect()
    }
    fn pointwise_cells(&self) -> bool {
        // Each edge's y is solved from the closed-form start of its own loss (`y_of_loss`),
        // never from a neighbour's.
        true
    }
    fn loss_scale(&self) -> f64 {
        // The standard deviation of the loss to first order in q, `q·sd(e^{g})` under the
        // base: `q·√(e^{μ²} − 1)` for the Gaussian, and for Laplace (whose e^{g} lies in
        // [e^{−μ}, e^{μ}]) its bound `q·(e^{μ} − 1)`; capped at μ (the q = 1 law). The grid's first step is a
        // fraction of it, and a cruder scale made the first step 1.3–1.5× too coarse at
        // small q (a second, finer composition every time).
        let ln_sd = match self.base {
            Base::Gaussian => {
                let m2 = self.mu * self.mu;
                0.5 * if m2 > 700.0 { m2 } else { m2.exp_m1().ln() }
            }
            Base::Laplace => self.mu.exp_m1().ln(),
        };
        (self.ln_q + ln_sd).exp().min(self.mu).max(1e-12)
    }
    fn step_scale(&self, count: u64) -> f64 {
        // The loss's standard deviation is set by its log-normal tail (`e^{μ²} − 1`),
        // while few sampled uses put ε in a body whose spread is nearer `q·μ`: measured at
        // σ = 0.6 with 1.5 to 30 expected sampled uses (q = 1e-3 and 1e-4, δ = 1e-6), the
        // bracket on the scale's first step came out 3–11× narrower than the accuracy
        // asked, against 1.5–2× in the central-limit regime (100 and more). The first
        // step is made coarser by half the ratio of the two scales, in full up to 3
        // expected uses and fading (in ln count·q) to none at 100; small q and the
        // Gaussian base only (where it was measured). At most one expected use has its
        // own pilot (`coarse_start`).
        let s = self.loss_scale();
        let uses = count as f64 * self.q;
        if self.base != Base::Gaussian || self.q > 0.05 {
            return s;
        }
        let ratio = self.tail_ratio();
        if uses <= 1.0 {
            // A light tail (σ ≳ 1.7): the first step a little coarser than the scale's
            // own, in place of the pilot (`coarse_start`). Measured at δ = 1e-6 and
            // 1e-10, σ from 1.6 to 10, q from 1e-5 to 1e-2, q·T from 0.1 to 1: the
            // bracket on the scale's own step was 0.24–0.71 of the accuracy 1e-4
            // (0.08–0.31 at q = 1e-2, T = 10), so on 1.12 times it (about 1.25 times as
            // wide) it stays within 0.9 (at δ = 1e-3, where ε is small or 0, it can miss,
            // and a second step follows, as after the pilot).
            return if self.light_tail() { 1.12 * s } else { s };
        }
        let fade = ((100.0 / uses).ln() / (100.0f64 / 3.0).ln()).clamp(0.0, 1.0);
        s * (1.0 + 0.5 * (ratio - 1.0) * fade).min(3.0)
    }
    fn pilot_step(&self) -> bool {
        // The scale above is the loss's own: the first step from it is close to the one
        // the accuracy needs, and a pilot over the long upper tail (a few hundred times
        // the scale) only costs a composition.
        false
    }
    fn coarse_start(&self, count: u64) -> f64 {
        // At most one sampled use expected: ε is set by a few large losses, not by the
        // body the scale describes, and the scale's step is 4–30× finer than needed
        // (q = 1e-3, T = 1e3, σ = 0.6: a bracket of 3e-6 where 1e-4 was asked). Not for
        // a light-tailed Gaussian base, whose scale's step is near the one needed
        // (`step_scale`): there the pilot cost as much as the step it chose (DP-SGD at
        // q = 1e-4, σ = 2, T = 1e3: a third of the answer's time).
        if count as f64 * self.q <= 1.0 && !self.light_tail() {
            4.0
        } else {
            1.0
        }
    }
    fn grid_unit(&self) -> Option<f64> {
        None
    }
    fn graded(&self) -> bool {
        // A body q wide and a tail tens of nats long: at the step the body needs, nearly
        // every cell lies in the tail.
        true
    }
}

/// The tail ratio ([`SubsampledLaw::tail_ratio`]) at or below which at most one expected
/// sampled use starts at about the loss scale's step instead of a pilot 4× coarser
/// (σ ≳ 1.7 for sensitivity 1). At σ = 2 (ratio 1.07) and 3 the pilot-free start was
/// 5–25 % faster over q from 1e-4 to 1e-2 and q·T from 0.1 to 1; at σ = 1 (1.31) the
/// pilot was up to 3× faster, at σ = 1.5 (1.12) each won about half the cases.
const LIGHT_TAIL: f64 = 1.1;

impl SubsampledLaw {
    /// `√(e^{μ²} − 1)/μ`: the standard deviation of `e^{g}` under the base over `μ`, how
    /// far the likelihood ratio's log-normal tail stretches the loss beyond its body
    /// (1 as σ → ∞; infinite where `e^{μ²}` overflows).
    fn tail_ratio(&self) -> f64 {
        let m2 = self.mu * self.mu;
        if m2 > 700.0 {
            f64::INFINITY
        } else {
            m2.exp_m1().sqrt() / self.mu
        }
    }

    /// A Gaussian base at q ≤ 0.05 with a tail ratio of at most [`LIGHT_TAIL`]: at most
    /// one expected use then starts near the loss scale's step, without a pilot.
    fn light_tail(&self) -> bool {
        self.base == Base::Gaussian && self.q <= 0.05 && self.tail_ratio() <= LIGHT_TAIL
    }

    /// [`LossLaw::cell`] with `y` at the cell's ends given where known (`y_a`, `y_b`:
    /// the loss's inverse at `a` and at `b`, needed only strictly inside the loss range,
    /// where the clamped ends are `a` and `b` themselves).
    fn cell_given(&self, a: f64, b: f64, y_a: Option<f64>, y_b: Option<f64>) -> (f64, f64) {
        let (lo, hi) = self.loss_bounds();
        let (a2, b2) = (a.max(lo), b.min(hi));
        if b2 <= a2 {
            return (f64::NEG_INFINITY, f64::NEG_INFINITY);
        }
        let inc = self.dir == Direction::Remove;
        // y-interval of losses in (a2, b2].
        let ya = if a2 <= lo {
            None
        } else {
            Some(y_a.unwrap_or_else(|| self.y_of_loss(a2)))
        };
        let yb = if b2 >= hi {
            None
        } else {
            Some(y_b.unwrap_or_else(|| self.y_of_loss(b2)))
        };
        let (u, v) = if inc { (ya, yb) } else { (yb, ya) };
        // An open end of the y-range (the loss range's bounded end, Gaussian only):
        // closed forms for P and Q over the half-line, m = P − e^a·Q.
        if self.base == Base::Gaussian && (u.is_none() || v.is_none()) {
            let (lp, lq) = match (u, v) {
                (None, Some(v)) => (self.ln_p_cdf(v), self.ln_q_cdf(v)),
                (Some(u), None) => (self.ln_p_sf(u), self.ln_q_sf(u)),
                _ => return (f64::NEG_INFINITY, f64::NEG_INFINITY),
            };
            let r = (a + lq - lp).exp(); // e^a Q / P ≤ 1
            let lm = if r < 1.0 {
                lp + (-r).ln_1p()
            } else {
                f64::NEG_INFINITY
            };
            return (lp, lm);
        }
        let (u, v) = match self.base {
            Base::Laplace => (u.unwrap_or(0.0), v.unwrap_or(self.mu)),
            Base::Gaussian => (u.unwrap_or(0.0), v.unwrap_or(0.0)),
        };
        let (u, v) = if u < v { (u, v) } else { (v, u) };
        // Far in the left tail (y < −40, where every component's log-density falls by
        // more than |y| per unit of y) all but a relative e^{-80} of the cell's P-mass,
        // and of its m, lies within 80/|v| of the inner end v: the rest, thousands of
        // units long at large σ (a cell at the bounded end of the loss range), is
        // dropped (far inside `CELL_REL_ERR`), and the pieces shrink with the density's
        // scale 1/|v| (docs/accountant.md §3.1).
        let (u, per_unit) = if self.base == Base::Gaussian {
            let w = v.min(-FAR_Y);
            (u.max(w - 2.0 * FAR_Y / w.abs()), 32.0 * w.abs() / FAR_Y)
        } else {
            (u, 32.0)
        };
        // Near the bounded end of the loss range one cell spans a long y-interval over
        // which the density changes by many orders: pieces of width ≤ 1/per_unit.
        let ln_p = |y: f64| self.ln_p(y);
        let loss = |y: f64| self.loss(y);
        let (lp, lm) = cell_in_output(u, v, per_unit, a, &ln_p, &loss);
        (lp, lm)
    }

    /// The least `y ≤ y_max` (to a bisection's resolution, rounded up) whose P-mass above
    /// is at most `e^{ln_tail}`, by the closed-form tail `ln_p_sf` with a margin of 1e-6
    /// for its rounding (`y_max` itself, where `P(Y > y_max) ≤ Φ̄(y_max − μ)` is below
    /// `e^{−z²/2}` for `y_max = z + μ`, `z ≥ √(2|ln_tail|)`, is valid whatever the search
    /// finds). The crude `y_max` put the loss's top 5–7× higher: at q = 1e-4, σ = 1 and a
    /// tail of e^{-33}, 0.92 nats where 0.13 hold the same mass (docs/accountant.md §2.6).
    fn y_above(&self, ln_tail: f64, y_max: f64) -> f64 {
        let holds = |y: f64| self.ln_p_sf(y) + 1e-6 <= ln_tail;
        if !holds(y_max) {
            return y_max;
        }
        if holds(-y_max) {
            return -y_max;
        }
        // Not `holds` left of the end, `holds` at it: the right end is kept.
        bisect(|y| !holds(y), -y_max, y_max, 80).1
    }

    fn ln_q_cdf(&self, y: f64) -> f64 {
        match self.dir {
            Direction::Remove => self.ln_base_cdf(y),
            Direction::Add => log_add(
                self.ln_1mq + self.ln_base_cdf(y),
                self.ln_q + self.ln_base_cdf(y - self.mu),
            ),
        }
    }
    fn ln_q_sf(&self, y: f64) -> f64 {
        match self.dir {
            Direction::Remove => self.ln_base_cdf(-y),
            Direction::Add => log_add(
                self.ln_1mq + self.ln_base_cdf(-y),
                self.ln_q + self.ln_base_cdf(self.mu - y),
            ),
        }
    }
}

/// The symmetrised pair of the subsampled mechanism at rate `q` (docs/accountant.md §2.7,
/// "Adaptive order"; [`SymmetrizedLaw`]): the remove law above loss 0, the add law below
/// it, and at 0 the atom `1 − P_M(ℓ > 0) − P_B(ℓ > 0) = (1 − q)(1 − 2B̄(μ/2))`, `B̄` the
/// base's survival function (the loss is 0 where `g = 0`, at `y = μ/2` for both bases):
/// `(1 − q)·erf(μ/(2√2))` for the Gaussian, `(1 − q)(1 − e^{−μ/2})` for Laplace, each
/// to a few ulps (inside the atoms' [`crate::accountant::laws::CELL_REL_ERR`]).
///
/// ```
/// use composition::accountant::sampling::subsampled::{symmetrized, Base};
/// use composition::accountant::LossLaw;
/// let s = symmetrized(Base::Gaussian, 1.0, 0.5).unwrap();
/// // The atom at loss 0: (1 − q)·erf(1/(2√2)) = 0.5 · 0.38292…
/// assert!((s.atoms()[0].1 - 0.191462461274013).abs() < 1e-15);
/// ```
pub fn symmetrized(base: Base, mu: f64, q: f64) -> Result<SymmetrizedLaw> {
    // Both parts meet at loss 0 on the same output y = μ/2, exactly.
    let exact = |l: SubsampledLaw| SubsampledLaw {
        exact_zero: true,
        ..l
    };
    let above = exact(SubsampledLaw::new(base, mu, q, Direction::Remove)?);
    let below = exact(SubsampledLaw::new(base, mu, q, Direction::Add)?);
    let inside = match base {
        Base::Gaussian => (0.5 * mu * std::f64::consts::FRAC_1_SQRT_2).error(),
        Base::Laplace => -(-0.5 * mu).exp_m1(),
    };
    Ok(SymmetrizedLaw::new(
        Box::new(above),
        Box::new(below),
        (1.0 - q) * inside,
    ))
}

#[cfg(test)]
mod range_tests {
    use super::*;

    /// The P-mass of `y > y0` by the midpoint rule over `[y0, y0 + 40]` (4e5 panels) of
    /// the P-density written out here (the mixture for Remove, the base for Add): the
    /// independent reference for the closed-form tails behind the cut.
    fn p_mass_above(mu: f64, q: f64, dir: Direction, y0: f64) -> f64 {
        let phi = |x: f64| (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let n = 400_000;
        let h = 40.0 / n as f64;
        (0..n)
            .map(|i| {
                let y = y0 + (i as f64 + 0.5) * h;
                h * match dir {
                    Direction::Remove => (1.0 - q) * phi(y) + q * phi(y - mu),
                    Direction::Add => phi(y),
                }
            })
            .sum()
    }

    /// The y at which the loss of this direction is `l`, by the loss's closed-form
    /// inverse `μy − μ²/2 = ln((e^{±l} − 1 + q)/q)`.
    fn y_of(mu: f64, q: f64, dir: Direction, l: f64) -> f64 {
        let sl = if dir == Direction::Remove { l } else { -l };
        let g = ((sl.exp_m1() + q) / q).ln();
        (g + 0.5 * mu * mu) / mu
    }

    /// The Gaussian range stops where the P-mass beyond its unbounded end is at most
    /// `e^{ln_tail}` (valid) and at least half of it (tight), by quadrature, in both
    /// directions over rates, noise and tails; the bounded end is the exact one. Fails
    /// on a cut that keeps too little (the bound) or the crude one it replaced, whose
    /// `z = √(2|ln t|) + 1` left 1e-4–1e-6 of the allowed mass (the loss's top 5–7× too
    /// high at q = 1e-4).
    #[test]
    fn the_cut_keeps_all_but_the_tail_and_no_more() {
        for (sigma, q) in [(0.6, 1e-4), (1.0, 1e-3), (2.0, 1e-2), (0.8, 0.3)] {
            let mu = 1.0 / sigma;
            for dir in [Direction::Remove, Direction::Add] {
                let law = SubsampledLaw::new(Base::Gaussian, mu, q, dir).unwrap();
                for t in [-20.0, -37.3, -60.0] {
                    let r = law.continuous_range(t).unwrap();
                    let (end, bounded, ln_cut) = match dir {
                        Direction::Remove => (r.hi, r.lo, r.ln_above),
                        Direction::Add => (r.lo, r.hi, r.ln_below),
                    };
                    let what = format!("σ {sigma}, q {q}, {dir:?}, tail {t}");
                    assert_eq!(ln_cut, t, "{what}");
                    let exact = -(-q).ln_1p();
                    let exact = if dir == Direction::Remove {
                        -exact
                    } else {
                        exact
                    };
                    assert_eq!(bounded, exact, "{what}");
                    let mass = p_mass_above(mu, q, dir, y_of(mu, q, dir, end));
                    let allowed = t.exp();
                    assert!(
                        mass <= allowed * (1.0 + 1e-6),
                        "{what}: {mass:e} > {allowed:e}"
                    );
                    assert!(mass >= 0.5 * allowed, "{what}: {mass:e} of {allowed:e}");
                }
            }
        }
    }
}
