//! Optimal non-adaptive composition of `ℓ` ε-DP and `m` ε-BR mechanisms
//! (Cesar & Rogers, Theorem 3; docs/maths.md §3.3):
//!
//! `δ(ε_g) = max_{t∈[0,ε]} F_t(ε_g)`,
//! `F_t(ε_g) = Σ_{a=0}^{ℓ} Σ_{i=0}^{m} C(ℓ,a) q^{ℓ−a}(1−q)^a · C(m,i) p_t^{m−i}(1−p_t)^i
//!             · (1 − e^{ε_g − [(ℓ−2a)ε + mt − iε]})_+`,
//!
//! with `q = e^ε/(1+e^ε)` and `p_t = (e^ε − e^t)/(e^ε − 1)`. `m = 0` is docs/maths.md §3.1
//! (KOV), `ℓ = 0` is §3.2 (Dong–Durfee–Rogers 2019, Theorem 3).
//!
//! # Evaluating `F_t` in `O(ℓ + m)`
//! For fixed `a` write `x = ε_g − (ℓ−2a)ε − mt`; the active terms are `i ≤ ℓ_a`, the largest
//! `i` with `x + iε < 0`. With the BR weights `bᵢ`, their prefix sums `B_j` and
//! `G_j = Σ_{i≤j} bᵢ (1 − e^{−(j−i)ε})` (recurrence `G_{j+1} = (1 − e^{−ε}) B_j + e^{−ε} G_j`),
//!
//! `Σ_{i≤ℓ_a} bᵢ (1 − e^{x+iε}) = B_{ℓ_a} (1 − e^{x+ℓ_aε}) + e^{x+ℓ_aε} G_{ℓ_a}`,
//!
//! a sum of non-negative terms: no cancellation. Weights are stored scaled
//! (as in [`super::dp`]) and `ln δ` is returned, so nothing underflows where it matters.
//!
//! # The maximum over `t` (Cesar–Rogers Lemma 4.5, re-derived here)
//! Let `s = mt − ε_g`. On each segment `nε < s ≤ (n+1)ε` every `ℓ_a` is fixed, and
//! differentiating (`d/dθ P(Bin(m,θ) ≤ j) = −m C(m−1,j) θʲ(1−θ)^{m−1−j}`, for P and for Q)
//! gives `F_t′ ∝ e^{ε_g + (n+1)ε − mt} − e^t` with one positive factor common to all `a`
//! (because `(ℓ−2a)ε` is a multiple of ε). So `F_t` is unimodal on each segment with peak
//! `t_n = (ε_g + (n+1)ε)/(m+1)`, and the global maximum is at one of the (clipped) `t_n` or
//! at `t ∈ {0, ε}`: at most `m + 3` candidates. These candidates and a uniform scan seed a
//! Brent refinement (argmin) of the best one; the tests check the result against a dense
//! scan of `F_t`.

use super::binomial::ScaledPmf;
use super::dp::rr_probs;
use super::invert::{at_or_below, invert_decreasing};
use super::optimize::{maximize_ln, uniform_seeds};
use super::worst_case::gen_rr_probs;
use crate::error::{check_delta, check_eps, check_eps_g, check_mixed_counts, out_of_range, Result};

/// Uniform scan points (intervals) added to the candidate seeds.
const SCAN: usize = 16;

/// A mixed composition problem with its DP weights precomputed.
pub(crate) struct Mixed {
    m: u64,
    eps: f64,
    l_f: f64,
    /// `Bin(ℓ, 1−q)` over `a`, the number of `−ε` outcomes of the DP mechanisms.
    dp: ScaledPmf,
    /// `e^{−ε}` and `1 − e^{−ε}`.
    em: f64,
    one_m_em: f64,
}

impl Mixed {
    pub(crate) fn new(l: u64, m: u64, eps: f64) -> Self {
        let (theta, one_m_theta) = rr_probs(eps);
        let dp = ScaledPmf::binomial(l as usize, theta, one_m_theta, (-eps).exp());
        Self {
            m,
            eps,
            l_f: l as f64,
            dp,
            em: (-eps).exp(),
            one_m_em: -(-eps).exp_m1(),
        }
    }

