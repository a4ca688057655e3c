//! Kind `gaussian_calibration`: Balle & Wang (2018) Figure 1, left panels — the noise
//! scale of the classical and the analytic Gaussian mechanism against ε (docs/maths.md
//! §1.2), either as σ itself or as the variance ratio σ²_classical / σ²_analytic.
//!
//! The classical mechanism (Dwork–Roth Theorem A.1) is only (ε, δ)-DP for ε < 1, so its
//! series (and the ratio) simply have no points at ε ≥ 1.
//!
//! ```toml
//! [params]
//! quantity = "sigma"                         # or "variance_ratio"
//! sensitivity = 1.0
//! deltas = [1e-5]
//! epsilon = { logspace = [1e-4, 1], n = 40 }
//! ```
//! Series: `classical_delta_<δ>` and `analytic_delta_<δ>` (sigma) or `ratio_delta_<δ>`
//! (variance_ratio), with `<δ>` as `1e-5`. One panel, key `main`.
//! Columns: `panel,series,x,y,epsilon,delta` (x = ε), and for `variance_ratio` also
//! `sigma_classical,sigma_analytic`. A row exists only where its series is defined.

use super::{delta_label, sensitivity_deltas_epsilons, Job};
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use densities::gaussian::{analytic_sigma, classical_sigma};
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "gaussian_calibration",
    about: "Balle–Wang Fig. 1 (left): classical vs analytic Gaussian σ, or their variance ratio",
    prepare,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Quantity {
    Sigma,
    VarianceRatio,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    quantity: Quantity,
    sensitivity: f64,
    deltas: Vec<f64>,
    epsilon: Grid,
}

#[derive(Debug)]
struct GaussianCalibration {
    quantity: Quantity,
    sensitivity: f64,
    deltas: Vec<f64>,
    epsilons: Vec<f64>,
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let (sensitivity, deltas, epsilons) =
        sensitivity_deltas_epsilons(p.sensitivity, &p.deltas, &p.epsilon)?;
    Ok(Box::new(GaussianCalibration {
        quantity: p.quantity,
        sensitivity,
        deltas,
        epsilons,
    }))
}

impl Job for GaussianCalibration {
    fn panel_keys(&self) -> Vec<String> {
        vec!["main".into()]
    }

    fn series_keys(&self) -> Vec<String> {
        let mut keys = Vec::new();
        for &d in &self.deltas {
            let d = delta_label(d);
            match self.quantity {
                Quantity::Sigma => {
                    keys.push(format!("classical_delta_{d}"));
                    keys.push(format!("analytic_delta_{d}"));
                }
                Quantity::VarianceRatio => keys.push(format!("ratio_delta_{d}")),
            }
        }
        keys
    }

    fn extra_columns(&self) -> Vec<String> {
        let mut cols = vec!["epsilon".to_string(), "delta".to_string()];
        if self.quantity == Quantity::VarianceRatio {
            cols.extend(["sigma_classical".to_string(), "sigma_analytic".to_string()]);
        }
        cols
    }

    fn work_items(&self) -> usize {
        self.deltas.len() * self.epsilons.len()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let mut table = Table::new(self.extra_columns());
        // Microseconds per point: no need for threads.
        let mut classical_rows = Vec::new();
        let mut analytic_rows = Vec::new();
        for &delta in &self.deltas {
            let d = delta_label(delta);
            classical_rows.clear();
            analytic_rows.clear();
            for &eps in &self.epsilons {
                let analytic = analytic_sigma(eps, delta, self.sensitivity)
                    .map_err(|e| format!("analytic sigma at epsilon = {eps:e}: {e}"))?;
                // Defined for ε < 1 only: no row where it is not.
                let classical = classical_sigma(eps, delta, self.sensitivity).ok();
                let extra = |c: f64| match self.quantity {
                    Quantity::Sigma => vec![eps, delta],
                    Quantity::VarianceRatio => vec![eps, delta, c, analytic],
                };
                match self.quantity {
                    Quantity::Sigma => {
                        if let Some(c) = classical {
                            classical_rows.push(Row {
                                panel: "main".into(),
                                series: format!("classical_delta_{d}"),
                                x: eps,
                                y: c,
                                extra: extra(c),
                            });
                        }
                        analytic_rows.push(Row {
                            panel: "main".into(),
                            series: format!("analytic_delta_{d}"),
                            x: eps,
                            y: analytic,
                            extra: extra(f64::NAN),
                        });
                    }
                    Quantity::VarianceRatio => {
                        if let Some(c) = classical {
                            classical_rows.push(Row {
                                panel: "main".into(),
                                series: format!("ratio_delta_{d}"),
                                x: eps,
                                y: (c / analytic).powi(2),
                                extra: extra(c),
                            });
                        }
                    }
                }
                tick();
            }
            for r in classical_rows.drain(..).chain(analytic_rows.drain(..)) {
                table.push(r);
            }
        }
        Ok(table)
    }
}
