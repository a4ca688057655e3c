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
//! of the mechanism with sensitivity Δ; the k uses compose.
//!
//! `calibration = "exact"` (the default): the least noise whose k-fold composition has a
//! certified δ(ε) ≤ δ (the upper end of the accountant's bracket), found by a bracketed
//! secant search on the noise parameter. The reported one (`y = y_hi`) is certified
//! sufficient; `y_lo`, within the accuracy below it, is the largest parameter tried that
//! was *not* certified sufficient: certified insufficient, or undecided where the
//! accountant's bracket of δ contained the target (the search asks δ to a quarter of the
//! tolerance, so an undecided `y_lo` lies within about a quarter of it of the least
//! private noise). `y_lo` is therefore not a certified lower bound on that least noise.
//! The Gaussian is exact in closed form (the analytic σ with L2 sensitivity √k·Δ).
//! `calibration = "classical"`: the generic bounds — Laplace b = kΔ/ε (pure DP), the
//! truncated Laplacian at (ε/k, δ/k) per query (basic composition), bounded noise at the
//! certified radius of Dagan & Kur, the Gaussian unchanged.
//!
//! Bounded noise's E|X|, E X² and max-of-k error are upper bounds (the union bound
//! `P(|X| > t) ≤ β/k`); Laplace's, the Gaussian's and the truncated Laplacian's are exact
//! (i.i.d. coordinates, `P(max|X_i| ≤ t) = (1 − p(t))^k`).
//! Columns: `panel,series,x,y,y_lo,y_hi,count,epsilon,delta,parameter` (`parameter` is
//! the calibrated b, σ, 1/ε₀ or R/Δ at `y`).

use super::{distinct, open_unit, positive, relative_accuracy, Job};
use crate::calibrate::Numbers;
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use composition::accountant::{spec::accountant, MechanismSpec, MAX_COUNT};
use densities::bounded::BoundedFamily;
use densities::gaussian::analytic_sigma;
use densities::truncated_laplace::TruncatedLaplace;
use mgf::{certified_radius, BoundedNoise};
use rayon::prelude::*;
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

