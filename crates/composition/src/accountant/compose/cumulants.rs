//! Cumulant generating functions of lattice laws and their compositions, the saddle
//! point of an ε, the largest loss (docs/accountant.md §4).

use super::tilted::Factor;
use crate::accountant::core::fft::U;
use crate::accountant::grid::lattice::Lattice;
use densities::outward;

/// Cumulant generating function of a factor's finite part and its first two derivatives
/// (loss units), `K(θ) = ln Σ ω(x) e^{θx}`.
pub(crate) fn cgf(law: &Lattice, theta: f64) -> (f64, f64, f64) {
    let d = law.step;
    // One pass for the maximum, one for the three sums (one exponential per entry).
    let m = law
        .ln_pmf
        .iter()
        .enumerate()
        .map(|(i, &lp)| lp + theta * (law.lo + i as i64) as f64 * d)
        .fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return (m, 0.0, 0.0);
    }
    let (mut s0, mut s1, mut s2) = (0.0, 0.0, 0.0);
    for (i, &lp) in law.ln_pmf.iter().enumerate() {
        let x = (law.lo + i as i64) as f64 * d;
        let t = lp + theta * x - m;
        // Below e^{−746} a term underflows to 0 anyway (skipping libm's slow path).
        if t > -746.0 {
            let w = t.exp();
            s0 += w;
            s1 += w * x;
            s2 += w * x * x;
        }
    }
    let m1 = s1 / s0;
    (m + s0.ln(), m1, (s2 / s0 - m1 * m1).max(0.0))
}

/// An upper bound on `K(θ) = ln Σ ω(x) e^{θx}` of a lattice: [`cgf`]'s value with its
/// rounding charged. Each exponent `ln ω + θx` is within `3u(|ln ω| + |θx|)`, each
/// exponential within `2u` relative, the sum of `n` positive terms within `n·u`, and the
/// logarithm and the final addition within `u` of their magnitudes (`|max exponent|` and
/// `ln n` at most, the sum lying in `[1, n]` times the largest term). `−∞` for an empty
/// lattice.
pub(crate) fn cgf_upper(law: &Lattice, theta: f64) -> f64 {
    let k = cgf(law, theta).0;
    if k == f64::NEG_INFINITY {
        return k;
    }
    let d = law.step;
    let big = law
        .ln_pmf
        .iter()
        .enumerate()
        .filter(|(_, &lp)| lp > f64::NEG_INFINITY)
        .map(|(i, &lp)| lp.abs() + (theta * (law.lo + i as i64) as f64 * d).abs())
        .fold(0.0f64, f64::max);
    let n = law.ln_pmf.len() as f64;
    k + U * (4.0 * big + 2.0 * n + 8.0 + n.ln())
}

/// `Σ c_i K_i(θ)` and its derivatives.
pub(crate) fn total_cgf(factors: &[Factor], theta: f64) -> (f64, f64, f64) {
    let each: Vec<(f64, f64, f64)> = factors.iter().map(|f| cgf(f.law, theta)).collect();
    sum_cgf(factors, &each)
}

/// `Σ c_i (K_i, K_i', K_i'')` from each factor's [`cgf`] values `each`.
pub(crate) fn sum_cgf(factors: &[Factor], each: &[(f64, f64, f64)]) -> (f64, f64, f64) {
    let mut out = (0.0, 0.0, 0.0);
    for (f, &(k, k1, k2)) in factors.iter().zip(each) {
        let c = f.count as f64;
        out.0 += c * k;
        out.1 += c * k1;
        out.2 += c * k2;
    }
    out
}

/// Entries per block of a [`Cumulants`] table.
const CGF_BLOCK: usize = 64;

/// Largest `|θ|·Δ·CGF_BLOCK` for which a block is summed by powers of `e^{θΔ}` (beyond,
/// entry by entry): the powers stay below `e^{40}`, and an entry that underflowed to 0
/// in its block's table weighed less than `e^{−700}` of the block's largest.
const CGF_BLOCK_SPAN: f64 = 40.0;

