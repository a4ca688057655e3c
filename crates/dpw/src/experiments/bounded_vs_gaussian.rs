//! Kind `bounded_vs_gaussian`: Dagan–Kur (2022) Figure 1 — the noise needed to answer k
//! sensitivity-1 queries under (ε, δ)-DP, bounded noise against the Gaussian mechanism,
//! normalised by `√(k log(1/δ))/ε` (formulas.md §1.2, §1.4).
//!
//! Per point `(k, ε, δ)`:
//! - series `bounded`: the certified radius `R` (absolute bound on every error);
//! - series `bounded_beta_<β>`: `R·L` with `P(|X| > L) ≤ β/k` (max error w.p. 1 − β);
//! - series `gauss_beta_<β>`: `σ·t` with σ the analytic Gaussian scale for L2 sensitivity
//!   √k and `t` the (1 − β)-quantile of the max of k standard half-normals.
//!
//! Columns: `panel,series,x,y,k,epsilon,delta,value` where `value` is the unnormalised
//! bound and `y = value / norm`. `x` is the varied parameter (k, log10(1/δ) or ε).
//!
//! ```toml
//! [params]
//! density = { family = "power", alpha = 2.0 }   # or { family = "exp" }
//! bounded_beta = 0.05
//! gaussian_betas = [0.5, 0.05, 1e-3, 1e-6]
//! [[params.panels]]
//! key = "a"
//! vary = "k"                                    # or "log10_inv_delta", "epsilon"
//! grid = { logspace = [1e2, 1e10], n = 8, integer = true }
//! epsilon = 0.1                                 # the two parameters not varied
//! delta = 1e-10
//! ```