/// A mechanism family with one noise parameter θ (larger θ, more noise, more privacy).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Family {
    Laplace,
    Gaussian,
    /// δ₀ = share·δ/k per query; θ = 1/ε₀.
    TruncatedLaplace {
        share: f64,
    },
    /// θ = R/Δ.
    Bounded(BoundedFamily),
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
                         bounded:family=power,alpha=A, bounded:family=exp"
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
        mechanisms.push(Mechanism {
            key: m.key.clone(),
            family: family(
                &format!("params.mechanisms[{i}].family"),
                &m.family,
                m.delta_share,
            )?,
            calibration: m.calibration.unwrap_or(Calibration::Exact),
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

    /// The SPEC of one query of `fam` at parameter θ.
    fn spec(&self, fam: Family, theta: f64, pt: Point) -> Result<MechanismSpec, String> {
        let s = self.sensitivity;
        let k = pt.k as u64;
        let text = match fam {
            Family::Laplace => format!("laplace:scale={},sensitivity={s},count={k}", theta * s),
            Family::Gaussian => format!("gaussian:sigma={},sensitivity={s},count={k}", theta * s),
            Family::TruncatedLaplace { share } => format!(
                "truncated-laplace:epsilon={},delta={},sensitivity={s},count={k}",
                1.0 / theta,
                share * pt.delta / pt.k
            ),
            Family::Bounded(BoundedFamily::Power { alpha }) => format!(
                "bounded:family=power,alpha={alpha},radius={},sensitivity={s},count={k}",
                theta * s
            ),
            Family::Bounded(BoundedFamily::Exp) => format!(
                "bounded:family=exp,radius={},sensitivity={s},count={k}",
                theta * s
            ),
        };
        text.parse::<MechanismSpec>().map_err(|e| e.0)
    }

    /// Whether θ is certified sufficient (`Some(true)`), certified insufficient
    /// (`Some(false)`) or undecided at this accuracy (`None`), with `ln δ`'s estimate.
    fn verdict(
        &self,
        fam: Family,
        theta: f64,
        pt: Point,
        delta_accuracy: f64,
    ) -> Result<(Option<bool>, f64), String> {
        let spec = self.spec(fam, theta, pt)?;
        let acc = accountant(&[spec])
            .map_err(|e| e.0)?
            .with_accuracy(delta_accuracy)
            .map_err(|e| e.to_string())?;
        let a = acc.delta(pt.eps).map_err(|e| e.to_string())?;
        let v = if a.upper <= pt.delta {
            Some(true)
        } else if a.lower > pt.delta {
            Some(false)
        } else {
            None
        };
        Ok((v, 0.5 * (a.ln_lower + a.ln_upper)))
    }

    /// `[θ_lo, θ_hi]` with `θ_hi/θ_lo − 1 ≤ accuracy`: θ_hi certified sufficient, θ_lo
    /// not (certified insufficient, or undecided within the accountant's resolution: δ to
    /// the same relative accuracy, which moves θ far less since `ln δ` falls steeply in
    /// `ln θ`). Each δ is read as the Gaussian μ with the same δ(ε) (docs/accountant.md
    /// §10): in `(ln θ, ln μ)` a composition near its central limit is a line of slope −1,
    /// so one step from the first point lands close to the answer, and secants inside the
    /// bracket converge in a few evaluations; each evaluation is placed half a tolerance
    /// across the secant's root, so that it closes the bracket when the root is right.
    /// Where no μ exists (δ outside `f64`), a secant on `ln δ`; bisection when a bracket
    /// fails to halve in two evaluations.
    fn exact(
        &self,
        fam: Family,
        guess: f64,
        range: (f64, f64),
        pt: Point,
    ) -> Result<(f64, f64), String> {
        let target = pt.delta.ln();
        // ln μ of the Gaussian whose δ(ε) is e^{ln δ}, minus that of the target δ.
        let ln_mu = |ln_d: f64| -> f64 {
            if !(ln_d > -745.0 && ln_d < -1e-9) {
                return f64::NAN;
            }
            analytic_sigma(pt.eps, ln_d.exp(), 1.0).map_or(f64::NAN, |s| -s.ln())
        };
        let ln_mu_star = ln_mu(target);
        let tol = (1.0 + self.accuracy).ln();
        let delta_accuracy = self.delta_accuracy(ln_mu_star, pt, tol);
        let (umin, umax) = (range.0.ln(), range.1.ln());
        let mut u = guess.ln().clamp(umin, umax);
        // (u, ln δ − ln target, ln μ − ln μ*) of the ends: lo not sufficient, hi sufficient.
        let mut lo: Option<(f64, f64, f64)> = None;
        let mut hi: Option<(f64, f64, f64)> = None;
        // Bracket widths since the last bisection.
        let mut widths: Vec<f64> = Vec::new();
        // Outward steps while one end is missing: the μ-line's prediction (pushed half a
        // tolerance across), at least `reach`, which doubles after a step that fails to
        // cross.
        let mut reach = 0.0f64;
        for _ in 0..60 {
            // A composition the accountant cannot bound within its budget (tiny noise:
            // heavy tails) is not certified sufficient: it counts as too little noise.
            let (v, ln_d) = match self.verdict(fam, u.exp(), pt, delta_accuracy) {
                Ok(r) => r,
                Err(_) if hi.is_some_and(|h| h.0 > u) => (None, f64::NAN),
                Err(e) => return Err(e),
            };
            let sufficient = v == Some(true);
            let here = (u, ln_d - target, ln_mu(ln_d) - ln_mu_star);
            if sufficient {
                hi = Some(here);
            } else {
                lo = Some(here);
            }
            match (lo, hi) {
                (Some(l), Some(h)) => {
                    let w = h.0 - l.0;
                    if w <= tol {
                        return Ok((l.0.exp(), h.0.exp()));
                    }
                    // Bisection when the bracket failed to halve over two evaluations.
                    let stalled = widths.len() >= 2 && w > 0.5 * widths[widths.len() - 2];
                    widths.push(w);
                    let secant_of = |a: f64, b: f64| {
                        if a.is_finite() && b.is_finite() && a > b {
                            l.0 + w * a / (a - b)
                        } else {
                            f64::NAN
                        }
                    };
                    let mut root = secant_of(l.2, h.2);
                    if root.is_nan() {
                        root = secant_of(l.1, h.1);
                    }
                    u = if stalled || !(root > l.0 && root < h.0) {
                        widths.clear();
                        l.0 + 0.5 * w
                    } else {
                        // Half a tolerance across the predicted root, away from the end
                        // it is nearer: if the prediction holds, that end and the new
                        // point bracket the root within the tolerance.
                        let p = if h.0 - root < root - l.0 {
                            root - 0.5 * tol
                        } else {
                            root + 0.5 * tol
                        };
                        p.clamp(l.0 + 0.05 * w, h.0 - 0.05 * w)
                    };
                }
                (None, Some(h)) => {
                    if h.0 <= umin {
                        return Err(format!(
                            "the least noise is below the supported range (parameter {:e})",
                            umin.exp()
                        ));
                    }
                    let step = outward(h.2, tol, reach);
                    u = (h.0 - step).max(umin);
                    reach = 2.0 * step;
                }
                (Some(l), None) => {
                    if l.0 >= umax {
                        return Err(format!(
                            "the noise needed is above the supported range (parameter {:e})",
                            umax.exp()
                        ));
                    }
                    let step = outward(l.2, tol, reach);
                    u = (l.0 + step).min(umax);
                    reach = 2.0 * step;
                }
                (None, None) => unreachable!("every verdict sets an end"),
            }
        }
        Err("the calibration search did not converge".into())
    }

    /// Refuses, before computing, a grid whose exact searches would exceed the run-time
    /// budget: about three accountant verdicts a search (docs/accountant.md §10), each
    /// at the requested accuracy or coarser.
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
                // The kind alone sets the cost: any θ in range will do.
                let spec = self
                    .spec(m.family, 100.0, pt)
                    .map_err(|e| KeyError::new("params.mechanisms", e))?;
                searches += 1;
                estimate += 3.0 * crate::ranges::accountant_seconds(&spec, self.accuracy);
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

    /// The relative accuracy of δ each verdict asks the accountant for: the search's
    /// tolerance `tol` in `ln θ` maps to `s·tol` in `ln δ`, `s = |d ln δ/d ln θ|`, which
    /// the Gaussian with the target's μ* gives (`s = μ φ(μ/2 − ε/μ)/δ`, the derivative of
    /// its profile, docs/accountant.md §10). A quarter of that leaves θ undecided over at
    /// most a quarter of the tolerance; never stricter than the requested accuracy (the
    /// bracket of θ_hi stays certified at any δ accuracy: only its width depends on it).
    fn delta_accuracy(&self, ln_mu_star: f64, pt: Point, tol: f64) -> f64 {
        let mu = ln_mu_star.exp();
        let slope = mu * densities::normal::pdf(0.5 * mu - pt.eps / mu) / pt.delta;
        let a = 0.25 * tol * slope;
        if a.is_finite() {
            // A requested accuracy above 0.25 is itself the floor (a clamp with its ends
            // crossed would panic).
            a.min(0.25).max(self.accuracy)
        } else {
            self.accuracy
        }
    }

    /// The calibrated parameter bracket `(θ_lo, θ_hi)` of one mechanism at `pt`.
    fn calibrate(&self, m: &Mechanism, pt: Point) -> Result<(f64, f64), String> {
        let (k, eps, delta) = (pt.k, pt.eps, pt.delta);
        // σ of one query at unit sensitivity with the whole budget (the Gaussian's exact
        // calibration; the others' central-limit guess is √k times it).
        let sigma = analytic_sigma(eps, delta, k.sqrt()).map_err(|e| e.to_string())?;
        match (m.family, m.calibration) {
            (Family::Gaussian, _) => Ok((sigma, sigma)),
            (Family::Laplace, Calibration::Classical) => Ok((k / eps, k / eps)),
            (Family::TruncatedLaplace { .. }, Calibration::Classical) => Ok((k / eps, k / eps)),
            (Family::Bounded(f), Calibration::Classical) => {
                let r = self.certified(f, pt)?;
                Ok((r, r))
            }
            (Family::Laplace, Calibration::Exact) => {
                // Pure DP (b = k/ε) always suffices.
                let guess = (k / eps).min(sigma);
                self.exact(m.family, guess, (1e-4, 1e7), pt)
            }
            (Family::TruncatedLaplace { .. }, Calibration::Exact) => {
                // θ = 1/ε₀; ε₀ = ε/k always suffices with δ₀ ≤ δ/k.
                let guess = (k / eps).min(sigma.max(1.0 / eps));
                self.exact(m.family, guess, (1.0 / 700.0, 1e7), pt)
            }
            (Family::Bounded(f), Calibration::Exact) => {
                let cert = self.certified(f, pt)?;
                // The exact least radius is 55–90 % of the certified one (fig19).
                self.exact(m.family, 0.75 * cert, (2.0, 1e11), pt)
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
        })
    }
}

/// Length of an outward step in `ln θ` from an end whose `ln μ − ln μ*` is `h`: the
/// slope −1 line's distance `|h|` plus half a tolerance, at least `reach` (0.15 when no μ
/// is known), at most a factor e³.
fn outward(h: f64, tol: f64, reach: f64) -> f64 {
    let predicted = if h.is_finite() {
        h.abs() + 0.5 * tol
    } else {
        0.15
    };
    predicted.max(reach).min(3.0)
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
        // Points are independent: calibrate them on all cores (the accountant's own
        // parallel parts share the same pool).
        let points: Vec<(usize, f64)> = (0..self.mechanisms.len())
            .flat_map(|j| self.xs.iter().map(move |&x| (j, x)))
            .collect();
        let found: Vec<(usize, f64, (f64, f64))> = points
            .par_iter()
            .map(|&(j, x)| {
                let m = &self.mechanisms[j];
                // A family that cannot be calibrated at a grid value (no certified radius,
                // noise outside the supported range) is the manifest's: named by key.
                let th = self.calibrate(m, self.point(x)).map_err(|e| {
                    format!("params.mechanisms[{j}].family: {} at x = {x}: {e}", m.key)
                })?;
                tick();
                Ok((j, x, th))
            })
            .collect::<Result<_, String>>()?;
        for &metric in &self.metrics {
            for &(j, x, (lo, hi)) in &found {
                let m = &self.mechanisms[j];
                let pt = self.point(x);
                let f = |t: f64| {
                    self.numbers(m, t, pt).map(|n| metric.of(&n)).map_err(|e| {
                        format!("params.mechanisms[{j}].family: {} at x = {x}: {e}", m.key)
                    })
                };
                let (ylo, yhi) = (f(lo)?, f(hi)?);
                table.push(Row {
                    panel: metric.key().into(),
                    series: m.key.clone(),
                    x,
                    y: yhi,
                    extra: vec![ylo, yhi, pt.k, pt.eps, pt.delta, hi],
                });
            }
        }
        Ok(table)
    }
}
