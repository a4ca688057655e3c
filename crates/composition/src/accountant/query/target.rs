//! What the solver is asked: the targets a value must meet, the SPEC template with its
//! unknown, and the keys it can take (docs/accountant.md §10).

use crate::accountant::input::spec::MechanismSpec;
use std::fmt;

/// Keys the solver can take as the unknown.
pub const SOLVABLE_KEYS: [&str; 7] = [
    "sigma",
    "scale",
    "radius",
    "epsilon",
    "q",
    "count",
    "sensitivity",
];

/// A privacy target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// `ε(δ) ≤ epsilon`: the composition is (ε, δ)-DP.
    Privacy {
        /// ε ≥ 0.
        epsilon: f64,
        /// δ ∈ (0, 1).
        delta: f64,
    },
    /// No membership test has power above `max_tpr` at false-positive rate `at_fpr`:
    /// `β(at_fpr) ≥ 1 − max_tpr` on the certified trade-off bracket (min over both
    /// directions, docs/accountant.md §10.2).
    AttackRisk {
        /// Largest true-positive rate allowed, in `(at_fpr, 1)`.
        max_tpr: f64,
        /// False-positive rate, in `(0, 1)`.
        at_fpr: f64,
    },
}

impl Target {
    pub(crate) fn check(&self) -> Result<(), SolveError> {
        match *self {
            Target::Privacy { epsilon, delta } => {
                if !(epsilon.is_finite() && epsilon >= 0.0) {
                    return Err(SolveError::Input(format!(
                        "epsilon = {epsilon} is outside the allowed range [0, inf)"
                    )));
                }
                if !(delta > 0.0 && delta < 1.0) {
                    return Err(SolveError::Input(format!(
                        "delta = {delta} is outside the allowed range (0, 1)"
                    )));
                }
            }
            Target::AttackRisk { max_tpr, at_fpr } => {
                if !(at_fpr > 0.0 && at_fpr < 1.0) {
                    return Err(SolveError::Input(format!(
                        "at-fpr = {at_fpr} is outside the allowed range (0, 1)"
                    )));
                }
                if !(max_tpr > at_fpr && max_tpr < 1.0) {
                    return Err(SolveError::Input(format!(
                        "max-tpr = {max_tpr} is outside the allowed range (at-fpr, 1) = \
                         ({at_fpr}, 1): every mechanism allows a test with power equal \
                         to its false-positive rate"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The target in words, for messages.
    pub fn describe(&self) -> String {
        match *self {
            Target::Privacy { epsilon, delta } => {
                format!("epsilon <= {epsilon} at delta = {delta:e}")
            }
            Target::AttackRisk { max_tpr, at_fpr } => {
                format!("attack power (TPR) <= {max_tpr} at FPR = {at_fpr}")
            }
        }
    }
}

/// Why a solve has no answer.
#[derive(Debug, Clone, PartialEq)]
pub enum SolveError {
    /// The template or a target is malformed (no `?`, two, a key the kind lacks, ...).
    Input(String),
    /// No value in the unknown's range is certified to meet the targets.
    Unmeetable(String),
    /// The work budget or the evaluation limit ended the search before both ends were
    /// certified.
    Unsettled(String),
    /// The accountant could not evaluate the composition at the values the search needed
    /// (one of its own limits: bin budget, loss range).
    Unresolved(String),
    /// The computation was cancelled ([`crate::accountant::Work::cancel`]).
    Interrupted,
}

impl fmt::Display for SolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolveError::Input(s)
            | SolveError::Unmeetable(s)
            | SolveError::Unsettled(s)
            | SolveError::Unresolved(s) => f.write_str(s),
            SolveError::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for SolveError {}

/// Why `key` does not change the privacy loss of a `kind` mechanism (`None`: it does).
/// Randomized response's loss is set by its ε alone, and the truncated Laplacian is
/// calibrated to the sensitivity it is applied at (docs/accountant.md §2.3, §2.4): for
/// either, `sensitivity` moves nothing, and a search over it would only end at its
/// budget.
fn ignored_key(kind: &str, key: &str) -> Option<&'static str> {
    match (kind, key) {
        ("rr", "sensitivity") => Some("randomized response's loss depends on its epsilon alone"),
        ("approx-dp", "sensitivity") => Some(
            "an (epsilon, delta)-DP black box carries its own guarantee: its loss depends on \
             epsilon and delta alone",
        ),
        ("truncated-laplace", "sensitivity") => Some(
            "the truncated Laplacian is calibrated to the sensitivity it is applied at: its \
             loss depends on epsilon and delta alone",
        ),
        _ => None,
    }
}

/// A list of mechanism SPECs with exactly one value written `?`.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    pub(crate) specs: Vec<String>,
    /// Which spec holds the `?`.
    pub(crate) index: usize,
    /// The key of the `?`.
    pub(crate) key: String,
    /// The kind of that spec.
    pub(crate) kind: String,
}

impl Template {
    /// Parses the SPECs; exactly one value must be `?`, on a key its kind has and the
    /// solver accepts ([`SOLVABLE_KEYS`]). The other values are checked by parsing the
    /// composition at a probe value of the unknown.
    pub fn parse<S: AsRef<str>>(specs: &[S]) -> Result<Self, SolveError> {
        if specs.is_empty() {
            return Err(SolveError::Input(
                "at least one mechanism is required".into(),
            ));
        }
        let mut found: Option<(usize, String, String)> = None;
        for (i, s) in specs.iter().enumerate() {
            let s = s.as_ref().trim();
            let (kind, rest) = s.split_once(':').unwrap_or((s, ""));
            for item in rest.split(',') {
                let Some((k, v)) = item.split_once('=') else {
                    continue;
                };
                if v.trim() != "?" {
                    continue;
                }
                let k = k.trim().to_string();
                if found.is_some() {
                    return Err(SolveError::Input(format!(
                        "{}: a second unknown '{k}=?': mark exactly one value with ?",
                        kind.trim()
                    )));
                }
                found = Some((i, k, kind.trim().to_string()));
            }
        }
        let Some((index, key, kind)) = found else {
            return Err(SolveError::Input(
                "no unknown: mark the value to solve for with ?, e.g. sigma=?".into(),
            ));
        };
        match crate::accountant::input::spec::kind_keys(&kind) {
            None => {
                return Err(SolveError::Input(format!(
                    "unknown mechanism kind '{kind}'"
                )))
            }
            Some(keys) => {
                let has = keys.contains(&key.as_str()) || key == "sensitivity" || key == "count";
                if !has {
                    return Err(SolveError::Input(format!(
                        "{kind}: the unknown '{key}=?' is not a key of this kind (its keys: {}, sensitivity, count)",
                        keys.join(", ")
                    )));
                }
            }
        }
        if !SOLVABLE_KEYS.contains(&key.as_str()) {
            return Err(SolveError::Input(format!(
                "{kind}: '{key}' cannot be solved for (solvable: {})",
                SOLVABLE_KEYS.join(", ")
            )));
        }
        if let Some(why) = ignored_key(&kind, &key) {
            return Err(SolveError::Input(format!(
                "{kind}: '{key}=?' does not affect this mechanism ({why}): no value of it \
                 meets or fails a target any differently; solve for another key"
            )));
        }
        Ok(Self {
            specs: specs
                .iter()
                .map(|s| s.as_ref().trim().to_string())
                .collect(),
            index,
            key,
            kind,
        })
    }

    /// The key of the unknown (`sigma`, `count`, ...).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The kind of the mechanism holding the unknown.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The SPECs as given (with the `?`).
    pub fn specs(&self) -> &[String] {
        &self.specs
    }

    /// Whether the unknown is an integer (`count`).
    pub fn integer(&self) -> bool {
        self.key == "count"
    }

    /// Whether a larger value leaks less (`sigma`, `scale`, `radius`).
    pub fn larger_is_safer(&self) -> bool {
        matches!(self.key.as_str(), "sigma" | "scale" | "radius")
    }

    /// The value written into a SPEC: shortest round-trip decimal (an integer for count).
    pub(crate) fn text(&self, v: f64) -> String {
        if self.integer() {
            format!("{}", v as u64)
        } else {
            format!("{v:e}")
        }
    }

    /// The SPECs with the unknown set to `v`.
    pub fn texts(&self, v: f64) -> Vec<String> {
        let mut out = self.specs.clone();
        let s = &self.specs[self.index];
        let (kind, rest) = s.split_once(':').unwrap_or((s.as_str(), ""));
        let items: Vec<String> = rest
            .split(',')
            .map(|item| match item.split_once('=') {
                Some((k, val)) if val.trim() == "?" => format!("{}={}", k.trim(), self.text(v)),
                _ => item.to_string(),
            })
            .collect();
        out[self.index] = format!("{kind}:{}", items.join(","));
        out
    }

    /// The composition with the unknown set to `v` (an error where `v`, or the
    /// combination it makes, is outside the SPEC language's ranges).
    pub fn instantiate(&self, v: f64) -> Result<Vec<MechanismSpec>, SolveError> {
        if !(v.is_finite() && v > 0.0) {
            return Err(SolveError::Input(format!(
                "{} = {v} is not positive",
                self.key
            )));
        }
        self.texts(v)
            .iter()
            .map(|t| t.parse::<MechanismSpec>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| SolveError::Input(e.0))
    }

    /// `[lo, hi]`: the values of the unknown the SPEC language accepts with the other
    /// values as given, found by probing (the ranges depend on the combination, e.g.
    /// `sensitivity/sigma` of a subsampled Gaussian lies in [1e-6, 50]).
    pub fn domain(&self) -> Result<(f64, f64), SolveError> {
        if self.integer() {
            let ok = |n: f64| self.instantiate(n).is_ok();
            if !ok(1.0) {
                return Err(self.instantiate(1.0).unwrap_err());
            }
            return Ok((1.0, crate::accountant::core::answer::MAX_COUNT as f64));
        }
        let ok = |v: f64| self.instantiate(v).is_ok();
        let starts = [
            1.0, 0.1, 10.0, 1e-3, 1e3, 1e-6, 1e6, 1e-9, 1e9, 1e-12, 1e12, 0.5, 2.0,
        ];
        let Some(&v0) = starts.iter().find(|&&v| ok(v)) else {
            // Report the error at the first probe: it names what is wrong with the rest.
            return Err(self.instantiate(1.0).unwrap_err());
        };
        // Widen by factors of 10 until a probe fails, then bisect the boundary in log.
        let edge = |up: bool| -> f64 {
            let f = if up { 10.0 } else { 0.1 };
            let mut good = v0;
            let mut bad = None;
            for _ in 0..700 {
                let next = good * f;
                if !(next.is_finite() && next > 0.0) || next >= 1e300 || next <= 1e-300 {
                    break;
                }
                if ok(next) {
                    good = next;
                } else {
                    bad = Some(next);
                    break;
                }
            }
            let Some(mut bad) = bad else { return good };
            for _ in 0..200 {
                let mid = (good * bad).sqrt();
                if (bad / good - 1.0).abs() < 1e-12 || mid == good || mid == bad {
                    break;
                }
                if ok(mid) {
                    good = mid;
                } else {
                    bad = mid;
                }
            }
            good
        };
        Ok((edge(false), edge(true)))
    }
}
