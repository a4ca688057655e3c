//! Revealed mixtures of mechanisms, each built for one end (docs/accountant.md §2.8).
//!
//! The mechanism that runs part `i` with probability `w_i` and publishes which part it
//! ran has, on the disjoint union of the parts' outputs, the pair `(Σ w_i P_i, Σ w_i Q_i)`:
//! its privacy loss on part `i`'s outputs is part `i`'s own, so its loss law is the
//! mixture `Σ w_i L_i` of the parts' laws (P-masses and the cells' `m` alike), and every
//! hockey-stick divergence is the same mixture of the parts'. A schedule's step between two
//! lattice laws is dominated by such a mixture of them (`crate::accountant::input::schedule`).
//!
//! The mixture's cells add a few log-space operations to each part's (the weights'
//! logarithms, one `log_add`); their rounding is charged on the side of the end the
//! mixture is built for ([`Side`]):
//! - **upper**: both logs of every cell *raised*, which raises the pessimistic
//!   discretisation's δ and nothing else (more P-mass and more `m` in a cell can only
//!   raise δ). Its optimistic discretisation is then not a lower end.
//! - **lower**: the weights, atoms and P-masses *lowered* (a sub-probability law leaks
//!   less), and each cell's `ln m` lowered by its own rounding and twice the P-mass's, so
//!   that `m/P`, which places the cell's merged atom `a − ln(1 − m/P)`, is not above the
//!   exact ratio: the optimistic discretisation's δ can only shrink. Its pessimistic
//!   discretisation is then not an upper end.
//!
//! A composition with a mixture is therefore certified on the mixture's side only, and the
//! schedule uses nothing else of it.

use crate::accountant::core::numeric::{chain_rounding, log_add};
use crate::accountant::laws::{ContinuousRange, LossLaw};
use std::sync::{Arc, Mutex};

/// The end a [`RevealedMixture`] is built for: the direction its roundings are charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Roundings raise every mass: only upper ends of a composition with it hold.
    Upper,
    /// Roundings lower every mass (and `m/P`): only lower ends hold.
    Lower,
}

/// A revealed mixture of loss laws (weights positive, summing to 1), whose roundings
/// are charged toward one [`Side`] (module doc).
#[derive(Debug)]
pub struct RevealedMixture {
    /// `(ln w_i, law_i)`.
    parts: Vec<(f64, Box<dyn LossLaw>)>,
    side: Side,
}

impl RevealedMixture {
    /// The mixture of `parts` `(w_i, law_i)` for the end `side`. Weights must be positive
    /// and finite; they are normalised to sum to 1 (each `ln w_i` moved to `side` by its
    /// rounding).
    ///
    /// ```
    /// use composition::accountant::sampling::revealed::{RevealedMixture, Side};
    /// use composition::accountant::{GaussianLaw, LossLaw};
    /// let m = RevealedMixture::new(vec![
    ///     (0.25, Box::new(GaussianLaw::new(1.0).unwrap()) as Box<dyn LossLaw>),
    ///     (0.75, Box::new(GaussianLaw::new(0.9).unwrap())),
    /// ], Side::Upper);
    /// assert_eq!(m.loss_scale(), 0.9);
    /// ```
    pub fn new(parts: Vec<(f64, Box<dyn LossLaw>)>, side: Side) -> Self {
        assert!(
            !parts.is_empty() && parts.iter().all(|(w, _)| w.is_finite() && *w > 0.0),
            "a mixture needs positive weights"
        );
        let total: f64 = parts.iter().map(|(w, _)| w).sum();
        let sign = match side {
            Side::Upper => 1.0,
            Side::Lower => -1.0,
        };
        let parts = parts
            .into_iter()
            .map(|(w, l)| {
                // w/total and its logarithm, each within an ulp or two: moved by 4u
                // relative plus the logarithm's own rounding.
                let lw = (w / total).ln();
                (
                    lw + sign * (chain_rounding(&[lw, lw]) + 4.0 * f64::EPSILON),
                    l,
                )
            })
            .collect();
        Self { parts, side }
    }

