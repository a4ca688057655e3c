//! Independent references for the tests: exact big-integer sums and brute-force
//! enumeration of composed (generalized) randomized response.
#![allow(dead_code)]

use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};

/// `n / d` as the nearest-ish `f64` (error ≤ 2 ulp) for big integers, `d > 0`.
pub fn ratio_to_f64(n: &BigUint, d: &BigUint) -> f64 {
    if n.is_zero() {
        return 0.0;
    }
    let s = d.bits() as i64 - n.bits() as i64 + 64;
    let q = if s >= 0 {
        (n << (s as usize)) / d
    } else {
        n / (d << ((-s) as usize))
    };
    let mut v = q.to_f64().unwrap();
    // Multiply by 2^{−s} in steps that stay in range.
    let mut e = -s;
    while e > 1000 {
        v *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        v *= 2f64.powi(-1000);
        e += 1000;
    }
    v * 2f64.powi(e as i32)
}

/// Exact δ(ε_g) of k-fold ε-DP composition for `e^ε = a/b` (a > b ≥ 1 integers) and
/// `e^{ε_g} = (a/b)^j`:
/// `δ = Σ_{i : k−2i−j > 0} C(k,i) (a^{k−i} bⁱ − a^{i+j} b^{k−i−j}) / (a+b)^k`,
/// summed with two Horner recurrences so that `k = 1e5` takes about a second.
pub fn exact_dp_delta(k: u64, a: u64, b: u64, j: u64) -> f64 {
    if j >= k {
        return 0.0;
    }
    let big_i = (k - j - 1) / 2; // largest i with k − 2i − j > 0
    let mut c = BigUint::from(1u32); // C(k, i)
    let mut s1 = BigUint::zero(); // Σ C(k,i) a^{I−i} bⁱ
    let mut s2 = BigUint::zero(); // Σ C(k,i) aⁱ b^{I−i}
    let mut apow = BigUint::from(1u32);
    let mut bpow = BigUint::from(1u32);
    for i in 0..=big_i {
        if i > 0 {
            c = c * (k - i + 1) / i;
        }
        s1 = if a == 2 { s1 << 1usize } else { s1 * a } + &c * &bpow;
        s2 = s2 * b
            + if a == 2 {
                &c << (i as usize)
            } else {
                &c * &apow
            };
        if a != 2 {
            apow *= a;
        }
        if b != 1 {
            bpow *= b;
        }
    }
    let sum1 = BigUint::from(a).pow((k - big_i) as u32) * s1;
    let sum2 = BigUint::from(a).pow(j as u32) * BigUint::from(b).pow((k - big_i - j) as u32) * s2;
    assert!(sum1 >= sum2);
    let num = sum1 - sum2;
    let den = BigUint::from(a + b).pow(k as u32);
    ratio_to_f64(&num, &den)
}

/// A two-outcome mechanism: P- and Q-probabilities of outcome 0 (outcome 1 has the rest).
#[derive(Clone, Copy)]
pub struct TwoPoint {
    pub p0: f64,
    pub q0: f64,
}

impl TwoPoint {
    /// Randomized response for ε-DP: P(0) = e^ε/(1+e^ε), Q(0) = 1/(1+e^ε).
    pub fn rr(eps: f64) -> Self {
        Self {
            p0: eps.exp() / (1.0 + eps.exp()),
            q0: 1.0 / (1.0 + eps.exp()),
        }
    }
    /// Generalized randomized response: P(0) = (e^ε − e^t)/(e^ε − 1), Q(0) = P(0)·e^{−t}
    /// (written from the definition, not from the library's helpers).
    pub fn grr(eps: f64, t: f64) -> Self {
        let p0 = (eps.exp() - t.exp()) / (eps.exp() - 1.0);
        Self {
            p0,
            q0: p0 * (-t).exp(),
        }
    }
}

/// `Σ_y (P(y) − e^{ε_g} Q(y))_+` over all `2^n` output sequences of independent mechanisms.
pub fn brute_hockey(mechs: &[TwoPoint], eps_g: f64) -> f64 {
    let n = mechs.len();
    let eg = eps_g.exp();
    let mut total = 0.0;
    for mask in 0u64..(1u64 << n) {
        let (mut p, mut q) = (1.0, 1.0);
        for (s, m) in mechs.iter().enumerate() {
            if mask >> s & 1 == 0 {
                p *= m.p0;
                q *= m.q0;
            } else {
                p *= 1.0 - m.p0;
                q *= 1.0 - m.q0;
            }
        }
        total += (p - eg * q).max(0.0);
    }
    total
}

/// Relative difference `|a/b − 1|` (0 when both are 0).
pub fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a / b - 1.0).abs()
    }
}
