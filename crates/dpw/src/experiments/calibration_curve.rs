//! Kind `calibration_curve`: the noise each mechanism family needs for k queries at a
//! target (ε, δ), and what it costs (scale, E|X|, E X², the max-of-k error at 1 − β),
//! against k, ε or δ — `dpw calibrate` over a grid, with every family calibrated by
//! exact accounting (docs/accountant.md §10): a new figure from a manifest alone.
//!
//! ```toml
//! [params]
//! vary = "count"                          # or "epsilon", "delta"
//! grid = { logspace = [1, 1e6], n = 7, integer = true }
//! epsilon = 1                             # the fixed values of the two not varied
//! delta = 1e-6
//! count = 1                               # optional (1): k when epsilon or delta vary
//! sensitivity = 1                         # optional (1)
//! beta = 0.05                             # optional (0.05), for the max-of-k error
//! accuracy = 1e-2                         # optional (1e-2): width of the noise bracket
//! metrics = ["mean_abs", "max_error"]     # panels: scale, mean_abs, second_moment, max_error
//! mechanisms = [
//!   { key = "laplace", family = "laplace" },
//!   { key = "gaussian", family = "gaussian" },
//!   { key = "truncated_laplace", family = "truncated-laplace" },
//!   { key = "bounded", family = "bounded:family=power,alpha=2" },
//!   { key = "laplace_basic", family = "laplace", calibration = "classical" },
//! ]
//! ```
//! Families: `laplace` (scale b), `gaussian` (σ), `truncated-laplace` (per-query
//! (ε₀, δ₀) with δ₀ = `delta_share`·δ/k, default share 0.5; the scale is λ = Δ/ε₀) and
//! `bounded:family=power,alpha=A` or `bounded:family=exp` (radius R). Each query is one use
//! of the mechanism with sensitivity Δ; the k uses compose. Any other family is a SPEC of
//! the `dpw account` language with exactly one value written `?`, e.g.
//! `{ key = "dpsgd", family = "subsampled-gaussian:sigma=?,q=0.01" }`: the count k (varied,
//! or `params.count`) is applied as the SPEC's `count` and `params.sensitivity` as its
//! `sensitivity`, each unless the SPEC gives it; its only metric is `scale`, the value of
//! the `?` (another metric is refused naming `params.metrics`), and its calibration is
//! exact.
//!
//! `calibration = "exact"` (the default): the least noise whose k-fold composition is
//! certified (ε, δ)-DP, by the general solver ([`composition::accountant::query::solve`],
//! docs/accountant.md §10) on a SPEC with one `?`: `laplace:scale=?,…`,
//! `truncated-laplace:epsilon=?,delta=δ₀,…` (θ = 1/ε₀: a larger ε₀ is less private, the
//! solver takes the direction from the key) and `bounded:family=…,radius=?,…`, each with
//! `count=k` and `sensitivity=Δ`. The solver returns `meets`, certified to meet the
//! target, and `fails`, certified to fail it, within the accuracy: `θ_hi/θ_lo − 1 ≤
//! accuracy` (asked of the solver as `accuracy/(1 + accuracy)` for the truncated
//! Laplacian, whose unknown is 1/θ).
//! The reported value `y = y_hi` is the metric at `meets` (certified sufficient); `y_lo` is
//! the metric at `fails` (certified insufficient), so the least sufficient noise lies
//! between them. For a SPEC family `y` is `meets` likewise, and of `[y_lo, y_hi]` the other
//! end is `fails`: `y = y_hi` where a larger value is safer (`sigma`, `scale`, `radius`),
//! `y = y_lo` where a smaller one is (`epsilon`, `q`, `sensitivity`, `count`).
//! The solver starts at the central-limit guess (the Gaussian σ, at least 1/ε for the
//! truncated Laplacian; for bounded noise 60–90 % of Dagan & Kur's certified radius), and
//! θ = value/Δ (or 1/ε₀) is rounded outward: up at `meets`, down at `fails`.
//! The Gaussian is exact in closed form (the analytic σ with L2 sensitivity √k·Δ).
//! `calibration = "classical"`: the generic bounds — Laplace b = kΔ/ε (pure DP), the
//! truncated Laplacian at (ε/k, δ/k) per query (basic composition), bounded noise at the
//! certified radius of Dagan & Kur, the Gaussian unchanged.
//!
//! Bounded noise's E|X|, E X² and max-of-k error are upper bounds (the union bound
//! `P(|X| > t) ≤ β/k`); Laplace's, the Gaussian's and the truncated Laplacian's are exact
//! (i.i.d. coordinates, `P(max|X_i| ≤ t) = (1 − p(t))^k`).
//! Columns: `panel,series,x,y,y_lo,y_hi,count,epsilon,delta,parameter` (`parameter` is
//! the calibrated b/Δ, σ/Δ, 1/ε₀ or R/Δ at `y`, or a SPEC family's `meets`; `count` is
//! the SPEC's own count where it gives one).

