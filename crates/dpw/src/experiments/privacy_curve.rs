//! Kind `privacy_curve`: ε(δ) or δ(ε) of any list of mechanisms (the `dpw account` SPEC
//! language, [`composition::accountant::MechanismSpec`]) against the number of uses, δ or
//! ε, through the certified accountant (`accountant = "pld"`): a new figure from a
//! manifest alone.
//!
//! ```toml
//! [params]
//! accountant = "pld"
//! vary = "count"                                   # or "delta", "epsilon"
//! grid = { logspace = [1e2, 1e5], n = 8, integer = true }
//! delta = 1e-5                                     # report ε at this δ (or epsilon = E: report δ)
//! accuracy = 1e-3                                  # optional, relative width of each bracket
//! mechanisms = [
//!   { key = "sigma_1", spec = "subsampled-gaussian:sigma=1,q=0.01" },
//! ]
//! ```
//! With `vary = "count"` each mechanism is used `x` times (times its own `count=`);
//! `vary = "delta"` reports ε at each δ of the grid, `vary = "epsilon"` δ at each ε.
//! A series may compose several SPECs (`specs = ["exponential:epsilon=0.1", "gaussian:sigma=20"]`
//! instead of `spec`; with `vary = "count"` each is used `x` times its own count), through
//! `"pld"` or `"lower_bound"` only, and may name the `panel` it is drawn in (default
//! `main`; the panels in the order first named).
//! A mechanism may name its own `accountant`: `"rdp"` (the Rényi-DP moments accountant
//! with the conversion of Balle et al. 2020,
//! [`composition::rdp`], an upper bound on ε) applies to `gaussian` and
//! `subsampled-gaussian` when ε is reported; `"zcdp"` (ρ = count·Δ²/(2σ²) with the
//! Canonne–Kamath–Steinke conversion) to `gaussian`, and ρ = count·ε²/8 to `exponential`
//! (Cesar & Rogers, Lemma 3.2); `"optimal_dp"` (optimal composition of ε₀-DP, or
//! (ε₀, δ₀)-DP for the truncated Laplacian) to `rr`, `laplace`, `truncated-laplace`,
//! `approx-dp` and the selection kinds (`exponential`, `permute-and-flip`,
//! `report-noisy-max`, each by its ε); `"optimal_br"` (Dong, Durfee & Rogers' optimal
//! *non-adaptive* composition of ε-bounded-range mechanisms, exact) to `exponential`;
//! `"concentration"` (Cesar & Rogers' bound, eq. 3, an upper bound on ε) to `rr`,
//! `laplace`, `gaussian`, `exponential` (as ε-BR) and the other selection kinds (as ε-DP)
//! when ε is reported; `"lower_bound"` (the certified
//! accountant's lower end only, `y = y_lo = y_hi`) to any mechanism, and it is the only
//! one for `sampling=shuffle` (docs/accountant.md §2.9).
//! Anything else is refused in one line.
//! A series may be a whole schedule instead of one SPEC: `{ key = "warmup", schedule =
//! "warmup.csv" }` (a CSV with the header `sigma,q,count`, one segment of
//! Poisson-subsampled Gaussian steps a row, the path relative to the manifest), accounted
//! as `dpw account --schedule` does (docs/accountant.md §2.8: up to 384 distinct (σ, q)
//! exactly, beyond that each end from a copy of the schedule built on a lattice on its side);
//! with `vary = "count"` the grid value repeats the whole schedule (e.g. epochs). Only the
//! certified accountant (`"pld"`, `"lower_bound"`) takes a schedule.
//! One series per mechanism key; `y` is the bracket's midpoint,
//! `y_lo,y_hi` its certified ends.
//! Columns: `panel,series,x,y,y_lo,y_hi,count,epsilon,delta` (the reported quantity's
//! column holds the midpoint; an `rdp` bound has `y_lo = y_hi = y`).

