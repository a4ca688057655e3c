//! The three forms of `dpw account`'s answer: CSV, JSON and the table a person reads.

use super::{AccountRequest, AccountResult, Query};
use composition::accountant::input::schedule::MAX_EXACT_LAWS;
use composition::accountant::{MechanismKind, MechanismSpec, NoisyMaxNoise};
use serde::Serialize;

/// A number in shortest round-trip form; a δ below `f64`'s range is written from its
/// logarithm in scientific notation (`3.2e-400`) with 12 significant digits, rounded
/// outward for a certified end (`side`: `Some(true)` upper, `Some(false)` lower) and to
/// nearest for the estimate.
fn value(v: f64, ln: f64, side: Option<bool>) -> String {
    // A subnormal keeps too few digits (an upper end rounded outward from an underflow is
    // a few ulps of 5e-324): from the logarithm then.
    if v >= f64::MIN_POSITIVE && v.is_finite() || v == 0.0 && ln == f64::NEG_INFINITY {
        format!("{v:?}")
    } else if ln.is_finite() {
        let l10 = ln / std::f64::consts::LN_10;
        match side {
            // The division and powf err by a few ulps of l10: 4u(1 + |l10|) relative
            // in the mantissa covers them.
            Some(upper) => densities::outward::sci_from_log10(
                l10,
                4.0 * f64::EPSILON * (1.0 + l10.abs()),
                11,
                upper,
            ),
            None => {
                let e = l10.floor();
                let m = 10f64.powf(l10 - e);
                format!("{m:.11}e{e}")
            }
        }
    } else {
        format!("{v:?}")
    }
}

fn values(req: &AccountRequest, r: &AccountResult) -> [String; 3] {
    let a = &r.answer;
    if r.poisson_claim.is_some() {
        // Only the lower end is certified (§2.9): no estimate, no upper end; the CSV field
        // is left empty (never an infinity in a CSV).
        let lo = match req.query {
            Query::Epsilon(_) => value(a.lower, a.ln_lower, Some(false)),
            _ => format!("{:?}", a.lower),
        };
        return [lo, String::new(), String::new()];
    }
    match req.query {
        Query::Delta(_) | Query::AtFpr(_) => {
            [a.lower, a.estimate, a.upper].map(|v| format!("{v:?}"))
        }
        Query::Epsilon(_) => [
            value(a.lower, a.ln_lower, Some(false)),
            value(a.estimate, 0.5 * (a.ln_lower + a.ln_upper), None),
            value(a.upper, a.ln_upper, Some(true)),
        ],
    }
}

/// CSV: header `quantity,lower,estimate,upper,seconds` and one row.
pub fn render_csv(req: &AccountRequest, r: &AccountResult) -> String {
    let [lo, est, hi] = values(req, r);
    format!(
        "quantity,lower,estimate,upper,seconds\n{},{lo},{est},{hi},{:?}\n",
        req.quantity(),
        r.seconds
    )
}

#[derive(Serialize)]
struct JsonMechanism<'a> {
    spec: &'a str,
    kind: &'a str,
    #[serde(flatten)]
    params: serde_json::Value,
    sensitivity: f64,
    count: u64,
}

#[derive(Serialize)]
struct JsonRequest<'a> {
    mechanisms: Vec<JsonMechanism<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    epsilon: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    at_fpr: Option<f64>,
    accuracy: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schedule: Option<serde_json::Value>,
}

fn params(m: &MechanismSpec) -> serde_json::Value {
    let mut v = kind_params(m);
    // The pipeline keys where they differ from the defaults (docs/accountant.md §2.7).
    use composition::accountant::input::spec::{Neighbours, Sampling};
    let p = m.pipeline;
    match p.sampling {
        Sampling::Poisson => {}
        Sampling::Fixed { batch, n } | Sampling::Shuffle { batch, n } => {
            let name = if matches!(p.sampling, Sampling::Fixed { .. }) {
                "fixed"
            } else {
                "shuffle"
            };
            v["sampling"] = name.into();
            v["batch"] = batch.into();
            v["n"] = n.into();
        }
        Sampling::Allocation { steps } => {
            v["sampling"] = "allocation".into();
            v["steps"] = steps.into();
        }
    }
    if p.neighbours == Neighbours::ReplaceOne {
        v["neighbours"] = "replace-one".into();
    }
    if p.group > 1 {
        v["group"] = p.group.into();
    }
    v
}

