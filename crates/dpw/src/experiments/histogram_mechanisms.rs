//! Kind `histogram_mechanisms`: Cesar & Rogers (2021) Figures 4 and 5 — the overall ε at
//! a target δ of Laplace against Gaussian noise on histograms at matched variance
//! (`2b² = σ²`), where each user changes at most Δ₀ bins by at most Δ∞ each, against Δ₀
//! (one release) or against the number k of releases (docs/maths.md §3.4).
//!
//! Curves (any subset):
//! - `laplace_optimal_dp`: Δ₀·k Laplace mechanisms, each (Δ∞/b)-DP, composed optimally
//!   (§3.1, their Lemma 6.2);
//! - `gaussian_analytic`: the exact ε of the Gaussian mechanism with L2 sensitivity
//!   `Δ∞√(Δ₀k)` (§1.2, their Lemma 6.1; k Gaussian releases compose exactly into one);
//! - `gaussian_zcdp`: ρ = kΔ₀Δ∞²/(2σ²) through Bun–Steinke's conversion (their Lemma 6.3);
//! - `gaussian_zcdp_cks`: the same ρ through the Canonne–Kamath–Steinke conversion;
//! - `gaussian_analytic_composed`: each release calibrated on its own, i.e. (ε₀, δ₀(ε₀))
//!   with δ₀ the analytic Gaussian profile, then k of them composed optimally as
//!   (ε₀, δ₀)-DP mechanisms (§3.1, KOV Thm 3.3), with ε₀ chosen to minimise the total
//!   (scan and Brent; any ε₀ gives a valid ε, so the result is on the safe side);
//! - `laplace_pld`: the exact composition of the Δ₀·k Laplace privacy losses by the
//!   certified accountant (`composition::accountant`, docs/accountant.md), its bracket
//!   `[y_lo, y_hi]` on the exact ε at relative width `accuracy`; y is the upper end (a
//!   valid ε).
//!
//! ```toml
//! [params]
//! linf_sensitivity = 1.0
//! sigma = 10.0
//! delta = 1e-6
//! accuracy = 1e-4                # relative width of laplace_pld's bracket (default 1e-4)
//! curves = ["laplace_optimal_dp", "gaussian_analytic", "gaussian_zcdp", "gaussian_zcdp_cks"]
//! [[params.panels]]
//! key = "main"
//! vary = "l0_sensitivity"        # or "rounds" (then give l0_sensitivity per round)
//! grid = { linspace = [1, 100], n = 100 }
//! ```
//! Columns: `panel,series,x,y,y_lo,y_hi,l0_sensitivity,rounds,delta` (y = ε; `y_lo`,
//! `y_hi` equal y except for `laplace_pld`).

use super::{count, open_unit, positive, Job};
use crate::error::KeyError;
use crate::grid::Grid;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use composition::dp_epsilon;
use composition::zcdp::{epsilon_bun_steinke, epsilon_cks};
use densities::gaussian::gaussian_epsilon;
use rayon::prelude::*;
use serde::Deserialize;
use std::collections::HashMap;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "histogram_mechanisms",
    about: "Cesar–Rogers Figs. 4–5: Laplace vs Gaussian on histograms at matched variance",
    prepare,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Vary {
    L0Sensitivity,
    Rounds,
}

/// The curves this kind can draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Curve {
    /// Optimal DP composition of the Laplace mechanisms.
    LaplaceOptimalDp,
    /// Exact Gaussian.
    GaussianAnalytic,
    /// zCDP with Bun–Steinke's conversion.
    GaussianZcdp,
    /// zCDP with the Canonne–Kamath–Steinke conversion.
    GaussianZcdpCks,
    /// Per-release analytic Gaussian, composed as (ε₀, δ₀)-DP.
    GaussianAnalyticComposed,
    /// Exact Laplace composition by the FFT accountant (certified upper ε).
    LaplacePld,
}

