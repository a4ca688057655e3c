//! One-jump split of a composition at a loss level (docs/accountant.md §4.1).
//!
//! A single tilt fails when a factor's upper loss tail is log-convex (bounded noise near
//! the edge of its support: the loss grows like a power of `1/(1 − |x|)` while the
//! density falls like `e^{−(1 − x²)^{−α}}`, so `ln P(L > y)` is concave in `y`). Tilting
//! then piles the law up at the far end of its range: at the saddle point the tilted
//! composition is a mixture of "no jump", "one jump to the far end", … with almost no
//! mass near ε, and the FFT's absolute round-off swamps δ (k = 1e4 bounded noise at
//! δ = 1e-126: the tilted mass near ε is 1e-72 of the total).
//!
//! Split every factor's finite part at a level `c` into its body `B_i` (losses `≤ c`)
//! and tail `T_i` (losses `> c`, mass `p_i`). Expanding `Π (B_i + T_i)^{*c_i}`,
//!
//! `δ_fin(ε) = δ[Π B_i^{c_i}](ε) + Σ_i c_i Σ_{y} T_i(y)·g_i(ε − y) + R₂`,
//!
//! where `g_i(e) = δ[B_i^{c_i − 1} Π_{j≠i} B_j^{c_j}](e)` is the hockey-stick function of
//! the other factors' bodies and `R₂ ∈ [0, Σ_{a<b} p_a p_b]` gathers the terms with two or
//! more tails (`δ` of a sub-probability law is at most its mass). With `c` a little below
//! ε (two untilted standard deviations) the bodies' tilted law reaches
//! ε by a jump near `c` plus a moderate deviation of the rest (no far end to pile up at),
//! `g_i` matters only at `e = ε − y` near or below 0 where it is of order one (an untilted
//! composition suffices), and the tails enter as a sum in log space. Every term is bounded
//! on the side asked for, so the split is a certified bracket at any `c`; only its width
//! depends on `c`. Where the bulk and single large losses weigh alike, lower levels (where
//! the expected number of losses above `c` is a small multiple of δ) are tried as well,
//! and the tightest bound kept (the `Level`s of the parent module).

use super::lattice::Lattice;
use super::law::log_add;
use super::tilted::{self, Factor};
use super::{compose, Composed};
use crate::error::Result;
use crate::pld::U;

/// `ln Σ e^{x_i}` of terms given in log space (`−∞` for none).
fn ln_sum(terms: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = terms.filter(|t| *t > f64::NEG_INFINITY).collect();
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + v.iter().map(|t| (t - m).exp()).sum::<f64>().ln()
}

/// Bounds on `g(e) = Σ_{s>e} μ(s)(1 − e^{e−s})` of an untilted composition `μ`, from
/// suffix sums of its window: `g(e) = A(e) − e^{e − s₀}·B(e)` with
/// `A(e) = Σ_{s>e} v(s)` and `B(e) = Σ_{s>e} v(s)e^{s₀ − s}` (`s₀` the window's first
/// point, so every factor `e^{s₀ − s} ≤ 1`).
struct Hockey {
    step: f64,
    w_lo: i64,
    suf_a: Vec<f64>,
    suf_b: Vec<f64>,
    err_bin: f64,
    tail_lo: f64,
    tail_hi: f64,
    ln_norm: f64,
    ln_margin: f64,
    /// `ln` of the composition's `+∞` mass (it counts with weight 1).
    ln_inf: f64,
}

impl Hockey {
    fn new(c: &Composed) -> Option<Self> {
        let s = &c.sum;
        debug_assert!(s.lambda == 0.0);
        let n = s.values.len();
        // e^{s₀ − s} stays a normal number across the window.
        if n as f64 * s.step > 600.0 {
            return None;
        }
        let s0 = s.w_lo as f64 * s.step;
        let mut suf_a = vec![0.0; n + 1];
        let mut suf_b = vec![0.0; n + 1];
        for t in (0..n).rev() {
            let v = s.values[t].max(0.0);
            let x = (s.w_lo + t as i64) as f64 * s.step;
            suf_a[t] = suf_a[t + 1] + v;
            suf_b[t] = suf_b[t + 1] + v * (s0 - x).exp();
        }
        Some(Self {
            step: s.step,
            w_lo: s.w_lo,
            suf_a,
            suf_b,
            err_bin: s.err_bin,
            tail_lo: s.tail_lo,
            tail_hi: s.tail_hi,
            ln_norm: s.ln_norm,
            ln_margin: s.ln_margin,
            ln_inf: c.ln_inf,
        })
    }

