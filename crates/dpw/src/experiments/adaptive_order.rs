//! Kind `adaptive_order`: Cesar & Rogers (2021) Figure 3 — does the order in which DP and
//! BR mechanisms are composed adaptively matter? The ratio of the optimal δ of two
//! orders, each computed by the recursion of their Lemma 5.1 (docs/maths.md §3.3), against
//! ε_g, one series per per-mechanism ε.
//!
//! ```toml
//! [params]
//! numerator = ["dp", "br", "br"]      # the order on top of the ratio
//! denominator = ["br", "br", "dp"]
//! epsilons = [0.1, 0.5, 1.0]
//! eps_g_fraction = { linspace = [0.01, 0.99], n = 99 }   # ε_g = fraction · (total ε)
//! ```
//! ε_g runs over fractions of the largest possible total loss (the sum of the
//! mechanisms' ε, where both δ vanish). Below it both δ are positive (the BR maximisation
//! scans only where its objective can be positive, so the sliver next to the total is
//! found); a point whose δ still came out 0 would be refused with an error naming
//! `params.eps_g_fraction`, never dropped, so the CSV has exactly one row per fraction
//! and ε. Series `eps_<ε>`, one panel `main`.
//! Columns: `panel,series,x,y,epsilon,delta_numerator,delta_denominator` (x = ε_g).

use super::{positive, Job};
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use composition::{adaptive_delta, Mechanism, MAX_ADAPTIVE_BR};
use rayon::prelude::*;
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "adaptive_order",
    about: "Cesar–Rogers Fig. 3: ratio of optimal δ between two adaptive orders of DP and BR",
    prepare,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Step {
    Dp,
    Br,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    numerator: Vec<Step>,
    denominator: Vec<Step>,
    epsilons: Vec<f64>,
    eps_g_fraction: Grid,
}

#[derive(Debug)]
struct AdaptiveOrder {
    numerator: Vec<Step>,
    denominator: Vec<Step>,
    epsilons: Vec<f64>,
    fractions: Vec<f64>,
}

fn check_order(key: &str, steps: &[Step]) -> Result<(), KeyError> {
    let br = steps.iter().filter(|s| **s == Step::Br).count();
    if steps.is_empty() || steps.len() > 12 || br > MAX_ADAPTIVE_BR {
        return Err(KeyError::new(
            key,
            format!(
                "must list 1 to 12 mechanisms (\"dp\" or \"br\"), at most {MAX_ADAPTIVE_BR} of them \"br\", got {} with {br} \"br\"",
                steps.len()
            ),
        ));
    }
    Ok(())
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    check_order("params.numerator", &p.numerator)?;
    check_order("params.denominator", &p.denominator)?;
    if p.numerator.len() != p.denominator.len() {
        return Err(KeyError::new(
            "params.denominator",
            "must have as many mechanisms as params.numerator (the same total loss)",
        ));
    }
    if p.epsilons.is_empty() {
        return Err(KeyError::new("params.epsilons", "must list at least one ε"));
    }
    for (i, &e) in p.epsilons.iter().enumerate() {
        let key = format!("params.epsilons[{i}]");
        let e = positive(&key, e)?;
        if e > 20.0 {
            return Err(KeyError::new(key, format!("must be in (0, 20], got {e}")));
        }
        if p.epsilons[..i].contains(&e) {
            return Err(KeyError::new(key, format!("duplicate {e}")));
        }
    }
    for (i, &f) in p.eps_g_fraction.values().iter().enumerate() {
        if !(f > 0.0 && f < 1.0) {
            return Err(KeyError::new(
                format!("params.eps_g_fraction[{i}]"),
                format!("must be in (0, 1) (at 1 both δ vanish), got {f}"),
            ));
        }
    }
    Ok(Box::new(AdaptiveOrder {
        numerator: p.numerator,
        denominator: p.denominator,
        epsilons: p.epsilons,
        fractions: p.eps_g_fraction.values().to_vec(),
    }))
}

fn sequence(steps: &[Step], eps: f64) -> Vec<Mechanism> {
    steps
        .iter()
        .map(|s| match s {
            Step::Dp => Mechanism::Dp(eps),
            Step::Br => Mechanism::Br(eps),
        })
        .collect()
}

impl Job for AdaptiveOrder {
    fn panel_keys(&self) -> Vec<String> {
        vec!["main".into()]
    }

    fn series_keys(&self) -> Vec<String> {
        self.epsilons.iter().map(|e| format!("eps_{e}")).collect()
    }

    fn extra_columns(&self) -> Vec<String> {
        ["epsilon", "delta_numerator", "delta_denominator"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        self.epsilons.len() * self.fractions.len()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let jobs: Vec<(usize, f64)> = (0..self.epsilons.len())
            .flat_map(|i| self.fractions.iter().map(move |&f| (i, f)))
            .collect();
        let results: Vec<(f64, f64, f64)> = jobs
            .par_iter()
            .map(|&(i, f)| {
                let eps = self.epsilons[i];
                let eps_g = f * eps * self.numerator.len() as f64;
                let at = || format!("epsilon = {eps}, eps_g = {eps_g:e}");
                let num = adaptive_delta(&sequence(&self.numerator, eps), eps_g)
                    .map_err(|e| format!("numerator at {}: {e}", at()))?;
                let den = adaptive_delta(&sequence(&self.denominator, eps), eps_g)
                    .map_err(|e| format!("denominator at {}: {e}", at()))?;
                tick();
                if num <= 0.0 || den <= 0.0 {
                    // Mathematically positive below the total ε: a 0 is the recursion
                    // failing to resolve δ, so refuse rather than drop or plot it.
                    return Err(format!(
                        "params.eps_g_fraction: delta resolves to 0 ({num:e} / {den:e}) at {}, \
                         too close to the total epsilon for the recursion; use fractions \
                         up to about 0.985",
                        at()
                    ));
                }
                Ok((eps_g, num, den))
            })
            .collect::<Result<_, String>>()?;
        let series = self.series_keys();
        let mut table = Table::new(self.extra_columns());
        for (&(i, _), (eps_g, num, den)) in jobs.iter().zip(results) {
            table.push(Row {
                panel: "main".into(),
                series: series[i].clone(),
                x: eps_g,
                y: num / den,
                extra: vec![self.epsilons[i], num, den],
            });
        }
        Ok(table)
    }
}
