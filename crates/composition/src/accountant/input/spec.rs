//! The mechanism language of `dpw account` and of manifests:
//! `KIND:key=value[,key=value...]`, e.g. `gaussian:sigma=2,count=1000`.
//!
//! | kind | keys | loss law |
//! |---|---|---|
//! | `gaussian` | `sigma` | [`GaussianLaw`] with μ = sensitivity/σ (docs/accountant.md §2.1) |
//! | `laplace` | `scale` | [`ClippedLaplaceLaw::laplace`] with ε₀ = sensitivity/b (§2.2) |
//! | `rr` | `epsilon` | [`DiscreteLaw::randomized_response`] (§2.4) |
//! | `truncated-laplace` | `epsilon`, `delta` | [`ClippedLaplaceLaw::truncated_laplace`] (§2.3) |
//! | `discrete-laplace` | `scale` | [`DiscreteLaw::discrete_laplace`], `P(x) ∝ e^{−|x|/b}` on the integers, integer sensitivity (§2.12) |
//! | `discrete-gaussian` | `sigma` | [`DiscreteGaussianLaw`], `P(x) ∝ e^{−x²/2σ²}` on the integers, integer sensitivity (§2.13) |
//! | `exponential` (or `bounded-range`) | `epsilon` | the ε-bounded-range class: [`BoundedRangeLaw`] above, randomized response at ε/2 below (§2.14) |
//! | `permute-and-flip` | `epsilon` | ε-DP selection: randomized response at ε above, the mechanism on two candidates below (§2.15) |
//! | `report-noisy-max` | `epsilon`, `noise` (`gumbel`, `exponential`, `laplace`; scale 2/ε) | `gumbel` is `exponential`, `exponential` is `permute-and-flip`; `laplace`: randomized response at ε above, two candidates below (§2.15) |
//! | `gaussian-mixture` | `sigma`, `shifts`, `probs` (lists separated by `;`) | [`MixtureLaw`]: `Σ p_i N(c_i s/σ)` against `N(0)` and the reverse, add/remove (§2.16) |
//! | `approx-dp` | `epsilon`, `delta` | [`DiscreteLaw::approx_dp`]: any (ε, δ)-DP black box (§2.11) |
//! | `bounded` | `family` (`power` with `alpha`, or `exp`), `radius` | [`BoundedNoiseLaw`] (§2.5) |
//! | `subsampled-gaussian` | `sigma`, `q` | [`SubsampledLaw`], Poisson rate q, both directions (§2.6) |
//! | `subsampled-laplace` | `scale`, `q` | [`SubsampledLaw`], Poisson rate q, both directions (§2.6) |
//!
//! Every kind also takes `sensitivity` (default 1; for `truncated-laplace` the
//! sensitivity it is calibrated to and applied at) and `count` (default 1, an integer up
//! to 1e10, `1e4` accepted). Gaussian, Laplace and bounded noise and the subsampled kinds
//! take `group` (protect any g examples together; default 1). The subsampled kinds take
//! the pipeline keys of docs/accountant.md §2.7–§2.9: `sampling=poisson|fixed|shuffle|
//! allocation` (default poisson), `neighbours=add-remove|replace-one` (default
//! add-remove), `batch`, `n` (a batch of `batch` from `n` examples; for Poisson sampling
//! they may stand in for `q = batch/n`) and `steps` (of a balls-in-bins epoch).

use crate::accountant::core::answer::MAX_COUNT;
use crate::accountant::laws::discrete::{discrete_laplace_rate, MAX_DISCRETE_SENSITIVITY};
use crate::accountant::laws::{
    BoundedNoiseLaw, BoundedRangeLaw, ClippedLaplaceLaw, DiscreteGaussianLaw, DiscreteLaw,
    GaussianLaw, LossLaw,
};
use crate::accountant::sampling::allocation::{epoch_laws, EpochGrid, EpochLaws};
use crate::accountant::sampling::max_statistic::MaxStatisticLaw;
use crate::accountant::sampling::mixture::MixtureLaw;
use crate::accountant::sampling::revealed::{RevealedMixture, SharedPart, Side};
use crate::accountant::sampling::subsampled::{symmetrized, Base, Direction, SubsampledLaw};
use densities::bounded::BoundedFamily;
use densities::outward::{div_down, div_up, mul_up};
use std::fmt;
use std::sync::Arc;

/// The loss law of (P, Q) and, for an asymmetric mechanism, of (Q, P).
pub type Laws = (Box<dyn LossLaw>, Option<Box<dyn LossLaw>>);

/// A parse or range error of a mechanism SPEC: one line naming the key and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The noise of [`MechanismKind::NoisyMax`] (Gumbel noise is the exponential mechanism,
/// [`MechanismKind::BoundedRange`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoisyMaxNoise {
    /// Exponential noise: permute-and-flip (Ding et al. 2021).
    Exponential,
    /// Laplace noise.
    Laplace,
}

impl std::error::Error for SpecError {}

