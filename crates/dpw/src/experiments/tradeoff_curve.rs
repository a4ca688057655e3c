//! Kind `tradeoff_curve`: the trade-off function β(α) of any composed mechanism (the
//! `dpw account` SPEC language) from its exact privacy-loss law, with a certified bracket,
//! beside the Gaussian `G_μ` that the central limit theorem of Dong, Su & Zhang assigns to
//! it (docs/accountant.md §9): a new figure from a manifest alone.
//!
//! ```toml
//! [params]
//! alpha = { linspace = [0, 1], n = 101 }
//! clt = true                      # optional (default true): add "<key>_clt" = G_μ series
//! gap = true                      # optional (default false, needs clt): panels "<panel>_gap"
//! accuracy = 1e-4                 # optional: sets the grid step (docs/accountant.md §6)
//! panels = [
//!   { key = "k10", mechanisms = [ { key = "laplace", spec = "laplace:scale=1,sensitivity=0.316,count=10" } ] },
//! ]
//! ```
//! `mechanisms = [...]` directly under `[params]` is one panel keyed `main`. With `gap`,
//! each panel is followed by `<panel>_gap` holding `β − G_μ(α)` of each mechanism (its
//! bracket shifted alike): how far the composition still is from its central limit.
//! Columns: `panel,series,x,y,y_lo,y_hi,mu`: x = α, y the midpoint of the certified
//! bracket `[y_lo, y_hi]` of β; `mu` the central-limit μ (the `_clt` series are exact
//! closed forms with `y_lo = y_hi = y`). For an asymmetric mechanism (subsampled) the curve
//! is the pointwise minimum over both directions of the loss.

use super::{distinct, mechanism_specs, relative_accuracy, Job};
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use composition::accountant::{Composition, MechanismSpec};
use densities::tradeoff::gaussian_tradeoff;
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "tradeoff_curve",
    about:
        "trade-off function of any composed mechanism (SPEC language), exact, beside its CLT G_μ",
    prepare,
};

/// One `{ key, spec }` entry of a mechanism list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MechanismInput {
    key: String,
    spec: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PanelInput {
    key: String,
    mechanisms: Vec<MechanismInput>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    alpha: Grid,
    clt: Option<bool>,
    gap: Option<bool>,
    accuracy: Option<f64>,
    panels: Option<Vec<PanelInput>>,
    mechanisms: Option<Vec<MechanismInput>>,
}

#[derive(Debug)]
struct TradeoffCurve {
    alphas: Vec<f64>,
    clt: bool,
    gap: bool,
    accuracy: Option<f64>,
    panels: Vec<(String, Vec<(String, MechanismSpec)>)>,
    /// The manifest key of each mechanism's spec (`params.panels[i].mechanisms[j].spec`),
    /// panel by panel: what a refusal found only while computing names.
    spec_keys: Vec<Vec<String>>,
}

/// Whether the mechanisms were given panel by panel or as one flat list.
#[derive(Debug, Clone, Copy)]
enum Form {
    Panels,
    Flat,
}

