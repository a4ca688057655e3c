//! Kind `topk_counts`: Cesar & Rogers (2021) Figure 6 — releasing the counts of the top
//! k words of a histogram, with Laplace noise (ε₀ per count, composed over the k counts by
//! optimal DP composition, docs/maths.md §3.1) or with Gaussian noise calibrated through
//! zCDP to the same overall (ε, δ) and post-processed by ordered least squares (their
//! Algorithm 1: `z₁ ≥ … ≥ z_k ≥ 0`, pool-adjacent-violators; §3.4).
//!
//! Each user may change every one of the k counts by 1 (ℓ0 sensitivity k, ℓ∞ 1). The
//! ranked list is taken as given (the discovery phase is out of scope here, as in the
//! paper's figure).
//!
//! ```toml
//! [params]
//! input = { csv = "../data/inputs/zipf_words.csv" }   # or { text = "some.txt" }
//! top = 20
//! epsilon0 = 0.1
//! delta = 1e-6
//! trials = 100
//! seed = 6
//! ```
//! Panels `counts` (x = rank, y = mean released count, y_lo/y_hi = mean ∓ 1 sd) and
//! `rmse` (x = rank, y = RMSE over trials). Series `truth`, `laplace`, `gaussian_ordered`.
//! Columns: `panel,series,x,y,y_lo,y_hi,rmse,true_count`.

use super::{count, open_unit, positive, Job};
use crate::error::KeyError;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use composition::dp_epsilon;
use composition::zcdp::rho_for_epsilon_bun_steinke;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use rayon::prelude::*;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "topk_counts",
    about: "Cesar–Rogers Fig. 6: top-k counts, Laplace vs Gaussian + ordered least squares",
    prepare,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
enum Input {
    /// A `word,count` CSV.
    Csv(String),
    /// A text file whose words are counted.
    Text(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    input: Input,
    top: f64,
    epsilon0: f64,
    delta: f64,
    trials: f64,
    seed: u64,
}

#[derive(Debug)]
struct TopkCounts {
    truth: Vec<f64>,
    laplace_b: f64,
    sigma: f64,
    trials: usize,
    seed: u64,
}

/// Lower-cased runs of letters and apostrophes, counted; sorted by count (then word).
fn count_words(text: &str) -> Vec<(String, u64)> {
    let mut counts: HashMap<String, u64> = HashMap::new();
    for w in text
        .split(|c: char| !(c.is_alphabetic() || c == '\''))
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| !w.is_empty())
    {
        *counts.entry(w).or_default() += 1;
    }
    let mut v: Vec<(String, u64)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

fn read_csv(path: &Path) -> Result<Vec<(String, u64)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read ({e})"))?;
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some("word,count") {
        return Err("the first line must be the header word,count".into());
    }
    let mut v = Vec::new();
    for (i, line) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let (w, c) = line
            .rsplit_once(',')
            .ok_or_else(|| format!("line {}: expected word,count", i + 2))?;
        let c: u64 = c
            .trim()
            .parse()
            .map_err(|_| format!("line {}: count must be a non-negative integer", i + 2))?;
        v.push((w.trim().to_string(), c));
    }
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(v)
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let top = count("params.top", p.top)?;
    if top > 10_000.0 {
        return Err(KeyError::new(
            "params.top",
            format!("must be at most 10000, got {top}"),
        ));
    }
    let top = top as usize;
    let eps0 = positive("params.epsilon0", p.epsilon0)?;
    let delta = open_unit("params.delta", p.delta)?;
    let trials = count("params.trials", p.trials)?;
    if trials > 100_000.0 {
        return Err(KeyError::new(
            "params.trials",
            format!("must be at most 100000, got {trials}"),
        ));
    }
    let resolve = |s: &str| -> PathBuf {
        let path = Path::new(s);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            input.dir().join(path)
        }
    };
    let histogram = match &p.input {
        Input::Csv(s) => read_csv(&resolve(s)).map_err(|e| {
            KeyError::new("params.input.csv", format!("{}: {e}", resolve(s).display()))
        })?,
        Input::Text(s) => {
            let path = resolve(s);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                KeyError::new(
                    "params.input.text",
                    format!("{}: cannot read ({e})", path.display()),
                )
            })?;
            count_words(&text)
        }
    };
    if histogram.len() < top {
        return Err(KeyError::new(
            "params.top",
            format!(
                "the input has only {} words, fewer than top = {top}",
                histogram.len()
            ),
        ));
    }
    let truth: Vec<f64> = histogram[..top].iter().map(|(_, c)| *c as f64).collect();
    // Laplace: `top` counts, each ε₀-DP with ℓ∞ sensitivity 1, composed optimally.
    let epsilon = dp_epsilon(top as u64, eps0, delta)
        .map_err(|e| KeyError::new("params.epsilon0", e.to_string()))?;
    // Gaussian: ρ-zCDP for ℓ0 sensitivity `top` (ρ = top/(2σ²)) with the same (ε, δ).
    let rho = rho_for_epsilon_bun_steinke(epsilon, delta)
        .map_err(|e| KeyError::new("params.delta", e.to_string()))?;
    let sigma = (top as f64 / (2.0 * rho)).sqrt();
    Ok(Box::new(TopkCounts {
        truth,
        laplace_b: 1.0 / eps0,
        sigma,
        trials: trials as usize,
        seed: p.seed,
    }))
}