use super::solve_curve::{certified_pair, probe, solve_seconds};
use super::{distinct, open_unit, positive, relative_accuracy, Job};
use crate::calibrate::Numbers;
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use composition::accountant::{MechanismSpec, Target, Template, MAX_COUNT};
use densities::bounded::BoundedFamily;
use densities::gaussian::analytic_sigma;
use densities::outward::div_up;
use densities::truncated_laplace::TruncatedLaplace;
use mgf::{certified_radius, BoundedNoise};
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "calibration_curve",
    about: "noise each mechanism family needs for k queries at (ε, δ), by exact accounting, against k, ε or δ",
    prepare,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Vary {
    Count,
    Epsilon,
    Delta,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Calibration {
    Exact,
    Classical,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Metric {
    Scale,
    MeanAbs,
    SecondMoment,
    MaxError,
}

impl Metric {
    /// This metric of a calibrated mechanism's numbers.
    fn of(self, n: &Numbers) -> f64 {
        match self {
            Metric::Scale => n.scale,
            Metric::MeanAbs => n.mean_abs,
            Metric::SecondMoment => n.second_moment,
            Metric::MaxError => n.max_error,
        }
    }

    fn key(self) -> &'static str {
        match self {
            Metric::Scale => "scale",
            Metric::MeanAbs => "mean_abs",
            Metric::SecondMoment => "second_moment",
            Metric::MaxError => "max_error",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MechanismInput {
    key: String,
    family: String,
    calibration: Option<Calibration>,
    delta_share: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    vary: Vary,
    grid: Grid,
    epsilon: Option<f64>,
    delta: Option<f64>,
    count: Option<f64>,
    sensitivity: Option<f64>,
    beta: Option<f64>,
    accuracy: Option<f64>,
    metrics: Vec<Metric>,
    mechanisms: Vec<MechanismInput>,
}

/// A mechanism family with one noise parameter θ (larger θ, more noise, more privacy),
/// or a SPEC with one value written `?`.
#[derive(Debug, Clone, PartialEq)]
enum Family {
    Laplace,
    Gaussian,
    /// δ₀ = share·δ/k per query; θ = 1/ε₀.
    TruncatedLaplace {
        share: f64,
    },
    /// θ = R/Δ.
    Bounded(BoundedFamily),
    /// A SPEC of the `dpw account` language with one value `?`, calibrated by the solver.
    Spec {
        /// The SPEC as written.
        text: String,
        /// Whether it gives its own `count` (else k is applied).
        count: bool,
        /// Whether it gives its own `sensitivity` (else `params.sensitivity` is applied).
        sensitivity: bool,
    },
}

#[derive(Debug)]
struct Mechanism {
    key: String,
    family: Family,
    calibration: Calibration,
}

#[derive(Debug)]
struct CalibrationCurve {
    vary: Vary,
    xs: Vec<f64>,
    epsilon: f64,
    delta: f64,
    /// k when ε or δ is varied.
    count: f64,
    sensitivity: f64,
    beta: f64,
    accuracy: f64,
    metrics: Vec<Metric>,
    mechanisms: Vec<Mechanism>,
    /// Each bounded family's density with its certified normaliser, built once (every
    /// calibration step and metric of a point uses it).
    noises: Vec<(BoundedFamily, BoundedNoise)>,
}

/// Whether SPEC `text` gives a value for `key`.
fn gives(text: &str, key: &str) -> bool {
    let rest = text.split_once(':').map_or("", |(_, r)| r);
    rest.split(',')
        .any(|item| item.split_once('=').map(|(k, _)| k.trim()) == Some(key))
}

fn family(at: &str, text: &str, share: Option<f64>) -> Result<Family, KeyError> {
    let share_at = at.replace(".family", ".delta_share");
    let fam = match text {
        "laplace" => Family::Laplace,
        "gaussian" => Family::Gaussian,
        "truncated-laplace" => {
            let s = share.unwrap_or(0.5);
            if !(s > 0.0 && s <= 1.0) {
                return Err(KeyError::new(
                    share_at,
                    format!("must be in (0, 1], got {s}"),
                ));
            }
            return Ok(Family::TruncatedLaplace { share: s });
        }
        "bounded:family=exp" => Family::Bounded(BoundedFamily::exp()),
        other if other.contains('?') => {
            let text = other.trim().to_string();
            Template::parse(&[text.as_str()]).map_err(|e| KeyError::new(at, e.to_string()))?;
            Family::Spec {
                count: gives(&text, "count"),
                sensitivity: gives(&text, "sensitivity"),
                text,
            }
        }
        other => match other.strip_prefix("bounded:family=power,alpha=") {
            Some(a) => {
                let alpha: f64 = a
                    .trim()
                    .parse()
                    .map_err(|_| KeyError::new(at, format!("alpha = '{a}' is not a number")))?;
                if !(alpha > 0.0 && alpha <= 100.0) {
                    return Err(KeyError::new(
                        at,
                        format!("alpha must be in (0, 100], got {alpha}"),
                    ));
                }
                Family::Bounded(
                    BoundedFamily::power(alpha).map_err(|e| KeyError::new(at, e.to_string()))?,
                )
            }
            None => {
                return Err(KeyError::new(
                    at,
                    format!(
                        "\"{other}\" is not one of: laplace, gaussian, truncated-laplace, \
                         bounded:family=power,alpha=A, bounded:family=exp, or a SPEC with one \
                         value written ? (e.g. subsampled-gaussian:sigma=?,q=0.01)"
                    ),
                ))
            }
        },
    };
    if share.is_some() {
        return Err(KeyError::new(
            share_at,
            "applies to family = \"truncated-laplace\" only",
        ));
    }
    Ok(fam)
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    if p.mechanisms.is_empty() {
        return Err(KeyError::new(
            "params.mechanisms",
            "must list at least one { key, family } mechanism",
        ));
    }
    let keys: Vec<String> = p.mechanisms.iter().map(|m| m.key.clone()).collect();
    distinct(&keys, |i| format!("params.mechanisms[{i}].key"))?;
    let mut mechanisms = Vec::new();
    for (i, m) in p.mechanisms.iter().enumerate() {
        if m.key.is_empty() {
            return Err(KeyError::new(
                format!("params.mechanisms[{i}].key"),
                "must not be empty",
            ));
        }
        let family = family(
            &format!("params.mechanisms[{i}].family"),
            &m.family,
            m.delta_share,
        )?;
        let calibration = m.calibration.unwrap_or(Calibration::Exact);
        if matches!(family, Family::Spec { .. }) && calibration == Calibration::Classical {
            return Err(KeyError::new(
                format!("params.mechanisms[{i}].calibration"),
                "\"classical\" applies to the built-in families only: a SPEC family is \
                 calibrated exactly",
            ));
        }
        mechanisms.push(Mechanism {
            key: m.key.clone(),
            family,
            calibration,
        });
    }
    if p.metrics.is_empty() {
        return Err(KeyError::new(
            "params.metrics",
            "must list at least one of scale, mean_abs, second_moment, max_error",
        ));
    }
    let mkeys: Vec<String> = p.metrics.iter().map(|m| m.key().to_string()).collect();
    distinct(&mkeys, |i| format!("params.metrics[{i}]"))?;
    if let Some(i) = mechanisms
        .iter()
        .position(|m| matches!(m.family, Family::Spec { .. }))
    {
        if let Some(j) = p.metrics.iter().position(|&m| m != Metric::Scale) {
            return Err(KeyError::new(
                format!("params.metrics[{j}]"),
                format!(
                    "{} applies to the built-in families only; params.mechanisms[{i}] \
                     (\"{}\") is a SPEC family, whose one metric is scale (the value of its ?)",
                    p.metrics[j].key(),
                    mechanisms[i].key
                ),
            ));
        }
    }
    let sensitivity = p.sensitivity.unwrap_or(1.0);
    if !(1e-100..=1e100).contains(&sensitivity) {
        return Err(KeyError::new(
            "params.sensitivity",
            format!("must be in [1e-100, 1e100], got {sensitivity}"),
        ));
    }
    let beta = open_unit("params.beta", p.beta.unwrap_or(0.05))?;
    let accuracy = relative_accuracy(Some(p.accuracy.unwrap_or(1e-2)))?.unwrap_or(1e-2);
    let xs = p.grid.values().to_vec();
    // The two fixed values and the grid, each in the range where every family is
    // calibrated correctly: ε in [1e-3, 20], δ in [1e-100, 0.1], k in [1, 1e8].
    let eps_ok = |key: &str, e: f64| -> Result<f64, KeyError> {
        if (1e-3..=20.0).contains(&e) {
            Ok(e)
        } else {
            Err(KeyError::new(
                key,
                format!("must be in [1e-3, 20], got {e}"),
            ))
        }
    };
    let delta_ok = |key: &str, d: f64| -> Result<f64, KeyError> {
        if (1e-100..=0.1).contains(&d) {
            Ok(d)
        } else {
            Err(KeyError::new(
                key,
                format!("must be in [1e-100, 0.1], got {d}"),
            ))
        }
    };
    let fixed = |key: &str, v: Option<f64>, varied: bool| -> Result<f64, KeyError> {
        match (v, varied) {
            (Some(_), true) => Err(KeyError::new(
                key,
                "is the varied quantity: its values come from params.grid",
            )),
            (None, false) => Err(KeyError::new(key, "missing (required unless varied)")),
            (Some(v), false) => Ok(v),
            (None, true) => Ok(f64::NAN),
        }
    };
    let count = match (p.count, p.vary) {
        (Some(_), Vary::Count) => {
            return Err(KeyError::new(
                "params.count",
                "is the varied quantity: its values come from params.grid",
            ))
        }
        (None, _) => 1.0,
        (Some(c), _) => {
            if !(c.fract() == 0.0 && (1.0..=1e8).contains(&c)) {
                return Err(KeyError::new(
                    "params.count",
                    format!("counts must be integers in [1, 1e8], got {c}"),
                ));
            }
            c
        }
    };
    let epsilon = fixed("params.epsilon", p.epsilon, p.vary == Vary::Epsilon)?;
    let delta = fixed("params.delta", p.delta, p.vary == Vary::Delta)?;
    if p.vary != Vary::Epsilon {
        eps_ok("params.epsilon", epsilon)?;
    }
    if p.vary != Vary::Delta {
        delta_ok("params.delta", delta)?;
    }
    for (i, &x) in xs.iter().enumerate() {
        let key = format!("params.grid[{i}]");
        match p.vary {
            Vary::Count => {
                if !(x.fract() == 0.0 && (1.0..=1e8).contains(&x) && x <= MAX_COUNT as f64) {
                    return Err(KeyError::new(
                        key,
                        format!("counts must be integers in [1, 1e8], got {x}"),
                    ));
                }
            }
            Vary::Epsilon => {
                eps_ok(&key, x)?;
            }
            Vary::Delta => {
                delta_ok(&key, x)?;
            }
        }
    }
    let mut noises: Vec<(BoundedFamily, BoundedNoise)> = Vec::new();
    for (i, m) in mechanisms.iter().enumerate() {
        if let Family::Bounded(f) = m.family {
            if !noises.iter().any(|(g, _)| *g == f) {
                let noise = BoundedNoise::new(f).map_err(|e| {
                    KeyError::new(format!("params.mechanisms[{i}].family"), e.to_string())
                })?;
                noises.push((f, noise));
            }
        }
    }
    let job = CalibrationCurve {
        vary: p.vary,
        xs,
        epsilon,
        delta,
        count,
        sensitivity: positive("params.sensitivity", sensitivity)?,
        beta,
        accuracy,
        metrics: p.metrics,
        mechanisms,
        noises,
    };
    // A SPEC family with k and the sensitivity applied: the SPEC language's ranges
    // checked at a probe of its unknown.
    for (i, m) in job.mechanisms.iter().enumerate() {
        if let Family::Spec { .. } = m.family {
            job.spec_probe(&m.family, job.point(job.xs[0]))
                .map_err(|e| KeyError::new(format!("params.mechanisms[{i}].family"), e))?;
        }
    }
    job.within_budget()?;
    Ok(Box::new(job))
}

/// One calibration point: (k, ε, δ).
#[derive(Debug, Clone, Copy)]
struct Point {
    k: f64,
    eps: f64,
    delta: f64,
}

/// A calibrated mechanism at one point: the value certified sufficient and the one
/// certified insufficient (θ for the built-in families; equal where the calibration is in
/// closed form), and the count of the composition.
#[derive(Debug, Clone, Copy)]
struct Calibrated {
    meets: f64,
    fails: f64,
    count: f64,
}

/// How the solver's unknown `v` gives θ.
#[derive(Debug, Clone, Copy)]
enum Unknown {
    /// θ = v/Δ (a scale or radius at sensitivity Δ).
    Scaled(f64),
    /// θ = 1/v (the truncated Laplacian's ε₀).
    Reciprocal,
    /// A SPEC family's value itself.
    Value,
}

/// `a/b` rounded down (finite `a ≥ 0`, `b > 0`): a lower bound on the quotient.
fn div_down(a: f64, b: f64) -> f64 {
    let q = a / b;
    if q.is_finite() && q.mul_add(b, -a) > 0.0 {
        densities::outward::down(q)
    } else {
        q
    }
}

impl CalibrationCurve {
    /// The point at grid value `x` (with ε or δ varied, `count` queries).
    fn point(&self, x: f64) -> Point {
        match self.vary {
            Vary::Count => Point {
                k: x,
                eps: self.epsilon,
                delta: self.delta,
            },
            Vary::Epsilon => Point {
                k: self.count,
                eps: x,
                delta: self.delta,
            },
            Vary::Delta => Point {
                k: self.count,
                eps: self.epsilon,
                delta: x,
            },
        }
    }

    /// The solver's SPEC for an exact calibration of `fam` at `pt`, how its unknown `v`
    /// relates to θ, and the solver's accuracy.
    fn solver_spec(&self, fam: &Family, pt: Point) -> (String, Unknown, f64) {
        let (s, k, a) = (self.sensitivity, pt.k as u64, self.accuracy);
        match fam {
            Family::Laplace => (
                format!("laplace:scale=?,sensitivity={s:e},count={k}"),
                Unknown::Scaled(s),
                a,
            ),
            Family::TruncatedLaplace { share } => (
                format!(
                    "truncated-laplace:epsilon=?,delta={:e},sensitivity={s:e},count={k}",
                    share * pt.delta / pt.k
                ),
                Unknown::Reciprocal,
                a / (1.0 + a),
            ),
            Family::Bounded(f) => {
                let fam = match f {
                    BoundedFamily::Power { alpha } => format!("family=power,alpha={alpha}"),
                    BoundedFamily::Exp => "family=exp".to_string(),
                };
                (
                    format!("bounded:{fam},radius=?,sensitivity={s:e},count={k}"),
                    Unknown::Scaled(s),
                    a,
                )
            }
            Family::Spec {
                text,
                count,
                sensitivity,
            } => {
                let mut t = text.clone();
                if !count {
                    t.push_str(&format!(",count={k}"));
                }
                if !sensitivity {
                    t.push_str(&format!(",sensitivity={s:e}"));
                }
                (t, Unknown::Value, a)
            }
            Family::Gaussian => unreachable!("the Gaussian is calibrated in closed form"),
        }
    }

    /// A SPEC family's composition at a probe of its unknown, at `pt`.
    fn spec_probe(&self, fam: &Family, pt: Point) -> Result<MechanismSpec, String> {
        let (text, _, _) = self.solver_spec(fam, pt);
        let t = Template::parse(&[text]).map_err(|e| e.to_string())?;
        probe(&t)
    }

    /// The exact calibration of `fam` at `pt` by the solver, started at θ = `guess`
    /// (none for a SPEC family).
    fn exact(&self, fam: &Family, guess: Option<f64>, pt: Point) -> Result<Calibrated, String> {
        let (text, unknown, accuracy) = self.solver_spec(fam, pt);
        let target = Target::Privacy {
            epsilon: pt.eps,
            delta: pt.delta,
        };
        let start = guess.map(|t| match unknown {
            Unknown::Scaled(s) => t * s,
            Unknown::Reciprocal => 1.0 / t,
            Unknown::Value => t,
        });
        let p = certified_pair(std::slice::from_ref(&text), &[target], accuracy, start)?;
        let count = if let Family::Spec { count: true, .. } = fam {
            let t = Template::parse(&[text]).map_err(|e| e.to_string())?;
            t.instantiate(p.meets).map_err(|e| e.to_string())?[0].count as f64
        } else {
            pt.k
        };
        // θ rounded outward: up at `meets` (more noise, still certified sufficient), down
        // at `fails`.
        let (meets, fails) = match unknown {
            Unknown::Scaled(s) => (div_up(p.meets, s), div_down(p.fails, s)),
            Unknown::Reciprocal => (div_up(1.0, p.meets), div_down(1.0, p.fails)),
            Unknown::Value => (p.meets, p.fails),
        };
        Ok(Calibrated {
            meets,
            fails,
            count,
        })
    }

    /// Refuses, before computing, a grid whose exact calibrations would exceed the
    /// run-time budget: one certified solve each ([`solve_seconds`]), and the certified
    /// radii of bounded noise.
    fn within_budget(&self) -> Result<(), KeyError> {
        let mut searches = 0usize;
        let mut estimate = 0.0;
        for &x in &self.xs {
            let pt = self.point(x);
            for m in &self.mechanisms {
                if let Family::Bounded(_) = m.family {
                    // Dagan–Kur's certified radius: the classical row, and the exact
                    // search's start.
                    estimate += crate::ranges::CERTIFIED_RADIUS_SECONDS;
                }
                if m.calibration != Calibration::Exact || matches!(m.family, Family::Gaussian) {
                    continue;
                }
                // The kind alone sets the cost: any value in range will do.
                let spec = self
                    .spec_probe(&m.family, pt)
                    .map_err(|e| KeyError::new("params.mechanisms", e))?;
                searches += 1;
                estimate += solve_seconds(&spec, self.accuracy);
            }
        }
        crate::ranges::within_budget_total(
            "params.grid",
            &format!(
                "{searches} exact calibrations at accuracy {} and the certified radii",
                crate::ranges::show(self.accuracy)
            ),
            estimate,
        )
    }

    /// The calibration of one mechanism at `pt`.
    fn calibrate(&self, m: &Mechanism, pt: Point) -> Result<Calibrated, String> {
        let (k, eps, delta) = (pt.k, pt.eps, pt.delta);
        let closed = |t: f64| Calibrated {
            meets: t,
            fails: t,
            count: k,
        };
        // σ of one query at unit sensitivity with the whole budget (the Gaussian's exact
        // calibration; the others' central-limit guess is √k times it).
        let sigma = || analytic_sigma(eps, delta, k.sqrt()).map_err(|e| e.to_string());
        match (&m.family, m.calibration) {
            (Family::Spec { .. }, _) => self.exact(&m.family, None, pt),
            (Family::Gaussian, _) => Ok(closed(sigma()?)),
            (Family::Laplace, Calibration::Classical) => Ok(closed(k / eps)),
            (Family::TruncatedLaplace { .. }, Calibration::Classical) => Ok(closed(k / eps)),
            (&Family::Bounded(f), Calibration::Classical) => Ok(closed(self.certified(f, pt)?)),
            (Family::Laplace, Calibration::Exact) => {
                // Pure DP (b = k/ε) always suffices.
                self.exact(&m.family, Some((k / eps).min(sigma()?)), pt)
            }
            (Family::TruncatedLaplace { .. }, Calibration::Exact) => {
                // θ = 1/ε₀; ε₀ = ε/k always suffices with δ₀ ≤ δ/k.
                let guess = (k / eps).min(sigma()?.max(1.0 / eps));
                self.exact(&m.family, Some(guess), pt)
            }
            (&Family::Bounded(f), Calibration::Exact) => {
                // The exact least radius is about 60 % of the certified one at k ≤ 10,
                // 75 % at k = 100 and 90 % from k = 1000 on (fig21 at ε = 1, δ = 1e-6;
                // 55–92 % in fig19): only where the solver starts depends on it (each
                // evaluation saved is one accountant call at the finest accuracy).
                let cert = self.certified(f, pt)?;
                let ratio = if k >= 1000.0 {
                    0.9
                } else if k >= 100.0 {
                    0.75
                } else {
                    0.6
                };
                self.exact(&m.family, Some(ratio * cert), pt)
            }
        }
    }

    /// The density of bounded family `f` (built when the manifest was read).
    fn noise(&self, f: BoundedFamily) -> Result<&BoundedNoise, String> {
        self.noises
            .iter()
            .find(|(g, _)| *g == f)
            .map(|(_, n)| n)
            .ok_or_else(|| format!("bounded family {f:?} was not prepared"))
    }

    /// Dagan–Kur's certified radius R/Δ for `pt`.
    fn certified(&self, f: BoundedFamily, pt: Point) -> Result<f64, String> {
        let noise = self.noise(f)?;
        Ok(certified_radius(noise, pt.k, pt.eps, pt.delta)
            .map_err(|e| e.to_string())?
            .radius)
    }

    /// The numbers of `m` at parameter θ (unit-free θ, scaled by the sensitivity).
    fn numbers(&self, m: &Mechanism, theta: f64, pt: Point) -> Result<Numbers, String> {
        let s = self.sensitivity;
        let (k, beta) = (pt.k, self.beta);
        Ok(match m.family {
            Family::Laplace => Numbers::laplace(theta * s, k, beta),
            Family::Gaussian => Numbers::gaussian(theta * s, k, beta),
            Family::TruncatedLaplace { share } => {
                let d0 = match m.calibration {
                    Calibration::Exact => share * pt.delta / k,
                    Calibration::Classical => pt.delta / k,
                };
                let t = TruncatedLaplace::new(1.0 / theta, d0, s).map_err(|e| e.to_string())?;
                Numbers::truncated_laplace(&t, k, beta)
            }
            Family::Bounded(f) => Numbers::bounded(self.noise(f)?, theta * s, k, beta),
            Family::Spec { .. } => unreachable!("a SPEC family's only metric is its value"),
        })
    }
}

impl Job for CalibrationCurve {
    fn panel_keys(&self) -> Vec<String> {
        self.metrics.iter().map(|m| m.key().to_string()).collect()
    }

    fn series_keys(&self) -> Vec<String> {
        self.mechanisms.iter().map(|m| m.key.clone()).collect()
    }

    fn extra_columns(&self) -> Vec<String> {
        ["y_lo", "y_hi", "count", "epsilon", "delta", "parameter"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        self.xs.len() * self.mechanisms.len()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let mut table = Table::new(self.extra_columns());
        let found = super::per_point(self.mechanisms.len(), &self.xs, tick, |j, x| {
            let m = &self.mechanisms[j];
            // A family that cannot be calibrated at a grid value (no certified radius,
            // noise outside the supported range) is the manifest's: named by key.
            let c = self
                .calibrate(m, self.point(x))
                .map_err(|e| format!("params.mechanisms[{j}].family: {} at x = {x}: {e}", m.key))?;
            Ok((j, x, c))
        })?;
        for &metric in &self.metrics {
            for &(j, x, c) in &found {
                let m = &self.mechanisms[j];
                let pt = self.point(x);
                // y is the value at `meets`; [y_lo, y_hi] holds it and the value at
                // `fails` (every metric grows with θ).
                let (y, ylo, yhi) = if let Family::Spec { .. } = m.family {
                    (c.meets, c.meets.min(c.fails), c.meets.max(c.fails))
                } else {
                    let f = |t: f64| {
                        self.numbers(m, t, pt).map(|n| metric.of(&n)).map_err(|e| {
                            format!("params.mechanisms[{j}].family: {} at x = {x}: {e}", m.key)
                        })
                    };
                    let (ylo, yhi) = (f(c.fails)?, f(c.meets)?);
                    (yhi, ylo, yhi)
                };
                table.push(Row {
                    panel: metric.key().into(),
                    series: m.key.clone(),
                    x,
                    y,
                    extra: vec![ylo, yhi, c.count, pt.eps, pt.delta, c.meets],
                });
            }
        }
        Ok(table)
    }
}
