//! Kind `adaptive_queries`: Dagan & Kur (2022) Figure 2 — how many adaptively chosen
//! statistical queries can be answered from n samples to accuracy α with confidence
//! 1 − β, by the bounded-noise mechanism and by the Gaussian mechanism, through the
//! transfer theorem of Jung et al. (docs/maths.md §5). The maths (the transfer
//! conditions and the optimisation over ε, δ, β_s and the budget split) lives in
//! [`mgf::adaptive`]; this module validates the manifest and lays out the table.
//!
//! ```toml
//! [params]
//! alpha = 0.1
//! beta = 0.05
//! n = { logspace = [1e4, 1e8], n = 9 }
//! density = { family = "power", alpha = 2.0 }
//! ```
//! Series `bounded`, `gaussian`; one panel `main` (x = n, y = k, log-log).
//! Columns: `panel,series,x,y,epsilon,delta,beta_s,c,d,alpha_s`. A point where not even
//! one query is feasible is left out.

use super::{open_unit, positive, Job};
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use densities::bounded::BoundedFamily;
use mgf::adaptive::{Plan, Transfer};
use mgf::BoundedNoise;
use rayon::prelude::*;
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "adaptive_queries",
    about: "Dagan–Kur Fig. 2: adaptive queries answerable from n samples, bounded vs Gaussian",
    prepare,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DensityParams {
    family: String,
    alpha: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    alpha: f64,
    beta: f64,
    n: Grid,
    density: DensityParams,
}

#[derive(Debug)]
struct AdaptiveQueries {
    transfer: Transfer,
    ns: Vec<f64>,
    family: BoundedFamily,
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let alpha = open_unit("params.alpha", p.alpha)?;
    // Below 1e-3 the search over query counts runs for minutes (issue 15, hostile test:
    // alpha = 1e-300 ran past 20 s).
    if alpha < 1e-3 {
        return Err(KeyError::new(
            "params.alpha",
            format!(
                "must be in [1e-3, 1) (the run-time budget), got {}",
                crate::ranges::show(alpha)
            ),
        ));
    }
    let beta = open_unit("params.beta", p.beta)?;
    for (i, &n) in p.n.values().iter().enumerate() {
        let n = positive(&format!("params.n[{i}]"), n)?;
        if !(10.0..=1e12).contains(&n) {
            return Err(KeyError::new(
                format!("params.n[{i}]"),
                format!("must be in [10, 1e12], got {n}"),
            ));
        }
    }
    let family = match (p.density.family.as_str(), p.density.alpha) {
        ("power", Some(a)) => BoundedFamily::power(
            crate::ranges::POWER_ALPHA
                .check("params.density.alpha", positive("params.density.alpha", a)?)?,
        )
        .map_err(|e| KeyError::new("params.density.alpha", e.to_string()))?,
        ("power", None) => {
            return Err(KeyError::new(
                "params.density.alpha",
                "required for family = \"power\" (a number > 0)",
            ))
        }
        ("exp", None) => BoundedFamily::exp(),
        ("exp", Some(_)) => {
            return Err(KeyError::new(
                "params.density.alpha",
                "only allowed with family = \"power\"",
            ))
        }
        (other, _) => {
            return Err(KeyError::new(
                "params.density.family",
                format!("must be one of \"power\", \"exp\", got \"{other}\""),
            ))
        }
    };
    // About 0.85 s per n (fig2: 9 values in 7.6 s on the reference machine).
    crate::ranges::within_budget("params.n", p.n.len(), 0.85)?;
    let transfer =
        Transfer::new(alpha, beta).map_err(|e| KeyError::new("params.alpha", e.to_string()))?;
    Ok(Box::new(AdaptiveQueries {
        transfer,
        ns: p.n.values().to_vec(),
        family,
    }))
}

impl Job for AdaptiveQueries {
    fn panel_keys(&self) -> Vec<String> {
        vec!["main".into()]
    }

    fn series_keys(&self) -> Vec<String> {
        vec!["bounded".into(), "gaussian".into()]
    }

    fn extra_columns(&self) -> Vec<String> {
        ["epsilon", "delta", "beta_s", "c", "d", "alpha_s"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        2 * self.ns.len()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let noise = BoundedNoise::new(self.family).map_err(|e| e.to_string())?;
        let start = self.transfer.bounded_start(&noise);
        let jobs: Vec<(usize, f64)> = (0..2)
            .flat_map(|s| self.ns.iter().map(move |&n| (s, n)))
            .collect();
        let results: Vec<Plan> = jobs
            .par_iter()
            .map(|&(s, n)| {
                let b = if s == 0 {
                    self.transfer.best_bounded(&noise, n, &start)
                } else {
                    self.transfer.best_gaussian(n)
                };
                tick();
                b
            })
            .collect();
        let series = self.series_keys();
        let mut table = Table::new(self.extra_columns());
        for (&(s, n), b) in jobs.iter().zip(results) {
            if b.k >= 1.0 {
                table.push(Row {
                    panel: "main".into(),
                    series: series[s].clone(),
                    x: n,
                    y: b.k,
                    extra: vec![b.epsilon, b.delta, b.beta_s, b.c, b.d, b.alpha_s],
                });
            }
        }
        Ok(table)
    }
}
