//! The certified privacy-loss accountant (docs/accountant.md) for Python: `account` takes
//! SPEC strings exactly as `dpw account --mechanism` does and runs the CLI's own request
//! type (`dpw::account::AccountRequest`); `Mechanism` and `Composition` build the same
//! SPECs from keyword arguments, so both faces share one vocabulary, one parser and one
//! set of error messages.

use crate::broadcast::{count, number, optional_number};
use crate::{argument_message, value_error};
use composition::accountant::input::spec::{kind_keys, Neighbours, Pipeline, Sampling};
use composition::accountant::query::target::SOLVABLE_KEYS;
use composition::accountant::{MechanismKind, MechanismSpec, NoisyMaxNoise, Work, MAX_COUNT};
use densities::bounded::BoundedFamily;
use dpw::account::{AccountRequest, AccountResult, Query};
use pyo3::prelude::*;
use pyo3::types::PyString;

/// Shortest round-trip form of a number, as the SPEC parser reads it back exactly.
fn num(v: f64) -> String {
    format!("{v:?}")
}

/// The canonical SPEC text of a mechanism with `count` uses.
fn spec_text(kind: &MechanismKind, pipeline: Pipeline, sensitivity: f64, count: u64) -> String {
    let mut s = match kind {
        MechanismKind::Gaussian { sigma } => format!("gaussian:sigma={}", num(*sigma)),
        MechanismKind::GaussianMixture { sigma, components } => {
            let list = |f: &dyn Fn(&(f64, f64)) -> f64| {
                components
                    .iter()
                    .map(|c| num(f(c)))
                    .collect::<Vec<_>>()
                    .join(";")
            };
            format!(
                "gaussian-mixture:sigma={},shifts={},probs={}",
                num(*sigma),
                list(&|c| c.1),
                list(&|c| c.0)
            )
        }
        MechanismKind::Laplace { scale } => format!("laplace:scale={}", num(*scale)),
        MechanismKind::DiscreteLaplace { scale } => {
            format!("discrete-laplace:scale={}", num(*scale))
        }
        MechanismKind::DiscreteGaussian { sigma } => {
            format!("discrete-gaussian:sigma={}", num(*sigma))
        }
        MechanismKind::RandomizedResponse { epsilon } => format!("rr:epsilon={}", num(*epsilon)),
        MechanismKind::BoundedRange { epsilon } => format!("exponential:epsilon={}", num(*epsilon)),
        MechanismKind::NoisyMax {
            noise: NoisyMaxNoise::Exponential,
            epsilon,
        } => format!("permute-and-flip:epsilon={}", num(*epsilon)),
        MechanismKind::NoisyMax {
            noise: NoisyMaxNoise::Laplace,
            epsilon,
        } => format!("report-noisy-max:epsilon={},noise=laplace", num(*epsilon)),
        MechanismKind::TruncatedLaplace { epsilon, delta } => format!(
            "truncated-laplace:epsilon={},delta={}",
            num(*epsilon),
            num(*delta)
        ),
        MechanismKind::ApproxDp { epsilon, delta } => {
            format!("approx-dp:epsilon={},delta={}", num(*epsilon), num(*delta))
        }
        MechanismKind::Bounded { family, radius } => match family {
            BoundedFamily::Power { alpha } => format!(
                "bounded:family=power,alpha={},radius={}",
                num(*alpha),
                num(*radius)
            ),
            BoundedFamily::Exp => format!("bounded:family=exp,radius={}", num(*radius)),
        },
        MechanismKind::SubsampledGaussian { sigma, q } => {
            format!("subsampled-gaussian:sigma={},q={}", num(*sigma), num(*q))
        }
        MechanismKind::SubsampledLaplace { scale, q } => {
            format!("subsampled-laplace:scale={},q={}", num(*scale), num(*q))
        }
        // A schedule's internal upper law, never parsed and so never held by a Python
        // mechanism; described as the schedule's note describes it.
        MechanismKind::SubsampledGaussianMix {
            sigma,
            sigma2,
            weight,
            q,
            ..
        } => format!(
            "subsampled-gaussian:sigma={} (weight {}) or {},q={}",
            num(*sigma),
            num(*weight),
            num(*sigma2),
            num(*q)
        ),
    };
    // The pipeline keys where they differ from the defaults (docs/accountant.md §2.7).
    let sampler = match pipeline.sampling {
        Sampling::Poisson => None,
        Sampling::Fixed { batch, n } => Some(format!(",sampling=fixed,batch={batch},n={n}")),
        Sampling::Shuffle { batch, n } => Some(format!(",sampling=shuffle,batch={batch},n={n}")),
        Sampling::Allocation { steps } => Some(format!(",sampling=allocation,steps={steps}")),
    };
    if let Some(keys) = sampler {
        if let Some(i) = s.find(",q=") {
            s.truncate(i);
        }
        s.push_str(&keys);
    }
    if pipeline.neighbours == Neighbours::ReplaceOne {
        s.push_str(",neighbours=replace-one");
    }
    if pipeline.group > 1 {
        s.push_str(&format!(",group={}", pipeline.group));
    }
    if sensitivity != 1.0 {
        s.push_str(&format!(",sensitivity={}", num(sensitivity)));
    }
    if count != 1 {
        s.push_str(&format!(",count={count}"));
    }
    s
}

fn parse(text: &str) -> PyResult<MechanismSpec> {
    text.parse::<MechanismSpec>().map_err(|e| value_error(e.0))
}