use super::{open_unit, relative_accuracy, Job};
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use composition::accountant::input::schedule::{accounted, parse_csv, Accounted, MAX_EXACT_LAWS};
use composition::accountant::Composition;
use composition::accountant::{MechanismKind, MechanismSpec, MAX_COUNT};
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "privacy_curve",
    about: "ε(δ) or δ(ε) of any mechanism list (SPEC language) against count, δ or ε, exact",
    prepare,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Vary {
    Count,
    Delta,
    Epsilon,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MechanismInput {
    key: String,
    spec: Option<String>,
    /// Several SPECs composed, instead of `spec`.
    specs: Option<Vec<String>>,
    /// The panel the series is drawn in (default `main`).
    panel: Option<String>,
    /// A schedule CSV (`sigma,q,count`), relative to the manifest, instead of `spec`.
    schedule: Option<String>,
    accountant: Option<String>,
}

/// Which accountant answers for a mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    /// The certified accountant: a bracket.
    Pld,
    /// Rényi DP over integer orders: an upper bound on ε.
    Rdp,
    /// zCDP of the Gaussian with the Canonne–Kamath–Steinke conversion (docs/accountant.md §8).
    Zcdp,
    /// The certified accountant's lower end only: the one certified number for shuffled
    /// epochs (docs/accountant.md §2.9).
    LowerBound,
    /// Optimal composition of pure (or approximate) DP mechanisms (docs/accountant.md §8):
    /// exact for randomized response, an upper bound for Laplace and the truncated
    /// Laplacian, which it treats by their (ε, δ) guarantee.
    OptimalDp,
    /// The concentration bound of Cesar & Rogers (eq. 3; docs/accountant.md §8): ε₀-DP
    /// mechanisms (rr, laplace) by their ε₀, the Gaussian as concentrated DP; an upper
    /// bound on ε.
    Concentration,
    /// Dong, Durfee & Rogers' optimal composition of k ε-bounded-range mechanisms chosen
    /// in advance (docs/accountant.md §2.14): exact for that case, not for adaptive
    /// choices.
    OptimalBr,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    accountant: String,
    vary: Vary,
    grid: Grid,
    delta: Option<f64>,
    epsilon: Option<f64>,
    accuracy: Option<f64>,
    mechanisms: Vec<MechanismInput>,
}

#[derive(Debug)]
struct PrivacyCurve {
    vary: Vary,
    xs: Vec<f64>,
    delta: Option<f64>,
    epsilon: Option<f64>,
    accuracy: Option<f64>,
    /// `(key, spec, method)`; for a schedule series the spec is its first segment's
    /// (for the checks that look at the kind) and the schedule is in `schedules`.
    mechanisms: Vec<(String, MechanismSpec, Method)>,
    /// The further SPECs each series composes with its first (`specs`).
    with: Vec<Vec<MechanismSpec>>,
    /// The panel of each series.
    panels: Vec<String>,
    schedules: Vec<Option<Accounted>>,
}