/// The kind of a mechanism and its own parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum MechanismKind {
    /// Gaussian noise of standard deviation `sigma`.
    Gaussian {
        /// σ > 0.
        sigma: f64,
    },
    /// Laplace noise of scale `scale`.
    Laplace {
        /// b > 0.
        scale: f64,
    },
    /// Binary randomized response with parameter `epsilon`.
    RandomizedResponse {
        /// ε₀ ∈ [1e-8, 700].
        epsilon: f64,
    },
    /// Discrete Laplace noise `P(x) ∝ e^{−|x|/scale}` on the integers (integer
    /// sensitivity; docs/accountant.md §2.12).
    DiscreteLaplace {
        /// b > 0.
        scale: f64,
    },
    /// Discrete Gaussian noise `P(x) ∝ e^{−x²/2σ²}` on the integers (integer sensitivity;
    /// docs/accountant.md §2.13).
    DiscreteGaussian {
        /// σ ∈ [0.5, 1e4].
        sigma: f64,
    },
    /// The exponential mechanism, or any `epsilon`-bounded-range mechanism (docs/accountant.md
    /// §2.14): certified above by a pair dominating the whole class, below by an
    /// exponential mechanism on two candidates.
    BoundedRange {
        /// ε ∈ [1e-6, 50].
        epsilon: f64,
    },
    /// Report-noisy-max of utilities of sensitivity 1 with exponential noise (= permute-and-flip)
    /// or Laplace noise, of scale 2/`epsilon` (docs/accountant.md §2.15): certified above by
    /// the ε-DP worst case, below by the mechanism on two candidates.
    NoisyMax {
        /// The noise: exponential (permute-and-flip) or Laplace.
        noise: NoisyMaxNoise,
        /// ε ∈ [1e-6, 50].
        epsilon: f64,
    },
    /// Any (`epsilon`, `delta`)-DP mechanism, by its worst-case pair (docs/accountant.md
    /// §2.11).
    ApproxDp {
        /// ε₀ ∈ [1e-8, 700].
        epsilon: f64,
        /// δ₀ ∈ [0, 1).
        delta: f64,
    },
    /// The truncated Laplacian calibrated to (`epsilon`, `delta`).
    TruncatedLaplace {
        /// ε > 0.
        epsilon: f64,
        /// δ ∈ (0, 1).
        delta: f64,
    },
    /// Bounded noise `radius · X`, `X ∝ e^{−f}` on (−1, 1).
    Bounded {
        /// The potential family.
        family: BoundedFamily,
        /// R > 0.
        radius: f64,
    },
    /// Gaussian noise of standard deviation `sigma` on a Poisson sample of rate `q`.
    SubsampledGaussian {
        /// σ > 0.
        sigma: f64,
        /// q ∈ (0, 1].
        q: f64,
    },
    /// Laplace noise of scale `scale` on a Poisson sample of rate `q`.
    SubsampledLaplace {
        /// b > 0.
        scale: f64,
        /// q ∈ (0, 1].
        q: f64,
    },
    /// Gaussian noise on a query whose sensitivity is random: `shift_i` (times
    /// `sensitivity`) with probability `prob_i` (docs/accountant.md §2.16; dp_accounting's
    /// mixture-of-Gaussians event).
    GaussianMixture {
        /// σ > 0.
        sigma: f64,
        /// `(prob_i, shift_i)`, probabilities in (0, 1] summing to 1, shifts ≥ 0.
        components: Vec<(f64, f64)>,
    },
    /// A schedule's law between two lattice points (docs/accountant.md §2.8): with
    /// probability `weight` the Poisson-subsampled Gaussian at `sigma`, otherwise at
    /// `sigma2`, the choice published. Built by [`crate::accountant::input::schedule::accounted`], never
    /// parsed; only the ends of a composition with it on its `side` are certified.
    SubsampledGaussianMix {
        /// σ of the leakier part (the smaller).
        sigma: f64,
        /// σ of the other part.
        sigma2: f64,
        /// Probability of the part at `sigma`, in (0, 1).
        weight: f64,
        /// q ∈ (0, 1], both parts.
        q: f64,
        /// The end it is built for (its roundings' direction, and which weight it has).
        side: Side,
    },
}

/// How a subsampled mechanism draws its batches (docs/accountant.md §2.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// Each example independently with probability q.
    Poisson,
    /// A uniformly random batch of exactly `batch` of the `n` examples.
    Fixed {
        /// Batch size, in `[1, n]`.
        batch: u64,
        /// Dataset size (the larger of the two under add/remove).
        n: u64,
    },
    /// Shuffled epochs: a random permutation cut into `⌈n/batch⌉` batches (the last one
    /// smaller when `batch` does not divide `n`); `count` counts epochs. Only a certified
    /// lower bound is known (§2.9).
    Shuffle {
        /// Batch size, at most `n`.
        batch: u64,
        /// Dataset size.
        n: u64,
    },
    /// Balls-in-bins: each example in exactly one of `steps` steps of an epoch, chosen
    /// uniformly and independently; `count` counts epochs. A certified bracket (§2.10).
    Allocation {
        /// Steps per epoch.
        steps: u64,
    },
}

/// Which datasets are neighbours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Neighbours {
    /// One dataset is the other with one example added.
    AddRemove,
    /// The datasets differ in one example's value.
    ReplaceOne,
}

/// The pipeline around a mechanism: sampler, neighbour relation, group size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pipeline {
    /// The sampler (subsampled kinds; `Poisson` for the others).
    pub sampling: Sampling,
    /// The neighbour relation (subsampled kinds; `AddRemove` for the others, whose
    /// sensitivity states the relation).
    pub neighbours: Neighbours,
    /// Examples protected together (1: one example).
    pub group: u32,
}

impl Default for Pipeline {
    fn default() -> Self {
        Self {
            sampling: Sampling::Poisson,
            neighbours: Neighbours::AddRemove,
            group: 1,
        }
    }
}

/// Largest group size.
pub const MAX_GROUP: u32 = 1000;

/// Largest dataset size `n`.
pub const MAX_N: f64 = 1e15;

/// One mechanism of a composition: kind, sensitivity, count.
///
/// ```
/// use composition::accountant::MechanismSpec;
/// let m: MechanismSpec = "gaussian:sigma=2,count=1e3".parse().unwrap();
/// assert_eq!(m.count, 1000);
/// assert!("gaussian:sigma=-1".parse::<MechanismSpec>().unwrap_err().0.contains("sigma"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MechanismSpec {
    /// Kind and parameters.
    pub kind: MechanismKind,
    /// Sensitivity (default 1).
    pub sensitivity: f64,
    /// Number of times it is composed (default 1).
    pub count: u64,
    /// Sampler, neighbour relation and group (defaults: Poisson, add/remove, 1).
    pub pipeline: Pipeline,
    /// The text it was parsed from.
    pub text: String,
}

const KINDS: &str =
    "gaussian, laplace, discrete-laplace, discrete-gaussian, rr, exponential, bounded-range, permute-and-flip, \
     report-noisy-max, truncated-laplace, approx-dp, bounded, gaussian-mixture, \
     subsampled-gaussian, subsampled-laplace";

/// The keys of a kind besides `sensitivity` and `count` (`None`: no such kind).
pub fn kind_keys(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "gaussian" => &["sigma", "group"],
        "laplace" => &["scale", "group"],
        "rr" => &["epsilon"],
        "truncated-laplace" => &["epsilon", "delta"],
        "approx-dp" => &["epsilon", "delta"],
        "exponential" | "bounded-range" | "permute-and-flip" => &["epsilon"],
        "report-noisy-max" => &["epsilon", "noise"],
        "gaussian-mixture" => &["sigma", "shifts", "probs"],
        "discrete-laplace" => &["scale", "group"],
        "discrete-gaussian" => &["sigma", "group"],
        "bounded" => &["family", "alpha", "radius", "group"],
        "subsampled-gaussian" => &[
            "sigma",
            "q",
            "batch",
            "n",
            "steps",
            "sampling",
            "neighbours",
            "group",
        ],
        "subsampled-laplace" => &[
            "scale",
            "q",
            "batch",
            "n",
            "steps",
            "sampling",
            "neighbours",
            "group",
        ],
        _ => return None,
    })
}

fn number(kind: &str, key: &str, v: &str) -> Result<f64, SpecError> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| SpecError(format!("{kind}: {key} = '{v}' is not a finite number")))
}