    /// `ln g(e)` on the side `upper` selects.
    fn ln_g(&self, e: f64, upper: bool) -> f64 {
        let n = self.suf_a.len() - 1;
        let d = self.step;
        let s0 = self.w_lo as f64 * d;
        // First window point above e.
        let mut t = ((e / d).floor() as i64 + 1 - self.w_lo).clamp(0, n as i64) as usize;
        while t > 0 && (self.w_lo + t as i64 - 1) as f64 * d > e {
            t -= 1;
        }
        while t < n && (self.w_lo + t as i64) as f64 * d <= e {
            t += 1;
        }
        let g = if t < n {
            self.suf_a[t] - (e - s0).exp() * self.suf_b[t]
        } else {
            0.0
        };
        // Suffix sums from the top: each within 1.01·(n − t)·u of its own value, and
        // e^{e−s₀}B ≤ A, so with the products e^{s₀−s}·v, the factor e^{e−s₀}, its
        // product with B and the difference, ĝ is within (2.1(n − t) + 20)u·A(e). The
        // rounding of e = ε − y moves g by at most |Δe| (|g'| ≤ mass ≤ 1).
        let err = (2.1 * (n - t) as f64 + 20.0) * U * self.suf_a[t]
            + self.err_bin * (n - t) as f64
            + 4.0 * U * (e.abs() + 1.0);
        if upper {
            let below = if e < s0 { self.tail_lo } else { 0.0 };
            let up = g.max(0.0) + err + self.tail_hi + below;
            log_add(self.ln_norm + up.ln() + self.ln_margin, self.ln_inf)
        } else {
            let lo = g - err - (self.tail_lo + self.tail_hi);
            if lo > 0.0 {
                self.ln_norm + lo.ln() - self.ln_margin
            } else {
                f64::NEG_INFINITY
            }
        }
    }
}

/// The hockey-stick function of the other factors: a window, or none at all (the
/// composition of nothing, a unit atom at 0: `g(e) = (1 − e^{e})₊`).
enum Rest {
    Nothing,
    Window(Hockey),
}

impl Rest {
    fn ln_g(&self, e: f64, upper: bool) -> f64 {
        match self {
            Rest::Window(h) => h.ln_g(e, upper),
            Rest::Nothing if e < 0.0 => {
                let g = -e.exp_m1();
                g.ln() + if upper { 4.0 * U } else { -4.0 * U }
            }
            Rest::Nothing => f64::NEG_INFINITY,
        }
    }
}

/// One factor's tail and the hockey-stick function of everything else.
struct Jump {
    ln_count: f64,
    /// `(loss, ln mass)` of the tail's atoms.
    tail: Vec<(f64, f64)>,
    rest: Rest,
}

/// A composition split at a level (module docs), on one side of the bracket.
pub(crate) struct Split {
    /// The bodies' composition, tilted at the saddle point of the level (`None`: no
    /// body mass, or the level at or above the bodies' largest loss).
    body: Option<Composed>,
    /// Largest finite loss of the bodies' composition (δ of the bodies is 0 above it).
    body_top: f64,
    /// Whether every body is empty (their composition has no mass at all).
    body_empty: bool,
    jumps: Vec<Jump>,
    /// `ln Σ_{a<b} p_a p_b` (terms with two or more tails), upper side only.
    ln_pairs: f64,
    /// `ln P(+∞)` of the composition.
    ln_inf: f64,
    upper: bool,
}

