//! Discretisation of a loss law onto the grid `jΔ`, on either side of the truth
//! (docs/accountant.md §3).
//!
//! - [`Lattice::pessimistic`] (connect the dots; Doroshenko, Ghazi, Kamath, Kumar &
//!   Manurangsi, PETS 2022): every cell `(a, b]` of the atomless part, and every atom
//!   between two grid points, is split into atoms at `a` and `b` that keep both its
//!   P-mass and its Q-mass. Restricted to the cell, the hockey-stick curve `δ(y)`
//!   (`y = e^ε`) of the split is the chord of the cell's convex curve between `e^a` and
//!   `e^b` and equals it elsewhere, so `δ` can only grow, at every ε. The upper tail
//!   beyond the grid goes to `+∞` and the lower tail up to the lowest grid point (δ is
//!   non-decreasing in each loss and in each mass), and every mass is inflated by the
//!   quadrature's relative error bound.
//! - [`Lattice::optimistic`]: every cell is merged into one atom at
//!   `ln(P(I)/Q(I)) ∈ (a, b]` (a post-processing: δ can only shrink); the merged atoms
//!   are then "poured" from the top down: an atom above its grid point `g` is merged with
//!   the fraction θ of the next atom below `g` that puts the mixture exactly at `g`
//!   (another merge), the rest carries on. Tails are dropped, the last carry is rounded
//!   down, masses are deflated by the quadrature bound: δ can only shrink.
//!
//! Both errors are second order in Δ (the split adds at most `Δ²/4` of variance per
//! factor; the pour merges about two cells), so unlike rounding every loss up, they do
//! not accumulate like `kΔ` over a k-fold composition.
//!
//! Floating point (docs/accountant.md §5): grid points are the real multiples `jΔ`, and
//! an atom's gap to one comes from exact product remainders (`grid_gap`); every mass
//! formed in log space is moved to its side by a bound on the roundings that formed it
//! (`law::chain_rounding`), and each split share, θ and merged loss is taken at the end
//! of its error interval that keeps the side.

use crate::accountant::core::numeric::{chain_rounding, ln_round, log_add, position_round};
use crate::accountant::laws::{ContinuousRange, LossLaw, CELL_REL_ERR};
use crate::error::{out_of_range, Result};

mod residue;

/// A discretised P-law of a loss: `ln P(L = jΔ)` for `j ∈ [lo, lo + len)`, and
/// `ln P(L = +∞)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lattice {
    /// Grid step Δ.
    pub step: f64,
    /// Index of the first entry.
    pub lo: i64,
    /// Natural logarithms of the masses (`−∞` for none).
    pub ln_pmf: Vec<f64>,
    /// `ln P(L = +∞)`.
    pub ln_inf: f64,
}

/// Largest index of a lattice (`|loss/Δ|`), so that indices and their sums over 1e10
/// factors stay exact in `i128` and `f64` loss values stay well resolved.
const MAX_INDEX: f64 = 1e12;

/// `x − jΔ` for the real loss `x = x_hi + x_lo` (`x_lo` exact: a product's `fma`
/// remainder, or 0) and the real grid point `jΔ`, and a bound on its error: `jΔ` as a
/// rounded product and its exact remainder, then three rounded differences and sums,
/// each within `u` of its own result (the first is exact when `x` and `jΔ` are within a
/// factor 2, and all are when the atom is exactly on the point: the bound is then 0).
fn grid_gap(x_hi: f64, x_lo: f64, j: i64, d: f64) -> (f64, f64) {
    let jf = j as f64;
    let a = jf * d;
    let a_lo = jf.mul_add(d, -a);
    let h = x_hi - a;
    let l = x_lo - a_lo;
    let g = h + l;
    let e = 1.25 * (f64::EPSILON / 2.0) * (h.abs() + l.abs() + g.abs());
    (g, e)
}

/// A bound on the error of a cell's share `m/(P(1 − e^{−kΔ}))` from positions: the
/// quadrature forms `1 − e^{a − ℓ}` at nodes rounded by `u|ℓ|` ([`position_round`] of
/// the edges), an absolute error of `m/P`.
fn cell_share_error(j: i64, k: i64, d: f64, ln_dm: f64) -> f64 {
    let edge = (j.unsigned_abs() + k.unsigned_abs()) as f64 * d;
    position_round(edge) / ln_dm.exp()
}

/// `j` with `jΔ ≤ x < (j+1)Δ` in floating point.
fn floor_index(x: f64, d: f64) -> Result<i64> {
    let r = (x / d).floor();
    if !(r.is_finite() && r.abs() < MAX_INDEX) {
        return Err(out_of_range("loss/step", x / d, "|loss/step| < 1e12"));
    }
    let mut j = r as i64;
    while (j as f64) * d > x {
        j -= 1;
    }
    while ((j + 1) as f64) * d <= x {
        j += 1;
    }
    Ok(j)
}

/// The error of a lattice wider than the bin budget (`bins` grid steps).
fn too_many_bins(bins: f64) -> crate::error::CompositionError {
    out_of_range(
        "loss support / grid step (bins)",
        bins,
        "at most the bin budget: the loss law spans too many grid steps (its range is too wide \
         for the resolution its scale needs, or the scales in the list differ too much)",
    )
}

/// Accumulates log-masses at grid indices.
struct LogDense {
    entries: Vec<(i64, f64)>,
    /// The side: masses are raised by their rounding slack (pessimistic) or lowered
    /// (optimistic).
    up: bool,
}

impl LogDense {
    fn new(up: bool, capacity: usize) -> Self {
        Self {
            entries: Vec::with_capacity(capacity),
            up,
        }
    }

    fn push(&mut self, j: i64, lp: f64) {
        if lp > f64::NEG_INFINITY {
            self.entries.push((j, lp));
        }
    }

