//! The mechanism language of `dpw account` and of manifests:
//! `KIND:key=value[,key=value...]`, e.g. `gaussian:sigma=2,count=1000`.
//!
//! | kind | keys | loss law |
//! |---|---|---|
//! | `gaussian` | `sigma` | [`GaussianLaw`] with μ = sensitivity/σ (docs/accountant.md §2.1) |
//! | `laplace` | `scale` | [`ClippedLaplaceLaw::laplace`] with ε₀ = sensitivity/b (§2.2) |
//! | `rr` | `epsilon` | [`DiscreteLaw::randomized_response`] (§2.4) |
//! | `truncated-laplace` | `epsilon`, `delta` | [`ClippedLaplaceLaw::truncated_laplace`] (§2.3) |
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

use super::allocation::{epoch_laws, EpochGrid, EpochLaws};
use super::law::{BoundedNoiseLaw, ClippedLaplaceLaw, DiscreteLaw, GaussianLaw, LossLaw};
use super::max_statistic::MaxStatisticLaw;
use super::mixture::MixtureLaw;
use super::revealed::{RevealedMixture, SharedPart, Side};
use super::subsampled::{symmetrized, Base, Direction, SubsampledLaw};
use super::MAX_COUNT;
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
    /// A schedule's law between two lattice points (docs/accountant.md §2.8): with
    /// probability `weight` the Poisson-subsampled Gaussian at `sigma`, otherwise at
    /// `sigma2`, the choice published. Built by [`super::schedule::accounted`], never
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
    "gaussian, laplace, rr, truncated-laplace, bounded, subsampled-gaussian, subsampled-laplace";

/// The keys of a kind besides `sensitivity` and `count` (`None`: no such kind).
pub fn kind_keys(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "gaussian" => &["sigma", "group"],
        "laplace" => &["scale", "group"],
        "rr" => &["epsilon"],
        "truncated-laplace" => &["epsilon", "delta"],
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
    let steps = integer("steps", super::max_statistic::MAX_STEPS as f64, "[1, 1e6]")?;
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
        if b > n || n.div_ceil(b) > super::max_statistic::MAX_STEPS {
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
        // epoch's laws take seconds to build, so only its range is checked here.
        if spec.allocation_shift()?.is_none() {
            spec.laws()?;
        }
        Ok(spec)
    }
}

impl MechanismSpec {
    /// The privacy-loss laws of one use of the mechanism: of the pair (P, Q), and of
    /// (Q, P) when it differs (subsampled mechanisms; the others are symmetric).
    pub fn laws(&self) -> Result<Laws, SpecError> {
        self.laws_sharing(&mut PartCache::default())
    }