/// The series of `params.mechanisms`: each entry's key and its spec or schedule.
fn series_inputs(
    list: &[MechanismInput],
    dir: &std::path::Path,
    accuracy: f64,
) -> Result<Vec<(String, MechanismSpec, Option<Accounted>)>, KeyError> {
    let at = "params.mechanisms";
    let keys: Vec<&str> = list.iter().map(|m| m.key.as_str()).collect();
    super::mechanism_keys(
        at,
        &keys,
        "must list at least one { key, spec } (or { key, schedule }) mechanism",
    )?;
    let mut out = Vec::with_capacity(list.len());
    for (i, m) in list.iter().enumerate() {
        if m.key.is_empty() {
            return Err(KeyError::new(format!("{at}[{i}].key"), "must not be empty"));
        }
        match (&m.spec, &m.schedule) {
            (None, None) if m.specs.is_some() => {
                let list = m.specs.as_deref().unwrap_or_default();
                let Some(first) = list.first() else {
                    return Err(KeyError::new(
                        format!("{at}[{i}].specs"),
                        "must list at least one SPEC",
                    ));
                };
                out.push((
                    m.key.clone(),
                    super::mechanism_spec(at, i, &m.key, first)?,
                    None,
                ));
            }
            (Some(_), None) | (None, Some(_)) if m.specs.is_some() => {
                return Err(KeyError::new(
                    format!("{at}[{i}]"),
                    "give exactly one of spec, specs (a list of SPECs) or schedule",
                ))
            }
            (Some(spec), None) => {
                out.push((
                    m.key.clone(),
                    super::mechanism_spec(at, i, &m.key, spec)?,
                    None,
                ));
            }
            (None, Some(path)) => {
                let key = format!("{at}[{i}].schedule");
                // At most MAX_SCHEDULE_BYTES read, lines ended by LF, CRLF or CR.
                let text = crate::account::read_schedule_text(&dir.join(path))
                    .map_err(|e| KeyError::new(&key, e))?;
                let segments = parse_csv(&text).map_err(|e| {
                    KeyError::new(
                        &key,
                        format!(
                            "'{path}' line {}: {}: {}",
                            e.line,
                            e.key,
                            crate::error::shorten_quotes(&e.message)
                        ),
                    )
                })?;
                let a = accounted(&segments, accuracy, MAX_EXACT_LAWS)
                    .map_err(|e| KeyError::new(&key, format!("'{path}': {}", e.0)))?;
                // The lower end's first law: always a plain SPEC (the upper end's may be a
                // mixture, §2.8).
                out.push((m.key.clone(), a.lower[0].clone(), Some(a)));
            }
            _ => {
                return Err(KeyError::new(
                    format!("{at}[{i}]"),
                    "give exactly one of spec (a SPEC string), specs (a list) or schedule (a sigma,q,count CSV)",
                ))
            }
        }
    }
    Ok(out)
}

/// Run-time estimate of one query of a schedule series: one composition of its laws (of
/// the larger copy when rounded, the two copies side by side at the accuracy
/// [`Accounted::end_accuracy`] gives), a law's own query time and a 32nd of it for each of
/// its laws (measured: 384 laws a copy at T = 1e6 took 8 s, about two thirds of this; 300
/// distinct laws composed exactly at 1e-4 took 4.5 s, a seventh; a sixteenth a law made
/// the latter 62 s, over the default budget; a law's own query time for each law, as
/// before, put the former at 200 s).
fn schedule_seconds(s: &Accounted, acc: f64) -> f64 {
    let at = if s.ratio.is_some() {
        s.end_accuracy(acc)
    } else {
        acc
    };
    let laws = s.upper.len().max(s.lower.len()) as f64;
    crate::ranges::accountant_seconds(&s.upper[0], at) * (1.0 + laws / 32.0)
}