    /// `ln Σ e^{ln w_i + x_i}` and a bound on the rounding of the sums in log space (each
    /// input's last rounding, each intermediate result, the result).
    fn mix_with_error(&self, xs: impl Iterator<Item = f64>) -> (f64, f64) {
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
            return (acc, 0.0);
        }
        (
            acc,
            chain_rounding(&[mags, acc, acc]) + 2.0 * f64::EPSILON * self.parts.len() as f64,
        )
    }

    /// [`Self::mix_with_error`] moved to the mixture's side.
    fn mix(&self, xs: impl Iterator<Item = f64>) -> f64 {
        let (v, e) = self.mix_with_error(xs);
        match self.side {
            Side::Upper => v + e,
            Side::Lower => v - e,
        }
    }
}

impl RevealedMixture {
    /// One cell `(ln P, ln m)` of the mixture from its parts' cells, on its side (module
    /// doc): below, `ln m` goes down by its rounding and twice the P-mass's, so that
    /// `ln m − ln P` cannot exceed the exact difference.
    fn mixed_cell(&self, cells: &[(f64, f64)]) -> (f64, f64) {
        let (lp, ep) = self.mix_with_error(cells.iter().map(|c| c.0));
        let (lm, em) = self.mix_with_error(cells.iter().map(|c| c.1));
        match self.side {
            Side::Upper => (lp + ep, lm + em),
            Side::Lower => (lp - ep, lm - em - 2.0 * ep),
        }
    }
}