    /// As [`Self::laws`], a revealed mixture's parts taken from `cache` (and put there):
    /// the mixtures of a schedule's list then share their lattice laws, each of whose
    /// cells is computed once for all the groups of a lattice cell ([`SharedPart`]).
    fn laws_sharing(&self, cache: &mut PartCache) -> Result<Laws, SpecError> {
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
        Ok(self.allocation_laws()?.map(|l| -> Laws {
            (
                Box::new(l.remove_lower.clone()),
                Some(Box::new(l.add_lower.clone())),
            )
        }))
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
        if !(1e-6..=super::allocation::MAX_SHIFT).contains(&mu) {
            return Err(SpecError(format!(
                "{kind}: sensitivity/sigma = {mu:e} is outside the range [1e-6, {max}] of \
                 balls-in-bins epochs (sigma at least sensitivity/{max}: beyond, an \
                 epoch's likelihood ratio is too wide for its laws' grid)",
                kind = self.kind_name(),
                max = super::allocation::MAX_SHIFT
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
            MechanismKind::Bounded { .. } => "bounded",
            MechanismKind::SubsampledGaussian { .. } => "subsampled-gaussian",
            MechanismKind::SubsampledLaplace { .. } => "subsampled-laplace",
            MechanismKind::SubsampledGaussianMix { .. } => "subsampled-gaussian",
        }
    }
}

/// A composition in both directions of the loss: the pairs (P, Q) and, when some
/// mechanism is asymmetric, (Q, P); each answer is the larger of the two. When some
/// mechanism's lower end comes from other laws than its upper end (a balls-in-bins epoch,
/// §2.10), a second composition of those laws gives the lower ends.
#[derive(Debug)]
pub struct Composition {
    forward: super::Accountant,
    reverse: Option<super::Accountant>,
    lower: Option<Box<Composition>>,
    accuracy: Option<f64>,
}

impl Composition {
    /// Sets the requested relative accuracy of both directions (and of the composition
    /// of the lower laws, when some differ).
    pub fn with_accuracy(mut self, accuracy: f64) -> crate::error::Result<Self> {
        self.forward = self.forward.with_accuracy(accuracy)?;
        if let Some(r) = self.reverse.take() {
            self.reverse = Some(r.with_accuracy(accuracy)?);
        }
        if let Some(l) = self.lower.take() {
            self.lower = Some(Box::new(l.with_accuracy(accuracy)?));
        }
        self.accuracy = Some(accuracy);
        Ok(self)
    }

    /// Both directions charge `work` (docs/accountant.md §6): its budget stops their
    /// refinement, its cancellation their computation.
    pub fn with_work(mut self, work: super::Work) -> Self {
        self.forward = self.forward.with_work(work.clone());
        if let Some(r) = self.reverse.take() {
            self.reverse = Some(r.with_work(work.clone()));
        }
        if let Some(l) = self.lower.take() {
            self.lower = Some(Box::new(l.with_work(work)));
        }
        self
    }

    /// Certified bracket of ε(δ): the larger over the two directions. The reverse
    /// direction is refined only while it may exceed the forward one's lower end; its
    /// first step's upper end is computed beside the forward refinement (on the core
    /// that refinement leaves idle between its windows), and where it is already at most
    /// the forward lower end the reverse direction is settled, as its refinement would
    /// find on that same first step (the answer is the same to the bit).
    pub fn epsilon(&self, delta: f64) -> crate::error::Result<super::Answer> {
        let up = match &self.reverse {
            None => self.forward.epsilon(delta)?,
            Some(r) => {
                let ln_delta = delta.ln();
                let first = r.first_step_until(ln_delta);
                let aside = r.work().aside();
                let held = r.work().hold_for_aside();
                let (a, early) = super::pool::join(
                    || self.forward.epsilon(delta),
                    || {
                        super::work::limited(held, || {
                            r.epsilon_side_at_step_on(&aside, ln_delta, first, true)
                        })
                    },
                );
                // Counted after the forward refinement, whose budget checks it must not
                // reach at a moment set by the threads (an eighth of the budget left was
                // held for it meanwhile).
                r.work().absorb_held(&aside, held);
                let a = a?;
                match early {
                    // What `max_answer` of `a` and the reverse direction's first step gives.
                    Ok(up) if up <= a.lower => super::Answer {
                        step: a.step.min(first),
                        ..a
                    },
                    _ => max_answer(a, r.epsilon_ln_until(ln_delta, a.lower)?),
                }
            }
        };
        match &self.lower {
            None => Ok(up),
            Some(l) => Ok(two_sided(
                l.epsilon(delta)?,
                up,
                self.accuracy.unwrap_or(1e-4),
                false,
            )),
        }
    }

    /// Certified bracket of ε(δ) whose upper end is this composition's at `delta` and
    /// whose lower end is `lower`'s at `delta_lower` (≥ δ): a rounded schedule's two
    /// copies (docs/accountant.md §2.8), whose other ends bound nothing. The forward
    /// directions' two ends are computed side by side on each grid step, one thread each,
    /// and refined on the width between them; this one's reverse direction beside them on
    /// its own first step, refined only if its upper end is not below the forward one's.
    /// The lower end is the forward direction's of `lower` (the larger of the two
    /// directions' ε is at least it).
    /// Compositions with dominated lower laws of their own (§2.10) take each end from a
    /// two-sided evaluation of its composition.
    pub fn epsilon_with_lower(
        &self,
        delta: f64,
        lower: &Composition,
        delta_lower: f64,
    ) -> crate::error::Result<super::Answer> {
        let in_range = |d: f64| d > 0.0 && d < 1.0;
        if self.lower.is_some()
            || lower.lower.is_some()
            || !in_range(delta)
            || !in_range(delta_lower)
        {
            return Ok(two_sided(
                lower.epsilon(delta_lower)?,
                self.epsilon(delta)?,
                self.accuracy.unwrap_or(1e-4),
                false,
            ));
        }
        let ln_delta = delta.ln();
        let split = || {
            self.forward
                .epsilon_split(ln_delta, &lower.forward, delta_lower.ln())
        };
        let Some(r) = &self.reverse else {
            return split();
        };
        // The reverse direction's upper end on the step its refinement takes first (4×
        // coarser than a forward one's, or the pilot over a wide law's range: it is
        // usually far below) beside the split; refined only if it is not below the
        // forward direction's upper end.
        let aside = r.work().aside();
        let held = r.work().hold_for_aside();
        let (a, early) = super::pool::join(split, || {
            super::work::limited(held, || {
                r.epsilon_side_at_step_on(&aside, ln_delta, r.first_step_until(ln_delta), true)
            })
        });
        // Counted after the split, whose budget checks it must not reach at a moment set
        // by the threads (an eighth of the budget left was held for it meanwhile).
        r.work().absorb_held(&aside, held);
        let a = a?;
        let (upper, ln_upper, step) = match early {
            Ok(up) if up <= a.upper => (a.upper, a.ln_upper, a.step),
            _ => {
                let b = r.epsilon_ln_until(ln_delta, a.upper)?;
                if b.upper > a.upper {
                    (b.upper, b.ln_upper, a.step.min(b.step))
                } else {
                    (a.upper, a.ln_upper, a.step.min(b.step))
                }
            }
        };
        let width = if upper > 0.0 {
            (upper - a.lower) / upper
        } else {
            0.0
        };
        Ok(super::Answer {
            estimate: 0.5 * (a.lower + upper),
            upper,
            ln_upper,
            step,
            accuracy_met: width <= self.accuracy.unwrap_or(1e-4),
            ..a
        })
    }

    /// Certified bracket of ε(δ), refined only until it settles whether ε is at most
    /// `threshold` (its upper end at most `threshold`) or above it (its lower end above),
    /// or else to the accuracy asked: the solver's question (docs/accountant.md §10). The
    /// ends are certified as [`Self::epsilon`]'s; only the refinement stops sooner.
    pub fn epsilon_settling(
        &self,
        delta: f64,
        threshold: f64,
    ) -> crate::error::Result<super::Answer> {
        // Out of range (the error is `epsilon`'s), or lower ends from dominated laws
        // (§2.10): the full two-sided bracket.
        if !(delta > 0.0 && delta < 1.0) || self.lower.is_some() {
            return self.epsilon(delta);
        }
        let ln_delta = delta.ln();
        let a = self
            .forward
            .epsilon_ln_between(ln_delta, threshold, threshold)?;
        match &self.reverse {
            None => Ok(a),
            Some(r) => {
                // The reverse direction matters only above the forward one's lower end;
                // when the forward one meets the threshold (so its lower end is below
                // it), the reverse one must meet it too.
                let below = if a.upper <= threshold {
                    threshold
                } else {
                    a.lower
                };
                Ok(max_answer(
                    a,
                    r.epsilon_ln_between(ln_delta, below, threshold)?,
                ))
            }
        }
    }

    /// Whether one end of the bracket of ε(δ), on the grid step `step`, settles the
    /// solver's question at `threshold`: with `upper`, that ε ≤ `threshold` (the forward
    /// direction's upper end at `step` at most it, and the reverse one's, refined until
    /// it is or its accuracy is met); else that ε > `threshold` (the forward direction's
    /// lower end at `step` above it). `Ok(false)` means only "not settled by this end".
    /// `None` where one end is not enough to tell (dominated lower laws, §2.10) or δ is
    /// out of range: the caller asks [`Self::epsilon_settling`] instead. The forward
    /// direction's end is computed on the calling thread (docs/accountant.md §10.3).
    pub fn settles_at_step(
        &self,
        delta: f64,
        threshold: f64,
        step: f64,
        upper: bool,
    ) -> crate::error::Result<Option<bool>> {
        if !(delta > 0.0 && delta < 1.0) || self.lower.is_some() || step.is_nan() || step <= 0.0 {
            return Ok(None);
        }
        let ln_delta = delta.ln();
        let (Some(r), true) = (&self.reverse, upper) else {
            let end = self.forward.epsilon_side_at_step(ln_delta, step, upper)?;
            return Ok(Some(if upper {
                end <= threshold
            } else {
                end > threshold
            }));
        };
        // Both directions' upper ends on the same step, side by side; the reverse one is
        // refined further only when that step does not settle it.
        let (f, b) = super::pool::join(
            || self.forward.epsilon_side_at_step(ln_delta, step, true),
            || r.epsilon_side_at_step(ln_delta, step, true),
        );
        if f? > threshold {
            return Ok(Some(false));
        }
        if b? <= threshold {
            return Ok(Some(true));
        }
        Ok(Some(
            r.epsilon_ln_until(ln_delta, threshold)?.upper <= threshold,
        ))
    }

    /// Certified bracket of δ(ε): the larger over the two directions (the reverse one
    /// refined only while it may exceed the forward one).
    pub fn delta(&self, eps: f64) -> crate::error::Result<super::Answer> {
        let a = self.forward.delta(eps)?;
        let up = match &self.reverse {
            None => a,
            Some(r) => max_answer(a, r.delta_until(eps, a.ln_lower)?),
        };
        match &self.lower {
            None => Ok(up),
            Some(l) => Ok(two_sided(
                l.delta(eps)?,
                up,
                self.accuracy.unwrap_or(1e-3),
                true,
            )),
        }
    }
}

impl Composition {
    /// Certified brackets of the trade-off function at each α ∈ [0, 1]: for an asymmetric
    /// composition the pointwise minimum over the two directions (docs/accountant.md §9).
    pub fn tradeoff(&self, alphas: &[f64]) -> crate::error::Result<Vec<super::TradeoffPoint>> {
        let a = self.forward.tradeoff(alphas)?;
        let up = match &self.reverse {
            None => a,
            Some(r) => super::tradeoff::min_brackets(&a, &r.tradeoff(alphas)?),
        };
        match &self.lower {
            None => Ok(up),
            // The dominating laws' f is the smaller: its lower ends hold; the dominated
            // laws' upper ends hold.
            Some(l) => Ok(up
                .iter()
                .zip(l.tradeoff(alphas)?)
                .map(|(u, d)| super::TradeoffPoint {
                    alpha: u.alpha,
                    lower: u.lower,
                    upper: d.upper,
                })
                .collect()),
        }
    }

    /// The central-limit μ of the composition (the larger over the two directions, whose
    /// `G_μ` is the smaller trade-off function; docs/accountant.md §9).
    pub fn clt_mu(&self) -> crate::error::Result<f64> {
        let a = self.forward.clt_mu()?;
        match &self.reverse {
            None => Ok(a),
            Some(r) => Ok(a.max(r.clt_mu()?)),
        }
    }
}

/// The bracket whose lower end is `lo`'s (the dominated laws') and whose upper end is
/// `up`'s (the dominating laws'); its accuracy is met when both were and its own relative
/// width is within `acc`.
fn two_sided(lo: super::Answer, up: super::Answer, acc: f64, delta: bool) -> super::Answer {
    let (estimate, width) = if delta {
        (
            (0.5 * (lo.ln_lower + up.ln_upper)).exp(),
            -(lo.ln_lower - up.ln_upper).exp_m1(),
        )
    } else {
        (
            0.5 * (lo.lower + up.upper),
            if up.upper > 0.0 {
                (up.upper - lo.lower) / up.upper
            } else {
                0.0
            },
        )
    };
    super::Answer {
        lower: lo.lower,
        estimate,
        upper: up.upper,
        ln_lower: lo.ln_lower,
        ln_upper: up.ln_upper,
        step: lo.step.min(up.step),
        accuracy_met: lo.accuracy_met && up.accuracy_met && width <= acc,
    }
}

/// The bracket of `max(x, y)` from brackets of x and y. Its accuracy is met when each
/// side either met it or lies wholly below the other (then it does not move the max).
fn max_answer(a: super::Answer, b: super::Answer) -> super::Answer {
    let a_ok = a.accuracy_met || a.ln_upper <= b.ln_lower;
    let b_ok = b.accuracy_met || b.ln_upper <= a.ln_lower;
    super::Answer {
        lower: a.lower.max(b.lower),
        estimate: a.estimate.max(b.estimate),
        upper: a.upper.max(b.upper),
        ln_lower: a.ln_lower.max(b.ln_lower),
        ln_upper: a.ln_upper.max(b.ln_upper),
        step: a.step.min(b.step),
        accuracy_met: a_ok && b_ok,
    }
}

/// Part laws of revealed mixtures by `(σ, q, sensitivity, pipeline)`: each direction's,
/// shared by the mixtures of one composition ([`MechanismSpec::laws_sharing`]).
type PartCache = std::collections::HashMap<(u64, u64, u64, String), (SharedPart, SharedPart)>;

/// The composition of a list of specs (both directions when needed). A SPEC whose only
/// certified number is a lower bound (§2.9) is refused: [`lower_bound_accountant`] takes it.
pub fn accountant(specs: &[MechanismSpec]) -> Result<Composition, SpecError> {
    if let Some(s) = specs.iter().find(|s| s.lower_bound_only()) {
        return Err(SpecError(format!(
            "{}: no certified upper bound is known for this sampler (only a certified lower \
             bound, which `dpw account` reports)",
            s.text
        )));
    }
    lower_bound_accountant(specs)
}

/// The composition of a list of specs, lower-bound-only ones allowed: only the lower end
/// of its brackets holds for the mechanisms when some spec is
/// [`MechanismSpec::lower_bound_only`].
pub fn lower_bound_accountant(specs: &[MechanismSpec]) -> Result<Composition, SpecError> {
    let mut lowers = Vec::with_capacity(specs.len());
    for s in specs {
        lowers.push(s.lower_laws()?);
    }
    let lower = if lowers.iter().any(Option::is_some) {
        let mut laws = Vec::with_capacity(specs.len());
        for (s, l) in specs.iter().zip(lowers) {
            laws.push((
                match l {
                    Some(l) => l,
                    None => s.laws()?,
                },
                s,
            ));
        }
        Some(Box::new(compose(laws)?))
    } else {
        None
    };
    // One cache for the list: its mixtures share their parts.
    let mut cache = PartCache::default();
    let mut laws = Vec::with_capacity(specs.len());
    for s in specs {
        laws.push((s.laws_sharing(&mut cache)?, s));
    }
    drop(cache);
    let mut c = compose(laws)?;
    c.lower = lower;
    Ok(c)
}

/// The composition of the specs' dominating laws alone ([`MechanismSpec::laws`]): its
/// upper ends hold for the mechanisms; where some spec has dominated laws of its own
/// ([`MechanismSpec::lower_laws`]) its lower ends bound only the dominating pair's
/// composition. The solver searches each side of such a bracket on its own
/// (docs/accountant.md §10.3).
pub fn dominating_accountant(specs: &[MechanismSpec]) -> Result<Composition, SpecError> {
    let mut plain = accountant(specs)?;
    plain.lower = None;
    Ok(plain)
}

/// The composition of the specs' dominated laws ([`MechanismSpec::lower_laws`], each
/// spec's own laws where it has none): its lower ends hold for the mechanisms, its upper
/// ends only for those laws.
pub fn dominated_accountant(specs: &[MechanismSpec]) -> Result<Composition, SpecError> {
    let mut laws = Vec::with_capacity(specs.len());
    for s in specs {
        laws.push((
            match s.lower_laws()? {
                Some(l) => l,
                None => s.laws()?,
            },
            s,
        ));
    }
    compose(laws)
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
        match (s.pipeline.sampling, s.pipeline.neighbours) {
            (Sampling::Allocation { .. }, _) => true,
            (Sampling::Fixed { batch, n }, Neighbours::ReplaceOne) => subsampled && batch < n,
            _ => false,
        }
    })
}

/// The composition of each spec's laws (both directions when some law is asymmetric).
fn compose(laws: Vec<(Laws, &MechanismSpec)>) -> Result<Composition, SpecError> {
    let mut fwd = Vec::with_capacity(laws.len());
    let mut rev = Vec::with_capacity(laws.len());
    let mut asym = false;
    for ((a, b), s) in laws {
        match b {
            Some(b) => {
                asym = true;
                fwd.push((a, s.count));
                rev.push((b, s.count));
            }
            None => {
                // Symmetric: the same law in both directions.
                let again = s.laws()?.0;
                fwd.push((a, s.count));
                rev.push((again, s.count));
            }
        }
    }
    let err = |e: crate::error::CompositionError| SpecError(e.to_string());
    Ok(Composition {
        forward: super::Accountant::new(fwd).map_err(err)?,
        reverse: if asym {
            Some(super::Accountant::new(rev).map_err(err)?)
        } else {
            None
        },
        lower: None,
        accuracy: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ε(δ) with the reverse direction's first step beside the forward refinement is the
    /// answer of the two one after the other (`max_answer` of the forward refinement and
    /// the reverse one refined until below the forward lower end), to the bit, and costs
    /// no more work than that by more than one side of the reverse's first step: DP-SGD
    /// at one tenth of an expected use (settled by that step), and bounded noise beside a
    /// subsampled Gaussian at δ = 1e-126, whose reverse refinement starts at a pilot step
    /// over bounded noise's wide range (the beside step once took the step below it,
    /// 1.4e7 bins where the sequential answer took 2.4e6). The same for a rounded
    /// schedule's ends (`epsilon_with_lower`), whose beside step had always taken it.
    #[test]
    fn the_reverse_step_beside_gives_the_sequential_answer() {
        let cases: [(&[&str], f64); 2] = [
            (&["subsampled-gaussian:sigma=2,q=1e-4,count=1000"], 1e-6),
            (
                &[
                    "bounded:family=exp,radius=300",
                    "subsampled-gaussian:sigma=5,q=3.83e-09,group=3,count=10",
                ],
                1e-126,
            ),
        ];
        for (specs, delta) in cases {
            let specs: Vec<MechanismSpec> = specs.iter().map(|s| s.parse().unwrap()).collect();
            let (w_beside, w_seq) = (
                crate::accountant::Work::default(),
                crate::accountant::Work::default(),
            );
            let beside = accountant(&specs).unwrap().with_work(w_beside.clone());
            let got = beside.epsilon(delta).unwrap();
            let seq = accountant(&specs).unwrap().with_work(w_seq.clone());
            let a = seq.forward.epsilon(delta).unwrap();
            let r = seq.reverse.as_ref().expect("an asymmetric composition");
            let want = max_answer(a, r.epsilon_ln_until(delta.ln(), a.lower).unwrap());
            let bits = |x: &super::super::Answer| {
                [x.lower, x.estimate, x.upper, x.ln_lower, x.ln_upper, x.step].map(f64::to_bits)
            };
            assert_eq!(bits(&got), bits(&want), "{specs:?}: {got:?} vs {want:?}");
            assert_eq!(got.accuracy_met, want.accuracy_met);
            assert!(
                w_beside.done() as f64 <= 1.5 * w_seq.done() as f64,
                "{specs:?}: work {} beside against {} one after the other",
                w_beside.done(),
                w_seq.done()
            );
            // A rounded schedule's ends (`epsilon_with_lower`, here with the composition
            // as its own lower copy) take the reverse step beside their split on the
            // same first step: a bracket overlapping the plain one (both hold ε), for
            // about the same work (the step below the pilot cost 5.6x at δ = 1e-126).
            let w_lower = crate::accountant::Work::default();
            let twin = accountant(&specs).unwrap();
            let e = accountant(&specs)
                .unwrap()
                .with_work(w_lower.clone())
                .epsilon_with_lower(delta, &twin, delta)
                .unwrap();
            assert!(
                e.lower <= want.upper && want.lower <= e.upper,
                "{e:?} vs {want:?}"
            );
            assert!(
                w_lower.done() as f64 <= 2.0 * w_seq.done() as f64,
                "{specs:?}: work {} with the lower copy against {}",
                w_lower.done(),
                w_seq.done()
            );
        }
    }
}
