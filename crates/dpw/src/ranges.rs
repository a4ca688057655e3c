//! The ranges in which parameters are computed correctly (issue 15): a value outside is
//! refused up front with the range, not computed into a wrong number, a NaN or a runaway.
//!
//! The ranges are deliberately those the computations have been exercised and tested on
//! (the checked-in figures, the claims tests and the hostile-input property test
//! `tests/hostile.rs`), not every value for which a formula is defined: e.g. the
//! analytic Gaussian's σ loses all digits near ε = 1e308, the truncated Laplacian's
//! moments overflow near ε = 700, and the bounded-noise quadratures grow without bound as
//! δ or the density exponent go to extremes.

use crate::error::KeyError;
use composition::accountant::{MechanismKind, MechanismSpec};
use std::sync::atomic::{AtomicU64, Ordering};

/// A closed range `[lo, hi]` of one parameter, with what it is for (used in messages).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// Least value accepted.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// Whether `hi` itself is excluded (δ < 1).
    pub open_hi: bool,
}

/// Privacy parameter ε of every (ε, δ) calibration.
pub const EPSILON: Range = Range {
    lo: 1e-8,
    hi: 100.0,
    open_hi: false,
};
/// Privacy parameter δ (strictly below 1) of every (ε, δ) calibration.
pub const DELTA: Range = Range {
    lo: 1e-300,
    hi: 1.0,
    open_hi: true,
};
/// A sensitivity Δ (or a noise scale measured in the same unit).
pub const SENSITIVITY: Range = Range {
    lo: 1e-100,
    hi: 1e100,
    open_hi: false,
};
/// Exponent α of the bounded power density `exp(−(1 − x²)^−α)`: beyond 100 the density
/// is a spike whose quadratures need unbounded memory; below 0.25 no certified radius
/// exists for ordinary (ε, δ), and at 0.25 one `calibrate` at extreme (ε, δ, k) takes a
/// minute.
pub const POWER_ALPHA: Range = Range {
    lo: 0.5,
    hi: 100.0,
    open_hi: false,
};
/// Noise-to-sensitivity ratio σ/Δ of the histogram (Gaussian and Laplace) mechanisms.
pub const NOISE_RATIO: Range = Range {
    lo: 1e-2,
    hi: 1e4,
    open_hi: false,
};

/// Largest `ε + ln(1/(2δ))` of the truncated Laplacian: its support
/// `A = λ ln(1 + (e^ε − 1)/(2δ))` and moments overflow a double beyond ≈ 709 (Geng et al.
/// 2020, Theorem 1; `docs/` has no separate section), so the pair (ε, δ) is refused
/// before it reaches the overflow.
pub const TRUNCATED_LAPLACE_MAX_LOG: f64 = 650.0;

/// `Ok(())` if the truncated Laplacian at (ε, δ) stays inside double precision
/// ([`TRUNCATED_LAPLACE_MAX_LOG`]), else one line naming `key`.
pub fn truncated_laplace_pair(key: &str, epsilon: f64, delta: f64) -> Result<(), KeyError> {
    let log = epsilon + (0.5 / delta).ln();
    if log <= TRUNCATED_LAPLACE_MAX_LOG {
        Ok(())
    } else {
        Err(KeyError::new(
            key,
            format!(
                "eps + ln(1/(2 delta)) must be at most {TRUNCATED_LAPLACE_MAX_LOG} for the \
                 truncated Laplacian (its support overflows beyond), got {} at eps = {}, \
                 delta = {}",
                show(log),
                show(epsilon),
                show(delta)
            ),
        ))
    }
}

/// Default run-time budget of one figure, in seconds on the 2-core reference machine.
pub const BUDGET_SECONDS: f64 = 60.0;

/// The budget in force (`--budget` sets it), as the bits of an `f64`.
static BUDGET_BITS: AtomicU64 = AtomicU64::new(0x404E_0000_0000_0000); // 60.0

/// The run-time budget in force, in seconds.
pub fn budget() -> f64 {
    f64::from_bits(BUDGET_BITS.load(Ordering::Relaxed))
}

/// Sets the run-time budget (`--budget SECONDS`), in [1, 1e6] seconds.
pub fn set_budget(seconds: f64) -> Result<(), String> {
    if !(1.0..=1e6).contains(&seconds) {
        return Err(format!(
            "must be in [1, 1e6] seconds, got {}",
            show(seconds)
        ));
    }
    BUDGET_BITS.store(seconds.to_bits(), Ordering::Relaxed);
    Ok(())
}

/// Refuses, before computing, a job of `items` work items at about `seconds_each` (as
/// measured on the checked-in figure) whose estimate exceeds the [`budget`]; the message
/// gives the estimate and the limit.
pub fn within_budget(key: &str, items: usize, seconds_each: f64) -> Result<(), KeyError> {
    let estimate = items as f64 * seconds_each;
    let limit = budget();
    if estimate <= limit {
        Ok(())
    } else {
        Err(KeyError::new(
            key,
            format!(
                "{items} points at about {} s each is about {} s, over the run-time budget \
                 of {} s; use at most {} points, or raise the budget with --budget SECONDS",
                show(two_digits(seconds_each)),
                show(estimate.round()),
                show(limit),
                (limit / seconds_each).floor()
            ),
        ))
    }
}