fn in_range(
    kind: &str,
    key: &str,
    x: f64,
    lo: f64,
    hi: f64,
    open_lo: bool,
    range: &str,
) -> Result<f64, SpecError> {
    let ok = if open_lo { x > lo } else { x >= lo } && x <= hi;
    if ok {
        Ok(x)
    } else {
        Err(SpecError(format!(
            "{kind}: {key} = {x} is outside the allowed range {range}"
        )))
    }
}

/// The pipeline keys of a SPEC (docs/accountant.md §2.7–§2.9): `group` on the kinds with a
/// sensitivity, `sampling`, `neighbours`, `batch`, `n` and `steps` on the subsampled ones
/// (the caller has already refused keys a kind does not have); with them the rate
/// `batch/n` (rounded up) when `batch` and `n` stand in for a Poisson `q`.
fn parse_pipeline(
    kind: &str,
    get: &dyn Fn(&str) -> Option<String>,
) -> Result<(Pipeline, Option<f64>), SpecError> {
    let integer = |key: &str, hi: f64, range: &str| -> Result<Option<u64>, SpecError> {
        let Some(v) = get(key) else { return Ok(None) };
        let x = number(kind, key, &v)?;
        if !(x >= 1.0 && x <= hi && x.fract() == 0.0) {
            return Err(SpecError(format!(
                "{kind}: {key} = {v} is outside the allowed range: an integer in {range}"
            )));
        }
        Ok(Some(x as u64))
    };
    let group = integer("group", MAX_GROUP as f64, "[1, 1000]")?.unwrap_or(1) as u32;
    let neighbours = match get("neighbours").as_deref() {
        None | Some("add-remove") => Neighbours::AddRemove,
        Some("replace-one") => Neighbours::ReplaceOne,
        Some(other) => {
            return Err(SpecError(format!(
                "{kind}: neighbours = '{other}' is not one of: add-remove, replace-one"
            )))
        }
    };
    let batch = integer("batch", MAX_N, "[1, 1e15]")?;
    let n = integer("n", MAX_N, "[1, 1e15]")?;
    let steps = integer(
        "steps",
        crate::accountant::sampling::max_statistic::MAX_STEPS as f64,
        "[1, 1e6]",
    )?;
    let sampler = get("sampling").unwrap_or_else(|| "poisson".into());
    let fixed = match sampler.as_str() {
        "poisson" => false,
        "fixed" => true,
        "shuffle" | "allocation" => {
            return parse_epochs(kind, &sampler, batch, n, steps, neighbours, group, get)
                .map(|p| (p, None));
        }
        other => {
            return Err(SpecError(format!(
                "{kind}: sampling = '{other}' is not one of: poisson, fixed, shuffle, allocation"
            )))
        }
    };
    if steps.is_some() {
        return Err(SpecError(format!(
            "{kind}: steps applies to sampling=allocation only"
        )));
    }
    let has_q = get("q").is_some();
    let mut batch_rate = None;
    let sampling = match (batch, n) {
        (Some(b), Some(n)) => {
            if has_q {
                return Err(SpecError(format!(
                    "{kind}: give the rate q or batch and n, not both"
                )));
            }
            let add_remove = neighbours == Neighbours::AddRemove;
            if b > n || (fixed && add_remove && b == n) {
                let most = if fixed && add_remove {
                    "n − 1 (under add/remove the smaller dataset must fill a batch)"
                } else {
                    "n"
                };
                return Err(SpecError(format!(
                    "{kind}: batch = {b} is outside the allowed range: at most {most} (n = {n})"
                )));
            }
            if fixed {
                Sampling::Fixed { batch: b, n }
            } else {
                batch_rate = Some(div_up(b as f64, n as f64));
                Sampling::Poisson
            }
        }
        (Some(_), None) | (None, Some(_)) => {
            let missing = if batch.is_some() { "n" } else { "batch" };
            return Err(SpecError(format!(
                "{kind}: missing key '{missing}' (batch and n go together)"
            )));
        }
        (None, None) => {
            if fixed {
                return Err(SpecError(format!(
                    "{kind}: sampling=fixed needs batch and n (not q)"
                )));
            }
            Sampling::Poisson
        }
    };
    // What is not built yet says so (docs/accountant.md §2.7).
    let laplace = kind == "subsampled-laplace";
    if laplace && !fixed && (neighbours == Neighbours::ReplaceOne || group > 1) {
        return Err(SpecError(format!(
            "{kind}: Poisson sampling with neighbours=replace-one or group > 1 is not built \
             for Laplace noise (it is for subsampled-gaussian)"
        )));
    }
    if fixed && group > 1 {
        return Err(SpecError(format!(
            "{kind}: group > 1 with sampling=fixed is not built (it is for Poisson sampling)"
        )));
    }
    Ok((
        Pipeline {
            sampling,
            neighbours,
            group,
        },
        batch_rate,
    ))
}

/// The keys of the epoch samplers (`shuffle`, whose only certified number is a lower
/// bound, §2.9; `allocation`, §2.10).
#[allow(clippy::too_many_arguments)]
fn parse_epochs(
    kind: &str,
    sampler: &str,
    batch: Option<u64>,
    n: Option<u64>,
    steps: Option<u64>,
    neighbours: Neighbours,
    group: u32,
    get: &dyn Fn(&str) -> Option<String>,
) -> Result<Pipeline, SpecError> {
    if kind != "subsampled-gaussian" || neighbours != Neighbours::AddRemove || group > 1 {
        return Err(SpecError(format!(
            "{kind}: sampling={sampler} is built for subsampled-gaussian with add/remove \
             neighbours and group 1 only"
        )));
    }
    if get("q").is_some() {
        return Err(SpecError(format!(
            "{kind}: sampling={sampler} takes no q (the rate is one step of the epoch)"
        )));
    }
    let sampling = if sampler == "shuffle" {
        if steps.is_some() {
            return Err(SpecError(format!(
                "{kind}: sampling=shuffle takes batch and n, not steps"
            )));
        }
        let (Some(b), Some(n)) = (batch, n) else {
            return Err(SpecError(format!(
                "{kind}: sampling=shuffle needs batch and n"
            )));
        };
        // A last, smaller batch is a step of its own: ⌈n/batch⌉ steps an epoch (§2.9).
        if b > n || n.div_ceil(b) > crate::accountant::sampling::max_statistic::MAX_STEPS {
            return Err(SpecError(format!(
                "{kind}: batch = {b} is outside the allowed range: at most n = {n}, with \
                 ⌈n/batch⌉ at most 1e6 steps an epoch"
            )));
        }
        // Without the example, n − 1 examples must make as many batches (§2.9).
        if n % b == 1 || b == 1 {
            return Err(SpecError(format!(
                "{kind}: n = {n} is outside the allowed range for batch = {b}: n mod batch \
                 must not be 1 (without the example the epoch would have one batch fewer)"
            )));
        }
        Sampling::Shuffle { batch: b, n }
    } else {
        if batch.is_some() || n.is_some() {
            return Err(SpecError(format!(
                "{kind}: sampling=allocation takes steps, not batch and n"
            )));
        }
        let Some(t) = steps else {
            return Err(SpecError(format!(
                "{kind}: sampling=allocation needs steps (the steps of an epoch)"
            )));
        };
        Sampling::Allocation { steps: t }
    };
    Ok(Pipeline {
        sampling,
        neighbours,
        group,
    })
}