fn kind_params(m: &MechanismSpec) -> serde_json::Value {
    use serde_json::json;
    match &m.kind {
        MechanismKind::Gaussian { sigma } | MechanismKind::DiscreteGaussian { sigma } => {
            json!({ "sigma": sigma })
        }
        MechanismKind::Laplace { scale } | MechanismKind::DiscreteLaplace { scale } => {
            json!({ "scale": scale })
        }
        MechanismKind::RandomizedResponse { epsilon } | MechanismKind::BoundedRange { epsilon } => {
            json!({ "epsilon": epsilon })
        }
        MechanismKind::NoisyMax { noise, epsilon } => json!({
            "epsilon": epsilon,
            "noise": match noise {
                NoisyMaxNoise::Exponential => "exponential",
                NoisyMaxNoise::Laplace => "laplace",
            }
        }),
        MechanismKind::TruncatedLaplace { epsilon, delta }
        | MechanismKind::ApproxDp { epsilon, delta } => {
            json!({ "epsilon": epsilon, "delta": delta })
        }
        MechanismKind::Bounded { family, radius } => match family {
            densities::bounded::BoundedFamily::Power { alpha } => {
                json!({ "family": "power", "alpha": alpha, "radius": radius })
            }
            densities::bounded::BoundedFamily::Exp => json!({ "family": "exp", "radius": radius }),
        },
        MechanismKind::SubsampledGaussian { sigma, q } => json!({ "sigma": sigma, "q": q }),
        MechanismKind::GaussianMixture { sigma, components } => json!({
            "sigma": sigma,
            "shifts": components.iter().map(|c| c.1).collect::<Vec<f64>>(),
            "probs": components.iter().map(|c| c.0).collect::<Vec<f64>>(),
        }),
        MechanismKind::SubsampledLaplace { scale, q } => json!({ "scale": scale, "q": q }),
        MechanismKind::SubsampledGaussianMix {
            sigma,
            sigma2,
            weight,
            q,
            side,
        } => json!({
            "sigma": sigma,
            "sigma2": sigma2,
            "weight": weight,
            "q": q,
            "end": match side {
                composition::accountant::sampling::revealed::Side::Upper => "upper",
                composition::accountant::sampling::revealed::Side::Lower => "lower",
            },
        }),
    }
}

