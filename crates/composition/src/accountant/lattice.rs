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

use super::law::{log_add, ContinuousRange, LossLaw, CELL_REL_ERR};
use crate::error::{out_of_range, Result};

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

/// Accumulates log-masses at grid indices.
struct LogDense {
    entries: Vec<(i64, f64)>,
}

impl LogDense {
    fn push(&mut self, j: i64, lp: f64) {
        if lp > f64::NEG_INFINITY {
            self.entries.push((j, lp));
        }
    }

    /// Connect-the-dots split of the cell `(jΔ, (j+1)Δ]` with `ln P = lp` and
    /// `ln m = lm`: the share `w = m/(P(1 − e^{−Δ}))` goes up, the rest stays; masses
    /// inflated by `infl` (log); `ln_dm = ln(1 − e^{−Δ})`.
    fn split_cell(&mut self, j: i64, lp: f64, lm: f64, ln_dm: f64, infl: f64) {
        self.split_wide(j, 1, lp, lm, ln_dm, infl);
    }

    /// [`Self::split_cell`] of the cell `(jΔ, (j+k)Δ]`, `ln_dm = ln(1 − e^{−kΔ})`.
    fn split_wide(&mut self, j: i64, k: i64, lp: f64, lm: f64, ln_dm: f64, infl: f64) {
        if lp == f64::NEG_INFINITY {
            return;
        }
        let lw = (lm - lp - ln_dm).min(0.0);
        self.push(j + k, lp + lw + infl);
        let rest = if lw == f64::NEG_INFINITY {
            0.0
        } else {
            (-lw.exp()).ln_1p()
        };
        self.push(j, lp + rest + infl);
    }

