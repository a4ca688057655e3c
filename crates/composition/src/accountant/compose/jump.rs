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
//! `g_i` matters mostly at `e = ε − y` near or below 0 where it is of order one (an
//! untilted composition gives it), and the tails enter as a sum in log space. Every term
//! is bounded on the side asked for, so the split is a certified bracket at any `c`; only
//! its width depends on `c`. Where the bulk and single large losses weigh alike, a lower
//! *mass level* is tried as well (the `Level`s of the parent module), and the tightest
//! bound kept. There the tails also hold jumps well below ε, where `g_i` is far below the
//! untilted window's round-off: it is bounded as well from the others' bodies tilted at
//! the likeliest such jump ([`TiltedHockey`]) and by Chernoff ([`HockeyChernoff`]), the
//! tightest taken pointwise.

use super::cumulants;
use crate::accountant::compose::levels::tighter;
use crate::accountant::compose::plan::{compose, Composed, Plan};
use crate::accountant::compose::tilted::{self, Factor};
use crate::accountant::core::fft::U;
use crate::accountant::core::numeric::log_add;
use crate::accountant::grid::lattice::Lattice;
use crate::error::Result;

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
        let t = first_above(self.w_lo, n, d, e);
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

/// `g(e)` of the other factors' bodies from their composition tilted at `λ > 0`: where a
/// tail loss `y` lies well below ε, `g(ε − y)` is far below the untilted window's
/// round-off, and a tilt at the saddle point of the most likely jump resolves it (the
/// tilted law's bulk sits there). With the window's bins `v_u` at `x_u` (tilted frame,
/// `ω(x) = e^{K − λx} v(x)`), `q = e^{−λd}`, suffix sums from the top
/// `S_t = Σ_{u≥t} v_u q^{u−t}` and `C_t = Σ_{u>t} v_u q^{u−t}(1 − e^{−(x_u − x_t)})`
/// (`S_t = v_t + q S_{t+1}`, `C_t = q((1 − e^{−d}) S_{t+1} + e^{−d} C_{t+1})`: no
/// cancellation), and for `e` with first bin `t` above it, `z = x_t − e`,
/// `g(e) = e^{K − λx_t}((1 − e^{−z}) S_t + e^{−z} C_t)` (docs/accountant.md §4.1).
struct TiltedHockey {
    step: f64,
    w_lo: i64,
    lam: f64,
    s: Vec<f64>,
    c: Vec<f64>,
    /// Per-bin round-off times `Σ_j q^j min(1, (j + 1)d)`, the most any weight sum reaches.
    err_w: f64,
    tail_lo: f64,
    tail_hi: f64,
    ln_norm: f64,
    ln_margin: f64,
    ln_inf: f64,
}

impl TiltedHockey {
    fn new(c: &Composed) -> Self {
        let sum = &c.sum;
        let (d, lam) = (sum.step, sum.lambda);
        let n = sum.values.len();
        let q = (-lam * d).exp();
        let (rise, keep) = (-(-d).exp_m1(), (-d).exp());
        let mut s = vec![0.0; n + 1];
        let mut cc = vec![0.0; n + 1];
        for t in (0..n).rev() {
            s[t] = sum.values[t].max(0.0) + q * s[t + 1];
            cc[t] = q * (rise * s[t + 1] + keep * cc[t + 1]);
        }
        let w = if q < 1.0 {
            (d / ((1.0 - q) * (1.0 - q))).min(1.0 / (1.0 - q))
        } else {
            n as f64
        };
        Self {
            step: d,
            w_lo: sum.w_lo,
            lam,
            s,
            c: cc,
            err_w: sum.err_bin * w * (1.0 + 1e-6),
            tail_lo: sum.tail_lo,
            tail_hi: sum.tail_hi,
            ln_norm: sum.ln_norm,
            ln_margin: sum.ln_margin,
            ln_inf: c.ln_inf,
        }
    }

