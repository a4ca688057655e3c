//! Graded cells: one grid step wide where a law's tilted mass is, several steps wide in
//! the far tails that carry almost none of it (docs/accountant.md §3.3).
//!
//! Both discretisations are valid for any partition of the loss range into cells whose
//! edges are grid points (the connect-the-dots split puts a cell's mass on its two ends,
//! the merge on one point inside it), so grading changes only the bracket's width, never
//! its validity. The width a cell adds is second order in its own width and weighted by
//! its mass under the tilt λ at which the composition is evaluated: a cell `I` of `k`
//! steps adds about `k²` times what a one-step cell of the same tilted mass
//! `ω(I) = P(I)·e^{λx_I}` adds. The subsampled Gaussian at small q has its mass in a body
//! q wide and a tail tens of nats long; at the step the body needs, more than 99 % of the
//! cells lie in that tail, and they held 27–45 % of the time of DP-SGD accounting.
//!
//! The partition is built in two passes: blocks of [`BLOCK`] steps first (a 64th of the
//! cells), from which λ is found for the question asked ([`Focus`]) on the blocks'
//! merged points; then each block is cut into cells of the widest power-of-two width `k`
//! with `ω(B)·(k² − 1) ≤ η·W/n`, `W` the law's total tilted mass over its `n` blocks and
//! `η` = [`SHARE`]: the graded cells add at most a fraction η to the discretisation's
//! second-order error in this model.

use crate::accountant::core::numeric::log_add;
use crate::accountant::grid::lattice::{cells_between, cut, merged_loss, Cut, GridCells};
use crate::accountant::laws::LossLaw;
use crate::error::Result;

/// Grid steps of a block of the first pass (and the widest graded cell).
const BLOCK: i64 = 64;

/// η: the share of the one-step discretisation's second-order error the graded cells may
/// add in all.
const SHARE: f64 = 0.02;

/// The question a discretisation serves, which sets the tilt its cells are weighted at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Focus {
    /// No question (a trade-off curve spans all tilts): one-step cells.
    Uniform,
    /// `ε(δ)` with `ln δ` given.
    Epsilon(f64),
    /// `δ(ε)` with `ε` given.
    Delta(f64),
}

/// A law's first pass: its range on the grid and one cell a block, as the block's merged
/// point `(loss, ln P)` (`a − ln(1 − m/P)`, its likelihood ratio's log, inside the block;
/// `ln P = −∞` for a block without mass).
pub(crate) struct Blocks {
    step: f64,
    cut: Cut,
    edges: Vec<i64>,
    merged: Vec<(f64, f64)>,
    /// The merged points of the law's [`LossLaw::grading_parts`] on the same blocks
    /// (empty for a law graded by its own).
    parts: Vec<Vec<(f64, f64)>>,
}

impl Blocks {
    /// The blocks of `law` on the step `d` (arguments as [`GridCells::new`]).
    pub(crate) fn new(
        law: &dyn LossLaw,
        d: f64,
        ln_tail: f64,
        max_len: usize,
        cap: f64,
    ) -> Result<Self> {
        let c = cut(law, d, ln_tail, max_len, cap)?;
        let edges = match c {
            Some((_, _, ia, ib)) => block_edges(ia, ib),
            None => Vec::new(),
        };
        let values = if edges.len() > 1 {
            cells_between(law, &edges, d)?
        } else {
            Vec::new()
        };
        let points = |values: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
            edges
                .windows(2)
                .zip(values)
                .map(|(e, (lp, lm))| (merged_loss(e[0] as f64 * d, e[1] as f64 * d, lp, lm), lp))
                .collect()
        };
        let merged = points(values);
        let mut parts = Vec::new();
        if edges.len() > 1 {
            for p in law.grading_parts() {
                parts.push(points(cells_between(p, &edges, d)?));
            }
        }
        Ok(Self {
            step: d,
            cut: c,
            edges,
            merged,
            parts,
        })
    }

    /// The graded cells of `law` (the law these blocks were computed for) at tilt `lambda`.
    pub(crate) fn graded(&self, law: &dyn LossLaw, lambda: f64) -> Result<GridCells> {
        let edges = self.cut.map(|_| {
            if self.parts.is_empty() {
                graded_edges(&self.edges, &block_widths(&self.merged, lambda))
            } else {
                // Each block as fine as its finest part asks (any partition is valid,
                // module doc): about the mixture's own grading, whose block weights and
                // total are the same mixture of the parts', and the same grid for every
                // mixture of these parts.
                let mut widths = block_widths(&self.parts[0], lambda);
                for p in &self.parts[1..] {
                    for (w, v) in widths.iter_mut().zip(block_widths(p, lambda)) {
                        *w = (*w).min(v);
                    }
                }
                graded_edges(&self.edges, &widths)
            }
        });
        GridCells::on_edges(law, self.step, self.cut, edges.as_deref())
    }
}

