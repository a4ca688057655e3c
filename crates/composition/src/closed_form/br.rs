//! Bounded-range (BR) mechanisms (Durfee & Rogers 2019; Dong, Durfee & Rogers 2019;
//! docs/maths.md §3.2).
//!
//! An ε-BR mechanism has a privacy loss ranging over an interval of width ε. Its worst case
//! is *generalized randomized response* with a parameter `t ∈ [0, ε]` chosen by the analyst:
//! loss `+t` with P-probability `p_t = (e^ε − e^t)/(e^ε − 1)` and loss `t − ε` otherwise.
//! (Under Q the same outcomes have probabilities `p_t e^{−t}` and `(1 − p_t) e^{ε−t}`.)
//!
//! The optimal non-adaptive composition of `k` ε-BR mechanisms (Dong–Durfee–Rogers 2019,
//! Theorem 3) is the special case `ℓ = 0` of Cesar–Rogers Theorem 3 and is computed by
//! [`super::mixed`].

use super::mixed::{mixed_epsilon, mixed_ln_delta};
use super::worst_case::{br_expected_loss_max_unchecked, gen_rr_probs};
use crate::error::{check_eps, check_eps_g, out_of_range, Result};

/// Generalized randomized response with parameters `(ε, t)`, `0 ≤ t ≤ ε`: the worst-case
/// ε-BR mechanism (Dong–Durfee–Rogers 2019, Lemma 3.1; docs/maths.md §3.2).
///
/// ```
/// use composition::GeneralizedRr;
/// let g = GeneralizedRr::new(1.0, 0.4).unwrap();
/// // Q-probabilities of the two outcomes sum to one.
/// assert!((g.q_plus() + g.q_minus() - 1.0).abs() < 1e-15);
/// assert_eq!(g.loss_plus() - g.loss_minus(), 1.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeneralizedRr {
    eps: f64,
    t: f64,
}

impl GeneralizedRr {
    /// Validates `ε > 0` (finite) and `t ∈ [0, ε]`.
    pub fn new(eps: f64, t: f64) -> Result<Self> {
        check_eps("epsilon", eps)?;
        if !(0.0..=eps).contains(&t) {
            return Err(out_of_range("t", t, "[0, epsilon]"));
        }
        Ok(Self { eps, t })
    }

    /// The range width ε.
    pub fn eps(&self) -> f64 {
        self.eps
    }

    /// The analyst's parameter t.
    pub fn t(&self) -> f64 {
        self.t
    }

    /// `p_t = (e^ε − e^t)/(e^ε − 1)`: P-probability of the loss `+t` (docs/maths.md §3.2).
    pub fn p_plus(&self) -> f64 {
        gen_rr_probs(self.eps, self.t).1
    }

    /// `1 − p_t = (e^t − 1)/(e^ε − 1)`: P-probability of the loss `t − ε`.
    pub fn p_minus(&self) -> f64 {
        gen_rr_probs(self.eps, self.t).0
    }

    /// `p_t e^{−t}`: Q-probability of the outcome with loss `+t`.
    pub fn q_plus(&self) -> f64 {
        self.p_plus() * (-self.t).exp()
    }

    /// `(1 − p_t) e^{ε−t}`: Q-probability of the outcome with loss `t − ε`.
    pub fn q_minus(&self) -> f64 {
        -(-self.t).exp_m1() / -(-self.eps).exp_m1()
    }

    /// The larger loss, `t`.
    pub fn loss_plus(&self) -> f64 {
        self.t
    }

    /// The smaller loss, `t − ε`.
    pub fn loss_minus(&self) -> f64 {
        self.t - self.eps
    }

    /// Expected loss under P: `t − ε (e^t − 1)/(e^ε − 1)` (docs/maths.md §3.2).
    pub fn expected_loss(&self) -> f64 {
        self.t - self.eps * self.p_minus()
    }
}

