//! Privacy-loss laws of single mechanisms as the tilted accountant needs them: finite
//! atoms, the `+∞` atom in log space, and per-cell masses of the atomless part
//! (docs/accountant.md §1 for the loss, §2 for the mechanisms, §3 for the cells).
//!
//! For a cell `I = (a, b]` of loss values the accountant needs two numbers of the atomless
//! part `L_c`: its P-mass `P(I)` and `m(I) = E_P[1 − e^{a − L}; L ∈ I]`. The pair fixes
//! both the connect-the-dots split of the cell (pessimistic) and the merged atom
//! `a − ln(1 − m/P)` (optimistic; see [`super::lattice`]). Both are returned as natural
//! logarithms so that cells of mass 1e-300 and below keep their digits; both come from
//! an 8-point Gauss–Legendre rule on an integrand that is analytic on a cell much
//! narrower than its scale (relative error far below [`CELL_REL_ERR`], tested against
//! closed forms).

use crate::error::{out_of_range, Result};
use densities::bounded::BoundedFamily;
use std::sync::OnceLock;

/// Relative error allowed for a cell mass computed by the quadrature of this module;
/// the pessimistic law inflates, the optimistic one deflates every mass by it.
pub const CELL_REL_ERR: f64 = 2e-15;

/// The P-law of one mechanism's privacy loss `L = ln(p(Y)/q(Y))`, `Y ~ P` (docs/accountant.md §1).
pub trait LossLaw: Send + Sync + std::fmt::Debug {
    /// Finite atoms `(loss, P-mass)`.
    fn atoms(&self) -> Vec<(f64, f64)>;
    /// `ln P(L = +∞)` (`−∞` when there is no such atom).
    fn ln_inf_mass(&self) -> f64;
    /// Losses `[lo, hi]` of the atomless part beyond which it has little mass, aiming at
    /// `e^{ln_tail}` on each side, with upper bounds on the two cut masses (`None`
    /// without an atomless part).
    fn continuous_range(&self, ln_tail: f64) -> Option<ContinuousRange>;
    /// `(ln P(a < L_c ≤ b), ln E_P[1 − e^{a − L_c}; a < L_c ≤ b])` for `a < b`.
    fn cell(&self, a: f64, b: f64) -> (f64, f64);
    /// Cells between consecutive points of `edges` (override when cells share work).
    fn cells(&self, edges: &[f64]) -> Vec<(f64, f64)> {
        edges.windows(2).map(|w| self.cell(w[0], w[1])).collect()
    }
    /// Whether [`Self::cells`] gives each cell the same value however the edges are split
    /// between calls (no cell warm-started from the one before): its cells may then be
    /// shared between the cores at any edge, not only in chunks of a fixed size.
    fn pointwise_cells(&self) -> bool {
        false
    }
    /// The scale on which the loss law varies (its standard deviation, or the width of
    /// its structure): the grid step is a fraction of the smallest scale in a list.
    fn loss_scale(&self) -> f64;
    /// The scale the first grid step of a composition of `count` uses is a fraction of
    /// (docs/accountant.md §6): [`Self::loss_scale`] unless the bracket's width is known to
    /// answer to a wider one.
    fn step_scale(&self, _count: u64) -> f64 {
        self.loss_scale()
    }
    /// A loss value that should be a grid point multiple (the atoms' spacing), if any.
    fn grid_unit(&self) -> Option<f64>;
    /// Whether the upper loss tail is log-convex somewhere (`ln P(L > y)` concave in y):
    /// a tilted composition then piles up at the top of the range and can be loose
    /// although its own two bounds agree, so the one-jump split is always tried as well
    /// (docs/accountant.md §4.1).
    fn log_convex_tail(&self) -> bool {
        false
    }
    /// How much coarser than the step from [`Self::loss_scale`] a first, pilot step of a
    /// composition of `count` uses may be (1: none; docs/accountant.md §6): above 1 where
    /// that scale is far finer than the accuracy needs.
    fn coarse_start(&self, _count: u64) -> f64 {
        1.0
    }
    /// Whether a first step over a range much wider than [`Self::loss_scale`] should be
    /// a pilot (docs/accountant.md §6): true where that scale can be far from the step
    /// the accuracy needs (bounded noise far in its tail).
    fn pilot_step(&self) -> bool {
        true
    }
    /// Whether this law's cells may be graded (docs/accountant.md §3.3): several grid
    /// steps wide where its mass under the question's tilt is negligible (a long, light
    /// tail far wider than the body the step resolves).
    fn graded(&self) -> bool {
        false
    }
    /// The laws whose gradings a graded law's own follows (docs/accountant.md §3.3): a
    /// revealed mixture's parts, each block of its cells as fine as the finest part's
    /// own grading asks, so that mixtures of the same parts share one grid (and their
    /// parts' cells, [`super::revealed::SharedPart`]). Empty: the law's own masses.
    fn grading_parts(&self) -> Vec<&dyn LossLaw> {
        Vec::new()
    }
}

