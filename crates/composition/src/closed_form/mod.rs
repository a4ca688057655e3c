//! The closed-form composition results, apart from the accountant (the crate's one engine
//! for exact accounting, [`crate::accountant`]): each module is a formula of a paper with
//! its numerics (docs/maths.md §3), re-exported at the crate root under its short name.
//!
//! - [`dp`]: optimal composition of ε-DP (and (ε, δ₀)-DP) mechanisms (§3.1);
//! - [`br`]: optimal composition of ε-bounded-range mechanisms (§3.2);
//! - [`mixed`]: a mix of ε-DP and ε-BR mechanisms, non-adaptive (§3.3);
//! - [`concentration`]: the concentration bound for any adaptive mix (§3.3);
//! - [`adaptive`]: a fixed order of adaptively chosen DP and BR mechanisms (§3.3);
//! - [`zcdp`]: zero-concentrated DP of Gaussian noise and its conversions (§3.4);
//! - [`rdp`]: the Rényi-DP bound of the subsampled Gaussian;
//! - helpers they share: `binomial` (log-space binomial sums), `invert` (the one-sided
//!   inverse ε(δ) search), `optimize` (scans and Brent), `worst_case` (the worst-case
//!   laws of one bounded-range mechanism, kept apart so that `br`, `mixed` and
//!   `concentration` import it rather than each other).

pub mod adaptive;
pub(crate) mod binomial;
pub mod br;
pub mod concentration;
pub mod dp;
pub(crate) mod invert;
pub mod mixed;
pub(crate) mod optimize;
pub mod rdp;
mod worst_case;
pub mod zcdp;