/// `ia`, the multiples of [`BLOCK`] strictly between, and `ib`.
fn block_edges(ia: i64, ib: i64) -> Vec<i64> {
    let mut out = vec![ia];
    let mut j = (ia.div_euclid(BLOCK) + 1) * BLOCK;
    while j < ib {
        out.push(j);
        j += BLOCK;
    }
    out.push(ib);
    out
}

/// The width (grid steps, a power of two up to [`BLOCK`]) of each block's graded cells:
/// the widest `k` its tilted weight allows with merged points `merged` (module docs); a
/// block without mass is one cell.
fn block_widths(merged: &[(f64, f64)], lambda: f64) -> Vec<i64> {
    let ln_w: Vec<f64> = merged
        .iter()
        .map(|&(x, lp)| {
            if lp == f64::NEG_INFINITY {
                f64::NEG_INFINITY
            } else {
                lp + lambda * x
            }
        })
        .collect();
    let ln_total = ln_w.iter().fold(f64::NEG_INFINITY, |s, &w| log_add(s, w));
    let n = ln_w
        .iter()
        .filter(|w| **w > f64::NEG_INFINITY)
        .count()
        .max(1);
    let allowed = SHARE.ln() + ln_total - (n as f64).ln();
    ln_w.iter()
        .map(|&w| {
            // Widest k with ω·(k² − 1) within its share.
            let mut k = BLOCK;
            while k > 1 && w > f64::NEG_INFINITY && w + ((k * k - 1) as f64).ln() > allowed {
                k /= 2;
            }
            k
        })
        .collect()
}

/// The edges of the graded partition: each block (edges `blocks`) cut into cells of its
/// width (`widths`, one a block).
fn graded_edges(blocks: &[i64], widths: &[i64]) -> Vec<i64> {
    let mut out = vec![blocks[0]];
    for (e, &k) in blocks.windows(2).zip(widths) {
        let mut j = e[0] + k;
        while j < e[1] {
            out.push(j);
            j += k;
        }
        out.push(e[1]);
    }
    out
}

