//! The least radius of bounded noise for k queries, bracketed by the certified accountant
//! (docs/accountant.md §7; Dagan & Kur 2022, Section 10, with exact accounting).
//!
//! The noise `R·X` (X from a bounded family) added to k sensitivity-1 answers is
//! (ε, δ)-DP iff `δ_k(ε; r) ≤ δ` with `r = 1/R`, and `ε_k(δ; r)` increases with r. With the
//! accountant's certified bracket `ε_lo(r) ≤ ε_k(δ; r) ≤ ε_up(r)`:
//! - `ε_up(1/R_hi) ≤ ε` certifies that `R_hi` suffices (an upper bound on the least R);
//! - `ε_lo(1/R_lo) > ε` certifies that `R_lo` does not (a lower bound on the least R).
//!
//! The search uses that ε grows about linearly in r: one bracket at a guess, then both
//! ends predicted and verified, repeating until both are certified.

use super::law::BoundedNoiseLaw;
use super::{Accountant, Work};
use crate::error::{out_of_range, CompositionError, Result};
use densities::bounded::BoundedFamily;

/// A certified bracket on the least radius.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RadiusBracket {
    /// `R_lo`: certified insufficient (`ε(δ) > ε` with it).
    pub lower: f64,
    /// `R_hi`: certified sufficient.
    pub upper: f64,
    /// Number of accountant brackets evaluated.
    pub evaluations: usize,
}

/// The `name` of the error [`least_radius_bracket_until`] gives when its work budget is
/// used up (`CompositionError::OutOfRange`), for callers that explain it.
pub const BUDGET_NAME: &str = "radius search (work budget, bins transformed)";

/// `[ε_lo, ε_up]` of k queries with noise radius `1/r` at δ.
fn eps_bracket(
    family: BoundedFamily,
    r: f64,
    k: u64,
    delta: f64,
    acc: f64,
    work: &Work,
) -> Result<(f64, f64)> {
    let law = BoundedNoiseLaw::new(family, 1.0 / r, 1.0)?;
    let a = Accountant::new(vec![(Box::new(law), k)])?
        .with_accuracy(acc)?
        .with_work(work.clone())
        .epsilon(delta)?;
    Ok((a.lower, a.upper))
}

/// Certified bracket on the least radius R such that bounded noise `R·X` answers `k`
/// sensitivity-1 queries with (ε, δ)-DP; `start` is a guess of R (e.g. the CLT value
/// `4.4·√(k ln(1/δ))/ε` or the certified Chernoff radius). `accuracy` is passed to the
/// accountant; the bracket's relative width is about twice it.
pub fn least_radius_bracket(
    family: BoundedFamily,
    k: u64,
    epsilon: f64,
    delta: f64,
    start: f64,
    accuracy: f64,
) -> Result<RadiusBracket> {
    least_radius_bracket_until(family, k, epsilon, delta, start, accuracy, &Work::default())
}

