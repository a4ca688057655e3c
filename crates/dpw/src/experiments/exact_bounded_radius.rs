//! Kind `exact_bounded_radius` (fig19, fig19b): Dagan–Kur Figure 1 with the *exact*
//! least radius of the bounded-noise mechanism beside the certified bound (docs/maths.md
//! §1.4; the certified bound is §1.4 steps 1–6).
//!
//! Per point `(k, ε, δ)`, normalised like fig1 by `√(k log(1/δ))/ε`:
//! - series `certified`: `mgf::certified_radius` (Chernoff bound on the truncated loss);
//! - series `exact`: the certified accountant's bracket `[R_lo, R_hi]` on the least
//!   radius whose k-fold composition meets (ε, δ) (`composition::accountant::
//!   least_radius_bracket`, the general solver on `radius`, docs/accountant.md §7), at
//!   the solver's `accuracy` (the bracket is at most 3× that wide); y is its geometric
//!   middle. `R_hi` is certified
//!   sufficient, `R_lo` certified insufficient.
//!
//! Columns: `panel,series,x,y,k,epsilon,delta,radius,certified_radius,gap,lower,upper,
//! width` with `radius = y·norm`, `gap = certified_radius / radius − 1` (how much the
//! certificate over-states the noise), `lower`/`upper` the bracket (both the radius for
//! `certified`) and `width = upper/lower − 1` (0 for `certified`).
//!
//! Reaches k ≤ 1e10 and δ ≥ 1e-300 (fig1's 24 points in about a minute on 2 cores, half
//! of it at δ = 1e-250).
//!
//! ```toml
//! [params]
//! density = { family = "power", alpha = 2.0 }
//! accuracy = 1e-3            # the solver's accuracy, in [1e-4, 1e-2] (bracket ≤ 3× as wide)
//! [[params.panels]]
//! key = "a"
//! vary = "k"
//! grid = { logspace = [1e2, 1e6], n = 5, integer = true }
//! epsilon = 0.1
//! delta = 1e-10
//! ```

use super::bounded_grid::{all_points, density_family, key_of, DensityParams, PanelParams, Point};
use super::Job;
use crate::error::KeyError;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use composition::accountant::{least_radius_bracket_until, Work};
use densities::bounded::BoundedFamily;
use mgf::BoundedNoise;
use rayon::prelude::*;
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "exact_bounded_radius",
    about:
        "fig19: exact least radius of bounded noise (certified accountant) vs the certified bound",
    prepare,
};

/// Largest k (fig1's largest).
const MAX_K: f64 = 1e10;
/// Smallest δ (the accountant's range).
const MIN_DELTA: f64 = 1e-300;
/// Largest δ: near 1 the least radius sits where almost all of one query's mass is the
/// `+∞` atom, and the search there ran for minutes (hostile case: log10(1/δ) = 1e-12).
const MAX_DELTA: f64 = 0.5;
/// Work budget of one point's search (bins transformed; fig1's heaviest point, δ = 1e-250,
/// uses a fraction of it): past it the point is refused, never left running.
const POINT_WORK: u64 = 600_000_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    density: DensityParams,
    /// The solver's accuracy (default 1e-3; the bracket on the radius is at most 3× as
    /// wide).
    accuracy: Option<f64>,
    /// Keys of the fixed-grid accountant this kind used before (issue 32): refused with
    /// a pointer to `accuracy`.
    estimate_step: Option<f64>,
    pessimistic_bias: Option<f64>,
    method: Option<String>,
    panels: Vec<PanelParams>,
}