/// The range of the atomless part kept on the grid, and bounds on what is cut.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContinuousRange {
    /// Lowest loss kept.
    pub lo: f64,
    /// Highest loss kept.
    pub hi: f64,
    /// `ln` of an upper bound on `P(L_c < lo)`.
    pub ln_below: f64,
    /// `ln` of an upper bound on `P(L_c > hi)`.
    pub ln_above: f64,
}

/// Gauss–Legendre nodes and weights on `[−1, 1]` (8 points), by Newton's method on the
/// Legendre recurrence.
pub(crate) fn gauss_legendre8() -> &'static [(f64, f64); 8] {
    static GL: OnceLock<[(f64, f64); 8]> = OnceLock::new();
    GL.get_or_init(|| {
        let n = 8usize;
        let mut out = [(0.0, 0.0); 8];
        for (i, slot) in out.iter_mut().enumerate() {
            let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
            let mut dp = 0.0;
            for _ in 0..100 {
                let (mut p0, mut p1) = (1.0, x);
                for j in 2..=n {
                    let p2 = ((2 * j - 1) as f64 * x * p1 - (j - 1) as f64 * p0) / j as f64;
                    p0 = p1;
                    p1 = p2;
                }
                dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
                let dx = p1 / dp;
                x -= dx;
                if dx.abs() < 1e-17 {
                    break;
                }
            }
            *slot = (x, 2.0 / ((1.0 - x * x) * dp * dp));
        }
        out
    })
}

/// A loss cell integrated in output space: `(ln ∫_u^v p, ln ∫_u^v (1 − e^{a − ℓ(y)}) p dy)`
/// by 8-point Gauss–Legendre on pieces of width at most `1/per_unit` (a cell near the end
/// of a loss range can be wide in output space, where the density changes fast).
pub(crate) fn cell_in_output(
    u: f64,
    v: f64,
    per_unit: f64,
    a: f64,
    ln_p: &dyn Fn(f64) -> f64,
    loss: &dyn Fn(f64) -> f64,
) -> (f64, f64) {
    let pieces = (((v - u) * per_unit).ceil() as usize).max(1);
    let hw = (v - u) / pieces as f64;
    let half = 0.5 * hw;
    let ln_half = half.ln();
    let ln_w = gauss_legendre8_ln_weights();
    let mut lp = f64::NEG_INFINITY;
    let mut lm = f64::NEG_INFINITY;
    for i in 0..pieces {
        let mid = u + (i as f64 + 0.5) * hw;
        // The 8 nodes' log terms, summed with one shift each (a log-sum-exp instead of a
        // log_add per node: this is the inner loop of every bounded-noise lattice).
        let mut tp = [f64::NEG_INFINITY; 8];
        let mut tm = [f64::NEG_INFINITY; 8];
        for (j, &(x, _)) in gauss_legendre8().iter().enumerate() {
            let y = mid + half * x;
            let lg = ln_p(y) + ln_w[j] + ln_half;
            tp[j] = lg;
            let f = -(a - loss(y)).exp_m1();
            if f > 0.0 {
                tm[j] = lg + f.ln();
            }
        }
        lp = log_add(lp, log_sum_exp8(&tp));
        lm = log_add(lm, log_sum_exp8(&tm));
    }
    (lp, lm)
}

/// `ln Σ e^{t_j}` over 8 terms (−∞ allowed; NaN only if a term is NaN or +∞).
fn log_sum_exp8(t: &[f64; 8]) -> f64 {
    let m = t.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m.is_infinite() {
        return m;
    }
    m + t.iter().map(|&x| (x - m).exp()).sum::<f64>().ln()
}

/// `ln w_j` of [`gauss_legendre8`]'s weights.
fn gauss_legendre8_ln_weights() -> &'static [f64; 8] {
    static LW: OnceLock<[f64; 8]> = OnceLock::new();
    LW.get_or_init(|| {
        let mut out = [0.0; 8];
        for (o, &(_, w)) in out.iter_mut().zip(gauss_legendre8()) {
            *o = w.ln();
        }
        out
    })
}

/// The point where a monotone predicate turns: `left(m)` is true left of the root and
/// false right of it on `[lo, hi]`. Started from a guess `y0` (bracketed a hair around it,
/// widened by 16× until it brackets), the bisection ends on the same adjacent floats as
/// one from the whole range, in ~15 evaluations instead of ~70.
pub(crate) fn bracket_root(left: impl Fn(f64) -> bool, y0: f64, lo: f64, hi: f64) -> f64 {
    let (mut a, mut b) = (lo, hi);
    if y0.is_finite() && y0 > lo && y0 < hi {
        let mut h = 1e-12 * y0.abs().max(1.0);
        for _ in 0..40 {
            let (u, v) = ((y0 - h).max(lo), (y0 + h).min(hi));
            if (u == lo || left(u)) && (v == hi || !left(v)) {
                (a, b) = (u, v);
                break;
            }
            h *= 16.0;
        }
    }
    let (a, b) = bisect(left, a, b, 120);
    0.5 * (a + b)
}

