//! Kind `solve_curve`: the value of one parameter, written `?` in a mechanism of the
//! `dpw account` SPEC language, that meets privacy targets, against the number of uses
//! (T steps of DP-SGD, k queries): `dpw solve` over a grid, each point the certified pair
//! of the general solver ([`composition::accountant::query::solve`], docs/accountant.md §10). The
//! inverse of `privacy_curve`; a new figure from a manifest alone.
//!
//! ```toml
//! [params]
//! grid = { logspace = [1e2, 1e5], n = 7, integer = true }  # uses of each mechanism
//! accuracy = 1e-3                  # optional (1e-3): |meets/fails − 1| of every point
//! mechanisms = [
//!   { key = "eps_8", panel = "privacy", spec = "subsampled-gaussian:sigma=?,q=0.01", epsilon = 8, delta = 1e-5 },
//!   { key = "rdp_eps_8", panel = "privacy", spec = "subsampled-gaussian:sigma=?,q=0.01", epsilon = 8, delta = 1e-5, accountant = "rdp" },
//!   { key = "tpr_0.05", panel = "attack", spec = "subsampled-gaussian:sigma=?,q=0.01", max_tpr = 0.05, at_fpr = 1e-3 },
//! ]
//! ```
//! Each `spec` has exactly one value `?` (not `count`: the grid is the count); it is used
//! `x` times (times its own `count=`, as in `privacy_curve`). Its targets: `epsilon` in
//! [1e-3, 20] with `delta` in [1e-100, 0.1] (the composition is (ε, δ)-DP) and/or
//! `max_tpr` with `at_fpr` in [1e-6, 0.5] (no membership test has power above `max_tpr`
//! at false-positive rate `at_fpr`); all given must hold.
//! `panel` (default `main`) groups series into panels, in order of first appearance; a
//! `key` is a series of the plot and may recur in several panels (once in each).
//! `accountant = "pld"` (the default) is the certified solver; `"rdp"` applies to
//! `gaussian` or `subsampled-gaussian` with `sigma=?` and an (ε, δ) target only: the least
//! σ whose Rényi-DP bound is at most ε (orders 2..256 with the conversion of Balle et al.
//! 2020, [`composition::rdp::subsampled_gaussian_epsilon`], docs/accountant.md §8), by
//! bisection on that bound (decreasing in σ) to 1e-12 relative: the classical accounting
//! drawn beside the exact one, an upper bound on the σ needed, not a certified-tight one.
//!
//! Columns: `panel,series,x,y,y_lo,y_hi,count`. `y` is `meets`, the value certified to meet
//! every target; the other end of `[y_lo, y_hi]` is `fails`, certified to fail one, so the
//! least sufficient value lies in `[y_lo, y_hi]`, `y_hi/y_lo − 1 ≤ accuracy`. Where a
//! larger value is safer (`sigma`, `scale`, `radius`) `y = y_hi`; where a smaller one is
//! (`epsilon`, `q`, `sensitivity`) `y = y_lo`. An `rdp` row has `y_lo = y_hi = y`. `count`
//! is the number of uses, `x` times the SPEC's own count.

use super::{distinct, relative_accuracy, Job};
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use composition::accountant::{
    MechanismKind, MechanismSpec, Solver, Target, Template, Work, MAX_COUNT,
};
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "solve_curve",
    about:
        "the value of a SPEC's ? meeting (ε, δ) or attack-risk targets against the count, certified",
    prepare,
};

/// Default relative accuracy `|meets/fails − 1|` of a point.
const DEFAULT_ACCURACY: f64 = 1e-3;

/// Accountant queries a solve costs, in units of one query at the requested accuracy
/// ([`crate::ranges::accountant_seconds`], rounded up): the solver's first evaluations are
/// coarse (relative accuracy 1e-2), its last two or three finer than the requested one.
const SOLVE_QUERIES: f64 = 1.5;

/// Seconds one certified solve of a composition of kind `spec` takes at `accuracy`, for
/// the run-time estimate before computing, which the budget compares with: fig21's 21
/// solves and 14 certified radii are estimated at 7 s, fig23's 36 solves at 54 s (in the
/// catalog on 2 cores they take about 1.5 s and 4 s, docs/speed.md: the estimate is an
/// upper bound, for the budget's check before any work).
pub(super) fn solve_seconds(spec: &MechanismSpec, accuracy: f64) -> f64 {
    SOLVE_QUERIES * crate::ranges::accountant_seconds(spec, accuracy)
}