impl std::str::FromStr for MechanismSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, SpecError> {
        let text = s.trim().to_string();
        let (kind, rest) = text.split_once(':').unwrap_or((text.as_str(), ""));
        let kind = kind.trim();
        let mut pairs: Vec<(String, String)> = Vec::new();
        for item in rest.split(',').filter(|t| !t.trim().is_empty()) {
            let Some((k, v)) = item.split_once('=') else {
                return Err(SpecError(format!("{kind}: '{item}' is not key=value")));
            };
            let k = k.trim().to_string();
            if pairs.iter().any(|p| p.0 == k) {
                return Err(SpecError(format!("{kind}: key '{k}' given twice")));
            }
            pairs.push((k, v.trim().to_string()));
        }
        let Some(allowed) = kind_keys(kind) else {
            return Err(SpecError(format!(
                "unknown mechanism kind '{kind}' (expected KIND:key=value,...; kinds: {KINDS})"
            )));
        };
        for (k, _) in &pairs {
            if !allowed.contains(&k.as_str()) && k != "sensitivity" && k != "count" {
                return Err(SpecError(format!(
                    "{kind}: unknown key '{k}' (allowed: {}, sensitivity, count)",
                    allowed.join(", ")
                )));
            }
        }
        let get = |key: &str| pairs.iter().find(|p| p.0 == key).map(|p| p.1.clone());
        let need = |key: &str| -> Result<f64, SpecError> {
            let v = get(key).ok_or_else(|| SpecError(format!("{kind}: missing key '{key}'")))?;
            number(kind, key, &v)
        };
        let sensitivity = match get("sensitivity") {
            Some(v) => in_range(
                kind,
                "sensitivity",
                number(kind, "sensitivity", &v)?,
                0.0,
                1e300,
                true,
                "(0, 1e300]",
            )?,
            None => 1.0,
        };
        let count = match get("count") {
            Some(v) => {
                let x = number(kind, "count", &v)?;
                if !(x >= 1.0 && x <= MAX_COUNT as f64 && x.fract() == 0.0) {
                    return Err(SpecError(format!(
                        "{kind}: count = {v} is outside the allowed range: an integer in [1, 1e10]"
                    )));
                }
                x as u64
            }
            None => 1,
        };
        let pos = |key: &str| -> Result<f64, SpecError> {
            in_range(kind, key, need(key)?, 0.0, 1e300, true, "(0, 1e300]")
        };
        let (pipeline, batch_rate) = parse_pipeline(kind, &get)?;
        let rate = || -> Result<f64, SpecError> {
            let q = match pipeline.sampling {
                Sampling::Fixed { batch, n } | Sampling::Shuffle { batch, n } => {
                    div_up(batch as f64, n as f64)
                }
                Sampling::Allocation { steps } => div_up(1.0, steps as f64),
                Sampling::Poisson => match batch_rate {
                    Some(q) => q,
                    None => need("q")?,
                },
            };
            if !(1e-9..=1.0).contains(&q) {
                return Err(SpecError(format!(
                    "{kind}: q = {q} is outside the allowed range [1e-9, 1]"
                )));
            }
            Ok(q)
        };
        let epsilon = || {
            in_range(
                kind,
                "epsilon",
                need("epsilon")?,
                1e-8,
                700.0,
                false,
                "[1e-8, 700]",
            )
        };
        let k = match kind {
            "gaussian" => MechanismKind::Gaussian {
                sigma: pos("sigma")?,
            },
            "subsampled-gaussian" => MechanismKind::SubsampledGaussian {
                sigma: pos("sigma")?,
                q: rate()?,
            },
            "subsampled-laplace" => MechanismKind::SubsampledLaplace {
                scale: pos("scale")?,
                q: rate()?,
            },
            "laplace" => MechanismKind::Laplace {
                scale: pos("scale")?,
            },
            "rr" => MechanismKind::RandomizedResponse {
                epsilon: epsilon()?,
            },
            "discrete-laplace" | "discrete-gaussian" => {
                // The noise lives on the integers: a whole number of steps, and few
                // enough that the law's s + 1 atoms stay a list.
                let s = sensitivity * pipeline.group as f64;
                if !(sensitivity.fract() == 0.0
                    && (1.0..=MAX_DISCRETE_SENSITIVITY as f64).contains(&s))
                {
                    return Err(SpecError(format!(
                        "{kind}: sensitivity = {sensitivity} is outside the allowed range: an \
                         integer in [1, 1e5] (times the group)"
                    )));
                }
                if kind == "discrete-laplace" {
                    MechanismKind::DiscreteLaplace {
                        scale: pos("scale")?,
                    }
                } else {
                    MechanismKind::DiscreteGaussian {
                        sigma: pos("sigma")?,
                    }
                }
            }
            "exponential" | "bounded-range" | "permute-and-flip" | "report-noisy-max" => {
                if get("sensitivity").is_some() {
                    return Err(SpecError(format!(
                        "{kind}: sensitivity does not apply (epsilon is the mechanism's own \
                         bound on the range of its privacy loss; scale the utility instead)"
                    )));
                }
                let e = need("epsilon")?;
                if !(e.is_finite() && (1e-6..=50.0).contains(&e)) {
                    return Err(SpecError(format!(
                        "{kind}: epsilon = {e} is outside the allowed range [1e-6, 50]"
                    )));
                }
                let noise = match (kind, get("noise").as_deref()) {
                    ("report-noisy-max", Some("gumbel")) => None,
                    ("report-noisy-max", Some("exponential")) | ("permute-and-flip", _) => {
                        Some(NoisyMaxNoise::Exponential)
                    }
                    ("report-noisy-max", Some("laplace")) => Some(NoisyMaxNoise::Laplace),
                    ("report-noisy-max", Some(other)) => {
                        return Err(SpecError(format!(
                            "{kind}: noise = '{other}' is not one of: gumbel, exponential, laplace"
                        )))
                    }
                    ("report-noisy-max", None) => {
                        return Err(SpecError(format!(
                            "{kind}: missing key 'noise' (gumbel, exponential or laplace)"
                        )))
                    }
                    _ => None,
                };
                match noise {
                    None => MechanismKind::BoundedRange { epsilon: e },
                    Some(noise) => MechanismKind::NoisyMax { noise, epsilon: e },
                }
            }
            "gaussian-mixture" => {
                let list = |key: &str| -> Result<Vec<f64>, SpecError> {
                    let v = get(key)
                        .ok_or_else(|| SpecError(format!("{kind}: missing key '{key}'")))?;
                    v.split(';').map(|x| number(kind, key, x)).collect()
                };
                let (shifts, probs) = (list("shifts")?, list("probs")?);
                if shifts.len() != probs.len() || shifts.is_empty() || shifts.len() > 64 {
                    return Err(SpecError(format!(
                        "{kind}: shifts and probs must list the same number of components, 1 \
                         to 64 (got {} and {})",
                        shifts.len(),
                        probs.len()
                    )));
                }
                for &p in &probs {
                    in_range(kind, "probs", p, 0.0, 1.0, true, "(0, 1]")?;
                }
                let total: f64 = probs.iter().sum();
                if (total - 1.0).abs() > 1e-9 {
                    return Err(SpecError(format!(
                        "{kind}: probs sum to {total}, not 1 (within 1e-9)"
                    )));
                }
                for &c in &shifts {
                    in_range(kind, "shifts", c, 0.0, 1e300, false, "[0, 1e300]")?;
                }
                if shifts.iter().all(|&c| c == 0.0) {
                    return Err(SpecError(format!(
                        "{kind}: shifts are all 0 (the mechanism would leak nothing)"
                    )));
                }
                MechanismKind::GaussianMixture {
                    sigma: pos("sigma")?,
                    components: probs.into_iter().zip(shifts).collect(),
                }
            }
            "approx-dp" => {
                if get("sensitivity").is_some() {
                    return Err(SpecError(format!(
                        "{kind}: sensitivity does not apply (an (epsilon, delta)-DP black box \
                         carries its own guarantee)"
                    )));
                }
                MechanismKind::ApproxDp {
                    epsilon: epsilon()?,
                    delta: {
                        let d = need("delta")?;
                        if !(0.0..1.0).contains(&d) {
                            return Err(SpecError(format!(
                                "{kind}: delta = {d} is outside the allowed range [0, 1)"
                            )));
                        }
                        d
                    },
                }
            }
            "truncated-laplace" => MechanismKind::TruncatedLaplace {
                epsilon: epsilon()?,
                delta: {
                    let d = need("delta")?;
                    if !(d > 0.0 && d < 1.0) {
                        return Err(SpecError(format!(
                            "{kind}: delta = {d} is outside the allowed range (0, 1)"
                        )));
                    }
                    d
                },
            },
            _ => {
                let fam = get("family").unwrap_or_default();
                let family = match fam.as_str() {
                    "power" => {
                        let a =
                            in_range(kind, "alpha", need("alpha")?, 0.0, 100.0, true, "(0, 100]")?;
                        BoundedFamily::Power { alpha: a }
                    }
                    "exp" => {
                        if get("alpha").is_some() {
                            return Err(SpecError(format!(
                                "{kind}: alpha applies to family=power only"
                            )));
                        }
                        BoundedFamily::Exp
                    }
                    "" => {
                        return Err(SpecError(format!(
                            "{kind}: missing key 'family' (power or exp)"
                        )))
                    }
                    other => {
                        return Err(SpecError(format!(
                            "{kind}: family = '{other}' is not one of: power, exp"
                        )))
                    }
                };
                MechanismKind::Bounded {
                    family,
                    radius: pos("radius")?,
                }
            }
        };
        let spec = MechanismSpec {
            kind: k,
            sensitivity,
            count,
            pipeline,
            text,
        };
        // Range checks that depend on the combination (e.g. sensitivity/σ); a balls-in-bins
        // epoch's laws take seconds to build, so only its range is checked here. So is
        // bounded noise's where it holds (its law's quadratures take a millisecond, and
        // the solver's domain probes a radius a hundred times, 44 % of fig19's work); where
        // it does not, `laws` fails at that check, before any quadrature, with its message.
        if spec.bounded_in_range() {
            return Ok(spec);
        }
        if spec.allocation_shift()?.is_none() {
            spec.laws()?;
        }
        Ok(spec)
    }
}

