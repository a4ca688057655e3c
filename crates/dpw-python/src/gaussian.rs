//! The Gaussian mechanism's calibrations and privacy profile (docs/accountant.md §2.1;
//! Balle & Wang 2018, Theorem 8 and Algorithm 1), from `densities::gaussian`.

use crate::broadcast::apply;
use pyo3::prelude::*;

/// A result that is not a finite number is refused rather than returned.
fn finite(what: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!(
            "{what} is not representable in double precision at these arguments"
        ))
    }
}

fn sensitivity_or_one<'py>(py: Python<'py>, s: Option<&Bound<'py, PyAny>>) -> Bound<'py, PyAny> {
    match s {
        Some(s) => s.clone(),
        None => pyo3::types::PyFloat::new(py, 1.0).into_any(),
    }
}

/// The least sigma for which Gaussian noise N(0, sigma^2) on a query of L2 sensitivity
/// `sensitivity` is (epsilon, delta)-DP (the analytic Gaussian mechanism of Balle & Wang
/// 2018, Algorithm 1), certified: gaussian_delta(epsilon, sensitivity/sigma) <= delta.
///
/// epsilon > 0, 0 < delta < 1, sensitivity > 0. Numbers give a float; arrays (numpy)
/// broadcast and give an array. Bad arguments raise ValueError.
#[pyfunction]
#[pyo3(signature = (epsilon, delta, sensitivity=None), text_signature = "(epsilon, delta, sensitivity=1.0)")]
fn analytic_sigma(
    py: Python<'_>,
    epsilon: &Bound<'_, PyAny>,
    delta: &Bound<'_, PyAny>,
    sensitivity: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let s = sensitivity_or_one(py, sensitivity);
    apply(
        py,
        ["epsilon", "delta", "sensitivity"],
        [epsilon, delta, &s],
        |[e, d, s]| {
            let v = densities::gaussian::analytic_sigma(e, d, s).map_err(|e| e.to_string())?;
            finite("sigma", v)
        },
    )
}

/// The classical Gaussian mechanism's sigma = sensitivity * sqrt(2 ln(1.25/delta)) /
/// epsilon (Dwork & Roth 2014, Theorem A.1), valid for 0 < epsilon < 1 only.
///
/// 0 < epsilon < 1, 0 < delta < 1, sensitivity > 0. Arrays broadcast. Bad arguments
/// raise ValueError.
#[pyfunction]
#[pyo3(signature = (epsilon, delta, sensitivity=None), text_signature = "(epsilon, delta, sensitivity=1.0)")]
fn classical_sigma(
    py: Python<'_>,
    epsilon: &Bound<'_, PyAny>,
    delta: &Bound<'_, PyAny>,
    sensitivity: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let s = sensitivity_or_one(py, sensitivity);
    apply(
        py,
        ["epsilon", "delta", "sensitivity"],
        [epsilon, delta, &s],
        |[e, d, s]| {
            let v = densities::gaussian::classical_sigma(e, d, s).map_err(|e| e.to_string())?;
            finite("sigma", v)
        },
    )
}

/// The privacy profile of the Gaussian mechanism with mu = sensitivity/sigma:
/// delta(epsilon) = Phi(mu/2 - epsilon/mu) - e^epsilon Phi(-mu/2 - epsilon/mu)
/// (Balle & Wang 2018, Theorem 8), with relative accuracy down to tiny delta (it is 0
/// only where delta underflows a double). k-fold composition is mu * sqrt(k).
///
/// epsilon finite (negative allowed), mu >= 0 finite. Arrays broadcast. Bad arguments
/// raise ValueError.
#[pyfunction]
#[pyo3(signature = (epsilon, mu))]
fn gaussian_delta(
    py: Python<'_>,
    epsilon: &Bound<'_, PyAny>,
    mu: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    apply(py, ["epsilon", "mu"], [epsilon, mu], |[e, m]| {
        if !e.is_finite() {
            return Err(format!(
                "epsilon = {e} is outside the allowed range (-inf, inf), finite"
            ));
        }
        if !(m.is_finite() && m >= 0.0) {
            return Err(format!(
                "mu = {m} is outside the allowed range [0, inf), finite"
            ));
        }
        finite("delta", densities::gaussian::gaussian_delta(e, m))
    })
}

/// The inverse of gaussian_delta: the least epsilon >= 0 with
/// gaussian_delta(epsilon, mu) <= delta (certified to the last bit).
///
/// 0 < delta < 1, mu >= 0 finite. Arrays broadcast. Bad arguments raise ValueError.
#[pyfunction]
#[pyo3(signature = (delta, mu))]
fn gaussian_epsilon(
    py: Python<'_>,
    delta: &Bound<'_, PyAny>,
    mu: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    apply(py, ["delta", "mu"], [delta, mu], |[d, m]| {
        if !(d > 0.0 && d < 1.0) {
            return Err(format!("delta = {d} is outside the allowed range (0, 1)"));
        }
        if !(m.is_finite() && m >= 0.0) {
            return Err(format!(
                "mu = {m} is outside the allowed range [0, inf), finite"
            ));
        }
        finite("epsilon", densities::gaussian::gaussian_epsilon(d, m))
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analytic_sigma, m)?)?;
    m.add_function(wrap_pyfunction!(classical_sigma, m)?)?;
    m.add_function(wrap_pyfunction!(gaussian_delta, m)?)?;
    m.add_function(wrap_pyfunction!(gaussian_epsilon, m)?)?;
    Ok(())
}
