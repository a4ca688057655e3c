//! dp_accounting's `DpEvent` trees, as JSON, turned into SPECs (docs/from_dp_accounting.md).
//!
//! A node is an object with `"type"` (the event's class name, e.g. `"GaussianDpEvent"`) and
//! the event's fields by name; `"event"` and `"events"` hold child nodes:
//!
//! ```json
//! {"type": "SelfComposedDpEvent", "count": 1000,
//!  "event": {"type": "PoissonSampledDpEvent", "sampling_probability": 0.01,
//!            "event": {"type": "GaussianDpEvent", "noise_multiplier": 1.0}}}
//! ```
//!
//! Every event type of dp_accounting 0.6.0 is answered or refused with its path in the tree
//! (`event.events[2].event`) and the reason. `dpw account --events FILE` and the Python
//! package's `dpw.dp_accounting` both use this one translation.

use serde_json::Value;

/// The neighbour relation a tree is accounted under (dp_accounting's
/// `NeighboringRelation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// `ADD_OR_REMOVE_ONE`.
    AddRemove,
    /// `REPLACE_ONE`.
    ReplaceOne,
}

impl Relation {
    /// From dpw's spelling (`add-remove`, `replace-one`) or dp_accounting's
    /// (`ADD_OR_REMOVE_ONE`, `REPLACE_ONE`, any case).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.to_ascii_lowercase().as_str() {
            "add-remove" | "add_or_remove_one" => Ok(Self::AddRemove),
            "replace-one" | "replace_one" => Ok(Self::ReplaceOne),
            _ => Err(format!(
                "'{text}' is not one of: add-remove (ADD_OR_REMOVE_ONE), replace-one (REPLACE_ONE)"
            )),
        }
    }

    fn spec(self) -> &'static str {
        match self {
            Self::AddRemove => "add-remove",
            Self::ReplaceOne => "replace-one",
        }
    }
}

/// Largest count a tree may multiply to (the accountant's own limit is checked when the
/// SPECs are parsed; this keeps the products from overflowing first).
const MAX_PRODUCT: u64 = 1 << 40;

/// [`specs`] of a tree given as JSON text, under a relation given as text
/// ([`Relation::parse`]); errors name `neighbours` or say the text is not JSON.
pub fn specs_from_json(text: &str, relation: &str) -> Result<Vec<String>, String> {
    let relation = Relation::parse(relation).map_err(|e| format!("neighbours: {e}"))?;
    let tree: Value = serde_json::from_str(text)
        .map_err(|e| format!("not JSON ({})", crate::error::excerpt(&e.to_string())))?;
    specs(&tree, relation)
}

/// The SPECs of a tree, equal ones merged (their counts added), in first-seen order.
pub fn specs(tree: &Value, relation: Relation) -> Result<Vec<String>, String> {
    let mut parts: Vec<(String, u64)> = Vec::new();
    walk(tree, "event", relation, 1, &mut parts)?;
    let mut merged: Vec<(String, u64)> = Vec::new();
    for (s, c) in parts {
        match merged.iter_mut().find(|m| m.0 == s) {
            Some(m) => m.1 = m.1.saturating_add(c),
            None => merged.push((s, c)),
        }
    }
    Ok(merged
        .into_iter()
        .map(|(s, c)| format!("{s},count={c}"))
        .collect())
}

fn field<'a>(node: &'a Value, name: &str, path: &str, kind: &str) -> Result<&'a Value, String> {
    node.get(name)
        .ok_or_else(|| format!("{path}: {kind} has no field '{name}'"))
}

fn number(node: &Value, name: &str, path: &str, kind: &str) -> Result<f64, String> {
    field(node, name, path, kind)?
        .as_f64()
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("{path}.{name}: not a finite number"))
}

fn integer(node: &Value, name: &str, path: &str, kind: &str) -> Result<u64, String> {
    let v = field(node, name, path, kind)?;
    v.as_u64()
        .or_else(|| {
            v.as_f64()
                .filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x <= 9e15)
                .map(|x| x as u64)
        })
        .ok_or_else(|| format!("{path}.{name}: {v} is not a non-negative integer"))
}

