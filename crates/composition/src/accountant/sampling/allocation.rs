//! Balls-in-bins epochs (random allocation): certified upper *and* lower loss laws of one
//! epoch (docs/accountant.md §2.10).
//!
//! Each example sits in one of an epoch's t steps, chosen uniformly. Against the dataset
//! without it, an epoch's outputs (in units of σ, shift `μ = s/σ`) are the pair
//! `P = (1/t) Σ_j N(μe_j, I_t)` and `Q = N(0, I_t)`, which dominates every pair of
//! neighbouring datasets in both orders (the others' placements are independent of the
//! example's, so conditioning on them and joint convexity leave a translate of this pair).
//! Its likelihood ratio is `S = U/t` with `U = Σ_j X_j`, `X_j = e^{μy_j − μ²/2}` i.i.d.
//! under Q (log-normal, mean 1), and a pair is fixed by the Q-law of its likelihood ratio:
//! `δ_{P‖Q}(ε) = E_Q[(S − e^ε)_+]`, `δ_{Q‖P}(ε) = E_Q[(1 − e^ε S)_+]`, both convex in S.
//!
//! - **Upper** (a dominating pair): a mean-preserving *spread* of the Q-law of U, i.e. U
//!   larger in the convex order, gives a pair that leaks at least as much at every ε, in
//!   both directions and after composition (a spread is a garbling in reverse). Each cell
//!   `[ih, (i+1)h)` of X is split onto its two ends keeping mass and mean; sums of grid
//!   laws stay on the grid (FFT), coarser grids split each point onto its neighbours, and
//!   mass above a cap C goes to C keeping its mass, its excess mean to `+∞` (P-mass
//!   `E_Q[(U − C)_+]/t`, no Q-mass). Every error bound is added as mass (δ only grows).
//! - **Lower** (a dominated pair): a mean-preserving *contraction*, each cell merged into
//!   its barycentre, and sums merged bucket by bucket. The barycentres are carried as an
//!   interval (a moment from below and one from above) with a lower bound on the mass:
//!   for `P‖Q`, δ only shrinks when mass is removed or moved down, for `Q‖P` when it is
//!   removed or moved up, so each direction takes its end of the interval.
//!
//! The FFT sums are enclosed bin by bin: each product is computed under a few
//! exponential tilts `e^{θi}` (the tails of U are many orders below its body) and each bin
//! keeps the tilt with the smallest round-off bound
//! `4η(n)(‖ã‖₂‖b̃‖₁ + ‖ã‖₁‖b̃‖₂)·e^{s_a + s_b − θk}` (Higham's normwise bound for each
//! transform, fft.rs, carried through the product and the inverse). The cells of X are
//! integrated by 8-point Gauss–Legendre in the normal variable, charged [`CELL_REL_ERR`]
//! relative; the far tails of the final laws (mass below `e^{ln_tail}` each) go to `+∞`
//! or up to the lowest loss kept on the upper side and are dropped on the lower side.
//!
//! **Limits.** One uniform grid per sum: the cap on X (where its mean above the cap is
//! `e^{ln_tail}`) grows like `e^{μ(μ + 7.6)}`, and past μ ≈ 1.2 the step the bin budget
//! allows exceeds X's own scale, so the bracket widens (it stays certified).
//! `sampling=allocation` in a SPEC takes these laws ([`crate::accountant::input::spec::MechanismSpec::laws`]
//! and `lower_laws`).

use crate::accountant::core::fft::{eta, fast_len, transforms};
use crate::accountant::core::numeric::log_add;
use crate::accountant::laws::{gauss_legendre8, DiscreteLaw, LossLaw, CELL_REL_ERR};
use crate::accountant::sampling::max_statistic::MAX_STEPS;
use crate::error::{out_of_range, Result};
use densities::normal::{cdf, sf, upper_quantile};
use densities::outward;
use rustfft::num_complex::Complex;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// How finely an epoch's likelihood ratio is discretised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpochGrid {
    /// Cells of one step's ratio X per standard deviation of X (the first step; later
    /// sums of m steps use a step up to √m times coarser).
    pub cells_per_sd: f64,
    /// `ln` of the P-mass allowed at `+∞` from the cap on one step's ratio.
    pub ln_tail: f64,
    /// Most cells of one step's grid (the step is coarsened to fit).
    pub max_bins: usize,
}

impl Default for EpochGrid {
    fn default() -> Self {
        Self {
            cells_per_sd: 100.0,
            ln_tail: -32.0,
            max_bins: 1 << 19,
        }
    }
}

/// The four loss laws of one epoch: upper and lower, in each direction.
#[derive(Debug, Clone)]
pub struct EpochLaws {
    /// Dominating law of `P‖Q` (the example present against absent).
    pub remove_upper: DiscreteLaw,
    /// Dominating law of `Q‖P`.
    pub add_upper: DiscreteLaw,
    /// Dominated law of `P‖Q`.
    pub remove_lower: DiscreteLaw,
    /// Dominated law of `Q‖P`.
    pub add_lower: DiscreteLaw,
    /// Step of the first grid (units of X, whose mean is 1).
    pub step: f64,
    /// The top of one step's grid: its cap, or where the branch of large steps begins.
    pub cap: f64,
}

/// The laws of `mu = s/σ ∈ [1e-6, 3]` with `t ∈ [1, 1e6]` steps an epoch, computed once
/// per process for each `(mu, t, grid)` and shared.
pub fn epoch_laws(mu: f64, t: u64, grid: EpochGrid) -> Result<Arc<EpochLaws>> {
    type Key = (u64, u64, u64, u64, usize);
    static CACHE: OnceLock<Mutex<HashMap<Key, Arc<EpochLaws>>>> = OnceLock::new();
    check(mu, t)?;
    let key = (
        mu.to_bits(),
        t,
        grid.cells_per_sd.to_bits(),
        grid.ln_tail.to_bits(),
        grid.max_bins,
    );
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(l) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(l.clone());
    }
    // Built outside the lock (an interrupted build is not kept); the same key built twice
    // at once gives the same laws.
    let laws = Arc::new(build(mu, t, grid)?);
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, laws.clone());
    Ok(laws)
}

/// Largest shift `μ = s/σ` an epoch's laws are built for: beyond, X's spread `e^{μ²}`
/// leaves the grid a few cells for X's body or overflows, and the brackets become
/// useless or the builds slow (σ = 0.3 at t = 50 took over a minute; shifts of 10 and 20
/// overflowed).
pub const MAX_SHIFT: f64 = 3.0;