/// [`least_radius_bracket`] charging every accountant evaluation to `work`: once its
/// budget is used up the search gives up (an error named [`BUDGET_NAME`]) before the next
/// evaluation. A budget of work, not of seconds: the same search stops at the same point
/// on any machine at any load (docs/accountant.md §6.1).
pub fn least_radius_bracket_until(
    family: BoundedFamily,
    k: u64,
    epsilon: f64,
    delta: f64,
    start: f64,
    accuracy: f64,
    work: &Work,
) -> Result<RadiusBracket> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(out_of_range("epsilon", epsilon, "(0, inf)"));
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(out_of_range("delta", delta, "(0, 1)"));
    }
    if !(start.is_finite() && start > 0.5) {
        return Err(out_of_range("start radius", start, "(0.5, inf)"));
    }
    let mut evaluations = 0;
    let mut eval = |r: f64| -> Result<(f64, f64)> {
        if work.exhausted() {
            return Err(out_of_range(
                BUDGET_NAME,
                work.done() as f64,
                "within the work budget: the search was stopped when it was used up",
            ));
        }
        evaluations += 1;
        match eps_bracket(family, r, k, delta, accuracy, work) {
            // δ below the (upper bound on the) mass of the +∞ loss: not certified
            // sufficient, and not certified insufficient either; the search moves to a
            // larger radius (ε_up = ∞ aims at half the r).
            Err(CompositionError::Unreachable { .. }) => Ok((0.0, f64::INFINITY)),
            other => other,
        }
    };
    // r_ok: certified sufficient (ε_up ≤ ε); r_bad: certified insufficient (ε_lo > ε).
    let (mut r_ok, mut r_bad): (Option<f64>, Option<f64>) = (None, None);
    // The least and largest r certified neither way (ε inside their bracket).
    let mut undecided: Option<(f64, f64)> = None;
    let mut r = (1.0 / start).min(0.5);
    let mut last: Option<(f64, f64)> = None; // (ln r, ln ε_mid) of the previous point
    for _ in 0..40 {
        let (lo, up) = eval(r)?;
        if up <= epsilon {
            r_ok = Some(r_ok.map_or(r, |v: f64| v.max(r)));
        }
        if lo > epsilon {
            r_bad = Some(r_bad.map_or(r, |v: f64| v.min(r)));
        }
        if up > epsilon && lo <= epsilon {
            undecided = Some(undecided.map_or((r, r), |(u, v)| (u.min(r), v.max(r))));
        }
        if let (Some(a), Some(b)) = (r_ok, r_bad) {
            if b / a - 1.0 <= 4.0 * accuracy + 1e-9 {
                break;
            }
        }
        // Secant in log-log coordinates (ε ∝ r^slope locally; slope 1 to start).
        let mid = (lo.max(1e-300) * up.max(1e-300)).sqrt().ln();
        let slope = match last {
            Some((lr, lm)) if (r.ln() - lr).abs() > 1e-12 => {
                ((mid - lm) / (r.ln() - lr)).clamp(0.3, 3.0)
            }
            _ => 1.0,
        };
        last = Some((r.ln(), mid));
        let aim = |eps_now: f64, factor: f64| {
            if eps_now.is_finite() && eps_now > 0.0 {
                (r.ln() + ((epsilon * factor).ln() - eps_now.ln()) / slope).exp()
            } else {
                r * 0.5
            }
        };
        // Bisection in log r, on the side of the undecided stretch with the wider gap:
        // the geometric middle itself may be undecided (the bracket of ε there contains
        // ε), and asking it again would not move the search.
        let bisect = |a: f64, b: f64| match undecided {
            Some((u, v)) if u > a && v < b => {
                if u / a >= b / v {
                    (a * u).sqrt()
                } else {
                    (v * b).sqrt()
                }
            }
            _ => (a * b).sqrt(),
        };
        r = match (r_ok, r_bad) {
            (None, _) => aim(up, 1.0 - accuracy),
            (Some(_), None) => aim(lo, 1.0 + accuracy),
            // Both ends known: the secant's root r*, and the end farther from it moved to
            // just past it, by three quarters of this bracket's width (each evaluation's
            // bracket is about as wide): usually one evaluation per end. Bisection where
            // the prediction falls outside the bracket.
            (Some(a), Some(b)) => {
                let root = aim(mid.exp(), 1.0);
                let w = if lo > 0.0 && up.is_finite() {
                    1.5 * (up - lo) / (up + lo)
                } else {
                    f64::NAN
                };
                let next = if root / a >= b / root {
                    root * (1.0 - w).powf(1.0 / slope)
                } else {
                    root * (1.0 + w).powf(1.0 / slope)
                };
                if next > a && next < b && w.is_finite() {
                    next
                } else {
                    bisect(a, b)
                }
            }
        };
        r = r.min(0.5);
    }
    match (r_ok, r_bad) {
        (Some(a), Some(b)) => Ok(RadiusBracket {
            lower: 1.0 / b,
            upper: 1.0 / a,
            evaluations,
        }),
        _ => Err(CompositionError::Empty {
            name: "radius bracket (search did not converge)",
        }),
    }
}