fn mechanism_list(
    at: &str,
    list: &[MechanismInput],
) -> Result<Vec<(String, MechanismSpec)>, KeyError> {
    let pairs: Vec<(&str, &str)> = list
        .iter()
        .map(|m| (m.key.as_str(), m.spec.as_str()))
        .collect();
    mechanism_specs(at, &pairs)
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    for (i, &a) in p.alpha.values().iter().enumerate() {
        if !(0.0..=1.0).contains(&a) {
            return Err(KeyError::new(
                format!("params.alpha[{i}]"),
                format!("must be in [0, 1], got {a}"),
            ));
        }
    }
    let input_form = if p.panels.is_some() {
        Form::Panels
    } else {
        Form::Flat
    };
    let panels = match (p.panels, p.mechanisms) {
        (Some(ps), None) => {
            if ps.is_empty() {
                return Err(KeyError::new(
                    "params.panels",
                    "must list at least one { key, mechanisms } panel",
                ));
            }
            let keys: Vec<String> = ps.iter().map(|p| p.key.clone()).collect();
            distinct(&keys, |i| format!("params.panels[{i}].key"))?;
            let mut out = Vec::new();
            for (i, panel) in ps.iter().enumerate() {
                if panel.key.is_empty() {
                    return Err(KeyError::new(
                        format!("params.panels[{i}].key"),
                        "must not be empty",
                    ));
                }
                let at = format!("params.panels[{i}].mechanisms");
                out.push((panel.key.clone(), mechanism_list(&at, &panel.mechanisms)?));
            }
            out
        }
        (None, Some(ms)) => vec![("main".into(), mechanism_list("params.mechanisms", &ms)?)],
        _ => {
            return Err(KeyError::new(
                "params.panels",
                "give exactly one of panels = [{ key, mechanisms }, ...] or mechanisms = [...]",
            ))
        }
    };
    let spec_keys: Vec<Vec<String>> = panels
        .iter()
        .enumerate()
        .map(|(i, (_, ms))| {
            (0..ms.len())
                .map(|j| match input_form {
                    Form::Panels => format!("params.panels[{i}].mechanisms[{j}].spec"),
                    Form::Flat => format!("params.mechanisms[{j}].spec"),
                })
                .collect()
        })
        .collect();
    let clt = p.clt.unwrap_or(true);
    let gap = p.gap.unwrap_or(false);
    if gap && !clt {
        return Err(KeyError::new(
            "params.gap",
            "the gap to G_μ needs clt = true",
        ));
    }
    if gap {
        let keys: Vec<String> = panels.iter().map(|p| p.0.clone()).collect();
        for (i, k) in keys.iter().enumerate() {
            if keys.contains(&format!("{k}_gap")) {
                return Err(KeyError::new(
                    format!("params.panels[{i}].key"),
                    format!(
                        "the gap panel of \"{k}\" is keyed \"{k}_gap\", which is taken by a panel"
                    ),
                ));
            }
        }
    }
    if clt {
        for (_, ms) in &panels {
            for (key, _) in ms {
                if ms.iter().any(|(k, _)| *k == format!("{key}_clt")) {
                    return Err(KeyError::new(
                        "params.clt",
                        format!("the G_μ series of \"{key}\" is keyed \"{key}_clt\", which is taken by a mechanism"),
                    ));
                }
            }
        }
    }
    let accuracy = relative_accuracy(p.accuracy)?;
    // Run-time estimate, before computing: one composition a side and the CLT moments per
    // mechanism, on the accountant's first grid (no refinement loop): about a quarter of
    // a δ query at the same accuracy (default 1e-4).
    let acc = accuracy.unwrap_or(1e-4);
    let n: usize = panels.iter().map(|p| p.1.len()).sum();
    let estimate: f64 = panels
        .iter()
        .flat_map(|p| p.1.iter())
        .map(|(_, s)| 0.25 * crate::ranges::accountant_seconds(s, acc))
        .sum();
    crate::ranges::within_budget_total(
        "params.panels",
        &format!(
            "{n} trade-off compositions at accuracy {}",
            crate::ranges::show(acc)
        ),
        estimate,
    )?;
    Ok(Box::new(TradeoffCurve {
        alphas: p.alpha.values().to_vec(),
        clt,
        gap,
        accuracy,
        panels,
        spec_keys,
    }))
}

impl Job for TradeoffCurve {
    fn panel_keys(&self) -> Vec<String> {
        let mut keys = Vec::new();
        for (k, _) in &self.panels {
            keys.push(k.clone());
            if self.gap {
                keys.push(format!("{k}_gap"));
            }
        }
        keys
    }

    fn series_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for (_, ms) in &self.panels {
            for (k, _) in ms {
                let mut add = |s: String| {
                    if !keys.contains(&s) {
                        keys.push(s);
                    }
                };
                add(k.clone());
                if self.clt {
                    add(format!("{k}_clt"));
                }
            }
        }
        keys
    }

    fn extra_columns(&self) -> Vec<String> {
        ["y_lo", "y_hi", "mu"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        self.panels.iter().map(|p| p.1.len()).sum()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let mut table = Table::new(self.extra_columns());
        for ((panel, ms), keys) in self.panels.iter().zip(&self.spec_keys) {
            for ((key, spec), at) in ms.iter().zip(keys) {
                // The accountant's refusals here are the spec's (a law it cannot resolve,
                // a loss without variance for the central limit): bad input, named by key.
                let fail = |e: String| format!("{at}: {}: {e}", spec.text);
                let mut c = Composition::of(std::slice::from_ref(spec)).map_err(|e| fail(e.0))?;
                if let Some(a) = self.accuracy {
                    c = c.with_accuracy(a).map_err(|e| fail(e.to_string()))?;
                }
                let pts = c.tradeoff(&self.alphas).map_err(|e| fail(e.to_string()))?;
                let mu = c.clt_mu().map_err(|e| fail(e.to_string()))?;
                for p in &pts {
                    table.push(Row {
                        panel: panel.clone(),
                        series: key.clone(),
                        x: p.alpha,
                        y: 0.5 * (p.lower + p.upper),
                        extra: vec![p.lower, p.upper, mu],
                    });
                }
                if self.clt {
                    let gs: Vec<f64> = self
                        .alphas
                        .iter()
                        .map(|&a| gaussian_tradeoff(mu, a).map_err(|e| fail(e.to_string())))
                        .collect::<Result<_, _>>()?;
                    for (&a, &g) in self.alphas.iter().zip(&gs) {
                        table.push(Row {
                            panel: panel.clone(),
                            series: format!("{key}_clt"),
                            x: a,
                            y: g,
                            extra: vec![g, g, mu],
                        });
                    }
                    if self.gap {
                        for (p, &g) in pts.iter().zip(&gs) {
                            table.push(Row {
                                panel: format!("{panel}_gap"),
                                series: key.clone(),
                                x: p.alpha,
                                y: 0.5 * (p.lower + p.upper) - g,
                                extra: vec![p.lower - g, p.upper - g, mu],
                            });
                        }
                    }
                }
                tick();
            }
        }
        Ok(table)
    }
}