    /// `ln F_t(ε_g)`.
    pub(crate) fn ln_delta_at(&self, t: f64, eps_g: f64) -> f64 {
        let m = self.m as usize;
        let eps = self.eps;
        let br = if m == 0 {
            ScaledPmf::binomial(0, 0.0, 1.0, 0.0)
        } else {
            let (theta, p, odds) = gen_rr_probs(eps, t);
            ScaledPmf::binomial(m, theta, p, odds)
        };
        // Prefix sums B_j and G_j over the BR weights.
        let mut bcum = vec![0.0; m + 1];
        let mut g = vec![0.0; m + 1];
        let mut acc = 0.0;
        for j in 0..=m {
            if j > 0 {
                g[j] = self.one_m_em * bcum[j - 1] + self.em * g[j - 1];
            }
            acc += br.w[j];
            bcum[j] = acc;
        }
        let mt = self.m as f64 * t;
        let mut total = 0.0;
        for a in self.dp.lo..=self.dp.hi {
            let wa = self.dp.w[a];
            if wa == 0.0 {
                continue;
            }
            let x = eps_g - (self.l_f - 2.0 * a as f64) * eps - mt;
            if x >= 0.0 {
                continue; // no active term for this a
            }
            // Largest i ≤ m with x + iε < 0.
            let mut j = ((-x / eps).ceil() - 1.0).clamp(-1.0, m as f64) as i64;
            while j >= 0 && x + j as f64 * eps >= 0.0 {
                j -= 1;
            }
            while j < m as i64 && x + (j + 1) as f64 * eps < 0.0 {
                j += 1;
            }
            if j < 0 {
                continue;
            }
            let j = j as usize;
            let y = x + j as f64 * eps;
            let s = bcum[j] * -y.exp_m1() + y.exp() * g[j];
            total += wa * s;
        }
        self.dp.ln_scale + br.ln_scale + total.ln()
    }

    /// The candidate maximisers of `F_t` over `t` (module docs), plus `0` and `ε`.
    fn candidates(&self, eps_g: f64) -> Vec<f64> {
        let eps = self.eps;
        let mut c = vec![0.0, eps];
        if self.m == 0 {
            return c;
        }
        let mf = self.m as f64;
        // Segments n with nε < mt − ε_g ≤ (n+1)ε meeting t ∈ [0, ε]; those with
        // (n+1)ε ≤ −ℓε have no active term at all.
        let n_lo = ((-eps_g / eps).floor() - 1.0).max(-self.l_f - 1.0) as i64;
        let n_hi = ((mf * eps - eps_g) / eps).ceil() as i64;
        for n in n_lo..=n_hi {
            let lo = ((eps_g + n as f64 * eps) / mf).max(0.0);
            let hi = ((eps_g + (n + 1) as f64 * eps) / mf).min(eps);
            if lo > hi {
                continue;
            }
            let peak = (eps_g + (n + 1) as f64 * eps) / (mf + 1.0);
            c.push(peak.clamp(lo, hi));
        }
        c
    }

    /// `(argmax t, ln max_t F_t(ε_g))`.
    pub(crate) fn optimum(&self, eps_g: f64) -> (f64, f64) {
        if self.m == 0 {
            return (0.0, self.ln_delta_at(0.0, eps_g));
        }
        let mut seeds = self.candidates(eps_g);
        seeds.extend(uniform_seeds(self.eps, SCAN));
        let f = |t: f64| self.ln_delta_at(t, eps_g);
        maximize_ln(&f, seeds, 1)
    }
}

/// Validates `(ℓ, m, ε)`.
fn check(l: u64, m: u64, eps: f64) -> Result<()> {
    check_mixed_counts(l, m)?;
    check_eps("epsilon", eps)?;
    Ok(())
}

/// The maximiser of Cesar–Rogers Theorem 3 (docs/maths.md §3.3): the optimal δ and the
/// analyst's `t` that attains it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixedOptimum {
    /// The optimal δ(ε_g).
    pub delta: f64,
    /// Its natural log (finite where δ underflows).
    pub ln_delta: f64,
    /// A maximising `t ∈ [0, ε]` (0 when `m = 0`, where `t` plays no role).
    pub t: f64,
}

/// Optimal δ and maximising `t` for `ℓ` ε-DP and `m` ε-BR mechanisms, composed
/// non-adaptively, at budget `ε_g` (Cesar–Rogers Theorem 3; docs/maths.md §3.3).
///
/// ```
/// let o = composition::mixed_optimum(3, 2, 0.5, 1.0).unwrap();
/// assert!(o.t >= 0.0 && o.t <= 0.5);
/// assert!((o.delta - composition::mixed_delta(3, 2, 0.5, 1.0).unwrap()).abs() < 1e-16);
/// ```
pub fn mixed_optimum(l: u64, m: u64, eps: f64, eps_g: f64) -> Result<MixedOptimum> {
    check(l, m, eps)?;
    check_eps_g(eps_g)?;
    let (t, ln_delta) = Mixed::new(l, m, eps).optimum(eps_g);
    Ok(MixedOptimum {
        delta: ln_delta.exp(),
        ln_delta,
        t,
    })
}