    /// `lp` moved to its side by the slack of `ops` roundings of logs up to `mag`.
    fn outward(&self, lp: f64, ops: f64, mag: f64) -> f64 {
        let s = ln_round(ops, mag);
        if self.up {
            lp + s
        } else {
            lp - s
        }
    }

    /// Connect-the-dots split of the cell `(jΔ, (j+1)Δ]` with `ln P = lp` and
    /// `ln m = lm`: the share `w = m/(P(1 − e^{−Δ}))` goes up, the rest stays; masses
    /// inflated by `infl` (log); `ln_dm = ln(1 − e^{−Δ})`.
    fn split_cell(&mut self, j: i64, lp: f64, lm: f64, ln_dm: f64, infl: f64, w_pos: f64) {
        self.split_wide(j, 1, lp, lm, ln_dm, infl, w_pos);
    }

    /// [`Self::split_cell`] of the cell `(jΔ, (j+k)Δ]`, `ln_dm = ln(1 − e^{−kΔ})`.
    ///
    /// Rounding (docs/accountant.md §5): the share going up is raised by `w_pos`, a bound
    /// on its error from positions (a cell's `m` comes from `1 − e^{a − ℓ}` at rounded
    /// quadrature nodes: [`cell_share_error`]), the rest keeps the total, and both masses
    /// get the log-space slack of the logs involved. More mass up and no less in all can
    /// only raise δ.
    #[allow(clippy::too_many_arguments)]
    fn split_wide(&mut self, j: i64, k: i64, lp: f64, lm: f64, ln_dm: f64, infl: f64, w_pos: f64) {
        if lp == f64::NEG_INFINITY {
            return;
        }
        let r1 = lm - lp;
        let lw0 = r1 - ln_dm;
        let lw = lw0.min(0.0);
        let w_up = (lw.exp() + w_pos).min(1.0);
        let ln_up = w_up.ln();
        let s_up = lp + ln_up;
        let up = s_up + infl;
        // The inputs' logs (their last rounding), each intermediate result, the result.
        let r = chain_rounding(&[lp, lm, ln_dm, r1, lw0, ln_up, s_up, up, up]);
        self.push(j + k, if self.up { up + r } else { up - r });
        // The rest stays: the total is kept (raising it too would compound over uses).
        let rest = (-w_up).ln_1p();
        let s_low = lp + rest;
        let low = s_low + infl;
        let r = chain_rounding(&[lp, lm, ln_dm, r1, lw0, ln_up, rest, s_low, low, low]);
        self.push(j, if self.up { low + r } else { low - r });
    }

    /// An atom `(ln p)` at the real loss `x = x_hi + x_lo` (`x_lo`: the remainder of a
    /// rounded product, 0 for a loss given as a float): on its grid point if it is exactly
    /// there, else split between the real grid points `jΔ ≤ x < (j+1)Δ` keeping its P- and
    /// Q-mass. Its distance to `jΔ` comes from [`grid_gap`] (an exact product remainder,
    /// error bound `e`) and is taken `e` larger (δ grows with each loss), so the share sent
    /// up is at least the exact one however the positions round (docs/accountant.md §5).
    #[allow(clippy::too_many_arguments)]
    fn split_atom(
        &mut self,
        x_hi: f64,
        x_lo: f64,
        lp: f64,
        d: f64,
        ln_dm: f64,
        infl: f64,
    ) -> Result<()> {
        let mut j = floor_index(x_hi, d)?;
        let (mut g, mut e) = grid_gap(x_hi, x_lo, j, d);
        // The largest the real gap can be decides the grid point below.
        while g + e < 0.0 {
            j -= 1;
            (g, e) = grid_gap(x_hi, x_lo, j, d);
        }
        loop {
            let (g1, e1) = grid_gap(x_hi, x_lo, j + 1, d);
            if g1 + e1 < 0.0 {
                break;
            }
            // The atom may lie at or above (j+1)Δ: measure from there.
            (j, g, e) = (j + 1, g1, e1);
        }
        let gap = g + e;
        if gap <= 0.0 {
            // At or below jΔ: all of it there is on the safe side.
            let m = self.outward(lp + infl, 2.0, lp);
            self.push(j, m);
        } else {
            let f = -(-gap).exp_m1();
            self.split_cell(j, lp, lp + f.ln(), ln_dm, infl, 0.0);
        }
        Ok(())
    }

    /// The lattice of the pushed masses, each grid point's sum in log space moved to this
    /// side by the slack of its additions (each rounds by at most `u(|v| + 4)` relative to
    /// the final sum `e^v`: the partial sums lie below it, and `s|ln s|` grows with `s`
    /// below `1/e`).
    fn finish(self, step: f64, ln_inf: f64, max_len: usize) -> Result<Lattice> {
        let up = self.up;
        if self.entries.is_empty() {
            return Ok(Lattice {
                step,
                lo: 0,
                ln_pmf: vec![f64::NEG_INFINITY],
                ln_inf,
            });
        }
        let lo = self.entries.iter().map(|e| e.0).min().unwrap_or(0);
        let hi = self.entries.iter().map(|e| e.0).max().unwrap_or(0);
        let len = (hi - lo + 1) as u64;
        if len > max_len as u64 {
            return Err(too_many_bins(len as f64));
        }
        let mut v = vec![f64::NEG_INFINITY; len as usize];
        let mut adds = vec![0u32; len as usize];
        for (j, lp) in self.entries {
            let i = (j - lo) as usize;
            if v[i] > f64::NEG_INFINITY {
                adds[i] = adds[i].saturating_add(1);
            }
            v[i] = log_add(v[i], lp);
        }
        for (x, &n) in v.iter_mut().zip(&adds) {
            if n > 0 && x.is_finite() {
                // n additions and the slack's own: each within u(|v| + 4).
                let s = 1.25 * (f64::EPSILON / 2.0) * (n as f64 + 1.0) * (x.abs() + 4.0);
                *x = if up { *x + s } else { *x - s };
            }
        }
        Ok(Lattice {
            step,
            lo,
            ln_pmf: v,
            ln_inf,
        })
    }
}

