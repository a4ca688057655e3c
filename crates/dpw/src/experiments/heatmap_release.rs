//! Kind `heatmap_release`: Balle & Wang (2018) Figure 2 — a heat map released with the
//! analytic Gaussian mechanism and denoised (docs/maths.md §4). The NYC taxi data of the
//! paper are not available offline; the truth is the documented synthetic city of
//! `denoise::city` (a downtown core, districts, hot spots and avenues over a background,
//! Poisson counts per cell, fixed seed).
//!
//! ```toml
//! [params]
//! side = 64
//! trips = 15000
//! city_seed = 2018
//! noise_seed = 2018
//! epsilon = 1.0
//! delta = 1e-6
//! sensitivity = 5.0
//! ```
//! Panels `truth`, `raw`, `mean` (the flat baseline: every cell at the release's mean),
//! `james_stein`, `threshold`, `wavelet` (heatmaps: x = column, y = row), one series
//! `field`. Columns: `panel,series,x,y,value,rmse` (the RMSE against
//! the truth, repeated on every cell; a panel title may show it as `{rmse}`).

use super::{count, open_unit, positive, Job};
use crate::error::KeyError;
use crate::manifest::ParamsInput;
use crate::registry::Kind;
use crate::table::{Row, Table};
use denoise::city::{heatmap_release, synthetic_city};
use serde::Deserialize;

/// Registry entry.
pub const KIND: Kind = Kind {
    name: "heatmap_release",
    about: "Balle–Wang Fig. 2: synthetic city heat map released with aGM and denoised",
    prepare,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    side: f64,
    trips: f64,
    city_seed: u64,
    noise_seed: u64,
    epsilon: f64,
    delta: f64,
    sensitivity: f64,
}

#[derive(Debug)]
struct HeatmapRelease {
    side: usize,
    trips: f64,
    city_seed: u64,
    noise_seed: u64,
    epsilon: f64,
    delta: f64,
    sensitivity: f64,
}

const PANELS: [&str; 6] = [
    "truth",
    "raw",
    "mean",
    "james_stein",
    "threshold",
    "wavelet",
];

fn prepare(input: &ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError> {
    let p: Params = input.parse()?;
    let side = count("params.side", p.side)?;
    if !(side as usize).is_power_of_two() || !(4.0..=1024.0).contains(&side) {
        return Err(KeyError::new(
            "params.side",
            format!("must be a power of two in [4, 1024] (the Haar transform), got {side}"),
        ));
    }
    // Fewer than one trip leaves cells with a zero Poisson rate (issue 15: a panic at
    // trips = 1e-320).
    let trips = p.trips;
    if !(1.0..=1e9).contains(&trips) {
        return Err(KeyError::new(
            "params.trips",
            format!("must be in [1, 1e9], got {}", crate::ranges::show(trips)),
        ));
    }
    Ok(Box::new(HeatmapRelease {
        side: side as usize,
        trips,
        city_seed: p.city_seed,
        noise_seed: p.noise_seed,
        epsilon: positive("params.epsilon", p.epsilon)
            .and_then(|e| crate::ranges::EPSILON.check("params.epsilon", e))?,
        delta: open_unit("params.delta", p.delta)
            .and_then(|d| crate::ranges::DELTA.check("params.delta", d))?,
        sensitivity: positive("params.sensitivity", p.sensitivity)
            .and_then(|s| crate::ranges::SENSITIVITY.check("params.sensitivity", s))?,
    }))
}

impl Job for HeatmapRelease {
    fn panel_keys(&self) -> Vec<String> {
        PANELS.iter().map(|s| s.to_string()).collect()
    }

    fn series_keys(&self) -> Vec<String> {
        vec!["field".into()]
    }

    fn extra_columns(&self) -> Vec<String> {
        vec!["value".into(), "rmse".into()]
    }

    fn work_items(&self) -> usize {
        1
    }

    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String> {
        let truth =
            synthetic_city(self.side, self.trips, self.city_seed).map_err(|e| e.to_string())?;
        let r = heatmap_release(
            truth.view(),
            self.epsilon,
            self.delta,
            self.sensitivity,
            self.noise_seed,
        )
        .map_err(|e| e.to_string())?;
        let fields = [
            (&truth, 0.0),
            (&r.raw.field, r.raw.rmse),
            (&r.mean.field, r.mean.rmse),
            (&r.james_stein.field, r.james_stein.rmse),
            (&r.threshold.field, r.threshold.rmse),
            (&r.wavelet.field, r.wavelet.rmse),
        ];
        let mut table = Table::new(self.extra_columns());
        for (panel, (field, rmse)) in PANELS.iter().zip(fields) {
            // Row by row: the order of the checked-in CSV.
            for ((row, col), &v) in field.indexed_iter() {
                table.push(Row {
                    panel: panel.to_string(),
                    series: "field".into(),
                    x: col as f64,
                    y: row as f64,
                    extra: vec![v, rmse],
                });
            }
        }
        tick();
        Ok(table)
    }
}
