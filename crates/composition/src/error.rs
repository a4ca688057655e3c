//! Typed errors for invalid inputs, and the validation helpers every public function uses.

/// Largest mechanism count accepted by the DP-only functions: `k − 2i` must stay an exact
/// `f64` integer (below 2⁵³).
pub const MAX_DP_COUNT: u64 = 1 << 52;

/// Largest number of DP or BR mechanisms accepted by the mixed (Theorem 3) functions, whose
/// memory is linear and whose time is `O(m·(ℓ + m))` per evaluation of δ.
pub const MAX_MIXED_COUNT: u64 = 10_000_000;

/// An input outside its range, or a target that no budget can reach.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompositionError {
    /// `name` had `value`, which is not in `allowed`.
    #[error("{name} = {value} is outside the allowed range {allowed}")]
    OutOfRange {
        /// Parameter name as the papers write it (e.g. "epsilon", "delta", "k").
        name: &'static str,
        /// The offending value (counts are converted to `f64`).
        value: f64,
        /// Human-readable allowed range, e.g. "(0, 1)".
        allowed: &'static str,
    },
    /// The target δ is below what the composition leaks for every ε_g, e.g.
    /// `1 − (1 − δ₀)^k` for k mechanisms that are each (ε, δ₀)-DP.
    #[error(
        "target delta = {target:e} is unreachable: the composition has delta >= {floor:e} \
         for every epsilon_g"
    )]
    Unreachable {
        /// The requested δ.
        target: f64,
        /// The infimum of δ over all ε_g.
        floor: f64,
    },
    /// The computation was cancelled (`accountant::Work::cancel`, e.g. Ctrl-C in Python).
    #[error("interrupted")]
    Interrupted,
    /// The next window of a step would pass the work budget (`accountant::Work`): the
    /// step stops before it, and the bracket of the steps before stands.
    #[error("the work budget would be passed")]
    WorkBudget,
    /// Two refinement steps of one question gave certified brackets that do not meet:
    /// one of them is wrong, so no answer is given (an internal error: please report it
    /// with the question asked).
    #[error(
        "internal inconsistency: two grid steps gave disjoint certified brackets \
         [{lo1:e}, {hi1:e}] and [{lo2:e}, {hi2:e}]; no answer is given (please report this \
         question)"
    )]
    Inconsistent {
        /// The earlier bracket's lower end.
        lo1: f64,
        /// The earlier bracket's upper end.
        hi1: f64,
        /// The later bracket's lower end.
        lo2: f64,
        /// The later bracket's upper end.
        hi2: f64,
    },
    /// A sequence or list that must not be empty was empty.
    #[error("{name} must not be empty")]
    Empty {
        /// What was empty (e.g. "mechanism sequence").
        name: &'static str,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, CompositionError>;

pub(crate) fn out_of_range(
    name: &'static str,
    value: f64,
    allowed: &'static str,
) -> CompositionError {
    CompositionError::OutOfRange {
        name,
        value,
        allowed,
    }
}

/// A per-mechanism privacy parameter: finite and `> 0`.
pub(crate) fn check_eps(name: &'static str, x: f64) -> Result<f64> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(out_of_range(name, x, "(0, inf), finite"))
    }
}

/// The overall budget `ε_g`: finite and `≥ 0`.
pub(crate) fn check_eps_g(x: f64) -> Result<f64> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(out_of_range("epsilon_g", x, "[0, inf), finite"))
    }
}

/// A δ: in the open interval `(0, 1)`.
pub(crate) fn check_delta(name: &'static str, x: f64) -> Result<f64> {
    if x > 0.0 && x < 1.0 {
        Ok(x)
    } else {
        Err(out_of_range(name, x, "(0, 1)"))
    }
}

/// A per-mechanism δ₀: in `[0, 1)`.
pub(crate) fn check_delta0(x: f64) -> Result<f64> {
    if (0.0..1.0).contains(&x) {
        Ok(x)
    } else {
        Err(out_of_range("delta0", x, "[0, 1)"))
    }
}

/// A number of mechanisms in `[1, MAX_DP_COUNT]`.
pub(crate) fn check_dp_count(name: &'static str, k: u64) -> Result<u64> {
    if (1..=MAX_DP_COUNT).contains(&k) {
        Ok(k)
    } else {
        Err(out_of_range(name, k as f64, "[1, 2^52]"))
    }
}

/// Counts `ℓ, m` of the mixed functions: each `≤ MAX_MIXED_COUNT`, `ℓ + m ≥ 1`.
pub(crate) fn check_mixed_counts(l: u64, m: u64) -> Result<()> {
    if l > MAX_MIXED_COUNT {
        return Err(out_of_range("l", l as f64, "[0, 1e7], l + m >= 1"));
    }
    if m > MAX_MIXED_COUNT {
        return Err(out_of_range("m", m as f64, "[0, 1e7], l + m >= 1"));
    }
    if l + m == 0 {
        return Err(out_of_range("l + m", 0.0, "[1, 2e7]"));
    }
    Ok(())
}
