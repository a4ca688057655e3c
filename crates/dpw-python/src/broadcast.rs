//! Scalar arguments take a fast path; anything else (numpy arrays, lists, numpy integer
//! scalars) is converted by numpy, broadcast, and computed element by element, so the
//! extension needs numpy only when it is given arrays.

use crate::value_error;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyString, PyTuple};

/// `arg` as an `f64` when it is a Python float (numpy's float64 included) or int.
fn scalar(arg: &Bound<'_, PyAny>) -> Option<f64> {
    if let Ok(f) = arg.cast::<PyFloat>() {
        return Some(f.value());
    }
    if arg.is_instance_of::<PyInt>() && !arg.is_instance_of::<PyBool>() {
        // A bool is refused (an int to Python, never a meaningful number here); an int too large for a double is left to the array path (which refuses it).
        return arg.extract::<f64>().ok();
    }
    None
}

/// Applies `f` to the arguments: a float for scalars, an array of the broadcast shape
/// for arrays. `f`'s error (a one-line message) becomes a `ValueError`; for arrays it
/// names the flat index of the first element that failed.
pub(crate) fn apply<const N: usize>(
    py: Python<'_>,
    names: [&str; N],
    args: [&Bound<'_, PyAny>; N],
    f: impl Fn([f64; N]) -> Result<f64, String>,
) -> PyResult<Py<PyAny>> {
    let mut x = [0.0; N];
    let mut all_scalar = true;
    for (xi, a) in x.iter_mut().zip(args) {
        match scalar(a) {
            Some(v) => *xi = v,
            None => {
                all_scalar = false;
                break;
            }
        }
    }
    if all_scalar {
        let v = f(x).map_err(value_error)?;
        return Ok(PyFloat::new(py, v).into_any().unbind());
    }
    broadcast(py, names, args, f)
}

fn broadcast<const N: usize>(
    py: Python<'_>,
    names: [&str; N],
    args: [&Bound<'_, PyAny>; N],
    f: impl Fn([f64; N]) -> Result<f64, String>,
) -> PyResult<Py<PyAny>> {
    for (name, a) in names.iter().zip(args) {
        if a.is_instance_of::<PyString>() || a.is_instance_of::<PyBytes>() {
            return Err(value_error(format!(
                "{name}: expected a number or an array of numbers, got a string"
            )));
        }
        if a.is_instance_of::<PyBool>() {
            return Err(value_error(format!(
                "{name}: expected a number or an array of numbers, got a bool"
            )));
        }
    }
    let np = py.import("numpy").map_err(|_| {
        value_error(format!(
            "{}: expected a number (arrays and sequences need numpy, which is not installed)",
            names[0]
        ))
    })?;
    let mut arrays = Vec::with_capacity(N);
    for (name, a) in names.iter().zip(args) {
        // asarray(…, "float64") would drop an imaginary part with only a warning.
        if np.call_method1("iscomplexobj", (a,))?.is_truthy()? {
            return Err(value_error(format!(
                "{name}: expected real numbers, got complex values"
            )));
        }
        let arr = np.call_method1("asarray", (a, "float64")).map_err(|e| {
            value_error(format!(
                "{name}: expected a number or an array of numbers ({})",
                one_line(&e.to_string())
            ))
        })?;
        arrays.push(arr);
    }
    let shapes: Vec<String> = arrays
        .iter()
        .map(|a| a.getattr("shape").map(|s| s.to_string()))
        .collect::<PyResult<_>>()?;
    let b = np
        .call_method1("broadcast_arrays", PyTuple::new(py, &arrays)?)
        .map_err(|_| {
            value_error(format!(
                "{}: shapes {} do not broadcast together",
                names.join(", "),
                shapes.join(", ")
            ))
        })?;
    let first = b.get_item(0)?;
    let shape = first.getattr("shape")?;
    let cols: Vec<Vec<f64>> = (0..N)
        .map(|i| {
            b.get_item(i)?
                .call_method0("ravel")?
                .call_method0("tolist")?
                .extract::<Vec<f64>>()
        })
        .collect::<PyResult<_>>()?;
    let n = cols.first().map_or(0, Vec::len);
    let out = (0..n)
        .map(|j| {
            let x: [f64; N] = std::array::from_fn(|i| cols[i][j]);
            f(x).map_err(|e| value_error(format!("{e} (element {j} of the broadcast arrays)")))
        })
        .collect::<PyResult<Vec<f64>>>()?;
    let arr = np.call_method1("array", (out, "float64"))?;
    let arr = arr.call_method1("reshape", (shape,))?;
    if first.getattr("ndim")?.extract::<usize>()? == 0 {
        // Zero-dimensional arguments (numpy scalars): a numpy scalar back.
        return Ok(arr.get_item(PyTuple::empty(py))?.unbind());
    }
    Ok(arr.unbind())
}

fn one_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// Whether `arg` is a bool, Python's or numpy's (an int to Python, never a meaningful
/// number here).
fn is_bool(arg: &Bound<'_, PyAny>) -> bool {
    arg.is_instance_of::<PyBool>()
        || arg
            .get_type()
            .name()
            .is_ok_and(|n| n == "bool" || n == "bool_")
}

/// `arg` as an integer when it has `__index__` (numpy's integer scalars), not a bool.
fn index_like<'py>(arg: &Bound<'py, PyAny>) -> Option<Bound<'py, PyInt>> {
    if is_bool(arg) || !arg.hasattr("__index__").unwrap_or(false) {
        return None;
    }
    let i = arg
        .py()
        .import("operator")
        .ok()?
        .call_method1("index", (arg,))
        .ok()?;
    i.cast_into::<PyInt>().ok()
}