/// `[a, b]` narrowed by at most `steps` halvings, keeping `left(a)` and `!left(b)` as
/// they were (`left` monotone), until the two ends are adjacent floats.
pub(crate) fn bisect(left: impl Fn(f64) -> bool, a: f64, b: f64, steps: usize) -> (f64, f64) {
    let (mut a, mut b) = (a, b);
    for _ in 0..steps {
        let m = 0.5 * (a + b);
        if m <= a || m >= b {
            break;
        }
        if left(m) {
            a = m;
        } else {
            b = m;
        }
    }
    (a, b)
}

/// The kept range of a monotone law from the losses `l1`, `l2` at the two ends of the
/// output interval that holds all but `e^{ln_tail}` on each side, with a bounded end of
/// the loss range (`lo` or `hi` finite) kept exactly, nothing cut beyond it.
pub(crate) fn range_from_ends(l1: f64, l2: f64, lo: f64, hi: f64, ln_tail: f64) -> ContinuousRange {
    let (a, b) = if l1 < l2 { (l1, l2) } else { (l2, l1) };
    let (a, ln_below) = if lo.is_finite() {
        (lo, f64::NEG_INFINITY)
    } else {
        (a, ln_tail)
    };
    let (b, ln_above) = if hi.is_finite() {
        (hi, f64::NEG_INFINITY)
    } else {
        (b, ln_tail)
    };
    ContinuousRange {
        lo: a,
        hi: b,
        ln_below,
        ln_above,
    }
}

/// The standard deviation of a loss under P, by the trapezoid rule with step 1/64 on
/// `[lo, hi]` of the output (`ln_p` its log-density), clamped to `[1e-12, 50]`: the scale
/// a law's first grid step is a fraction of (docs/accountant.md §6).
pub(crate) fn loss_sd_by_trapezoid(
    lo: f64,
    hi: f64,
    ln_p: impl Fn(f64) -> f64,
    loss: impl Fn(f64) -> f64,
) -> f64 {
    let h = 1.0 / 64.0;
    let n = ((hi - lo) / h).ceil() as usize;
    let (mut m0, mut m1, mut m2) = (0.0, 0.0, 0.0);
    for i in 0..=n {
        let x = lo + i as f64 * h;
        let w = ln_p(x).exp() * if i == 0 || i == n { 0.5 } else { 1.0 };
        let l = loss(x);
        if w > 0.0 && l.is_finite() {
            m0 += w;
            m1 += w * l;
            m2 += w * l * l;
        }
    }
    let mean = m1 / m0;
    (m2 / m0 - mean * mean).max(0.0).sqrt().clamp(1e-12, 50.0)
}

/// Slack in the log for `ops` floating-point operations on logarithms of magnitude at most
/// `mag` (docs/accountant.md §5, "log-space rounding"): each rounds by at most `u·mag`,
/// an absolute error in the log and so a relative one in the mass; twice their sum, plus
/// one operation for adding the slack itself. Pessimistic masses are raised by it,
/// optimistic ones lowered: a mass near `e^{−700}` is only known to about `1.5e-13`
/// relative in its logarithm, far more than a fixed `8u`.
pub(crate) fn ln_round(ops: f64, mag: f64) -> f64 {
    let mag = if mag.is_finite() { mag.abs() } else { 0.0 };
    2.0 * (ops + 1.0) * (f64::EPSILON / 2.0) * (mag + 1.0)
}

/// Slack in the log for a value formed by a chain of sums and differences of logs (and
/// `exp`, `ln`, `ln_1p` of logs), given the magnitudes of the chain's inputs and of every
/// rounded intermediate result: each sum rounds by at most `u` times its own result,
/// each elementary function by about an ulp, and an error in an input's log is one in
/// the mass (list the final result twice: the slack's own addition rounds too). A
/// quarter more than their sum.
pub(crate) fn chain_rounding(values: &[f64]) -> f64 {
    let m: f64 = values
        .iter()
        .filter(|v| v.is_finite())
        .map(|v| v.abs())
        .sum();
    1.25 * (f64::EPSILON / 2.0) * (m + 2.0 * values.len() as f64 + 4.0)
}

/// Absolute error bound of a difference of two loss positions computed in floating
/// point, each at most `mag` in magnitude (`4u·mag`, twice the two roundings): the
/// split of an atom or cell between grid points uses `1 − e^{a − x}`, whose relative error
/// is this over `x − a`, so a step far below the losses' magnitude amplifies it.
pub(crate) fn position_round(mag: f64) -> f64 {
    let mag = if mag.is_finite() { mag.abs() } else { 0.0 };
    4.0 * f64::EPSILON * mag + f64::MIN_POSITIVE
}

/// `ln(e^a + e^b)` without overflow.
pub(crate) fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    if b == f64::NEG_INFINITY {
        return a;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}