fn check(mu: f64, t: u64) -> Result<()> {
    if !(mu.is_finite() && (1e-6..=MAX_SHIFT).contains(&mu)) {
        return Err(out_of_range("sensitivity/sigma", mu, "[1e-6, 3]"));
    }
    if !(1..=MAX_STEPS).contains(&t) {
        return Err(out_of_range("steps per epoch", t as f64, "[1, 1e6]"));
    }
    Ok(())
}

/// The Q-law of a sum of steps' ratios on the grid `i·h`, from above: masses at the grid
/// points (a spread of the true law, plus error bounds), and `xi`, the Q-moment sent to
/// `+∞` (`lim M·Q(M)`: P-mass `xi/t`, no Q-mass).
#[derive(Debug, Clone)]
struct Upper {
    h: f64,
    w: Vec<f64>,
    xi: f64,
}

/// The Q-law of a sum from below: per bucket i a mass `w` (at most the merged true mass)
/// whose position lies in `[ih + pm/w, ih + pp/w]` (offsets from the bucket's start keep
/// the moments' round-off on the scale of the masses').
#[derive(Debug, Clone)]
struct Lower {
    h: f64,
    w: Vec<f64>,
    pm: Vec<f64>,
    pp: Vec<f64>,
}

const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// One step's ratio `X = e^{μZ − μ²/2}` on cells of width h up to `k·h`: the spread on
/// the grid points and the barycentres of the cells, and the z at the top of the last
/// cell. Above the top, X goes to the cap as Q-mass with its whole mean at `+∞` (`cut =
/// false`), or is left out (`cut = true`: the measure of `X < x(z_top)`, for
/// [`Branch`]).
fn one_step(mu: f64, h: f64, k: usize, cut: bool) -> (Upper, Lower, f64) {
    let infl = 1.0 + CELL_REL_ERR;
    let defl = 1.0 - CELL_REL_ERR;
    let z_of = |x: f64| (x.ln() + 0.5 * mu * mu) / mu;
    let gl = gauss_legendre8();
    let mut up = vec![0.0; k + 1];
    let (mut lw, mut lpm, mut lpp) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
    let mut z_top = z_of(h);
    for i in 0..k {
        let a = i as f64 * h;
        // (∫ dQ, ∫ (x − a)/h dQ, ∫ (a + h − x)/h dQ) over the cell.
        let (m, hi, lo) = if i == 0 {
            // (−∞, z(h)] in closed form: Q(X ≤ h) and E[X; X ≤ h] = Φ(z − μ).
            let z1 = z_of(h);
            let m = cdf(z1);
            let hi = cdf(z1 - mu) / h;
            (m, hi, (m - hi).max(0.0) + 4.0 * f64::EPSILON * m)
        } else {
            let (za, zb) = (z_of(a), z_of(a + h));
            z_top = zb;
            let pieces = (((zb - za) / 0.25).ceil() as usize).max(1);
            let pw = (zb - za) / pieces as f64;
            let (mut m, mut hi, mut lo) = (0.0, 0.0, 0.0);
            for p in 0..pieces {
                let mid = za + (p as f64 + 0.5) * pw;
                for &(node, wt) in gl.iter() {
                    let z = mid + 0.5 * pw * node;
                    let dens = 0.5 * pw * wt * (-0.5 * z * z - LN_SQRT_2PI).exp();
                    let x = (mu * z - 0.5 * mu * mu).exp();
                    let f = ((x - a) / h).clamp(0.0, 1.0);
                    m += dens;
                    hi += dens * f;
                    lo += dens * (1.0 - f);
                }
            }
            (m, hi, lo)
        };
        up[i] += lo * infl;
        up[i + 1] += hi * infl;
        if m > 0.0 {
            // Barycentre a + h·hi/m, each end moved by the quadrature's error.
            let r = hi / m;
            let om = outward::down_by(h * (r * defl / infl).clamp(0.0, 1.0), 2);
            let op = outward::up_by(h * (r * infl / defl).clamp(0.0, 1.0), 2).min(h);
            let w = m * defl;
            lw[i] = w;
            lpm[i] = outward::mul_down(w, om);
            lpp[i] = outward::mul_up(w, op);
        }
    }
    // Above the cap: all the Q-mass at the cap, its whole mean (more than the excess) at +∞.
    let xi = if cut {
        0.0
    } else {
        let zk = z_of(k as f64 * h);
        up[k] += sf(zk) * infl;
        sf(zk - mu) * infl
    };
    (
        Upper { h, w: up, xi },
        Lower {
            h,
            w: lw,
            pm: lpm,
            pp: lpp,
        },
        z_top,
    )
}

/// The epochs in which some step's ratio exceeds the grid's top (docs/accountant.md
/// §2.10, "Large shifts"). With K the number of steps whose `Z ≥ z_top` (ratio `X ≥ b`),
/// the law of U is the mixture of its part on `K = 0` (the steps' measures cut at the top,
/// summed on the grid) and its part on `K ≥ 1`, split further by the first such step j*
/// and the geometric cell `[w_i, w_{i+1})` its ratio falls in. On that event `U ≥ w_i` and
/// `E[U] = E[X | cell] + (j* − 1)E[X | X < b] + (t − j*)`, between `E[X | cell] + (t −
/// 1)E[X | X < b]` and `E[X | cell] + t − 1`. Upper side (P‖Q, increasing and convex in
/// U): each event's U is at most `w_{i+1} + R`, R the other steps, dominated in the
/// increasing convex order by Scarf's law of R's mean and variance bounds
/// ([`scarf_atoms`]), whose atoms are spread onto a geometric grid up to a far point c;
/// Q‖P: the whole Q-mass at b (δ_{Q‖P} only grows when Q-mass moves down). Lower side:
/// each event merged into its barycentre. A mixture of dominating (dominated) laws with
/// the same weights dominates (is dominated by) the mixture, so both sides stay certified.
#[derive(Debug, Clone)]
struct Branch {
    /// A lower bound on U in the branch.
    b: f64,
    /// An upper bound on `Q(K ≥ 1)`.
    mass_up: f64,
    /// Upper side of P‖Q: `(position, Q-mass)` on the geometric grid.
    upper: Vec<(f64, f64)>,
    /// Q-moment sent to `+∞` (P-mass `xi/t`): the excess past the grid's last point.
    xi: f64,
    /// Lower side: `(lowest, highest barycentre, Q-mass from below)` per event.
    lower: Vec<(f64, f64, f64)>,
}