/// Cells of the atomless part of a law on the grid `jΔ`, computed once and shared by
/// both sides of the bracket ([`Lattice::pessimistic_from`], [`Lattice::optimistic_from`]).
/// A cell spans one grid step, or several where the law is graded (docs/accountant.md
/// §3.3: far tails that carry almost none of the tilted mass): both sides stay valid for
/// any partition whose edges are grid points.
#[derive(Debug, Clone)]
pub struct GridCells {
    step: f64,
    /// The cells, the range and its cut masses, and `ln P(cap < L ≤ hi)` of a cap below
    /// the range's top (`−∞` without); `None` for a purely atomic law.
    cells: Option<Cells>,
}

/// One cell `(jΔ, (j + k)Δ]` with `ln P` and `ln m` (docs/accountant.md §3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Cell {
    /// Grid index of the lower edge.
    pub j: i64,
    /// Width in grid steps (≥ 1).
    pub k: i64,
    /// `ln P(I)`.
    pub lp: f64,
    /// `ln m(I)`.
    pub lm: f64,
}

/// `(cells, first grid index, range, ln P of the capped part)`.
type Cells = (Vec<Cell>, i64, ContinuousRange, f64);

/// Cells computed by one call of `LossLaw::cells` (the unit of parallel work).
const CELL_CHUNK: usize = 1 << 14;

/// Chunks computed between two cancellation points.
const CELL_BLOCK_CHUNKS: usize = 16;

/// The least chunk a law with pointwise cells ([`LossLaw::pointwise_cells`]) is split
/// into for the cores: below it a thread costs more than it saves.
const MIN_SHARED_CHUNK: usize = 512;

/// The kept range of a law's atomless part on the step `d`: the range (its top lowered
/// to a cap's grid point), `ln P` of the capped part, and the first and last grid
/// indices `ia < ib`; `None` for a purely atomic law.
pub(crate) type Cut = Option<(ContinuousRange, f64, i64, i64)>;

/// `ln P(a < L_c ≤ b)` of a law's atomless part over a range that may span many of its
/// scales (the part above a cap). A law's cell is a quadrature accurate over a grid
/// step, not over many standard deviations: 8-point Gauss–Legendre over the 24 standard
/// deviations of a Gaussian's loss above a cap at ε + 40 (μ = 100) gave a mass of 0.69
/// for 1, and the certified δ(0) was 0.31 for 1 (issue 57). The range is halved until
/// two halves agree with their whole to 1e-15 of the range's mass, or are no wider than
/// the step `d` (a cell's own width), as deep as 2^40 pieces.
fn ln_mass_between(law: &dyn LossLaw, a: f64, b: f64, d: f64) -> f64 {
    fn halves(
        law: &dyn LossLaw,
        a: f64,
        b: f64,
        whole: f64,
        d: f64,
        ln_tol: f64,
        depth: u32,
    ) -> f64 {
        if b - a <= d || depth >= 40 || whole < ln_tol {
            return whole;
        }
        let m = 0.5 * (a + b);
        let (l, r) = (law.cell(a, m).0, law.cell(m, b).0);
        let both = log_add(l, r);
        // ln |e^both − e^whole|.
        let hi = both.max(whole);
        let ln_diff = if hi == f64::NEG_INFINITY {
            f64::NEG_INFINITY
        } else {
            hi + (-(-(both - whole).abs()).exp_m1()).ln()
        };
        if ln_diff <= ln_tol {
            return both;
        }
        log_add(
            halves(law, a, m, l, d, ln_tol, depth + 1),
            halves(law, m, b, r, d, ln_tol, depth + 1),
        )
    }
    let whole = law.cell(a, b).0;
    // Tolerance from the first halving's estimate (the whole may be the one far off).
    let m = 0.5 * (a + b);
    let est = log_add(law.cell(a, m).0, law.cell(m, b).0).max(whole);
    halves(law, a, b, whole, d, est + (1e-15f64).ln(), 0)
}

/// The range [`GridCells`] covers (see [`Cut`]); errors when it exceeds `max_len` bins.
pub(crate) fn cut(
    law: &dyn LossLaw,
    d: f64,
    ln_tail: f64,
    max_len: usize,
    cap: f64,
) -> Result<Cut> {
    let Some(mut range) = law.continuous_range(ln_tail) else {
        return Ok(None);
    };
    // A cap below the range's top: the grid stops at the cap's grid point (at least one
    // cell above the range's bottom), and the mass above the grid's last point is
    // returned apart. The cells end exactly where the capped part begins: the last cell
    // had reached a step past the cap, its mass counted twice (once in the cells, once
    // capped), and a certified lower δ(0) of a Gaussian at μ = 6.7 was 0.99964 for 0.99914
    // (issue 57).
    let ia = floor_index(range.lo, d)?;
    let mut capped = f64::NEG_INFINITY;
    let mut ib = None;
    if cap < range.hi {
        let k = floor_index(cap.max(range.lo), d)?.max(ia + 1);
        let top = k as f64 * d;
        if top < range.hi {
            capped = ln_mass_between(law, top, range.hi, d);
            range.hi = top;
            ib = Some(k);
        }
    }
    let ib = match ib {
        Some(k) => k,
        None => floor_index(range.hi, d)? + 1,
    };
    if (ib - ia) as u64 > max_len as u64 {
        return Err(too_many_bins((ib - ia) as f64));
    }
    Ok(Some((range, capped, ia, ib)))
}