/// `ln ∫_u^v e^{g(ℓ)} dℓ` and `ln ∫_u^v (1 − e^{a−ℓ}) e^{g(ℓ)} dℓ` (`a ≤ u < v`) by 8-point
/// Gauss–Legendre in log space.
fn cell_by_density(g: &dyn Fn(f64) -> f64, a: f64, u: f64, v: f64) -> (f64, f64) {
    let (a, b, r) = (u, v, a);
    let half = 0.5 * (b - a);
    let mid = 0.5 * (a + b);
    let mut lp = f64::NEG_INFINITY;
    let mut lm = f64::NEG_INFINITY;
    for &(x, w) in gauss_legendre8() {
        let l = mid + half * x;
        let lg = g(l) + (w * half).ln();
        lp = log_add(lp, lg);
        // 1 − e^{a−ℓ} > 0 for ℓ > a, without cancellation.
        lm = log_add(lm, lg + (-(r - l).exp_m1()).ln());
    }
    (lp, lm)
}

/// Gaussian mechanism with `μ = sensitivity/σ`: `L ~ N(μ²/2, μ²)` under P (docs/accountant.md §2.1).
#[derive(Debug, Clone, Copy)]
pub struct GaussianLaw {
    mu: f64,
}

impl GaussianLaw {
    /// `μ = Δ/σ`, finite, in `[1e-8, 1e4]`.
    ///
    /// ```
    /// use composition::accountant::{GaussianLaw, LossLaw};
    /// assert_eq!(GaussianLaw::new(2.0).unwrap().loss_scale(), 2.0);
    /// assert!(GaussianLaw::new(0.0).is_err());
    /// ```
    pub fn new(mu: f64) -> Result<Self> {
        if !(mu.is_finite() && (1e-8..=1e4).contains(&mu)) {
            return Err(out_of_range("mu = sensitivity/sigma", mu, "[1e-8, 1e4]"));
        }
        Ok(Self { mu })
    }
}

impl LossLaw for GaussianLaw {
    fn atoms(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    fn ln_inf_mass(&self) -> f64 {
        f64::NEG_INFINITY
    }
    fn continuous_range(&self, ln_tail: f64) -> Option<ContinuousRange> {
        // Φ̄(z) ≤ e^{−z²/2}/2 for z ≥ 0.
        let z = (2.0 * (-ln_tail - std::f64::consts::LN_2).max(0.0)).sqrt();
        let m = 0.5 * self.mu * self.mu;
        Some(ContinuousRange {
            lo: m - z * self.mu,
            hi: m + z * self.mu,
            ln_below: ln_tail,
            ln_above: ln_tail,
        })
    }
    fn cell(&self, a: f64, b: f64) -> (f64, f64) {
        let (mu, m) = (self.mu, 0.5 * self.mu * self.mu);
        let c = -(mu * (2.0 * std::f64::consts::PI).sqrt()).ln();
        let g = move |l: f64| {
            let z = (l - m) / mu;
            c - 0.5 * z * z
        };
        cell_by_density(&g, a, a, b)
    }
    fn loss_scale(&self) -> f64 {
        self.mu
    }
    fn grid_unit(&self) -> Option<f64> {
        None
    }
}

/// Laplace-type loss (Laplace and the truncated Laplacian, docs/accountant.md §2.2, §2.3): atoms
/// at `±ε₀`, an atomless part with density `c·e^{ℓ/2}` on `(lo, hi) ⊂ (−ε₀, ε₀)`, and
/// possibly an atom at `+∞`.
#[derive(Debug, Clone, Copy)]
pub struct ClippedLaplaceLaw {
    eps0: f64,
    top: f64,
    bottom: f64,
    ln_c: f64,
    lo: f64,
    hi: f64,
    ln_inf: f64,
}

impl ClippedLaplaceLaw {
    /// Laplace noise of scale `b` for sensitivity `Δ`: `ε₀ = Δ/b` in `(0, 1e4]`.
    ///
    /// Output `y ~ Lap(0, b)` against `Lap(Δ, b)`: `L = ε₀` for `y ≤ 0` (P-mass ½),
    /// `L = −ε₀` for `y ≥ Δ` (P-mass `e^{−ε₀}/2`), `L = ε₀ − 2y/b` in between with
    /// density `e^{(ℓ−ε₀)/2}/4`.
    ///
    /// ```
    /// use composition::accountant::{ClippedLaplaceLaw, LossLaw};
    /// let l = ClippedLaplaceLaw::laplace(1.0).unwrap();
    /// assert_eq!(l.atoms().len(), 2);
    /// ```
    pub fn laplace(eps0: f64) -> Result<Self> {
        if !(eps0.is_finite() && (1e-8..=1e4).contains(&eps0)) {
            return Err(out_of_range("sensitivity/scale", eps0, "[1e-8, 1e4]"));
        }
        Ok(Self {
            eps0,
            top: 0.5,
            bottom: 0.5 * (-eps0).exp(),
            ln_c: -eps0 / 2.0 - 4f64.ln(),
            lo: -eps0,
            hi: eps0,
            ln_inf: f64::NEG_INFINITY,
        })
    }

