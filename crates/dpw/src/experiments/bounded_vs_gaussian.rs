//! Kind `bounded_vs_gaussian`: Dagan–Kur (2022) Figure 1 — the noise needed to answer k
//! sensitivity-1 queries under (ε, δ)-DP, bounded noise against the Gaussian mechanism,
//! normalised by `√(k log(1/δ))/ε` (docs/maths.md §1.2, §1.4).
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

use super::bounded_grid::{all_points, density_family, DensityParams, PanelParams, Point};
use super::{distinct, open_unit, Job};
use crate::error::KeyError;
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

/// The validated job.
#[derive(Debug)]
struct BoundedVsGaussian {
    family: BoundedFamily,
    bounded_beta: f64,
    gaussian_betas: Vec<f64>,
    panel_keys: Vec<String>,
    points: Vec<Point>,
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let family = density_family(&p.density)?;
    let bounded_beta = open_unit("params.bounded_beta", p.bounded_beta)?;
    for (i, &b) in p.gaussian_betas.iter().enumerate() {
        open_unit(&format!("params.gaussian_betas[{i}]"), b)?;
    }
    let beta_names: Vec<String> = p.gaussian_betas.iter().map(|b| b.to_string()).collect();
    distinct(&beta_names, |i| format!("params.gaussian_betas[{i}]"))?;
    let (keys, points) = all_points(&p.panels)?;
    // About 0.13 s per point (fig1: 24 points in 3 s on the reference machine).
    crate::ranges::within_budget("params.panels", points.len(), 0.13)?;
    Ok(Box::new(BoundedVsGaussian {
        family,
        bounded_beta,
        gaussian_betas: p.gaussian_betas,
        panel_keys: keys,
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
                    let norm = pt.norm();
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