/// Cells of the branch's ratio per unit of `ln X` (2^11: a cell moves the loss by at most
/// 4.9e-4, below the accountant's steps).
const BRANCH_CELLS_PER_LN: f64 = 2048.0;

impl Branch {
    /// The branch of `t` steps cut at `z_top` (`x(z_top) ≥ top`). The first big step is
    /// j with Q-probability `(1 − p)^{j−1}·Q(cell)`, `p = Q(Z ≥ z_top)`: the events of
    /// one cell weigh `A·Q(cell)`, `A = (1 − (1 − p)^t)/p`. Cell masses and moments are
    /// differences of `Φ̄` (`E_Q[X; Z ≥ z] = Φ̄(z − μ)`, the log-normal's tilt).
    ///
    /// The grid's far point `c = t·x(z_c)`, z_c where a step's mean above `x(z_c)` is
    /// about `e^{ln_tail}/(2t)`: what lies past it goes to `+∞` with its excess mean.
    fn new(mu: f64, z_top: f64, top: f64, t: u64, ln_tail: f64) -> Self {
        // sf is accurate to about 1e-16 relative, and its argument z − μ to u|z|: 1e-13
        // covers both, and the ln1p/expm1 chains below.
        const REL: f64 = 1e-13;
        let tf = t as f64;
        let x_of = |z: f64| (mu * z - 0.5 * mu * mu).exp();
        let b = x_of(z_top).min(top) * (1.0 - REL);
        let p = sf(z_top);
        let (pl, pu) = (p * (1.0 - REL), p * (1.0 + REL));
        let mass_up = (-(tf * (-pu).ln_1p()).exp_m1() * (1.0 + REL)).min(1.0);
        // A from below and above (decreasing in p, at most t).
        let a_of = |p: f64| {
            if p < 1e-300 {
                tf
            } else {
                (-(tf * (-p).ln_1p()).exp_m1() / p).min(tf)
            }
        };
        let (a_lo, a_hi) = (a_of(pu) * (1.0 - REL), (a_of(pl) * (1.0 + REL)).min(tf));
        // E[X | X < b] from below: (1 − Φ̄(z_top − μ))/(1 − p), at most 1.
        let body_mean_lo = (-(sf(z_top - mu) * (1.0 + REL)).min(1.0)).ln_1p() - (-pl).ln_1p();
        let body_mean_lo = (body_mean_lo.exp() * (1.0 - REL)).min(1.0);
        // The far point: past it, what the upper side spreads goes to +∞ with its excess.
        let z_c = mu + upper_quantile((ln_tail - (2.0 * tf).ln()).exp());
        let c = tf * x_of(z_c) * (1.0 + REL);
        let mut lower = Vec::new();
        // The upper side on the geometric grid g_j = b·e^{j/2048} up to c.
        let finite_c = c.is_finite() && c > b;
        let n_g = if finite_c {
            (((c / b).ln() * BRANCH_CELLS_PER_LN).ceil() as usize + 1).min(1 << 20)
        } else {
            1
        };
        let g: Vec<f64> = (0..=n_g)
            .map(|j| b * (j as f64 / BRANCH_CELLS_PER_LN).exp())
            .collect();
        let mut up_w = vec![0.0; g.len()];
        let mut excess = 0.0;
        // The other steps R: mean at most t − 1, variance at most (t − 1)e^{μ²}/(1 − p);
        // the Scarf law R* of that mean and variance dominates R in the increasing
        // convex order (scarf_atoms), and U = W + R ≤ w_hi + R* on a cell's events.
        let v = (tf - 1.0) * (mu * mu).exp() / (1.0 - pu) * (1.0 + REL);
        let (rstar, r_excess) = scarf_atoms(tf - 1.0, v);
        // Cells in z: [z_i, z_{i+1}), the last one open above.
        let dz = 1.0 / (BRANCH_CELLS_PER_LN * mu);
        let z_end = if finite_c {
            (c.ln() + 0.5 * mu * mu) / mu
        } else {
            z_top
        };
        let cells = (((z_end - z_top) / dz).ceil().max(0.0) as usize).min(1 << 20);
        let (mut s_q, mut s_m) = (p, sf(z_top - mu));
        for i in 0..=cells {
            let last = i == cells;
            let (n_q, n_m, w_hi) = if last {
                (0.0, 0.0, f64::INFINITY)
            } else {
                let z = z_top + (i + 1) as f64 * dz;
                (sf(z), sf(z - mu), x_of(z) * (1.0 + REL))
            };
            let z_lo = z_top + i as f64 * dz;
            let w_lo = if i == 0 { b } else { x_of(z_lo) * (1.0 - REL) };
            // Q(cell) and E[X; cell] from below and above (differences of Φ̄).
            let q_lo = (s_q * (1.0 - REL) - n_q * (1.0 + REL)).max(0.0);
            let q_hi = s_q * (1.0 + REL) - n_q * (1.0 - REL);
            let e_lo = (s_m * (1.0 - REL) - n_m * (1.0 + REL)).max(0.0);
            let e_hi = s_m * (1.0 + REL) - n_m * (1.0 - REL);
            (s_q, s_m) = (n_q, n_m);
            if q_hi <= 0.0 {
                continue;
            }
            let m_hi = outward::mul_up(a_hi, q_hi);
            if last || !w_hi.is_finite() {
                // The open cell (U ≥ w_lo): its Q-mass at the last point at or below
                // w_lo, its whole mean (A·(E[X; cell] + (t − 1)Q(cell)) at most) at +∞.
                let j = g.iter().rposition(|&x| x <= w_lo).unwrap_or(0);
                up_w[j] += m_hi;
                excess += a_hi * (e_hi + (tf - 1.0) * q_hi) * (1.0 + REL);
            } else {
                // Each atom of w_hi + R*, spread onto its two grid points (mean kept or
                // raised), clamped up to b below, its excess past the top at +∞.
                excess += m_hi * r_excess;
                for &(r, pr) in &rstar {
                    let mass = m_hi * pr * (1.0 + REL);
                    let u = w_hi + r;
                    spread_onto(&g, &mut up_w, &mut excess, u, mass);
                }
            }
            let m_lo = a_lo * q_lo * (1.0 - REL);
            if m_lo > 0.0 && (e_hi / q_lo).is_finite() {
                let x_lo = (e_lo / q_hi).max(w_lo);
                let x_hi = (e_hi / q_lo).min(w_hi);
                let g_lo = (x_lo + (tf - 1.0) * body_mean_lo) * (1.0 - REL);
                let g_hi = (x_hi + (tf - 1.0)) * (1.0 + REL);
                lower.push((g_lo, g_hi, m_lo));
            }
        }
        let upper: Vec<(f64, f64)> = g
            .iter()
            .zip(&up_w)
            .filter(|(_, &w)| w > 0.0)
            .map(|(&x, &w)| (x, outward::up(w * (1.0 + 1e-12))))
            .collect();
        let xi = outward::up(excess * (1.0 + 1e-12));
        Branch {
            b,
            mass_up,
            upper,
            xi,
            lower,
        }
    }
}

