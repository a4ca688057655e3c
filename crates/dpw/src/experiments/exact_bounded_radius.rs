//! Kind `exact_bounded_radius` (fig19): Dagan–Kur Figure 1 with the *exact* least radius
//! of the bounded-noise mechanism beside the certified bound (docs/maths.md §1.4, "Exact
//! δ"; the certified bound is §1.4 steps 1–6).
//!
//! Per point `(k, ε, δ)`, normalised like fig1 by `√(k log(1/δ))/ε`:
//! - series `certified`: `mgf::certified_radius` (Chernoff bound on the truncated loss);
//! - series `exact`: the least R whose δ, from the k-fold privacy-loss distribution of
//!   one query's loss (with its `+∞` atom) composed by FFT, meets δ: the estimate mode
//!   (`composition::pld::least_radius`, grid rounded to nearest with the mean kept), run
//!   on a grid of step `c·σ_L` and again at `c/2·σ_L`; the finer result is reported and
//!   the relative difference of the two (at least the search tolerance 1e-4) is its
//!   stated error (`composition::pld::exact_calibration`);
//! - series `pessimistic` (panels with `pessimistic = true`): the least R by the
//!   certified upper accountant (losses rounded up, tails and floating-point slack
//!   charged, the summed rounding recentred by Hoeffding), step `Δ = b·ε/√(k ln(1/η)/2)`.
//!   A valid upper bound on the least R; its δ at R is recomputed on a grid of half the
//!   step as a check.
//!
//! Columns: `panel,series,x,y,k,epsilon,delta,radius,certified_radius,gap,step,err,
//! delta_check` with `y = radius / norm` and `gap = certified_radius / radius − 1`.
//! `err`: 0 for `certified`; `max(|R(c) − R(c/2)|/R(c/2), 1e-4)` for `exact`;
//! `R/R_exact − 1` (how much the certificate costs) for `pessimistic`. `delta_check`: the
//! estimated true δ at the certified radius; δ at the exact radius as computed; the
//! certified δ at the pessimistic radius recomputed by the same accountant on a grid of
//! half the step (≤ δ is the claim).
//!
//! The FFT resolves δ only down to about 1e-14 (float round-off of the composed law), so
//! `exact` needs `δ ≥ 1e-14`; the certified accountant's round-off allowance grows like k,
//! so `pessimistic` needs `k ≤ 1e5` and `δ ≥ max(1e-10, 1e-12·k)`
//! (`composition::pld::pessimistic_min_delta`). The estimate's cost grows like `log k`
//! beyond k ≈ 1e4 (repeated squaring): about 1 s a point at k = 1e6, 15 s at 1e8, 30 s
//! at 1e10 (the largest k allowed); the pessimistic one like `√k`.
//!
//! With `method = "accountant"` (fig19b, `extended/fig19b.toml`) the exact radius comes
//! instead from the tilted accountant's certified bracket `[R_lo, R_hi]` on the least
//! radius (`composition::accountant::least_radius_bracket`, docs/accountant.md §7) at
//! relative `accuracy` (default 1e-3): `exact` is its geometric middle with `err` its
//! relative width, `pessimistic` its upper end (certified sufficient), both with
//! `step = 0` and `delta_check` = the δ at which the bracket is certified. It reaches
//! k ≤ 1e10 and δ ≥ 1e-300 (fig1's grids: 24 points in about 55 s on 2 cores, half of it
//! at δ = 1e-250); panels may not ask for the FFT's `pessimistic` series.
//!
//! ```toml
//! [params]
//! density = { family = "power", alpha = 2.0 }
//! estimate_step = 0.1        # exact: grid step over the per-query loss deviation
//! pessimistic_bias = 0.01    # pessimistic: Hoeffding deviation t/ε
//! [[params.panels]]
//! key = "a"
//! vary = "k"
//! grid = { logspace = [1e2, 1e6], n = 5, integer = true }
//! epsilon = 0.1
//! delta = 1e-10
//! pessimistic = false
//! ```

use super::bounded_grid::{all_points, density_family, key_of, DensityParams, PanelParams, Point};
use super::Job;
use crate::error::KeyError;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use composition::accountant::least_radius_bracket;
use composition::pld::{
    certified_shifted_noise_delta, exact_calibration, pessimistic_min_delta, shifted_noise_delta,
    Bound, RadiusSettings, PESSIMISTIC_MAX_K,
};
use densities::bounded::BoundedFamily;
use mgf::BoundedNoise;
use rayon::prelude::*;
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "exact_bounded_radius",
    about: "fig19: exact least radius of bounded noise (FFT accountant) vs the certified bound",
    prepare,
};