/// [`total_cgf`] for many tilts of the same factors: each lattice's masses are stored
/// once as `e^{ln ω − M_b}` per block of [`CGF_BLOCK`] entries (`M_b` the block's
/// largest), so that a tilt costs one exponential per block and a multiply-add per entry
/// instead of an exponential per entry (the root searches of the saddle point and of the
/// Chernoff levels evaluate 10–60 tilts of lattices of 1e5–1e6 entries). Each term is
/// within about `2·CGF_BLOCK·u` of [`cgf`]'s: these values place windows and tilts, and
/// bound tails far below the answers (docs/accountant.md §5).
pub(crate) struct Cumulants<'a> {
    pub(crate) factors: &'a [Factor<'a>],
    pub(crate) tables: std::sync::Arc<Vec<BlockTable>>,
}

/// One lattice's table: per block `(first index, M_b, first and end positions in the
/// entries)`, and the block's nonzero scaled masses `(offset in the block, mass)` (graded
/// cells leave most of a far tail's bins empty: they are not visited).
type BlockTable = (Vec<(usize, f64, usize, usize)>, Vec<(u8, f64)>);

impl<'a> Cumulants<'a> {
    /// The tables of `factors` (one exponential per entry).
    pub(crate) fn new(factors: &'a [Factor<'a>]) -> Self {
        let tables = factors
            .iter()
            .map(|f| {
                let lp = &f.law.ln_pmf;
                let mut blocks = Vec::with_capacity(lp.len().div_ceil(CGF_BLOCK));
                let mut w = Vec::new();
                for start in (0..lp.len()).step_by(CGF_BLOCK) {
                    let end = (start + CGF_BLOCK).min(lp.len());
                    let m = lp[start..end]
                        .iter()
                        .copied()
                        .fold(f64::NEG_INFINITY, f64::max);
                    let first = w.len();
                    if m > f64::NEG_INFINITY {
                        for (j, &l) in lp[start..end].iter().enumerate() {
                            let v = (l - m).exp();
                            if v != 0.0 {
                                w.push((j as u8, v));
                            }
                        }
                    }
                    blocks.push((start, m, first, w.len()));
                }
                (blocks, w)
            })
            .collect();
        Self {
            factors,
            tables: std::sync::Arc::new(tables),
        }
    }

    /// The same tables for `factors`: the same laws, in the same order, at other counts
    /// (a stage of `m` uses: a window's cost estimated before it is composed).
    pub(crate) fn for_counts<'b>(&self, factors: &'b [Factor<'b>]) -> Cumulants<'b> {
        debug_assert!(factors
            .iter()
            .zip(self.factors)
            .all(|(a, b)| std::ptr::eq(a.law, b.law)));
        Cumulants {
            factors,
            tables: self.tables.clone(),
        }
    }

    /// `Σ c_i K_i(θ)` and its first two derivatives, as [`total_cgf`].
    pub(crate) fn total(&self, theta: f64) -> (f64, f64, f64) {
        let mut out = (0.0, 0.0, 0.0);
        for (f, (blocks, w)) in self.factors.iter().zip(self.tables.iter()) {
            let law = f.law;
            let d = law.step;
            if theta.abs() * d * CGF_BLOCK as f64 > CGF_BLOCK_SPAN {
                let (k, k1, k2) = cgf(law, theta);
                let c = f.count as f64;
                out = (out.0 + c * k, out.1 + c * k1, out.2 + c * k2);
                continue;
            }
            let n = law.ln_pmf.len();
            let x = |i: usize| (law.lo + i as i64) as f64 * d;
            // The largest exponent over the blocks, bounded by each block's largest mass
            // at its end of greatest tilt.
            let top = blocks
                .iter()
                .filter(|b| b.1 > f64::NEG_INFINITY)
                .map(|&(start, m, _, _)| {
                    let end = (start + CGF_BLOCK).min(n) - 1;
                    m + (theta * x(start)).max(theta * x(end))
                })
                .fold(f64::NEG_INFINITY, f64::max);
            if top == f64::NEG_INFINITY {
                let c = f.count as f64;
                out.0 += c * f64::NEG_INFINITY;
                continue;
            }
            // Powers of e^{θΔ} by successive products, as a running product would give.
            let r = (theta * d).exp();
            let mut pw = [0.0f64; CGF_BLOCK];
            let mut p = 1.0;
            for v in pw.iter_mut() {
                *v = p;
                p *= r;
            }
            let (mut s0, mut s1, mut s2) = (0.0, 0.0, 0.0);
            for &(start, m, first, last) in blocks {
                if m == f64::NEG_INFINITY {
                    continue;
                }
                let x0 = x(start);
                let t0 = m + theta * x0 - top;
                // Below e^{−746} the whole block underflows (its largest term at most
                // e^{t0 + 40}: skipped only when that is below e^{−706}).
                if t0 < -746.0 - CGF_BLOCK_SPAN {
                    continue;
                }
                let (mut a0, mut a1, mut a2) = (0.0, 0.0, 0.0);
                for &(j, wj) in &w[first..last] {
                    let t = wj * pw[j as usize];
                    let jf = j as f64;
                    a0 += t;
                    a1 += t * jf;
                    a2 += t * jf * jf;
                }
                let g = t0.exp();
                // Σ t x = x0 Σ t + d Σ j t; Σ t x² = x0² Σ t + 2 x0 d Σ j t + d² Σ j² t.
                s0 += g * a0;
                s1 += g * (x0 * a0 + d * a1);
                s2 += g * (x0 * x0 * a0 + 2.0 * x0 * d * a1 + d * d * a2);
            }
            let m1 = s1 / s0;
            let c = f.count as f64;
            out.0 += c * (top + s0.ln());
            out.1 += c * m1;
            out.2 += c * (s2 / s0 - m1 * m1).max(0.0);
        }
        out
    }
}

