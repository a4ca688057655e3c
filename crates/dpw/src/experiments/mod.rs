//! Experiments: each module turns a manifest's `[params]` into a prepared [`Job`] and
//! runs it into a tidy [`Table`]. Each module exposes one [`crate::registry::Kind`];
//! the registry lists them. Nothing figure-specific lives outside its module.

pub mod adaptive_order;
pub mod adaptive_queries;
pub mod bounded_grid;
pub mod bounded_vs_gaussian;
pub mod calibration_curve;
pub mod clt_tradeoff;
pub mod composition_bounds;
pub mod exact_bounded_radius;
pub mod gaussian_calibration;
pub mod heatmap_release;
pub mod histogram_mechanisms;
pub mod mean_estimation;
pub mod noise_densities;
pub mod noise_ratio;
pub mod privacy_curve;
pub mod solve_curve;
pub mod topk_counts;
pub mod tradeoff_curve;
pub mod tradeoff_curves;

use crate::error::KeyError;
use crate::ranges::show;
use crate::table::Table;

/// A validated experiment, ready to run.
///
/// Everything a user can get wrong has been checked when a `Job` exists: running it can
/// only fail on a numerical problem.
pub trait Job: Send + Sync {
    /// Keys of the panels the table will contain, in order.
    fn panel_keys(&self) -> Vec<String>;
    /// Keys of the series the table will contain, in order.
    fn series_keys(&self) -> Vec<String>;
    /// Extra numeric columns after `panel,series,x,y`.
    fn extra_columns(&self) -> Vec<String>;
    /// Number of work items (for the progress display).
    fn work_items(&self) -> usize;
    /// Computes the table; `tick` is called once per finished work item (from any thread).
    fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<Table, String>;
}

/// `Ok(v)` if `v` is finite and `> 0`, else a [`KeyError`] for `key`. Subnormal values
/// (below 2.2e-308) are refused too: they keep too few digits to compute with.
pub fn positive(key: &str, v: f64) -> Result<f64, KeyError> {
    if v.is_finite() && v >= f64::MIN_POSITIVE {
        Ok(v)
    } else if v > 0.0 {
        Err(KeyError::new(
            key,
            format!(
                "must be > 0 and at least 2.2e-308 (not subnormal), got {}",
                show(v)
            ),
        ))
    } else {
        Err(KeyError::new(key, format!("must be > 0, got {}", show(v))))
    }
}

/// `Ok(v)` if `0 < v < 1` (and not subnormal), else a [`KeyError`] for `key`.
pub fn open_unit(key: &str, v: f64) -> Result<f64, KeyError> {
    if (f64::MIN_POSITIVE..1.0).contains(&v) {
        Ok(v)
    } else {
        Err(KeyError::new(
            key,
            format!("must be in (0, 1) and at least 2.2e-308, got {}", show(v)),
        ))
    }
}

/// Largest integer every smaller integer of which a double represents exactly (2^53).
pub const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// `Ok(v)` if `v` is an integer with `1 ≤ v ≤ 2^53`, else a [`KeyError`] for `key`.
pub fn count(key: &str, v: f64) -> Result<f64, KeyError> {
    if v.fract() == 0.0 && (1.0..=MAX_EXACT_INTEGER).contains(&v) {
        Ok(v)
    } else {
        Err(KeyError::new(
            key,
            format!("must be an integer in [1, 2^53], got {}", show(v)),
        ))
    }
}

/// Fails if `keys` repeats an entry; `what(i)` is the key path of entry `i`.
pub fn distinct(keys: &[String], what: impl Fn(usize) -> String) -> Result<(), KeyError> {
    for (i, k) in keys.iter().enumerate() {
        if let Some(j) = keys[..i].iter().position(|p| p == k) {
            return Err(KeyError::new(
                what(i),
                format!("duplicate \"{k}\" (also at index {j}); keys must be distinct"),
            ));
        }
    }
    Ok(())
}

/// Validates a non-empty list of distinct δ values in (0, 1) under `key`.
pub fn delta_list(key: &str, deltas: &[f64]) -> Result<Vec<f64>, KeyError> {
    if deltas.is_empty() {
        return Err(KeyError::new(key, "must list at least one delta in (0, 1)"));
    }
    for (i, &d) in deltas.iter().enumerate() {
        open_unit(&format!("{key}[{i}]"), d)?;
    }
    let names: Vec<String> = deltas.iter().map(|d| delta_label(*d)).collect();
    distinct(&names, |i| format!("{key}[{i}]"))?;
    Ok(deltas.to_vec())
}