fn refuse(path: &str, kind: &str, why: &str) -> String {
    format!("{path}: {kind} is refused: {why}")
}

fn walk(
    node: &Value,
    path: &str,
    relation: Relation,
    times: u64,
    out: &mut Vec<(String, u64)>,
) -> Result<(), String> {
    let kind = node
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{path}: not an event (an object with a \"type\" string)"))?;
    let num = |name: &str| number(node, name, path, kind);
    let mut push = |spec: String| out.push((spec, times));
    match kind {
        "NoOpDpEvent" => {}
        "ComposedDpEvent" => {
            let list = field(node, "events", path, kind)?
                .as_array()
                .ok_or_else(|| format!("{path}.events: not a list"))?;
            for (i, e) in list.iter().enumerate() {
                walk(e, &format!("{path}.events[{i}]"), relation, times, out)?;
            }
        }
        "SelfComposedDpEvent" => {
            let n = integer(node, "count", path, kind)?;
            let t = times
                .checked_mul(n)
                .filter(|&t| t <= MAX_PRODUCT)
                .ok_or_else(|| format!("{path}.count: the tree's counts multiply beyond 1e10"))?;
            if t > 0 {
                walk(
                    field(node, "event", path, kind)?,
                    &format!("{path}.event"),
                    relation,
                    t,
                    out,
                )?;
            }
        }
        "GaussianDpEvent" => push(format!("gaussian:sigma={}", num("noise_multiplier")?)),
        "LaplaceDpEvent" => push(format!("laplace:scale={}", num("noise_multiplier")?)),
        "DiscreteLaplaceDpEvent" => {
            let t = num("noise_parameter")?;
            if t <= 0.0 {
                return Err(format!("{path}.noise_parameter: {t} is not positive"));
            }
            let s = integer(node, "sensitivity", path, kind)?;
            push(format!(
                "discrete-laplace:scale={},sensitivity={s}",
                1.0 / t
            ));
        }
        "RandomizedResponseDpEvent" => {
            let p = num("noise_parameter")?;
            let k = integer(node, "num_buckets", path, kind)?;
            if k != 2 {
                return Err(refuse(
                    path,
                    kind,
                    &format!(
                        "num_buckets = {k}: only two buckets (binary randomized response) \
                         have a law in dpw yet"
                    ),
                ));
            }
            if !(p > 0.0 && p <= 1.0) {
                return Err(format!("{path}.noise_parameter: {p} is outside (0, 1]"));
            }
            if p < 1.0 {
                // A uniform bucket with probability p, else the truth.
                push(format!("rr:epsilon={}", ((2.0 - p) / p).ln()));
            }
        }
        // Events of dp_accounting's main branch after 0.6.0.
        "EpsilonDeltaDpEvent" => push(format!(
            "approx-dp:epsilon={},delta={}",
            num("epsilon")?,
            num("delta")?
        )),
        "ExponentialMechanismDpEvent" | "PermuteAndFlipDpEvent" => {
            // ε-bounded-range (dp_accounting composes it as ε²/8-zCDP too) and ε-DP
            // selection; ε = 0 releases nothing.
            let e = num("epsilon")?;
            let kind = if kind == "ExponentialMechanismDpEvent" {
                "exponential"
            } else {
                "permute-and-flip"
            };
            if e != 0.0 {
                push(format!("{kind}:epsilon={e}"));
            }
        }
        "DiscreteGaussianDpEvent" => {
            let dim = match node.get("dimension") {
                None | Some(Value::Null) => 1,
                Some(_) => integer(node, "dimension", path, kind)?,
            };
            if dim != 1 {
                return Err(refuse(
                    path,
                    kind,
                    &format!("dimension = {dim}: dpw's discrete Gaussian is one-dimensional"),
                ));
            }
            let s = match node.get("sensitivity") {
                None | Some(Value::Null) => 1.0,
                Some(_) => num("sensitivity")?,
            };
            push(format!(
                "discrete-gaussian:sigma={},sensitivity={s}",
                num("sigma")?
            ));
        }
        "RandomAllocationDpEvent" => {
            let inner = field(node, "event", path, kind)?;
            let ipath = format!("{path}.event");
            if inner.get("type").and_then(Value::as_str) != Some("GaussianDpEvent") {
                return Err(refuse(
                    &ipath,
                    inner.get("type").and_then(Value::as_str).unwrap_or("?"),
                    "dpw allocates Gaussian events only (balls-in-bins, §2.10)",
                ));
            }
            let selected = integer(node, "num_selected", path, kind)?;
            if selected != 1 {
                return Err(refuse(
                    path,
                    kind,
                    &format!("num_selected = {selected}: dpw's balls-in-bins puts each example in one step"),
                ));
            }
            push(format!(
                "subsampled-gaussian:sigma={},sampling=allocation,steps={}",
                number(inner, "noise_multiplier", &ipath, "GaussianDpEvent")?,
                integer(node, "num_steps", path, kind)?
            ));
        }
        "MixtureOfGaussiansDpEvent" => {
            if relation != Relation::AddRemove {
                return Err(refuse(
                    path,
                    kind,
                    "dpw has its pair under add/remove neighbours only",
                ));
            }
            let list = |name: &str| -> Result<String, String> {
                let v = field(node, name, path, kind)?
                    .as_array()
                    .ok_or_else(|| format!("{path}.{name}: not a list"))?;
                let xs: Result<Vec<String>, String> = v
                    .iter()
                    .map(|x| {
                        x.as_f64()
                            .filter(|x| x.is_finite())
                            .map(|x| x.to_string())
                            .ok_or_else(|| format!("{path}.{name}: {x} is not a finite number"))
                    })
                    .collect();
                Ok(xs?.join(";"))
            };
            push(format!(
                "gaussian-mixture:sigma={},shifts={},probs={}",
                num("standard_deviation")?,
                list("sensitivities")?,
                list("sampling_probs")?
            ));
        }
        "PoissonSampledDpEvent" | "SampledWithoutReplacementDpEvent" => {
            let inner = field(node, "event", path, kind)?;
            let ipath = format!("{path}.event");
            let ikind = inner.get("type").and_then(Value::as_str).unwrap_or("?");
            let base = match ikind {
                "GaussianDpEvent" => "subsampled-gaussian:sigma",
                "LaplaceDpEvent" => "subsampled-laplace:scale",
                _ => {
                    return Err(refuse(
                        &ipath,
                        ikind,
                        &format!("dpw samples Gaussian and Laplace events only (inside {kind})"),
                    ))
                }
            };
            let noise = number(inner, "noise_multiplier", &ipath, ikind)?;
            let sampler = if kind == "PoissonSampledDpEvent" {
                format!("q={}", num("sampling_probability")?)
            } else {
                format!(
                    "sampling=fixed,batch={},n={}",
                    integer(node, "sample_size", path, kind)?,
                    integer(node, "source_dataset_size", path, kind)?
                )
            };
            // dp_accounting's noise multiplier is over the relation's own sensitivity:
            // under replace-one the distance between two examples' contributions, twice
            // the clipping norm that dpw's subsampled kinds take as their sensitivity.
            let half = if relation == Relation::ReplaceOne {
                ",sensitivity=0.5"
            } else {
                ""
            };
            push(format!(
                "{base}={noise},{sampler},neighbours={}{half}",
                relation.spec()
            ));
        }
        "NonPrivateDpEvent" => {
            return Err(refuse(
                path,
                kind,
                "a non-private event has no finite epsilon",
            ))
        }
        "UnsupportedDpEvent" => {
            return Err(refuse(path, kind, "dp_accounting marks it unsupported"))
        }
        "ZCDpEvent" => return Err(refuse(
            path,
            kind,
            "a rho-zCDP guarantee alone has no tight pair (its conversion is an upper bound only)",
        )),
        "SampledWithReplacementDpEvent" => {
            return Err(refuse(
                path,
                kind,
                "sampling with replacement has no law in dpw yet",
            ))
        }
        "TruncatedSubsampledGaussianDpEvent" => {
            return Err(refuse(
                path,
                kind,
                "capped Poisson batches have no law in dpw yet",
            ))
        }
        "SingleEpochTreeAggregationDpEvent" => {
            return Err(refuse(path, kind, "tree aggregation has no law in dpw yet"))
        }
        "RepeatAndSelectDpEvent" => {
            return Err(refuse(
                path,
                kind,
                "repeat-and-select has no tight law (not built yet)",
            ))
        }
        other => {
            return Err(format!(
                "{path}: {other} is not a dp_accounting event dpw knows"
            ))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn nested_counts_multiply_and_equal_specs_merge() {
        let t = tree(
            r#"{"type": "ComposedDpEvent", "events": [
                {"type": "SelfComposedDpEvent", "count": 3, "event":
                    {"type": "SelfComposedDpEvent", "count": 4, "event":
                        {"type": "GaussianDpEvent", "noise_multiplier": 2.5}}},
                {"type": "NoOpDpEvent"},
                {"type": "GaussianDpEvent", "noise_multiplier": 2.5},
                {"type": "PoissonSampledDpEvent", "sampling_probability": 0.01,
                 "event": {"type": "LaplaceDpEvent", "noise_multiplier": 3}}]}"#,
        );
        assert_eq!(
            specs(&t, Relation::AddRemove).unwrap(),
            [
                "gaussian:sigma=2.5,count=13",
                "subsampled-laplace:scale=3,q=0.01,neighbours=add-remove,count=1"
            ]
        );
        let r = specs(&t, Relation::ReplaceOne).unwrap();
        assert!(r[1].ends_with("neighbours=replace-one,sensitivity=0.5,count=1"));
    }

    /// The events dp_accounting's main branch added after 0.6.0.
    #[test]
    fn newer_events() {
        let t = tree(
            r#"{"type": "ComposedDpEvent", "events": [
                {"type": "ExponentialMechanismDpEvent", "epsilon": 0.5},
                {"type": "ExponentialMechanismDpEvent", "epsilon": 0},
                {"type": "PermuteAndFlipDpEvent", "epsilon": 0.25},
                {"type": "EpsilonDeltaDpEvent", "epsilon": 1, "delta": 1e-6},
                {"type": "DiscreteGaussianDpEvent", "sigma": 10, "sensitivity": 2, "dimension": 1},
                {"type": "RandomAllocationDpEvent", "num_selected": 1, "num_steps": 100,
                 "event": {"type": "GaussianDpEvent", "noise_multiplier": 2}}]}"#,
        );
        assert_eq!(
            specs(&t, Relation::AddRemove).unwrap(),
            [
                "exponential:epsilon=0.5,count=1",
                "permute-and-flip:epsilon=0.25,count=1",
                "approx-dp:epsilon=1,delta=0.000001,count=1",
                "discrete-gaussian:sigma=10,sensitivity=2,count=1",
                "subsampled-gaussian:sigma=2,sampling=allocation,steps=100,count=1",
            ]
        );
        let dim = tree(r#"{"type": "DiscreteGaussianDpEvent", "sigma": 1, "dimension": 3}"#);
        assert!(specs(&dim, Relation::AddRemove)
            .unwrap_err()
            .contains("dimension = 3"));
    }

    #[test]
    fn refusals_name_the_path() {
        for (text, want) in [
            (
                r#"{"type": "ComposedDpEvent", "events": [{"type": "NonPrivateDpEvent"}]}"#,
                "event.events[0]: NonPrivateDpEvent is refused",
            ),
            (
                r#"{"type": "Nope"}"#,
                "event: Nope is not a dp_accounting event",
            ),
            (r#"{"noise_multiplier": 1}"#, "event: not an event"),
            (
                r#"{"type": "SelfComposedDpEvent", "count": 1e12, "event": {"type": "SelfComposedDpEvent", "count": 1e12, "event": {"type": "NoOpDpEvent"}}}"#,
                "multiply beyond",
            ),
            (
                r#"{"type": "GaussianDpEvent", "noise_multiplier": "x"}"#,
                "event.noise_multiplier: not a finite number",
            ),
        ] {
            let e = specs(&tree(text), Relation::AddRemove).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
    }
}