/// Largest k for the estimate (fig1's largest; one point takes about 30 s there).
const MAX_EXACT_K: f64 = 1e10;
/// Smallest δ the estimate resolves (float round-off of the composed law).
const MIN_EXACT_DELTA: f64 = 1e-14;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    density: DensityParams,
    estimate_step: f64,
    pessimistic_bias: f64,
    /// How the exact radius is found: `fft` (default) or `accountant`.
    #[serde(default)]
    method: Method,
    /// Relative accuracy of the accountant's ε brackets (`method = "accountant"` only).
    accuracy: Option<f64>,
    panels: Vec<PanelParams>,
}

/// The route to the exact least radius.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Method {
    /// The fixed-grid FFT estimate (`composition::pld::exact_calibration`): δ ≥ 1e-14.
    #[default]
    Fft,
    /// The tilted accountant's certified bracket on the least radius
    /// (`composition::accountant::least_radius_bracket`, docs/accountant.md §7): any δ
    /// down to 1e-300 and k up to 1e10.
    Accountant,
}

/// The validated job.
#[derive(Debug)]
struct ExactBoundedRadius {
    family: BoundedFamily,
    settings: RadiusSettings,
    method: Method,
    /// The accountant's accuracy (`Method::Accountant`).
    accuracy: f64,
    panel_keys: Vec<String>,
    pessimistic: Vec<bool>,
    points: Vec<Point>,
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let family = density_family(&p.density)?;
    let step_ok = |key: &str, v: f64, lo: f64, hi: f64| {
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(KeyError::new(
                key,
                format!("must be in [{lo}, {hi}], got {v}"),
            ))
        }
    };
    // Half of estimate_step is used too, so the lower end is twice the library's.
    let estimate_step = step_ok("params.estimate_step", p.estimate_step, 2e-3, 1.0)?;
    let pessimistic_bias = step_ok("params.pessimistic_bias", p.pessimistic_bias, 1e-3, 0.5)?;
    let (keys, points) = all_points(&p.panels)?;
    let pessimistic: Vec<bool> = p
        .panels
        .iter()
        .map(|q| q.pessimistic.unwrap_or(false))
        .collect();
    let accuracy = match (p.method, p.accuracy) {
        (Method::Accountant, a) => step_ok("params.accuracy", a.unwrap_or(1e-3), 1e-4, 1e-2)?,
        (Method::Fft, None) => 0.0,
        (Method::Fft, Some(_)) => {
            return Err(KeyError::new(
                "params.accuracy",
                "applies to method = \"accountant\" only",
            ))
        }
    };
    if p.method == Method::Accountant {
        // Its bracket's upper end is the certified upper variant at every point.
        if let Some(i) = pessimistic.iter().position(|&v| v) {
            return Err(KeyError::new(
                format!("params.panels[{i}].pessimistic"),
                "must be false with method = \"accountant\" (its bracket's upper end is the \
                 certified upper radius at every point)",
            ));
        }
    }
    // Points are in panel order; j counts within the panel.
    let mut j = 0;
    for (n, pt) in points.iter().enumerate() {
        if n > 0 && points[n - 1].panel != pt.panel {
            j = 0;
        }
        let (i, q) = (pt.panel, &p.panels[pt.panel]);
        let (max_k, min_delta, what) = match (p.method, pessimistic[i]) {
            (Method::Accountant, _) => (MAX_EXACT_K, MIN_ACCOUNTANT_DELTA, "for the accountant"),
            (Method::Fft, true) => (
                PESSIMISTIC_MAX_K as f64,
                pessimistic_min_delta(pt.k as u64),
                "with pessimistic = true (max(1e-10, 1e-12 k) and k <= 1e5)",
            ),
            (Method::Fft, false) => (MAX_EXACT_K, MIN_EXACT_DELTA, "for the FFT accountant"),
        };
        if pt.k > max_k {
            return Err(KeyError::new(
                key_of(i, j, q, "k"),
                format!("k must be in [1, {max_k:e}] {what}, got {}", pt.k),
            ));
        }
        if pt.delta < min_delta {
            return Err(KeyError::new(
                key_of(i, j, q, "delta"),
                format!(
                    "delta must be in [{min_delta:e}, 1) {what}, got {:e}",
                    pt.delta
                ),
            ));
        }
        j += 1;
    }
    match p.method {
        Method::Fft => {
            // About 2 s per point up to k = 1e6 on the reference machine (fig19: 18 points
            // in 35 s), growing like k^0.6 beyond (one point at k = 1e9, eps = 1e-3: 34 s).
            let seconds: f64 = points
                .iter()
                .map(|pt| 2.0 * (pt.k / 1e6).max(1.0).powf(0.6))
                .sum();
            crate::ranges::within_budget(
                "params.panels",
                points.len(),
                seconds / points.len().max(1) as f64,
            )?;
        }
        Method::Accountant => {
            // Measured at accuracy 1e-3 (fig1's 24 points): about 1.5 s a point at
            // δ = 1e-10, growing with ln(1/δ) (28 s at δ = 1e-250, k = 1e6); finer
            // accuracies take longer (the grid step scales like accuracy^{1/2}).
            let seconds: f64 = points
                .iter()
                .map(|pt| {
                    (1.5 + 27.0 * ((1.0 / pt.delta).ln() / 575.0).powi(2))
                        * (1e-3 / accuracy).sqrt()
                })
                .sum();
            crate::ranges::within_budget_total(
                "params.panels",
                &format!("{} accountant radius searches", points.len()),
                seconds,
            )?;
        }
    }
    Ok(Box::new(ExactBoundedRadius {
        family,
        settings: RadiusSettings {
            estimate_step,
            pessimistic_bias,
            ..RadiusSettings::default()
        },
        method: p.method,
        accuracy,
        panel_keys: keys,
        pessimistic,
        points,
    }))
}