/// Optimal δ(ε_g) of the non-adaptive composition of `ℓ` ε-DP and `m` ε-BR mechanisms
/// (Cesar–Rogers Theorem 3; docs/maths.md §3.3):
/// `max_t Σ_a Σ_i C(ℓ,a) q^{ℓ−a}(1−q)^a C(m,i) p_t^{m−i}(1−p_t)^i
/// (1 − e^{ε_g − [(ℓ−2a)ε + mt − iε]})_+`, `q = e^ε/(1+e^ε)`. Cost `O((m+20)(ℓ+m))`.
///
/// ```
/// // m = 0 is optimal DP composition (docs/maths.md §3.1).
/// let a = composition::mixed_delta(5, 0, 0.3, 0.5).unwrap();
/// let b = composition::dp_delta(5, 0.3, 0.5).unwrap();
/// assert!((a / b - 1.0).abs() < 1e-12);
/// ```
pub fn mixed_delta(l: u64, m: u64, eps: f64, eps_g: f64) -> Result<f64> {
    mixed_ln_delta(l, m, eps, eps_g).map(f64::exp)
}

/// Natural log of [`mixed_delta`] (Cesar–Rogers Theorem 3; docs/maths.md §3.3).
///
/// ```
/// assert_eq!(composition::mixed_ln_delta(2, 2, 0.5, 2.0).unwrap(), f64::NEG_INFINITY);
/// ```
pub fn mixed_ln_delta(l: u64, m: u64, eps: f64, eps_g: f64) -> Result<f64> {
    Ok(mixed_optimum(l, m, eps, eps_g)?.ln_delta)
}

/// The objective `F_t(ε_g)` of Cesar–Rogers Theorem 3 at a fixed analyst parameter `t`
/// (docs/maths.md §3.3): the δ of the non-adaptive composition when every BR mechanism is
/// generalized randomized response with this `t`. Useful for scans over `t`.
///
/// ```
/// let f = composition::mixed_delta_at_t(2, 3, 1.0, 0.3, 0.5).unwrap();
/// assert!(f <= composition::mixed_delta(2, 3, 1.0, 0.5).unwrap());
/// ```
pub fn mixed_delta_at_t(l: u64, m: u64, eps: f64, t: f64, eps_g: f64) -> Result<f64> {
    check(l, m, eps)?;
    check_eps_g(eps_g)?;
    if !(0.0..=eps).contains(&t) {
        return Err(out_of_range("t", t, "[0, epsilon]"));
    }
    Ok(Mixed::new(l, m, eps).ln_delta_at(t, eps_g).exp())
}

/// Least `ε_g` with [`mixed_delta`]`(ℓ, m, ε, ε_g) ≤ δ` (Cesar–Rogers Theorem 3;
/// docs/maths.md §3.3). Returns 0 when `δ ≥ δ(0)`; otherwise the upper end of the final
/// bracket of a root finder run to machine precision, so `mixed_delta(returned) ≤ δ`.
///
/// ```
/// let e = composition::mixed_epsilon(50, 50, 0.1, 1e-6).unwrap();
/// assert!(composition::mixed_delta(50, 50, 0.1, e).unwrap() <= 1e-6);
/// ```
pub fn mixed_epsilon(l: u64, m: u64, eps: f64, delta: f64) -> Result<f64> {
    check(l, m, eps)?;
    check_delta("delta", delta)?;
    let problem = Mixed::new(l, m, eps);
    let f = |x: f64| problem.optimum(x).1;
    if at_or_below(f(0.0), delta) {
        return Ok(0.0);
    }
    let top = (l + m) as f64 * eps;
    // The concentration bound (docs/maths.md §3.3, eq. 3) is a valid upper bound: use it to
    // shrink the bracket when it passes the test.
    let conc = super::concentration::concentration_unchecked(l, m, eps, &[], delta);
    let hi = if conc < top && at_or_below(f(conc), delta) {
        conc
    } else {
        top
    };
    Ok(invert_decreasing(f, delta, 0.0, hi, 1e-16 * eps))
}