    /// `ln g(e)` on the side `upper` selects.
    fn ln_g(&self, e: f64, upper: bool) -> f64 {
        let n = self.s.len() - 1;
        let d = self.step;
        let x = |t: usize| (self.w_lo + t as i64) as f64 * d;
        // g falls with e: evaluating a little below (upper) or above (lower) it covers the
        // rounding of e = ε − y, of the bins' positions and of z = x_t − e.
        let slack = 8.0 * U * (e.abs() + 1.0 + x(0).abs().max(x(n).abs()));
        let e = if upper { e - slack } else { e + slack };
        let t = first_above(self.w_lo, n, d, e);
        if t == n {
            // Above the window: only its tail, every weight at most e^{K − λx_n}.
            return if upper {
                let v = self.ln_norm - self.lam * x(n) + self.tail_hi.ln() + self.ln_margin;
                log_add(v, self.ln_inf) + 4.0 * U * v.abs()
            } else {
                f64::NEG_INFINITY
            };
        }
        let xt = x(t);
        let z = xt - e;
        let core = -(-z).exp_m1() * self.s[t] + (-z).exp() * self.c[t];
        // Suffix sums: each term's weight within 2(n − t)u (q's rounding compounded) and
        // each step within 4u; the query within 10u.
        let rel = (6.0 * (n - t) as f64 + 30.0) * U;
        let base = self.ln_norm - self.lam * xt;
        let base_err = 4.0 * U * (self.ln_norm.abs() + (self.lam * xt).abs());
        if upper {
            let up = core * (1.0 + rel) + self.err_w + self.tail_hi;
            let mut v = base + up.ln();
            if t == 0 && e < xt {
                // Mass below the window and above e: weights at most e^{λz} here.
                v = log_add(v, self.tail_lo.ln() + self.lam * z);
            }
            log_add(v + self.ln_margin + base_err, self.ln_inf)
        } else {
            let lo = core * (1.0 - rel) - self.err_w - (self.tail_lo + self.tail_hi);
            if lo > 0.0 {
                base + lo.ln() - self.ln_margin - base_err
            } else {
                f64::NEG_INFINITY
            }
        }
    }
}

/// Tail cells per scale of the bodies' composition ([`Split::new`]).
const TAIL_CELLS_PER_SCALE: f64 = 64.0;

/// A tail's atoms `(y, ln p)` (increasing `y`) on cells `(kw, (k+1)w]`: on the upper side
/// each atom split between its cell's ends keeping its P- and Q-mass (connect the dots: a
/// dominating pair, the hockey-stick contribution being convex in `e^{−y}`), masses
/// inflated by 1e-12; on the lower side each cell's atoms merged into one at
/// `ln(P/Q)` (a post-processing), its position lowered and its mass deflated by 1e-12
/// (far above the rounding of the sums). The atoms need not lie on any grid: the split
/// only evaluates `g(ε − y)`.
fn coarsen_tail(tail: &[(f64, f64)], w: f64, upper: bool) -> Vec<(f64, f64)> {
    let margin = 1e-12f64;
    let mut out: Vec<(f64, f64)> = Vec::new();
    if upper {
        let ln_dm = (-(-w).exp_m1()).ln(); // ln(1 − e^{−w})
        let infl = margin.ln_1p();
        // Masses at the cell ends k·w as (k, ln mass), equal neighbours merged as they
        // come.
        let mut acc: Vec<(i64, f64)> = Vec::new();
        let mut add = |k: i64, lp: f64| match acc.last_mut() {
            Some(last) if last.0 == k => last.1 = log_add(last.1, lp),
            _ => acc.push((k, lp)),
        };
        for &(y, lp) in tail {
            let k = (y / w).floor() as i64;
            let a = k as f64 * w;
            if a >= y {
                add(k, lp);
                continue;
            }
            // Share moved up: (1 − e^{a−y}) / (1 − e^{−w}).
            let ln_up = ((-(a - y).exp_m1()).ln() - ln_dm).min(0.0);
            let ln_stay = (-ln_up.exp()).ln_1p();
            if ln_stay > f64::NEG_INFINITY {
                add(k, lp + ln_stay);
            }
            add(k + 1, lp + ln_up);
        }
        // An atom's k + 1 comes before the k of the next atom in the same cell: the keys
        // are not in order, so they are sorted (stably) and equal neighbours merged.
        acc.sort_by_key(|e| e.0);
        let mut merged: Vec<(i64, f64)> = Vec::with_capacity(acc.len());
        for (k, lp) in acc {
            match merged.last_mut() {
                Some(last) if last.0 == k => last.1 = log_add(last.1, lp),
                _ => merged.push((k, lp)),
            }
        }
        for (k, lp) in merged {
            out.push((k as f64 * w, lp + infl));
        }
    } else {
        let defl = (-margin).ln_1p();
        let mut i = 0;
        while i < tail.len() {
            let k = (tail[i].0 / w).floor();
            let mut j = i;
            let (mut lp, mut lq) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
            while j < tail.len() && (tail[j].0 / w).floor() == k {
                lp = log_add(lp, tail[j].1);
                lq = log_add(lq, tail[j].1 - tail[j].0);
                j += 1;
            }
            if j - i == 1 {
                out.push(tail[i]);
            } else {
                let x = lp - lq;
                out.push((x - margin * (1.0 + x.abs()), lp + defl));
            }
            i = j;
        }
    }
    out
}

