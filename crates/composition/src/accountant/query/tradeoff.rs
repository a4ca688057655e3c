//! Trade-off functions of a composition from its discretised privacy-loss law, certified
//! from both sides, and the Gaussian `G_μ` the central limit theorem predicts
//! (docs/accountant.md §9).
//!
//! With `δ(ε)` the hockey-stick divergence of the pair (P, Q) (§1), every test with type I
//! error `α = Q(S)` has type II error `β = 1 − P(S) ≥ 1 − δ(ε) − e^ε α` for every real ε,
//! and the trade-off function `f = T(Q, P)` is the upper envelope of these lines
//! (Dong, Roth & Su 2019, Prop. 2.12, over all ε ∈ ℝ for an asymmetric pair):
//! `f(α) = sup_ε (1 − δ(ε) − e^ε α)`. A law whose δ is larger at every ε (the
//! connect-the-dots side) therefore gives a lower bound on `f` at every α, and one whose δ
//! is smaller everywhere (the merged side) an upper bound. On a lattice `δ` is piecewise
//! of the form `a + b e^ε` between atoms, so the supremum is attained at an atom: it is a
//! maximum over the lattice, computed exactly up to a stated round-off.

use crate::accountant::compose::cumulants;
use crate::accountant::compose::plan::{compose, Plan};
use crate::accountant::core::fft::U;
use crate::accountant::grid::graded::Focus;
use crate::accountant::grid::lattice::{GridCells, Lattice};
use crate::accountant::query::accountant::Accountant;
use crate::error::{out_of_range, CompositionError, Result};
use densities::outward;

/// A certified bracket of a trade-off function at one α.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TradeoffPoint {
    /// Type I error α ∈ [0, 1].
    pub alpha: f64,
    /// Certified lower bound on `f(α)`.
    pub lower: f64,
    /// Certified upper bound on `f(α)`.
    pub upper: f64,
}

/// How many times a trade-off's grid step too fine for the bin budget is made 8× coarser.
const COARSER_TRIES: usize = 3;

/// Absolute mass below which the truncated tails of a trade-off computation stay.
const LN_TAIL_MASS: f64 = -36.0; // e^{-36} ≈ 2e-16

impl Accountant {
    /// The composed law on one side (`upper`: δ too large at every ε) as an untilted
    /// lattice on the accountant's initial grid.
    fn composed_lattice(&self, grids: &[GridCells], upper: bool) -> Result<Lattice> {
        self.work.metered(|| {
            let tail = self.ln_tail(LN_TAIL_MASS + 12.0);
            let lats = self.side_lattices(grids, upper, tail)?;
            let factors = self.factors(&lats);
            let c = compose(&factors, 0.0, self.max_bins, upper, tail, Plan::Largest)?;
            Ok(c.sum.untilted_lattice(upper, c.ln_inf))
        })
    }

    /// Certified brackets of the composition's trade-off function `T(Q, P)` at each α in
    /// `[0, 1]` (docs/accountant.md §9).
    pub fn tradeoff(&self, alphas: &[f64]) -> Result<Vec<TradeoffPoint>> {
        for &a in alphas {
            if !(0.0..=1.0).contains(&a) {
                return Err(out_of_range("alpha", a, "[0, 1]"));
            }
        }
        let a_min = alphas
            .iter()
            .copied()
            .filter(|&a| a > 0.0)
            .fold(1.0, f64::min);
        let cap = self.loss_cap(a_min);
        let mut step = self.initial_step(self.accuracy.unwrap_or(1e-4));
        // A step too fine for the bin budget (a law wide for the scale another sets) is
        // made 8× coarser, a few times: the bracket on a coarser grid is certified too,
        // and often much narrower than asked (issue 57: a truncated Laplacian beside
        // bounded noise was refused at the default accuracy and bracketed to 1e-7 on a
        // step 8× coarser). Only a step that fits is ever used, so every answer given
        // before is unchanged.
        let mut coarser = 0;
        let (hi_lat, lo_lat) = loop {
            let attempt = self
                .grid_cells(step, self.ln_tail(LN_TAIL_MASS + 12.0), cap, Focus::Uniform)
                .and_then(|grids| {
                    let (h, l) = crate::accountant::core::pool::join(
                        || self.composed_lattice(&grids, true),
                        || self.composed_lattice(&grids, false),
                    );
                    Ok((h?, l?))
                });
            match attempt {
                Err(CompositionError::OutOfRange { .. }) if coarser < COARSER_TRIES => {
                    coarser += 1;
                    step = self.align(step * 8.0);
                }
                other => break other?,
            }
        };
        // The δ-larger (upper) side bounds f from below and vice versa.
        let below = Envelope::new(&hi_lat);
        let above = Envelope::new(&lo_lat);
        Ok(alphas
            .iter()
            .map(|&a| {
                // f(α) ≤ 1 − α for every pair; the last subtraction and addition are
                // rounded outward (§5), and so is 1 − α on each side.
                let (cap_lo, cap_hi) = outward::sub_bounds(1.0, a);
                let lower = outward::down(below.sup(a) - below.slack).clamp(0.0, cap_lo);
                let upper = outward::up(above.sup(a) + above.slack).clamp(lower, cap_hi);
                TradeoffPoint {
                    alpha: a,
                    lower,
                    upper,
                }
            })
            .collect())
    }