    /// The truncated Laplacian of Geng et al. calibrated to `(ε, δ)` for sensitivity Δ,
    /// ε in `[1e-8, 700]` (docs/accountant.md §2.3).
    ///
    /// Density `B e^{−|y|/λ}` on `[−A, A]` with `λ = Δ/ε`, `A = λ ln(1 + (e^ε−1)/(2δ))`;
    /// against the copy shifted by Δ: `L = +∞` on `[−A, Δ − A)`, `L = ε₀ = Δ/λ` on
    /// `[Δ − A, 0]`, `L = −ε₀` on `[Δ, A]`, linear in between.
    ///
    /// ```
    /// use composition::accountant::{ClippedLaplaceLaw, LossLaw};
    /// let t = ClippedLaplaceLaw::truncated_laplace(1.0, 1e-6, 1.0).unwrap();
    /// assert!((t.ln_inf_mass().exp() / 1e-6 - 1.0).abs() < 1e-9);
    /// ```
    pub fn truncated_laplace(epsilon: f64, delta: f64, sensitivity: f64) -> Result<Self> {
        if epsilon.is_nan() || !(1e-8..=700.0).contains(&epsilon) {
            return Err(out_of_range(
                "truncated-laplace epsilon",
                epsilon,
                "[1e-8, 700]",
            ));
        }
        let tl = densities::truncated_laplace::TruncatedLaplace::new(epsilon, delta, sensitivity)
            .map_err(|_| {
            out_of_range(
                "truncated-laplace epsilon/delta",
                epsilon,
                "epsilon > 0, delta in (0, 1)",
            )
        })?;
        let lam = tl.lambda;
        let h = tl.h;
        let s = sensitivity;
        let eps0 = s / lam;
        // P-mass of y in [u, v] (in units of λ: t = y/λ), density e^{−|t|}/(2(1 − e^{−h})).
        let norm = 2.0 * (-(-h).exp_m1());
        let mass = |u: f64, v: f64| -> f64 {
            let (u, v) = (u.max(-h), v.min(h));
            if v <= u {
                return 0.0;
            }
            // ∫_u^v e^{−|t|} dt, split at 0, each piece without cancellation.
            let mut acc = 0.0;
            if u < 0.0 {
                let v0 = v.min(0.0);
                acc += v0.exp() * (-(u - v0).exp_m1());
            }
            if v > 0.0 {
                let u0 = u.max(0.0);
                acc += (-u0).exp() * (-(-(v - u0)).exp_m1());
            }
            acc / norm
        };
        let e = eps0; // s/λ in λ-units
        let inf = mass(-h, (e - h).min(h));
        let top = mass(e - h, 0.0);
        let bottom = mass(e, h);
        // Continuous: t in (max(0, e−h), min(e, h)), ℓ = e − 2t, density in ℓ:
        // e^{−t}/(2 norm) = e^{(ℓ − e)/2}/(2 norm).
        let t_lo = (e - h).max(0.0);
        let t_hi = e.min(h);
        let (lo, hi) = if t_hi > t_lo {
            (e - 2.0 * t_hi, e - 2.0 * t_lo)
        } else {
            (0.0, 0.0)
        };
        Ok(Self {
            eps0: e,
            top,
            bottom,
            ln_c: -e / 2.0 - (2.0 * norm).ln(),
            lo,
            hi,
            ln_inf: if inf > 0.0 {
                inf.ln()
            } else {
                f64::NEG_INFINITY
            },
        })
    }
}

impl LossLaw for ClippedLaplaceLaw {
    fn atoms(&self) -> Vec<(f64, f64)> {
        let mut v = Vec::new();
        if self.bottom > 0.0 {
            v.push((-self.eps0, self.bottom));
        }
        if self.top > 0.0 {
            v.push((self.eps0, self.top));
        }
        v
    }
    fn ln_inf_mass(&self) -> f64 {
        self.ln_inf
    }
    fn continuous_range(&self, ln_tail: f64) -> Option<ContinuousRange> {
        if self.hi <= self.lo {
            return None;
        }
        // The density c·e^{ℓ/2} puts at most 2c·e^{t/2} below t: cut where that is e^{ln_tail}
        // (for large ε₀ the part far below the top is negligible and would cost bins).
        let cut = 2.0 * (ln_tail - (2.0f64).ln() - self.ln_c);
        let (lo, ln_below) = if cut > self.lo && cut < self.hi {
            (cut, ln_tail)
        } else {
            (self.lo, f64::NEG_INFINITY)
        };
        Some(ContinuousRange {
            lo,
            hi: self.hi,
            ln_below,
            ln_above: f64::NEG_INFINITY,
        })
    }
    fn cell(&self, a: f64, b: f64) -> (f64, f64) {
        let (a2, b2) = (a.max(self.lo), b.min(self.hi));
        if b2 <= a2 {
            return (f64::NEG_INFINITY, f64::NEG_INFINITY);
        }
        let c = self.ln_c;
        let g = move |l: f64| c + 0.5 * l;
        cell_by_density(&g, a, a2, b2)
    }
    fn loss_scale(&self) -> f64 {
        self.eps0.min(2.0)
    }
    fn grid_unit(&self) -> Option<f64> {
        Some(self.eps0)
    }
}

/// A loss with finitely many atoms only (randomized response, docs/accountant.md §2.4).
#[derive(Debug, Clone)]
pub struct DiscreteLaw {
    atoms: Vec<(f64, f64)>,
    ln_inf: f64,
    unit: Option<f64>,
}

impl DiscreteLaw {
    /// A law of finite atoms `(loss, P-mass)` and `ln P(L = +∞)`, with no grid unit (the
    /// loss laws of a balls-in-bins epoch, [`super::allocation`]).
    pub fn from_atoms(atoms: Vec<(f64, f64)>, ln_inf: f64) -> Self {
        Self {
            atoms,
            ln_inf,
            unit: None,
        }
    }