impl LossLaw for RevealedMixture {
    fn atoms(&self) -> Vec<(f64, f64)> {
        // Each part's atoms with their masses scaled (moved by 4u: two roundings).
        let f = match self.side {
            Side::Upper => 1.0 + 4.0 * f64::EPSILON,
            Side::Lower => 1.0 - 4.0 * f64::EPSILON,
        };
        self.parts
            .iter()
            .flat_map(|(lw, l)| {
                let w = lw.exp();
                l.atoms().into_iter().map(move |(x, p)| (x, w * p * f))
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
        // Bounds on cut masses, raised like the cells (the 1e-12 also covers a lower
        // mixture's lowered weights).
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
        self.mixed_cell(&cells)
    }
    fn cells(&self, edges: &[f64]) -> Vec<(f64, f64)> {
        let each: Vec<Vec<(f64, f64)>> = self.parts.iter().map(|(_, l)| l.cells(edges)).collect();
        (0..edges.len().saturating_sub(1))
            .map(|i| self.mixed_cell(&each.iter().map(|c| c[i]).collect::<Vec<_>>()))
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
    fn grading_parts(&self) -> Vec<&dyn LossLaw> {
        self.parts.iter().map(|(_, l)| l.as_ref()).collect()
    }
}

/// Most cells a [`SharedPart`] remembers (its latest calls, the oldest dropped first):
/// the calls of one law (a law's cells come in chunks of 16384; its graded cells and its
/// blocks' in a few), enough for the groups of one lattice cell, which are consecutive in
/// a schedule's list and share their parts and their range (a quarter of this, 65 536,
/// measured a fifth slower on 1e4 segments: a law's calls did not all fit). At most about
/// 6 MB a part; what is held is at most the parts' last cells, which the bin budget
/// bounds.
const SHARED_CELLS: usize = 1 << 18;

/// The memo of a [`SharedPart`]: a call's edges (compared in full: bit for bit the same
/// grid), and its cells.
type CellMemo = std::collections::VecDeque<(Vec<f64>, Arc<Vec<(f64, f64)>>)>;

/// A part law shared by several [`RevealedMixture`]s (a schedule's lattice law, a part of
/// every mixture group of its two cells), whose `cells` are computed once for all of
/// them: each call's result is remembered under its edges, the latest
/// `SHARED_CELLS` cells kept. Every other method is the law's own, and a remembered call
/// returns exactly what the law returns, so a mixture built of shared parts is the same
/// law to the bit (a schedule's groups of one cell then cost one part's cells, not one
/// per group).
#[derive(Debug, Clone)]
pub struct SharedPart(Arc<SharedInner>);

#[derive(Debug)]
struct SharedInner {
    law: Box<dyn LossLaw>,
    memo: Mutex<CellMemo>,
}

impl SharedPart {
    /// `law`, to be shared by cloning.
    pub fn new(law: Box<dyn LossLaw>) -> Self {
        Self(Arc::new(SharedInner {
            law,
            memo: Mutex::new(CellMemo::new()),
        }))
    }
}

impl LossLaw for SharedPart {
    fn atoms(&self) -> Vec<(f64, f64)> {
        self.0.law.atoms()
    }
    fn ln_inf_mass(&self) -> f64 {
        self.0.law.ln_inf_mass()
    }
    fn continuous_range(&self, ln_tail: f64) -> Option<ContinuousRange> {
        self.0.law.continuous_range(ln_tail)
    }
    fn cell(&self, a: f64, b: f64) -> (f64, f64) {
        self.0.law.cell(a, b)
    }
    fn cells(&self, edges: &[f64]) -> Vec<(f64, f64)> {
        let found = {
            let memo = self.0.memo.lock().unwrap_or_else(|e| e.into_inner());
            memo.iter()
                .find(|(k, _)| {
                    k.len() == edges.len()
                        && k.iter().zip(edges).all(|(a, b)| a.to_bits() == b.to_bits())
                })
                .map(|(_, v)| v.clone())
        };
        if let Some(v) = found {
            return (*v).clone();
        }
        let v = Arc::new(self.0.law.cells(edges));
        let mut memo = self.0.memo.lock().unwrap_or_else(|e| e.into_inner());
        let mut held: usize = memo.iter().map(|(_, v)| v.len()).sum::<usize>() + v.len();
        while held > SHARED_CELLS {
            let Some((_, old)) = memo.pop_front() else {
                break;
            };
            held -= old.len();
        }
        memo.push_back((edges.to_vec(), v.clone()));
        (*v).clone()
    }
    fn loss_scale(&self) -> f64 {
        self.0.law.loss_scale()
    }
    fn grid_unit(&self) -> Option<f64> {
        self.0.law.grid_unit()
    }
    fn log_convex_tail(&self) -> bool {
        self.0.law.log_convex_tail()
    }
    fn coarse_start(&self, count: u64) -> f64 {
        self.0.law.coarse_start(count)
    }
    fn pilot_step(&self) -> bool {
        self.0.law.pilot_step()
    }
    fn graded(&self) -> bool {
        self.0.law.graded()
    }
    fn grading_parts(&self) -> Vec<&dyn LossLaw> {
        self.0.law.grading_parts()
    }
}

#[cfg(test)]
mod tests {
    use super::{RevealedMixture, Side};
    use crate::accountant::core::exact_exp::{exp_fixed, rat, seeded};
    use crate::accountant::laws::{ContinuousRange, LossLaw};
    use num_bigint::BigInt;
    use num_rational::BigRational;

    /// The parts of the mixtures below: every cell `(lp, lm)` (`Fixed`), or the cell on
    /// `(a, b)` is `(ln(b − a), a + b)`, the edges asked for counted (`ByEdges`: cells
    /// that tell their edges apart).
    #[derive(Debug)]
    enum TestCell {
        Fixed(f64, f64),
        ByEdges(std::sync::atomic::AtomicUsize),
    }

    impl LossLaw for TestCell {
        fn atoms(&self) -> Vec<(f64, f64)> {
            Vec::new()
        }
        fn ln_inf_mass(&self) -> f64 {
            f64::NEG_INFINITY
        }
        fn continuous_range(&self, _: f64) -> Option<ContinuousRange> {
            None
        }
        fn cell(&self, a: f64, b: f64) -> (f64, f64) {
            match self {
                TestCell::Fixed(lp, lm) => (*lp, *lm),
                TestCell::ByEdges(n) => {
                    n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    ((b - a).ln(), a + b)
                }
            }
        }
        fn loss_scale(&self) -> f64 {
            1.0
        }
        fn grid_unit(&self) -> Option<f64> {
            None
        }
    }

    #[test]
    fn shared_parts_give_each_mixture_its_own_cells_and_compute_them_once() {
        // Independent route: the same mixtures of unshared parts. Two grids with the same
        // ends and count but one inner edge apart must not be confused (a memo keyed on
        // the ends alone fails here), and the mixtures of one grid ask the shared part
        // once.
        let shared = super::SharedPart::new(Box::new(TestCell::ByEdges(Default::default())));
        let other = super::SharedPart::new(Box::new(TestCell::Fixed(-1.0, -2.0)));
        let grids: [&[f64]; 2] = [&[0.0, 0.1, 0.2, 0.3], &[0.0, 0.15, 0.2, 0.3]];
        for side in [Side::Upper, Side::Lower] {
            for w in [0.2, 0.7, 0.9] {
                let mix = RevealedMixture::new(
                    vec![
                        (w, Box::new(shared.clone()) as Box<dyn LossLaw>),
                        (1.0 - w, Box::new(other.clone())),
                    ],
                    side,
                );
                let fresh = RevealedMixture::new(
                    vec![
                        (
                            w,
                            Box::new(TestCell::ByEdges(Default::default())) as Box<dyn LossLaw>,
                        ),
                        (1.0 - w, Box::new(TestCell::Fixed(-1.0, -2.0))),
                    ],
                    side,
                );
                for g in grids {
                    let (a, b) = (mix.cells(g), fresh.cells(g));
                    assert_eq!(a.len(), b.len());
                    for (x, y) in a.iter().zip(&b) {
                        assert_eq!(
                            (x.0.to_bits(), x.1.to_bits()),
                            (y.0.to_bits(), y.1.to_bits()),
                            "{g:?}"
                        );
                    }
                }
            }
        }
        // Six mixtures on two grids of three cells: each grid's cells computed once.
        let inner = format!("{:?}", shared.0.law);
        assert!(inner.contains("ByEdges(6)"), "{inner}");
    }

    /// `e^x` enclosed, `(lower, upper)`, as rationals.
    fn exp_encl(x: f64) -> (BigRational, BigRational) {
        let (lo, hi) = exp_fixed(&rat(x));
        let s = BigInt::from(1) << crate::accountant::core::exact_exp::P;
        (BigRational::new(lo, s.clone()), BigRational::new(hi, s))
    }

    #[test]
    fn mixture_cells_land_on_their_side_in_exact_arithmetic() {
        // Seeded parts' cells (ln P down to −700, m/P from 1e-6 to 1) and weights; the
        // exact mixture from the floats as given, `P = Σ w_i e^{lp_i}/Σ w`, `M` likewise:
        // an upper mixture's cell is at least (P, M); a lower one's P-mass at most P and
        // its ratio `e^{lm − lp}` at most `M/P`, the merged atom's place (module doc).
        let mut u = seeded(0x2545_F491_4F6C_DD1D);
        for _ in 0..300 {
            let k = 2 + (u() * 2.0) as usize;
            let parts: Vec<(f64, f64, f64)> = (0..k)
                .map(|_| {
                    let lp = -700.0 * u() * u();
                    (0.01 + u(), lp, lp + (1e-6f64).ln() * u())
                })
                .collect();
            let total = parts
                .iter()
                .fold(BigRational::from_integer(0.into()), |a, p| a + rat(p.0));
            // Σ w_i e^{x_i}/Σ w, enclosed.
            let exact = |pick: fn(&(f64, f64, f64)) -> f64| {
                let (mut lo, mut hi) = (
                    BigRational::from_integer(0.into()),
                    BigRational::from_integer(0.into()),
                );
                for p in &parts {
                    let (a, b) = exp_encl(pick(p));
                    lo += rat(p.0) * a / &total;
                    hi += rat(p.0) * b / &total;
                }
                (lo, hi)
            };
            let (p_lo, p_hi) = exact(|p| p.1);
            let (m_lo, m_hi) = exact(|p| p.2);
            for side in [Side::Upper, Side::Lower] {
                let mix = RevealedMixture::new(
                    parts
                        .iter()
                        .map(|&(w, lp, lm)| {
                            (w, Box::new(TestCell::Fixed(lp, lm)) as Box<dyn LossLaw>)
                        })
                        .collect(),
                    side,
                );
                let (lp, lm) = mix.cell(0.0, 1.0);
                let (elp, elm) = (exp_encl(lp), exp_encl(lm));
                match side {
                    Side::Upper => {
                        assert!(elp.0 >= p_hi && elm.0 >= m_hi, "upper {parts:?}");
                    }
                    Side::Lower => {
                        assert!(elp.1 <= p_lo, "lower P {parts:?}");
                        // e^{lm}·P ≤ e^{lp}·M.
                        assert!(&elm.1 * &p_hi <= &elp.0 * &m_lo, "lower m/P {parts:?}");
                    }
                }
            }
        }
    }
}