/// The tilt at which a composition of laws, given by their points `(loss, ln P)` and
/// counts, answers the question `focus`: for `ε(δ)` the minimiser of the Chernoff bound
/// `(C(λ) − ln δ)/λ` (`C(λ) = Σ c_i ln Σ P e^{λx}`), where `λC'(λ) − C(λ) = −ln δ`; for
/// `δ(ε)` the saddle point `C'(λ) = ε`. Within `[0, 1e4]`; 0 without a question.
pub(crate) fn tilt(parts: &[(Vec<(f64, f64)>, f64)], focus: Focus) -> f64 {
    // (C, C') at λ.
    let cgf = |lam: f64| -> (f64, f64) {
        let mut c = 0.0;
        let mut c1 = 0.0;
        for (pts, count) in parts {
            let top = pts
                .iter()
                .map(|&(x, lp)| lp + lam * x)
                .fold(f64::NEG_INFINITY, f64::max);
            if top == f64::NEG_INFINITY {
                continue;
            }
            let (mut s0, mut s1) = (0.0, 0.0);
            for &(x, lp) in pts {
                let w = (lp + lam * x - top).exp();
                s0 += w;
                s1 += w * x;
            }
            c += count * (top + s0.ln());
            c1 += count * s1 / s0;
        }
        (c, c1)
    };
    // g increases in λ; the answer is where it reaches `target`.
    let (g, target): (Box<dyn Fn(f64) -> f64>, f64) = match focus {
        Focus::Uniform => return 0.0,
        Focus::Epsilon(ln_delta) => (
            Box::new(|l: f64| {
                let (c, c1) = cgf(l);
                l * c1 - c
            }),
            -ln_delta,
        ),
        Focus::Delta(eps) => (Box::new(|l: f64| cgf(l).1), eps),
    };
    const TOP: f64 = 1e4;
    let ok = |v: f64| v.is_finite();
    if !ok(g(0.0)) || g(0.0) >= target {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    while hi < TOP {
        let v = g(hi);
        if !ok(v) || v >= target {
            break;
        }
        lo = hi;
        hi *= 4.0;
    }
    if hi >= TOP {
        return TOP;
    }
    for _ in 0..40 {
        let m = 0.5 * (lo + hi);
        let v = g(m);
        if ok(v) && v < target {
            lo = m;
        } else {
            hi = m;
        }
    }
    hi
}

/// The points of a law for [`tilt`]: its blocks' merged points and its finite atoms.
pub(crate) fn points(law: &dyn LossLaw, blocks: &Blocks) -> Vec<(f64, f64)> {
    let mut p: Vec<(f64, f64)> = blocks
        .merged
        .iter()
        .copied()
        .filter(|m| m.1 > f64::NEG_INFINITY)
        .collect();
    p.extend(
        law.atoms()
            .into_iter()
            .filter(|a| a.1 > 0.0 && a.0.is_finite())
            .map(|(x, m)| (x, m.ln())),
    );
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_edges_are_aligned_and_cover_the_range() {
        assert_eq!(block_edges(-70, 130), vec![-70, -64, 0, 64, 128, 130]);
        assert_eq!(block_edges(0, 64), vec![0, 64]);
        assert_eq!(block_edges(3, 10), vec![3, 10]);
    }

    /// The Gaussian's loss law `N(m, 2m)`, `m = μ²/2`, used `c` times: `C(λ) = c(λm + λ²m)`,
    /// so the ε(δ) tilt solves `λC' − C = c·mλ² = −ln δ` and the δ(ε) tilt
    /// `C' = c·m(1 + 2λ) = ε`, in closed form.
    #[test]
    fn the_tilts_of_a_composed_gaussian_match_their_closed_forms() {
        let (mu, c): (f64, f64) = (1.0, 3.0);
        let m = 0.5 * mu * mu;
        let raw: Vec<(f64, f64)> = (-4000..=4000)
            .map(|i| {
                let z = i as f64 / 400.0;
                (m + mu * z, -0.5 * z * z)
            })
            .collect();
        let ln_total = raw.iter().fold(f64::NEG_INFINITY, |s, p| log_add(s, p.1));
        let pts: Vec<(f64, f64)> = raw.iter().map(|&(x, l)| (x, l - ln_total)).collect();
        let parts = vec![(pts, c)];
        let ln_delta = -12.0;
        let lam = tilt(&parts, Focus::Epsilon(ln_delta));
        let want = (-ln_delta / (c * m)).sqrt();
        assert!(
            (lam - want).abs() < 1e-3 * want,
            "tilt {lam}, closed form {want}"
        );
        let eps = 9.0;
        let lam = tilt(&parts, Focus::Delta(eps));
        let want = (eps / (c * m) - 1.0) / 2.0;
        assert!(
            (lam - want).abs() < 1e-3 * want,
            "tilt {lam}, closed form {want}"
        );
        assert_eq!(tilt(&parts, Focus::Delta(0.1)), 0.0);
        assert_eq!(tilt(&parts, Focus::Uniform), 0.0);
    }

    /// The closed-form δ(ε) of one use of the Poisson-subsampled Gaussian (remove
    /// direction, shift μ, rate q): with y* where the loss is ε,
    /// `δ = P(Y > y*) − e^ε Q(Y > y*)`.
    fn one_use_delta(mu: f64, q: f64, eps: f64) -> f64 {
        let sf = |x: f64| densities::normal::ln_cdf(-x).exp();
        let y = ((eps.exp_m1() + q).ln() - q.ln() + 0.5 * mu * mu) / mu;
        (1.0 - q) * sf(y) + q * sf(y - mu) - eps.exp() * sf(y)
    }

    /// `δ(ε)` of a lattice: `Σ p_j (1 − e^{ε − x_j})_+ + P(+∞)`.
    fn lattice_delta(l: &crate::accountant::grid::lattice::Lattice, eps: f64) -> f64 {
        let fin: f64 = l
            .ln_pmf
            .iter()
            .enumerate()
            .map(|(j, &lp)| lp.exp() * (-(eps - l.loss(j)).exp_m1()).max(0.0))
            .sum();
        fin + l.ln_inf.exp()
    }

    /// Graded cells of a subsampled Gaussian at a small rate: a tenth of the cells or
    /// fewer; one use's two lattices still hold the closed-form δ(ε) between them at every
    /// ε, the coarse tail included; and 10⁴ uses at the same step keep the bracket's
    /// width within 10 % of the one-step cells' (and the two brackets overlap).
    #[test]
    fn graded_cells_keep_both_sides_and_the_width_with_a_fraction_of_the_cells() {
        use crate::accountant::compose::at_step::{eps_at, EpsQuestion};
        use crate::accountant::grid::lattice::Lattice;
        use crate::accountant::query::accountant::Accountant;
        use crate::accountant::sampling::subsampled::{Base, Direction, SubsampledLaw};
        let (mu, q, d, t, bins) = (1.25f64, 1e-3f64, 2e-5, -40.0, 1usize << 22);
        let law = SubsampledLaw::new(Base::Gaussian, mu, q, Direction::Remove).unwrap();
        let ln_delta = -6.0 * std::f64::consts::LN_10;
        let blocks = Blocks::new(&law, d, t, bins, f64::INFINITY).unwrap();
        let lam = tilt(&[(points(&law, &blocks), 1e4)], Focus::Epsilon(ln_delta));
        assert!(lam > 0.5 && lam < 50.0, "tilt {lam}");
        let graded = blocks.graded(&law, lam).unwrap();
        let uniform = GridCells::new(&law, d, t, bins, f64::INFINITY).unwrap();
        assert!(
            graded.len() * 10 < uniform.len(),
            "{} graded cells against {} one-step cells",
            graded.len(),
            uniform.len()
        );
        let up = Lattice::pessimistic_from(&law, &graded, t, bins).unwrap();
        let lo = Lattice::optimistic_from(&law, &graded, t, bins).unwrap();
        for eps in [1e-4f64, 1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 3.0] {
            let truth = one_use_delta(mu, q, eps);
            let (a, b) = (lattice_delta(&lo, eps), lattice_delta(&up, eps));
            // 1e-13 relative: the two sums' own rounding here (the upper side's cut now
            // charges the tail's mass itself, and meets the closed form to 5e-17).
            let slack = 1e-13 * truth;
            assert!(
                a <= truth + slack && truth <= b + slack,
                "eps {eps}: {a} <= {truth} <= {b}"
            );
            assert!(
                b < truth * 1.01 + 1e-16,
                "eps {eps}: upper {b} against {truth}"
            );
        }
        let acc = Accountant::new(vec![(Box::new(law), 10_000)]).unwrap();
        let tail = acc.ln_tail(ln_delta);
        let at = |focus: Focus| {
            acc.both_sides(d, tail, f64::INFINITY, focus, |f, upper| {
                let question = EpsQuestion {
                    ln_target: ln_delta,
                    upper,
                    max_bins: bins,
                    ln_tail: tail,
                    jumps: false,
                    center: f64::NAN,
                    accuracy: 1e-4,
                };
                eps_at(f, &question)
            })
            .unwrap()
        };
        let (g, u) = (at(Focus::Epsilon(ln_delta)), at(Focus::Uniform));
        assert!(g.0 <= u.1 && u.0 <= g.1, "graded {g:?}, one-step {u:?}");
        assert!(
            g.1 - g.0 <= 1.1 * (u.1 - u.0),
            "graded {g:?} wider than one-step {u:?}"
        );
    }

    /// Mixtures of the same two subsampled Gaussians at different weights are graded
    /// alike, from their parts (so that they share the parts' cells), with under an
    /// eighth of the one-step cells (the range cut at the tail's mass, §2.6: 19295 of
    /// 180289); each one's two lattices hold its exact δ(ε), the same mixture
    /// of the parts' closed forms, at every ε (one use), the coarse tail included.
    #[test]
    fn mixtures_of_the_same_parts_share_one_graded_grid_and_hold_their_delta() {
        use crate::accountant::grid::lattice::Lattice;
        use crate::accountant::sampling::revealed::{RevealedMixture, SharedPart, Side};
        use crate::accountant::sampling::subsampled::{Base, Direction, SubsampledLaw};
        let (q, d, t, bins) = (1e-3f64, 2e-5, -40.0, 1usize << 22);
        // Neighbours on a schedule's lattice (ρ near 0.8 %).
        let mus = [1.25f64, 1.24];
        let parts: Vec<SharedPart> = mus
            .iter()
            .map(|&m| {
                SharedPart::new(Box::new(
                    SubsampledLaw::new(Base::Gaussian, m, q, Direction::Remove).unwrap(),
                ))
            })
            .collect();
        let ln_delta = -6.0 * std::f64::consts::LN_10;
        let mut grids = Vec::new();
        let mut lam: Option<f64> = None;
        for (w, side) in [(0.1, Side::Upper), (0.8, Side::Upper), (0.5, Side::Lower)] {
            let law = RevealedMixture::new(
                vec![
                    (w, Box::new(parts[0].clone()) as Box<dyn LossLaw>),
                    (1.0 - w, Box::new(parts[1].clone())),
                ],
                side,
            );
            let blocks = Blocks::new(&law, d, t, bins, f64::INFINITY).unwrap();
            // One tilt for the composition's laws, as the accountant's.
            let lam = *lam.get_or_insert_with(|| {
                tilt(&[(points(&law, &blocks), 1e4)], Focus::Epsilon(ln_delta))
            });
            let graded = blocks.graded(&law, lam).unwrap();
            let uniform = GridCells::new(&law, d, t, bins, f64::INFINITY).unwrap();
            assert!(
                graded.len() * 8 < uniform.len(),
                "{} cells of {} lam {lam}",
                graded.len(),
                uniform.len()
            );
            let up = Lattice::pessimistic_from(&law, &graded, t, bins).unwrap();
            let lo = Lattice::optimistic_from(&law, &graded, t, bins).unwrap();
            for eps in [1e-3f64, 0.01, 0.1, 0.5, 1.0, 2.0, 3.0] {
                let truth =
                    w * one_use_delta(mus[0], q, eps) + (1.0 - w) * one_use_delta(mus[1], q, eps);
                // Each lattice holds only on its mixture's side (module revealed).
                match side {
                    Side::Upper => assert!(lattice_delta(&up, eps) >= truth, "eps {eps}"),
                    Side::Lower => assert!(lattice_delta(&lo, eps) <= truth, "eps {eps}"),
                }
            }
            grids.push(graded.partition());
        }
        assert!(grids.iter().all(|g| *g == grids[0]), "the grids differ");
    }
}