impl MechanismSpec {
    /// Whether this is bounded noise whose law [`Self::laws`] builds without error: its
    /// range at the shift `laws` gives it (the sensitivity times the group, rounded up).
    fn bounded_in_range(&self) -> bool {
        let MechanismKind::Bounded { family, radius } = self.kind else {
            return false;
        };
        let s = mul_up(self.sensitivity, self.pipeline.group as f64);
        BoundedNoiseLaw::check(family, radius, s).is_ok()
    }

    /// The privacy-loss laws of one use of the mechanism: of the pair (P, Q), and of
    /// (Q, P) when it differs (subsampled mechanisms; the others are symmetric).
    pub fn laws(&self) -> Result<Laws, SpecError> {
        self.laws_sharing(&mut PartCache::default())
    }

    /// As [`Self::laws`], a revealed mixture's parts taken from `cache` (and put there):
    /// the mixtures of a schedule's list then share their lattice laws, each of whose
    /// cells is computed once for all the groups of a lattice cell ([`SharedPart`]).
    pub(crate) fn laws_sharing(&self, cache: &mut PartCache) -> Result<Laws, SpecError> {
        let kind = self.kind_name();
        let g = self.pipeline.group;
        // A group of g moves the output by at most g sensitivities (rounded up: a larger
        // shift leaks more, docs/accountant.md §5).
        let s = mul_up(self.sensitivity, g as f64);
        let wrap = |what: &str, range: &str, x: f64| {
            SpecError(format!(
                "{kind}: {what} = {x:e} is outside the supported range {range}"
            ))
        };
        let sub = |base: Base, scale: f64, q: f64| -> Result<Laws, SpecError> {
            let p = self.pipeline;
            let one = self.sensitivity;
            let err = |mu: f64| move |_| wrap("sensitivity/scale", "[1e-6, 50]", mu);
            let epochs = |mu: f64, t: u64| -> Result<Laws, SpecError> {
                let e = |_| wrap("sensitivity/sigma", "[1e-6, 50]", mu);
                Ok((
                    Box::new(MaxStatisticLaw::new(mu, t, Direction::Remove).map_err(e)?),
                    Some(Box::new(
                        MaxStatisticLaw::new(mu, t, Direction::Add).map_err(e)?,
                    )),
                ))
            };
            let pair = |mu: f64| -> Result<Laws, SpecError> {
                Ok((
                    Box::new(SubsampledLaw::new(base, mu, q, Direction::Remove).map_err(err(mu))?),
                    Some(Box::new(
                        SubsampledLaw::new(base, mu, q, Direction::Add).map_err(err(mu))?,
                    )),
                ))
            };
            match (p.sampling, p.neighbours, p.group) {
                // The maximum of an epoch's outputs: a lower bound only (§2.9).
                (Sampling::Shuffle { batch, n }, _, _) => {
                    epochs(div_up(one, scale), n.div_ceil(batch))
                }
                // Balls-in-bins: the upper laws of the epoch's pair (§2.10); its lower laws
                // are [`MechanismSpec::lower_laws`].
                (Sampling::Allocation { .. }, _, _) => {
                    let l = self.allocation_laws()?.expect("a balls-in-bins SPEC");
                    Ok((
                        Box::new(l.remove_upper.clone()),
                        Some(Box::new(l.add_upper.clone())),
                    ))
                }
                // A fixed-size batch under add/remove: Poisson's add/remove pair at
                // q = batch/n with twice the shift (docs/accountant.md §2.7); the larger
                // dataset's output is always the mixture, so each order composes alone.
                (Sampling::Fixed { .. }, Neighbours::AddRemove, _) => {
                    pair(div_up(2.0 * one, scale))
                }
                // Under replace-one the adversary picks each step's order: the
                // symmetrised pair, which dominates both (§2.7, "Adaptive order"); the
                // lower ends come from the orders composed alone (`lower_laws`).
                // A batch of all n: the unsampled pair with a replaced example's shift.
                (Sampling::Fixed { batch, n }, Neighbours::ReplaceOne, _) if batch == n => {
                    let mu = div_up(2.0 * one, scale);
                    let e = |_| wrap("sensitivity/scale", "[1e-8, 1e4]", mu);
                    Ok((
                        match base {
                            Base::Gaussian => Box::new(GaussianLaw::new(mu).map_err(e)?),
                            Base::Laplace => Box::new(ClippedLaplaceLaw::laplace(mu).map_err(e)?),
                        },
                        None,
                    ))
                }
                (Sampling::Fixed { .. }, Neighbours::ReplaceOne, _) => {
                    let mu = div_up(2.0 * one, scale);
                    Ok((Box::new(symmetrized(base, mu, q).map_err(err(mu))?), None))
                }
                (Sampling::Poisson, Neighbours::AddRemove, 1) => pair(div_up(one, scale)),
                (Sampling::Poisson, relation, group) => {
                    let mu = div_up(one, scale);
                    let (a, b) =
                        MixtureLaw::poisson_group(mu, q, group, relation == Neighbours::ReplaceOne)
                            .map_err(|_| {
                                wrap("sensitivity/scale × group", "[1e-6, 50]", mu * group as f64)
                            })?;
                    Ok((Box::new(a), b.map(|b| Box::new(b) as Box<dyn LossLaw>)))
                }
            }
        };
        if let MechanismKind::GaussianMixture {
            sigma,
            ref components,
        } = self.kind
        {
            // Probabilities normalised (they sum to 1 within 1e-9); shifts in units of σ,
            // each rounded up as the Gaussian's is.
            let total: f64 = components.iter().map(|c| c.0).sum();
            let up: Vec<(f64, f64)> = components
                .iter()
                .map(|&(p, c)| (p / total, div_up(mul_up(c, s), sigma)))
                .collect();
            let widest = up.iter().map(|c| c.1).fold(0.0, f64::max);
            let bad = |_| wrap("largest shift × sensitivity/sigma", "(0, 50]", widest);
            let base = [(1.0, 0.0)];
            let fwd = MixtureLaw::new(&up, &base).map_err(bad)?;
            let rev = MixtureLaw::new(&base, &up).map_err(bad)?;
            return Ok((Box::new(fwd), Some(Box::new(rev))));
        }
        let one: Box<dyn LossLaw> = match self.kind {
            MechanismKind::Gaussian { sigma } => {
                // Rounded up: the mechanism with the larger shift leaks more at every ε
                // (docs/accountant.md §5), so the upper end holds for the exact s/σ.
                let mu = div_up(s, sigma);
                Box::new(
                    GaussianLaw::new(mu)
                        .map_err(|_| wrap("sensitivity/sigma", "[1e-8, 1e4]", mu))?,
                )
            }
            MechanismKind::Laplace { scale } => {
                let e = div_up(s, scale);
                Box::new(
                    ClippedLaplaceLaw::laplace(e)
                        .map_err(|_| wrap("sensitivity/scale", "[1e-8, 1e4]", e))?,
                )
            }
            MechanismKind::RandomizedResponse { epsilon } => Box::new(
                DiscreteLaw::randomized_response(epsilon)
                    .map_err(|_| wrap("epsilon", "[1e-8, 700]", epsilon))?,
            ),
            MechanismKind::DiscreteLaplace { .. } => Box::new(self.discrete_laplace_law(true)?.0),
            MechanismKind::DiscreteGaussian { sigma } => {
                let s = self.sensitivity as u64 * g as u64;
                Box::new(
                    DiscreteGaussianLaw::new(sigma, s)
                        .map_err(|e| SpecError(format!("{kind}: {e}")))?,
                )
            }
            MechanismKind::BoundedRange { epsilon } => Box::new(
                BoundedRangeLaw::new(epsilon)
                    .map_err(|_| wrap("epsilon", "[1e-6, 50]", epsilon))?,
            ),
            MechanismKind::NoisyMax { epsilon, .. } => Box::new(
                // Every instance is ε-DP: randomized response at ε dominates it (§2.15).
                DiscreteLaw::randomized_response(epsilon)
                    .map_err(|_| wrap("epsilon", "[1e-6, 50]", epsilon))?,
            ),
            MechanismKind::ApproxDp { epsilon, delta } => Box::new(
                DiscreteLaw::approx_dp(epsilon, delta)
                    .map_err(|_| wrap("epsilon", "[1e-8, 700] with delta in [0, 1)", epsilon))?,
            ),
            MechanismKind::TruncatedLaplace { epsilon, delta } => Box::new(
                ClippedLaplaceLaw::truncated_laplace(epsilon, delta, s)
                    .map_err(|_| wrap("epsilon", "[1e-8, 700] with delta in (0, 1)", epsilon))?,
            ),
            MechanismKind::Bounded { family, radius } => {
                Box::new(BoundedNoiseLaw::new(family, radius, s).map_err(|_| {
                    wrap(
                        "sensitivity/radius",
                        "[1e-12, 0.5] (alpha in (0, 100])",
                        s / radius,
                    )
                })?)
            }
            MechanismKind::SubsampledGaussian { sigma, q } => return sub(Base::Gaussian, sigma, q),
            MechanismKind::SubsampledGaussianMix {
                sigma,
                sigma2,
                weight,
                q,
                side,
            } => {
                // Each direction's law is the mixture of the parts' laws in it (§2.8),
                // each part's pair that of its own SPEC.
                let mut part = |sigma: f64| -> Result<(SharedPart, SharedPart), SpecError> {
                    let key = (
                        sigma.to_bits(),
                        q.to_bits(),
                        self.sensitivity.to_bits(),
                        format!("{:?}", self.pipeline),
                    );
                    if let Some(p) = cache.get(&key) {
                        return Ok(p.clone());
                    }
                    let (r, a) = MechanismSpec {
                        kind: MechanismKind::SubsampledGaussian { sigma, q },
                        ..self.clone()
                    }
                    .laws()?;
                    let Some(a) = a else {
                        return Err(SpecError(format!(
                            "{kind}: a mixture of asymmetric pairs only"
                        )));
                    };
                    let p = (SharedPart::new(r), SharedPart::new(a));
                    cache.insert(key, p.clone());
                    Ok(p)
                };
                let ((r1, a1), (r2, a2)) = (part(sigma)?, part(sigma2)?);
                let mix = |a: SharedPart, b: SharedPart| -> Box<dyn LossLaw> {
                    Box::new(RevealedMixture::new(
                        vec![
                            (weight, Box::new(a) as Box<dyn LossLaw>),
                            (1.0 - weight, Box::new(b)),
                        ],
                        side,
                    ))
                };
                return Ok((mix(r1, r2), Some(mix(a1, a2))));
            }
            MechanismKind::SubsampledLaplace { scale, q } => return sub(Base::Laplace, scale, q),
            MechanismKind::GaussianMixture { .. } => unreachable!("its laws are returned above"),
        };
        Ok((one, None))
    }