/// Points of the Scarf law's spread: `T` at `sinh(j/8)`, `|j| ≤ 120` (to 1.6e6).
const SCARF_POINTS: i32 = 120;

/// Atoms `(r, probability)` of a law that dominates, in the increasing convex order, every
/// law of mean at most `m` and variance at most `v`, and the mean it leaves beyond its
/// last atom (per unit of mass, sent to `+∞` by the caller).
///
/// Scarf's bound: over such laws, `sup E[(R − s)_+] = ½(√(v + (s − m)²) − (s − m))`,
/// increasing in m and v. That is the call function of `R* = m + √v·T`, `T` with
/// `E[(T − y)_+] = ½(√(1 + y²) − y)` (density `½(1 + y²)^{−3/2}`, CDF
/// `½(1 + y/√(1 + y²))`, `E[T; T ≤ y] = −½(1 + y²)^{−1/2}`), so R* dominates them all.
/// Its cells between the points are spread onto their ends (mean kept; rounded so that
/// it only grows), its left tail moved up to the first point, its right tail's mass to
/// the last point with its excess mean returned.
fn scarf_atoms(m: f64, v: f64) -> (Vec<(f64, f64)>, f64) {
    let sv = v.sqrt();
    let s_of = |y: f64| (1.0 + y * y).sqrt();
    // F(y) and 1 − F(y) without cancellation.
    let cdf_t = |y: f64| {
        let s = s_of(y);
        if y <= 0.0 {
            0.5 / (s * (s - y))
        } else {
            1.0 - 0.5 / (s * (s + y))
        }
    };
    let sf_t = |y: f64| {
        let s = s_of(y);
        if y >= 0.0 {
            0.5 / (s * (s + y))
        } else {
            1.0 - 0.5 / (s * (s - y))
        }
    };
    let ys: Vec<f64> = (-SCARF_POINTS..=SCARF_POINTS)
        .map(|j| (j as f64 / 8.0).sinh())
        .collect();
    let mut w = vec![0.0; ys.len()];
    w[0] += cdf_t(ys[0]);
    for j in 0..ys.len() - 1 {
        let (a, b) = (ys[j], ys[j + 1]);
        let mass = if b <= 0.0 {
            cdf_t(b) - cdf_t(a)
        } else if a >= 0.0 {
            sf_t(a) - sf_t(b)
        } else {
            1.0 - cdf_t(a) - sf_t(b)
        };
        // E[T − a; cell] = ½(1/s_a − 1/s_b) − a·mass, its share at b raised by a bound on
        // the rounding of that difference (the mean only grows).
        let moment = 0.5 * (1.0 / s_of(a) - 1.0 / s_of(b)) - a * mass;
        let slack = 8.0 * f64::EPSILON * (0.5 / s_of(a) + a.abs() * mass);
        let up = ((moment + slack) / (b - a) * (1.0 + 1e-12)).clamp(0.0, mass);
        w[j] += mass - up;
        w[j + 1] += up;
    }
    let last = *ys.last().expect("points");
    w[ys.len() - 1] += sf_t(last);
    let tail = 0.5 / (s_of(last) + last) * (1.0 + 1e-12);
    let atoms = ys
        .iter()
        .zip(&w)
        .filter(|(_, &p)| p > 0.0)
        .map(|(&y, &p)| (m + sv * y, p * (1.0 + 1e-12)))
        .collect();
    (atoms, sv * tail)
}

/// Adds `mass` at `u` to the grid `g` (increasing), spread onto the two points around it
/// with its mean kept or raised; below `g[0]` it is moved up to `g[0]`, past the last
/// point it goes there with its excess mean added to `excess`.
fn spread_onto(g: &[f64], w: &mut [f64], excess: &mut f64, u: f64, mass: f64) {
    let n = g.len();
    if u.is_nan() || u <= g[0] {
        w[0] += mass;
        return;
    }
    if u >= g[n - 1] {
        w[n - 1] += mass;
        *excess += mass * (u - g[n - 1]) * (1.0 + 1e-12);
        return;
    }
    let mut j = (((u / g[0]).ln() * BRANCH_CELLS_PER_LN) as usize).min(n - 2);
    while j + 1 < n - 1 && g[j + 1] <= u {
        j += 1;
    }
    while j > 0 && g[j] > u {
        j -= 1;
    }
    let th = ((u - g[j]) / (g[j + 1] - g[j]) * (1.0 + 1e-12) + 1e-15).clamp(0.0, 1.0);
    w[j] += mass * (1.0 - th);
    w[j + 1] += mass * th;
}

/// The upper law on the grid `2h`: each odd point split in halves onto its neighbours.
fn coarsen_upper(u: &Upper) -> Upper {
    let n = u.w.len().div_ceil(2) + 1;
    let mut w = vec![0.0; n];
    for (i, &x) in u.w.iter().enumerate() {
        if i % 2 == 0 {
            w[i / 2] += x;
        } else {
            let half = x * 0.5;
            let half = if half * 2.0 == x {
                half
            } else {
                outward::up(half)
            };
            w[i / 2] += half;
            w[i / 2 + 1] += half;
        }
    }
    for x in &mut w {
        *x = outward::up(*x);
    }
    Upper {
        h: 2.0 * u.h,
        w,
        xi: u.xi,
    }
}

/// The lower law on buckets of width `2h`: pairs of buckets merged.
fn coarsen_lower(l: &Lower) -> Lower {
    let n = l.w.len().div_ceil(2);
    let (mut w, mut pm, mut pp) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for i in 0..l.w.len() {
        // An odd bucket starts h into its merged one.
        let shift = if i % 2 == 1 { l.h } else { 0.0 };
        w[i / 2] += l.w[i];
        pm[i / 2] += l.pm[i] + outward::mul_down(l.w[i], shift);
        pp[i / 2] += l.pp[i] + outward::mul_up(l.w[i], shift);
    }
    for j in 0..n {
        w[j] = outward::down(w[j]);
        pm[j] = outward::down(pm[j]);
        pp[j] = outward::up(pp[j]);
    }
    Lower {
        h: 2.0 * l.h,
        w,
        pm,
        pp,
    }
}