/// `(ln P, ln m)` of the cells between consecutive grid indices of `edges` (step `d`),
/// split between the available cores in chunks that do not depend on their number, and
/// charged as work block by block (docs/accountant.md §6.1).
pub(crate) fn cells_between(law: &dyn LossLaw, edges: &[i64], d: f64) -> Result<Vec<(f64, f64)>> {
    let edges: Vec<f64> = edges.iter().map(|&j| j as f64 * d).collect();
    let n_cells = edges.len().saturating_sub(1);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Chunks of CELL_CHUNK cells sharing their boundary edges, the same on every machine
    // (a law may warm-start each cell from the one before: nothing may hang on the number
    // of cores); the chunks of a block go to the cores, and each block is a cancellation
    // point charged its cells as work.
    // A law whose cells do not hang on where a call begins has fewer than two chunks'
    // worth shared between the cores as well (DP-SGD at small q: a few thousand graded
    // cells, a quarter of a 10 ms answer on one core).
    let chunk = if law.pointwise_cells() && threads > 1 {
        n_cells
            .div_ceil(threads)
            .clamp(MIN_SHARED_CHUNK, CELL_CHUNK)
    } else {
        CELL_CHUNK
    };
    let chunks: Vec<(usize, usize)> = (0..n_cells)
        .step_by(chunk)
        .map(|a| (a, (a + chunk).min(n_cells)))
        .collect();
    let mut cells = Vec::with_capacity(n_cells);
    for block in chunks.chunks(CELL_BLOCK_CHUNKS) {
        crate::accountant::core::work::charge((block[block.len() - 1].1 - block[0].0) as u64)?;
        let run = |part: &[(usize, usize)]| -> Vec<(f64, f64)> {
            part.iter()
                .flat_map(|&(a, b)| law.cells(&edges[a..=b]))
                .collect()
        };
        if threads == 1 || block.len() == 1 {
            cells.extend(run(block));
            continue;
        }
        let per = block.len().div_ceil(threads);
        for part in crate::accountant::core::pool::map(block.chunks(per).collect(), run) {
            cells.extend(part);
        }
    }
    Ok(cells)
}

impl GridCells {
    /// The cells of `law` on the step `d`, one a grid step, its atomless part cut where
    /// each tail has mass below `e^{ln_tail}` and its losses above `cap` set apart; errors
    /// when they would exceed `max_len` bins.
    pub fn new(law: &dyn LossLaw, d: f64, ln_tail: f64, max_len: usize, cap: f64) -> Result<Self> {
        let c = cut(law, d, ln_tail, max_len, cap)?;
        let edges = c.map(|(_, _, ia, ib)| (ia..=ib).collect::<Vec<i64>>());
        Self::on_edges(law, d, c, edges.as_deref())
    }

    /// The cells of `law` between consecutive grid indices of `edges` (from the cut's
    /// first index to its last) on the range `cut`.
    pub(crate) fn on_edges(
        law: &dyn LossLaw,
        d: f64,
        cut: Cut,
        edges: Option<&[i64]>,
    ) -> Result<Self> {
        let (Some((range, capped, ia, _)), Some(edges)) = (cut, edges) else {
            return Ok(Self {
                step: d,
                cells: None,
            });
        };
        let values = cells_between(law, edges, d)?;
        let out = edges
            .windows(2)
            .zip(values)
            .map(|(e, (lp, lm))| Cell {
                j: e[0],
                k: e[1] - e[0],
                lp,
                lm,
            })
            .collect();
        Ok(Self {
            step: d,
            cells: Some((out, ia, range, capped)),
        })
    }

    /// Number of cells (0 for a purely atomic law).
    pub fn len(&self) -> usize {
        self.cells.as_ref().map_or(0, |c| c.0.len())
    }

    /// Whether there are no cells (a purely atomic law).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each cell's `(first grid index, width)`: the partition (tests compare them).
    #[cfg(test)]
    pub(crate) fn partition(&self) -> Vec<(i64, i64)> {
        self.cells
            .as_ref()
            .map_or(Vec::new(), |c| c.0.iter().map(|c| (c.j, c.k)).collect())
    }
}

impl Lattice {
    /// Pessimistic (dominating) discretisation with step `d` (module docs); the atomless
    /// part is cut where each tail has mass below `e^{ln_tail}`.
    pub fn pessimistic(law: &dyn LossLaw, d: f64, ln_tail: f64, max_len: usize) -> Result<Self> {
        Self::pessimistic_capped(law, d, ln_tail, max_len, f64::INFINITY)
    }

    /// As [`Self::pessimistic`], with the atomless part's losses above `cap` (rounded
    /// down to the grid) moved to `+∞`: δ grows at every ε, by at most
    /// `P(L > cap)·e^{ε − cap}` per use in a composition (docs/accountant.md §9), so a
    /// cap far above the ε in question costs nothing and saves the bins of a long,
    /// heavy upper tail.
    pub fn pessimistic_capped(
        law: &dyn LossLaw,
        d: f64,
        ln_tail: f64,
        max_len: usize,
        cap: f64,
    ) -> Result<Self> {
        let cells = GridCells::new(law, d, ln_tail, max_len, cap)?;
        Self::pessimistic_from(law, &cells, ln_tail, max_len)
    }