    /// The laws whose composition's *lower* ends hold, where they differ from
    /// [`Self::laws`] (whose upper ends hold): the dominated pair of a balls-in-bins epoch
    /// (§2.10). `None` for every other mechanism, whose two ends come from one law.
    pub fn lower_laws(&self) -> Result<Option<Laws>, SpecError> {
        if let Some(l) = self.fixed_replace_one_lower()? {
            return Ok(Some(l));
        }
        if let MechanismKind::BoundedRange { epsilon } = self.kind {
            // An attained instance: the exponential mechanism on two candidates whose
            // utilities swap between the neighbours, randomized response at ε/2 (§2.14).
            let rr = DiscreteLaw::randomized_response(0.5 * epsilon).map_err(|_| {
                SpecError(format!(
                    "exponential: epsilon = {epsilon} is outside the allowed range [1e-6, 50]"
                ))
            })?;
            return Ok(Some((Box::new(rr), None)));
        }
        if let MechanismKind::NoisyMax { noise, epsilon } = self.kind {
            let rr = DiscreteLaw::randomized_response(two_candidates_epsilon(noise, epsilon))
                .map_err(|_| {
                    SpecError(format!(
                        "{}: epsilon = {epsilon} is outside the allowed range [1e-6, 50]",
                        self.kind_name()
                    ))
                })?;
            return Ok(Some((Box::new(rr), None)));
        }
        if let MechanismKind::DiscreteLaplace { .. } = self.kind {
            // The rate rounded down: more noise, a dominated pair (§2.12); the same law
            // when 1/b has few enough bits to be the rate itself.
            let (_, up) = self.discrete_laplace_law(true)?;
            let (law, down) = self.discrete_laplace_law(false)?;
            return Ok((down != up).then(|| -> Laws { (Box::new(law), None) }));
        }
        Ok(self.allocation_laws()?.map(|l| -> Laws {
            (
                Box::new(l.remove_lower.clone()),
                Some(Box::new(l.add_lower.clone())),
            )
        }))
    }

