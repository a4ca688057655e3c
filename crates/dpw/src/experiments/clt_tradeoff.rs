//! Kind `clt_tradeoff`: Dong, Su & Zhang (2021) Figure 1 — in high dimension, noise with
//! density ∝ exp(−‖x‖_p^a), normalised to Fisher information I, has a trade-off function
//! close to the Gaussian's `G_1` when shifted along a random unit direction, but not along
//! a coordinate axis (docs/maths.md §2). Monte Carlo curves through the log-likelihood
//! ratio with a pointwise ±z·se band, and the Cramér–Rao ratio `E‖X‖²·‖I_X‖/d` (exact
//! closed form) against d.
//!
//! ```toml
//! [params]
//! d = 30
//! noises = [[1, 1], [2, 1], [4, 4], [2, 2]]     # (p, a) pairs
//! samples = 1000000
//! seed = 2021
//! z = 1.96
//! alpha = { linspace = [0, 1], n = 51 }
//! cramer_rao_d = [1, 2, 5, 10, 30, 100, 1000]
//! ```
//! Panels `random` (v uniform on the sphere, drawn from the seed) and `e1` (v = e₁) with
//! series `p<p>_a<a>` and `gdp_1`, and `cramer_rao` (x = d) with the `p<p>_a<a>` series.
//! Columns: `panel,series,x,y,y_lo,y_hi,d,p,a` (`y_lo,y_hi` the band; equal to y where
//! exact; `gdp_1` rows carry p = a = 2, the Gaussian).

use super::{count, positive, Job};
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use densities::lp_noise::{llr_samples_many, random_direction, LpNoise, MonteCarlo, TradeoffPoint};
use densities::tradeoff::gaussian_tradeoff;
use rand::SeedableRng;
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "clt_tradeoff",
    about: "Dong–Su–Zhang Fig. 1: Monte Carlo trade-off curves of exp(−‖x‖_p^a) noise vs G_1",
    prepare,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    d: f64,
    noises: Vec<[f64; 2]>,
    samples: f64,
    seed: u64,
    z: f64,
    alpha: Grid,
    cramer_rao_d: Vec<f64>,
}

#[derive(Debug)]
struct CltTradeoff {
    d: usize,
    noises: Vec<(f64, f64)>,
    samples: usize,
    seed: u64,
    z: f64,
    alphas: Vec<f64>,
    cramer_rao_d: Vec<usize>,
}

fn key(p: f64, a: f64) -> String {
    format!("p{p}_a{a}")
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let d = count("params.d", p.d)?;
    if d > 10_000.0 {
        return Err(KeyError::new(
            "params.d",
            format!("must be in [1, 10000], got {d}"),
        ));
    }
    let samples = count("params.samples", p.samples)?;
    if !(1000.0..=1e8).contains(&samples) {
        return Err(KeyError::new(
            "params.samples",
            format!("must be an integer in [1000, 1e8], got {samples}"),
        ));
    }
    let z = positive("params.z", p.z)?;
    if p.noises.is_empty() {
        return Err(KeyError::new(
            "params.noises",
            "must list at least one [p, a] pair",
        ));
    }
    let mut noises = Vec::new();
    for (i, &[pp, a]) in p.noises.iter().enumerate() {
        let at = format!("params.noises[{i}]");
        if !(pp.is_finite()
            && a.is_finite()
            && (1.0..=64.0).contains(&pp)
            && (1.0..=64.0).contains(&a))
        {
            return Err(KeyError::new(
                at,
                format!("p and a must be in [1, 64], got [{pp}, {a}]"),
            ));
        }
        if noises.contains(&(pp, a)) {
            return Err(KeyError::new(at, format!("duplicate [{pp}, {a}]")));
        }
        noises.push((pp, a));
    }
    for (i, &a) in p.alpha.values().iter().enumerate() {
        if !(0.0..=1.0).contains(&a) {
            return Err(KeyError::new(
                format!("params.alpha[{i}]"),
                format!("must be in [0, 1], got {a}"),
            ));
        }
    }
    // An empty list would leave its panel empty (issue 15, class 12).
    if p.cramer_rao_d.is_empty() {
        return Err(KeyError::new(
            "params.cramer_rao_d",
            "must list at least one dimension d (increasing integers in [1, 1e6])",
        ));
    }
    let mut cr = Vec::new();
    for (i, &v) in p.cramer_rao_d.iter().enumerate() {
        let v = count(&format!("params.cramer_rao_d[{i}]"), v)?;
        if v > 1e6 || cr.last().is_some_and(|&l: &usize| l as f64 >= v) {
            return Err(KeyError::new(
                format!("params.cramer_rao_d[{i}]"),
                format!("must be increasing integers in [1, 1e6], got {v}"),
            ));
        }
        cr.push(v as usize);
    }
    Ok(Box::new(CltTradeoff {
        d: d as usize,
        noises,
        samples: samples as usize,
        seed: p.seed,
        z,
        alphas: p.alpha.values().to_vec(),
        cramer_rao_d: cr,
    }))
}

