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
mod solve;

/// A `ValueError` with a one-line message.
pub(crate) fn value_error(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

/// Runs `f` without the GIL on a helper thread while this thread checks for signals every
/// 50 ms: on Ctrl-C (`KeyboardInterrupt` from `check_signals`) it cancels `work`, whose
/// computations stop at their next FFT window, waits for `f` to return, and raises.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    work: &composition::accountant::Work,
    f: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    use std::sync::Mutex;
    use std::time::Duration;
    std::thread::scope(|s| {
        let (tx, rx) = channel();
        // A Receiver is not Sync; the GIL-free closures below borrow it through a lock.
        let rx = Mutex::new(rx);
        s.spawn(move || {
            let _ = tx.send(f());
        });
        let wait = |d: Option<Duration>| {
            let rx = rx.lock().unwrap_or_else(|e| e.into_inner());
            match d {
                Some(d) => rx.recv_timeout(d),
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            }
        };
        loop {
            match py.detach(|| wait(Some(Duration::from_millis(50)))) {
                Ok(v) => return Ok(v),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        work.cancel();
                        let _ = py.detach(|| wait(None));
                        return Err(e);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(pyo3::exceptions::PyRuntimeError::new_err(
                        "the computation ended without an answer",
                    ))
                }
            }
        }
    })
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
    solve::register(m)?;
    Ok(())
}