    /// The discrete Laplace mechanism's law at the rate `t` bounding `1/scale` on the side
    /// asked ([`discrete_laplace_rate`]), its shift the sensitivity times the group, and
    /// that rate; the law's own error (naming `1/scale` or `sensitivity/scale`) else.
    fn discrete_laplace_law(&self, up: bool) -> Result<(DiscreteLaw, f64), SpecError> {
        let MechanismKind::DiscreteLaplace { scale } = self.kind else {
            return Err(SpecError(format!("{}: not a discrete Laplace", self.text)));
        };
        let s = self.sensitivity as u64 * self.pipeline.group as u64;
        let err = |e: crate::error::CompositionError| SpecError(format!("discrete-laplace: {e}"));
        let t = discrete_laplace_rate(scale, s, up).ok_or_else(|| {
            err(crate::error::out_of_range(
                "1/scale",
                1.0 / scale,
                "[1e-9, 700]",
            ))
        })?;
        Ok((DiscreteLaw::discrete_laplace(t, s).map_err(err)?, t))
    }

    /// A fixed-size batch under replace-one (§2.7, "Adaptive order"): its two orders,
    /// each composed alone, at the shift and rate rounded down. An adversary who keeps
    /// one order at every step attains that order's composition, so the larger of the
    /// two is a lower bound on the mechanism's ε; the symmetrised pair of
    /// [`Self::laws`] bounds it above, against any choice of orders.
    fn fixed_replace_one_lower(&self) -> Result<Option<Laws>, SpecError> {
        let (Sampling::Fixed { batch, n }, Neighbours::ReplaceOne) =
            (self.pipeline.sampling, self.pipeline.neighbours)
        else {
            return Ok(None);
        };
        let (base, scale) = match self.kind {
            MechanismKind::SubsampledGaussian { sigma, .. } => (Base::Gaussian, sigma),
            MechanismKind::SubsampledLaplace { scale, .. } => (Base::Laplace, scale),
            _ => return Ok(None),
        };
        let mu = div_down(2.0 * self.sensitivity, scale);
        let q = div_down(batch as f64, n as f64);
        if batch == n {
            // Every example in every batch: the unsampled pair, symmetric (`laws`).
            return Ok(None);
        }
        let law = |dir: Direction| {
            SubsampledLaw::new(base, mu, q, dir)
                .map_err(|e| SpecError(format!("{}: {e}", self.kind_name())))
        };
        Ok(Some((
            Box::new(law(Direction::Remove)?),
            Some(Box::new(law(Direction::Add)?)),
        )))
    }

    /// A balls-in-bins SPEC's shift `μ = s/σ` (range-checked) and steps an epoch; `None`
    /// for every other SPEC (the parser takes `sampling=allocation` only on the
    /// subsampled Gaussian).
    fn allocation_shift(&self) -> Result<Option<(f64, u64)>, SpecError> {
        let (Sampling::Allocation { steps }, MechanismKind::SubsampledGaussian { sigma, .. }) =
            (self.pipeline.sampling, &self.kind)
        else {
            return Ok(None);
        };
        let mu = div_up(self.sensitivity, *sigma);
        if !(1e-6..=crate::accountant::sampling::allocation::MAX_SHIFT).contains(&mu) {
            return Err(SpecError(format!(
                "{kind}: sensitivity/sigma = {mu:e} is outside the range [1e-6, {max}] of \
                 balls-in-bins epochs (sigma at least sensitivity/{max}: beyond, an \
                 epoch's likelihood ratio is too wide for its laws' grid)",
                kind = self.kind_name(),
                max = crate::accountant::sampling::allocation::MAX_SHIFT
            )));
        }
        Ok(Some((mu, steps)))
    }