    /// Binary randomized response with parameter ε₀ ∈ [1e-8, 700]: `L = ±ε₀` with P-masses
    /// `e^{ε₀}/(1 + e^{ε₀})` and `1/(1 + e^{ε₀})`.
    ///
    /// ```
    /// use composition::accountant::{DiscreteLaw, LossLaw};
    /// let rr = DiscreteLaw::randomized_response(1.0).unwrap();
    /// assert!((rr.atoms()[1].1 - 1f64.exp() / (1.0 + 1f64.exp())).abs() < 1e-15);
    /// ```
    pub fn randomized_response(eps0: f64) -> Result<Self> {
        if !(eps0.is_finite() && (1e-8..=700.0).contains(&eps0)) {
            return Err(out_of_range("epsilon", eps0, "[1e-8, 700]"));
        }
        let low = 1.0 / (1.0 + eps0.exp());
        let high = 1.0 / (1.0 + (-eps0).exp());
        Ok(Self {
            atoms: vec![(-eps0, low), (eps0, high)],
            ln_inf: f64::NEG_INFINITY,
            unit: Some(eps0),
        })
    }
}

impl LossLaw for DiscreteLaw {
    fn atoms(&self) -> Vec<(f64, f64)> {
        self.atoms.clone()
    }
    fn ln_inf_mass(&self) -> f64 {
        self.ln_inf
    }
    fn continuous_range(&self, _ln_tail: f64) -> Option<ContinuousRange> {
        None
    }
    fn cell(&self, _a: f64, _b: f64) -> (f64, f64) {
        (f64::NEG_INFINITY, f64::NEG_INFINITY)
    }
    fn loss_scale(&self) -> f64 {
        let m: f64 = self.atoms.iter().map(|&(x, p)| x * p).sum();
        let v: f64 = self.atoms.iter().map(|&(x, p)| p * (x - m) * (x - m)).sum();
        v.sqrt().max(self.unit.unwrap_or(0.0) / 4.0)
    }
    fn grid_unit(&self) -> Option<f64> {
        self.unit
    }
}

/// Bounded noise of Dagan & Kur (docs/accountant.md §2.5): density `∝ e^{−f(y/R)}` on `(−R, R)`
/// against its copy shifted by the sensitivity `s < 2R`. The loss
/// `ℓ(y) = f((y−s)/R) − f(y/R)` decreases in `y` on `(s − R, R)` (f convex), is `+∞` on
/// `(−R, s − R]` and `−∞` (no P-mass beyond R) above; cells are integrated in `y`.
#[derive(Debug, Clone)]
pub struct BoundedNoiseLaw {
    family: BoundedFamily,
    radius: f64,
    s: f64,
    ln_z: f64,
    ln_inf: f64,
    scale: f64,
}

impl BoundedNoiseLaw {
    /// Noise `R·X`, `X ∝ e^{−f}` of `family`, for sensitivity `s`; `s/R ∈ [1e-12, 0.5]`
    /// (a radius below twice the sensitivity leaves hardly any privacy to account).
    ///
    /// ```
    /// use composition::accountant::{BoundedNoiseLaw, LossLaw};
    /// use densities::bounded::BoundedFamily;
    /// let b = BoundedNoiseLaw::new(BoundedFamily::power(2.0).unwrap(), 10.0, 1.0).unwrap();
    /// // P(L = ∞) = P(X ≤ r − 1), about e^{−f(0.9)} = e^{−27.7} for r = 0.1.
    /// assert!(b.loss_scale() > 0.0 && b.ln_inf_mass() < -20.0);
    /// ```
    pub fn new(family: BoundedFamily, radius: f64, s: f64) -> Result<Self> {
        if !(radius.is_finite() && radius > 0.0) {
            return Err(out_of_range("radius", radius, "(0, inf)"));
        }
        let r = s / radius;
        if !(r.is_finite() && (1e-12..=0.5).contains(&r)) {
            return Err(out_of_range("sensitivity/radius", r, "[1e-12, 0.5]"));
        }
        if let BoundedFamily::Power { alpha } = family {
            if !(alpha.is_finite() && alpha > 0.0 && alpha <= 100.0) {
                return Err(out_of_range("alpha", alpha, "(0, 100]"));
            }
        }
        let mut law = Self {
            family,
            radius,
            s,
            ln_z: 0.0,
            ln_inf: f64::NEG_INFINITY,
            scale: 1.0,
        };
        // Normaliser over x ∈ (−1, 1) by composite GL on 4096 cells (the density is
        // flat in the middle and vanishes faster than any power at ±1).
        law.ln_z = law.ln_integral(-1.0, 1.0, 4096);
        law.ln_inf = law.ln_integral(-1.0, r - 1.0, 1024) - law.ln_z;
        // The loss scale from the linearisation at the centre, |ℓ'(0)|·sd(X) =
        // |f'(−r)|·sd(X) (the loss can have a heavy upper tail near the edge of the
        // overlap, which a variance would follow); sd(X) by quadrature.
        let (mut x2, mut tot) = (0.0, 0.0);
        let n = 4096;
        let h = 2.0 / n as f64;
        for i in 0..n {
            for &(x, w) in gauss_legendre8() {
                let u = -1.0 + h * (i as f64 + 0.5 + 0.5 * x);
                let lp = -law.family.f(u) - law.ln_z;
                if !lp.is_finite() {
                    continue;
                }
                let p = lp.exp() * w * 0.5 * h;
                tot += p;
                x2 += p * u * u;
            }
        }
        if tot > 0.0 {
            law.scale = (law.family.f_prime(-r).abs() * (x2 / tot).sqrt()).max(1e-12);
        }
        Ok(law)
    }