/// An array's tilt by θ: `s = max_i(ln a_i + θi)` and the ℓ1 and ℓ2 norms of the
/// entries `e^{ln a_i + θi − s}` (rounded up), from the logarithms of its entries.
fn tilt_norms(ln_a: &[f64], theta: f64) -> (f64, f64, f64) {
    let s = ln_a
        .iter()
        .enumerate()
        .map(|(i, &x)| x + theta * i as f64)
        .fold(f64::NEG_INFINITY, f64::max);
    if s == f64::NEG_INFINITY {
        return (s, 0.0, 0.0);
    }
    let (mut l1, mut l2) = (0.0, 0.0);
    for (i, &x) in ln_a.iter().enumerate() {
        if x > f64::NEG_INFINITY {
            let v = (x + theta * i as f64 - s).exp();
            l1 += v;
            l2 += v * v;
        }
    }
    (s, l1 * (1.0 + 1e-12), l2.sqrt() * (1.0 + 1e-12))
}

/// The tilted entries of [`tilt_norms`], transformed (length n).
fn tilted_transform(ln_a: &[f64], theta: f64, s: f64, n: usize) -> Vec<Complex<f64>> {
    let mut out = vec![Complex::new(0.0, 0.0); n];
    for (i, &x) in ln_a.iter().enumerate() {
        if x > f64::NEG_INFINITY {
            out[i].re = (x + theta * i as f64 - s).exp();
        }
    }
    transforms(n).forward(&mut out);
    out
}

/// Enclosures `(value, bound)` of the products `a_p * b_q` (nonnegative arrays, indices
/// into `arrays`) on the first `len` bins. Under the tilt θ the round-off of bin k is at
/// most `4η(n)(‖ã‖₂‖b̃‖₁ + ‖ã‖₁‖b̃‖₂)·e^{s_a + s_b − θk}` (Higham's normwise FFT bound,
/// fft.rs, through the product and the inverse); each bin takes the tilt whose bound is
/// least, and only the tilts that are least somewhere are transformed.
fn convolve(
    arrays: &[&[f64]],
    products: &[(usize, usize)],
    len: usize,
    thetas: &[f64],
) -> Result<Vec<(Vec<f64>, Vec<f64>)>> {
    let full = products
        .iter()
        .map(|&(p, q)| arrays[p].len() + arrays[q].len() - 1)
        .max()
        .unwrap_or(1);
    let n = fast_len(full);
    let len = len.min(n);
    let e = 4.0 * eta(n);
    let logs: Vec<Vec<f64>> = arrays
        .iter()
        .map(|a| {
            a.iter()
                .map(|&x| if x > 0.0 { x.ln() } else { f64::NEG_INFINITY })
                .collect()
        })
        .collect();
    let norms: Vec<Vec<(f64, f64, f64)>> = thetas
        .iter()
        .map(|&th| logs.iter().map(|a| tilt_norms(a, th)).collect())
        .collect();
    // ln of each product's bound at k = 0 under each tilt (−∞: an empty array).
    let ln_c: Vec<Vec<f64>> = products
        .iter()
        .map(|&(p, q)| {
            norms
                .iter()
                .map(|nt| {
                    let ((sa, a1, a2), (sb, b1, b2)) = (nt[p], nt[q]);
                    if a1 == 0.0 || b1 == 0.0 {
                        f64::NEG_INFINITY
                    } else {
                        (e * (a2 * b1 + a1 * b2) + 1e-300).ln() + sa + sb
                    }
                })
                .collect()
        })
        .collect();
    let winner: Vec<Vec<u8>> = ln_c
        .iter()
        .map(|c| {
            (0..len)
                .map(|k| {
                    let mut best = 0usize;
                    for j in 1..thetas.len() {
                        let kf = k as f64;
                        if c[j] - thetas[j] * kf < c[best] - thetas[best] * kf {
                            best = j;
                        }
                    }
                    best as u8
                })
                .collect()
        })
        .collect();
    let mut out: Vec<(Vec<f64>, Vec<f64>)> = products
        .iter()
        .map(|_| (vec![0.0; len], vec![0.0; len]))
        .collect();
    let inv = transforms(n);
    let scale = 1.0 / n as f64;
    // Each tilt that is least somewhere: the products it serves and the arrays they need.
    let mut jobs: Vec<(usize, Vec<bool>)> = Vec::new();
    for j in 0..thetas.len() {
        let used: Vec<bool> = winner
            .iter()
            .zip(&ln_c)
            .map(|(w, c)| c[j] > f64::NEG_INFINITY && w.iter().any(|&x| x as usize == j))
            .collect();
        if used.iter().any(|&u| u) {
            let need = products
                .iter()
                .zip(&used)
                .filter(|(_, &u)| u)
                .flat_map(|(&(p, q), _)| [p, q])
                .collect::<std::collections::BTreeSet<usize>>()
                .len();
            crate::accountant::core::work::charge((n * (need + used.len())) as u64)?;
            jobs.push((j, used));
        }
    }
    // One tilt's values at the bins where it is least, per product: `(product, k, value)`.
    let run = |&(j, ref used): &(usize, Vec<bool>)| -> Vec<(usize, usize, f64)> {
        let theta = thetas[j];
        let mut tr: Vec<Option<Vec<Complex<f64>>>> = vec![None; arrays.len()];
        let mut vals = Vec::new();
        for (pi, &(p, q)) in products.iter().enumerate() {
            if !used[pi] {
                continue;
            }
            for i in [p, q] {
                if tr[i].is_none() {
                    tr[i] = Some(tilted_transform(&logs[i], theta, norms[j][i].0, n));
                }
            }
            let (ta, tb) = (
                tr[p].as_ref().expect("transformed"),
                tr[q].as_ref().expect("transformed"),
            );
            let mut c: Vec<Complex<f64>> = ta.iter().zip(tb).map(|(x, y)| x * y).collect();
            inv.inverse(&mut c);
            let ln_s = norms[j][p].0 + norms[j][q].0;
            for k in 0..len {
                if winner[pi][k] as usize == j {
                    vals.push((pi, k, c[k].re * scale * (ln_s - theta * k as f64).exp()));
                }
            }
        }
        vals
    };
    // The tilts share the cores; each one's numbers do not depend on which core runs it.
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let per = jobs.len().div_ceil(threads.max(1)).max(1);
    let results: Vec<Vec<(usize, usize, f64)>> = if threads == 1 || jobs.len() == 1 {
        jobs.iter().map(run).collect()
    } else {
        let parts: Vec<_> = jobs.chunks(per).collect();
        crate::accountant::core::pool::map(parts, |part| part.iter().map(&run).collect::<Vec<_>>())
            .into_iter()
            .flatten()
            .collect()
    };
    for ((j, _), vals) in jobs.iter().zip(results) {
        for (pi, k, v) in vals {
            out[pi].0[k] = v;
            out[pi].1[k] = (ln_c[pi][*j] - thetas[*j] * k as f64).exp();
        }
    }
    Ok(out)
}

