//! Test support: `e^d` for a rational `d` enclosed in exact arithmetic, for the tests
//! that check log-space roundings against the exact masses (docs/accountant.md §5).
//!
//! Fixed point with `P` fractional bits and directed rounding: `d = 2^m·y` with
//! `|y| ≤ 1/2`, `e^y` by its Taylor series (40 terms, remainder `≤ 2|y|^40/40!`), then
//! `m` squarings, each rounded down for the lower end and up for the upper one.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// Fractional bits: masses down to `e^{-800}` keep hundreds of significant bits after
/// the squarings' losses.
pub(crate) const P: u64 = 1800;

/// Uniform numbers in [0, 1) from a seeded linear congruential generator (the tests'
/// seeded instances).
pub(crate) fn seeded(mut s: u64) -> impl FnMut() -> f64 {
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The float `x` as an exact rational.
pub(crate) fn rat(x: f64) -> BigRational {
    BigRational::from_float(x).expect("finite")
}

fn scale() -> BigInt {
    BigInt::one() << P
}

/// `⌊q·2^P⌋`.
fn to_fixed(q: &BigRational) -> BigInt {
    (q * BigRational::from_integer(scale()))
        .floor()
        .to_integer()
}

/// `a·b/2^P` rounded down (`up`: up), for non-negative fixed-point `a`, `b`.
fn mul(a: &BigInt, b: &BigInt, up: bool) -> BigInt {
    let p = a * b;
    let q: BigInt = &p >> P;
    if up && (&q << P) != p {
        q + 1
    } else {
        q
    }
}

/// `(lo, hi)` in fixed point with `lo ≤ e^d·2^P ≤ hi`, for `d ≤ 1000`.
pub(crate) fn exp_fixed(d: &BigRational) -> (BigInt, BigInt) {
    let mut m = 0u32;
    let half = BigRational::new(BigInt::one(), BigInt::from(2));
    let mut y = d.clone();
    while y.abs() > half {
        y /= BigInt::from(2);
        m += 1;
    }
    // Σ_{k<40} y^k/k! in fixed point: y rounded down (an ulp), each term truncated (two
    // ulps, and the error carried into later terms shrinks by |y|/k ≤ 1/2): 200 ulps
    // bound it all; the series' remainder is below 2^-200.
    let yf = to_fixed(&y);
    let mut term = scale();
    let mut sum = scale();
    for k in 1..40u32 {
        term = (&term * &yf) >> P;
        term /= BigInt::from(k);
        sum += &term;
    }
    let slack = BigInt::from(200) + (scale() >> 200u64);
    let mut lo = (&sum - &slack).max(BigInt::zero());
    let mut hi = &sum + &slack;
    for _ in 0..m {
        lo = mul(&lo, &lo, false);
        hi = mul(&hi, &hi, true);
    }
    (lo, hi)
}

/// `(lo, hi)` with `lo ≤ e^d ≤ hi`, as rationals ([`exp_fixed`] at `P` fractional bits).
pub(crate) fn exp_enclosure(d: &BigRational) -> (BigRational, BigRational) {
    let (l, h) = exp_fixed(d);
    let scale = BigInt::one() << P;
    (
        BigRational::new(l, scale.clone()),
        BigRational::new(h, scale),
    )
}

/// Whether `Σ e^{d_i} ≤ 1` is certain (`Some(true)`), certainly false (`Some(false)`), or
/// too close to call at this precision (`None`).
pub(crate) fn sum_exp_vs_one(ds: &[BigRational]) -> Option<bool> {
    let (mut lo, mut hi) = (BigInt::zero(), BigInt::zero());
    for d in ds {
        let (l, h) = exp_fixed(d);
        lo += l;
        hi += h;
    }
    let one = scale();
    if hi <= one {
        Some(true)
    } else if lo > one {
        Some(false)
    } else {
        None
    }
}

/// `e^d` to a few digits (for messages).
pub(crate) fn approx(d: &BigRational) -> f64 {
    d.to_f64().map_or(f64::NAN, f64::exp)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The enclosure holds `e^{ln 2}`-type identities: `e^{x}·e^{−x}` straddles 1, and
    /// `e^{−700}` agrees with `f64` to its precision.
    #[test]
    fn enclosures_are_tight_and_ordered() {
        for x in [0.3, -1.7, -700.25, 12.5] {
            let (lo, hi) = exp_fixed(&rat(x));
            assert!(lo <= hi);
            let f = x.exp();
            let lof = BigRational::new(lo.clone(), scale()).to_f64().unwrap();
            let hif = BigRational::new(hi.clone(), scale()).to_f64().unwrap();
            assert!((lof / f - 1.0).abs() < 1e-14 && (hif / f - 1.0).abs() < 1e-14);
            let (l2, h2) = exp_fixed(&rat(-x));
            assert!(mul(&lo, &l2, false) <= scale() && mul(&hi, &h2, true) >= scale());
        }
    }
}