/// Smallest δ of the accountant route (the accountant's range).
const MIN_ACCOUNTANT_DELTA: f64 = 1e-300;

/// One series' value at a point: radius, step, err, delta_check.
#[derive(Debug, Clone, Copy)]
struct Entry {
    radius: f64,
    step: f64,
    err: f64,
    delta_check: f64,
}

/// All series at one point.
struct PointResult {
    certified: Entry,
    exact: Entry,
    pessimistic: Option<Entry>,
}

impl ExactBoundedRadius {
    /// The accountant route: Dagan–Kur's certified radius, and the tilted accountant's
    /// certified bracket `[R_lo, R_hi]` on the least radius, reported as `exact` (its
    /// geometric middle, `err` its relative width, within which the least radius lies)
    /// and `pessimistic` (`R_hi`, certified sufficient; `err = R_hi/R_mid − 1`). Their
    /// `delta_check` is the δ at which the bracket is certified (the target); `step` is 0.
    fn compute_accountant(&self, noise: &BoundedNoise, pt: &Point) -> Result<PointResult, String> {
        let Point {
            k, epsilon, delta, ..
        } = *pt;
        let what = || format!("k = {k:e}, epsilon = {epsilon:e}, delta = {delta:e}");
        let cert = mgf::certified_radius(noise, k, epsilon, delta)
            .map_err(|e| format!("certified radius at {}: {e}", what()))?
            .radius;
        // The least radius is 55–100 % of the certified one (fig19, and near 99 % at tiny δ).
        let b = least_radius_bracket(
            self.family,
            k as u64,
            epsilon,
            delta,
            0.9 * cert,
            self.accuracy,
        )
        .map_err(|e| format!("accountant radius bracket at {}: {e}", what()))?;
        let mid = (b.lower * b.upper).sqrt();
        let entry = |radius: f64, err: f64| Entry {
            radius,
            step: 0.0,
            err,
            delta_check: delta,
        };
        Ok(PointResult {
            certified: entry(cert, 0.0),
            exact: entry(mid, b.upper / b.lower - 1.0),
            pessimistic: Some(entry(b.upper, b.upper / mid - 1.0)),
        })
    }

