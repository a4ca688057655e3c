//! Log-space binomial helpers (docs/maths.md §0, "Binomial sums": in log space, with
//! Loader's form).
//!
//! The binomial probability `C(n,x) pᵡ qⁿ⁻ˣ` is evaluated with Loader's saddle-point form
//! (C. Loader, "Fast and accurate computation of binomial probabilities", 2000):
//!
//! `ln b(x; n, p) = δₙ − δₓ − δₙ₋ₓ − D(x, np) − D(n−x, nq) − ½ ln(2π x (n−x)/n)`,
//!
//! with the Stirling remainder `δₙ = ln n! − (n+½) ln n + n − ½ ln 2π` and the deviance
//! `D(x, μ) = x ln(x/μ) + μ − x`. Every piece is O(1)–O(100) near the bulk, so the absolute
//! error of `ln b` stays at a few ulps of O(1) even for `n = 1e9`: the route through three
//! `ln Γ ≈ 1e6` values loses about six more digits at `n = 1e5`.

use std::f64::consts::PI;

/// `½ ln(2π)`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// Stirling remainder `δ(n) = ln n! − (n + ½) ln n + n − ½ ln 2π` for an integer `n ≥ 1`.
pub(crate) fn stirlerr(n: u64) -> f64 {
    if n <= 15 {
        // n! ≤ 15! < 2⁵³ is exact in f64, so ln n! is correctly rounded.
        let fact: f64 = (1..=n).map(|i| i as f64).product();
        let nf = n as f64;
        return fact.ln() - (nf + 0.5) * nf.ln() + nf - HALF_LN_2PI;
    }
    // Asymptotic series 1/(12n) − 1/(360n³) + 1/(1260n⁵) − 1/(1680n⁷) + 1/(1188n⁹).
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    let nf = n as f64;
    let nn = nf * nf;
    if n > 500 {
        (S0 - S1 / nn) / nf
    } else if n > 80 {
        (S0 - (S1 - S2 / nn) / nn) / nf
    } else if n > 35 {
        (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / nf
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / nf
    }
}

/// Deviance `D(x, μ) = x ln(x/μ) + μ − x ≥ 0`, without cancellation when `x ≈ μ`.
pub(crate) fn bd0(x: f64, mu: f64) -> f64 {
    if (x - mu).abs() < 0.1 * (x + mu) {
        // x ln(x/μ) + μ − x = (x−μ)v + 2x Σ_{j≥1} v^{2j+1}/(2j+1), v = (x−μ)/(x+μ).
        let v = (x - mu) / (x + mu);
        let v2 = v * v;
        let mut s = (x - mu) * v;
        let mut ej = 2.0 * x * v;
        for j in 1..1000 {
            ej *= v2;
            let s1 = s + ej / (2 * j + 1) as f64;
            if s1 == s {
                return s1;
            }
            s = s1;
        }
        s
    } else {
        x * (x / mu).ln() + mu - x
    }
}

/// `ln C(n,x) pˣ qⁿ⁻ˣ`, where `q = 1 − p` is passed separately so that both can be accurate.
pub(crate) fn ln_binom_pmf(x: u64, n: u64, p: f64, q: f64) -> f64 {
    debug_assert!(x <= n);
    if p <= 0.0 {
        return if x == 0 { 0.0 } else { f64::NEG_INFINITY };
    }
    if q <= 0.0 {
        return if x == n { 0.0 } else { f64::NEG_INFINITY };
    }
    let nf = n as f64;
    if x == 0 {
        let ln_q = if q > 0.5 { (-p).ln_1p() } else { q.ln() };
        return nf * ln_q;
    }
    if x == n {
        let ln_p = if p > 0.5 { (-q).ln_1p() } else { p.ln() };
        return nf * ln_p;
    }
    let xf = x as f64;
    let lc = stirlerr(n) - stirlerr(x) - stirlerr(n - x) - bd0(xf, nf * p) - bd0(nf - xf, nf * q);
    let lf = (2.0 * PI).ln() + xf.ln() + (-xf / nf).ln_1p();
    lc - 0.5 * lf
}

/// Scaled weights below this (relative to the mode) are set to 0: they would be subnormal
/// and inaccurate, and they are negligible in every sum here.
const TINY: f64 = 1e-300;

/// A binomial distribution `Bin(n, p)` stored as `e^{ln_scale} · w[x]` with `max w = 1`,
/// so that neither the weights nor their sums underflow where it matters. Entries more
/// than 1e-300 below the mode are 0; `lo..=hi` is the range of non-zero entries.
#[derive(Debug, Clone)]
pub(crate) struct ScaledPmf {
    /// Natural log of the common factor.
    pub ln_scale: f64,
    /// Scaled probabilities, `w.len() == n + 1`.
    pub w: Vec<f64>,
    /// First index with a non-zero weight.
    pub lo: usize,
    /// Last index with a non-zero weight.
    pub hi: usize,
}

impl ScaledPmf {
    /// `Bin(n, p)` with `q = 1 − p` and the odds `p/q` passed separately (each accurate).
    /// The weights are built outward from the mode by the exact ratio
    /// `b(x+1)/b(x) = (n−x)/(x+1) · p/q` (relative error growth ≈ 2 ulp a step).
    pub fn binomial(n: usize, p: f64, q: f64, odds: f64) -> Self {
        let mut w = vec![0.0; n + 1];
        if p <= 0.0 {
            w[0] = 1.0;
            return Self {
                ln_scale: 0.0,
                w,
                lo: 0,
                hi: 0,
            };
        }
        if q <= 0.0 {
            w[n] = 1.0;
            return Self {
                ln_scale: 0.0,
                w,
                lo: n,
                hi: n,
            };
        }
        let nf = n as f64;
        let mode = (((nf + 1.0) * p).floor().max(0.0) as usize).min(n);
        let ln_scale = ln_binom_pmf(mode as u64, n as u64, p, q);
        w[mode] = 1.0;
        let inv_odds = 1.0 / odds;
        let mut v = 1.0;
        let mut hi = mode;
        for x in mode..n {
            v *= (n - x) as f64 / (x + 1) as f64 * odds;
            if v < TINY || !v.is_finite() {
                break;
            }
            w[x + 1] = v;
            hi = x + 1;
        }
        v = 1.0;
        let mut lo = mode;
        for x in (0..mode).rev() {
            v *= (x + 1) as f64 / (n - x) as f64 * inv_odds;
            if v < TINY || !v.is_finite() {
                break;
            }
            w[x] = v;
            lo = x;
        }
        Self {
            ln_scale,
            w,
            lo,
            hi,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use special::Gamma;

    fn ln_choose_gamma(n: u64, x: u64) -> f64 {
        let g = |v: u64| Gamma::ln_gamma(v as f64 + 1.0).0;
        g(n) - g(x) - g(n - x)
    }

    #[test]
    fn stirlerr_matches_ln_gamma() {
        for n in [1u64, 2, 5, 15, 16, 20, 36, 81, 200, 501, 10_000] {
            let nf = n as f64;
            let direct = Gamma::ln_gamma(nf + 1.0).0 - (nf + 0.5) * nf.ln() + nf - HALF_LN_2PI;
            assert!(
                (stirlerr(n) - direct).abs() < 1e-13 * (1.0 + nf.ln() * nf),
                "n = {n}: {} vs {direct}",
                stirlerr(n)
            );
        }
    }

    #[test]
    fn bd0_matches_direct_far_from_mean() {
        for (x, mu) in [(3.0f64, 10.0f64), (50.0, 20.0), (1.0, 1e-3)] {
            let d: f64 = x * (x / mu).ln() + mu - x;
            assert!((bd0(x, mu) - d).abs() < 1e-12 * d.abs().max(1.0));
        }
        // Near the mean: D = μ[(1+r)ln(1+r) − r] = μ Σ_{n≥2} (−1)ⁿ rⁿ/(n(n−1)), r = x/μ − 1.
        let (x, mu) = (100.0f64, 100.5f64);
        let r = (x - mu) / mu;
        let series: f64 = (2..20)
            .map(|n| mu * (-r).powi(n) / (n * (n - 1)) as f64)
            .sum();
        assert!(
            (bd0(x, mu) - series).abs() < 1e-17,
            "{} vs {series}",
            bd0(x, mu)
        );
    }

    #[test]
    fn loader_pmf_matches_gamma_route_and_sums_to_one() {
        for &(n, p) in &[
            (10u64, 0.3f64),
            (1000, 0.731),
            (100_000, 0.268_941_421_369_995_1),
        ] {
            let q = 1.0 - p;
            let mut total = 0.0;
            for x in 0..=n {
                let l = ln_binom_pmf(x, n, p, q);
                total += l.exp();
                if n <= 1000 {
                    let g = ln_choose_gamma(n, x) + x as f64 * p.ln() + (n - x) as f64 * q.ln();
                    assert!((l - g).abs() < 1e-11 * (1.0 + g.abs()), "n={n} x={x}");
                }
            }
            assert!((total - 1.0).abs() < 1e-12, "n = {n}: total {total}");
        }
    }

    #[test]
    fn scaled_pmf_matches_loader_pointwise() {
        let (n, p) = (5000usize, 0.2f64);
        let q = 1.0 - p;
        let s = ScaledPmf::binomial(n, p, q, p / q);
        for x in (s.lo..=s.hi).step_by(37) {
            let a = s.ln_scale + s.w[x].ln();
            let b = ln_binom_pmf(x as u64, n as u64, p, q);
            assert!(
                (a - b).abs() < 1e-11 * (1.0 + b.abs()),
                "x = {x}: {a} vs {b}"
            );
        }
        assert!(s.lo < 500 && s.hi > 1500);
    }
}
