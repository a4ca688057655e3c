//! The radius of bounded noise for k queries: the certified Chernoff radius of Dagan & Kur
//! (`mgf::certified_radius`, formulas of docs/accountant.md §2.5 for the noise) and the
//! exact least radius bracketed by the certified accountant
//! (`composition::accountant::least_radius_bracket`, docs/accountant.md §7).

use crate::accountant::bounded_family;
use crate::broadcast::{count, number, optional_number};
use crate::value_error;
use composition::accountant::{least_radius_bracket_until, Work, MAX_COUNT};
use mgf::{certified_radius as chernoff_radius, BoundedNoise};
use pyo3::prelude::*;

fn check_eps_delta(epsilon: f64, delta: f64) -> PyResult<()> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(value_error(format!(
            "epsilon = {epsilon} is outside the allowed range (0, inf), finite"
        )));
    }
    // As the CLI: below 1e-300 the radius's tail quadratures need unbounded memory (δ =
    // 1e-320 asked 8 GiB and aborted the interpreter).
    if !(1e-300..1.0).contains(&delta) {
        return Err(value_error(format!(
            "delta = {delta} is outside the allowed range [1e-300, 1)"
        )));
    }
    Ok(())
}

/// The certified radius R for `k` queries of sensitivity 1 at (epsilon, delta).
fn certified(
    py: Python<'_>,
    k: f64,
    epsilon: f64,
    delta: f64,
    family: densities::bounded::BoundedFamily,
) -> PyResult<f64> {
    let noise = BoundedNoise::new(family).map_err(|e| value_error(e.to_string()))?;
    let r = py
        .detach(|| chernoff_radius(&noise, k, epsilon, delta))
        .map_err(|e| value_error(e.to_string()))?;
    if !(r.radius.is_finite() && r.radius > 0.0) {
        return Err(value_error(
            "radius: not representable in double precision at these arguments",
        ));
    }
    Ok(r.radius)
}

/// A certified radius R: bounded noise R*X (X with density proportional to e^{-f} on
/// (-1, 1), family "power" with alpha (default 2) or "exp") added to each of k queries
/// of sensitivity 1 is (epsilon, delta)-DP (Dagan & Kur 2022, Section 10: a Chernoff
/// bound on the truncated privacy loss, every step rounded to the safe side). Scale R by
/// the sensitivity for other sensitivities. k >= 1 (real), epsilon > 0, 0 < delta < 1.
#[pyfunction]
#[pyo3(signature = (k, epsilon, delta, family="power", alpha=None))]
fn certified_radius(
    py: Python<'_>,
    k: &Bound<'_, PyAny>,
    epsilon: &Bound<'_, PyAny>,
    delta: &Bound<'_, PyAny>,
    family: &str,
    alpha: Option<&Bound<'_, PyAny>>,
) -> PyResult<f64> {
    let k = number("k", k)?;
    if !(k.is_finite() && k >= 1.0) {
        return Err(value_error(format!(
            "k = {k} is outside the allowed range [1, inf), finite"
        )));
    }
    let (epsilon, delta) = (number("epsilon", epsilon)?, number("delta", delta)?);
    check_eps_delta(epsilon, delta)?;
    let family = bounded_family(family, alpha)?;
    certified(py, k, epsilon, delta, family)
}

/// A certified bracket on the least radius: `lower` is certified insufficient, `upper`
/// certified sufficient.
#[pyclass(frozen, get_all, module = "dpw")]
#[derive(Clone)]
pub struct RadiusBracket {
    /// A radius the accountant certifies too small (epsilon(delta) > epsilon with it).
    lower: f64,
    /// A radius the accountant certifies sufficient: the one to use.
    upper: f64,
    /// The certified Chernoff radius the search started from (certified_radius).
    certified: f64,
    /// Number of accountant brackets evaluated.
    evaluations: usize,
}

#[pymethods]
impl RadiusBracket {
    fn __repr__(&self) -> String {
        format!(
            "RadiusBracket(lower={:?}, upper={:?}, certified={:?})",
            self.lower, self.upper, self.certified
        )
    }
}

/// The exact least radius R of bounded noise R*X for k queries of sensitivity 1 at
/// (epsilon, delta), bracketed from both sides by the certified privacy-loss accountant
/// (lower: certified too small, upper: certified sufficient; docs/accountant.md §7). The
/// search starts at certified_radius(...). k an integer in [1, 1e10], accuracy in
/// [1e-8, 0.5], default 1e-3 (the bracket's relative width is a few times it; each
/// tenfold finer accuracy costs about five times the time, some seconds at 1e-3).
#[pyfunction]
#[pyo3(
    signature = (k, epsilon, delta, family="power", alpha=None, accuracy=None),
    text_signature = "(k, epsilon, delta, family=\"power\", alpha=None, accuracy=1e-3)"
)]
fn least_radius(
    py: Python<'_>,
    k: &Bound<'_, PyAny>,
    epsilon: &Bound<'_, PyAny>,
    delta: &Bound<'_, PyAny>,
    family: &str,
    alpha: Option<&Bound<'_, PyAny>>,
    accuracy: Option<&Bound<'_, PyAny>>,
) -> PyResult<RadiusBracket> {
    let k = count("k", k, MAX_COUNT as f64)?;
    let (epsilon, delta) = (number("epsilon", epsilon)?, number("delta", delta)?);
    check_eps_delta(epsilon, delta)?;
    let acc = optional_number("accuracy", accuracy)?.unwrap_or(1e-3);
    if !(1e-8..=0.5).contains(&acc) {
        return Err(value_error(format!(
            "accuracy = {acc} is outside the allowed range [1e-8, 0.5]"
        )));
    }
    let family = bounded_family(family, alpha)?;
    let start = certified(py, k as f64, epsilon, delta, family)?;
    // Ctrl-C cancels the search (at its next FFT window).
    let work = Work::default();
    let b = crate::interruptible(py, &work, || {
        least_radius_bracket_until(family, k, epsilon, delta, start.max(0.51), acc, &work)
    })?
    .map_err(|e| value_error(e.to_string()))?;
    Ok(RadiusBracket {
        lower: b.lower,
        upper: b.upper,
        certified: start,
        evaluations: b.evaluations,
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RadiusBracket>()?;
    m.add_function(wrap_pyfunction!(certified_radius, m)?)?;
    m.add_function(wrap_pyfunction!(least_radius, m)?)?;
    Ok(())
}