fn method(name: &str, key: &str) -> Result<Method, KeyError> {
    match name {
        "pld" => Ok(Method::Pld),
        "rdp" => Ok(Method::Rdp),
        "zcdp" => Ok(Method::Zcdp),
        "optimal_dp" => Ok(Method::OptimalDp),
        "concentration" => Ok(Method::Concentration),
        "optimal_br" => Ok(Method::OptimalBr),
        "lower_bound" => Ok(Method::LowerBound),
        other => Err(KeyError::new(
            key,
            format!(
                "\"{other}\" is not available: \"pld\" (certified, any mechanism), \"rdp\" \
                 (gaussian, subsampled-gaussian), \"zcdp\" (gaussian, exponential) or \
                 \"optimal_dp\" (rr, laplace, truncated-laplace, approx-dp, the selection \
                 kinds) or \"concentration\" (rr, laplace, gaussian, the selection kinds) or \
                 \"optimal_br\" (exponential, chosen in advance) or \"lower_bound\" (a \
                 certified lower bound, any mechanism; the only one for sampling=shuffle)"
            ),
        )),
    }
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let global = method(&p.accountant, "params.accountant")?;
    let accuracy = relative_accuracy(p.accuracy)?;
    let reports_delta = p.vary == Vary::Epsilon || (p.vary == Vary::Count && p.epsilon.is_some());
    let series = series_inputs(
        &p.mechanisms,
        input.dir(),
        accuracy.unwrap_or(if reports_delta { 1e-3 } else { 1e-4 }),
    )?;
    let mut mechanisms = Vec::with_capacity(p.mechanisms.len());
    let mut schedules = Vec::with_capacity(p.mechanisms.len());
    let mut with = Vec::with_capacity(p.mechanisms.len());
    let mut panels: Vec<String> = Vec::with_capacity(p.mechanisms.len());
    for (i, (m, (_, spec, schedule))) in p.mechanisms.iter().zip(series).enumerate() {
        let akey = format!("params.mechanisms[{i}].accountant");
        let meth = match &m.accountant {
            Some(a) => method(a, &akey)?,
            None => global,
        };
        let more: Vec<MechanismSpec> = match &m.specs {
            Some(list) => list[1..]
                .iter()
                .map(|t| {
                    t.parse().map_err(|e: composition::accountant::SpecError| {
                        KeyError::new(format!("params.mechanisms[{i}].specs"), e.0)
                    })
                })
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        };
        if !more.is_empty() && !matches!(meth, Method::Pld | Method::LowerBound) {
            return Err(KeyError::new(
                format!("params.mechanisms[{i}].specs"),
                "a list of SPECs is composed by \"pld\" or \"lower_bound\" only",
            ));
        }
        if let Some(extra) = more.iter().find(|s| s.lower_bound_only()) {
            return Err(KeyError::new(
                format!("params.mechanisms[{i}].specs"),
                format!(
                    "{}: no certified upper bound is known for this sampler; it cannot be \
                     composed in a list",
                    extra.text
                ),
            ));
        }
        let panel = m.panel.clone().unwrap_or_else(|| "main".into());
        if panel.is_empty() {
            return Err(KeyError::new(
                format!("params.mechanisms[{i}].panel"),
                "must not be empty",
            ));
        }
        panels.push(panel);
        with.push(more);
        if schedule.is_some() && !matches!(meth, Method::Pld | Method::LowerBound) {
            return Err(KeyError::new(
                if m.accountant.is_some() {
                    akey
                } else {
                    "params.accountant".into()
                },
                "a schedule is accounted by \"pld\" or \"lower_bound\" only",
            ));
        }
        if meth == Method::Pld && spec.lower_bound_only() {
            return Err(KeyError::new(
                format!("params.mechanisms[{i}].spec"),
                format!(
                    "{}: no certified upper bound is known for this sampler; use accountant = \"lower_bound\" for its certified lower bound",
                    spec.text
                ),
            ));
        }
        let applies = match meth {
            Method::Pld | Method::LowerBound => true,
            Method::Rdp => matches!(
                spec.kind,
                MechanismKind::Gaussian { .. } | MechanismKind::SubsampledGaussian { .. }
            ),
            Method::Zcdp => matches!(
                spec.kind,
                MechanismKind::Gaussian { .. } | MechanismKind::BoundedRange { .. }
            ),
            Method::OptimalDp => matches!(
                spec.kind,
                MechanismKind::RandomizedResponse { .. }
                    | MechanismKind::Laplace { .. }
                    | MechanismKind::TruncatedLaplace { .. }
                    | MechanismKind::ApproxDp { .. }
                    | MechanismKind::BoundedRange { .. }
                    | MechanismKind::NoisyMax { .. }
            ),
            Method::Concentration => matches!(
                spec.kind,
                MechanismKind::RandomizedResponse { .. }
                    | MechanismKind::Laplace { .. }
                    | MechanismKind::Gaussian { .. }
                    | MechanismKind::BoundedRange { .. }
                    | MechanismKind::NoisyMax { .. }
            ),
            Method::OptimalBr => matches!(spec.kind, MechanismKind::BoundedRange { .. }),
        };
        let where_ = if m.accountant.is_some() {
            akey
        } else {
            "params.accountant".into()
        };
        if !applies {
            return Err(KeyError::new(
                where_,
                format!(
                    "this accountant does not apply to {} (pld applies to every mechanism)",
                    spec.kind_name()
                ),
            ));
        }
        if matches!(meth, Method::Rdp | Method::Concentration) && reports_delta {
            return Err(KeyError::new(
                where_,
                "\"rdp\" and \"concentration\" report epsilon at a delta only (use delta, or vary = \"delta\")",
            ));
        }
        if meth == Method::OptimalBr && spec.pipeline.group != 1 {
            return Err(KeyError::new(where_, "\"optimal_br\" takes no group"));
        }
        mechanisms.push((m.key.clone(), spec, meth));
        schedules.push(schedule);
    }
    let xs = p.grid.values().to_vec();
    match p.vary {
        Vary::Count => {
            for (i, &x) in xs.iter().enumerate() {
                if !(x.fract() == 0.0 && x >= 1.0 && x <= MAX_COUNT as f64) {
                    return Err(KeyError::new(
                        format!("params.grid[{i}]"),
                        format!("counts must be integers in [1, 1e10], got {x}"),
                    ));
                }
                for (j, ((_, s, _), sch)) in mechanisms.iter().zip(&schedules).enumerate() {
                    let (count, what) = match sch {
                        Some(sch) => (sch.steps, "schedule"),
                        None if !with[j].is_empty() => (
                            with[j].iter().map(|m| m.count).fold(s.count, u64::max),
                            "specs",
                        ),
                        None => (s.count, "spec"),
                    };
                    if x * count as f64 > MAX_COUNT as f64 {
                        return Err(KeyError::new(
                            format!("params.mechanisms[{j}].{what}"),
                            format!("count {count} times the grid's {x} exceeds 1e10"),
                        ));
                    }
                }
            }
            match (p.delta, p.epsilon) {
                (Some(d), None) => {
                    open_unit("params.delta", d)?;
                }
                (None, Some(e)) => {
                    nonnegative("params.epsilon", e)?;
                }
                _ => {
                    return Err(KeyError::new(
                        "params.delta",
                        "with vary = \"count\" give exactly one of delta (report epsilon) or epsilon (report delta)",
                    ))
                }
            }
        }
        Vary::Delta => {
            if p.delta.is_some() || p.epsilon.is_some() {
                return Err(KeyError::new(
                    if p.delta.is_some() { "params.delta" } else { "params.epsilon" },
                    "with vary = \"delta\" the grid holds the deltas; give neither delta nor epsilon",
                ));
            }
            for (i, &x) in xs.iter().enumerate() {
                open_unit(&format!("params.grid[{i}]"), x)?;
            }
        }
        Vary::Epsilon => {
            if p.delta.is_some() || p.epsilon.is_some() {
                return Err(KeyError::new(
                    if p.delta.is_some() { "params.delta" } else { "params.epsilon" },
                    "with vary = \"epsilon\" the grid holds the epsilons; give neither delta nor epsilon",
                ));
            }
            for (i, &x) in xs.iter().enumerate() {
                nonnegative(&format!("params.grid[{i}]"), x)?;
            }
        }
    }
    // Run-time estimate of the exact (pld) queries, before computing: ε is reported at
    // the accountant's default 1e-4, δ at 1e-3.
    let reports_eps = match p.vary {
        Vary::Count => p.delta.is_some(),
        Vary::Delta => true,
        Vary::Epsilon => false,
    };
    let acc = accuracy.unwrap_or(if reports_eps { 1e-4 } else { 1e-3 });
    let exact: Vec<f64> = mechanisms
        .iter()
        .zip(&schedules)
        .filter(|(m, _)| matches!(m.2, Method::Pld | Method::LowerBound))
        .zip(&with)
        .map(|((m, sch), more)| match sch {
            None => {
                more.iter()
                    .map(|s| crate::ranges::accountant_seconds(s, acc))
                    .fold(crate::ranges::accountant_seconds(&m.1, acc), f64::max)
                    * (1 + more.len()) as f64
            }
            Some(s) => schedule_seconds(s, acc),
        })
        .collect();
    let estimate: f64 = exact.iter().map(|t| xs.len() as f64 * t).sum();
    crate::ranges::within_budget_total(
        "params.grid",
        &format!(
            "{} exact (pld) queries at accuracy {}",
            xs.len() * exact.len(),
            crate::ranges::show(acc)
        ),
        estimate,
    )?;
    Ok(Box::new(PrivacyCurve {
        vary: p.vary,
        xs,
        delta: p.delta,
        epsilon: p.epsilon,
        accuracy,
        mechanisms,
        schedules,
        with,
        panels,
    }))
}