/// A certified bracket `lower <= exact <= upper` of epsilon(delta) or delta(epsilon).
#[pyclass(frozen, get_all, module = "dpw")]
#[derive(Clone)]
pub struct Bracket {
    /// "epsilon" (the answer to a given delta) or "delta" (to a given epsilon).
    quantity: &'static str,
    /// The delta or epsilon that was given.
    given: f64,
    /// Certified lower bound.
    lower: f64,
    /// Midpoint of the bracket (geometric for delta); within half the width of the truth.
    estimate: f64,
    /// Certified upper bound: the value to report as a privacy guarantee.
    upper: f64,
    /// ln(lower); for delta it keeps its digits where delta underflows a double.
    ln_lower: f64,
    /// ln(upper).
    ln_upper: f64,
    /// Grid step of the final discretisation of the privacy loss.
    step: f64,
    /// Whether the requested relative accuracy was reached (the bracket is certified
    /// either way).
    accuracy_met: bool,
    /// Wall-clock seconds of the computation.
    seconds: f64,
}

#[pymethods]
impl Bracket {
    fn __repr__(&self) -> String {
        format!(
            "Bracket(quantity='{}', lower={:?}, estimate={:?}, upper={:?})",
            self.quantity, self.lower, self.estimate, self.upper
        )
    }
}

/// Runs the CLI's request on `specs`; the errors are the CLI's one-line messages with the
/// flag written as the Python argument.
fn run(
    py: Python<'_>,
    specs: Vec<String>,
    delta: Option<f64>,
    epsilon: Option<f64>,
    accuracy: Option<f64>,
) -> PyResult<Bracket> {
    run_with(py, specs, delta, epsilon, None, accuracy, None, None)
}

/// As [`run`] with a false-positive rate (`at_fpr`: the largest power of a membership
/// test there, as `--at-fpr`) and a work budget (`None`: the CLI's default).
#[allow(clippy::too_many_arguments)]
fn run_with(
    py: Python<'_>,
    specs: Vec<String>,
    delta: Option<f64>,
    epsilon: Option<f64>,
    at_fpr: Option<f64>,
    accuracy: Option<f64>,
    max_work: Option<f64>,
    schedule: Option<String>,
) -> PyResult<Bracket> {
    let given = [delta, epsilon, at_fpr]
        .iter()
        .filter(|v| v.is_some())
        .count();
    if given != 1 {
        return Err(value_error(
            "delta/epsilon/at_fpr: give exactly one of delta=D (to get epsilon), epsilon=E (to \
             get delta) or at_fpr=A (to get the largest true-positive rate of a membership \
             test at false-positive rate A)",
        ));
    }
    let req = match at_fpr {
        Some(a) => AccountRequest::at_fpr(&specs, schedule.as_deref(), a, accuracy),
        None => AccountRequest::new(&specs, schedule.as_deref(), delta, epsilon, accuracy),
    }
    .and_then(|r| r.with_max_work(max_work))
    .map_err(|(key, msg)| {
        let key = match key.as_str() {
            "--delta/--epsilon" => "delta/epsilon".to_string(),
            "--max-work" => "max_work".to_string(),
            "--at-fpr" => "at_fpr".to_string(),
            k if k.starts_with("--schedule") => k.replacen("--schedule", "schedule:", 1),
            k => argument_message(k),
        };
        value_error(format!("{key}: {msg}"))
    })?;
    // Ctrl-C cancels the computation (it stops at its next FFT window).
    let work = Work::new(Some(req.max_work as u64));
    let result: Result<AccountResult, String> =
        crate::interruptible(py, &work, || req.run_on(&work))?;
    // The CLI's message names its flag (`--delta: …`): the Python argument instead.
    let r = result.map_err(|m| value_error(argument_message(&m).replace("--", "")))?;
    let a = r.answer;
    let (quantity, given) = match req.query {
        Query::Delta(d) => ("epsilon", d),
        Query::Epsilon(e) => ("delta", e),
        Query::AtFpr(a) => ("tpr", a),
    };
    Ok(Bracket {
        quantity,
        given,
        lower: a.lower,
        estimate: a.estimate,
        upper: a.upper,
        ln_lower: a.ln_lower,
        ln_upper: a.ln_upper,
        step: a.step,
        accuracy_met: a.accuracy_met,
        seconds: r.seconds,
    })
}

/// A mechanism and how many times it is used, in the SPEC language of `dpw account`.
///
/// Build one with a constructor (`Mechanism.gaussian(sigma=2)`) or from a SPEC string
/// (`Mechanism("gaussian:sigma=2,count=1000")`); `m.compose(k)` uses it k times as often;
/// `a + b` composes different mechanisms. `m.epsilon(delta=...)` and `m.delta(epsilon=...)`
/// give certified brackets.
#[pyclass(frozen, eq, module = "dpw")]
#[derive(Clone)]
pub struct Mechanism {
    spec: MechanismSpec,
}

/// Same kind, parameters, pipeline, sensitivity and count (however the SPEC was written).
fn same(a: &MechanismSpec, b: &MechanismSpec) -> bool {
    a.kind == b.kind
        && a.pipeline == b.pipeline
        && a.sensitivity == b.sensitivity
        && a.count == b.count
}

impl PartialEq for Mechanism {
    fn eq(&self, other: &Self) -> bool {
        same(&self.spec, &other.spec)
    }
}

impl Mechanism {
    fn build(
        kind: MechanismKind,
        pipeline: Pipeline,
        sensitivity: f64,
        count: u64,
    ) -> PyResult<Self> {
        // Through the parser: the same ranges and messages as `dpw account`.
        Ok(Self {
            spec: parse(&spec_text(&kind, pipeline, sensitivity, count))?,
        })
    }

    fn one(kind: MechanismKind, sensitivity: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let s = optional_number("sensitivity", sensitivity)?.unwrap_or(1.0);
        if !(s.is_finite() && s > 0.0) {
            return Err(value_error(format!(
                "sensitivity = {s} is outside the allowed range (0, 1e300]"
            )));
        }
        Self::build(kind, Pipeline::default(), s, 1)
    }
}

