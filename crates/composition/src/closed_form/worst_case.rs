//! The worst-case laws of one bounded-range mechanism, shared by the closed-form
//! composition bounds (`br`, `mixed`, `concentration`, `adaptive`): generalised randomized
//! response's probabilities and the largest expected loss of an ε-BR mechanism
//! (Dong–Durfee–Rogers 2019, Lemma 3.1; Cesar & Rogers, Lemma 3.2; docs/maths.md §3.2).
//! Kept apart so that those modules import it rather than each other.

/// `(θ_t, p_t, θ_t/p_t)` with `θ_t = 1 − p_t = (e^t − 1)/(e^ε − 1)`, each with full relative
/// accuracy for every `ε > 0` and `t ∈ [0, ε]` (no overflow for large ε).
pub(crate) fn gen_rr_probs(eps: f64, t: f64) -> (f64, f64, f64) {
    let denom = -(-eps).exp_m1(); // 1 − e^{−ε}
    let p = -(t - eps).exp_m1() / denom; // (1 − e^{t−ε})/(1 − e^{−ε})
    let theta = (t - eps).exp() * -(-t).exp_m1() / denom; // e^{t−ε}(1 − e^{−t})/(1 − e^{−ε})
    let odds = -(-t).exp_m1() / (eps - t).exp_m1(); // (1 − e^{−t})/(e^{ε−t} − 1)
    (theta, p, odds)
}

/// The largest expected privacy loss of an ε-BR mechanism,
/// `ε/(1 − e^{−ε}) − 1 − ln(ε/(1 − e^{−ε}))`, for valid ε (a series below ε = 0.05).
pub(crate) fn br_expected_loss_max_unchecked(eps: f64) -> f64 {
    if eps < 0.05 {
        let u2 = eps * eps;
        // Coefficients of f(u) = u/(e^u − 1) − 1 + ln((e^u − 1)/u) from the Bernoulli series.
        u2 * (1.0 / 8.0 + u2 * (-1.0 / 576.0 + u2 * (7.0 / 181_440.0 - u2 * C8)))
    } else {
        let r = eps / -(-eps).exp_m1();
        r - 1.0 - r.ln()
    }
}

/// Minus the coefficient of `u⁸` in the series of [`super::br::br_expected_loss_max`]: the coefficient
/// of `uⁿ` is `Bₙ/n!·(1 + 1/n)` (from `u/(e^u−1) = Σ Bₙuⁿ/n!` and
/// `ln((e^u−1)/u) = u + Σ_{n≥1} Bₙuⁿ/(n·n!)`), here `B₈ = −1/30`, giving `−1/1075200`.
const C8: f64 = (1.0 / 30.0) / 40_320.0 * (1.0 + 1.0 / 8.0);
