//! `dpw calibrate` for Python: the rows of `dpw::calibrate::calibrate` as tuples, which
//! the Python package wraps in dataclasses.

use crate::{argument_message, value_error};
use dpw::calibrate::{calibrate, Request};
use pyo3::prelude::*;

/// One row: (mechanism, parameter, scale, mean_abs, second_moment, max_error,
/// upper_bounds, note); the numbers are `None` where the mechanism does not apply, and
/// the note then says why.
type RowTuple = (
    String,
    String,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    Option<bool>,
    String,
);

/// The calibration rows for k queries of sensitivity Δ at (ε, δ) (see the Python
/// wrapper `dpw.calibrate` for the documentation).
#[pyfunction]
#[pyo3(signature = (epsilon, delta, queries, sensitivity, beta, density, exact = true))]
#[allow(clippy::too_many_arguments)]
fn calibrate_rows(
    py: Python<'_>,
    epsilon: f64,
    delta: f64,
    queries: f64,
    sensitivity: f64,
    beta: f64,
    density: &str,
    exact: bool,
) -> PyResult<Vec<RowTuple>> {
    let req = Request::new(epsilon, delta, queries, sensitivity, beta)
        .and_then(|r| r.with_density(density))
        .map(|r| if exact { r } else { r.without_exact_row() })
        .map_err(|e| value_error(argument_message(&e)))?;
    let rows = py.detach(|| calibrate(&req));
    Ok(rows
        .into_iter()
        .map(|r| match r.result {
            Ok(n) => (
                r.mechanism,
                r.parameter.to_string(),
                Some(n.scale),
                Some(n.mean_abs),
                Some(n.second_moment),
                Some(n.max_error),
                Some(n.upper_bounds),
                r.note,
            ),
            Err(why) => (
                r.mechanism,
                r.parameter.to_string(),
                None,
                None,
                None,
                None,
                None,
                why,
            ),
        })
        .collect())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(calibrate_rows, m)?)
}