/// The tilts for sums whose range is `[0, top]` bins and whose body spans `sd` bins.
fn tilts(top: f64, sd: f64) -> Vec<f64> {
    // The upper tail of a log-normal sum falls slower than any exponential, so no one tilt
    // isolates a region of it: three spaced ones, each least on part of it, and one for the
    // lower tail (the add direction's).
    vec![0.0, 3.0 / top, 15.0 / top, 60.0 / top, -5.0 / sd.max(1.0)]
}

/// The sum of two independent laws (the same one twice when `same`), each side capped at
/// `cap` (units of X); both must be on the same grid.
fn add(a: (&Upper, &Lower), b: (&Upper, &Lower), cap: f64, sd: f64) -> Result<(Upper, Lower)> {
    let h = a.0.h;
    debug_assert_eq!(h, b.0.h);
    let kcap = ((cap / h).ceil() as usize).max(1);
    let out_u = (a.0.w.len() + b.0.w.len() - 1).min(kcap + 1);
    let full_u = a.0.w.len() + b.0.w.len() - 1;
    let full_l = a.1.w.len() + b.1.w.len() - 1;
    let th = tilts(full_u as f64, sd / h);
    // u*u, w*w, pm_a*w_b, w_a*pm_b, pp_a*w_b, w_a*pp_b (a doubling transforms each once).
    let same = std::ptr::eq(a.0, b.0);
    let (arrays, products): (Vec<&[f64]>, [(usize, usize); 6]) = if same {
        (
            vec![&a.0.w, &a.1.w, &a.1.pm, &a.1.pp],
            [(0, 0), (1, 1), (2, 1), (1, 2), (3, 1), (1, 3)],
        )
    } else {
        (
            vec![
                &a.0.w, &b.0.w, &a.1.w, &b.1.w, &a.1.pm, &b.1.pm, &a.1.pp, &b.1.pp,
            ],
            [(0, 1), (2, 3), (4, 3), (2, 5), (6, 3), (2, 7)],
        )
    };
    let len = full_u.max(full_l);
    let r = convolve(&arrays, &products, len, &th)?;

    // Upper: value + bound, mass above the cap to the cap, its excess mean to +∞.
    let total = |w: &[f64]| outward::up(w.iter().sum::<f64>() * (1.0 + 1e-15));
    let mut xi = a.0.xi * total(&b.0.w) + b.0.xi * total(&a.0.w);
    let mut w = vec![0.0; out_u];
    for k in 0..full_u {
        let v = outward::up(r[0].0[k].max(0.0) + r[0].1[k]);
        if k < out_u - 1 || out_u == full_u {
            w[k] += v;
        } else {
            w[out_u - 1] += v;
            xi += v * ((k - (out_u - 1)) as f64 * h);
        }
    }
    let xi = outward::up(xi * (1.0 + 1e-14));
    let w: Vec<f64> = w.into_iter().map(outward::up).collect();

    // Lower: merged buckets, each end of the barycentre interval from its bound.
    let nb = full_l.min(kcap);
    let (mut lw, mut lpm, mut lpp) = (vec![0.0; nb], vec![0.0; nb], vec![0.0; nb]);
    for k in 0..full_l {
        let (ww, ew) = (r[1].0[k], r[1].1[k]);
        let wlo = ww - ew;
        if wlo.is_nan() || wlo <= 0.0 {
            continue;
        }
        let omv = r[2].0[k] + r[3].0[k] - r[2].1[k] - r[3].1[k];
        let opv = r[4].0[k] + r[5].0[k] + r[4].1[k] + r[5].1[k];
        let om = outward::down_by(omv.max(0.0) / (ww + ew), 4);
        let op = outward::up_by(opv / wlo, 4);
        if !(op.is_finite() && op - om <= h) {
            continue; // a removed mass: δ only shrinks
        }
        // Rebucketed at its lower end: j = k + ⌊om/h⌋, offsets from j·h.
        let d = (om / h).floor();
        let j = k + d as usize;
        if j >= nb {
            continue;
        }
        let dh = d * h;
        let (om, op) = (outward::down(om - dh).max(0.0), outward::up(op - dh));
        let wd = outward::down_by(wlo, 2);
        lw[j] += wd;
        lpm[j] += outward::mul_down(wd, om);
        lpp[j] += outward::mul_up(wd, op);
    }
    for j in 0..nb {
        lw[j] = outward::down(lw[j]);
        lpm[j] = outward::down(lpm[j]);
        lpp[j] = outward::up(lpp[j]);
    }
    Ok((
        Upper { h, w, xi },
        Lower {
            h,
            w: lw,
            pm: lpm,
            pp: lpp,
        },
    ))
}

/// `ln` of an epoch's Q-chance of a step above the fine grid's top. Lower puts more of δ
/// in the branch, whose upper side knows the other steps by two moments and whose lower
/// side merges them into barycentres; higher makes the FFT sums span more orders of
/// magnitude (docs/accountant.md §2.10: e^-18 was the best of e^-12 … e^-25 measured).
const LN_BRANCH: f64 = -18.0;

/// One step's laws on its first grid, its cap, the standard deviation of X and, when
/// the grid is cut short of the `ln_tail` cap, the z at its top.
fn first_step(
    mu: f64,
    t: u64,
    grid: EpochGrid,
    fine: f64,
) -> (Upper, Lower, f64, f64, Option<f64>) {
    let sd = (mu * mu).exp_m1().sqrt();
    // The cap where one step's mean above it is e^{ln}.
    let cap_at = |ln: f64| {
        let zc = mu + upper_quantile(ln.exp());
        (mu * zc - 0.5 * mu * mu).exp().max(1.0 + 40.0 * sd)
    };
    let cap1 = cap_at(grid.ln_tail);
    // The branch's top: where an epoch's chance of a step above it is e^{LN_BRANCH}.
    let z_b = upper_quantile((LN_BRANCH - (t as f64).ln()).exp());
    let top = (mu * z_b - 0.5 * mu * mu).exp().max(1.0 + 40.0 * sd);
    let k_branch = ((top / fine).ceil() as usize).clamp(1, grid.max_bins);
    if cap1 / fine <= k_branch as f64 {
        // The whole step on the fine grid, its mean above the cap (at most e^{ln_tail})
        // sent to +∞.
        let k = (cap1 / fine).ceil() as usize;
        let (u, l, _) = one_step(mu, fine, k, false);
        return (u, l, cap1, sd, None);
    }
    // The bins from 0 to the branch's top (or as many as the budget allows) on the fine
    // grid, the rest in the branch K ≥ 1 (Branch).
    let (u, l, z_top) = one_step(mu, fine, k_branch, true);
    (u, l, k_branch as f64 * fine, sd, Some(z_top))
}

