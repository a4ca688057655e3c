//! Composition of differentially private mechanisms: optimal composition of pure ε-DP
//! mechanisms, of ε-bounded-range (BR) mechanisms and of mixes of both; the concentration
//! bound for any mix (including concentrated-DP mechanisms); and the adaptive-order
//! recursion of Cesar & Rogers. Formulas: docs/maths.md §3.1–3.3.
//!
//! # Modules
//! - [`dp`]: optimal homogeneous composition of `k` ε-DP mechanisms (Kairouz–Oh–Viswanath
//!   2015, Thm 3.3; §3.1), `δ(ε_g)` and its inverse, also for (ε, δ₀)-DP mechanisms.
//! - [`br`]: generalized randomized response, expected losses, optimal non-adaptive
//!   composition of `k` ε-BR mechanisms (Dong–Durfee–Rogers 2019, Thm 3; §3.2).
//! - [`mixed`]: `ℓ` ε-DP and `m` ε-BR mechanisms, non-adaptive (Cesar–Rogers Thm 3; §3.3),
//!   with the maximum over the analyst's `t` taken exactly over the finitely many candidate
//!   points (their Lemma 4.5) and polished with argmin's Brent.
//! - [`concentration`]: Cesar–Rogers eq. 3 (§3.3), an upper bound for any adaptive mix.
//! - [`adaptive`]: a fixed order of adaptively chosen DP and BR mechanisms (Cesar–Rogers
//!   Lemma 5.1; §3.3).
//! - [`zcdp`]: zero-concentrated DP of Gaussian noise and its conversions to (ε, δ)
//!   (Bun–Steinke; Canonne–Kamath–Steinke; docs/maths.md §3.4).
//! - [`accountant`]: the privacy-loss accountant (`dpw account`, `dpw solve`): each
//!   mechanism's privacy-loss law discretised on both sides of the truth, composed by
//!   exponentially tilted FFTs, a certified bracket on ε(δ), δ(ε) and the trade-off
//!   function, the general solver for one unknown parameter, and the mechanism SPEC
//!   language (docs/accountant.md). It is the crate's one engine for exact accounting.
//! - [`rdp`]: Rényi-DP (moments accountant) bound of the subsampled Gaussian.
//! - [`error`]: [`CompositionError`]; every public function validates its inputs
//!   (ε > 0 finite, δ ∈ (0, 1), at least one mechanism, …) and returns `Result`.
//!
//! # Accuracy and one-sidedness
//! The δ values here are the exact optima up to floating point: the sums are evaluated in
//! log space without cancellation (relative error ~1e-13 for DP composition up to
//! `k = 2⁵²`; tested to 1e-9 against exact big-integer arithmetic at `k = 1e5`), and the
//! maxima over `t` are checked against dense scans. Every inverse `ε_g(δ)` is computed by a
//! bracketing root finder that keeps `δ(lo) > δ_target ≥ δ(hi)` and returns the *upper* end
//! `hi` of the final bracket: the returned `ε_g` is on the safe side
//! (`δ(ε_g) ≤ δ_target`, as evaluated) and exceeds the exact root by a few ulps only.
//!
//! ```
//! use composition::{dp_epsilon, br_epsilon, mixed_epsilon, concentration_epsilon};
//! let (eps, delta) = (0.1, 1e-6);
//! let all_dp = dp_epsilon(100, eps, delta).unwrap();
//! let half = mixed_epsilon(50, 50, eps, delta).unwrap();
//! let all_br = br_epsilon(100, eps, delta).unwrap();
//! assert!(all_br < half && half < all_dp);
//! assert!(concentration_epsilon(50, 50, eps, &[], delta).unwrap() > half);
//! ```
//!
//! # Example: the accountant's certified bracket
//! The [`accountant`] answers with `lower ≤ exact ≤ upper` (its mathematics is in the
//! repository's `docs/accountant.md`). Here 100 uses of the Gaussian mechanism with
//! σ = 4 (each `μ = 1/4`), whose composition is exactly the Gaussian with `μ = 2.5`:
//! ```
//! use composition::accountant::{Accountant, GaussianLaw};
//! use densities::gaussian::gaussian_delta;
//!
//! let acc = Accountant::new(vec![(Box::new(GaussianLaw::new(0.25).unwrap()), 100)]).unwrap();
//! let eps = 3.0;
//! let b = acc.delta(eps).unwrap();
//! let exact = gaussian_delta(eps, 2.5); // closed form (docs/maths.md §1.2)
//! assert!(b.lower <= exact && exact <= b.upper);
//! assert!(b.upper / b.lower - 1.0 < 1e-2);
//! ```
#![deny(missing_docs)]

pub mod accountant;
pub mod closed_form;
pub mod error;

// The closed-form results keep their short paths (`composition::dp`, …).
pub use closed_form::{adaptive, br, concentration, dp, mixed, rdp, zcdp};

pub use adaptive::{adaptive_delta, adaptive_epsilon, Mechanism, MAX_ADAPTIVE_BR};
pub use br::{
    br_delta, br_epsilon, br_expected_loss_argmax, br_expected_loss_max, br_ln_delta, GeneralizedRr,
};
pub use concentration::{concentration_epsilon, Cdp};
pub use dp::{
    dp_delta, dp_delta_approx, dp_epsilon, dp_epsilon_approx, dp_expected_loss, dp_ln_delta,
};
pub use error::{CompositionError, Result};
pub use mixed::{
    mixed_delta, mixed_delta_at_t, mixed_epsilon, mixed_ln_delta, mixed_optimum, MixedOptimum,
};