/// Refuses, before computing, a job whose estimated run time `estimate` (seconds on the
/// reference machine) exceeds the [`budget`]; `what` says what the estimate counts, e.g.
/// "42 exact calibrations at accuracy 1e-6".
pub fn within_budget_total(key: &str, what: &str, estimate: f64) -> Result<(), KeyError> {
    let limit = budget();
    if estimate <= limit {
        Ok(())
    } else {
        Err(KeyError::new(
            key,
            format!(
                "{what} take about {} s, over the run-time budget of {} s; use fewer points \
                 or a coarser accuracy, or raise the budget with --budget SECONDS",
                show(estimate.round()),
                show(limit)
            ),
        ))
    }
}

/// Seconds of one certified bounded-noise radius (Dagan & Kur, `mgf::certified_radius`)
/// on one core, rounded up from fig1's 24 points in 1.2 s on 2 cores.
pub const CERTIFIED_RADIUS_SECONDS: f64 = 0.15;

/// Seconds one accountant query of `spec` takes on the reference machine at relative
/// accuracy `accuracy`, as measured on the catalog's figures (fig18, fig20–fig22, `dpw
/// account`) and rounded up: the step, hence the bins, scale like `accuracy^{-1/2}`
/// (docs/accountant.md §6), and the staged composition keeps large counts at about the
/// cost of small ones.
pub fn accountant_seconds(spec: &MechanismSpec, accuracy: f64) -> f64 {
    let at_1e3 = match spec.kind {
        MechanismKind::Gaussian { .. }
        | MechanismKind::Laplace { .. }
        | MechanismKind::DiscreteLaplace { .. }
        | MechanismKind::DiscreteGaussian { .. }
        | MechanismKind::BoundedRange { .. }
        | MechanismKind::NoisyMax { .. }
        | MechanismKind::RandomizedResponse { .. }
        | MechanismKind::TruncatedLaplace { .. }
        | MechanismKind::ApproxDp { .. } => 0.05,
        MechanismKind::Bounded { .. } => 2.0,
        MechanismKind::SubsampledGaussian { .. }
        | MechanismKind::SubsampledGaussianMix { .. }
        | MechanismKind::GaussianMixture { .. } => 1.0,
        MechanismKind::SubsampledLaplace { .. } => 10.0,
    };
    at_1e3 * (1e-3 / accuracy.clamp(1e-8, 0.5)).sqrt()
}

impl Range {
    /// `Ok(v)` if `lo ≤ v ≤ hi` (and `v < hi` when `hi` is open), else one line naming `key`
    /// with the range, e.g. `must be in [1e-8, 100], got 1e308`.
    pub fn check(&self, key: &str, v: f64) -> Result<f64, KeyError> {
        let upper_ok = if self.open_hi {
            v < self.hi
        } else {
            v <= self.hi
        };
        if v >= self.lo && upper_ok {
            return Ok(v);
        }
        Err(KeyError::new(key, self.message(v)))
    }

    /// `must be in [lo, hi] (…), got v`.
    pub fn message(&self, v: f64) -> String {
        let close = if self.open_hi { ")" } else { "]" };
        format!(
            "must be in [{}, {}{close} (the range computed to full accuracy), got {}",
            show(self.lo),
            show(self.hi),
            show(v)
        )
    }
}

/// A number for a message: plain between 1e-4 and 1e6, else scientific (`1e308`, not
/// 309 digits).
pub fn show(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-4..1e6).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// `v` rounded to two significant digits (an estimate's precision, for messages).
pub fn two_digits(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let p = 10f64.powi(1 - v.abs().log10().floor() as i32);
    (v * p).round() / p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_refuse_outside_with_the_range() {
        assert_eq!(EPSILON.check("e", 1.0), Ok(1.0));
        let e = EPSILON.check("e", 1e308).unwrap_err();
        assert_eq!(
            e.message,
            "must be in [1e-8, 100] (the range computed to full accuracy), got 1e308"
        );
        assert!(EPSILON.check("e", f64::NAN).is_err());
        assert!(DELTA.check("d", 1.0).unwrap_err().message.contains("1)"));
        assert!(DELTA.check("d", 5e-324).is_err() && DELTA.check("d", 0.5).is_ok());
        assert!(SENSITIVITY.check("s", 1e-320).is_err());
    }

    #[test]
    fn show_is_short() {
        assert_eq!(show(1e308), "1e308");
        assert_eq!(show(0.5), "0.5");
        assert_eq!(show(5e-324), "5e-324");
        assert_eq!(show(123456.0), "123456");
        assert_eq!(show(two_digits(9.413238631208365)), "9.4");
        assert_eq!(show(two_digits(0.0123456)), "0.012");
        assert_eq!(show(two_digits(1234.5)), "1200");
    }
}