/// Number of tilts in a [`HockeyChernoff`] table.
const CHERNOFF_TILTS: usize = 64;

/// Chernoff bounds on the hockey-stick function `g(e)` of the other factors' bodies, for
/// the upper side where the untilted window's absolute round-off swamps `g` (e well above
/// the bulk: a tail loss `y` well below ε). For any `t > 0`,
/// `(1 − e^{e−s})₊ ≤ e^{t(s−e)}·φ(t)` with `φ(t) = max_z (1 − e^{−z})e^{−tz} =
/// (t/(1+t))^t/(1+t)`, so `ln g(e) ≤ K(t) − te + ln φ(t)` with `K` the bodies' composed
/// cumulant generating function (a sub-probability law's: the bound holds as well). A
/// table of tilts, each a valid bound; the least over them is taken
/// (docs/accountant.md §4.1).
struct HockeyChernoff {
    /// Tilts, ascending.
    ts: Vec<f64>,
    /// `K(t) + ln φ(t)` at each tilt, rounding charged upwards.
    ln_b: Vec<f64>,
}

/// `ln φ(t) = −ln(1 + t) − t·ln(1 + 1/t)` (convex in t), rounded up.
fn ln_phi(t: f64) -> f64 {
    let v = -t.ln_1p() - t * (1.0 / t).ln_1p();
    v + 8.0 * U * (1.0 + v.abs())
}

impl HockeyChernoff {
    /// The tilts of the table for bodies whose composition is asked about near `e_top`
    /// (the largest e a tail loss leaves, `ε − c`): geometric from `λ/4096` to `1.5λ`,
    /// λ the bodies' saddle point at `e_top` (`None` when it is 0: g is of order one
    /// wherever it is asked, and the window gives it).
    fn tilts(bodies: &[Factor], e_top: f64) -> Option<Vec<f64>> {
        let lam = cumulants::saddle(bodies, e_top)?;
        if !(lam > 0.0 && lam.is_finite()) {
            return None;
        }
        let (lo, hi) = (lam / 4096.0, 1.5 * lam);
        let r = (hi / lo).powf(1.0 / (CHERNOFF_TILTS - 1) as f64);
        Some((0..CHERNOFF_TILTS).map(|j| lo * r.powi(j as i32)).collect())
    }

