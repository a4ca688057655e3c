//! Kind `composition_bounds`: Cesar & Rogers (2021) Figures 1 and 2 — the overall ε_g at
//! a target δ when k mechanisms, ℓ of them ε-DP and k − ℓ of them ε-BR (bounded range),
//! are composed, against the per-mechanism ε.
//!
//! Curves (any subset, chosen in the manifest):
//! - `concentration`: their eq. 3 (docs/maths.md §3.3), one series `concentration_l<ℓ>`
//!   per ℓ;
//! - `optimal_mixed`: the optimal non-adaptive composition (their Theorem 3, §3.3), one
//!   series `optimal_l<ℓ>` per ℓ;
//! - `optimal_dp`: the optimal composition of k ε-DP mechanisms (Kairouz–Oh–Viswanath,
//!   §3.1), series `optimal_dp`.
//!
//! ```toml
//! [params]
//! k = 100
//! delta = 1e-6
//! dp_counts = [0, 25, 50, 75, 100]
//! epsilon = { logspace = [1e-2, 1], n = 30 }
//! curves = ["concentration", "optimal_dp"]
//! ```
//! Columns: `panel,series,x,y,epsilon,delta,k,dp_count` (x = ε, y = ε_g, one panel
//! `main`).

use super::{count, open_unit, positive, Job};
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use composition::{concentration_epsilon, dp_epsilon, mixed_epsilon};
use rayon::prelude::*;
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "composition_bounds",
    about: "Cesar–Rogers Figs. 1–2: ε_g of ℓ DP + (k − ℓ) BR mechanisms, bound and optimum",
    prepare,
};

/// Largest k accepted: the mixed optimum costs O(k²) per δ evaluation.
const MAX_K: f64 = 10_000.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Curve {
    Concentration,
    OptimalMixed,
    OptimalDp,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    k: f64,
    delta: f64,
    dp_counts: Vec<f64>,
    epsilon: Grid,
    curves: Vec<Curve>,
}

/// One series: which curve, and ℓ.
#[derive(Debug, Clone, PartialEq)]
struct Series {
    key: String,
    curve: Curve,
    l: u64,
}

#[derive(Debug)]
struct CompositionBounds {
    k: u64,
    delta: f64,
    epsilons: Vec<f64>,
    series: Vec<Series>,
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let k = count("params.k", p.k)?;
    if k > MAX_K {
        return Err(KeyError::new(
            "params.k",
            format!("must be at most {MAX_K} for this figure, got {k}"),
        ));
    }
    let k = k as u64;
    let delta = open_unit("params.delta", p.delta)?;
    for (i, &e) in p.epsilon.values().iter().enumerate() {
        let e = positive(&format!("params.epsilon[{i}]"), e)?;
        if e > 50.0 {
            return Err(KeyError::new(
                format!("params.epsilon[{i}]"),
                format!("must be in (0, 50], got {e}"),
            ));
        }
    }
    if p.curves.is_empty() {
        return Err(KeyError::new(
            "params.curves",
            "list at least one of \"concentration\", \"optimal_mixed\", \"optimal_dp\"",
        ));
    }
    let mut ls = Vec::new();
    for (i, &l) in p.dp_counts.iter().enumerate() {
        let key = format!("params.dp_counts[{i}]");
        if !(l.fract() == 0.0 && l >= 0.0 && l <= k as f64) {
            return Err(KeyError::new(
                key,
                format!("must be an integer in [0, k = {k}], got {l}"),
            ));
        }
        if ls.contains(&(l as u64)) {
            return Err(KeyError::new(key, format!("duplicate {l}")));
        }
        ls.push(l as u64);
    }
    let mut series = Vec::new();
    for (i, &curve) in p.curves.iter().enumerate() {
        if p.curves[..i].contains(&curve) {
            return Err(KeyError::new(
                format!("params.curves[{i}]"),
                "duplicate curve",
            ));
        }
        match curve {
            Curve::OptimalDp => series.push(Series {
                key: "optimal_dp".into(),
                curve,
                l: k,
            }),
            Curve::Concentration | Curve::OptimalMixed => {
                if ls.is_empty() {
                    return Err(KeyError::new(
                        "params.dp_counts",
                        "must list at least one count for this curve",
                    ));
                }
                let prefix = if curve == Curve::Concentration {
                    "concentration"
                } else {
                    "optimal"
                };
                for &l in &ls {
                    series.push(Series {
                        key: format!("{prefix}_l{l}"),
                        curve,
                        l,
                    });
                }
            }
        }
    }
    Ok(Box::new(CompositionBounds {
        k,
        delta,
        epsilons: p.epsilon.values().to_vec(),
        series,
    }))
}

impl CompositionBounds {
    fn value(&self, s: &Series, eps: f64) -> Result<f64, String> {
        let m = self.k - s.l;
        let r = match s.curve {
            Curve::Concentration => concentration_epsilon(s.l, m, eps, &[], self.delta),
            Curve::OptimalMixed => mixed_epsilon(s.l, m, eps, self.delta),
            Curve::OptimalDp => dp_epsilon(self.k, eps, self.delta),
        };
        r.map_err(|e| format!("{} at epsilon = {eps:e}: {e}", s.key))
    }
}

impl Job for CompositionBounds {
    fn panel_keys(&self) -> Vec<String> {
        vec!["main".into()]
    }

    fn series_keys(&self) -> Vec<String> {
        self.series.iter().map(|s| s.key.clone()).collect()
    }

    fn extra_columns(&self) -> Vec<String> {
        ["epsilon", "delta", "k", "dp_count"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        self.series.len() * self.epsilons.len()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let jobs: Vec<(&Series, f64)> = self
            .series
            .iter()
            .flat_map(|s| self.epsilons.iter().map(move |&e| (s, e)))
            .collect();
        let values: Vec<f64> = jobs
            .par_iter()
            .map(|(s, e)| {
                let v = self.value(s, *e);
                tick();
                v
            })
            .collect::<Result<_, _>>()?;
        let mut table = Table::new(self.extra_columns());
        for ((s, eps), eps_g) in jobs.into_iter().zip(values) {
            table.push(Row {
                panel: "main".into(),
                series: s.key.clone(),
                x: eps,
                y: eps_g,
                extra: vec![eps, self.delta, self.k as f64, s.l as f64],
            });
        }
        Ok(table)
    }
}