fn finite(name: &str, arg: &Bound<'_, PyAny>) -> PyResult<f64> {
    let v = number(name, arg)?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(value_error(format!("{name} = {v} is not a finite number")))
    }
}

#[pymethods]
impl Mechanism {
    /// Mechanism(spec): parse a SPEC such as "gaussian:sigma=2,count=1000".
    #[new]
    fn new(spec: &Bound<'_, PyAny>) -> PyResult<Self> {
        let s = spec
            .cast::<PyString>()
            .map_err(|_| value_error("spec: expected a string KIND:key=value,..."))?;
        Ok(Self {
            spec: parse(&s.to_cow()?)?,
        })
    }

    /// Gaussian noise of standard deviation sigma (docs/accountant.md §2.1).
    #[staticmethod]
    #[pyo3(signature = (sigma, *, sensitivity=None), text_signature = "(sigma, *, sensitivity=1.0)")]
    fn gaussian(
        sigma: &Bound<'_, PyAny>,
        sensitivity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let sigma = finite("sigma", sigma)?;
        Self::one(MechanismKind::Gaussian { sigma }, sensitivity)
    }

    /// Gaussian noise of standard deviation sigma on a query whose sensitivity is
    /// random: shifts[i] (times sensitivity) with probability probs[i] (§2.16;
    /// dp_accounting's mixture of Gaussians; shifts [0, 1] with probs [1 - q, q] is
    /// Poisson subsampling at rate q). Add/remove neighbours, both directions.
    #[staticmethod]
    #[pyo3(
        signature = (sigma, shifts, probs, *, sensitivity=None),
        text_signature = "(sigma, shifts, probs, *, sensitivity=1.0)"
    )]
    fn gaussian_mixture(
        sigma: &Bound<'_, PyAny>,
        shifts: Vec<f64>,
        probs: Vec<f64>,
        sensitivity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let sigma = finite("sigma", sigma)?;
        if shifts.len() != probs.len() {
            return Err(value_error(format!(
                "shifts and probs must list the same number of components (got {} and {})",
                shifts.len(),
                probs.len()
            )));
        }
        let components = probs.into_iter().zip(shifts).collect();
        Self::one(
            MechanismKind::GaussianMixture { sigma, components },
            sensitivity,
        )
    }

    /// Laplace noise of scale b (§2.2).
    #[staticmethod]
    #[pyo3(signature = (scale, *, sensitivity=None), text_signature = "(scale, *, sensitivity=1.0)")]
    fn laplace(scale: &Bound<'_, PyAny>, sensitivity: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let scale = finite("scale", scale)?;
        Self::one(MechanismKind::Laplace { scale }, sensitivity)
    }

    /// Discrete Laplace noise P(x) proportional to exp(-|x|/scale) on the integers, at an
    /// integer sensitivity (§2.12).
    #[staticmethod]
    #[pyo3(signature = (scale, *, sensitivity=None), text_signature = "(scale, *, sensitivity=1)")]
    fn discrete_laplace(
        scale: &Bound<'_, PyAny>,
        sensitivity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let scale = finite("scale", scale)?;
        Self::one(MechanismKind::DiscreteLaplace { scale }, sensitivity)
    }

    /// Discrete Gaussian noise P(x) proportional to exp(-x^2/(2 sigma^2)) on the integers,
    /// at an integer sensitivity (§2.13).
    #[staticmethod]
    #[pyo3(signature = (sigma, *, sensitivity=None), text_signature = "(sigma, *, sensitivity=1)")]
    fn discrete_gaussian(
        sigma: &Bound<'_, PyAny>,
        sensitivity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let sigma = finite("sigma", sigma)?;
        Self::one(MechanismKind::DiscreteGaussian { sigma }, sensitivity)
    }

    /// Binary randomized response with parameter epsilon (§2.4).
    #[staticmethod]
    #[pyo3(signature = (epsilon, *, sensitivity=None), text_signature = "(epsilon, *, sensitivity=1.0)")]
    fn randomized_response(
        epsilon: &Bound<'_, PyAny>,
        sensitivity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let epsilon = finite("epsilon", epsilon)?;
        Self::one(MechanismKind::RandomizedResponse { epsilon }, sensitivity)
    }

    /// The truncated Laplacian calibrated to (epsilon, delta) (§2.3).
    #[staticmethod]
    #[pyo3(signature = (epsilon, delta, *, sensitivity=None), text_signature = "(epsilon, delta, *, sensitivity=1.0)")]
    fn truncated_laplace(
        epsilon: &Bound<'_, PyAny>,
        delta: &Bound<'_, PyAny>,
        sensitivity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let epsilon = finite("epsilon", epsilon)?;
        let delta = finite("delta", delta)?;
        Self::one(
            MechanismKind::TruncatedLaplace { epsilon, delta },
            sensitivity,
        )
    }

    /// The exponential mechanism, or any epsilon-bounded-range mechanism (§2.14): certified
    /// above by a pair dominating the whole class under adaptive composition, below by an
    /// exponential mechanism on two candidates; the output names the gap when it is wider
    /// than the accuracy.
    #[staticmethod]
    #[pyo3(signature = (epsilon), text_signature = "(epsilon)")]
    fn exponential(epsilon: &Bound<'_, PyAny>) -> PyResult<Self> {
        let epsilon = finite("epsilon", epsilon)?;
        Self::one(MechanismKind::BoundedRange { epsilon }, None)
    }

    /// Permute-and-flip (report-noisy-max with exponential noise of scale 2/epsilon) on
    /// utilities of sensitivity 1 (§2.15): certified above by randomized response at
    /// epsilon (every instance is epsilon-DP), below by the mechanism on two candidates;
    /// the output names the gap when it is wider than the accuracy.
    #[staticmethod]
    #[pyo3(signature = (epsilon), text_signature = "(epsilon)")]
    fn permute_and_flip(epsilon: &Bound<'_, PyAny>) -> PyResult<Self> {
        let epsilon = finite("epsilon", epsilon)?;
        Self::one(
            MechanismKind::NoisyMax {
                noise: NoisyMaxNoise::Exponential,
                epsilon,
            },
            None,
        )
    }

    /// Report-noisy-max on utilities of sensitivity 1 with noise of scale 2/epsilon
    /// (§2.15): `noise` is "gumbel" (the exponential mechanism), "exponential"
    /// (permute-and-flip) or "laplace" (randomized response at epsilon above, two
    /// candidates below).
    #[staticmethod]
    #[pyo3(signature = (epsilon, noise), text_signature = "(epsilon, noise)")]
    fn report_noisy_max(epsilon: &Bound<'_, PyAny>, noise: &str) -> PyResult<Self> {
        let epsilon = finite("epsilon", epsilon)?;
        let kind = match noise {
            "gumbel" => MechanismKind::BoundedRange { epsilon },
            "exponential" => MechanismKind::NoisyMax {
                noise: NoisyMaxNoise::Exponential,
                epsilon,
            },
            "laplace" => MechanismKind::NoisyMax {
                noise: NoisyMaxNoise::Laplace,
                epsilon,
            },
            other => {
                return Err(value_error(format!(
                    "noise = '{other}' is not one of: gumbel, exponential, laplace"
                )))
            }
        };
        Self::one(kind, None)
    }

    /// Any (epsilon, delta)-DP mechanism, by its worst-case pair (Kairouz, Oh & Viswanath;
    /// §2.11): the certified answer for a black box known only by its guarantee, valid
    /// however the mechanisms of a composition are chosen. No sensitivity: the guarantee
    /// is the mechanism's own.
    #[staticmethod]
    #[pyo3(signature = (epsilon, delta), text_signature = "(epsilon, delta)")]
    fn approx_dp(epsilon: &Bound<'_, PyAny>, delta: &Bound<'_, PyAny>) -> PyResult<Self> {
        let epsilon = finite("epsilon", epsilon)?;
        let delta = finite("delta", delta)?;
        Self::one(MechanismKind::ApproxDp { epsilon, delta }, None)
    }

    /// Bounded noise radius * X, X with density proportional to e^{-f} on (-1, 1), f of
    /// family "power" (|x|^alpha-type, alpha defaults to 2) or "exp" (§2.5).
    #[staticmethod]
    #[pyo3(signature = (radius, *, family="power", alpha=None, sensitivity=None), text_signature = "(radius, *, family=\"power\", alpha=None, sensitivity=1.0)")]
    fn bounded(
        radius: &Bound<'_, PyAny>,
        family: &str,
        alpha: Option<&Bound<'_, PyAny>>,
        sensitivity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let radius = finite("radius", radius)?;
        let family = bounded_family(family, alpha)?;
        Self::one(MechanismKind::Bounded { family, radius }, sensitivity)
    }

    /// Gaussian noise on a Poisson sample of rate q (DP-SGD's step), both directions of
    /// the loss (§2.6). The pipeline keys of the SPEC language (§2.7–§2.9) as keywords:
    /// `batch` and `n` (for Poisson sampling in place of q = batch/n), `sampling`
    /// ("poisson", "fixed", "shuffle", "allocation" with `steps`), `neighbours`
    /// ("add-remove", "replace-one") and `group`.
    #[staticmethod]
    #[pyo3(
        signature = (sigma, q=None, *, sensitivity=None, batch=None, n=None, sampling=None, neighbours=None, group=None, steps=None),
        text_signature = "(sigma, q=None, *, sensitivity=1.0, batch=None, n=None, sampling='poisson', neighbours='add-remove', group=1, steps=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn subsampled_gaussian(
        sigma: &Bound<'_, PyAny>,
        q: Option<&Bound<'_, PyAny>>,
        sensitivity: Option<&Bound<'_, PyAny>>,
        batch: Option<&Bound<'_, PyAny>>,
        n: Option<&Bound<'_, PyAny>>,
        sampling: Option<String>,
        neighbours: Option<String>,
        group: Option<&Bound<'_, PyAny>>,
        steps: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let sigma = finite("sigma", sigma)?;
        let mut text = format!("subsampled-gaussian:sigma={}", num(sigma));
        if let Some(q) = q.filter(|a| !a.is_none()) {
            text.push_str(&format!(",q={}", num(finite("q", q)?)));
        }
        let int = |name: &str, a: Option<&Bound<'_, PyAny>>, max: f64| -> PyResult<Option<u64>> {
            match a.filter(|a| !a.is_none()) {
                Some(a) => self::count(name, a, max).map(Some),
                None => Ok(None),
            }
        };
        for (name, v) in [
            ("batch", int("batch", batch, 1e15)?),
            ("n", int("n", n, 1e15)?),
            ("steps", int("steps", steps, 1e6)?),
            ("group", int("group", group, 1e3)?),
        ] {
            if let Some(v) = v {
                text.push_str(&format!(",{name}={v}"));
            }
        }
        for (name, v) in [("sampling", sampling), ("neighbours", neighbours)] {
            if let Some(v) = v {
                if v.contains([',', '=', ':']) {
                    return Err(value_error(format!("{name} = '{v}' is not a name")));
                }
                text.push_str(&format!(",{name}={v}"));
            }
        }
        let sens = optional_number("sensitivity", sensitivity)?.unwrap_or(1.0);
        if sens != 1.0 {
            text.push_str(&format!(",sensitivity={}", num(sens)));
        }
        Ok(Self {
            spec: parse(&text)?,
        })
    }

    /// Laplace noise on a Poisson sample of rate q, both directions of the loss (§2.6).
    #[staticmethod]
    #[pyo3(signature = (scale, q, *, sensitivity=None), text_signature = "(scale, q, *, sensitivity=1.0)")]
    fn subsampled_laplace(
        scale: &Bound<'_, PyAny>,
        q: &Bound<'_, PyAny>,
        sensitivity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let scale = finite("scale", scale)?;
        let q = finite("q", q)?;
        Self::one(MechanismKind::SubsampledLaplace { scale, q }, sensitivity)
    }

    /// The same mechanism used `count` times as often (an integer; the total at most 1e10).
    fn compose(&self, count: &Bound<'_, PyAny>) -> PyResult<Self> {
        let c = self::count("count", count, MAX_COUNT as f64)?;
        let total = self.spec.count.checked_mul(c).filter(|t| *t <= MAX_COUNT);
        let Some(total) = total else {
            return Err(value_error(format!(
                "count: {} uses times {c} exceeds the allowed 1e10",
                self.spec.count
            )));
        };
        Self::build(
            self.spec.kind.clone(),
            self.spec.pipeline,
            self.spec.sensitivity,
            total,
        )
    }

    /// Certified bracket of epsilon at this delta (0 < delta < 1); `accuracy` is the
    /// relative width asked of the bracket, in [1e-8, 0.5] (default 1e-4).
    #[pyo3(signature = (delta, *, accuracy=None))]
    fn epsilon(
        &self,
        py: Python<'_>,
        delta: &Bound<'_, PyAny>,
        accuracy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bracket> {
        let d = number("delta", delta)?;
        let acc = optional_number("accuracy", accuracy)?;
        run(py, vec![self.spec.text.clone()], Some(d), None, acc)
    }

    /// Certified bracket of delta at this epsilon (0 <= epsilon <= 1e12); `accuracy` is
    /// the relative width asked of the bracket, in [1e-8, 0.5] (default 1e-3).
    #[pyo3(signature = (epsilon, *, accuracy=None))]
    fn delta(
        &self,
        py: Python<'_>,
        epsilon: &Bound<'_, PyAny>,
        accuracy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bracket> {
        let e = number("epsilon", epsilon)?;
        let acc = optional_number("accuracy", accuracy)?;
        run(py, vec![self.spec.text.clone()], None, Some(e), acc)
    }

    /// The certified value of one parameter (`unknown`: "sigma", "scale", "radius",
    /// "epsilon", "q", "count" or "sensitivity") that meets the targets, with every other
    /// value as in this mechanism (the unknown's own value is ignored): `dpw.solve` on
    /// this SPEC with `unknown=?`. Targets: `epsilon` and `delta`, and/or `max_tpr` and
    /// `at_fpr`. Returns a Solution.
    #[pyo3(signature = (unknown, *, epsilon=None, delta=None, max_tpr=None, at_fpr=None, accuracy=None, max_work=None))]
    #[allow(clippy::too_many_arguments)]
    fn solve(
        &self,
        py: Python<'_>,
        unknown: &Bound<'_, PyAny>,
        epsilon: Option<&Bound<'_, PyAny>>,
        delta: Option<&Bound<'_, PyAny>>,
        max_tpr: Option<&Bound<'_, PyAny>>,
        at_fpr: Option<&Bound<'_, PyAny>>,
        accuracy: Option<&Bound<'_, PyAny>>,
        max_work: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<crate::solve::Solution> {
        let key = unknown_key(unknown)?;
        let text = with_unknown(&self.spec, &key)?;
        crate::solve::run(
            py,
            vec![text],
            optional_number("epsilon", epsilon)?,
            optional_number("delta", delta)?,
            optional_number("max_tpr", max_tpr)?,
            optional_number("at_fpr", at_fpr)?,
            optional_number("accuracy", accuracy)?,
            optional_number("max_work", max_work)?,
        )
    }

    /// The SPEC text, as `dpw account --mechanism` takes it.
    #[getter]
    fn spec(&self) -> String {
        self.spec.text.clone()
    }

    /// The kind, as written in a SPEC ("gaussian", "subsampled-gaussian", ...).
    #[getter]
    fn kind(&self) -> &'static str {
        self.spec.kind_name()
    }

    /// How many times the mechanism is used.
    #[getter]
    fn count(&self) -> u64 {
        self.spec.count
    }

    /// The sensitivity the mechanism is applied at.
    #[getter]
    fn sensitivity(&self) -> f64 {
        self.spec.sensitivity
    }

    fn __add__(&self, other: &Bound<'_, PyAny>) -> PyResult<Composition> {
        let mut parts = vec![self.spec.clone()];
        parts.extend(parts_of(other)?);
        Ok(Composition { parts })
    }

    fn __repr__(&self) -> String {
        format!("Mechanism('{}')", self.spec.text)
    }

    fn __str__(&self) -> String {
        self.spec.text.clone()
    }
}

pub(crate) fn bounded_family(
    family: &str,
    alpha: Option<&Bound<'_, PyAny>>,
) -> PyResult<BoundedFamily> {
    let alpha = optional_number("alpha", alpha)?;
    match (family, alpha) {
        ("power", a) => {
            let a = a.unwrap_or(2.0);
            if !(a > 0.0 && a <= 100.0) {
                return Err(value_error(format!(
                    "alpha = {a} is outside the allowed range (0, 100]"
                )));
            }
            Ok(BoundedFamily::Power { alpha: a })
        }
        ("exp", None) => Ok(BoundedFamily::Exp),
        ("exp", Some(_)) => Err(value_error("alpha: applies to family='power' only")),
        (other, _) => Err(value_error(format!(
            "family = '{other}' is not one of: power, exp"
        ))),
    }
}

/// The mechanisms of a `Mechanism`, a `Composition`, or a SPEC string.
fn parts_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<MechanismSpec>> {
    if let Ok(m) = obj.cast::<Mechanism>() {
        return Ok(vec![m.get().spec.clone()]);
    }
    if let Ok(c) = obj.cast::<Composition>() {
        return Ok(c.get().parts.clone());
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(vec![parse(&s.to_cow()?)?]);
    }
    Err(value_error(format!(
        "expected a Mechanism, a Composition or a SPEC string, got {}",
        obj.get_type().name()?
    )))
}

/// A heterogeneous composition of mechanisms (each with its count): `a + b`,
/// `dpw.compose([a, b, "laplace:scale=3"])`.
#[pyclass(frozen, eq, module = "dpw")]
#[derive(Clone)]
pub struct Composition {
    parts: Vec<MechanismSpec>,
}

impl PartialEq for Composition {
    fn eq(&self, other: &Self) -> bool {
        self.parts.len() == other.parts.len()
            && self.parts.iter().zip(&other.parts).all(|(a, b)| same(a, b))
    }
}

#[pymethods]
impl Composition {
    /// The whole composition repeated `count` times (every count multiplied).
    fn compose(&self, count: &Bound<'_, PyAny>) -> PyResult<Self> {
        let c = self::count("count", count, MAX_COUNT as f64)?;
        let parts = self
            .parts
            .iter()
            .map(|p| {
                let total = p
                    .count
                    .checked_mul(c)
                    .filter(|t| *t <= MAX_COUNT)
                    .ok_or_else(|| {
                        value_error(format!(
                            "count: {} uses of {} times {c} exceeds the allowed 1e10",
                            p.count, p.text
                        ))
                    })?;
                parse(&spec_text(&p.kind, p.pipeline, p.sensitivity, total))
            })
            .collect::<PyResult<_>>()?;
        Ok(Self { parts })
    }

    /// Certified bracket of epsilon at this delta (see Mechanism.epsilon).
    #[pyo3(signature = (delta, *, accuracy=None))]
    fn epsilon(
        &self,
        py: Python<'_>,
        delta: &Bound<'_, PyAny>,
        accuracy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bracket> {
        let d = number("delta", delta)?;
        let acc = optional_number("accuracy", accuracy)?;
        run(py, self.texts(), Some(d), None, acc)
    }

    /// Certified bracket of delta at this epsilon (see Mechanism.delta).
    #[pyo3(signature = (epsilon, *, accuracy=None))]
    fn delta(
        &self,
        py: Python<'_>,
        epsilon: &Bound<'_, PyAny>,
        accuracy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bracket> {
        let e = number("epsilon", epsilon)?;
        let acc = optional_number("accuracy", accuracy)?;
        run(py, self.texts(), None, Some(e), acc)
    }

    /// The certified value of one parameter of one mechanism (see Mechanism.solve) that
    /// makes the whole composition meet the targets. `index` is the position of that
    /// mechanism in `mechanisms`; it may be left out when only one mechanism has the key
    /// `unknown` (or the composition has one mechanism).
    #[pyo3(signature = (unknown, *, index=None, epsilon=None, delta=None, max_tpr=None, at_fpr=None, accuracy=None, max_work=None))]
    #[allow(clippy::too_many_arguments)]
    fn solve(
        &self,
        py: Python<'_>,
        unknown: &Bound<'_, PyAny>,
        index: Option<&Bound<'_, PyAny>>,
        epsilon: Option<&Bound<'_, PyAny>>,
        delta: Option<&Bound<'_, PyAny>>,
        max_tpr: Option<&Bound<'_, PyAny>>,
        at_fpr: Option<&Bound<'_, PyAny>>,
        accuracy: Option<&Bound<'_, PyAny>>,
        max_work: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<crate::solve::Solution> {
        let key = unknown_key(unknown)?;
        let i = self.unknown_index(&key, index)?;
        let mut texts = self.texts();
        texts[i] = with_unknown(&self.parts[i], &key)?;
        crate::solve::run(
            py,
            texts,
            optional_number("epsilon", epsilon)?,
            optional_number("delta", delta)?,
            optional_number("max_tpr", max_tpr)?,
            optional_number("at_fpr", at_fpr)?,
            optional_number("accuracy", accuracy)?,
            optional_number("max_work", max_work)?,
        )
    }

    /// The mechanisms, in order.
    #[getter]
    fn mechanisms(&self) -> Vec<Mechanism> {
        self.parts
            .iter()
            .map(|p| Mechanism { spec: p.clone() })
            .collect()
    }

    /// Their SPEC texts (the `--mechanism` flags of `dpw account`).
    #[getter]
    fn specs(&self) -> Vec<String> {
        self.texts()
    }

    fn __len__(&self) -> usize {
        self.parts.len()
    }

    fn __add__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut parts = self.parts.clone();
        parts.extend(parts_of(other)?);
        Ok(Self { parts })
    }

    fn __radd__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut parts = parts_of(other)?;
        parts.extend(self.parts.iter().cloned());
        Ok(Self { parts })
    }

    fn __repr__(&self) -> String {
        let inner: Vec<String> = self.parts.iter().map(|p| format!("'{}'", p.text)).collect();
        format!("Composition([{}])", inner.join(", "))
    }
}

impl Composition {
    fn texts(&self) -> Vec<String> {
        self.parts.iter().map(|p| p.text.clone()).collect()
    }

    /// The position of the mechanism whose `key` is the unknown: `index` (negative counts
    /// from the end, as for a list), or the only mechanism with that key.
    fn unknown_index(&self, key: &str, index: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
        let n = self.parts.len();
        if let Some(ix) = index.filter(|a| !a.is_none()) {
            let bad = || {
                value_error(format!(
                    "index = {ix} is outside the allowed range: an integer in [-{n}, {}]",
                    n - 1
                ))
            };
            if !ix.is_instance_of::<pyo3::types::PyInt>()
                || ix.is_instance_of::<pyo3::types::PyBool>()
            {
                return Err(bad());
            }
            let i: i64 = ix.extract().map_err(|_| bad())?;
            let i = if i < 0 { i + n as i64 } else { i };
            if !(0..n as i64).contains(&i) {
                return Err(bad());
            }
            return Ok(i as usize);
        }
        if n == 1 {
            return Ok(0);
        }
        let with: Vec<usize> = (0..n).filter(|&i| has_key(&self.parts[i], key)).collect();
        match with.as_slice() {
            [i] => Ok(*i),
            [] => Err(value_error(format!(
                "unknown: no mechanism of the composition has the key '{key}'"
            ))),
            _ => Err(value_error(format!(
                "index: '{key}' is a key of mechanisms {}: give index=I, the position of \
                 the one to solve for",
                with.iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// Whether `key` is one of the spec's keys (`sensitivity` and `count` belong to every kind).
fn has_key(spec: &MechanismSpec, key: &str) -> bool {
    key == "sensitivity"
        || key == "count"
        || kind_keys(spec.kind_name()).is_some_and(|k| k.contains(&key))
}

/// The `unknown` argument: a key the solver can take.
fn unknown_key(unknown: &Bound<'_, PyAny>) -> PyResult<String> {
    let s = unknown
        .cast::<PyString>()
        .map_err(|_| value_error("unknown: expected the name of a key, e.g. \"sigma\""))?;
    let key = s.to_cow()?.trim().to_string();
    if !SOLVABLE_KEYS.contains(&key.as_str()) {
        return Err(value_error(format!(
            "unknown = '{key}' cannot be solved for (solvable: {})",
            SOLVABLE_KEYS.join(", ")
        )));
    }
    Ok(key)
}

/// The SPEC of `spec` (canonical form) with the value of `key` written `?` (appended when
/// the SPEC leaves it at its default, as sensitivity and count).
fn with_unknown(spec: &MechanismSpec, key: &str) -> PyResult<String> {
    if !has_key(spec, key) {
        let mut keys: Vec<&str> = kind_keys(spec.kind_name()).unwrap_or(&[]).to_vec();
        keys.retain(|k| *k != "family");
        keys.extend(["sensitivity", "count"]);
        return Err(value_error(format!(
            "unknown: '{key}' is not a key of {} (its keys: {})",
            spec.kind_name(),
            keys.join(", ")
        )));
    }
    let text = spec_text(&spec.kind, spec.pipeline, spec.sensitivity, spec.count);
    let (kind, rest) = text.split_once(':').unwrap_or((text.as_str(), ""));
    let mut found = false;
    let mut items: Vec<String> = rest
        .split(',')
        .map(|item| match item.split_once('=') {
            Some((k, _)) if k == key => {
                found = true;
                format!("{k}=?")
            }
            _ => item.to_string(),
        })
        .collect();
    if !found {
        items.push(format!("{key}=?"));
    }
    Ok(format!("{kind}:{}", items.join(",")))
}

/// The SPEC texts of `dpw.solve`'s list: strings as given (one holds the `?`, so they are
/// parsed by the solver, not here), Mechanisms and Compositions as their SPECs.
pub(crate) fn template_texts(mechanisms: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let expected = "mechanisms: expected a SPEC string with one value written ? or a list of \
                    SPEC strings, Mechanisms and Compositions";
    let items = mechanisms.try_iter().map_err(|_| value_error(expected))?;
    let mut texts = Vec::new();
    for (i, item) in items.enumerate() {
        let item = item?;
        if let Ok(s) = item.cast::<PyString>() {
            texts.push(s.to_cow()?.trim().to_string());
        } else if let Ok(m) = item.cast::<Mechanism>() {
            texts.push(m.get().spec.text.clone());
        } else if let Ok(c) = item.cast::<Composition>() {
            texts.extend(c.get().texts());
        } else {
            return Err(value_error(format!(
                "mechanisms[{i}]: expected a SPEC string, a Mechanism or a Composition, got {}",
                item.get_type().name()?
            )));
        }
    }
    if texts.is_empty() {
        return Err(value_error(
            "mechanisms: at least one mechanism (KIND:key=value,... with one value written ?) \
             is required",
        ));
    }
    Ok(texts)
}

/// The items of a list/tuple/iterable of mechanisms (Mechanism, Composition or SPEC).
fn collect_parts(mechanisms: &Bound<'_, PyAny>) -> PyResult<Vec<MechanismSpec>> {
    let parts = collect_parts_or_none(mechanisms)?;
    if parts.is_empty() {
        return Err(value_error(
            "mechanisms: at least one mechanism (KIND:key=value,...) is required",
        ));
    }
    Ok(parts)
}

/// As [`collect_parts`], an empty list allowed (with a schedule).
fn collect_parts_or_none(mechanisms: &Bound<'_, PyAny>) -> PyResult<Vec<MechanismSpec>> {
    if mechanisms.is_instance_of::<PyString>() {
        return Err(value_error(
            "mechanisms: expected a list of SPEC strings or Mechanisms, got one string",
        ));
    }
    let items = mechanisms
        .try_iter()
        .map_err(|_| value_error("mechanisms: expected a list of SPEC strings or Mechanisms"))?;
    let mut parts = Vec::new();
    for (i, item) in items.enumerate() {
        let item = item?;
        let p = parts_of(&item)
            .map_err(|e| value_error(format!("mechanisms[{i}]: {}", e.value(item.py()))))?;
        parts.extend(p);
    }
    Ok(parts)
}

/// The composition of a list of Mechanisms, Compositions or SPEC strings.
#[pyfunction]
fn compose(mechanisms: &Bound<'_, PyAny>) -> PyResult<Composition> {
    Ok(Composition {
        parts: collect_parts(mechanisms)?,
    })
}

/// The certified accountant, as `dpw account`: `mechanisms` is a list of SPEC strings
/// ("gaussian:sigma=2,count=1000", "subsampled-gaussian:sigma=1,q=0.01,count=1e4", ...)
/// or Mechanism objects, composed heterogeneously. Give exactly one of `delta` (to get
/// epsilon), `epsilon` (to get delta) or `at_fpr` (to get the largest true-positive rate
/// of any membership test at that false-positive rate, as `--at-fpr`; quantity "tpr").
/// Returns a Bracket with lower <= exact <= upper.
/// `max_work` is the work budget in bins transformed (default 2e9, seconds to three
/// minutes on 2 cores; in [1e6, 1e13]), as `--max-work`, never passed: a step that would
/// pass it is not taken and the bracket reached so far is returned (still certified,
/// `accuracy_met` False). `schedule` is the path of a CSV of
/// `sigma,q,count` segments of the Poisson-subsampled Gaussian composed after the
/// mechanisms (as `--schedule`; `mechanisms` may then be empty). Ctrl-C interrupts.
#[pyfunction]
#[pyo3(signature = (mechanisms, *, delta=None, epsilon=None, at_fpr=None, accuracy=None, max_work=None, schedule=None))]
#[allow(clippy::too_many_arguments)]
fn account(
    py: Python<'_>,
    mechanisms: &Bound<'_, PyAny>,
    delta: Option<&Bound<'_, PyAny>>,
    epsilon: Option<&Bound<'_, PyAny>>,
    at_fpr: Option<&Bound<'_, PyAny>>,
    accuracy: Option<&Bound<'_, PyAny>>,
    max_work: Option<&Bound<'_, PyAny>>,
    schedule: Option<String>,
) -> PyResult<Bracket> {
    let parts = if schedule.is_some() {
        collect_parts_or_none(mechanisms)?
    } else {
        collect_parts(mechanisms)?
    };
    let d = optional_number("delta", delta)?;
    let e = optional_number("epsilon", epsilon)?;
    let a = optional_number("at_fpr", at_fpr)?;
    let acc = optional_number("accuracy", accuracy)?;
    let work = optional_number("max_work", max_work)?;
    let texts = parts.into_iter().map(|p| p.text).collect();
    run_with(py, texts, d, e, a, acc, work, schedule)
}

/// The certified solver, as `dpw solve`: which value of the one parameter written `?`
/// meets the targets. `mechanisms` is a SPEC string ("subsampled-gaussian:sigma=?,q=0.01,
/// count=10000") or a list of SPEC strings, Mechanisms and Compositions with exactly one
/// `?` among them (on sigma, scale, radius, epsilon, q, count or sensitivity). Targets:
/// `epsilon` and `delta` ((epsilon, delta)-DP), and/or `max_tpr` and `at_fpr` (no
/// membership test has power above max_tpr at false-positive rate at_fpr); every target
/// given must hold. Returns a Solution: `meets` certified to meet them, `fails` certified
/// to fail, |meets/fails - 1| <= accuracy (in [1e-5, 0.5], default 1e-4; for count,
/// fails = meets + 1). `max_work` is the work budget in bins transformed (default 6e9,
/// in [1e6, 1e14]), as `--max-work`. Ctrl-C interrupts.
#[pyfunction]
#[pyo3(signature = (mechanisms, *, epsilon=None, delta=None, max_tpr=None, at_fpr=None, accuracy=None, max_work=None))]
#[allow(clippy::too_many_arguments)]
fn solve(
    py: Python<'_>,
    mechanisms: &Bound<'_, PyAny>,
    epsilon: Option<&Bound<'_, PyAny>>,
    delta: Option<&Bound<'_, PyAny>>,
    max_tpr: Option<&Bound<'_, PyAny>>,
    at_fpr: Option<&Bound<'_, PyAny>>,
    accuracy: Option<&Bound<'_, PyAny>>,
    max_work: Option<&Bound<'_, PyAny>>,
) -> PyResult<crate::solve::Solution> {
    let specs = if let Ok(s) = mechanisms.cast::<PyString>() {
        vec![s.to_cow()?.trim().to_string()]
    } else {
        template_texts(mechanisms)?
    };
    crate::solve::run(
        py,
        specs,
        optional_number("epsilon", epsilon)?,
        optional_number("delta", delta)?,
        optional_number("max_tpr", max_tpr)?,
        optional_number("at_fpr", at_fpr)?,
        optional_number("accuracy", accuracy)?,
        optional_number("max_work", max_work)?,
    )
}

/// The SPECs of a dp_accounting event tree given as JSON (docs/from_dp_accounting.md):
/// the translation `dpw account --events` uses, for `dpw.dp_accounting`.
#[pyfunction]
#[pyo3(signature = (tree, neighbours))]
fn event_specs(tree: &str, neighbours: &str) -> PyResult<Vec<String>> {
    dpw::account::events::specs_from_json(tree, neighbours).map_err(value_error)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(event_specs, m)?)?;
    m.add_class::<Bracket>()?;
    m.add_class::<Mechanism>()?;
    m.add_class::<Composition>()?;
    m.add_function(wrap_pyfunction!(compose, m)?)?;
    m.add_function(wrap_pyfunction!(account, m)?)?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    Ok(())
}