/// The parameters of the (ε, δ)-grid kinds: `params.sensitivity > 0`, the δ list of
/// `params.deltas` ([`delta_list`]) and every `params.epsilon` value `> 0`.
pub fn sensitivity_deltas_epsilons(
    sensitivity: f64,
    deltas: &[f64],
    epsilon: &crate::grid::Grid,
) -> Result<(f64, Vec<f64>, Vec<f64>), KeyError> {
    let sensitivity = positive("params.sensitivity", sensitivity)
        .and_then(|v| crate::ranges::SENSITIVITY.check("params.sensitivity", v))?;
    let deltas = delta_list("params.deltas", deltas)?;
    for (i, &d) in deltas.iter().enumerate() {
        crate::ranges::DELTA.check(&format!("params.deltas[{i}]"), d)?;
    }
    for (i, &e) in epsilon.values().iter().enumerate() {
        let key = format!("params.epsilon[{i}]");
        positive(&key, e).and_then(|e| crate::ranges::EPSILON.check(&key, e))?;
    }
    Ok((sensitivity, deltas, epsilon.values().to_vec()))
}

/// Validates a list of `(key, SPEC)` mechanisms under `at` (`params.mechanisms`, …):
/// non-empty, distinct non-empty keys, every SPEC parsed
/// ([`composition::accountant::MechanismSpec`]).
pub fn mechanism_specs(
    at: &str,
    list: &[(&str, &str)],
) -> Result<Vec<(String, composition::accountant::MechanismSpec)>, KeyError> {
    let keys: Vec<&str> = list.iter().map(|m| m.0).collect();
    mechanism_keys(at, &keys, "must list at least one { key, spec } mechanism")?;
    list.iter()
        .enumerate()
        .map(|(i, &(key, spec))| Ok((key.to_string(), mechanism_spec(at, i, key, spec)?)))
        .collect()
}

/// The keys of a mechanism list under `at`: at least one (else `empty`, the message), all
/// distinct.
pub fn mechanism_keys(at: &str, keys: &[&str], empty: &str) -> Result<(), KeyError> {
    if keys.is_empty() {
        return Err(KeyError::new(at, empty));
    }
    let owned: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    distinct(&owned, |i| format!("{at}[{i}].key"))
}

/// Entry `i` under `at`: its key non-empty and its SPEC parsed (errors named
/// `{at}[i].key`, `{at}[i].spec`).
pub fn mechanism_spec(
    at: &str,
    i: usize,
    key: &str,
    spec: &str,
) -> Result<composition::accountant::MechanismSpec, KeyError> {
    if key.is_empty() {
        return Err(KeyError::new(format!("{at}[{i}].key"), "must not be empty"));
    }
    spec.parse()
        .map_err(|e: composition::accountant::SpecError| {
            KeyError::new(format!("{at}[{i}].spec"), e.0)
        })
}

/// Validates `params.accuracy`, a relative accuracy in `[1e-6, 0.5]`.
pub fn relative_accuracy(a: Option<f64>) -> Result<Option<f64>, KeyError> {
    match a {
        Some(a) if !(1e-6..=0.5).contains(&a) => Err(KeyError::new(
            "params.accuracy",
            format!("must be in [1e-6, 0.5], got {a}"),
        )),
        other => Ok(other),
    }
}

/// `f(j, x)` for every series `j < series` and grid value `x` of `xs`, series by series
/// in grid order: the points are independent, so they run on all cores (the accountant's
/// own parallel parts share the same pool), and `tick` is called once per point done.
/// A point's error stops the run and is returned (which one, when several fail, is not
/// fixed).
pub fn per_point<T: Send>(
    series: usize,
    xs: &[f64],
    tick: &(dyn Fn() + Sync),
    f: impl Fn(usize, f64) -> Result<T, String> + Sync,
) -> Result<Vec<T>, String> {
    use rayon::prelude::*;
    let points: Vec<(usize, f64)> = (0..series)
        .flat_map(|j| xs.iter().map(move |&x| (j, x)))
        .collect();
    points
        .par_iter()
        .map(|&(j, x)| {
            let v = f(j, x)?;
            tick();
            Ok(v)
        })
        .collect()
}

/// The short form of δ used in series keys: `1e-5`, `0.5` → `5e-1`.
pub fn delta_label(delta: f64) -> String {
    format!("{delta:e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validators() {
        assert!(positive("e", 0.0).is_err());
        assert!(positive("e", f64::INFINITY).is_err());
        assert_eq!(positive("e", 2.0), Ok(2.0));
        assert!(
            open_unit("d", 0.0).is_err()
                && open_unit("d", 1.0).is_err()
                && open_unit("d", f64::NAN).is_err()
        );
        assert!(count("k", 2.5).is_err() && count("k", 0.0).is_err() && count("k", 1e300).is_err());
        assert_eq!(count("k", 1e6), Ok(1e6));
        let e = distinct(&["a".into(), "b".into(), "a".into()], |i| format!("x[{i}]")).unwrap_err();
        assert_eq!(e.key, "x[2]");
    }
}