/// Work budget of one solve, in bins transformed (docs/accountant.md §6.1): 20 times the
/// most a catalog solve uses (about 2.5e7, fig23 at q = 0.1, T = 1e5), as `dpw
/// calibrate`'s exact row (5e8). A count of work, not seconds: the same manifest gives the
/// same numbers at any load; a solve that exhausts it is refused naming the mechanism.
const SOLVE_WORK: u64 = 500_000_000;

/// A certified pair of one solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Pair {
    /// Certified to meet every target.
    pub meets: f64,
    /// Certified to fail one of them.
    pub fails: f64,
}

/// The certified pair of `specs` (exactly one value `?`) against `targets` at relative
/// accuracy `accuracy`, the search started at `start` (else where the solver starts): an
/// error where the solver has none (no value in range meets the targets, or every value
/// does), or where it stopped before the accuracy was reached.
pub(super) fn certified_pair(
    specs: &[String],
    targets: &[Target],
    accuracy: f64,
    start: Option<f64>,
) -> Result<Pair, String> {
    let template = Template::parse(specs).map_err(|e| e.to_string())?;
    let key = template.key().to_string();
    let work = Work::new(Some(SOLVE_WORK));
    let s = Solver::new(template, targets.to_vec())
        .and_then(|s| s.with_accuracy(accuracy))
        .map(|s| {
            let s = s.with_work(work.clone());
            match start {
                Some(v) => s.with_start(v),
                None => s,
            }
        })
        .and_then(|s| s.solve())
        .map_err(|e| e.to_string())?;
    let describe = || {
        targets
            .iter()
            .map(Target::describe)
            .collect::<Vec<_>>()
            .join(" and ")
    };
    let Some(fails) = s.fails else {
        return Err(format!(
            "every {key} the SPEC accepts meets {} ({key} = {} does): nothing to solve for",
            describe(),
            s.meets
        ));
    };
    if !s.accuracy_met {
        return Err(format!(
            "the solver stopped after {} evaluations with {key} certified to meet {} at {} and \
             to fail at {}, wider than the accuracy {}",
            s.evaluations,
            describe(),
            s.meets,
            fails,
            crate::ranges::show(accuracy)
        ));
    }
    Ok(Pair {
        meets: s.meets,
        fails,
    })
}

/// The SPEC `spec` with its `count=` item (if any) replaced by `count={count}`.
pub(super) fn with_count(spec: &str, count: u64) -> String {
    let spec = spec.trim();
    let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let mut items: Vec<String> = rest
        .split(',')
        .filter(|item| {
            !item.trim().is_empty() && item.split_once('=').map(|(k, _)| k.trim()) != Some("count")
        })
        .map(|item| item.trim().to_string())
        .collect();
    items.push(format!("count={count}"));
    format!("{kind}:{}", items.join(","))
}