    /// An atom `(x, ln p)`: on its grid point if it is one, else split between the two
    /// neighbouring points keeping its P- and Q-mass.
    fn split_atom(&mut self, x: f64, lp: f64, d: f64, ln_dm: f64, infl: f64) -> Result<()> {
        let j = floor_index(x, d)?;
        let a = j as f64 * d;
        if a == x {
            self.push(j, lp + infl);
        } else {
            self.split_cell(j, lp, lp + (-(a - x).exp_m1()).ln(), ln_dm, infl);
        }
        Ok(())
    }
    fn finish(self, step: f64, ln_inf: f64, max_len: usize) -> Result<Lattice> {
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
            return Err(out_of_range(
                "loss support / grid step (bins)",
                len as f64,
                "at most the bin budget: the loss law spans too many grid steps (its range is \
                 too wide for the resolution its scale needs, or the scales in the list differ \
                 too much)",
            ));
        }
        let mut v = vec![f64::NEG_INFINITY; len as usize];
        for (j, lp) in self.entries {
            let s = &mut v[(j - lo) as usize];
            *s = log_add(*s, lp);
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

/// The kept range of a law's atomless part on the step `d`: the range (its top lowered
/// to a cap's grid point), `ln P` of the capped part, and the first and last grid
/// indices `ia < ib`; `None` for a purely atomic law.
pub(crate) type Cut = Option<(ContinuousRange, f64, i64, i64)>;

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
    // A cap below the range's top: the mass of (cap, hi] is returned apart, and the grid
    // stops at the cap's grid point.
    let mut capped = f64::NEG_INFINITY;
    if cap < range.hi {
        let top = (floor_index(cap.max(range.lo), d)? as f64 * d).max(range.lo);
        if top < range.hi {
            capped = law.cell(top, range.hi).0;
            range.hi = top;
        }
    }
    let ia = floor_index(range.lo, d)?;
    let ib = floor_index(range.hi, d)? + 1;
    if (ib - ia) as u64 > max_len as u64 {
        return Err(out_of_range(
            "loss support / grid step (bins)",
            (ib - ia) as f64,
            "at most the bin budget: the loss law spans too many grid steps (its range is too \
             wide for the resolution its scale needs, or the scales in the list differ too much)",
        ));
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
    let chunks: Vec<(usize, usize)> = (0..n_cells)
        .step_by(CELL_CHUNK)
        .map(|a| (a, (a + CELL_CHUNK).min(n_cells)))
        .collect();
    let mut cells = Vec::with_capacity(n_cells);
    for block in chunks.chunks(CELL_BLOCK_CHUNKS) {
        super::work::charge((block[block.len() - 1].1 - block[0].0) as u64)?;
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
        std::thread::scope(|s| {
            let handles: Vec<_> = block
                .chunks(per)
                .map(|part| s.spawn(move || run(part)))
                .collect();
            for h in handles {
                cells.extend(h.join().expect("cell thread"));
            }
        });
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
        let infl = CELL_REL_ERR.ln_1p();
        let mut dense = LogDense {
            entries: Vec::new(),
        };
        let mut ln_inf = law.ln_inf_mass() + infl;
        let ln_dm = (-(-d).exp_m1()).ln(); // ln(1 − e^{−Δ})
        if let Some((cells, ia, range, capped)) = &grid.cells {
            for c in cells {
                if c.k == 1 {
                    dense.split_cell(c.j, c.lp, c.lm, ln_dm, infl);
                } else {
                    // A graded cell: the same split between its two grid ends.
                    let ln_dmk = (-(-(c.k as f64 * d)).exp_m1()).ln();
                    dense.split_wide(c.j, c.k, c.lp, c.lm, ln_dmk, infl);
                }
            }
            // Tails: below the grid up to its first point, above it (and above a cap) to +∞.
            dense.push(*ia, range.ln_below);
            ln_inf = log_add(ln_inf, range.ln_above);
            ln_inf = log_add(ln_inf, capped + infl);
        }
        let lowest = dense.entries.iter().map(|e| e.0).min();
        for (x, p) in law.atoms() {
            if p.is_nan() || p <= 0.0 {
                continue;
            }
            // A negligible atom far below the kept range is moved up to its lowest point
            // (δ can only grow), so that it does not stretch the grid.
            if let Some(lo_idx) = lowest {
                if p.ln() < ln_tail && x < lo_idx as f64 * d {
                    dense.push(lo_idx, p.ln() + infl);
                    continue;
                }
            }
            dense.split_atom(x, p.ln(), d, ln_dm, infl)?;
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
        let defl = (-CELL_REL_ERR).ln_1p();
        // Merged atoms (loss, ln P-mass).
        let mut items: Vec<(f64, f64)> = Vec::new();
        if let Some((cells, _, range, capped)) = &grid.cells {
            if *capped > f64::NEG_INFINITY {
                items.push((range.hi, capped + defl));
            }
            for c in cells {
                if c.lp == f64::NEG_INFINITY {
                    continue;
                }
                let x = merged_loss(c.j as f64 * d, (c.j + c.k) as f64 * d, c.lp, c.lm);
                items.push((x, c.lp + defl));
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
        for (x, p) in atoms {
            // Negligible atoms far below the kept range are dropped (δ can only shrink).
            if p > 0.0 && !(p.ln() < ln_tail && x < lowest) {
                items.push((x, p.ln() + defl));
            }
        }
        items.sort_by(|u, v| v.0.total_cmp(&u.0));
        pour(items, d, law.ln_inf_mass() + defl, max_len, uses)
    }

    /// Re-discretises this lattice on a coarser step `d` on the pessimistic side: every
    /// atom between two new grid points is split keeping its P- and Q-mass (connect the
    /// dots), masses inflated by `8u` for the rounding of the log-space arithmetic.
    pub fn coarsen_pessimistic(&self, d: f64, max_len: usize) -> Result<Self> {
        let infl = (8.0 * f64::EPSILON).ln_1p();
        let ln_dm = (-(-d).exp_m1()).ln();
        let mut dense = LogDense {
            entries: Vec::with_capacity(2 * self.ln_pmf.len()),
        };
        for (i, &lp) in self.ln_pmf.iter().enumerate() {
            if lp > f64::NEG_INFINITY {
                dense.split_atom(self.loss(i), lp, d, ln_dm, infl)?;
            }
        }
        dense.finish(d, self.ln_inf + infl, max_len)
    }

    /// Re-discretises this lattice on a coarser step `d` on the optimistic side (the pour
    /// of the module docs), masses deflated by `8u`; `uses` as in
    /// [`Self::optimistic_for_uses`].
    pub fn coarsen_optimistic(&self, d: f64, max_len: usize, uses: u64) -> Result<Self> {
        let defl = (-8.0 * f64::EPSILON).ln_1p();
        let mut items: Vec<(f64, f64)> = self
            .ln_pmf
            .iter()
            .enumerate()
            .filter(|(_, &lp)| lp > f64::NEG_INFINITY)
            .map(|(i, &lp)| (self.loss(i), lp + defl))
            .collect();
        items.reverse();
        pour(items, d, self.ln_inf + defl, max_len, uses)
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

/// The pour of the module docs over atoms `(loss, ln P-mass)` sorted by decreasing loss.
fn pour(items: Vec<(f64, f64)>, d: f64, ln_inf: f64, max_len: usize, uses: u64) -> Result<Lattice> {
    let mut dense = LogDense {
        entries: Vec::with_capacity(items.len()),
    };
    let mut carry: Option<(f64, f64)> = None; // (loss, ln p)
    for (xj, lpj) in items {
        let Some((xc, lpc)) = carry else {
            carry = Some((xj, lpj));
            continue;
        };
        let g_idx = floor_index(xc, d)?;
        let g = g_idx as f64 * d;
        if xc == g {
            dense.push(g_idx, lpc);
            carry = Some((xj, lpj));
            continue;
        }
        if xj >= g {
            // Both parts lie at or above g, so does their merge (clamped against
            // rounding, which could otherwise push it below g and cost a whole step).
            let (x, lp) = merge(xc, lpc, xj, lpj);
            carry = Some((x.max(g), lp));
            continue;
        }
        // θ = p_c(1 − e^{g−x_c}) / (p_j(e^{g−x_j} − 1)), shrunk by 1e-12 so that the
        // mixture's loss stays at or above g despite rounding.
        let ln_theta =
            lpc + (-(g - xc).exp_m1()).ln() - lpj - (g - xj).exp_m1().ln() + (-1e-12f64).ln_1p();
        if ln_theta >= 0.0 {
            let (x, lp) = merge(xc, lpc, xj, lpj);
            carry = Some((x.max(g), lp));
        } else {
            dense.push(g_idx, log_add(lpc, ln_theta + lpj));
            carry = Some((xj, lpj + (-ln_theta.exp()).ln_1p()));
        }
    }
    if let Some((xc, lpc)) = carry {
        place_last_carry(&mut dense, xc, lpc, d, uses)?;
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
fn place_last_carry(dense: &mut LogDense, xc: f64, lpc: f64, d: f64, uses: u64) -> Result<()> {
    let g_idx = floor_index(xc, d)?;
    let g = g_idx as f64 * d;
    if xc > g && (d - (xc - g)) <= 4.0 * (uses.max(1) as f64).sqrt() * (xc - g) {
        let t_idx = g_idx + 1;
        let t = t_idx as f64 * d;
        let (mut x, mut lp) = (xc, lpc);
        let mut absorbed: Vec<usize> = Vec::new();
        for k_idx in t_idx + 1..=t_idx + LAST_CARRY_ATOMS {
            // The pour pushes each grid point once, from the top down: the atoms above
            // are among the last entries.
            let Some(k) = dense.entries.iter().rposition(|e| e.0 == k_idx) else {
                break;
            };
            let lpk = dense.entries[k].1;
            let xk = k_idx as f64 * d;
            // θ = p_c(e^{t−x_c} − 1) / (p_k(1 − e^{t−x_k})).
            let ln_theta =
                lp + (t - x).exp_m1().ln() - lpk - (-(t - xk).exp_m1()).ln() + 1e-12f64.ln_1p();
            if ln_theta < 0.0 {
                dense.entries[k].1 = lpk + (-ln_theta.exp()).ln_1p();
                for a in absorbed {
                    dense.entries[a].1 = f64::NEG_INFINITY;
                }
                dense.push(t_idx, log_add(lp, ln_theta + lpk));
                return Ok(());
            }
            // Too light: merged whole (both below t, so is their merge; clamped down
            // against rounding, the safe side), and the next atom up is tried.
            let (xm, lm) = merge(x, lp, xk, lpk);
            (x, lp) = (xm.min(t), lm);
            absorbed.push(k);
        }
    }
    dense.push(g_idx, lpc);
    Ok(())
}

/// How many atoms above the pour's last carry may be merged whole into it before the
/// one that places it on the grid ([`place_last_carry`]).
const LAST_CARRY_ATOMS: i64 = 64;

/// Merge of two atoms `(x, ln p)`: P-masses and Q-masses (`p e^{−x}`) add.
fn merge(x1: f64, lp1: f64, x2: f64, lp2: f64) -> (f64, f64) {
    let lp = log_add(lp1, lp2);
    let lq = log_add(lp1 - x1, lp2 - x2);
    (lp - lq, lp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accountant::law::BoundedNoiseLaw;
    use densities::bounded::BoundedFamily;

    /// Cells split between threads are the cells of one sequential pass over the same
    /// edges, and both sides built from shared cells are the lattices built on their own.
    #[test]
    fn cells_computed_in_chunks_match_one_pass_and_both_sides_match() {
        let law = BoundedNoiseLaw::new(BoundedFamily::power(2.0).unwrap(), 100.0, 1.0).unwrap();
        let d = law.loss_scale() / 64.0;
        let g = GridCells::new(&law, d, -40.0, 1 << 22, f64::INFINITY).unwrap();
        let (cells, ia, _, _) = g.cells.as_ref().unwrap();
        assert!(cells.iter().all(|c| c.k == 1));
        assert!(
            cells.len() > 2 * CELL_CHUNK,
            "{} cells: not chunked",
            cells.len()
        );
        let edges: Vec<f64> = (0..=cells.len())
            .map(|i| (ia + i as i64) as f64 * d)
            .collect();
        let one = law.cells(&edges);
        for (i, (c, o)) in cells.iter().zip(&one).enumerate() {
            assert_eq!((c.lp, c.lm), *o, "cell {i}");
        }
        let p = Lattice::pessimistic_from(&law, &g, -40.0, 1 << 22).unwrap();
        let q = Lattice::optimistic_from(&law, &g, -40.0, 1 << 22).unwrap();
        assert_eq!(p, Lattice::pessimistic(&law, d, -40.0, 1 << 22).unwrap());
        assert_eq!(q, Lattice::optimistic(&law, d, -40.0, 1 << 22).unwrap());
    }
}