/// Both laws of the sum of `t` steps' ratios, by doubling (binary digits of t).
fn build(mu: f64, t: u64, grid: EpochGrid) -> Result<EpochLaws> {
    let fine = (mu * mu).exp_m1().sqrt() / grid.cells_per_sd;
    let mut laws = build_on(mu, t, grid, fine)?;
    // Q‖P looks at small U, where X's body lies (its median is e^{−μ²/2}): at large
    // shifts the first cell [0, h) holds much of it, and its spread onto {0, h} puts
    // Q-mass at U = 0 (loss +∞ for Q‖P), up to Q(X < h)^t. That direction then takes its
    // laws from a grid whose first cell holds at most e^{−30/t} of a step (its top then
    // lower, at least 4t: the branch above it holds no Q‖P δ at ε ≥ 0).
    let z_add = -upper_quantile((-30.0 / t as f64).exp());
    let finer = (mu * z_add - 0.5 * mu * mu)
        .exp()
        .max(4.0 * t as f64 / grid.max_bins as f64);
    if laws.add_upper.ln_inf_mass() > LN_ADD_INF && finer < 0.5 * fine {
        let other = build_on(mu, t, grid, finer)?;
        if other.add_upper.ln_inf_mass() < laws.add_upper.ln_inf_mass() {
            laws.add_upper = other.add_upper;
            laws.add_lower = other.add_lower;
        }
    }
    Ok(laws)
}

/// `ln` of the Q‖P upper law's mass at `+∞` above which that direction is rebuilt on a
/// grid fine at X's median (see [`build`]).
const LN_ADD_INF: f64 = -25.0;

/// [`build`] on a first grid of step `fine`.
fn build_on(mu: f64, t: u64, grid: EpochGrid, fine: f64) -> Result<EpochLaws> {
    let (u1, l1, cap1, sd, z_top) = first_step(mu, t, grid, fine);
    let branch = z_top.map(|z| Branch::new(mu, z, cap1, t, grid.ln_tail));
    let h0 = u1.h;
    // The cap of a sum of m steps: its body, 40 standard deviations, and one capped step.
    let cap_of = |m: u64| m as f64 + 40.0 * sd * (m as f64).sqrt() + cap1;
    let mut cur = (u1, l1, 1u64);
    let mut acc: Option<(Upper, Lower, u64)> = None;
    let mut bits = t;
    loop {
        if bits & 1 == 1 {
            acc = Some(match acc.take() {
                None => cur.clone(),
                Some(mut a) => {
                    while a.0.h < cur.0.h {
                        a = (coarsen_upper(&a.0), coarsen_lower(&a.1), a.2);
                    }
                    let m = a.2 + cur.2;
                    let s = sd * (m as f64).sqrt();
                    let (u, l) = add((&a.0, &a.1), (&cur.0, &cur.1), cap_of(m), s)?;
                    (u, l, m)
                }
            });
        }
        bits >>= 1;
        if bits == 0 {
            break;
        }
        let m = 2 * cur.2;
        let s = sd * (m as f64).sqrt();
        let (u, l) = add((&cur.0, &cur.1), (&cur.0, &cur.1), cap_of(m), s)?;
        cur = (u, l, m);
        // A coarser grid where the sum's spread allows (each coarsening adds at most
        // (h/2)² of variance per copy; keeping h ≤ h0·√m keeps their total a few times
        // the first grid's).
        while 2.0 * cur.0.h <= h0 * (m as f64).sqrt() && cur.0.w.len() > 4096 {
            cur = (coarsen_upper(&cur.0), coarsen_lower(&cur.1), cur.2);
        }
    }
    let (u, l, _) = acc.expect("t ≥ 1");
    Ok(laws_of(&u, &l, branch, t, h0, cap1, grid.ln_tail))
}

/// The loss laws from the Q-laws of U (and its branch `K ≥ 1`): loss `ln(u/t)` with
/// P-mass `u·Q/t` (P‖Q), loss `−ln(u/t)` with Q-mass (Q‖P), each end rounded outward.
fn laws_of(
    u: &Upper,
    l: &Lower,
    branch: Option<Branch>,
    t: u64,
    step: f64,
    cap: f64,
    ln_tail: f64,
) -> EpochLaws {
    let tf = t as f64;
    let mut ru = Vec::with_capacity(u.w.len());
    let mut au = Vec::with_capacity(u.w.len());
    let mut add_inf = f64::NEG_INFINITY;
    for (i, &w) in u.w.iter().enumerate() {
        if w <= 0.0 {
            continue;
        }
        if i == 0 {
            add_inf = w.ln() + 1e-15; // U = 0: only Q can produce it
            continue;
        }
        let r = outward::div_up(outward::mul_up(i as f64, u.h), tf);
        let loss = r.ln();
        ru.push((outward::up_by(loss, 2), outward::mul_up(w, r)));
        let rd = outward::mul_down(i as f64, u.h) / tf;
        au.push((outward::up_by(-rd.ln(), 2), w));
    }
    let mut remove_inf = outward::div_up(u.xi, tf).ln() + 1e-15;
    let mut rl = Vec::with_capacity(l.w.len() + 1);
    let mut al = Vec::with_capacity(l.w.len() + 1);
    let mut add_lower_inf = f64::NEG_INFINITY;
    if let Some(br) = branch.as_ref().filter(|br| br.mass_up > 0.0) {
        let rd = outward::down_by(br.b / tf, 2);
        au.push((outward::up_by(-rd.ln(), 2), br.mass_up));
        for &(x, m) in &br.upper {
            let r = outward::div_up(x, tf);
            ru.push((outward::up_by(r.ln(), 2), outward::mul_up(m, r)));
        }
        if br.xi > 0.0 {
            remove_inf = log_add(remove_inf, outward::div_up(br.xi, tf).ln() + 1e-15);
        }
        for &(g_lo, g_hi, m) in &br.lower {
            let r = outward::down_by(g_lo / tf, 2);
            rl.push((outward::down_by(r.ln(), 2), outward::mul_down(m, r)));
            let r = outward::up_by(g_hi / tf, 2);
            al.push((outward::down_by(-r.ln(), 2), m));
        }
    }
    for j in 0..l.w.len() {
        let w = l.w[j];
        if w <= 0.0 {
            continue;
        }
        let base = j as f64 * l.h;
        let bm = outward::down(base + outward::down(l.pm[j] / w));
        let bp = outward::up(base + outward::up(l.pp[j] / w));
        if bm > 0.0 {
            let r = outward::down_by(bm / tf, 2);
            rl.push((outward::down_by(r.ln(), 2), outward::mul_down(w, r)));
        }
        if bp > 0.0 {
            let r = outward::up_by(bp / tf, 2);
            al.push((outward::down_by(-r.ln(), 2), w));
        } else {
            // Every position 0: the loss of Q‖P is +∞.
            add_lower_inf = log_add(add_lower_inf, w.ln() - 1e-15);
        }
    }
    EpochLaws {
        remove_upper: trimmed(ru, remove_inf, ln_tail, true),
        add_upper: trimmed(au, add_inf, ln_tail, true),
        remove_lower: trimmed(rl, f64::NEG_INFINITY, ln_tail, false),
        add_lower: trimmed(al, add_lower_inf, ln_tail, false),
        step,
        cap,
    }
}

