//! `dpw` for Python: the native module `dpw._dpw`, wrapped by the pure-Python package in
//! `python/dpw` (which adds the calibration dataclasses and re-exports everything).
//!
//! Every function validates its arguments before calling the workspace crates and turns
//! their errors into a Python `ValueError` carrying the crate's one-line message (which
//! names the argument and its allowed range), so no input reaches a panic.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

mod accountant;
mod broadcast;
mod calibrate;
mod gaussian;
mod radius;

/// A `ValueError` with a one-line message.
pub(crate) fn value_error(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

/// A CLI message (`--epsilon: must be ...`) with the flag written as the Python argument.
pub(crate) fn argument_message(msg: &str) -> String {
    msg.strip_prefix("--").unwrap_or(msg).to_string()
}

/// The native module.
#[pymodule]
fn _dpw(m: &Bound<'_, PyModule>) -> PyResult<()> {
    gaussian::register(m)?;
    calibrate::register(m)?;
    accountant::register(m)?;
    radius::register(m)?;
    Ok(())
}