    /// A balls-in-bins SPEC's epoch laws (built once per process, §2.10).
    fn allocation_laws(&self) -> Result<Option<Arc<EpochLaws>>, SpecError> {
        let Some((mu, t)) = self.allocation_shift()? else {
            return Ok(None);
        };
        epoch_laws(mu, t, EpochGrid::default())
            .map(Some)
            .map_err(|e| SpecError(format!("{}: {e}", self.kind_name())))
    }

    /// Whether only the lower end of this mechanism's bracket is certified (shuffled
    /// epochs, accounted through a post-processing: §2.9).
    pub fn lower_bound_only(&self) -> bool {
        matches!(self.pipeline.sampling, Sampling::Shuffle { .. })
    }

    /// The kind's name as written in a SPEC.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            MechanismKind::Gaussian { .. } => "gaussian",
            MechanismKind::Laplace { .. } => "laplace",
            MechanismKind::RandomizedResponse { .. } => "rr",
            MechanismKind::TruncatedLaplace { .. } => "truncated-laplace",
            MechanismKind::ApproxDp { .. } => "approx-dp",
            MechanismKind::BoundedRange { .. } => "exponential",
            MechanismKind::NoisyMax {
                noise: NoisyMaxNoise::Exponential,
                ..
            } => "permute-and-flip",
            MechanismKind::NoisyMax { .. } => "report-noisy-max",
            MechanismKind::DiscreteLaplace { .. } => "discrete-laplace",
            MechanismKind::DiscreteGaussian { .. } => "discrete-gaussian",
            MechanismKind::Bounded { .. } => "bounded",
            MechanismKind::SubsampledGaussian { .. } => "subsampled-gaussian",
            MechanismKind::SubsampledLaplace { .. } => "subsampled-laplace",
            MechanismKind::SubsampledGaussianMix { .. } => "subsampled-gaussian",
            MechanismKind::GaussianMixture { .. } => "gaussian-mixture",
        }
    }
}

/// Part laws of revealed mixtures by `(σ, q, sensitivity, pipeline)`: each direction's,
/// shared by the mixtures of one composition ([`MechanismSpec::laws_sharing`]).
pub(crate) type PartCache =
    std::collections::HashMap<(u64, u64, u64, String), (SharedPart, SharedPart)>;

/// The randomized response an instance of report-noisy-max on two candidates is, whose
/// utilities (1, 0) and (0, 1) swap between the neighbours (docs/accountant.md §2.15):
/// with exponential noise (permute-and-flip) `P(first) = 1 − e^{−ε/2}/2`, log-odds
/// `ln(2e^{ε/2} − 1)`; with Laplace noise of scale `b = 2/ε` the difference of the two
/// noises exceeds `x ≥ 0` with probability `e^{−x/b}(2 + x/b)/4`, so `Q(first) =
/// T = e^{−ε/2}(2 + ε/2)/4` and the log-odds are `ln((1 − T)/T)`. Lowered by 64 ulps
/// (relative) against the few roundings of each formula: a lower end's pair may only
/// be weaker than the instance.
pub fn two_candidates_epsilon(noise: NoisyMaxNoise, eps: f64) -> f64 {
    let e = match noise {
        NoisyMaxNoise::Exponential => (2.0 * (0.5 * eps).exp_m1()).ln_1p(),
        NoisyMaxNoise::Laplace => {
            let t = (-0.5 * eps).exp() * (2.0 + 0.5 * eps) / 4.0;
            // 1 − 2T without cancelling its leading terms.
            let gap = -(-0.5 * eps).exp_m1() - (-0.5 * eps).exp() * 0.25 * eps;
            (gap / t).ln_1p()
        }
    };
    e * (1.0 - 64.0 * f64::EPSILON)
}

/// Whether some spec's lower ends come from dominated laws of their own (a two-sided
/// bracket whose width includes the gap between two pairs: balls-in-bins epochs,
/// fixed-size batches under replace-one).
/// It depends on the pipeline only, not on the values of the keys.
pub fn has_dominated_laws(specs: &[MechanismSpec]) -> bool {
    specs.iter().any(|s| {
        let subsampled = matches!(
            s.kind,
            MechanismKind::SubsampledGaussian { .. } | MechanismKind::SubsampledLaplace { .. }
        );
        if matches!(
            s.kind,
            MechanismKind::BoundedRange { .. } | MechanismKind::NoisyMax { .. }
        ) {
            return true;
        }
        match (s.pipeline.sampling, s.pipeline.neighbours) {
            (Sampling::Allocation { .. }, _) => true,
            (Sampling::Fixed { batch, n }, Neighbours::ReplaceOne) => subsampled && batch < n,
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parser takes bounded noise exactly where `laws` builds its law (its range
    /// checked without the quadratures): at radii an ulp either side of both ends of
    /// sensitivity/radius in [1e-12, 0.5], with a sensitivity and a group (the shift is
    /// their product, rounded up), and with `laws`'s message where it refuses.
    #[test]
    fn bounded_noise_parses_exactly_where_its_law_builds() {
        let ulps = |x: f64, k: i64| f64::from_bits((x.to_bits() as i64 + k) as u64);
        for (sens, group) in [(1.0, 1), (0.7, 7), (3.0, 2)] {
            for fam in ["family=power,alpha=2", "family=exp"] {
                let text =
                    |r: f64| format!("bounded:{fam},radius={r:e},sensitivity={sens},group={group}");
                let mut spec: MechanismSpec = text(1e3).parse().unwrap();
                let MechanismKind::Bounded { family, .. } = spec.kind else {
                    panic!("{}", text(1e3))
                };
                let s = sens * group as f64;
                let mut radii = Vec::new();
                for edge in [2.0 * s, 1e12 * s, 2.0 * sens, 1e12 * sens] {
                    radii.extend((-3..=3).map(|k| ulps(edge, k)));
                }
                for r in radii {
                    spec.kind = MechanismKind::Bounded { family, radius: r };
                    let built = spec.laws().map(|_| ()).map_err(|e| e.0);
                    let parsed = text(r)
                        .parse::<MechanismSpec>()
                        .map(|_| ())
                        .map_err(|e| e.0);
                    assert_eq!(parsed, built, "{}", text(r));
                }
            }
        }
    }
}
