//! Levels of the one-jump split (docs/accountant.md §4.1): where the bodies' composition
//! ends and the heavy tails' jumps begin, and the choice between the plain and split answers.

use super::cumulants::{self};
use super::tilted::Factor;
use crate::accountant::core::numeric::log_add;
use crate::error::Result;

/// Gap between a tilted evaluation's two bounds on `ln δ` above which its round-off is
/// taken to swamp δ and the one-jump split (docs/accountant.md §4.1) is tried as well.
pub(crate) const SPLIT_GAP: f64 = 1e-3;

/// The least `ln` of the expected number of losses above the mass level, over δ.
pub(crate) const MASS_EXCESS: f64 = 12.0;

/// How far below δ (in nats) the mass level keeps the terms with two or more tails
/// (`s²/2`, s the expected number of losses above the level).
pub(crate) const PAIRS_MARGIN: f64 = 30.0;

/// How a split's level follows the ε it is centred at (docs/accountant.md §4.1).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Level {
    /// Two untilted standard deviations σ below ε: the bodies' tilted law then reaches ε
    /// by a jump near the level plus a moderate deviation of the rest, which a tilt
    /// resolves, while a level above ε would leave the bodies' log-convex stretch just
    /// above ε unresolved.
    TwoSigma,
    /// The loss where the composition's expected number of losses above it is small
    /// enough that terms with two tails stay far below δ ([`split_levels`]), when that
    /// is lower: where the bulk and single large losses weigh alike (k ~ 1e5 at
    /// δ ≤ 1e-126) a body reaching ε by a jump near `ε − 2σ` piles up in the stages of
    /// its tilted composition; at this level the bodies are near-Gaussian, and the tails
    /// carry the jumps, their `g` from the rest tilted at the likeliest jump and from
    /// Chernoff bounds (module `jump`).
    Mass(f64),
}

/// The number of uses in a composition.
pub(crate) fn uses(factors: &[Factor]) -> u64 {
    factors.iter().map(|f| f.count).sum()
}

/// The split levels for a question where `ln δ` is about `ln_delta`: two σ below ε, and
/// (for more than one use: for a single use [`level_at`] puts the first below every
/// loss, and δ is a plain sum over the lattice) the mass level, where the expected
/// number of losses above it is `s = √(2δ)·e^{−PAIRS_MARGIN/2}` (the terms with two
/// tails, at most `s²/2`, are then `e^{−PAIRS_MARGIN}·δ`), or `e^{MASS_EXCESS}·δ` if that
/// is more.
pub(crate) fn split_levels(factors: &[Factor], ln_delta: f64) -> Vec<Level> {
    let mut v = vec![Level::TwoSigma];
    if uses(factors) > 1 && ln_delta.is_finite() {
        let deep = 0.5 * (-ln_delta - PAIRS_MARGIN + std::f64::consts::LN_2);
        if let Some(c) = mass_level(factors, ln_delta + deep.max(MASS_EXCESS)) {
            v.push(Level::Mass(c));
        }
    }
    v
}

/// The loss of `level` for a split centred at ε (`−∞` for a single use), or `None` for a
/// mass level less than half a σ below the two-σ one (the same split, nearly).
pub(crate) fn level_at(factors: &[Factor], level: Level, eps: f64) -> Option<f64> {
    if uses(factors) == 1 {
        return Some(f64::NEG_INFINITY);
    }
    let sd = cumulants::total_cgf(factors, 0.0).2.sqrt();
    let two = eps - 2.0 * sd;
    match level {
        Level::TwoSigma => Some(two),
        Level::Mass(c) if c < two - 0.5 * sd => Some(c),
        Level::Mass(_) => None,
    }
}