    /// μ of the Gaussian trade-off `G_μ` that the central limit theorem of Dong, Su &
    /// Zhang (2021, Theorem 5) assigns to the composition: `μ = 2K/s` with `K = Σ c_i
    /// E_P[L_i]` (the Kullback–Leibler divergences) and `s² = Σ c_i Var_P[L_i]`
    /// (docs/accountant.md §9). The moments are those of the finite part of each loss
    /// below the cap of a trade-off down to α = 1e-6 (losses above it act like the `+∞`
    /// atom, whose mass no moment sees: bounded noise has infinite moments otherwise), from
    /// the two discretisations, averaged: a reference value, not a certified one. The exact
    /// μ is at least 0 (K is a sum of Kullback–Leibler divergences); where the
    /// discretisation's average falls below 0 (a law much narrower than its grid step,
    /// e.g. subsampled at a small rate) 0 is returned.
    pub fn clt_mu(&self) -> Result<f64> {
        let cap = self.loss_cap(1e-6);
        let step = self.initial_step(self.accuracy.unwrap_or(1e-4));
        let tail = self.ln_tail(LN_TAIL_MASS + 12.0);
        let mut mu = 0.0;
        let grids = self.grid_cells(step, tail, cap, Focus::Uniform)?;
        for upper in [false, true] {
            let lats = self.side_lattices(&grids, upper, tail)?;
            let (_, k, v) = cumulants::total_cgf(&self.factors(&lats), 0.0);
            if v.is_nan() || v <= 0.0 {
                return Err(out_of_range("loss variance", v, "(0, inf)"));
            }
            // The average of the two sides' 2K/s.
            mu += k / v.sqrt();
        }
        Ok(mu.max(0.0))
    }

    /// The cap on each law's losses for a trade-off down to `a_min`: only ε ≤ ln(1/α)
    /// matter at α (beyond, `1 − δ(ε) − e^ε α < 0`), and a cap `e^{36}·K` above that moves
    /// δ at those ε by at most `e^{−36}`; the bounds stay valid whatever the cap.
    fn loss_cap(&self, a_min: f64) -> f64 {
        -a_min.ln() - LN_TAIL_MASS + self.total_count().ln()
    }
}

/// `A_t = 1 − P(L > l_t)` and `B_t = e^{l_t} Q(L > l_t)` at every atom `l_t` of a lattice,
/// so that `1 − δ(l_t) − e^{l_t} α = A_t + B_t − e^{l_t} α`.
struct Envelope {
    a: Vec<f64>,
    b: Vec<f64>,
    y: Vec<f64>,
    /// Bound on the round-off of any `A_t + B_t − y_t α`.
    slack: f64,
}

impl Envelope {
    fn new(lat: &Lattice) -> Self {
        let n = lat.ln_pmf.len();
        let p: Vec<f64> = lat.ln_pmf.iter().map(|l| l.exp()).collect();
        let shrink = (-lat.step).exp();
        let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
        // From the top: P(L > l_t) includes the +∞ atom; e^{l_t}Q(L > l_t) obeys
        // B_t = e^{−Δ}(B_{t+1} + p_{t+1}) since each atom's Q-mass is p e^{−l}.
        let mut sp = lat.ln_inf.exp();
        let mut sb = 0.0;
        for t in (0..n).rev() {
            a[t] = 1.0 - sp;
            b[t] = sb;
            sp += p[t];
            sb = shrink * (sb + p[t]);
        }
        let y = (0..n).map(|t| lat.loss(t).exp()).collect();
        // Each running sum carries at most n roundings of terms below its (≤ 1 + err)
        // value; the combination a few more; e^{−Δ} itself is within an ulp.
        let slack = 4.0 * (n as f64 + 8.0) * U * sp.max(1.0) + 1e-300;
        Self { a, b, y, slack }
    }

    /// `max(0, max_t A_t + B_t − y_t α)`: the supremum over ε of `1 − δ(ε) − e^ε α` (ε → −∞
    /// gives 0; between atoms the expression is linear in e^ε).
    fn sup(&self, alpha: f64) -> f64 {
        let mut best = 0.0f64;
        for ((&a, &b), &y) in self.a.iter().zip(&self.b).zip(&self.y) {
            let cost = if alpha == 0.0 { 0.0 } else { y * alpha };
            best = best.max(a + b - cost);
        }
        best
    }
}

/// Pointwise minimum of two trade-off brackets (both directions of an asymmetric pair:
/// the mechanism is f-DP for the minimum of the two trade-off functions).
pub fn min_brackets(x: &[TradeoffPoint], y: &[TradeoffPoint]) -> Vec<TradeoffPoint> {
    x.iter()
        .zip(y)
        .map(|(p, q)| TradeoffPoint {
            alpha: p.alpha,
            lower: p.lower.min(q.lower),
            upper: p.upper.min(q.upper),
        })
        .collect()
}