/// The composition `template` stands for at a valid value of its unknown (the probe of
/// its kind and count, for run-time estimates and the RDP route).
pub(super) fn probe(template: &Template) -> Result<MechanismSpec, String> {
    let (lo, hi) = template.domain().map_err(|e| e.to_string())?;
    let v = if template.integer() {
        lo
    } else {
        (lo * hi).sqrt().clamp(lo, hi)
    };
    let mut specs = template.instantiate(v).map_err(|e| e.to_string())?;
    Ok(specs.remove(0))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Method {
    Pld,
    Rdp,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MechanismInput {
    key: String,
    spec: String,
    panel: Option<String>,
    epsilon: Option<f64>,
    delta: Option<f64>,
    max_tpr: Option<f64>,
    at_fpr: Option<f64>,
    accountant: Option<Method>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    grid: Grid,
    accuracy: Option<f64>,
    mechanisms: Vec<MechanismInput>,
}

#[derive(Debug)]
struct Mechanism {
    key: String,
    panel: String,
    /// The SPEC as written (with the `?`).
    spec: String,
    /// The SPEC at a valid value of its unknown (its kind, rate, sensitivity and own
    /// count, which the grid's value multiplies).
    probe: MechanismSpec,
    targets: Vec<Target>,
    method: Method,
    /// Whether a larger value of the unknown is safer (`y = y_hi`).
    larger_is_safer: bool,
}

#[derive(Debug)]
struct SolveCurve {
    xs: Vec<f64>,
    accuracy: f64,
    mechanisms: Vec<Mechanism>,
}

/// `Ok(v)` if `lo ≤ v ≤ hi`: the targets' ranges, those of `calibration_curve` (ε in
/// [1e-3, 20], δ in [1e-100, 0.1]) and a false-positive rate in [1e-6, 0.5]. Beyond them a
/// certified solve of a subsampled mechanism can take minutes (q = 1e-3, T = 1e5 at
/// δ = 1e-300: over 100 s), which the work budget does not bound.
fn in_range(key: &str, v: f64, lo: f64, hi: f64) -> Result<f64, KeyError> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(KeyError::new(
            key,
            format!(
                "must be in [{}, {}], got {}",
                crate::ranges::show(lo),
                crate::ranges::show(hi),
                crate::ranges::show(v)
            ),
        ))
    }
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    if p.mechanisms.is_empty() {
        return Err(KeyError::new(
            "params.mechanisms",
            "must list at least one { key, spec, targets } mechanism",
        ));
    }
    // A series key may recur in several panels (one legend entry, e.g. a value of q in
    // a panel per target), once in each.
    let keys: Vec<String> = p
        .mechanisms
        .iter()
        .map(|m| format!("{}\u{0}{}", m.panel.as_deref().unwrap_or("main"), m.key))
        .collect();
    distinct(&keys, |i| format!("params.mechanisms[{i}].key")).map_err(|e| {
        KeyError::new(
            e.key,
            "duplicate key in its panel; keys must be distinct within a panel",
        )
    })?;
    let accuracy = relative_accuracy(Some(p.accuracy.unwrap_or(DEFAULT_ACCURACY)))?
        .unwrap_or(DEFAULT_ACCURACY);
    let xs = p.grid.values().to_vec();
    let mut mechanisms = Vec::with_capacity(p.mechanisms.len());
    for (i, m) in p.mechanisms.iter().enumerate() {
        let at = |k: &str| format!("params.mechanisms[{i}].{k}");
        if m.key.is_empty() {
            return Err(KeyError::new(at("key"), "must not be empty"));
        }
        let panel = m.panel.clone().unwrap_or_else(|| "main".into());
        if panel.is_empty() {
            return Err(KeyError::new(at("panel"), "must not be empty"));
        }
        let template = Template::parse(&[m.spec.as_str()])
            .map_err(|e| KeyError::new(at("spec"), e.to_string()))?;
        if template.key() == "count" {
            return Err(KeyError::new(
                at("spec"),
                "count=? cannot be solved for here: the count comes from params.grid",
            ));
        }
        let spec = probe(&template).map_err(|e| KeyError::new(at("spec"), e))?;
        let mut targets = Vec::new();
        match (m.epsilon, m.delta) {
            (Some(e), Some(d)) => {
                in_range(&at("epsilon"), e, 1e-3, 20.0)?;
                in_range(&at("delta"), d, 1e-100, 0.1)?;
                targets.push(Target::Privacy {
                    epsilon: e,
                    delta: d,
                });
            }
            (Some(_), None) => {
                return Err(KeyError::new(
                    at("delta"),
                    "missing (required with epsilon)",
                ))
            }
            (None, Some(_)) => {
                return Err(KeyError::new(
                    at("epsilon"),
                    "missing (required with delta)",
                ))
            }
            (None, None) => {}
        }
        match (m.max_tpr, m.at_fpr) {
            (Some(t), Some(a)) => {
                in_range(&at("at_fpr"), a, 1e-6, 0.5)?;
                if !(t > a && t < 1.0) {
                    return Err(KeyError::new(
                        at("max_tpr"),
                        format!(
                            "must be in (at_fpr, 1) = ({a}, 1): every mechanism allows a test \
                             with power equal to its false-positive rate; got {t}"
                        ),
                    ));
                }
                targets.push(Target::AttackRisk {
                    max_tpr: t,
                    at_fpr: a,
                });
            }
            (Some(_), None) => {
                return Err(KeyError::new(
                    at("at_fpr"),
                    "missing (required with max_tpr)",
                ))
            }
            (None, Some(_)) => {
                return Err(KeyError::new(
                    at("max_tpr"),
                    "missing (required with at_fpr)",
                ))
            }
            (None, None) => {}
        }
        if targets.is_empty() {
            return Err(KeyError::new(
                at("epsilon"),
                "no target: give epsilon and delta, or max_tpr and at_fpr (or both)",
            ));
        }
        let method = m.accountant.unwrap_or(Method::Pld);
        if method == Method::Rdp {
            let sigma_kind = matches!(
                spec.kind,
                MechanismKind::Gaussian { .. } | MechanismKind::SubsampledGaussian { .. }
            );
            if !(sigma_kind && template.key() == "sigma") {
                return Err(KeyError::new(
                    at("accountant"),
                    "\"rdp\" applies to gaussian and subsampled-gaussian with sigma=? only",
                ));
            }
            if m.max_tpr.is_some() {
                return Err(KeyError::new(
                    at("accountant"),
                    "\"rdp\" answers an (epsilon, delta) target only, not max_tpr",
                ));
            }
        }
        for (g, &x) in xs.iter().enumerate() {
            if !(x.fract() == 0.0 && x >= 1.0 && x * spec.count as f64 <= MAX_COUNT as f64) {
                return Err(KeyError::new(
                    format!("params.grid[{g}]"),
                    format!(
                        "counts must be integers in [1, 1e10] (times the SPEC's count {} of \
                         params.mechanisms[{i}]), got {x}",
                        spec.count
                    ),
                ));
            }
        }
        mechanisms.push(Mechanism {
            key: m.key.clone(),
            panel,
            spec: m.spec.trim().to_string(),
            probe: spec,
            targets,
            method,
            larger_is_safer: template.larger_is_safer(),
        });
    }
    // Run time before computing: every certified solve at the requested accuracy.
    let mut estimate = 0.0;
    let mut solves = 0usize;
    for m in mechanisms.iter().filter(|m| m.method == Method::Pld) {
        solves += xs.len();
        estimate += xs.len() as f64 * solve_seconds(&m.probe, accuracy);
    }
    crate::ranges::within_budget_total(
        "params.grid",
        &format!(
            "{solves} certified solves at accuracy {}",
            crate::ranges::show(accuracy)
        ),
        estimate,
    )?;
    Ok(Box::new(SolveCurve {
        xs,
        accuracy,
        mechanisms,
    }))
}