    /// Loss `f(x − r) − f(x)` at `x = y/R` (unit noise coordinates, `r = s/R`), through
    /// the shift exponents of the family (`f(|x| ± r) = f(|x|) e^{a or b}`, computed
    /// without cancellation) so that shifts down to 1e-15 keep their digits.
    fn loss_x(&self, x: f64) -> f64 {
        let r = self.s / self.radius;
        if x - r <= -1.0 {
            return f64::INFINITY;
        }
        if x >= 1.0 {
            return f64::NEG_INFINITY;
        }
        let ax = x.abs();
        if ax + r < 1.0 {
            let e = self.family.shift_exponents(ax, r);
            // x ≥ 0: f(x − r) = f(x)e^{b}; x < 0: f(x − r) = f(|x| + r) = f(|x|)e^{a}.
            let expo = if x >= 0.0 {
                0.5 * (e.sum - e.diff)
            } else {
                0.5 * (e.sum + e.diff)
            };
            return self.family.f(ax) * expo.exp_m1();
        }
        self.family.f(x - r) - self.family.f(x)
    }

    /// `ln ∫_u^v e^{−f(x)} dx` by composite 8-point GL on `n` equal cells.
    fn ln_integral(&self, u: f64, v: f64, n: usize) -> f64 {
        let h = (v - u) / n as f64;
        let mut acc = f64::NEG_INFINITY;
        for i in 0..n {
            for &(x, w) in gauss_legendre8() {
                let t = u + h * (i as f64 + 0.5 + 0.5 * x);
                acc = log_add(acc, -self.family.f(t) + (w * 0.5 * h).ln());
            }
        }
        acc
    }

    /// `x ∈ (r − 1, 1)` with `ℓ(x) = l` (bisection; the loss decreases in x).
    fn x_of_loss(&self, l: f64) -> f64 {
        let r = self.s / self.radius;
        self.x_of_loss_in(l, r - 1.0, 1.0)
    }

    /// [`Self::x_of_loss`] for increasing losses: each root is bracketed next to the
    /// previous one (x decreases), by a step extrapolated from the last two and doubled
    /// until it brackets; then bisected to the last ulp. The same roots as one by one,
    /// a fraction of the loss evaluations when the edges are a fine grid.
    fn xs_of_losses(&self, edges: &[f64]) -> Vec<f64> {
        let r = self.s / self.radius;
        let mut xs: Vec<f64> = Vec::with_capacity(edges.len());
        for (i, &l) in edges.iter().enumerate() {
            if i < 2 || edges[i - 1].partial_cmp(&l) != Some(std::cmp::Ordering::Less) {
                xs.push(self.x_of_loss(l));
                continue;
            }
            let (x1, x2) = (xs[i - 1], xs[i - 2]);
            let b = x1; // ℓ(x1) ≤ edges[i−1] < l: the root is below x1
            let mut step = (x2 - x1).max(0.0) * 1.5 + f64::EPSILON * x1.abs().max(1e-300);
            let mut a = b - step;
            let mut found = false;
            for _ in 0..60 {
                if a <= r - 1.0 {
                    break;
                }
                if self.loss_x(a) > l {
                    found = true;
                    break;
                }
                step *= 2.0;
                a = b - step;
            }
            xs.push(if found {
                self.x_of_loss_in(l, a, b)
            } else {
                self.x_of_loss_in(l, r - 1.0, b)
            });
        }
        xs
    }