use super::{count, distinct, open_unit, positive, Job};
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use densities::bounded::BoundedFamily;
use mgf::BoundedNoise;
use rayon::prelude::*;
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "bounded_vs_gaussian",
    about: "Dagan–Kur Fig. 1: certified bounded-noise radius vs Gaussian max-of-k error",
    prepare,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    density: DensityParams,
    bounded_beta: f64,
    gaussian_betas: Vec<f64>,
    panels: Vec<PanelParams>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DensityParams {
    family: String,
    alpha: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
enum Vary {
    #[serde(rename = "k")]
    K,
    #[serde(rename = "log10_inv_delta")]
    Log10InvDelta,
    #[serde(rename = "epsilon")]
    Epsilon,
}

impl Vary {
    fn name(self) -> &'static str {
        match self {
            Vary::K => "k",
            Vary::Log10InvDelta => "log10_inv_delta",
            Vary::Epsilon => "epsilon",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PanelParams {
    key: String,
    vary: Vary,
    grid: Grid,
    k: Option<f64>,
    epsilon: Option<f64>,
    delta: Option<f64>,
}

/// One point to compute: the varied value and the full parameter triple.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    panel: usize,
    x: f64,
    k: f64,
    epsilon: f64,
    delta: f64,
}

/// The validated job.
#[derive(Debug)]
struct BoundedVsGaussian {
    family: BoundedFamily,
    bounded_beta: f64,
    gaussian_betas: Vec<f64>,
    panel_keys: Vec<String>,
    points: Vec<Point>,
}

/// Largest log10(1/δ) for which δ is still a normal double.
const MAX_LOG10_INV_DELTA: f64 = 307.0;

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let family = match p.density.family.as_str() {
        "power" => {
            let alpha = p.density.alpha.ok_or_else(|| {
                KeyError::new(
                    "params.density.alpha",
                    "required for family = \"power\" (a number > 0)",
                )
            })?;
            let alpha = positive("params.density.alpha", alpha)?;
            BoundedFamily::power(alpha)
                .map_err(|e| KeyError::new("params.density.alpha", e.to_string()))?
        }
        "exp" => {
            if p.density.alpha.is_some() {
                return Err(KeyError::new(
                    "params.density.alpha",
                    "only allowed with family = \"power\"",
                ));
            }
            BoundedFamily::exp()
        }
        other => {
            return Err(KeyError::new(
                "params.density.family",
                format!("must be one of \"power\", \"exp\", got \"{other}\""),
            ))
        }
    };
    let bounded_beta = open_unit("params.bounded_beta", p.bounded_beta)?;
    for (i, &b) in p.gaussian_betas.iter().enumerate() {
        open_unit(&format!("params.gaussian_betas[{i}]"), b)?;
    }
    let beta_names: Vec<String> = p.gaussian_betas.iter().map(|b| b.to_string()).collect();
    distinct(&beta_names, |i| format!("params.gaussian_betas[{i}]"))?;

    if p.panels.is_empty() {
        return Err(KeyError::new(
            "params.panels",
            "must list at least one panel ([[params.panels]])",
        ));
    }
    let panel_keys: Vec<String> = p.panels.iter().map(|q| q.key.clone()).collect();
    distinct(&panel_keys, |i| format!("params.panels[{i}].key"))?;

    let mut points = Vec::new();
    for (i, panel) in p.panels.iter().enumerate() {
        let at = |name: &str| format!("params.panels[{i}].{name}");
        if panel.key.is_empty() {
            return Err(KeyError::new(at("key"), "must not be empty"));
        }
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
            .map(|v| positive(&at("epsilon"), v))
            .transpose()?;
        let delta = fixed("delta", panel.delta)?
            .map(|v| open_unit(&at("delta"), v))
            .transpose()?;
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
                    let epsilon = positive(&gk, x).map_err(|e| KeyError {
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
    }
    Ok(Box::new(BoundedVsGaussian {
        family,
        bounded_beta,
        gaussian_betas: p.gaussian_betas,
        panel_keys,
        points,
    }))
}

/// The computed bounds at one point (unnormalised).
struct PointBounds {
    radius: f64,
    radius_times_level: f64,
    gaussian: Vec<f64>,
}

impl BoundedVsGaussian {
    fn bounded_beta_key(&self) -> String {
        format!("bounded_beta_{}", self.bounded_beta)
    }

    fn compute(&self, noise: &BoundedNoise, pt: &Point) -> Result<PointBounds, String> {
        let Point {
            k, epsilon, delta, ..
        } = *pt;
        let what = || format!("k = {k:e}, epsilon = {epsilon:e}, delta = {delta:e}");
        let cert = mgf::certified_radius(noise, k, epsilon, delta)
            .map_err(|e| format!("certified radius at {}: {e}", what()))?;
        let level = noise.tail_level(self.bounded_beta / k);
        let sigma = densities::gaussian::analytic_sigma(epsilon, delta, k.sqrt())
            .map_err(|e| format!("analytic Gaussian sigma at {}: {e}", what()))?;
        let gaussian = self
            .gaussian_betas
            .iter()
            .map(|&b| sigma * densities::normal::max_abs_quantile(k, b))
            .collect();
        Ok(PointBounds {
            radius: cert.radius,
            radius_times_level: cert.radius * level,
            gaussian,
        })
    }
}

impl Job for BoundedVsGaussian {
    fn panel_keys(&self) -> Vec<String> {
        self.panel_keys.clone()
    }

    fn series_keys(&self) -> Vec<String> {
        let mut keys = vec!["bounded".to_string(), self.bounded_beta_key()];
        keys.extend(
            self.gaussian_betas
                .iter()
                .map(|b| format!("gauss_beta_{b}")),
        );
        keys
    }

    fn extra_columns(&self) -> Vec<String> {
        ["k", "epsilon", "delta", "value"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        self.points.len()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let noise = BoundedNoise::new(self.family)
            .map_err(|e| format!("bounded noise {}: {e}", self.family.name()))?;
        let bounds: Vec<PointBounds> = self
            .points
            .par_iter()
            .map(|pt| {
                let b = self.compute(&noise, pt);
                tick();
                b
            })
            .collect::<Result<_, _>>()?;
        let series = self.series_keys();
        let mut table = Table::new(self.extra_columns());
        for (panel_index, panel) in self.panel_keys.iter().enumerate() {
            for (s, key) in series.iter().enumerate() {
                for (pt, b) in self
                    .points
                    .iter()
                    .zip(&bounds)
                    .filter(|(pt, _)| pt.panel == panel_index)
                {
                    let value = match s {
                        0 => b.radius,
                        1 => b.radius_times_level,
                        _ => b.gaussian[s - 2],
                    };
                    let norm = (pt.k * -pt.delta.ln()).sqrt() / pt.epsilon;
                    table.push(Row {
                        panel: panel.clone(),
                        series: key.clone(),
                        x: pt.x,
                        y: value / norm,
                        extra: vec![pt.k, pt.epsilon, pt.delta, value],
                    });
                }
            }
        }
        Ok(table)
    }
}