/// The `t` maximising the expected loss of an ε-BR mechanism:
/// `t* = ln((e^ε − 1)/ε)` (Dong–Durfee–Rogers 2019, Lemma 3.2; docs/maths.md §3.2).
///
/// ```
/// let t = composition::br_expected_loss_argmax(1.0).unwrap();
/// assert!(t > 0.0 && t < 1.0);
/// ```
pub fn br_expected_loss_argmax(eps: f64) -> Result<f64> {
    check_eps("epsilon", eps)?;
    // ln(expm1(ε)/ε) = ε + ln(−expm1(−ε)/ε), which does not overflow.
    Ok(eps + (-(-eps).exp_m1() / eps).ln())
}

/// Largest expected privacy loss of an ε-BR mechanism, maximised over `t`:
/// `ε/(1 − e^{−ε}) − 1 − ln(ε/(1 − e^{−ε}))` (≈ ε²/8; Dong–Durfee–Rogers 2019, Lemma 3.2;
/// Cesar–Rogers Lemma 3.2; docs/maths.md §3.2).
///
/// For `ε < 0.05` the equivalent series `ε²/8 − ε⁴/576 + 7ε⁶/181440 − ε⁸/1075200` is used
/// (the closed form cancels there; the next term is below 1e-17 relative).
///
/// ```
/// let b = composition::br_expected_loss_max(0.01).unwrap();
/// assert!((b / (0.01f64 * 0.01 / 8.0) - 1.0).abs() < 1e-5);
/// ```
pub fn br_expected_loss_max(eps: f64) -> Result<f64> {
    check_eps("epsilon", eps)?;
    Ok(br_expected_loss_max_unchecked(eps))
}

/// Optimal δ of the non-adaptive composition of `k` ε-BR mechanisms at budget `ε_g`:
/// `δ(ε_g) = max_{t∈[0,ε]} Σ_{i=0}^{k} C(k,i) p_t^{k−i} (1−p_t)^i (1 − e^{ε_g − (kt − iε)})_+`
/// (Dong–Durfee–Rogers 2019, Theorem 3; docs/maths.md §3.2). The maximum over `t` is exact:
/// see [`super::mixed`] (candidate points of Cesar–Rogers Lemma 4.5, polished by Brent).
///
/// ```
/// // k = 1, ε_g = 0: the total variation tanh(ε/4) of an ε-BR mechanism.
/// let d = composition::br_delta(1, 1.0, 0.0).unwrap();
/// assert!((d - 0.25f64.tanh()).abs() < 1e-15);
/// ```
pub fn br_delta(k: u64, eps: f64, eps_g: f64) -> Result<f64> {
    br_ln_delta(k, eps, eps_g).map(f64::exp)
}

/// Natural log of [`br_delta`] (docs/maths.md §3.2).
///
/// ```
/// assert!(composition::br_ln_delta(10, 0.5, 1.0).unwrap() < 0.0);
/// ```
pub fn br_ln_delta(k: u64, eps: f64, eps_g: f64) -> Result<f64> {
    check_eps_g(eps_g)?;
    if k == 0 {
        return Err(out_of_range("k", 0.0, "[1, 1e7]"));
    }
    mixed_ln_delta(0, k, eps, eps_g)
}

/// Least `ε_g` with [`br_delta`]`(k, ε, ε_g) ≤ δ` (Dong–Durfee–Rogers 2019, Theorem 3;
/// docs/maths.md §3.2); returns the safe (upper) end of the final bracket.
///
/// ```
/// let e_br = composition::br_epsilon(100, 0.1, 1e-6).unwrap();
/// let e_dp = composition::dp_epsilon(100, 0.1, 1e-6).unwrap();
/// assert!(e_br < e_dp);
/// ```
pub fn br_epsilon(k: u64, eps: f64, delta: f64) -> Result<f64> {
    if k == 0 {
        return Err(out_of_range("k", 0.0, "[1, 1e7]"));
    }
    mixed_epsilon(0, k, eps, delta)
}
