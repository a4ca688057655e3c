//! The least radius of bounded noise for k queries, bracketed by the certified accountant
//! (docs/accountant.md §7; Dagan & Kur 2022, Section 10, with exact accounting).
//!
//! The noise `R·X` (X from a bounded family) added to k sensitivity-1 answers is
//! (ε, δ)-DP iff `δ_k(ε; r) ≤ δ` with `r = 1/R`, and `ε_k(δ; r)` increases with r. With the
//! accountant's certified bracket `ε_lo(r) ≤ ε_k(δ; r) ≤ ε_up(r)`:
//! - `ε_up(1/R_hi) ≤ ε` certifies that `R_hi` suffices (an upper bound on the least R);
//! - `ε_lo(1/R_lo) > ε` certifies that `R_lo` does not (a lower bound on the least R).
//!
//! The search is the general solver's ([`crate::accountant::query::solve`], docs/accountant.md §10) on
//! `bounded:family=…,radius=?,count=k`: R is its unknown.

use crate::accountant::core::answer::MAX_COUNT;
use crate::accountant::core::work::Work;
use crate::accountant::query::solve::Solver;
use crate::accountant::query::target::{SolveError, Target, Template};
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

/// The `name` of the error [`least_radius_bracket_until`] gives when even the largest
/// radius the accountant takes is certified to fail (`CompositionError::OutOfRange`,
/// `value` that radius): the least R lies above it (k = 1e10 at ε = 1e-8, δ = 1e-300
/// needs more than 1e12).
pub const BEYOND_NAME: &str = "least radius (above the largest radius the accountant takes)";

/// Certified bracket on the least radius R such that bounded noise `R·X` answers `k`
/// sensitivity-1 queries with (ε, δ)-DP; `start` is a guess of R (e.g. the CLT value
/// `4.4·√(k ln(1/δ))/ε` or the certified Chernoff radius). The bracket's relative width
/// is at most `3·accuracy` (the solver's accuracy; it sets each accountant call's own).
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
    if !(1..=MAX_COUNT).contains(&k) {
        return Err(out_of_range("count", k as f64, "[1, 1e10]"));
    }
    let fam = match family {
        BoundedFamily::Power { alpha } => format!("family=power,alpha={alpha:?}"),
        BoundedFamily::Exp => "family=exp".to_string(),
    };
    let spec = format!("bounded:{fam},radius=?,count={k}");
    let internal = |e: SolveError| CompositionError::Empty {
        // A template the solver refuses would be this function's bug; say where.
        name: if matches!(e, SolveError::Input(_)) {
            "radius search (bounded noise template)"
        } else {
            "radius bracket (search did not converge)"
        },
    };
    let template = Template::parse(&[spec]).map_err(internal)?;
    let largest = template.domain().map_err(internal)?.1;
    let solver = Solver::new(template, vec![Target::Privacy { epsilon, delta }])
        .map_err(internal)?
        // A gap of 3× the accuracy asked (the old search allowed 4× and mostly stopped
        // below 3.4×; fig19b's claims hold it to that).
        .with_accuracy((3.0 * accuracy).clamp(1e-5, 0.5))
        .map_err(internal)?
        .with_work(work.clone())
        .with_start(start);
    match solver.solve() {
        Ok(s) => match s.fails {
            Some(f) => Ok(RadiusBracket {
                lower: f,
                upper: s.meets,
                evaluations: s.evaluations,
            }),
            None => Err(internal(SolveError::Unsettled(String::new()))),
        },
        Err(SolveError::Interrupted) => Err(CompositionError::Interrupted),
        Err(SolveError::Unmeetable(_)) => Err(out_of_range(
            BEYOND_NAME,
            largest,
            "a radius the accountant takes: it is certified to fail there",
        )),
        // Used up between evaluations, or an evaluation refused for passing it.
        Err(SolveError::Unsettled(_)) if work.exhausted() || work.budget_hit() => {
            Err(out_of_range(
                BUDGET_NAME,
                work.done() as f64,
                "within the work budget: the search was stopped when it was used up",
            ))
        }
        Err(e) => Err(internal(e)),
    }
}