impl Job for CltTradeoff {
    fn panel_keys(&self) -> Vec<String> {
        let mut v = vec!["random".to_string(), "e1".to_string()];
        if !self.cramer_rao_d.is_empty() {
            v.push("cramer_rao".into());
        }
        v
    }

    fn series_keys(&self) -> Vec<String> {
        let mut v: Vec<String> = self.noises.iter().map(|&(p, a)| key(p, a)).collect();
        v.push("gdp_1".into());
        v
    }

    fn extra_columns(&self) -> Vec<String> {
        ["y_lo", "y_hi", "d", "p", "a"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        2 * self.noises.len()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let d = self.d;
        let mut rng = rand_pcg::Pcg64::seed_from_u64(self.seed);
        let random_v = random_direction(d, &mut rng).map_err(|e| e.to_string())?;
        let mut e1 = vec![0.0; d];
        e1[0] = 1.0;
        let mut table = Table::new(self.extra_columns());
        let df = d as f64;
        // Both directions are evaluated on the same draws (one stream per noise, derived
        // from the manifest's seed): the noise is drawn once for the two panels.
        let mut curves: Vec<[Vec<TradeoffPoint>; 2]> = Vec::new();
        for (i, &(p, a)) in self.noises.iter().enumerate() {
            let noise = LpNoise::normalised(d, p, a).map_err(|e| e.to_string())?;
            let stream = self.seed.wrapping_add(1 + 2 * i as u64);
            let mc = MonteCarlo::new(self.samples, stream).map_err(|e| e.to_string())?;
            let both = llr_samples_many(&noise, &[&random_v, &e1], mc)
                .map_err(|e| format!("{}: {e}", key(p, a)))?;
            let mut pair = both.into_iter().zip(["random", "e1"]).map(|(s, panel)| {
                s.tradeoff(&self.alphas, self.z)
                    .map_err(|e| format!("{} ({panel}): {e}", key(p, a)))
            });
            let random = pair.next().expect("two directions")?;
            let along_e1 = pair.next().expect("two directions")?;
            curves.push([random, along_e1]);
            tick();
            tick();
        }
        for (pj, panel) in ["random", "e1"].into_iter().enumerate() {
            for (&(p, a), pair) in self.noises.iter().zip(&curves) {
                for pt in &pair[pj] {
                    table.push(Row {
                        panel: panel.into(),
                        series: key(p, a),
                        x: pt.alpha,
                        y: pt.beta,
                        extra: vec![pt.lo, pt.hi, df, p, a],
                    });
                }
            }
            for &alpha in &self.alphas {
                let g = gaussian_tradeoff(1.0, alpha).map_err(|e| e.to_string())?;
                table.push(Row {
                    panel: panel.into(),
                    series: "gdp_1".into(),
                    x: alpha,
                    y: g,
                    extra: vec![g, g, df, 2.0, 2.0],
                });
            }
        }
        for &(p, a) in &self.noises {
            for &dd in &self.cramer_rao_d {
                let r = LpNoise::new(dd, p, a)
                    .map_err(|e| e.to_string())?
                    .cramer_rao_ratio();
                table.push(Row {
                    panel: "cramer_rao".into(),
                    series: key(p, a),
                    x: dd as f64,
                    y: r,
                    extra: vec![r, r, dd as f64, p, a],
                });
            }
        }
        Ok(table)
    }
}