const SERIES: [&str; 3] = ["truth", "laplace", "gaussian_ordered"];

impl TopkCounts {
    /// One trial: (Laplace counts, Gaussian counts after ordered least squares).
    fn trial(&self, t: usize) -> (Vec<f64>, Vec<f64>) {
        // One stream per trial: the result does not depend on the thread count.
        let mut rng = rand_pcg::Pcg64::seed_from_u64(
            self.seed ^ (t as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let lap: Vec<f64> = self
            .truth
            .iter()
            .map(|&c| {
                // Inversion: |X| = −b ln U, random sign.
                let u: f64 = 1.0 - rng.gen::<f64>();
                let x = -self.laplace_b * u.ln();
                if rng.gen::<bool>() {
                    c + x
                } else {
                    c - x
                }
            })
            .collect();
        let gauss: Vec<f64> = self
            .truth
            .iter()
            .map(|&c| c + self.sigma * rng.sample::<f64, _>(StandardNormal))
            .collect();
        (lap, denoise::isotonic::ordered_nonnegative(&gauss))
    }
}

impl Job for TopkCounts {
    fn panel_keys(&self) -> Vec<String> {
        vec!["counts".into(), "rmse".into()]
    }

    fn series_keys(&self) -> Vec<String> {
        SERIES.iter().map(|s| s.to_string()).collect()
    }

    fn extra_columns(&self) -> Vec<String> {
        ["y_lo", "y_hi", "rmse", "true_count"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        self.trials
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let results: Vec<(Vec<f64>, Vec<f64>)> = (0..self.trials)
            .into_par_iter()
            .map(|t| {
                let r = self.trial(t);
                tick();
                r
            })
            .collect();
        let k = self.truth.len();
        let n = self.trials as f64;
        let mut table = Table::new(self.extra_columns());
        for (s, key) in SERIES.iter().enumerate() {
            let mut rmses = Vec::with_capacity(k);
            for r in 0..k {
                let truth = self.truth[r];
                let (mean, sd, rmse) = if s == 0 {
                    (truth, 0.0, 0.0)
                } else {
                    // Fixed-order sums over trials.
                    let vals: Vec<f64> = results
                        .iter()
                        .map(|(l, g)| if s == 1 { l[r] } else { g[r] })
                        .collect();
                    let mean = vals.iter().sum::<f64>() / n;
                    let var =
                        vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
                    let mse = vals.iter().map(|v| (v - truth).powi(2)).sum::<f64>() / n;
                    (mean, var.sqrt(), mse.sqrt())
                };
                rmses.push(rmse);
                table.push(Row {
                    panel: "counts".into(),
                    series: key.to_string(),
                    x: (r + 1) as f64,
                    y: mean,
                    extra: vec![mean - sd, mean + sd, rmse, truth],
                });
            }
            if s > 0 {
                for (r, &rmse) in rmses.iter().enumerate() {
                    table.push(Row {
                        panel: "rmse".into(),
                        series: key.to_string(),
                        x: (r + 1) as f64,
                        y: rmse,
                        extra: vec![rmse, rmse, rmse, self.truth[r]],
                    });
                }
            }
        }
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_counted_case_insensitively() {
        let v = count_words("The cat, the hat. THE end's end's");
        assert_eq!(v[0], ("the".to_string(), 3));
        assert_eq!(v[1], ("end's".to_string(), 2));
    }
}