impl Split {
    /// Splits `factors` at the level `c` (`−∞`: everything is tail), the bodies tilted at
    /// the saddle point of `at` (the ε it will be asked about). `Ok(None)` when no factor
    /// has mass above `c` (the split is the plain composition).
    pub(crate) fn new(
        factors: &[Factor],
        c: f64,
        at: f64,
        max_bins: usize,
        upper: bool,
        ln_tail: f64,
    ) -> Result<Option<Self>> {
        let d = factors[0].law.step;
        let mut bodies: Vec<Lattice> = Vec::with_capacity(factors.len());
        let mut tails: Vec<Vec<(f64, f64)>> = Vec::with_capacity(factors.len());
        for f in factors {
            let lat = f.law;
            let mut cut = lat.ln_pmf.len();
            while cut > 0 && lat.loss(cut - 1) > c {
                cut -= 1;
            }
            let tail: Vec<(f64, f64)> = (cut..lat.ln_pmf.len())
                .filter(|&i| lat.ln_pmf[i] > f64::NEG_INFINITY)
                .map(|i| (lat.loss(i), lat.ln_pmf[i]))
                .collect();
            let body = if lat.ln_pmf[..cut].iter().any(|&l| l > f64::NEG_INFINITY) {
                lat.ln_pmf[..cut].to_vec()
            } else {
                Vec::new()
            };
            bodies.push(Lattice {
                step: d,
                lo: lat.lo,
                ln_pmf: body,
                ln_inf: f64::NEG_INFINITY,
            });
            tails.push(tail);
        }
        let ln_p: Vec<f64> = tails
            .iter()
            .map(|t| ln_sum(t.iter().map(|x| x.1)))
            .collect();
        if ln_p.iter().all(|&l| l == f64::NEG_INFINITY) {
            return Ok(None);
        }
        // Σ_{a<b} p_a p_b = (s² − Σ_a p_a²)/2 over the individual factors.
        let ln_s = ln_sum(
            factors
                .iter()
                .zip(&ln_p)
                .map(|(f, &l)| (f.count as f64).ln() + l),
        );
        // Terms with two or more tails: at most Σ_{a<b} p_a p_b ≤ s²/2 (none for a
        // single use), the margin for the rounding of ln s.
        let uses = super::uses(factors);
        let ln_pairs = if upper && uses > 1 && ln_s > f64::NEG_INFINITY {
            2.0 * ln_s - std::f64::consts::LN_2 + 1e-12
        } else {
            f64::NEG_INFINITY
        };
        let nonempty = |b: &Lattice| !b.ln_pmf.is_empty();
        let body_empty = bodies
            .iter()
            .zip(factors)
            .any(|(b, f)| f.count > 0 && !nonempty(b));
        let body_factors: Vec<Factor> = bodies
            .iter()
            .zip(factors)
            .map(|(b, f)| Factor {
                law: b,
                count: f.count,
            })
            .collect();
        let (body, body_top) = if body_empty {
            (None, f64::NEG_INFINITY)
        } else {
            let top = tilted::max_loss(&body_factors);
            match tilted::saddle(&body_factors, at.max(0.0)) {
                Some(lam) => (
                    Some(compose(&body_factors, lam, max_bins, upper, ln_tail)?),
                    top,
                ),
                None => (None, top),
            }
        };
        let mut jumps = Vec::new();
        for (i, tail) in tails.into_iter().enumerate() {
            if tail.is_empty() {
                continue;
            }
            let rest: Vec<Factor> = body_factors
                .iter()
                .enumerate()
                .map(|(j, f)| Factor {
                    law: f.law,
                    count: f.count - u64::from(i == j),
                })
                .filter(|f| f.count > 0)
                .collect();
            let rest = if rest.is_empty() {
                Rest::Nothing
            } else if rest.iter().any(|f| !nonempty(f.law)) {
                continue; // the others have no body mass: this term is 0
            } else {
                let comp = compose(&rest, 0.0, max_bins, upper, ln_tail)?;
                match Hockey::new(&comp) {
                    Some(h) => Rest::Window(h),
                    None => return Ok(None),
                }
            };
            jumps.push(Jump {
                ln_count: (factors[i].count as f64).ln(),
                tail,
                rest,
            });
        }
        Ok(Some(Self {
            body,
            body_top,
            body_empty,
            jumps,
            ln_pairs,
            ln_inf: tilted::ln_inf_total(factors, upper),
            upper,
        }))
    }

    /// `ln P(+∞)` of the composition on this split's side.
    pub(crate) fn ln_inf(&self) -> f64 {
        self.ln_inf
    }

    /// `ln δ(ε)` on this split's side.
    pub(crate) fn ln_delta(&self, eps: f64) -> f64 {
        let upper = self.upper;
        let body = if self.body_empty || eps >= self.body_top {
            f64::NEG_INFINITY
        } else {
            match &self.body {
                Some(b) => b.ln_delta(eps, upper),
                // No tilt for the bodies: their mass (at most 1) bounds δ from above.
                None if upper => 0.0,
                None => f64::NEG_INFINITY,
            }
        };
        let mut total = log_add(self.ln_inf, body);
        for j in &self.jumps {
            let s = ln_sum(
                j.tail
                    .iter()
                    .map(|&(y, lp)| lp + j.rest.ln_g(eps - y, upper)),
            );
            // The log-space sum's rounding: (n + 16)·4u relative.
            let m = (j.tail.len() as f64 + 16.0) * 4.0 * U;
            total = log_add(total, j.ln_count + s + if upper { m } else { -m });
        }
        log_add(total, self.ln_pairs)
    }
}