/// The lowest loss `c ≥ 0` (to 60 bisections) with `ln Σ_i c_i P(L_i > c) ≤ ln_target`,
/// `P` read off the lattices (`None` when that already holds at 0, or no loss is above
/// 0). It only places a split level: any level gives certified bounds.
pub(crate) fn mass_level(factors: &[Factor], ln_target: f64) -> Option<f64> {
    // Per factor, ln(count) + ln P(L > loss(j)) for every cell j, from the top.
    let suffix: Vec<Vec<f64>> = factors
        .iter()
        .map(|f| {
            let n = f.law.ln_pmf.len();
            let mut out = vec![f64::NEG_INFINITY; n];
            let mut acc = f64::NEG_INFINITY;
            for j in (0..n).rev() {
                out[j] = acc + (f.count as f64).ln();
                acc = log_add(acc, f.law.ln_pmf[j]);
            }
            out
        })
        .collect();
    let ln_s = |c: f64| -> f64 {
        factors
            .iter()
            .zip(&suffix)
            .map(|(f, suf)| {
                // The cell at or below c: mass strictly above its loss.
                let j = ((c / f.law.step).floor() as i64 - f.law.lo).clamp(-1, suf.len() as i64);
                match j {
                    -1 => (f.count as f64).ln(),
                    j if j as usize >= suf.len() => f64::NEG_INFINITY,
                    j => suf[j as usize],
                }
            })
            .fold(f64::NEG_INFINITY, log_add)
    };
    let (mut lo, mut hi) = (0.0f64, cumulants::max_loss(factors).max(0.0));
    if hi <= 0.0 || ln_s(lo) <= ln_target {
        return None;
    }
    for _ in 0..60 {
        let m = 0.5 * (lo + hi);
        if ln_s(m) <= ln_target {
            hi = m;
        } else {
            lo = m;
        }
    }
    Some(hi)
}

/// The tightest answer on the side `upper` selects of `at(level)` over the split levels
/// (each is a valid bound). `None` where no level gives an answer.
pub(crate) fn tightest_split(
    levels: &[Level],
    upper: bool,
    at: impl Fn(Level) -> Option<f64>,
) -> Option<f64> {
    levels
        .iter()
        .filter_map(|&l| at(l))
        .reduce(|a, b| tighter(upper, a, b))
}

/// The saddle-point estimate `ln δ(ε) ≈ K − λK' − ln(√(2πK'') λ(λ+1))` at `ε = K'(λ)`
/// (the tilted law near-Gaussian, the hockey-stick weight integrated against it): only
/// a guess, that seeds the ε search's window and places the split levels.
pub(crate) fn saddle_ln_delta(factors: &[Factor], lam: f64) -> f64 {
    saddle_ln_delta_from(cumulants::total_cgf(factors, lam), lam)
}

/// [`saddle_ln_delta`] from `(K, K', K'')` at `lam`.
pub(crate) fn saddle_ln_delta_from((k, k1, k2): (f64, f64, f64), lam: f64) -> f64 {
    let corr = if lam > 0.0 {
        ((2.0 * std::f64::consts::PI * k2).sqrt().max(1e-300) * lam * (lam + 1.0))
            .ln()
            .max(0.0)
    } else {
        0.0
    };
    k - lam * k1 - corr
}

/// Whether a tilted answer whose two bounds on `ln δ` differ by `gap` is kept without a
/// split: the gap is small and, for laws with a log-convex tail (`jumps`), the law
/// tilted at the answer's saddle `lam` does not pile up (see [`piled`]).
pub(crate) fn plain_suffices(factors: &[Factor], gap: f64, jumps: bool, lam: Option<f64>) -> bool {
    gap <= SPLIT_GAP && !(jumps && lam.is_some_and(|l| piled(factors, l)))
}

/// Whether some factor's law, tilted at `lam`, keeps so much weight at the top of its
/// range that the composition sees one such loss with odds above e^-30: the mark of a
/// log-convex tail, where the tilted composition (and its stages) can be loose although
/// its own two bounds agree, so the split is computed as well.
pub(crate) fn piled(factors: &[Factor], lam: f64) -> bool {
    factors.iter().any(|f| {
        let Some(last) = f.law.ln_pmf.iter().rposition(|&l| l > f64::NEG_INFINITY) else {
            return false;
        };
        let (k, _, _) = cumulants::cgf(f.law, lam);
        let w = (f.count as f64).ln() + f.law.ln_pmf[last] + lam * f.law.loss(last) - k;
        w > -30.0
    })
}

/// The better of two values on the side `upper` selects (both are valid bounds).
pub(crate) fn tighter(upper: bool, a: f64, b: f64) -> f64 {
    if upper {
        a.min(b)
    } else {
        a.max(b)
    }
}

/// The answer from the tilted evaluation (`plain`) and the one-jump split (`split`,
/// `None` where it does not apply or failed): the tighter of the two on the side `upper`
/// selects, or the one there is; the tilted evaluation's error when there is neither.
pub(crate) fn plain_or_split(upper: bool, plain: Result<f64>, split: Option<f64>) -> Result<f64> {
    match (plain, split) {
        (Ok(v), Some(w)) => Ok(tighter(upper, v, w)),
        (Err(_), Some(w)) => Ok(w),
        (plain, None) => plain,
    }
}
