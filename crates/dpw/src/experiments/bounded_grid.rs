//! The parameter grid shared by the bounded-noise kinds (`bounded_vs_gaussian` for fig1,
//! `exact_bounded_radius` for fig19): a density of docs/maths.md §1.4 and panels that vary
//! one of k, log10(1/δ) or ε with the other two fixed.

use super::{count, distinct, open_unit, positive};
use crate::error::KeyError;
use crate::grid::Grid;
use crate::ranges::{DELTA, EPSILON, POWER_ALPHA};
use densities::bounded::BoundedFamily;
use serde::Deserialize;

/// `density = { family = "power", alpha = 2.0 }` or `{ family = "exp" }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DensityParams {
    family: String,
    alpha: Option<f64>,
}

/// Which parameter a panel's grid varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Vary {
    /// The number of queries.
    #[serde(rename = "k")]
    K,
    /// `log10(1/δ)`.
    #[serde(rename = "log10_inv_delta")]
    Log10InvDelta,
    /// The privacy parameter ε.
    #[serde(rename = "epsilon")]
    Epsilon,
}

impl Vary {
    /// The manifest spelling.
    pub fn name(self) -> &'static str {
        match self {
            Vary::K => "k",
            Vary::Log10InvDelta => "log10_inv_delta",
            Vary::Epsilon => "epsilon",
        }
    }
}

/// One `[[params.panels]]` entry: a key, the varied parameter and its grid, and the two
/// fixed parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PanelParams {
    /// Panel key.
    pub key: String,
    /// The varied parameter.
    pub vary: Vary,
    /// Its values.
    pub grid: Grid,
    /// Fixed k (absent when varied).
    pub k: Option<f64>,
    /// Fixed ε (absent when varied).
    pub epsilon: Option<f64>,
    /// Fixed δ (absent when log10(1/δ) is varied).
    pub delta: Option<f64>,
}

/// One point to compute: the varied value and the full parameter triple.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Index of the panel.
    pub panel: usize,
    /// The varied value as the grid gives it.
    pub x: f64,
    /// Number of queries.
    pub k: f64,
    /// ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
}

impl Point {
    /// The normalisation of Dagan–Kur Fig. 1: `√(k log(1/δ))/ε` (docs/maths.md §1.4).
    pub fn norm(&self) -> f64 {
        (self.k * -self.delta.ln()).sqrt() / self.epsilon
    }
}

/// Largest log10(1/δ) for which δ is still a normal double.
pub const MAX_LOG10_INV_DELTA: f64 = 307.0;

/// The density family of `params.density`.
pub fn density_family(d: &DensityParams) -> Result<BoundedFamily, KeyError> {
    match d.family.as_str() {
        "power" => {
            let alpha = d.alpha.ok_or_else(|| {
                KeyError::new(
                    "params.density.alpha",
                    "required for family = \"power\" (a number > 0)",
                )
            })?;
            let alpha = positive("params.density.alpha", alpha)?;
            let alpha = POWER_ALPHA.check("params.density.alpha", alpha)?;
            BoundedFamily::power(alpha)
                .map_err(|e| KeyError::new("params.density.alpha", e.to_string()))
        }
        "exp" => {
            if d.alpha.is_some() {
                return Err(KeyError::new(
                    "params.density.alpha",
                    "only allowed with family = \"power\"",
                ));
            }
            Ok(BoundedFamily::exp())
        }
        other => Err(KeyError::new(
            "params.density.family",
            format!("must be one of \"power\", \"exp\", got \"{other}\""),
        )),
    }
}

/// At least one panel, keys non-empty and distinct.
fn panel_keys_ok(keys: &[String]) -> Result<(), KeyError> {
    if keys.is_empty() {
        return Err(KeyError::new(
            "params.panels",
            "must list at least one panel ([[params.panels]])",
        ));
    }
    if let Some(i) = keys.iter().position(|k| k.is_empty()) {
        return Err(KeyError::new(
            format!("params.panels[{i}].key"),
            "must not be empty",
        ));
    }
    distinct(keys, |i| format!("params.panels[{i}].key"))
}