    /// Root of `ℓ(x) = l` on `[a, b]` with `ℓ(a) > l ≥ ℓ(b)` (or the domain ends),
    /// narrowed to adjacent floats: the same bracket bisection would end on, found by
    /// regula falsi with the Illinois modification (a handful of loss evaluations instead
    /// of ~50), falling back to bisection whenever a step fails to halve the bracket. The
    /// invariant `ℓ(a) > l ≥ ℓ(b)` is kept at every step, so each cell's output interval
    /// still holds only losses on its side of the edge.
    fn x_of_loss_in(&self, l: f64, a: f64, b: f64) -> f64 {
        let (mut a, mut b) = (a, b);
        // g = ℓ − l at the ends, when finite (the domain ends give ±∞: bisect first).
        let mut ga = self.loss_x(a) - l;
        let mut gb = self.loss_x(b) - l;
        let mut side = 0i8; // which end the last two steps kept (Illinois)
        for _ in 0..200 {
            let w = b - a;
            let mid = 0.5 * (a + b);
            if mid <= a || mid >= b {
                break;
            }
            let falsi = if ga.is_finite() && gb.is_finite() && ga > gb {
                a + w * ga / (ga - gb)
            } else {
                f64::NAN
            };
            let m = if falsi > a && falsi < b { falsi } else { mid };
            let gm = self.loss_x(m) - l;
            if gm > 0.0 {
                a = m;
                ga = gm;
                if side == -1 {
                    gb *= 0.5;
                }
                side = -1;
            } else {
                b = m;
                gb = gm;
                if side == 1 {
                    ga *= 0.5;
                }
                side = 1;
            }
            if b - a > 0.5 * w {
                // A slow step (one end stuck): bisect once.
                let mid = 0.5 * (a + b);
                if mid <= a || mid >= b {
                    break;
                }
                let gm = self.loss_x(mid) - l;
                if gm > 0.0 {
                    a = mid;
                    ga = gm;
                } else {
                    b = mid;
                    gb = gm;
                }
                side = 0;
            }
        }
        0.5 * (a + b)
    }
}

impl LossLaw for BoundedNoiseLaw {
    fn atoms(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    fn log_convex_tail(&self) -> bool {
        true
    }
    fn ln_inf_mass(&self) -> f64 {
        self.ln_inf
    }
    fn continuous_range(&self, ln_tail: f64) -> Option<ContinuousRange> {
        // Walk out from the centre in steps of the scale until the tail mass in x is below
        // e^{ln_tail} (tails integrated by GL on the x-interval, which is monotone).
        let r = self.s / self.radius;
        let tail_above = |l: f64| self.ln_integral(r - 1.0, self.x_of_loss(l), 256) - self.ln_z;
        let tail_below = |l: f64| self.ln_integral(self.x_of_loss(l), 1.0, 256) - self.ln_z;
        // Heavy upper tails (loss → ∞ at the left edge of the overlap, mass falling like
        // a power of the loss) are cut at 1e4 scales: their mass is then returned with
        // the range. A tail still falling fast there (a wide radius: the loss is large
        // only where the density is already tiny, and the mass beyond 1e4 scales can be
        // 1e-128 while δ asks for 1e-250) is followed on, up to 1e8 scales, while each
        // step divides it by at least e (docs/accountant.md §2.5).
        let cap = 1e4 * self.scale;
        let far = 1e8 * self.scale;
        let centre = self.loss_x(0.0);
        let mut hi = centre + self.scale;
        let mut w = self.scale;
        let mut t_hi = tail_above(hi);
        let mut falling = true;
        while t_hi > ln_tail && (hi - centre < cap || falling && hi - centre < far) {
            hi += w;
            w *= 1.5;
            let t = tail_above(hi);
            falling = t < t_hi - 1.0;
            t_hi = t;
        }
        let mut lo = centre - self.scale;
        let mut w = self.scale;
        while tail_below(lo) > ln_tail && centre - lo < cap {
            lo -= w;
            w *= 1.5;
        }
        // The cut masses by the same quadrature, doubled as a margin for its error.
        Some(ContinuousRange {
            lo,
            hi,
            ln_below: tail_below(lo) + std::f64::consts::LN_2,
            ln_above: t_hi + std::f64::consts::LN_2,
        })
    }
    fn cell(&self, a: f64, b: f64) -> (f64, f64) {
        self.cells(&[a, b])[0]
    }
    fn cells(&self, edges: &[f64]) -> Vec<(f64, f64)> {
        let xs = self.xs_of_losses(edges);
        let mut out = Vec::with_capacity(edges.len().saturating_sub(1));
        for i in 0..edges.len().saturating_sub(1) {
            let (a, xa, xb) = (edges[i], xs[i], xs[i + 1]);
            // loss in (a, b] ⇔ x in [x(b), x(a)).
            let (u, v) = (xb, xa);
            if v <= u {
                out.push((f64::NEG_INFINITY, f64::NEG_INFINITY));
                continue;
            }
            let ln_p = |t: f64| -self.family.f(t) - self.ln_z;
            let loss = |t: f64| self.loss_x(t);
            let (lp, lm) = cell_in_output(u, v, 256.0, a, &ln_p, &loss);
            out.push((lp, lm));
        }
        out
    }
    fn loss_scale(&self) -> f64 {
        self.scale
    }
    fn grid_unit(&self) -> Option<f64> {
        None
    }
}