    /// [`Self::pessimistic_capped`] from cells computed beforehand (with the same `law`;
    /// `ln_tail` as they were cut with).
    pub fn pessimistic_from(
        law: &dyn LossLaw,
        grid: &GridCells,
        ln_tail: f64,
        max_len: usize,
    ) -> Result<Self> {
        let d = grid.step;
        // The law's own bound on its masses' relative error (the default: the cells'
        // quadrature's, CELL_REL_ERR), taken to the side of δ growing.
        let infl = law.mass_rel_err().max(CELL_REL_ERR).ln_1p();
        let mut dense = LogDense::new(true, 0);
        // Each log-space sum raised by its rounding slack (docs/accountant.md §5).
        let raised = |x: f64, ops: f64| x + ln_round(ops, x);
        let mut ln_inf = raised(law.ln_inf_mass() + infl, 2.0);
        let ln_dm = (-(-d).exp_m1()).ln(); // ln(1 − e^{−Δ})
        if let Some((cells, ia, range, capped)) = &grid.cells {
            for c in cells {
                if c.k == 1 {
                    let w_pos = cell_share_error(c.j, 1, d, ln_dm);
                    dense.split_cell(c.j, c.lp, c.lm, ln_dm, infl, w_pos);
                } else {
                    // A graded cell: the same split between its two grid ends.
                    let ln_dmk = (-(-(c.k as f64 * d)).exp_m1()).ln();
                    let w_pos = cell_share_error(c.j, c.k, d, ln_dmk);
                    dense.split_wide(c.j, c.k, c.lp, c.lm, ln_dmk, infl, w_pos);
                }
            }
            // Tails: below the grid up to its first point, above it (and above a cap) to +∞.
            dense.push(*ia, raised(range.ln_below, 1.0));
            ln_inf = raised(log_add(ln_inf, range.ln_above), 2.0);
            ln_inf = raised(log_add(ln_inf, capped + infl), 4.0);
        }
        let lowest = dense.entries.iter().map(|e| e.0).min();
        // A law's own bounds on its atoms' errors (the defaults: the cells' own bound,
        // exact positions), each taken to the side of δ growing.
        let up_err = law.atom_position_err();
        for (x, p) in law.atoms() {
            if p.is_nan() || p <= 0.0 {
                continue;
            }
            // A negligible atom far below the kept range is moved up to its lowest point
            // (δ can only grow), so that it does not stretch the grid.
            if let Some(lo_idx) = lowest {
                if p.ln() < ln_tail && x + up_err < lo_idx as f64 * d {
                    dense.push(lo_idx, raised(p.ln() + infl, 2.0));
                    continue;
                }
            }
            dense.split_atom(x, up_err, p.ln(), d, ln_dm, infl)?;
        }
        dense.finish(d, ln_inf, max_len)
    }

    /// Optimistic (dominated) discretisation with step `d` (module docs).
    pub fn optimistic(law: &dyn LossLaw, d: f64, ln_tail: f64, max_len: usize) -> Result<Self> {
        Self::optimistic_capped(law, d, ln_tail, max_len, f64::INFINITY)
    }

    /// As [`Self::optimistic`], with the atomless part's losses above `cap` (rounded down
    /// to the grid) moved down to it: a P-law that is stochastically smaller, so δ shrinks
    /// at every ε (δ is non-decreasing in each loss), by at most `P(L > cap)·e^{ε − cap}`
    /// per use (docs/accountant.md §9).
    pub fn optimistic_capped(
        law: &dyn LossLaw,
        d: f64,
        ln_tail: f64,
        max_len: usize,
        cap: f64,
    ) -> Result<Self> {
        let cells = GridCells::new(law, d, ln_tail, max_len, cap)?;
        Self::optimistic_from(law, &cells, ln_tail, max_len)
    }

    /// [`Self::optimistic_capped`] from cells computed beforehand (with the same `law`;
    /// `ln_tail` as they were cut with).
    pub fn optimistic_from(
        law: &dyn LossLaw,
        grid: &GridCells,
        ln_tail: f64,
        max_len: usize,
    ) -> Result<Self> {
        Self::optimistic_for_uses(law, grid, ln_tail, max_len, 1)
    }

    /// [`Self::optimistic_from`] for a law composed `uses` times in all: the pour's last
    /// carry, which has nothing below it, is merged upwards rather than rounded down a
    /// step unless it lies within `Δ/(4√uses)` of its grid point (docs/accountant.md
    /// §3.2: rounding is a first-order error that `uses` multiplies).
    pub fn optimistic_for_uses(
        law: &dyn LossLaw,
        grid: &GridCells,
        ln_tail: f64,
        max_len: usize,
        uses: u64,
    ) -> Result<Self> {
        let d = grid.step;
        let rel = law.mass_rel_err().max(CELL_REL_ERR);
        let defl = (-rel).ln_1p();
        // Each log-space mass lowered by its rounding slack (docs/accountant.md §5).
        let lowered = |x: f64, ops: f64| x - ln_round(ops, x);
        // Merged atoms (loss, ln P-mass).
        let mut items: Vec<Item> = Vec::new();
        if let Some((cells, _, range, capped)) = &grid.cells {
            if *capped > f64::NEG_INFINITY {
                items.push((range.hi, 0.0, lowered(capped + defl, 2.0)));
            }
            for c in cells {
                if c.lp == f64::NEG_INFINITY {
                    continue;
                }
                let (a, b) = (c.j as f64 * d, (c.j + c.k) as f64 * d);
                let x = merged_loss(a, b, c.lp, c.lm) - merged_loss_error(a, b, c.lp, c.lm, rel);
                items.push((x, 0.0, lowered(c.lp + defl, 2.0)));
            }
        }
        // The kept range starts at the lowest cell or non-negligible atom: a purely
        // atomic law has no cells, and all its negligible atoms (a balls-in-bins epoch's
        // tails, thousands of them) would otherwise count as below it.
        let atoms = law.atoms();
        let lowest = items
            .iter()
            .map(|i| i.0)
            .chain(
                atoms
                    .iter()
                    .filter(|&&(_, p)| p > 0.0 && p.ln() >= ln_tail)
                    .map(|a| a.0),
            )
            .fold(f64::INFINITY, f64::min);
        let down_err = if law.atom_position_err() > 0.0 {
            -law.atom_position_err()
        } else {
            0.0
        };
        for (x, p) in atoms {
            // Negligible atoms far below the kept range are dropped (δ can only shrink).
            if p > 0.0 && !(p.ln() < ln_tail && x < lowest) {
                items.push((x, down_err, lowered(p.ln() + defl, 2.0)));
            }
        }
        items.sort_by(|u, v| v.0.total_cmp(&u.0));
        pour(
            items,
            d,
            lowered(law.ln_inf_mass_lower() + defl, 2.0),
            max_len,
            uses,
        )
    }

