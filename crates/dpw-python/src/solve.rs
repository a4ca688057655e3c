//! The certified solver (docs/accountant.md §10) for Python: [`run`] takes SPEC strings
//! with one value written `?` exactly as `dpw solve --mechanism` does and runs the CLI's
//! own request type (`dpw::solve::SolveRequest`); `dpw.solve`, `Mechanism.solve` and
//! `Composition.solve` (in `accountant.rs`, which uses this module and is not used by it)
//! write their SPECs and call it, so every face shares one parser, one search and one set
//! of messages.

use crate::value_error;
use composition::accountant::Work;
use dpw::solve::{SolveRequest, SolveResult};
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyInt};

/// A certified solution of `dpw.solve`: `meets` is certified to meet every target,
/// `fails` certified to fail one of them, and the exact threshold lies between them.
///
/// For `sigma`, `scale` and `radius` a larger value is safer (`fails < meets`); for
/// `epsilon`, `q`, `count` and `sensitivity` a smaller one is (`meets < fails`). For
/// `count` both are integers and `fails == meets + 1` when `accuracy_met`.
#[pyclass(frozen, module = "dpw")]
#[derive(Clone)]
pub struct Solution {
    parameter: String,
    meets: f64,
    fails: Option<f64>,
    evaluations: usize,
    accuracy_met: bool,
    integer: bool,
    mechanisms: Vec<String>,
    specs: Vec<String>,
    target: String,
    seconds: f64,
    work: u64,
}

impl Solution {
    fn value(&self, py: Python<'_>, v: f64) -> Py<PyAny> {
        if self.integer {
            PyInt::new(py, v as u64).into_any().unbind()
        } else {
            PyFloat::new(py, v).into_any().unbind()
        }
    }

    fn text(&self, v: f64) -> String {
        if self.integer {
            format!("{}", v as u64)
        } else {
            format!("{v:?}")
        }
    }
}

#[pymethods]
impl Solution {
    /// The key of the unknown ("sigma", "count", ...).
    #[getter]
    fn parameter(&self) -> &str {
        &self.parameter
    }

    /// A value certified to meet every target: the one to use (an int for count).
    #[getter]
    fn meets(&self, py: Python<'_>) -> Py<PyAny> {
        self.value(py, self.meets)
    }

    /// A value certified to fail some target; None when every value in the range the
    /// mechanism accepts meets them (e.g. q = 1).
    #[getter]
    fn fails(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.fails.map(|f| self.value(py, f))
    }

    /// Accountant evaluations made by the search.
    #[getter]
    fn evaluations(&self) -> usize {
        self.evaluations
    }

    /// Whether |meets/fails - 1| <= accuracy (for count: fails == meets + 1). Both ends
    /// are certified either way.
    #[getter]
    fn accuracy_met(&self) -> bool {
        self.accuracy_met
    }

    /// The SPECs solved, with the `?`.
    #[getter]
    fn mechanisms(&self) -> Vec<String> {
        self.mechanisms.clone()
    }

    /// The SPECs with the unknown set to `meets` (for `dpw.account`).
    #[getter]
    fn specs(&self) -> Vec<String> {
        self.specs.clone()
    }

    /// The targets in one line, as the CSV of `dpw solve` writes them.
    #[getter]
    fn target(&self) -> &str {
        &self.target
    }

    /// Wall-clock seconds of the search.
    #[getter]
    fn seconds(&self) -> f64 {
        self.seconds
    }

    /// Work done, in bins transformed.
    #[getter]
    fn work(&self) -> u64 {
        self.work
    }

    fn __repr__(&self) -> String {
        let fails = self
            .fails
            .map(|f| self.text(f))
            .unwrap_or_else(|| "None".into());
        format!(
            "Solution(parameter='{}', meets={}, fails={}, evaluations={}, accuracy_met={})",
            self.parameter,
            self.text(self.meets),
            fails,
            self.evaluations,
            if self.accuracy_met { "True" } else { "False" }
        )
    }
}

/// A CLI message with its flags written as the Python arguments (`--max-tpr` as
/// `max_tpr`, the library's `at-fpr = …` as `at_fpr = …`).
fn python_words(msg: &str) -> String {
    msg.replace("--mechanism", "mechanisms")
        .replace("max-tpr", "max_tpr")
        .replace("at-fpr", "at_fpr")
        .replace("max-work", "max_work")
        .replace("--", "")
}

/// The targets of the arguments, each given as a pair (`epsilon` with `delta`, `max_tpr`
/// with `at_fpr`), at least one pair; the ranges are the library's to check.
fn targets(
    epsilon: Option<f64>,
    delta: Option<f64>,
    max_tpr: Option<f64>,
    at_fpr: Option<f64>,
) -> PyResult<()> {
    match (epsilon, delta) {
        (Some(_), None) => return Err(value_error("delta: epsilon needs delta in (0, 1)")),
        (None, Some(_)) => return Err(value_error("epsilon: delta needs epsilon >= 0")),
        _ => {}
    }
    match (max_tpr, at_fpr) {
        (Some(_), None) => return Err(value_error("at_fpr: max_tpr needs at_fpr in (0, 1)")),
        (None, Some(_)) => return Err(value_error("max_tpr: at_fpr needs max_tpr in (at_fpr, 1)")),
        _ => {}
    }
    if epsilon.is_none() && max_tpr.is_none() {
        return Err(value_error(
            "epsilon/delta: give a target: epsilon=E and delta=D, or max_tpr=T and \
             at_fpr=A (or both)",
        ));
    }
    Ok(())
}

/// The solve of `specs` (SPEC texts, one value written `?`) with the CLI's request type;
/// the GIL is released and Ctrl-C cancels the search.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    py: Python<'_>,
    specs: Vec<String>,
    epsilon: Option<f64>,
    delta: Option<f64>,
    max_tpr: Option<f64>,
    at_fpr: Option<f64>,
    accuracy: Option<f64>,
    max_work: Option<f64>,
) -> PyResult<Solution> {
    targets(epsilon, delta, max_tpr, at_fpr)?;
    let req = SolveRequest::new(&specs, epsilon, delta, max_tpr, at_fpr, accuracy)
        .and_then(|r| r.with_max_work(max_work))
        .map_err(|(key, msg)| {
            value_error(format!("{}: {}", python_words(&key), python_words(&msg)))
        })?;
    // Ctrl-C cancels the search (at the accountant's next FFT window).
    let work = Work::new(Some(req.max_work as u64));
    let result: Result<SolveResult, (String, String)> =
        crate::interruptible(py, &work, || req.run_on(&work))?;
    let r = result.map_err(|(key, msg)| {
        value_error(format!("{}: {}", python_words(&key), python_words(&msg)))
    })?;
    let s = r.solution;
    let t = req.solver.template();
    Ok(Solution {
        parameter: s.parameter.clone(),
        meets: s.meets,
        fails: s.fails,
        evaluations: s.evaluations,
        accuracy_met: s.accuracy_met,
        integer: t.integer(),
        mechanisms: t.specs().to_vec(),
        specs: t.texts(s.meets),
        target: req.target_text(),
        seconds: r.seconds,
        work: r.work,
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Solution>()?;
    Ok(())
}