/// The least σ whose Rényi-DP bound after `spec.count` uses is at most `epsilon` at
/// `delta` (bisection in `ln σ` on the bound, decreasing in σ, to 1e-12 relative; the end
/// whose bound is at most ε is returned).
fn rdp_sigma(spec: &MechanismSpec, epsilon: f64, delta: f64) -> Result<f64, String> {
    let q = match spec.kind {
        MechanismKind::Gaussian { .. } => 1.0,
        MechanismKind::SubsampledGaussian { q, .. } => q,
        _ => return Err("\"rdp\" applies to gaussian and subsampled-gaussian only".into()),
    };
    let s = spec.sensitivity;
    let eps_at = |sigma: f64| -> Result<f64, String> {
        composition::rdp::subsampled_gaussian_epsilon(q, sigma / s, spec.count, delta)
            .map_err(|e| e.to_string())
    };
    let meets = |sigma: f64| {
        composition::rdp::subsampled_gaussian_epsilon_at_most(
            q,
            sigma / s,
            spec.count,
            delta,
            epsilon,
        )
        .map_err(|e| e.to_string())
    };
    let (mut lo, mut hi) = (s, s);
    let (floor, ceil) = (s * 1e-6, s * 1e8);
    while !meets(hi)? {
        hi *= 2.0;
        if hi > ceil {
            return Err(format!(
                "the RDP bound stays above epsilon = {epsilon} at sigma = {} (its floor at \
                 delta = {delta:e} is {})",
                crate::ranges::show(ceil),
                eps_at(ceil)?
            ));
        }
    }
    if lo == hi {
        while meets(lo)? {
            lo *= 0.5;
            if lo < floor {
                return Ok(lo);
            }
        }
    }
    while hi / lo - 1.0 > 1e-12 {
        let mid = (lo * hi).sqrt();
        if mid <= lo || mid >= hi {
            break;
        }
        if meets(mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

impl SolveCurve {
    /// One point: mechanism `j` at grid value `x`.
    fn row(&self, j: usize, x: f64) -> Result<Row, String> {
        let m = &self.mechanisms[j];
        let count = x as u64 * m.probe.count;
        let (y, y_lo, y_hi) = match m.method {
            Method::Rdp => {
                let mut spec = m.probe.clone();
                spec.count = count;
                let Some(&Target::Privacy { epsilon, delta }) = m.targets.first() else {
                    unreachable!("validated in prepare: rdp has an (epsilon, delta) target")
                };
                let sigma = rdp_sigma(&spec, epsilon, delta)?;
                (sigma, sigma, sigma)
            }
            Method::Pld => {
                let p = certified_pair(
                    &[with_count(&m.spec, count)],
                    &m.targets,
                    self.accuracy,
                    None,
                )?;
                if m.larger_is_safer {
                    (p.meets, p.fails, p.meets)
                } else {
                    (p.meets, p.meets, p.fails)
                }
            }
        };
        Ok(Row {
            panel: m.panel.clone(),
            series: m.key.clone(),
            x,
            y,
            extra: vec![y_lo, y_hi, count as f64],
        })
    }
}

impl Job for SolveCurve {
    fn panel_keys(&self) -> Vec<String> {
        let mut panels: Vec<String> = Vec::new();
        for m in &self.mechanisms {
            if !panels.contains(&m.panel) {
                panels.push(m.panel.clone());
            }
        }
        panels
    }

    fn series_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for m in &self.mechanisms {
            if !keys.contains(&m.key) {
                keys.push(m.key.clone());
            }
        }
        keys
    }

    fn extra_columns(&self) -> Vec<String> {
        ["y_lo", "y_hi", "count"]
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
            let m = &self.mechanisms[j];
            self.row(j, x)
                .map_err(|e| format!("params.mechanisms[{j}].spec: {} at x = {x}: {e}", m.key))
        })?;
        for panel in self.panel_keys() {
            for row in rows.iter().filter(|r| r.panel == panel) {
                table.push(row.clone());
            }
        }
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_count_replaces_or_appends_the_count() {
        assert_eq!(
            with_count("subsampled-gaussian:sigma=?,q=0.01", 100),
            "subsampled-gaussian:sigma=?,q=0.01,count=100"
        );
        assert_eq!(
            with_count(" laplace:scale=?, count=1e4 ,sensitivity=2", 7),
            "laplace:scale=?,sensitivity=2,count=7"
        );
    }

    /// The RDP σ is the least the bound allows: the bound at σ is at most ε, 1e-9 below σ
    /// above it; below fig22's σ = 1 (whose RDP ε at T = 1e4 is 6.72 < 8); and it scales
    /// with the sensitivity.
    #[test]
    fn rdp_sigma_is_the_least_sigma_the_bound_allows() {
        let spec: MechanismSpec = "subsampled-gaussian:sigma=1,q=0.01,count=10000"
            .parse()
            .unwrap();
        let s = rdp_sigma(&spec, 8.0, 1e-5).unwrap();
        let e = |sigma: f64| {
            composition::rdp::subsampled_gaussian_epsilon(0.01, sigma, 10_000, 1e-5).unwrap()
        };
        assert!(e(s) <= 8.0 && e(s * (1.0 - 1e-9)) > 8.0, "{s}");
        // fig22: ε(σ = 1, T = 1e4) by RDP is 6.72 < 8, so less than σ = 1 is needed.
        assert!(s < 1.0 && s > 0.5, "{s}");
        let spec: MechanismSpec = "subsampled-gaussian:sigma=1,q=0.01,count=10000,sensitivity=2"
            .parse()
            .unwrap();
        let s2 = rdp_sigma(&spec, 8.0, 1e-5).unwrap();
        assert!((s2 / (2.0 * s) - 1.0).abs() < 1e-11, "{s2} vs 2 × {s}");
    }
}