    /// Re-discretises this lattice on a coarser step `d` on the pessimistic side: every
    /// atom between two new grid points is split keeping its P- and Q-mass (connect the
    /// dots) between the real grid points around its real position `(lo + i)·step`,
    /// masses raised by `8u` and by the log-space rounding bounds (docs/accountant.md §5).
    ///
    /// When `d` is the rounded product of the step and an integer, by residue tables (the
    /// same split, each atom's share looked up and the masses summed in linear space).
    pub fn coarsen_pessimistic(&self, d: f64, max_len: usize) -> Result<Self> {
        residue::coarsen_up(self, d, max_len).unwrap_or_else(|| self.split_atoms(d, max_len))
    }

    /// [`Self::coarsen_pessimistic`] atom by atom (any ratio of the steps).
    fn split_atoms(&self, d: f64, max_len: usize) -> Result<Self> {
        let infl = (8.0 * f64::EPSILON).ln_1p();
        let ln_dm = (-(-d).exp_m1()).ln();
        let mut dense = LogDense::new(true, 2 * self.ln_pmf.len());
        for (i, &lp) in self.ln_pmf.iter().enumerate() {
            if lp > f64::NEG_INFINITY {
                // The real point (lo + i)·step: its rounded value and remainder.
                let n = (self.lo + i as i64) as f64;
                let x = n * self.step;
                dense.split_atom(x, n.mul_add(self.step, -x), lp, d, ln_dm, infl)?;
            }
        }
        dense.finish(d, self.ln_inf + infl, max_len)
    }

    /// Re-discretises this lattice on a coarser step `d` on the optimistic side (the pour
    /// of the module docs, each atom at its real position `(lo + i)·step`), masses lowered
    /// by `8u` and by the log-space rounding bounds; `uses` as in
    /// [`Self::optimistic_for_uses`].
    ///
    /// When `d` is the rounded product of the step and an integer, by residue tables (the
    /// same pour, each atom's factors looked up and the masses summed in linear space).
    pub fn coarsen_optimistic(&self, d: f64, max_len: usize, uses: u64) -> Result<Self> {
        residue::coarsen_down(self, d, max_len, uses)
            .unwrap_or_else(|| self.pour_atoms(d, max_len, uses))
    }

    /// [`Self::coarsen_optimistic`] atom by atom (any ratio of the steps).
    fn pour_atoms(&self, d: f64, max_len: usize, uses: u64) -> Result<Self> {
        let defl = (-8.0 * f64::EPSILON).ln_1p();
        let items = self.items_below(self.ln_pmf.len(), defl);
        pour(items, d, self.ln_inf + defl, max_len, uses)
    }

    /// The atoms of the entries below `end` as pour items, from the top: each real point
    /// `(lo + i)·step` as its rounded value and exact remainder, its log-mass moved by
    /// `defl`.
    fn items_below(&self, end: usize, defl: f64) -> Vec<Item> {
        self.ln_pmf[..end]
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, &lp)| lp > f64::NEG_INFINITY)
            .map(|(i, &lp)| {
                let n = (self.lo + i as i64) as f64;
                let x = n * self.step;
                (x, n.mul_add(self.step, -x), lp + defl)
            })
            .collect()
    }

    /// Loss value of entry `i`.
    pub fn loss(&self, i: usize) -> f64 {
        (self.lo + i as i64) as f64 * self.step
    }
}

/// The loss `ln(P(I)/Q(I)) = a − ln(1 − m/P)` at which the cell `(a, b]` with `ln P = lp`
/// and `ln m = lm` is merged into one atom, kept within the cell against rounding.
pub(crate) fn merged_loss(a: f64, b: f64, lp: f64, lm: f64) -> f64 {
    let r = (lm - lp).exp().min(1.0); // m/P = 1 − e^{a − x}
    if r >= 1.0 {
        b
    } else {
        (a - (-r).ln_1p()).min(b)
    }
}

/// A bound on how far [`merged_loss`] may lie above the exact merged loss: `r = m/P` is
/// known to the cell masses' relative error and the log-space rounding of `lm − lp`
/// (relative to `r`), and to the positions' rounding inside the quadrature
/// ([`position_round`] of the edges, absolute); the loss `a − ln(1 − r)` moves by that
/// over `1 − r ≥ e^{a − b}`, plus its own rounding. The dominated discretisation lowers
/// the atom by it (δ shrinks when a loss moves down). `rel`: the cell masses' relative
/// error bound (the law's, at least [`CELL_REL_ERR`]).
pub(crate) fn merged_loss_error(a: f64, b: f64, lp: f64, lm: f64, rel: f64) -> f64 {
    let r = (lm - lp).exp().min(1.0);
    let edge = a.abs().max(b.abs());
    let r_err = r * (4.0 * rel + chain_rounding(&[lp, lm, lm - lp])) + position_round(edge);
    2.0 * r_err * (b - a).exp() + position_round(edge)
}