    /// The table for the bodies' composition with factor `skip`'s count one less, from
    /// each body's `K_j(t)` (`cgfs[j][tilt]`, rounded up).
    fn new(bodies: &[Factor], skip: usize, ts: &[f64], cgfs: &[Vec<f64>]) -> Self {
        let ln_b = ts
            .iter()
            .enumerate()
            .map(|(a, &t)| {
                let mut k = 0.0f64;
                let mut mag = 0.0f64;
                for (j, f) in bodies.iter().enumerate() {
                    let c = (f.count - u64::from(j == skip)) as f64;
                    if c > 0.0 {
                        k += c * cgfs[j][a];
                        mag += (c * cgfs[j][a]).abs();
                    }
                }
                // The products and the sum: within (m + 2)u of the magnitudes.
                let v = k + ln_phi(t);
                v + (bodies.len() as f64 + 4.0) * U * (mag + v.abs())
            })
            .collect();
        Self {
            ts: ts.to_vec(),
            ln_b,
        }
    }

    /// `ln` of the bound at `e` from tilt `j`, rounded up (`te` within `2u` of itself).
    fn at(&self, j: usize, e: f64) -> f64 {
        let te = self.ts[j] * e;
        self.ln_b[j] - te + 2.0 * U * te.abs()
    }

    /// The least bound at `e`, starting the search at tilt `*hint` and leaving the best
    /// tilt there: the bound is convex in t, so a walk to the neighbours finds it, and
    /// successive calls with falling `e` move it little.
    fn ln_g(&self, e: f64, hint: &mut usize) -> f64 {
        let mut j = (*hint).min(self.ts.len() - 1);
        let mut v = self.at(j, e);
        while j > 0 && self.at(j - 1, e) <= v {
            j -= 1;
            v = self.at(j, e);
        }
        while j + 1 < self.ts.len() && self.at(j + 1, e) < v {
            j += 1;
            v = self.at(j, e);
        }
        *hint = j;
        v
    }
}