impl Curve {
    /// The series key.
    pub fn key(self) -> &'static str {
        match self {
            Curve::LaplaceOptimalDp => "laplace_optimal_dp",
            Curve::GaussianAnalytic => "gaussian_analytic",
            Curve::GaussianZcdp => "gaussian_zcdp",
            Curve::GaussianZcdpCks => "gaussian_zcdp_cks",
            Curve::GaussianAnalyticComposed => "gaussian_analytic_composed",
            Curve::LaplacePld => "laplace_pld",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    linf_sensitivity: f64,
    sigma: f64,
    delta: f64,
    #[serde(default)]
    accuracy: Option<f64>,
    /// The fixed grid of the accountant this kind used before (issue 32): refused with
    /// a pointer to `accuracy`.
    #[serde(default)]
    pld_step: Option<f64>,
    curves: Vec<Curve>,
    panels: Vec<PanelParams>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PanelParams {
    key: String,
    vary: Vary,
    #[serde(default)]
    l0_sensitivity: Option<f64>,
    grid: Grid,
}

/// Noise and budget shared by every point.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// Δ∞.
    pub linf: f64,
    /// σ of the Gaussian; the Laplace scale is σ/√2.
    pub sigma: f64,
    /// Target δ.
    pub delta: f64,
    /// Relative width of the certified accountant's bracket (`laplace_pld`).
    pub accuracy: f64,
}

#[derive(Debug)]
struct HistogramMechanisms {
    setting: Setting,
    panel_keys: Vec<String>,
    /// (panel, x, Δ₀, k) per grid point.
    points: Vec<(usize, f64, u64, u64)>,
    curves: Vec<Curve>,
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let linf = positive("params.linf_sensitivity", p.linf_sensitivity)?;
    let linf = crate::ranges::SENSITIVITY.check("params.linf_sensitivity", linf)?;
    let sigma = positive("params.sigma", p.sigma)?;
    // The conversions see only sigma / linf_sensitivity (issue 15: sigma = 1e308 gave
    // rho = 0 and an exit 1).
    let ratio = crate::ranges::NOISE_RATIO;
    if ratio.check("params.sigma", sigma / linf).is_err() {
        return Err(KeyError::new(
            "params.sigma",
            format!(
                "sigma / linf_sensitivity must be in [{}, {}] (the range computed to full \
                 accuracy), got {}",
                crate::ranges::show(ratio.lo),
                crate::ranges::show(ratio.hi),
                crate::ranges::show(sigma / linf)
            ),
        ));
    }
    let delta = open_unit("params.delta", p.delta)
        .and_then(|d| crate::ranges::DELTA.check("params.delta", d))?;
    if p.curves.is_empty() {
        return Err(KeyError::new(
            "params.curves",
            "must list at least one curve",
        ));
    }
    for (i, c) in p.curves.iter().enumerate() {
        if p.curves[..i].contains(c) {
            return Err(KeyError::new(
                format!("params.curves[{i}]"),
                "duplicate curve",
            ));
        }
    }
    if p.pld_step.is_some() {
        return Err(KeyError::new(
            "params.pld_step",
            "no longer used: laplace_pld runs on the certified accountant, which chooses its \
             own grid; give params.accuracy (relative bracket width in [1e-6, 1e-2]) instead",
        ));
    }
    let accuracy = match p.accuracy {
        None => 1e-4,
        Some(v) if v.is_finite() && (1e-6..=1e-2).contains(&v) => v,
        Some(v) => {
            return Err(KeyError::new(
                "params.accuracy",
                format!("must be in [1e-6, 1e-2], got {v}"),
            ))
        }
    };
    if p.panels.is_empty() {
        return Err(KeyError::new(
            "params.panels",
            "must list at least one panel",
        ));
    }
    let keys: Vec<String> = p.panels.iter().map(|q| q.key.clone()).collect();
    super::distinct(&keys, |i| format!("params.panels[{i}].key"))?;
    let mut points = Vec::new();
    for (pi, panel) in p.panels.iter().enumerate() {
        let at = |k: &str| format!("params.panels[{pi}].{k}");
        let l0_fixed = match (panel.vary, panel.l0_sensitivity) {
            (Vary::L0Sensitivity, Some(_)) => {
                return Err(KeyError::new(
                    at("l0_sensitivity"),
                    "must not be given when vary = \"l0_sensitivity\" (the grid gives it)",
                ))
            }
            (Vary::L0Sensitivity, None) => None,
            (Vary::Rounds, v) => Some(count(
                &at("l0_sensitivity"),
                v.ok_or_else(|| {
                    KeyError::new(
                        at("l0_sensitivity"),
                        "required when vary = \"rounds\" (an integer >= 1)",
                    )
                })?,
            )? as u64),
        };
        for (i, &x) in panel.grid.values().iter().enumerate() {
            let key = at(&format!("grid[{i}]"));
            let v = count(&key, x)?;
            if v > 100_000.0 {
                return Err(KeyError::new(
                    key,
                    format!("must be at most 100000, got {v}"),
                ));
            }
            let (l0, k) = match l0_fixed {
                None => (v as u64, 1),
                Some(l0) => (l0, v as u64),
            };
            if p.curves.contains(&Curve::LaplacePld) && l0 * k > 100_000 {
                return Err(KeyError::new(
                    key,
                    "laplace_pld composes at most 100000 mechanisms (l0_sensitivity * rounds)",
                ));
            }
            points.push((pi, x, l0, k));
        }
    }
    Ok(Box::new(HistogramMechanisms {
        setting: Setting {
            linf,
            sigma,
            delta,
            accuracy,
        },
        panel_keys: keys,
        points,
        curves: p.curves,
    }))
}

/// The exact ε of `m` composed Laplace mechanisms with `ε₀ = Δ∞/b` each, by the
/// certified accountant: its bracket `(lower, upper)` at relative width `s.accuracy`; the
/// exact value lies between.
pub fn laplace_pld(s: &Setting, m: u64) -> Result<(f64, f64), String> {
    use composition::accountant::{Accountant, ClippedLaplaceLaw, LossLaw};
    let eps0 = s.linf * std::f64::consts::SQRT_2 / s.sigma;
    let law = ClippedLaplaceLaw::laplace(eps0).map_err(|e| format!("laplace_pld: {e}"))?;
    let a = Accountant::new(vec![(Box::new(law) as Box<dyn LossLaw>, m)])
        .and_then(|a| a.with_accuracy(s.accuracy))
        .and_then(|a| a.epsilon(s.delta))
        .map_err(|e| format!("laplace_pld: {e}"))?;
    if !a.accuracy_met {
        return Err(format!(
            "laplace_pld: the accountant's bracket [{}, {}] is wider than the accuracy {}",
            a.lower, a.upper, s.accuracy
        ));
    }
    Ok((a.lower, a.upper))
}

/// The overall ε of `k` releases with `l0` changed bins each, for one curve.
pub fn epsilon(curve: Curve, s: &Setting, l0: u64, k: u64) -> Result<f64, String> {
    let b = s.sigma / std::f64::consts::SQRT_2;
    let total = (l0 * k) as f64;
    let mu_total = s.linf * total.sqrt() / s.sigma;
    let rho = total * s.linf * s.linf / (2.0 * s.sigma * s.sigma);
    let r = match curve {
        Curve::LaplaceOptimalDp => {
            dp_epsilon(l0 * k, s.linf / b, s.delta).map_err(|e| e.to_string())
        }
        Curve::GaussianAnalytic => Ok(gaussian_epsilon(s.delta, mu_total)),
        Curve::GaussianZcdp => epsilon_bun_steinke(rho, s.delta).map_err(|e| e.to_string()),
        Curve::GaussianZcdpCks => epsilon_cks(rho, s.delta).map_err(|e| e.to_string()),
        Curve::GaussianAnalyticComposed => {
            let mu0 = s.linf * (l0 as f64).sqrt() / s.sigma;
            composition::dp::gaussian_via_dp_epsilon(mu0, k, s.delta).map_err(|e| e.to_string())
        }
        Curve::LaplacePld => laplace_pld(s, l0 * k).map(|(_, hi)| hi),
    };
    match r {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(v) => Err(format!("{} gave {v}", curve.key())),
        Err(e) => Err(format!("{}: {e}", curve.key())),
    }
}

impl Job for HistogramMechanisms {
    fn panel_keys(&self) -> Vec<String> {
        self.panel_keys.clone()
    }