fn nonnegative(key: &str, v: f64) -> Result<f64, KeyError> {
    if v.is_finite() && (0.0..=1e12).contains(&v) {
        Ok(v)
    } else {
        Err(KeyError::new(key, format!("must be in [0, 1e12], got {v}")))
    }
}

impl Job for PrivacyCurve {
    fn panel_keys(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in &self.panels {
            if !out.contains(p) {
                out.push(p.clone());
            }
        }
        out
    }

    fn series_keys(&self) -> Vec<String> {
        self.mechanisms.iter().map(|m| m.0.clone()).collect()
    }

    fn extra_columns(&self) -> Vec<String> {
        ["y_lo", "y_hi", "count", "epsilon", "delta"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        self.xs.len() * self.mechanisms.len()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let mut table = Table::new(self.extra_columns());
        let rows = super::per_point(self.mechanisms.len(), &self.xs, tick, |j, x| {
            // Every refusal of a point (an unreachable δ, a law the accountant cannot
            // resolve) is the mechanism's at that grid value: bad input, by key.
            self.row(j, x)
                .map_err(|e| format!("params.mechanisms[{j}].spec: {e}"))
        })?;
        for row in rows {
            table.push(row);
        }
        Ok(table)
    }
}

impl PrivacyCurve {
    /// One point: mechanism `j` of the list at grid value `x`.
    fn row(&self, j: usize, x: f64) -> Result<Row, String> {
        let (key, spec, meth) = &self.mechanisms[j];
        let mut s = spec.clone();
        let mut more = self.with[j].clone();
        if self.vary == Vary::Count {
            s.count = (x as u64) * spec.count;
            for m in &mut more {
                m.count *= x as u64;
            }
        }
        let (report_eps, given) = match self.vary {
            Vary::Count => match (self.delta, self.epsilon) {
                (Some(d), _) => (true, d),
                (_, Some(e)) => (false, e),
                _ => unreachable!("validated in prepare"),
            },
            Vary::Delta => (true, x),
            Vary::Epsilon => (false, x),
        };
        let (lo, mid, hi) = match meth {
            Method::Rdp => {
                let (sigma, q) = match s.kind {
                    MechanismKind::Gaussian { sigma } => (sigma, 1.0),
                    MechanismKind::SubsampledGaussian { sigma, q } => (sigma, q),
                    _ => unreachable!("validated in prepare"),
                };
                let e = composition::rdp::subsampled_gaussian_epsilon(
                    q,
                    sigma / s.sensitivity,
                    s.count,
                    given,
                )
                .map_err(|e| format!("{key} at x = {x}: {e}"))?;
                (e, e, e)
            }
            Method::Zcdp => {
                let one = match s.kind {
                    MechanismKind::Gaussian { sigma } => {
                        composition::zcdp::gaussian_rho(s.sensitivity, sigma)
                            .map_err(|e| format!("{key}: {e}"))?
                    }
                    // ε-BR is ε²/8-zCDP (Cesar & Rogers, Lemma 3.2).
                    MechanismKind::BoundedRange { epsilon } => epsilon * epsilon / 8.0,
                    _ => unreachable!("validated in prepare"),
                };
                let rho = s.count as f64 * one;
                let v = if report_eps {
                    composition::zcdp::epsilon_cks(rho, given)
                } else {
                    composition::zcdp::delta_cks(rho, given)
                }
                .map_err(|e| format!("{key} at x = {x}: {e}"))?;
                (v, v, v)
            }
            Method::OptimalDp => {
                let (e0, d0) = match s.kind {
                    MechanismKind::RandomizedResponse { epsilon } => (epsilon, 0.0),
                    MechanismKind::Laplace { scale } => (s.sensitivity / scale, 0.0),
                    MechanismKind::TruncatedLaplace { epsilon, delta }
                    | MechanismKind::ApproxDp { epsilon, delta } => (epsilon, delta),
                    // Each selection taken by its ε-DP guarantee alone (dp_accounting's
                    // reading of the exponential mechanism).
                    MechanismKind::BoundedRange { epsilon }
                    | MechanismKind::NoisyMax { epsilon, .. } => (epsilon, 0.0),
                    _ => unreachable!("validated in prepare"),
                };
                let k = s.count;
                let v = match (report_eps, d0 > 0.0) {
                    (true, false) => composition::dp_epsilon(k, e0, given),
                    (true, true) => composition::dp_epsilon_approx(k, e0, d0, given),
                    (false, false) => composition::dp_delta(k, e0, given),
                    (false, true) => composition::dp_delta_approx(k, e0, d0, given),
                }
                .map_err(|e| format!("{key} at x = {x}: {e}"))?;
                (v, v, v)
            }
            Method::Concentration => {
                let k = s.count;
                let v = match s.kind {
                    MechanismKind::RandomizedResponse { epsilon } => {
                        composition::concentration_epsilon(k, 0, epsilon, &[], given)
                    }
                    MechanismKind::Laplace { scale } => {
                        composition::concentration_epsilon(k, 0, s.sensitivity / scale, &[], given)
                    }
                    MechanismKind::BoundedRange { epsilon } => {
                        composition::concentration_epsilon(0, k, epsilon, &[], given)
                    }
                    MechanismKind::NoisyMax { epsilon, .. } => {
                        composition::concentration_epsilon(k, 0, epsilon, &[], given)
                    }
                    MechanismKind::Gaussian { sigma } => {
                        // k uses: mean k r²/2 and subgaussian τ² = k r² (r = Δ/σ).
                        let r = s.sensitivity / sigma;
                        let kf = k as f64;
                        composition::Cdp::new(0.5 * kf * r * r, kf.sqrt() * r).and_then(|c| {
                            composition::concentration_epsilon(0, 0, 1.0, &[c], given)
                        })
                    }
                    _ => unreachable!("validated in prepare"),
                }
                .map_err(|e| format!("{key} at x = {x}: {e}"))?;
                (v, v, v)
            }
            Method::OptimalBr => {
                let MechanismKind::BoundedRange { epsilon } = s.kind else {
                    unreachable!("validated in prepare")
                };
                let v = if report_eps {
                    composition::br_epsilon(s.count, epsilon, given)
                } else {
                    composition::br_delta(s.count, epsilon, given)
                }
                .map_err(|e| format!("{key} at x = {x}: {e}"))?;
                (v, v, v)
            }
            Method::Pld | Method::LowerBound if self.schedules[j].is_some() => {
                let sch = self.schedules[j].as_ref().expect("a schedule series");
                let times = if self.vary == Vary::Count {
                    x as u64
                } else {
                    1
                };
                s.count = sch.steps * times;
                // Each copy's composition, the schedule taken `times` times.
                let build =
                    |list: &[MechanismSpec],
                     accuracy: Option<f64>|
                     -> Result<composition::accountant::Composition, String> {
                        let list: Vec<MechanismSpec> = list
                            .iter()
                            .map(|m| {
                                let mut m = m.clone();
                                m.count *= times;
                                m
                            })
                            .collect();
                        let acc = Composition::of(&list).map_err(|e| format!("{key}: {}", e.0))?;
                        match accuracy {
                            Some(a) => acc.with_accuracy(a).map_err(|e| format!("{key}: {e}")),
                            None => Ok(acc),
                        }
                    };
                let at = |e: composition::CompositionError| format!("{key} at x = {x}: {e}");
                let (lo, est, hi) = match sch.two_copies() {
                    false => {
                        // Past 384 laws composed exactly, no finer than `end_accuracy`.
                        let default = if report_eps { 1e-4 } else { 1e-3 };
                        let asked = self.accuracy.unwrap_or(default);
                        let acc_at = if sch.end_accuracy(asked) > asked {
                            Some(sch.end_accuracy(asked))
                        } else {
                            self.accuracy
                        };
                        let c = build(&sch.upper, acc_at)?;
                        let a = if report_eps {
                            c.epsilon(given)
                        } else {
                            c.delta(given)
                        }
                        .map_err(at)?;
                        (a.lower, a.estimate, a.upper)
                    }
                    true => {
                        // Each end from the rounded schedule on its side (docs/accountant.md
                        // §2.8), the lower copy's slack charged; the accountant is asked for
                        // no finer accuracy than the rounding already costs.
                        let default = if report_eps { 1e-4 } else { 1e-3 };
                        let coarse = Some(sch.end_accuracy(self.accuracy.unwrap_or(default)));
                        let (up, low) = (build(&sch.upper, coarse)?, build(&sch.lower, coarse)?);
                        if report_eps {
                            // Both ends side by side, as `dpw account` asks them.
                            let a = up
                                .epsilon_with_lower(given, &low, sch.lower_target(given, times))
                                .map_err(at)?;
                            (a.lower, a.estimate, a.upper)
                        } else {
                            let hi = up.delta(given).map_err(at)?.upper;
                            let lo = sch.lower_delta(low.delta(given).map_err(at)?.lower, times);
                            (lo, 0.5 * (lo + hi), hi)
                        }
                    }
                };
                if *meth == Method::Pld {
                    // Never looser than the schedule's certified Rényi-DP bound
                    // (docs/accountant.md §8): its upper end where that is tighter.
                    let segs: Vec<(f64, f64, u64)> = sch
                        .segments
                        .iter()
                        .map(|g| (g.sigma, g.q, g.count * times))
                        .collect();
                    let rdp = if report_eps {
                        composition::rdp::schedule_bound(&segs, false, given).value
                    } else {
                        let l = composition::rdp::schedule_bound(&segs, true, given).value;
                        densities::outward::exp_up(l).min(1.0)
                    };
                    if rdp < hi {
                        (lo, 0.5 * (lo + rdp), rdp)
                    } else {
                        (lo, est, hi)
                    }
                } else {
                    (lo, lo, lo)
                }
            }
            Method::Pld | Method::LowerBound => {
                let build = if *meth == Method::Pld {
                    Composition::of
                } else {
                    Composition::lower_bound
                };
                let list: Vec<MechanismSpec> = std::iter::once(s.clone()).chain(more).collect();
                let mut acc = build(&list).map_err(|e| format!("{key}: {}", e.0))?;
                if let Some(a) = self.accuracy {
                    acc = acc.with_accuracy(a).map_err(|e| format!("{key}: {e}"))?;
                }
                let a = if report_eps {
                    acc.epsilon(given)
                } else {
                    acc.delta(given)
                }
                .map_err(|e| format!("{key} at x = {x}: {e}"))?;
                if *meth == Method::Pld {
                    (a.lower, a.estimate, a.upper)
                } else {
                    (a.lower, a.lower, a.lower)
                }
            }
        };
        let (eps, delta) = if report_eps {
            (mid, given)
        } else {
            (given, mid)
        };
        Ok(Row {
            panel: self.panels[j].clone(),
            series: key.clone(),
            x,
            y: mid,
            extra: vec![lo, hi, s.count as f64, eps, delta],
        })
    }
}