/// The panel keys and the validated points of every panel, in manifest order.
pub fn all_points(panels: &[PanelParams]) -> Result<(Vec<String>, Vec<Point>), KeyError> {
    let keys: Vec<String> = panels.iter().map(|q| q.key.clone()).collect();
    panel_keys_ok(&keys)?;
    let mut points = Vec::new();
    for (i, q) in panels.iter().enumerate() {
        points.extend(panel_points(i, q)?);
    }
    Ok((keys, points))
}

/// The manifest key that holds `name` (k, epsilon or delta) for point `j` of panel `i`:
/// the grid entry when that parameter is varied, else the panel's fixed value.
pub fn key_of(i: usize, j: usize, panel: &PanelParams, name: &str) -> String {
    if name == panel.vary.name() || (name == "delta" && panel.vary == Vary::Log10InvDelta) {
        format!("params.panels[{i}].grid[{j}]")
    } else {
        format!("params.panels[{i}].{name}")
    }
}

/// The validated points of panel `i`.
fn panel_points(i: usize, panel: &PanelParams) -> Result<Vec<Point>, KeyError> {
    let at = |name: &str| format!("params.panels[{i}].{name}");
    let fixed = |name: &str, value: Option<f64>| -> Result<Option<f64>, KeyError> {
        if name == panel.vary.name() || (name == "delta" && panel.vary == Vary::Log10InvDelta) {
            return match value {
                Some(_) => Err(KeyError::new(
                    at(name),
                    format!(
                        "must not be given when vary = \"{}\" (the grid gives it)",
                        panel.vary.name()
                    ),
                )),
                None => Ok(None),
            };
        }
        value.map(Some).ok_or_else(|| {
            KeyError::new(
                at(name),
                format!("required when vary = \"{}\"", panel.vary.name()),
            )
        })
    };
    let k = fixed("k", panel.k)?
        .map(|v| count(&at("k"), v))
        .transpose()?;
    let epsilon = fixed("epsilon", panel.epsilon)?
        .map(|v| positive(&at("epsilon"), v).and_then(|v| EPSILON.check(&at("epsilon"), v)))
        .transpose()?;
    let delta = fixed("delta", panel.delta)?
        .map(|v| open_unit(&at("delta"), v).and_then(|v| DELTA.check(&at("delta"), v)))
        .transpose()?;
    let mut points = Vec::new();
    for (j, &x) in panel.grid.values().iter().enumerate() {
        let gk = at(&format!("grid[{j}]"));
        let point = match panel.vary {
            Vary::K => {
                let k = count(&gk, x).map_err(|e| KeyError {
                    message: format!(
                        "k {}; add `integer = true` to round a logspace/linspace grid",
                        e.message
                    ),
                    ..e
                })?;
                Point {
                    panel: i,
                    x,
                    k,
                    epsilon: epsilon.unwrap_or(f64::NAN),
                    delta: delta.unwrap_or(f64::NAN),
                }
            }
            Vary::Epsilon => {
                let epsilon = positive(&gk, x)
                    .and_then(|x| EPSILON.check(&gk, x))
                    .map_err(|e| KeyError {
                        message: format!("epsilon {}", e.message),
                        ..e
                    })?;
                Point {
                    panel: i,
                    x,
                    k: k.unwrap_or(f64::NAN),
                    epsilon,
                    delta: delta.unwrap_or(f64::NAN),
                }
            }
            Vary::Log10InvDelta => {
                let delta = 10f64.powf(-x);
                if !(x > 0.0 && x <= MAX_LOG10_INV_DELTA && delta < 1.0) {
                    return Err(KeyError::new(
                        gk,
                        format!(
                            "log10(1/delta) must be in (0, {MAX_LOG10_INV_DELTA}] with \
                             delta = 10^-x < 1 in double precision, got {x}"
                        ),
                    ));
                }
                Point {
                    panel: i,
                    x,
                    k: k.unwrap_or(f64::NAN),
                    epsilon: epsilon.unwrap_or(f64::NAN),
                    delta,
                }
            }
        };
        points.push(point);
    }
    Ok(points)
}