/// `arg` as an `f64` when it is a real number of a type other than Python's float and
/// int: anything with `__index__` (numpy's integers) or `__float__` (numpy's float32,
/// `fractions.Fraction`, `decimal.Decimal`); never a bool, a string or bytes, or a
/// complex number (numpy's complex scalars have `__float__`, which drops the imaginary
/// part).
fn real_like(arg: &Bound<'_, PyAny>) -> Option<f64> {
    if is_bool(arg) || arg.is_instance_of::<PyString>() || arg.is_instance_of::<PyBytes>() {
        return None;
    }
    if let Some(i) = index_like(arg) {
        return i.extract::<f64>().ok();
    }
    if !arg.hasattr("__float__").unwrap_or(false) {
        return None;
    }
    let numbers = arg.py().import("numbers").ok()?;
    let is = |abc: &str| {
        numbers
            .getattr(abc)
            .and_then(|c| arg.is_instance(&c))
            .unwrap_or(false)
    };
    if is("Complex") && !is("Real") {
        return None;
    }
    arg.call_method0("__float__")
        .ok()?
        .cast_into::<PyFloat>()
        .ok()
        .map(|f| f.value())
}

/// A scalar argument as `f64` (a Python float or int, or any real number with
/// `__index__` or `__float__`, numpy's scalars included); anything else is a `ValueError`
/// naming the argument.
pub(crate) fn number(name: &str, arg: &Bound<'_, PyAny>) -> PyResult<f64> {
    scalar(arg).or_else(|| real_like(arg)).ok_or_else(|| {
        let ty = arg
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into());
        value_error(format!("{name}: expected a number, got {ty}"))
    })
}

/// An optional scalar argument (`None` stays `None`).
pub(crate) fn optional_number(name: &str, arg: Option<&Bound<'_, PyAny>>) -> PyResult<Option<f64>> {
    match arg {
        Some(a) if !a.is_none() => number(name, a).map(Some),
        _ => Ok(None),
    }
}

/// A positive integer argument in `[1, max]` (an int, anything with `__index__` such as
/// numpy's integers, or a real number with an integral value such as `1e4`).
pub(crate) fn count(name: &str, arg: &Bound<'_, PyAny>, max: f64) -> PyResult<u64> {
    let bad = |shown: String| {
        value_error(format!(
            "{name} = {shown} is outside the allowed range: an integer in [1, {max:e}]"
        ))
    };
    if arg.is_instance_of::<PyInt>() && !arg.is_instance_of::<PyBool>() {
        return match arg.extract::<u64>() {
            Ok(k) if k >= 1 && k as f64 <= max => Ok(k),
            _ => Err(bad(arg.to_string())),
        };
    }
    // numpy's integer scalars: exactly, through `__index__`.
    if let Some(i) = index_like(arg) {
        return match i.extract::<u64>() {
            Ok(k) if k >= 1 && k as f64 <= max => Ok(k),
            _ => Err(bad(i.to_string())),
        };
    }
    let x = number(name, arg)?;
    if x >= 1.0 && x <= max && x.fract() == 0.0 {
        Ok(x as u64)
    } else {
        Err(bad(x.to_string()))
    }
}