/// A pour item or carry: the real loss `hi + lo` (`lo` an exact remainder or 0) and
/// `ln P`-mass.
type Item = (f64, f64, f64);

/// The real grid point `jΔ` as an item position (its rounded value and exact remainder).
fn grid_point(j: i64, d: f64) -> (f64, f64) {
    let jf = j as f64;
    let a = jf * d;
    (a, jf.mul_add(d, -a))
}

/// The largest `j` whose real grid point `jΔ` is certainly at or below the real loss
/// `hi + lo`, with the gap `(g, e)` to it ([`grid_gap`]: `g − e ≥ 0`).
fn grid_below(hi: f64, lo: f64, d: f64) -> Result<(i64, f64, f64)> {
    let mut j = floor_index(hi, d)?;
    let (mut g, mut e) = grid_gap(hi, lo, j, d);
    while g - e < 0.0 {
        j -= 1;
        (g, e) = grid_gap(hi, lo, j, d);
    }
    loop {
        let (g1, e1) = grid_gap(hi, lo, j + 1, d);
        if g1 - e1 < 0.0 {
            break;
        }
        (j, g, e) = (j + 1, g1, e1);
    }
    Ok((j, g, e))
}

/// The merge of two atoms whose exact merge lies at or above the grid point `g_idx`:
/// put on the point when the merged loss's rounding takes it below (it would otherwise
/// cost a step).
fn merge_at_or_above(a: Item, b: Item, g_idx: i64, d: f64) -> Item {
    let (x, lp) = merge(a, b);
    let (gm, em) = grid_gap(x, 0.0, g_idx, d);
    if gm - em >= 0.0 {
        (x, 0.0, lp)
    } else {
        let (g, g_lo) = grid_point(g_idx, d);
        (g, g_lo, lp)
    }
}

/// The pour of the module docs over atoms sorted by decreasing loss. Positions are
/// compared with the real grid points through [`grid_gap`]: an atom is placed on a
/// point only if it is certainly at or above it, and each mixing fraction θ is formed
/// from the gaps at their safe ends (docs/accountant.md §5).
fn pour(items: Vec<Item>, d: f64, ln_inf: f64, max_len: usize, uses: u64) -> Result<Lattice> {
    let dense = LogDense::new(false, items.len());
    pour_onto(dense, None, items, d, ln_inf, max_len, uses)
}

/// [`pour`] continued: the grid points pushed so far, the carry, and the items below it.
fn pour_onto(
    mut dense: LogDense,
    mut carry: Option<Item>,
    items: Vec<Item>,
    d: f64,
    ln_inf: f64,
    max_len: usize,
    uses: u64,
) -> Result<Lattice> {
    for (xj, xj_lo, lpj) in items {
        let Some((xc, xc_lo, lpc)) = carry else {
            carry = Some((xj, xj_lo, lpj));
            continue;
        };
        let (g_idx, gc, ec) = grid_below(xc, xc_lo, d)?;
        if gc == 0.0 && ec == 0.0 {
            // Exactly on its grid point.
            dense.push(g_idx, lpc);
            carry = Some((xj, xj_lo, lpj));
            continue;
        }
        let (gj, ej) = grid_gap(xj, xj_lo, g_idx, d);
        if gj - ej >= 0.0 {
            // Both parts lie at or above the grid point, so does their merge.
            carry = Some(merge_at_or_above(
                (xc, xc_lo, lpc),
                (xj, xj_lo, lpj),
                g_idx,
                d,
            ));
            continue;
        }
        // θ = p_c(1 − e^{−(x_c − g)}) / (p_j(e^{g − x_j} − 1)), each gap at its end that
        // makes θ smaller, shrunk by the logs' rounding (and 1e-12): the mixture's loss
        // stays at or above g.
        let num = -(-(gc - ec).max(0.0)).exp_m1();
        let den = (ej - gj).exp_m1();
        let (ln_num, ln_den) = (num.ln(), den.ln());
        let ln_theta = lpc + ln_num - lpj - ln_den - theta_error(lpc, lpj, ln_num, ln_den).ln_1p();
        if ln_theta >= 0.0 {
            // Even all of the atom below keeps the mixture at or above g.
            carry = Some(merge_at_or_above(
                (xc, xc_lo, lpc),
                (xj, xj_lo, lpj),
                g_idx,
                d,
            ));
        } else {
            let mix = log_add(lpc, ln_theta + lpj);
            dense.push(
                g_idx,
                dense.outward(mix, 4.0, lpc.abs() + lpj.abs() + ln_theta.abs()),
            );
            let rest = lpj + (-ln_theta.exp()).ln_1p();
            carry = Some((xj, xj_lo, dense.outward(rest, 4.0, lpj.abs() + rest.abs())));
        }
    }
    if let Some((xc, xc_lo, lpc)) = carry {
        place_last_carry(&mut dense, xc, xc_lo, lpc, d, uses)?;
    }
    dense.finish(d, ln_inf, max_len)
}