    fn series_keys(&self) -> Vec<String> {
        self.curves.iter().map(|c| c.key().to_string()).collect()
    }

    fn extra_columns(&self) -> Vec<String> {
        ["y_lo", "y_hi", "l0_sensitivity", "rounds", "delta"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn work_items(&self) -> usize {
        self.curves.len() * self.points.len()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let jobs: Vec<(Curve, (usize, f64, u64, u64))> = self
            .curves
            .iter()
            .flat_map(|&c| self.points.iter().map(move |&p| (c, p)))
            .collect();
        // The exact accountant depends on l0·k only, and the panels share many products
        // (fig18's rounds panel repeats its l0 panel): each distinct one is composed once.
        let mut products: Vec<u64> = jobs
            .iter()
            .filter(|(c, _)| *c == Curve::LaplacePld)
            .map(|(_, (_, _, l0, k))| l0 * k)
            .collect();
        let pld_jobs = products.len();
        products.sort_unstable();
        products.dedup();
        let pld: HashMap<u64, Result<(f64, f64), String>> = products
            .par_iter()
            .map(|&m| {
                let v = laplace_pld(&self.setting, m);
                tick();
                (m, v)
            })
            .collect();
        for _ in products.len()..pld_jobs {
            tick();
        }
        let values: Vec<(f64, f64, f64)> = jobs
            .par_iter()
            .map(|&(c, (pi, x, l0, k))| {
                let v = if c == Curve::LaplacePld {
                    pld[&(l0 * k)].clone().map(|(lo, hi)| (hi, lo, hi))
                } else {
                    let v = epsilon(c, &self.setting, l0, k).map(|v| (v, v, v));
                    tick();
                    v
                }
                // A point the accepted ranges let through but no calibration reaches
                // (e.g. l0_sensitivity 1e6 over 20 releases) is bad input of that panel:
                // exit 2 with the key, not exit 1.
                .map_err(|e| format!("params.panels[{pi}]: at x = {x}: {e}"));
                v
            })
            .collect::<Result<_, _>>()?;
        let mut table = Table::new(self.extra_columns());
        for (pi, panel) in self.panel_keys.iter().enumerate() {
            for ((c, (p, x, l0, k)), (y, lo, hi)) in jobs.iter().zip(&values) {
                if *p != pi {
                    continue;
                }
                table.push(Row {
                    panel: panel.clone(),
                    series: c.key().into(),
                    x: *x,
                    y: *y,
                    extra: vec![*lo, *hi, *l0 as f64, *k as f64, self.setting.delta],
                });
            }
        }
        Ok(table)
    }
}
