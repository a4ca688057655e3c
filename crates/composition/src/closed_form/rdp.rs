//! Rényi-DP accounting of the Poisson-subsampled Gaussian mechanism (the "moments
//! accountant" of DP-SGD; Abadi et al. 2016; Mironov, Talwar & Zhang 2019), the classical
//! upper bound beside which the exact accountant ([`crate::accountant`]) is drawn
//! (docs/accountant.md §8).
//!
//! For integer orders α ≥ 2 the Rényi divergence of the mixture `(1−q)N(0,σ²) + qN(1,σ²)`
//! from `N(0,σ²)` is `ln A_α / (α − 1)` with
//! `A_α = Σ_{k=0}^{α} C(α,k) (1−q)^{α−k} q^k e^{(k²−k)/(2σ²)}` (Mironov et al. 2019,
//! Section 3.3; it also bounds the other direction), T steps add, and RDP converts to
//! (ε, δ)-DP by the conversion of Balle, Barthe, Gaboardi, Hsu & Sato (2020, Theorem 21),
//! `ε(δ) = min_α T·ε_α + ln((α − 1)/α) − (ln δ + ln α)/(α − 1)`, the one the accounting
//! libraries use; the classical conversion `T·ε_α + ln(1/δ)/(α − 1)` (Mironov 2017,
//! Proposition 3) is larger at every α and is kept for comparison.

use crate::error::{out_of_range, Result};

/// `ln C(n, k)` by summing logarithms (n ≤ a few hundred here).
fn ln_choose(n: u32, k: u32) -> f64 {
    let k = k.min(n - k);
    (0..k).map(|i| ((n - i) as f64 / (i + 1) as f64).ln()).sum()
}

/// Rényi divergence of order α (integer ≥ 2) of one subsampled-Gaussian step, sensitivity
/// 1, noise σ, rate q.
///
/// ```
/// // q = 1 is the Gaussian mechanism: α/(2σ²).
/// let r = composition::rdp::subsampled_gaussian_rdp(1.0, 2.0, 5).unwrap();
/// assert!((r - 5.0 / 8.0).abs() < 1e-12);
/// ```
pub fn subsampled_gaussian_rdp(q: f64, sigma: f64, alpha: u32) -> Result<f64> {
    if !(q > 0.0 && q <= 1.0) {
        return Err(out_of_range("q", q, "(0, 1]"));
    }
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(out_of_range("sigma", sigma, "(0, inf)"));
    }
    if !(2..=4096).contains(&alpha) {
        return Err(out_of_range("alpha", alpha as f64, "integers in [2, 4096]"));
    }
    let (lq, l1q) = (q.ln(), (-q).ln_1p());
    let terms: Vec<f64> = (0..=alpha)
        .map(|k| {
            let kf = k as f64;
            let mix = if k == alpha {
                0.0
            } else {
                (alpha - k) as f64 * l1q
            };
            let qk = if k == 0 { 0.0 } else { kf * lq };
            ln_choose(alpha, k) + mix + qk + (kf * kf - kf) / (2.0 * sigma * sigma)
        })
        .filter(|t| t.is_finite())
        .collect();
    let m = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let ln_a = m + terms.iter().map(|t| (t - m).exp()).sum::<f64>().ln();
    Ok(ln_a / (alpha - 1) as f64)
}

/// ε(δ) of `steps` subsampled-Gaussian steps by RDP over the orders 2..=256, with the
/// conversion of Balle et al. (2020, Theorem 21; docs/accountant.md §8).
///
/// ```
/// use composition::rdp::{subsampled_gaussian_epsilon, subsampled_gaussian_epsilon_classical};
/// let e = subsampled_gaussian_epsilon(0.01, 1.0, 10_000, 1e-5).unwrap();
/// assert!(e > 6.2 && e < subsampled_gaussian_epsilon_classical(0.01, 1.0, 10_000, 1e-5).unwrap());
/// ```
pub fn subsampled_gaussian_epsilon(q: f64, sigma: f64, steps: u64, delta: f64) -> Result<f64> {
    min_over_orders(q, sigma, steps, delta, |a| {
        let a = a as f64;
        ((a - 1.0) / a).ln() - (delta.ln() + a.ln()) / (a - 1.0)
    })
}

/// As [`subsampled_gaussian_epsilon`] with the classical conversion
/// `T·ε_α + ln(1/δ)/(α − 1)` (Mironov 2017, Proposition 3).
pub fn subsampled_gaussian_epsilon_classical(
    q: f64,
    sigma: f64,
    steps: u64,
    delta: f64,
) -> Result<f64> {
    min_over_orders(q, sigma, steps, delta, |a| {
        (1.0 / delta).ln() / (a - 1) as f64
    })
}

/// `max(0, min_α T·ε_α + conversion(α))` over the orders 2..=256.
fn min_over_orders(
    q: f64,
    sigma: f64,
    steps: u64,
    delta: f64,
    conversion: impl Fn(u32) -> f64,
) -> Result<f64> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(out_of_range("delta", delta, "(0, 1)"));
    }
    if steps == 0 {
        return Err(out_of_range("steps", 0.0, "[1, inf)"));
    }
    let mut best = f64::INFINITY;
    for alpha in 2..=256u32 {
        let r = subsampled_gaussian_rdp(q, sigma, alpha)?;
        best = best.min(steps as f64 * r + conversion(alpha));
    }
    Ok(best.max(0.0))
}