/// The first of a window's `n` points `(w_lo + t)·d` above `e` (`n` when none is).
fn first_above(w_lo: i64, n: usize, d: f64, e: f64) -> usize {
    let x = |t: usize| (w_lo + t as i64) as f64 * d;
    let mut t = ((e / d).floor() as i64 + 1 - w_lo).clamp(0, n as i64) as usize;
    while t > 0 && x(t - 1) > e {
        t -= 1;
    }
    while t < n && x(t) <= e {
        t += 1;
    }
    t
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
    /// The rest tilted at the saddle point of the most likely jump below ε, if any.
    tilted_rest: Option<TiltedHockey>,
    /// Chernoff bounds on the rest's `g` (upper side, where a tail loss lies well below ε).
    cher: Option<HockeyChernoff>,
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
        // The bodies' tilt at `at`: it composes them, and it sets the tails' cells.
        let body_lam = if body_empty {
            None
        } else {
            cumulants::saddle(&body_factors, at.max(0.0))
        };
        // The tails enter only through Σ_y T(y)·g(ε − y), where g varies on the scale of
        // the bodies' composition (its sd, and 1/λ of its tilt at `at`), far coarser than
        // the grid that resolves one use: each tail is re-discretised on cells of 1/64 of
        // that scale (DP-SGD at q = 1e-4: 1.5e6 tail atoms became a few thousand, and the
        // split's evaluations 100× cheaper).
        let scale = if bodies.iter().all(nonempty) {
            let sd = cumulants::total_cgf(&body_factors, 0.0).2.sqrt();
            match body_lam {
                Some(lam) if lam > 0.0 => sd.min(1.0 / lam),
                _ => sd,
            }
        } else {
            0.0
        };
        let w = scale / TAIL_CELLS_PER_SCALE;
        if w.is_finite() && w > 4.0 * d {
            for t in tails.iter_mut() {
                *t = coarsen_tail(t, w, upper);
            }
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
        let uses = crate::accountant::compose::levels::uses(factors);
        let ln_pairs = if upper && uses > 1 && ln_s > f64::NEG_INFINITY {
            2.0 * ln_s - std::f64::consts::LN_2 + 1e-12
        } else {
            f64::NEG_INFINITY
        };
        let (body, body_top) = if body_empty {
            (None, f64::NEG_INFINITY)
        } else {
            let top = cumulants::max_loss(&body_factors);
            match body_lam {
                Some(lam) => (
                    Some(compose(
                        &body_factors,
                        lam,
                        max_bins,
                        upper,
                        ln_tail,
                        Plan::Largest,
                    )?),
                    top,
                ),
                None => (None, top),
            }
        };
        // Chernoff tables (bounds on the upper side; on both, they place the tilted rest):
        // each body's K_j at a set of tilts.
        let tilts = if !body_empty && c > f64::NEG_INFINITY {
            HockeyChernoff::tilts(&body_factors, at - c)
        } else {
            None
        };
        let cgfs: Vec<Vec<f64>> = match &tilts {
            Some(ts) => bodies
                .iter()
                .map(|b| ts.iter().map(|&t| cumulants::cgf_upper(b, t)).collect())
                .collect(),
            None => Vec::new(),
        };
        // The bodies of every factor, factor i's count one less.
        let rest_factors = |i: usize| -> Vec<Factor> {
            body_factors
                .iter()
                .enumerate()
                .map(|(j, f)| Factor {
                    law: f.law,
                    count: f.count - u64::from(i == j),
                })
                .filter(|f| f.count > 0)
                .collect()
        };
        let mut jumps = Vec::new();
        for (i, tail) in tails.into_iter().enumerate() {
            if tail.is_empty() {
                continue;
            }
            let rest = rest_factors(i);
            let rest = if rest.is_empty() {
                Rest::Nothing
            } else if rest.iter().any(|f| !nonempty(f.law)) {
                continue; // the others have no body mass: this term is 0
            } else {
                let comp = compose(&rest, 0.0, max_bins, upper, ln_tail, Plan::Largest)?;
                match Hockey::new(&comp) {
                    Some(h) => Rest::Window(h),
                    None => return Ok(None),
                }
            };
            let cher = match (&rest, &tilts) {
                (Rest::Window(_), Some(ts)) => {
                    Some(HockeyChernoff::new(&body_factors, i, ts, &cgfs))
                }
                _ => None,
            };
            // The most likely jump below ε by the Chernoff bounds: where it leaves the
            // others a positive e*, their composition tilted at its saddle point gives g
            // there and around it (the untilted window's round-off swamps it).
            let tilted_rest = match &cher {
                Some(ch) => {
                    let mut hint = 0usize;
                    let best = tail
                        .iter()
                        .filter(|&&(y, _)| y < at)
                        .map(|&(y, lp)| (at - y, lp + ch.ln_g(at - y, &mut hint)))
                        .max_by(|a, b| a.1.total_cmp(&b.1));
                    // Optional: where its window does not fit the budget, the other
                    // bounds stand alone.
                    match best.and_then(|(e, _)| cumulants::saddle(&rest_factors(i), e)) {
                        Some(lam) if lam > 0.0 => compose(
                            &rest_factors(i),
                            lam,
                            max_bins,
                            upper,
                            ln_tail,
                            Plan::Largest,
                        )
                        .ok()
                        .map(|comp| TiltedHockey::new(&comp)),
                        _ => None,
                    }
                }
                None => None,
            };
            jumps.push(Jump {
                ln_count: (factors[i].count as f64).ln(),
                tail,
                rest,
                tilted_rest,
                cher: if upper { cher } else { None },
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
            let s = ln_sum(j.tail.iter().scan(0usize, |hint, &(y, lp)| {
                let e = eps - y;
                let mut g = j.rest.ln_g(e, upper);
                if let Some(th) = &j.tilted_rest {
                    g = tighter(upper, g, th.ln_g(e, upper));
                }
                Some(
                    lp + match &j.cher {
                        Some(ch) => g.min(ch.ln_g(e, hint)),
                        None => g,
                    },
                )
            }));
            // The log-space sum's rounding: (n + 16)·4u relative.
            let m = (j.tail.len() as f64 + 16.0) * 4.0 * U;
            total = log_add(total, j.ln_count + s + if upper { m } else { -m });
        }
        log_add(total, self.ln_pairs)
    }
}

#[cfg(test)]
mod tests;
