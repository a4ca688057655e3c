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

mod laws;
pub(crate) use laws::PartCache;
pub use laws::{has_dominated_laws, two_candidates_epsilon};

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
