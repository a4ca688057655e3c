//! Revealed mixtures of mechanisms, for upper ends only (docs/accountant.md §2.8).
//!
//! The mechanism that runs part `i` with probability `w_i` and publishes which part it
//! ran has, on the disjoint union of the parts' outputs, the pair `(Σ w_i P_i, Σ w_i Q_i)`:
//! its privacy loss on part `i`'s outputs is part `i`'s own, so its loss law is the
//! mixture `Σ w_i L_i` of the parts' laws (P-masses and the cells' `m` alike), and every
//! hockey-stick divergence is the same mixture of the parts'. A schedule's step between two
//! lattice laws is dominated by such a mixture of them (`super::schedule`).
//!
//! The mixture's cells add a few log-space operations to each part's (the weights'
//! logarithms, one `log_add`); their rounding is charged by *raising* both logs of every
//! cell, which raises the pessimistic discretisation's δ and nothing else (more P-mass
//! and more `m` in a cell can only raise δ). The optimistic discretisation of the same
//! cells is therefore not a certified lower end: only the upper ends of a composition with
//! an [`UpperMixture`] hold, and the schedule uses nothing else of it.

use super::law::{chain_rounding, log_add, ContinuousRange, LossLaw};

/// A revealed mixture of loss laws (weights positive, summing to 1), whose cells are
/// rounded upward: valid for upper ends only (module doc).
#[derive(Debug)]
pub struct UpperMixture {
    /// `(ln w_i, law_i)`.
    parts: Vec<(f64, Box<dyn LossLaw>)>,
}

impl UpperMixture {
    /// The mixture of `parts` `(w_i, law_i)`. Weights must be positive and finite; they
    /// are normalised to sum to 1 (upward: each `ln w_i` is raised by its rounding).
    ///
    /// ```
    /// use composition::accountant::revealed::UpperMixture;
    /// use composition::accountant::{GaussianLaw, LossLaw};
    /// let m = UpperMixture::new(vec![
    ///     (0.25, Box::new(GaussianLaw::new(1.0).unwrap()) as Box<dyn LossLaw>),
    ///     (0.75, Box::new(GaussianLaw::new(0.9).unwrap())),
    /// ]);
    /// assert_eq!(m.loss_scale(), 0.9);
    /// ```
    pub fn new(parts: Vec<(f64, Box<dyn LossLaw>)>) -> Self {
        assert!(
            !parts.is_empty() && parts.iter().all(|(w, _)| w.is_finite() && *w > 0.0),
            "a mixture needs positive weights"
        );
        let total: f64 = parts.iter().map(|(w, _)| w).sum();
        let parts = parts
            .into_iter()
            .map(|(w, l)| {
                // w/total and its logarithm, each within an ulp or two: raised by 4u
                // relative plus the logarithm's own rounding.
                let lw = (w / total).ln();
                (lw + chain_rounding(&[lw, lw]) + 4.0 * f64::EPSILON, l)
            })
            .collect();
        Self { parts }
    }

    /// `ln Σ e^{ln w_i + x_i}` raised by the rounding of the sums in log space (each
    /// input's last rounding, each intermediate result, the result).
    fn mix(&self, xs: impl Iterator<Item = f64>) -> f64 {
        let mut acc = f64::NEG_INFINITY;
        let mut mags = 0.0;
        for ((lw, _), x) in self.parts.iter().zip(xs) {
            if x == f64::NEG_INFINITY {
                continue;
            }
            let t = lw + x;
            acc = log_add(acc, t);
            mags += x.abs() + t.abs() + acc.abs();
        }
        if acc == f64::NEG_INFINITY {
            return acc;
        }
        acc + chain_rounding(&[mags, acc, acc]) + 2.0 * f64::EPSILON * self.parts.len() as f64
    }
}

impl LossLaw for UpperMixture {
    fn atoms(&self) -> Vec<(f64, f64)> {
        // Each part's atoms with their masses scaled (raised by 4u: two roundings).
        self.parts
            .iter()
            .flat_map(|(lw, l)| {
                let w = lw.exp();
                l.atoms()
                    .into_iter()
                    .map(move |(x, p)| (x, w * p * (1.0 + 4.0 * f64::EPSILON)))
            })
            .collect()
    }
    fn ln_inf_mass(&self) -> f64 {
        self.mix(self.parts.iter().map(|(_, l)| l.ln_inf_mass()))
    }
    fn continuous_range(&self, ln_tail: f64) -> Option<ContinuousRange> {
        // The union of the parts' ranges: below its low end each part has at most its own
        // cut mass (its range starts no lower), and the weights sum to 1.
        let mut out: Option<ContinuousRange> = None;
        for (lw, l) in &self.parts {
            let Some(r) = l.continuous_range(ln_tail) else {
                continue;
            };
            let (b, a) = (lw + r.ln_below, lw + r.ln_above);
            out = Some(match out {
                None => ContinuousRange {
                    lo: r.lo,
                    hi: r.hi,
                    ln_below: b,
                    ln_above: a,
                },
                Some(o) => ContinuousRange {
                    lo: o.lo.min(r.lo),
                    hi: o.hi.max(r.hi),
                    ln_below: log_add(o.ln_below, b),
                    ln_above: log_add(o.ln_above, a),
                },
            });
        }
        // Bounds on cut masses, raised like the cells.
        out.map(|o| {
            let up = |x: f64| {
                if x == f64::NEG_INFINITY {
                    x
                } else {
                    x + chain_rounding(&[x, x, x]) + 1e-12
                }
            };
            ContinuousRange {
                ln_below: up(o.ln_below),
                ln_above: up(o.ln_above),
                ..o
            }
        })
    }
    fn cell(&self, a: f64, b: f64) -> (f64, f64) {
        let cells: Vec<(f64, f64)> = self.parts.iter().map(|(_, l)| l.cell(a, b)).collect();
        (
            self.mix(cells.iter().map(|c| c.0)),
            self.mix(cells.iter().map(|c| c.1)),
        )
    }
    fn cells(&self, edges: &[f64]) -> Vec<(f64, f64)> {
        let each: Vec<Vec<(f64, f64)>> = self.parts.iter().map(|(_, l)| l.cells(edges)).collect();
        (0..edges.len().saturating_sub(1))
            .map(|i| {
                (
                    self.mix(each.iter().map(|c| c[i].0)),
                    self.mix(each.iter().map(|c| c[i].1)),
                )
            })
            .collect()
    }
    fn loss_scale(&self) -> f64 {
        self.parts
            .iter()
            .map(|(_, l)| l.loss_scale())
            .fold(f64::INFINITY, f64::min)
    }
    fn grid_unit(&self) -> Option<f64> {
        // A common unit only when every part has the same one.
        let first = self.parts[0].1.grid_unit()?;
        self.parts[1..]
            .iter()
            .all(|(_, l)| l.grid_unit() == Some(first))
            .then_some(first)
    }
    fn log_convex_tail(&self) -> bool {
        self.parts.iter().any(|(_, l)| l.log_convex_tail())
    }
    fn coarse_start(&self, count: u64) -> f64 {
        self.parts
            .iter()
            .map(|(_, l)| l.coarse_start(count))
            .fold(f64::INFINITY, f64::min)
    }
    fn pilot_step(&self) -> bool {
        self.parts.iter().any(|(_, l)| l.pilot_step())
    }
    fn graded(&self) -> bool {
        self.parts.iter().all(|(_, l)| l.graded())
    }
}