/// JSON: an object with the CSV's fields as numbers (never strings), `ln_lower`,
/// `ln_estimate` and `ln_upper` (their natural logarithms, which keep a δ below `f64`'s
/// range: the numbers then hold the nearest double on the safe side, 0 for a lower end
/// and at least the least subnormal 5e-324 for an upper end), the grid step, whether the
/// requested accuracy was met, and the parsed request.
pub fn render_json(req: &AccountRequest, r: &AccountResult) -> String {
    let fin = |v: f64| -> serde_json::Value {
        if v.is_finite() {
            v.into()
        } else {
            serde_json::Value::Null
        }
    };
    let a = &r.answer;
    // No estimate and no upper end when only the lower end is certified (§2.9).
    let only_lower = r.poisson_claim.is_some();
    let upper = if a.upper == 0.0 && a.ln_upper.is_finite() {
        // Below the least subnormal: that is an upper end on the safe side.
        f64::from_bits(1)
    } else {
        a.upper
    };
    let ln_estimate = if a.estimate >= f64::MIN_POSITIVE {
        a.estimate.ln()
    } else {
        // The estimate is the geometric midpoint (for δ): from the logarithms.
        0.5 * (a.ln_lower + a.ln_upper)
    };
    let (estimate, upper, ln_estimate, ln_upper) = if only_lower {
        (
            serde_json::Value::Null,
            serde_json::Value::Null,
            serde_json::Value::Null,
            serde_json::Value::Null,
        )
    } else {
        (
            fin(a.estimate),
            fin(upper),
            fin(ln_estimate),
            fin(a.ln_upper),
        )
    };
    let request = JsonRequest {
        mechanisms: req
            .mechanisms
            .iter()
            .map(|m| JsonMechanism {
                spec: &m.text,
                kind: m.kind_name(),
                params: params(m),
                sensitivity: m.sensitivity,
                count: m.count,
            })
            .collect(),
        delta: match req.query {
            Query::Delta(d) => Some(d),
            _ => None,
        },
        epsilon: match req.query {
            Query::Epsilon(e) => Some(e),
            _ => None,
        },
        at_fpr: match req.query {
            Query::AtFpr(a) => Some(a),
            _ => None,
        },
        accuracy: req.accuracy,
        schedule: match (&req.schedule, &r.schedule) {
            (Some(s), Some(n)) => Some(serde_json::json!({
                "path": s.path,
                "segments": n.segments,
                "steps": n.steps,
                "distinct": n.distinct,
                "lattice_ratio": n.ratio,
                "upper_lattice_ratio": n.upper_ratio,
                "upper_mixtures": n.mixtures,
                "lower_mixtures": n.lower_mixtures,
                "lower_slack": n.lower_slack,
                "q_rounded": n.q_rounded,
                "gaussian_steps": n.gaussian_steps,
                "rdp_upper": n.rdp.map(|b| b.upper),
                "rdp_order": n.rdp.map(|b| b.order),
                "upper_from": if n.rdp.is_some_and(|b| b.taken) { "rdp" } else { "pld" },
            })),
            _ => None,
        },
    };
    let v = serde_json::json!({
        "quantity": req.quantity(),
        "lower": fin(a.lower),
        "estimate": estimate,
        "upper": upper,
        "seconds": r.seconds,
        "ln_lower": fin(a.ln_lower),
        "ln_estimate": ln_estimate,
        "ln_upper": ln_upper,
        "step": fin(r.answer.step),
        "accuracy_met": r.answer.accuracy_met,
        "work": r.work,
        "max_work": req.max_work,
        "lower_bound_only": r.poisson_claim.is_some(),
        "poisson_claim": r.poisson_claim,
        "request": request,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// An aligned summary for people.
///
/// By hand rather than through `comfy-table` (which lays out `dpw calibrate`'s table):
/// this is a labelled list, not a table: one bracket of three fixed labels whose widths
/// are constant, around free-text lines that no column layout would help.
pub fn render_table(req: &AccountRequest, r: &AccountResult) -> String {
    let [lo, est, hi] = values(req, r);
    let mut out = String::new();
    out.push_str("composition of\n");
    for m in &req.mechanisms {
        out.push_str(&format!("  {}\n", m.text));
    }
    if let (Some(sch), Some(n)) = (&req.schedule, &r.schedule) {
        out.push_str(&format!(
            "  schedule {}: {} segments, {} steps, {} distinct (sigma, q)\n",
            sch.path, n.segments, n.steps, n.distinct
        ));
        if let Some(b) = n.rdp {
            let what = if matches!(req.query, Query::Delta(_)) {
                "epsilon"
            } else {
                "delta"
            };
            out.push_str(&format!(
                "    certified Renyi-DP bound of the composition: {what} <= {:e} (order {}){}\n",
                b.upper,
                b.order,
                if b.taken {
                    ": tighter than the accountant's upper end, so it is the upper end below (docs/accountant.md §8)"
                } else {
                    ""
                }
            ));
        }
        if n.gaussian_steps > 0 {
            out.push_str(&format!(
                "    its {} steps at q = 1 composed as one Gaussian, shift sqrt(sum count/sigma^2) rounded to each side (docs/accountant.md §2.8)\n",
                n.gaussian_steps
            ));
        }
        if let (Some(rho), Some(rho_up)) = (n.ratio, n.upper_ratio) {
            let (qu, ql) = if n.q_rounded {
                (" and q up", " and q down")
            } else {
                ("", "")
            };
            let up = if n.mixtures {
                format!("sigma between the points of (1 + {rho_up:.3e})^k as a revealed mixture of the two{qu}")
            } else {
                format!("sigma down onto (1 + {rho_up:.3e})^k{qu}")
            };
            let low = if n.lower_mixtures {
                format!(
                    "sigma between the points of (1 + {rho:.3e})^k as a dominated mixture of the two{ql} (slack {:.1e} charged)",
                    n.lower_slack
                )
            } else {
                format!("sigma up onto (1 + {rho:.3e})^k{ql}")
            };
            out.push_str(&format!(
                "    rounded (docs/accountant.md §2.8): upper end {up}; lower end {low}\n"
            ));
        }
    }
    let (given, asked) = match req.query {
        Query::Delta(d) => (format!("delta = {d:e}"), "epsilon"),
        Query::Epsilon(e) => (format!("epsilon = {e}"), "delta"),
        Query::AtFpr(a) => (
            format!("false-positive rate {a}"),
            "largest true-positive rate of any membership test",
        ),
    };
    out.push_str(&format!("at {given}, certified {asked}:\n"));
    if r.poisson_claim.is_some() {
        out.push_str(&format!(
            "  lower     {lo}\n  upper     none certified (no tight upper bound is known for \
             shuffled batches)\n"
        ));
    } else {
        out.push_str(&format!(
            "  lower     {lo}\n  estimate  {est}\n  upper     {hi}\n"
        ));
    }
    let a = &r.answer;
    if let Some(claim) = r.poisson_claim {
        out.push_str(&format!(
            "  Poisson sampling at the same rate would claim at most {claim:?} (a bound for \
             Poisson sampling only); {:.3} s\n",
            r.seconds
        ));
        return out;
    }
    let width = match req.query {
        Query::Delta(_) | Query::AtFpr(_) if a.upper > 0.0 => (a.upper - a.lower) / a.upper,
        Query::Epsilon(_) => -(a.ln_lower - a.ln_upper).exp_m1(),
        _ => 0.0,
    };
    let why = if a.accuracy_met {
        ""
    } else if r.budget_hit {
        " (the requested accuracy was not reached within the work budget, --max-work: the bracket is still certified)"
    } else if r
        .schedule
        .is_some_and(|n| n.ratio.is_none() && n.distinct > MAX_EXACT_LAWS)
    {
        " (the requested accuracy was not reached: a schedule composed exactly past 384 distinct laws is asked for no finer than 1e-3, docs/accountant.md §2.8; the bracket is still certified)"
    } else if r.schedule.is_some_and(|n| n.ratio.is_some()) {
        " (the requested accuracy was not reached: the schedule's rounding onto its lattices sets the width, docs/accountant.md §2.8; the bracket is still certified)"
    } else if composition::accountant::input::spec::has_dominated_laws(&req.mechanisms) {
        " (the requested accuracy was not reached: the width holds the gap between the dominating pair that certifies the upper end and the dominated one that certifies the lower, which no finer grid closes; fixed-size batches under replace-one: docs/accountant.md §2.7, Adaptive order; balls-in-bins: §2.10; the exponential mechanism: §2.14; permute-and-flip, report-noisy-max: §2.15)"
    } else {
        " (the requested accuracy was not reached: a finer grid no longer narrowed the bracket, or would exceed the bin budget; the bracket is still certified)"
    };
    let step = if a.step.is_finite() {
        format!("; grid step {:.3e}", a.step)
    } else {
        String::new()
    };
    out.push_str(&format!(
        "  relative width {width:.2e}{why}{step}; {:.3} s\n",
        r.seconds
    ));
    out
}
