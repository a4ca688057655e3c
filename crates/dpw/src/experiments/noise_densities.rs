//! Kind `noise_densities`: Geng, Ding, Guo & Kumar (2018) Figure 1 — the density of the
//! truncated Laplacian (docs/maths.md §1.3) beside the Laplace density of the pure-DP
//! calibration `b = Δ/ε` (§1.1) and the analytic Gaussian (§1.2) at the same (ε, δ).
//!
//! ```toml
//! [params]
//! sensitivity = 1.0
//! x = { linspace = [-6, 6], n = 1201 }
//! [[params.panels]]
//! key = "a"
//! epsilon = 1.0
//! delta = 0.1
//! ```
//! Series `truncated_laplace`, `laplace`, `analytic_gaussian`. The truncated Laplacian's
//! jumps at ±A are drawn exactly: its series gets the points ±A (inside) and 0 just
//! outside, besides the grid.
//! Columns: `panel,series,x,y,epsilon,delta,scale` (`scale` is λ, b or σ).

use super::{distinct, open_unit, positive, Job};
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::ranges::{DELTA, EPSILON, SENSITIVITY};
use crate::registry::Kind;
use crate::table::{Row, Table};
use densities::gaussian::analytic_sigma;
use densities::laplace::{laplace_scale, Laplace};
use densities::normal::Normal;
use densities::traits::Continuous;
use densities::truncated_laplace::TruncatedLaplace;
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "noise_densities",
    about: "Geng et al. Fig. 1: truncated Laplacian, Laplace and analytic Gaussian densities",
    prepare,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    sensitivity: f64,
    x: Grid,
    panels: Vec<PanelParams>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PanelParams {
    key: String,
    epsilon: f64,
    delta: f64,
}

#[derive(Debug)]
struct Panel {
    key: String,
    epsilon: f64,
    delta: f64,
    truncated: TruncatedLaplace,
    laplace_b: f64,
    sigma: f64,
}

#[derive(Debug)]
struct NoiseDensities {
    xs: Vec<f64>,
    panels: Vec<Panel>,
}

const SERIES: [&str; 3] = ["truncated_laplace", "laplace", "analytic_gaussian"];

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let sensitivity = positive("params.sensitivity", p.sensitivity)
        .and_then(|v| SENSITIVITY.check("params.sensitivity", v))?;
    if p.panels.is_empty() {
        return Err(KeyError::new(
            "params.panels",
            "must list at least one panel ([[params.panels]])",
        ));
    }
    let keys: Vec<String> = p.panels.iter().map(|q| q.key.clone()).collect();
    distinct(&keys, |i| format!("params.panels[{i}].key"))?;
    let mut panels = Vec::new();
    for (i, q) in p.panels.iter().enumerate() {
        let at = |k: &str| format!("params.panels[{i}].{k}");
        let epsilon =
            positive(&at("epsilon"), q.epsilon).and_then(|e| EPSILON.check(&at("epsilon"), e))?;
        let delta = open_unit(&at("delta"), q.delta).and_then(|d| DELTA.check(&at("delta"), d))?;
        crate::ranges::truncated_laplace_pair(&at("epsilon"), epsilon, delta)?;
        let truncated = TruncatedLaplace::new(epsilon, delta, sensitivity)
            .map_err(|e| KeyError::new(at("epsilon"), e.to_string()))?;
        let laplace_b = laplace_scale(epsilon, sensitivity)
            .map_err(|e| KeyError::new(at("epsilon"), e.to_string()))?;
        let sigma = analytic_sigma(epsilon, delta, sensitivity)
            .map_err(|e| KeyError::new(at("delta"), e.to_string()))?;
        panels.push(Panel {
            key: q.key.clone(),
            epsilon,
            delta,
            truncated,
            laplace_b,
            sigma,
        });
    }
    Ok(Box::new(NoiseDensities {
        xs: p.x.values().to_vec(),
        panels,
    }))
}

impl Job for NoiseDensities {
    fn panel_keys(&self) -> Vec<String> {
        self.panels.iter().map(|p| p.key.clone()).collect()
    }

    fn series_keys(&self) -> Vec<String> {
        SERIES.iter().map(|s| s.to_string()).collect()
    }

    fn extra_columns(&self) -> Vec<String> {
        ["epsilon", "delta", "scale"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        self.panels.len()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let mut table = Table::new(self.extra_columns());
        for p in &self.panels {
            let laplace = Laplace::new(p.laplace_b).map_err(|e| e.to_string())?;
            let normal = Normal::new(0.0, p.sigma).map_err(|e| e.to_string())?;
            let row = |series: &str, x: f64, y: f64, scale: f64| Row {
                panel: p.key.clone(),
                series: series.to_string(),
                x,
                y,
                extra: vec![p.epsilon, p.delta, scale],
            };
            // Truncated Laplacian: grid points plus the exact edges of the support.
            let a = p.truncated.a;
            let lo = self.xs[0];
            let hi = self.xs[self.xs.len() - 1];
            let mut tx: Vec<f64> = self.xs.clone();
            for edge in [-a, a] {
                if edge > lo && edge < hi {
                    tx.push(edge);
                    // Just outside the support: the density is 0 there.
                    tx.push(edge + edge.signum() * 1e-9 * a.max(1.0));
                }
            }
            tx.sort_by(f64::total_cmp);
            tx.dedup();
            for x in tx {
                table.push(row(SERIES[0], x, p.truncated.pdf(x), p.truncated.lambda));
            }
            for &x in &self.xs {
                table.push(row(SERIES[1], x, laplace.pdf(x), p.laplace_b));
            }
            for &x in &self.xs {
                table.push(row(SERIES[2], x, normal.pdf(x), p.sigma));
            }
            tick();
        }
        Ok(table)
    }
}
