//! Privacy-loss laws of single mechanisms as the tilted accountant needs them: finite
//! atoms, the `+∞` atom in log space, and per-cell masses of the atomless part
//! (docs/accountant.md §1 for the loss, §2 for the mechanisms, §3 for the cells).
//!
//! For a cell `I = (a, b]` of loss values the accountant needs two numbers of the atomless
//! part `L_c`: its P-mass `P(I)` and `m(I) = E_P[1 − e^{a − L}; L ∈ I]`. The pair fixes
//! both the connect-the-dots split of the cell (pessimistic) and the merged atom
//! `a − ln(1 − m/P)` (optimistic; see [`crate::accountant::grid::lattice`]). Both are returned as natural
//! logarithms so that cells of mass 1e-300 and below keep their digits; both come from
//! an 8-point Gauss–Legendre rule on an integrand that is analytic on a cell much
//! narrower than its scale (relative error far below [`CELL_REL_ERR`], tested against
//! closed forms).

use crate::accountant::core::numeric::log_add;
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
    /// `ln` of the `+∞` atom's mass on the dominated side: [`Self::ln_inf_mass`] unless
    /// that atom holds mass cut from finite losses (a law on the integers cut where its
    /// tails are negligible), which the dominating side moves to `+∞` and the dominated
    /// side drops (docs/accountant.md §2.13).
    fn ln_inf_mass_lower(&self) -> f64 {
        self.ln_inf_mass()
    }
    /// A bound on the relative error of the masses [`Self::atoms`] gives: each atom is
    /// widened by it, up on the dominating side and down on the dominated (at least
    /// [`CELL_REL_ERR`], the default: masses a few roundings from the exact ones).
    fn mass_rel_err(&self) -> f64 {
        CELL_REL_ERR
    }
    /// A bound on the absolute error of the losses [`Self::atoms`] gives (0: exact): the
    /// dominating side takes each atom that much higher, the dominated side that much
    /// lower (δ grows with every loss, docs/accountant.md §5).
    fn atom_position_err(&self) -> f64 {
        0.0
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
    /// parts' cells, [`crate::accountant::sampling::revealed::SharedPart`]). Empty: the law's own masses.
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

/// `ln ∫_u^v e^{g(ℓ)} dℓ` and `ln ∫_u^v (1 − e^{a−ℓ}) e^{g(ℓ)} dℓ` (`a ≤ u < v`) by 8-point
/// Gauss–Legendre in log space.
pub(crate) fn cell_by_density(g: &dyn Fn(f64) -> f64, a: f64, u: f64, v: f64) -> (f64, f64) {
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