/// The pour's last carry `(x, ln p)`, at `s = x − g` above its grid point `g` with no
/// atom below it to merge with: rounded down to `g`, or merged with the fraction θ of the
/// atom at `t + Δ` that puts the mixture exactly at `t = g + Δ` (θ enlarged by 1e-12, so
/// that the mixture's loss is at or above `t` and placing it there can only lower it).
///
/// Rounding down is a first-order error: it lowers the mean loss by `p·s`, and over `k`
/// uses the composition's by `k·p·s`. For a subsampled mechanism (loss bounded below by
/// `ln(1 − q)`, a tenth of its mass within a step of it) that is more than the mean
/// loss itself at small q: over 1e5 uses the lower end of ε fell 3 % at Δ = 1e-4
/// (q = 1e-3, σ = 0.8) and to almost nothing at 3e-4. The merge keeps P- and Q-mass (a
/// post-processing): the mean is kept to first order, and δ at any single ε moves by at
/// most about `p·(Δ − s)` against rounding's `p·s`. So the merge is taken when
/// `(Δ − s) ≤ 4√k·s`: at one use where it is not worse than rounding by more than 4×,
/// over many uses unless the carry is within `Δ/(4√k)` of its grid point (a heavy on-grid
/// atom with a sliver merged in, as the Laplace law's end atom, which rounding leaves
/// where it is). Where the atom above is too light (θ ≥ 1) it is merged whole and the
/// next one tried, up to [`LAST_CARRY_ATOMS`]; failing that, the carry is rounded down.
fn place_last_carry(
    dense: &mut LogDense,
    xc: f64,
    xc_lo: f64,
    lpc: f64,
    d: f64,
    uses: u64,
) -> Result<()> {
    let (g_idx, gc, ec) = grid_below(xc, xc_lo, d)?;
    let on_grid = gc == 0.0 && ec == 0.0;
    if !on_grid && (d - gc) <= 4.0 * (uses.max(1) as f64).sqrt() * gc {
        let t_idx = g_idx + 1;
        let t = grid_point(t_idx, d).0;
        let (mut x, mut x_lo, mut lp) = (xc, xc_lo, lpc);
        let mut absorbed: Vec<usize> = Vec::new();
        for k_idx in t_idx + 1..=t_idx + LAST_CARRY_ATOMS {
            // The pour pushes each grid point once, from the top down: the atoms above
            // are among the last entries.
            let Some(k) = dense.entries.iter().rposition(|e| e.0 == k_idx) else {
                break;
            };
            let lpk = dense.entries[k].1;
            // θ = p_c(e^{t−x_c} − 1) / (p_k(1 − e^{t−x_k})), t − x_c at its largest and
            // enlarged by the logs' rounding (and 1e-12): the mixture at or above t.
            let (tg, te) = grid_gap(x, x_lo, t_idx, d);
            let num = (te - tg).exp_m1();
            let den = -(((t_idx - k_idx) as f64) * d).exp_m1();
            let (ln_num, ln_den) = (num.ln(), den.ln());
            let ln_theta =
                lp + ln_num - lpk - ln_den + theta_error(lp, lpk, ln_num, ln_den).ln_1p();
            if ln_theta < 0.0 {
                let rest = lpk + (-ln_theta.exp()).ln_1p();
                dense.entries[k].1 = dense.outward(rest, 4.0, lpk.abs() + rest.abs());
                for a in absorbed {
                    dense.entries[a].1 = f64::NEG_INFINITY;
                }
                let mix = log_add(lp, ln_theta + lpk);
                dense.push(
                    t_idx,
                    dense.outward(mix, 4.0, lp.abs() + lpk.abs() + ln_theta.abs()),
                );
                return Ok(());
            }
            // Too light: merged whole (both below t, so is their merge; clamped down
            // against rounding, the safe side), and the next atom up is tried.
            let (k_hi, k_lo) = grid_point(k_idx, d);
            let (xm, lm) = merge((x, x_lo, lp), (k_hi, k_lo, lpk));
            (x, x_lo, lp) = (xm.min(t), 0.0, lm);
            absorbed.push(k);
        }
    }
    dense.push(g_idx, lpc);
    Ok(())
}

/// How many atoms above the pour's last carry may be merged whole into it before the
/// one that places it on the grid ([`place_last_carry`]).
const LAST_CARRY_ATOMS: i64 = 64;

/// Merge of two atoms (items: real loss `hi + lo`, `ln P`-mass): P-masses and Q-masses
/// (`p e^{−x}`) add. The merged loss is formed as its offset from the second atom,
/// `x₂ − ln(1 + w(e^{x₂ − x₁} − 1))` with `w` the first atom's share of the mass, so that
/// the masses' logs (known to `u` times their magnitude, far more than a step when the
/// losses are tiny) only enter relative to the offset, which is within the two atoms'
/// distance. For the dominated side the loss and the mass are lowered by their rounding
/// bounds; the loss is returned as a float.
fn merge(a: Item, b: Item) -> (f64, f64) {
    let (x1, x1_lo, lp1) = a;
    let (x2, x2_lo, lp2) = b;
    let lp = log_add(lp1, lp2);
    let l1 = lp1 - lp;
    let w = l1.exp().min(1.0);
    let dx = (x2 - x1) + (x2_lo - x1_lo);
    let off = -(w * dx.exp_m1()).ln_1p();
    let x = x2 + off;
    let u = f64::EPSILON / 2.0;
    // The offset's relative error: w's (the logs' rounding), then dx's (three roundings,
    // each relative to its own result: the remainders are exact), expm1, the product and
    // ln_1p (an ulp or two each); then the sum's rounding and the dropped remainder.
    let off_err = off.abs() * (chain_rounding(&[lp1, lp2, lp, l1]) + 12.0 * u);
    let x_err = off_err + 2.0 * u * x.abs() + x2_lo.abs();
    (x - x_err, lp - ln_round(2.0, lp))
}

/// Relative error bound of a pour's mixing fraction θ formed in log space from the two
/// masses and the two gap factors (each factor within an ulp or two of its value at the
/// gaps used, which are already taken at their safe ends): the sums' rounding, and
/// 1e-12 to spare.
fn theta_error(lpc: f64, lpj: f64, ln_num: f64, ln_den: f64) -> f64 {
    let s = lpc.abs() + lpj.abs() + ln_num.abs() + ln_den.abs();
    1e-12 + chain_rounding(&[lpc, lpj, ln_num, ln_den, s, s, s])
}

#[cfg(test)]
mod tests;
