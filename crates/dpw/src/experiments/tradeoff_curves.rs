//! Kind `tradeoff_curves`: Dong, Su & Zhang (2021), the one-dimensional picture — the
//! trade-off functions (docs/maths.md §2) of the Laplace mechanism calibrated to (ε, 0),
//! and of the analytic Gaussian (§1.2) and truncated Laplacian (§1.3) calibrated to
//! (ε, δ), against the (ε, δ)-DP budget `f_{ε,δ}`; and the variance each mechanism
//! needs, relative to Laplace's `2Δ²/ε²`, over a range of ε at the same δ.
//!
//! ```toml
//! [params]
//! sensitivity = 1.0
//! epsilon = 1.0
//! delta = 0.01
//! alpha = { linspace = [0, 1], n = 401 }
//! variance_epsilon = { logspace = [0.1, 10], n = 21 }
//! ```
//! Panels: `tradeoff` (x = α, y = β) with series `f_eps_delta`, `laplace`,
//! `analytic_gaussian`, `truncated_laplace`; `variance` (x = ε, y = variance ·
//! ε²/(2Δ²)) with the three mechanisms.
//! Columns: `panel,series,x,y,epsilon,delta,variance`.

use super::Job;
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use densities::gaussian::analytic_sigma;
use densities::tradeoff::{f_eps_delta, gaussian_tradeoff, laplace_tradeoff, shift_tradeoff};
use densities::traits::NoiseMoments;
use densities::truncated_laplace::TruncatedLaplace;
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "tradeoff_curves",
    about: "Dong–Su–Zhang, d = 1: trade-off curves of Laplace, Gaussian, truncated Laplacian vs f_{ε,δ}",
    prepare,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    sensitivity: f64,
    epsilon: f64,
    delta: f64,
    alpha: Grid,
    variance_epsilon: Grid,
}

#[derive(Debug)]
struct TradeoffCurves {
    sensitivity: f64,
    epsilon: f64,
    delta: f64,
    alphas: Vec<f64>,
    variance_epsilons: Vec<f64>,
}

const SERIES: [&str; 4] = [
    "f_eps_delta",
    "laplace",
    "analytic_gaussian",
    "truncated_laplace",
];

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let sensitivity = crate::ranges::SENSITIVITY.check("params.sensitivity", p.sensitivity)?;
    let epsilon = crate::ranges::EPSILON.check("params.epsilon", p.epsilon)?;
    let delta = crate::ranges::DELTA.check("params.delta", p.delta)?;
    crate::ranges::truncated_laplace_pair("params.epsilon", epsilon, delta)?;
    for (i, &a) in p.alpha.values().iter().enumerate() {
        if !(0.0..=1.0).contains(&a) {
            return Err(KeyError::new(
                format!("params.alpha[{i}]"),
                format!("must be in [0, 1], got {a}"),
            ));
        }
    }
    for (i, &e) in p.variance_epsilon.values().iter().enumerate() {
        let key = format!("params.variance_epsilon[{i}]");
        crate::ranges::EPSILON.check(&key, e)?;
        crate::ranges::truncated_laplace_pair(&key, e, delta)?;
    }
    Ok(Box::new(TradeoffCurves {
        sensitivity,
        epsilon,
        delta,
        alphas: p.alpha.values().to_vec(),
        variance_epsilons: p.variance_epsilon.values().to_vec(),
    }))
}

/// Noise variances `(Laplace, analytic Gaussian, truncated Laplacian)` at (ε, δ).
fn variances(eps: f64, delta: f64, sens: f64) -> Result<[f64; 3], String> {
    let b = sens / eps;
    let sigma = analytic_sigma(eps, delta, sens).map_err(|e| e.to_string())?;
    let tl = TruncatedLaplace::new(eps, delta, sens).map_err(|e| e.to_string())?;
    Ok([2.0 * b * b, sigma * sigma, tl.second_moment()])
}

impl Job for TradeoffCurves {
    fn panel_keys(&self) -> Vec<String> {
        vec!["tradeoff".into(), "variance".into()]
    }

    fn series_keys(&self) -> Vec<String> {
        SERIES.iter().map(|s| s.to_string()).collect()
    }

    fn extra_columns(&self) -> Vec<String> {
        ["epsilon", "delta", "variance"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        2
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let (eps, delta, sens) = (self.epsilon, self.delta, self.sensitivity);
        let b = sens / eps;
        let sigma = analytic_sigma(eps, delta, sens).map_err(|e| e.to_string())?;
        let tl = TruncatedLaplace::new(eps, delta, sens).map_err(|e| e.to_string())?;
        let var = variances(eps, delta, sens)?;
        let mut table = Table::new(self.extra_columns());
        let fail = |what: &str, e: densities::DensityError| format!("{what}: {e}");
        for (s, key) in SERIES.iter().enumerate() {
            for &alpha in &self.alphas {
                let beta = match s {
                    0 => f_eps_delta(eps, delta, alpha).map_err(|e| fail(key, e))?,
                    1 => laplace_tradeoff(sens, b, alpha).map_err(|e| fail(key, e))?,
                    2 => gaussian_tradeoff(sens / sigma, alpha).map_err(|e| fail(key, e))?,
                    _ => shift_tradeoff(&tl, sens, alpha).map_err(|e| fail(key, e))?,
                };
                table.push(Row {
                    panel: "tradeoff".into(),
                    series: key.to_string(),
                    x: alpha,
                    y: beta,
                    extra: vec![eps, delta, if s == 0 { 0.0 } else { var[s - 1] }],
                });
            }
        }
        tick();
        let per_eps: Vec<[f64; 3]> = self
            .variance_epsilons
            .iter()
            .map(|&e| variances(e, delta, sens))
            .collect::<Result<_, _>>()?;
        for (s, key) in SERIES.iter().enumerate().skip(1) {
            for (&e, v) in self.variance_epsilons.iter().zip(&per_eps) {
                let laplace = 2.0 * sens * sens / (e * e);
                table.push(Row {
                    panel: "variance".into(),
                    series: key.to_string(),
                    x: e,
                    y: v[s - 1] / laplace,
                    extra: vec![e, delta, v[s - 1]],
                });
            }
        }
        tick();
        Ok(table)
    }
}