    fn compute(&self, noise: &BoundedNoise, pt: &Point) -> Result<PointResult, String> {
        if self.method == Method::Accountant {
            return self.compute_accountant(noise, pt);
        }
        let Point {
            k, epsilon, delta, ..
        } = *pt;
        let what = || format!("k = {k:e}, epsilon = {epsilon:e}, delta = {delta:e}");
        let fam = self.family;
        let ln_pdf = move |x: f64| -fam.f(x);
        let support = (-1.0, 1.0);
        let kk = k as u64;
        let cert = mgf::certified_radius(noise, k, epsilon, delta)
            .map_err(|e| format!("certified radius at {}: {e}", what()))?
            .radius;
        let cal = exact_calibration(
            &ln_pdf,
            support,
            kk,
            epsilon,
            delta,
            cert,
            &self.settings,
            self.pessimistic[pt.panel],
        )
        .map_err(|e| format!("exact radius at {}: {e}", what()))?;
        let fine = cal.estimate;
        let tail = 1e-4 * delta;
        let delta_at = |r: f64, step: f64, bound| {
            shifted_noise_delta(&ln_pdf, support, kk, epsilon, r, step, bound, tail)
                .map_err(|e| format!("delta at R = {r} at {}: {e}", what()))
        };
        let cert_true_delta = delta_at(cert, fine.step, Bound::Estimate)?;
        let exact = Entry {
            radius: fine.radius,
            step: fine.step,
            err: cal.estimate_error,
            delta_check: fine.delta,
        };
        let pessimistic = match cal.pessimistic {
            Some(r) => Some(Entry {
                radius: r.radius,
                step: r.step,
                err: r.radius / fine.radius - 1.0,
                delta_check: certified_shifted_noise_delta(
                    &ln_pdf,
                    support,
                    kk,
                    epsilon,
                    r.radius,
                    0.5 * r.step,
                    tail,
                    1e-3 * delta,
                )
                .map_err(|e| format!("certified delta at R = {} at {}: {e}", r.radius, what()))?,
            }),
            None => None,
        };
        Ok(PointResult {
            certified: Entry {
                radius: cert,
                step: 0.0,
                err: 0.0,
                delta_check: cert_true_delta,
            },
            exact,
            pessimistic,
        })
    }
}

impl Job for ExactBoundedRadius {
    fn panel_keys(&self) -> Vec<String> {
        self.panel_keys.clone()
    }

    fn series_keys(&self) -> Vec<String> {
        let mut keys = vec!["certified".to_string(), "exact".to_string()];
        if self.method == Method::Accountant || self.pessimistic.iter().any(|&p| p) {
            keys.push("pessimistic".to_string());
        }
        keys
    }

    fn extra_columns(&self) -> Vec<String> {
        [
            "k",
            "epsilon",
            "delta",
            "radius",
            "certified_radius",
            "gap",
            "step",
            "err",
            "delta_check",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    fn work_items(&self) -> usize {
        self.points.len()
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let noise = BoundedNoise::new(self.family)
            .map_err(|e| format!("bounded noise {}: {e}", self.family.name()))?;
        // Heaviest points first, so that the two threads finish together.
        let mut order: Vec<usize> = (0..self.points.len()).collect();
        order.sort_by(|&a, &b| {
            let cost = |p: &Point| {
                if self.method == Method::Accountant {
                    // The tilted search's cost grows with ln(1/δ) (module docs).
                    return (1.0 / p.delta).ln() + (p.k + 1.0).ln();
                }
                p.k * if self.pessimistic[p.panel] {
                    100.0
                } else {
                    1.0
                }
            };
            cost(&self.points[b]).total_cmp(&cost(&self.points[a]))
        });
        let mut results: Vec<(usize, PointResult)> = order
            .par_iter()
            .map(|&i| {
                let r = self.compute(&noise, &self.points[i]);
                tick();
                r.map(|r| (i, r))
            })
            .collect::<Result<_, _>>()?;
        results.sort_by_key(|(i, _)| *i);
        let mut table = Table::new(self.extra_columns());
        for (panel_index, panel) in self.panel_keys.iter().enumerate() {
            for key in self.series_keys() {
                for (pt, res) in self
                    .points
                    .iter()
                    .zip(results.iter().map(|(_, r)| r))
                    .filter(|(pt, _)| pt.panel == panel_index)
                {
                    let entry = match key.as_str() {
                        "certified" => Some(res.certified),
                        "exact" => Some(res.exact),
                        _ => res.pessimistic,
                    };
                    let Some(e) = entry else { continue };
                    table.push(Row {
                        panel: panel.clone(),
                        series: key.clone(),
                        x: pt.x,
                        y: e.radius / pt.norm(),
                        extra: vec![
                            pt.k,
                            pt.epsilon,
                            pt.delta,
                            e.radius,
                            res.certified.radius,
                            res.certified.radius / e.radius - 1.0,
                            e.step,
                            e.err,
                            e.delta_check,
                        ],
                    });
                }
            }
        }
        Ok(table)
    }
}