/// The validated job.
#[derive(Debug)]
struct ExactBoundedRadius {
    family: BoundedFamily,
    accuracy: f64,
    panel_keys: Vec<String>,
    points: Vec<Point>,
}

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    for (key, given) in [
        ("params.estimate_step", p.estimate_step.is_some()),
        ("params.pessimistic_bias", p.pessimistic_bias.is_some()),
        ("params.method", p.method.is_some()),
    ] {
        if given {
            return Err(KeyError::new(
                key,
                "no longer used: the exact radius is the certified accountant's bracket at \
                 every point; give params.accuracy (the solver's, in [1e-4, 1e-2]) instead",
            ));
        }
    }
    let family = density_family(&p.density)?;
    let accuracy = p.accuracy.unwrap_or(1e-3);
    if !(1e-4..=1e-2).contains(&accuracy) {
        return Err(KeyError::new(
            "params.accuracy",
            format!("must be in [1e-4, 1e-2], got {accuracy}"),
        ));
    }
    let (keys, points) = all_points(&p.panels)?;
    // Points are in panel order; j counts within the panel.
    let mut j = 0;
    for (n, pt) in points.iter().enumerate() {
        if n > 0 && points[n - 1].panel != pt.panel {
            j = 0;
        }
        let (i, q) = (pt.panel, &p.panels[pt.panel]);
        if pt.k > MAX_K {
            return Err(KeyError::new(
                key_of(i, j, q, "k"),
                format!("k must be in [1, {MAX_K:e}], got {}", pt.k),
            ));
        }
        if !(MIN_DELTA..=MAX_DELTA).contains(&pt.delta) {
            return Err(KeyError::new(
                key_of(i, j, q, "delta"),
                format!(
                    "delta must be in [{MIN_DELTA:e}, {MAX_DELTA}] (log10(1/delta) >= 0.302), got {:e}",
                    pt.delta
                ),
            ));
        }
        j += 1;
    }
    // Measured at accuracy 1e-3 (fig1's 24 points): about 1.5 s a point at δ = 1e-10,
    // growing with ln(1/δ) (28 s at δ = 1e-250, k = 1e6); finer accuracies take longer
    // (the grid step scales like accuracy^{1/2}).
    let seconds: f64 = points
        .iter()
        .map(|pt| (1.5 + 27.0 * ((1.0 / pt.delta).ln() / 575.0).powi(2)) * (1e-3 / accuracy).sqrt())
        .sum();
    crate::ranges::within_budget_total(
        "params.panels",
        &format!("{} accountant radius searches", points.len()),
        seconds,
    )?;
    Ok(Box::new(ExactBoundedRadius {
        family,
        accuracy,
        panel_keys: keys,
        points,
    }))
}

/// All series at one point: the certified radius and the bracket on the least one.
struct PointResult {
    certified: f64,
    lower: f64,
    upper: f64,
}

impl ExactBoundedRadius {
    fn compute(&self, noise: &BoundedNoise, pt: &Point) -> Result<PointResult, String> {
        let Point {
            k, epsilon, delta, ..
        } = *pt;
        let what = || format!("k = {k:e}, epsilon = {epsilon:e}, delta = {delta:e}");
        let cert = mgf::certified_radius(noise, k, epsilon, delta)
            .map_err(|e| format!("certified radius at {}: {e}", what()))?
            .radius;
        // The least radius is 55–100 % of the certified one (fig19, and near 99 % at tiny δ).
        let b = least_radius_bracket_until(
            self.family,
            k as u64,
            epsilon,
            delta,
            0.9 * cert,
            self.accuracy,
            &Work::new(Some(POINT_WORK)),
        )
        .map_err(|e| format!("accountant radius bracket at {}: {e}", what()))?;
        Ok(PointResult {
            certified: cert,
            lower: b.lower,
            upper: b.upper,
        })
    }
}

impl Job for ExactBoundedRadius {
    fn panel_keys(&self) -> Vec<String> {
        self.panel_keys.clone()
    }

    fn series_keys(&self) -> Vec<String> {
        vec!["certified".to_string(), "exact".to_string()]
    }

    fn extra_columns(&self) -> Vec<String> {
        [
            "k",
            "epsilon",
            "delta",
            "radius",
            "certified_radius",
            "gap",
            "lower",
            "upper",
            "width",
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
        // Heaviest points first (the search's cost grows with ln(1/δ)), so that the two
        // threads finish together.
        let mut order: Vec<usize> = (0..self.points.len()).collect();
        let cost = |p: &Point| (1.0 / p.delta).ln() + (p.k + 1.0).ln();
        order.sort_by(|&a, &b| cost(&self.points[b]).total_cmp(&cost(&self.points[a])));
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
                    let (radius, lower, upper) = if key == "certified" {
                        (res.certified, res.certified, res.certified)
                    } else {
                        ((res.lower * res.upper).sqrt(), res.lower, res.upper)
                    };
                    table.push(Row {
                        panel: panel.clone(),
                        series: key.clone(),
                        x: pt.x,
                        y: radius / pt.norm(),
                        extra: vec![
                            pt.k,
                            pt.epsilon,
                            pt.delta,
                            radius,
                            res.certified,
                            res.certified / radius - 1.0,
                            lower,
                            upper,
                            upper / lower - 1.0,
                        ],
                    });
                }
            }
        }
        Ok(table)
    }
}
