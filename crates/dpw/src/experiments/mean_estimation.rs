//! Kind `mean_estimation`: Balle & Wang (2018) Figure 1, right panels — private mean
//! estimation in d dimensions (docs/maths.md §4, their Section 5.2): mean L2 error over
//! datasets of the classical and analytic Gaussian mechanisms, the analytic one
//! denoised by (positive-part) James–Stein and by soft thresholding, and Laplace with L1
//! sensitivity, with ±1 sd error bars. One panel per ε.
//!
//! ```toml
//! [params]
//! n = 500
//! delta = 1e-4
//! datasets = 100
//! seed = 2018
//! d = [10, 20, 50, 100, 200, 500, 1000, 2000]
//! [[params.panels]]
//! key = "a"
//! epsilon = 0.01
//! ```
//! Series `cgm` (only where ε < 1), `agm`, `agm_js`, `agm_threshold`, `laplace`.
//! Columns: `panel,series,x,y,y_lo,y_hi,epsilon,sd` (x = d, y = mean error).

use super::{count, distinct, open_unit, positive, Job};
use crate::error::KeyError;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use denoise::mean_estimation::{mean_estimation, Method};
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "mean_estimation",
    about: "Balle–Wang Fig. 1 (right): private mean estimation error vs d, with denoising",
    prepare,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    n: f64,
    delta: f64,
    datasets: f64,
    seed: u64,
    d: Vec<f64>,
    panels: Vec<PanelParams>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PanelParams {
    key: String,
    epsilon: f64,
}

#[derive(Debug)]
struct MeanEstimation {
    n: usize,
    delta: f64,
    datasets: usize,
    seed: u64,
    dims: Vec<usize>,
    panels: Vec<(String, f64)>,
}

const SERIES: [(&str, Method); 5] = [
    ("cgm", Method::ClassicalGaussian),
    ("agm", Method::AnalyticGaussian),
    ("agm_js", Method::AnalyticJamesStein),
    ("agm_threshold", Method::AnalyticSoftThreshold),
    ("laplace", Method::Laplace),
];

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let n = count("params.n", p.n)?;
    if n > 1e6 {
        return Err(KeyError::new(
            "params.n",
            format!("must be at most 1e6, got {n}"),
        ));
    }
    let delta = open_unit("params.delta", p.delta)?;
    let datasets = count("params.datasets", p.datasets)?;
    if !(2.0..=10_000.0).contains(&datasets) {
        return Err(KeyError::new(
            "params.datasets",
            format!("must be an integer in [2, 10000], got {datasets}"),
        ));
    }
    if p.d.is_empty() {
        return Err(KeyError::new(
            "params.d",
            "must list at least one dimension",
        ));
    }
    let mut dims = Vec::new();
    for (i, &d) in p.d.iter().enumerate() {
        let key = format!("params.d[{i}]");
        let d = count(&key, d)?;
        if !(3.0..=100_000.0).contains(&d) || dims.last().is_some_and(|&l: &usize| l as f64 >= d) {
            return Err(KeyError::new(
                key,
                format!("must be increasing integers in [3, 100000] (James–Stein needs d >= 3), got {d}"),
            ));
        }
        if d * n > 1e9 {
            return Err(KeyError::new(
                key,
                format!("d * n must be at most 1e9, got {}", d * n),
            ));
        }
        dims.push(d as usize);
    }
    if p.panels.is_empty() {
        return Err(KeyError::new(
            "params.panels",
            "must list at least one panel",
        ));
    }
    let keys: Vec<String> = p.panels.iter().map(|q| q.key.clone()).collect();
    distinct(&keys, |i| format!("params.panels[{i}].key"))?;
    let mut panels = Vec::new();
    for (i, q) in p.panels.iter().enumerate() {
        let e = positive(&format!("params.panels[{i}].epsilon"), q.epsilon)?;
        panels.push((q.key.clone(), e));
    }
    Ok(Box::new(MeanEstimation {
        n: n as usize,
        delta,
        datasets: datasets as usize,
        seed: p.seed,
        dims,
        panels,
    }))
}

impl Job for MeanEstimation {
    fn panel_keys(&self) -> Vec<String> {
        self.panels.iter().map(|(k, _)| k.clone()).collect()
    }

    fn series_keys(&self) -> Vec<String> {
        SERIES.iter().map(|(k, _)| k.to_string()).collect()
    }

    fn extra_columns(&self) -> Vec<String> {
        ["y_lo", "y_hi", "epsilon", "sd"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        self.panels.len() * self.dims.len()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let mut results = Vec::new();
        for (pi, (_, eps)) in self.panels.iter().enumerate() {
            for (di, &d) in self.dims.iter().enumerate() {
                // Each point its own seed; datasets are parallel inside, reproducibly.
                let seed = self.seed.wrapping_add((pi * 1000 + di) as u64);
                let r = mean_estimation(d, self.n, *eps, self.delta, self.datasets, seed)
                    .map_err(|e| format!("d = {d}, epsilon = {eps}: {e}"))?;
                results.push((pi, d, *eps, r));
                tick();
            }
        }
        let mut table = Table::new(self.extra_columns());
        for (pi, (panel, _)) in self.panels.iter().enumerate() {
            for (key, method) in SERIES {
                for (_, d, eps, r) in results.iter().filter(|x| x.0 == pi) {
                    if let Some(s) = r.get(method) {
                        table.push(Row {
                            panel: panel.clone(),
                            series: key.to_string(),
                            x: *d as f64,
                            y: s.mean,
                            extra: vec![s.mean - s.sd, s.mean + s.sd, *eps, s.sd],
                        });
                    }
                }
            }
        }
        Ok(table)
    }
}