/// A law of `atoms` whose far tails (each of mass at most `e^{ln_tail}`) do not stretch
/// the accountant's grid: on the upper side the high one goes to `+∞` and the low one up
/// to the lowest loss kept (δ only grows), on the lower side both are dropped.
fn trimmed(mut atoms: Vec<(f64, f64)>, ln_inf: f64, ln_tail: f64, upper: bool) -> DiscreteLaw {
    atoms.sort_by(|a, b| a.0.total_cmp(&b.0));
    let tail = ln_tail.exp();
    let (mut lo, mut below) = (0usize, 0.0);
    while lo < atoms.len() && below + atoms[lo].1 <= tail {
        below += atoms[lo].1;
        lo += 1;
    }
    let (mut hi, mut above) = (atoms.len(), 0.0);
    while hi > lo + 1 && above + atoms[hi - 1].1 <= tail {
        above += atoms[hi - 1].1;
        hi -= 1;
    }
    if !upper {
        return DiscreteLaw::from_atoms(atoms[lo..hi].to_vec(), ln_inf);
    }
    let mut kept = atoms[lo..hi].to_vec();
    if let Some(first) = kept.first_mut() {
        first.1 = outward::up(first.1 + outward::up(below * (1.0 + 1e-12)));
    }
    let ln_inf = if above > 0.0 {
        log_add(ln_inf, outward::up(above * (1.0 + 1e-12)).ln() + 1e-15)
    } else {
        ln_inf
    };
    DiscreteLaw::from_atoms(kept, ln_inf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `E[(R − s)_+]` of atoms, plus the mean they leave beyond their last one.
    fn call_of(atoms: &[(f64, f64)], excess: f64, s: f64) -> f64 {
        atoms
            .iter()
            .map(|&(r, p)| p * (r - s).max(0.0))
            .sum::<f64>()
            + excess
    }

    #[test]
    fn scarf_atoms_dominate_every_law_of_that_mean_and_variance() {
        // Independent references: the closed-form bound ½(√(v + (s − m)²) − (s − m)),
        // attained at each s by a two-point law of mean m and variance v, and laws with
        // less mean or variance (a log-normal sum's moments, a point mass).
        for (m, v) in [(0.0, 1.0), (99.0, 5400.0), (9.0, 1e6)] {
            let (atoms, excess) = scarf_atoms(m, v);
            let mass: f64 = atoms.iter().map(|a| a.1).sum();
            assert!((mass - 1.0).abs() < 1e-9, "mass {mass}");
            let sd = f64::sqrt(v);
            for k in -60..=60 {
                let s = m + sd * (k as f64 / 4.0).sinh();
                let star = call_of(&atoms, excess, s);
                // ½(√(v + d²) − d), without the cancellation at large d.
                let d = s - m;
                let root = (v + d * d).sqrt();
                let scarf = if d > 0.0 {
                    0.5 * v / (root + d)
                } else {
                    0.5 * (root - d)
                };
                assert!(
                    star >= scarf * (1.0 - 1e-12),
                    "m {m} v {v} s {s}: {star} < {scarf}"
                );
                // Two-point laws of mean m, variance v: {m − sd·a, m + sd/a}.
                for a in [0.01, 0.3, 1.0, 3.0, 100.0] {
                    let (lo, hi) = (m - sd * a, m + sd / a);
                    let p_hi = a * a / (1.0 + a * a);
                    let two = p_hi * (hi - s).max(0.0) + (1.0 - p_hi) * (lo - s).max(0.0);
                    assert!(star >= two * (1.0 - 1e-12), "m {m} v {v} s {s} a {a}");
                }
                assert!(star >= (m - s).max(0.0) * (1.0 - 1e-12));
            }
            // The spread is close to the law itself: within 2 % of Scarf's bound at its
            // body (fails for a spread that over-disperses, e.g. √v doubled).
            let body = call_of(&atoms, excess, m);
            assert!(
                body <= 0.51 * sd,
                "m {m} v {v}: {body} against {}",
                0.5 * sd
            );
        }
    }

    #[test]
    fn spreads_onto_the_grid_keep_or_raise_the_mean() {
        let g: Vec<f64> = (0..100).map(|j| 10.0 * (j as f64 / 2048.0).exp()).collect();
        let mut w = vec![0.0; g.len()];
        let mut excess = 0.0;
        let pts = [5.0, 10.0, 10.001, 10.2, 10.4, 10.49, 11.0, 1e3];
        for &u in &pts {
            spread_onto(&g, &mut w, &mut excess, u, 1.0);
        }
        let mass: f64 = w.iter().sum();
        let mean: f64 = g.iter().zip(&w).map(|(x, p)| x * p).sum::<f64>() + excess;
        // 5 is moved up to 10 (only raises); the others keep their mean.
        let want = 10.0 + pts[1..].iter().sum::<f64>();
        assert!((mass - pts.len() as f64).abs() < 1e-9);
        assert!(
            mean >= want && mean <= want * (1.0 + 1e-9),
            "{mean} against {want}"
        );
    }
}