/// Largest finite loss of the composition (`Σ c_i · max loss_i`), rounded up: every
/// factor's losses lie on one grid `jΔ`, so it is `Δ·N` for the integer `N = Σ c_i j_i`,
/// and above it only the `+∞` atom remains. Rounded to nearest, `N·Δ` can fall below the
/// exact largest loss (`62 × 1.5388`: by 4e-15), and an ε answer placed there would be
/// below the exact ε (docs/accountant.md §5).
pub(crate) fn max_loss(factors: &[Factor]) -> f64 {
    let n: i128 = factors
        .iter()
        .map(|f| {
            let last = f
                .law
                .ln_pmf
                .iter()
                .rposition(|&l| l > f64::NEG_INFINITY)
                .unwrap_or(0);
            f.count as i128 * (f.law.lo + last as i64) as i128
        })
        .sum();
    grid_point_up(n, factors[0].law.step)
}

/// An upper bound on the grid point `n·d` (`d > 0`), within two roundings of it.
pub(crate) fn grid_point_up(n: i128, d: f64) -> f64 {
    let m = n.unsigned_abs() as f64;
    if n >= 0 {
        // The conversion rounds to nearest: up where it fell below.
        let m = if (m as u128) < n.unsigned_abs() {
            outward::up(m)
        } else {
            m
        };
        outward::mul_up(m, d)
    } else {
        let m = if (m as u128) > n.unsigned_abs() {
            outward::down(m)
        } else {
            m
        };
        -outward::mul_down(m, d)
    }
}

/// `λ ≥ 0` at which the tilted composed mean is `eps` (0 when the untilted mean is
/// already above `eps`); `None` when `eps` is at or above the largest finite loss.
pub(crate) fn saddle(factors: &[Factor], eps: f64) -> Option<f64> {
    if eps >= max_loss(factors) {
        return None;
    }
    let cum = Cumulants::new(factors);
    let (_, m0, v0) = cum.total(0.0);
    if m0 >= eps {
        return Some(0.0);
    }
    // The bracket's upper end from the first Newton step off λ = 0, doubled until it
    // brackets (each evaluation is a pass over every lattice: start close).
    let floor = 1e-6 / factors[0].law.step.max(1e-300);
    let guess = (eps - m0) / v0;
    let mut hi = if guess.is_finite() {
        guess.max(floor)
    } else {
        floor
    };
    let mut at_hi = cum.total(hi);
    while at_hi.1 < eps {
        hi *= 2.0;
        if hi > 1e300 {
            return None;
        }
        at_hi = cum.total(hi);
    }
    // Safeguarded Newton on K'(λ) = ε (K' increases) from the upper end: a bisection
    // step whenever Newton leaves the bracket.
    let mut lo = 0.0;
    let (mut lam, mut cur) = (hi, at_hi);
    for _ in 0..200 {
        let (_, k1, k2) = cur;
        if k1 < eps {
            lo = lam;
        } else {
            hi = lam;
        }
        if hi - lo <= 1e-13 * hi {
            break;
        }
        let step = (k1 - eps) / k2;
        if k2 > 0.0 && step.abs() <= 1e-13 * lam {
            return Some(lam);
        }
        let newton = lam - step;
        lam = if k2 > 0.0 && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        cur = cum.total(lam);
    }
    Some(0.5 * (lo + hi))
}
