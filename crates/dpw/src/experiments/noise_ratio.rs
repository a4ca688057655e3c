//! Kind `noise_ratio`: Geng, Ding, Guo & Kumar (2018) Section VI — the noise amplitude
//! `E|X|` or noise power `E X²` of the truncated Laplacian (docs/maths.md §1.3, their
//! Theorems 2 and 3) divided by that of the analytic Gaussian (§1.2) at the same
//! (ε, δ) and sensitivity, against ε.
//!
//! For `N(0, σ²)`: `E|X| = σ √(2/π)` and `E X² = σ²`.
//!
//! ```toml
//! [params]
//! moment = "mean_abs"                        # or "second_moment"
//! sensitivity = 1.0
//! deltas = [1e-2, 1e-4, 1e-6, 1e-8]
//! epsilon = { logspace = [1e-2, 10], n = 60 }
//! ```
//! Series `delta_<δ>` (`<δ>` as `1e-2`), one panel `main`.
//! Columns: `panel,series,x,y,epsilon,delta,truncated_laplace,gaussian` (the two moments).

use super::{delta_label, sensitivity_deltas_epsilons, Job};
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use densities::gaussian::analytic_sigma;
use densities::traits::NoiseMoments;
use densities::truncated_laplace::TruncatedLaplace;
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "noise_ratio",
    about:
        "Geng et al. Sec. VI: E|X| or E X² of the truncated Laplacian over the analytic Gaussian",
    prepare,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Moment {
    MeanAbs,
    SecondMoment,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    moment: Moment,
    sensitivity: f64,
    deltas: Vec<f64>,
    epsilon: Grid,
}

#[derive(Debug)]
struct NoiseRatio {
    moment: Moment,
    sensitivity: f64,
    deltas: Vec<f64>,
    epsilons: Vec<f64>,
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let (sensitivity, deltas, epsilons) =
        sensitivity_deltas_epsilons(p.sensitivity, &p.deltas, &p.epsilon)?;
    for (i, &e) in epsilons.iter().enumerate() {
        for &d in &deltas {
            crate::ranges::truncated_laplace_pair(&format!("params.epsilon[{i}]"), e, d)?;
        }
    }
    Ok(Box::new(NoiseRatio {
        moment: p.moment,
        sensitivity,
        deltas,
        epsilons,
    }))
}

impl Job for NoiseRatio {
    fn panel_keys(&self) -> Vec<String> {
        vec!["main".into()]
    }

    fn series_keys(&self) -> Vec<String> {
        self.deltas
            .iter()
            .map(|d| format!("delta_{}", delta_label(*d)))
            .collect()
    }

    fn extra_columns(&self) -> Vec<String> {
        ["epsilon", "delta", "truncated_laplace", "gaussian"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        self.deltas.len() * self.epsilons.len()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let mut table = Table::new(self.extra_columns());
        for (&delta, series) in self.deltas.iter().zip(self.series_keys()) {
            for &eps in &self.epsilons {
                let at = || format!("epsilon = {eps:e}, delta = {delta:e}");
                let tl = TruncatedLaplace::new(eps, delta, self.sensitivity)
                    .map_err(|e| format!("truncated Laplacian at {}: {e}", at()))?;
                let sigma = analytic_sigma(eps, delta, self.sensitivity)
                    .map_err(|e| format!("analytic sigma at {}: {e}", at()))?;
                let (t, g) = match self.moment {
                    Moment::MeanAbs => (tl.mean_abs(), sigma * (2.0 / std::f64::consts::PI).sqrt()),
                    Moment::SecondMoment => (tl.second_moment(), sigma * sigma),
                };
                table.push(Row {
                    panel: "main".into(),
                    series: series.clone(),
                    x: eps,
                    y: t / g,
                    extra: vec![eps, delta, t, g],
                });
                tick();
            }
        }
        Ok(table)
    }
}
