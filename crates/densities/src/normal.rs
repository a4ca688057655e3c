//! The standard normal distribution with tail-accurate numerics (docs/maths.md §0,
//! "Numerics used everywhere"), and the [`Normal`] noise
//! distribution `N(m, σ²)` of the Gaussian mechanism (docs/maths.md §1.2).
//!
//! Everything is built on one function, the scaled complementary error function
//! `erfcx(x) = e^{x²} erfc(x)`, and on an exactly split square (`x·x = s + e` by FMA)
//! in every `e^{−x²/2}`, so that
//!
//! * `Φ(−t) = ½ e^{−t²/2} erfcx(t/√2)` keeps full *relative* accuracy down to the
//!   underflow threshold (`Φ(−38) ≈ 2.9e-316`; exactly 0 only below ≈ −38.5);
//! * `ln Φ(−t) = −t²/2 + ln(½ erfcx(t/√2))` is accurate for `t` up to ≈ 1.9e154;
//! * `Φ⁻¹` is Wichura's AS 241 (PPND16, Applied Statistics 37, 1988) polished by one
//!   Newton step on the accurate `Φ`, giving relative error ≈ 1e-16 for every
//!   `p ∈ [5e-324, 1 − 2⁻⁵³]`.
//!
//! `erfc` for moderate arguments (`|x| < 2`) comes from the `special` crate (a port of
//! the FreeBSD/musl `erfc`, accurate to about one ulp there); beyond that this module
//! evaluates Laplace's continued fraction
//! `√π erfcx(x) = 1/(x + (1/2)/(x + (2/2)/(x + (3/2)/(x + …))))` bottom-up.

use special::Error as _;
use std::f64::consts::{FRAC_1_SQRT_2, FRAC_2_SQRT_PI};

use crate::error::{check_open, DensityError};
use crate::traits::{Continuous, ContinuousCdf, NoiseMoments};

/// `1/√(2π)`.
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
/// `√π`.
const SQRT_PI: f64 = 1.772_453_850_905_516;
/// `√(π/2)`.
const SQRT_FRAC_PI_2: f64 = 1.253_314_137_315_500_3;
/// `√(2/π)`.
const SQRT_FRAC_2_PI: f64 = 0.797_884_560_802_865_4;
/// `½ ln(2π)`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// `e^{x²}` with the square split exactly (`x·x = s + e`), so the only error is that of
/// `exp` itself (≈ 1 ulp) instead of `x²·ulp`. Overflows to `+∞` for `|x| > 26.64`.
fn exp_sq(x: f64) -> f64 {
    let s = x * x;
    if !s.is_finite() {
        return f64::INFINITY;
    }
    let e = x.mul_add(x, -s);
    s.exp() * (1.0 + e)
}

/// `e^{−t²/2} · c` with the square split exactly and the product scaled so that no
/// intermediate underflows before the final multiplication (the result is then
/// correctly rounded even when it is subnormal). Used for `φ` and every tail of `Φ`.
pub(crate) fn exp_neg_half_sq_mul(t: f64, c: f64) -> f64 {
    if t.is_nan() || c.is_nan() {
        return f64::NAN;
    }
    let ht = 0.5 * t;
    let h = ht * t; // t²/2, exact scaling of t·t
    if h >= 1500.0 {
        return 0.0 * c;
    }
    let e = ht.mul_add(t, -h); // t²/2 = h + e exactly (barring underflow)
    let corr = 1.0 - e; // e^{−e}, |e| ≤ 1e-13
    if h > 700.0 {
        // 700 − h is exact (Sterbenz) for h ∈ (700, 1400].
        ((700.0 - h).exp() * corr * c) * (-700.0f64).exp()
    } else {
        (-h).exp() * corr * c
    }
}

/// The tail of Laplace's continued fraction for erfc:
/// `R(x) = (1/2)/(x + (2/2)/(x + (3/2)/(x + …)))`, so that `√π erfcx(x) = 1/(x + R(x))`.
/// Evaluated bottom-up (all terms positive, so the recursion is stable) with a depth
/// that gives full double precision for `x ≥ 1.5` (measured against 40-digit
/// arithmetic: 99 levels suffice at 1.5, 32 at 3, 10 at 10).
fn cf_tail(x: f64) -> f64 {
    let depth = (240.0 / (x * x) + 10.0).min(400.0) as usize;
    let mut r = 0.0;
    for k in (1..=depth).rev() {
        r = (0.5 * k as f64) / (x + r);
    }
    r
}

/// The scaled complementary error function `erfcx(x) = e^{x²} erfc(x)`.
///
/// Relative accuracy a few ulp for all `x ≥ 0`: `e^{x²}·erfc(x)` with an exactly split
/// square for `x < 2`, Laplace's continued fraction
/// `√π erfcx(x) = 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …))))` for `x ≥ 2`
/// (≈ `1/(x√π)` for large `x`). For `x < 0` it uses `erfcx(x) = 2e^{x²} − erfcx(−x)`
/// (no cancellation: the first term is ≥ 2, the second ≤ 1) and overflows to `+∞`
/// below ≈ −26.6. Underlies every tail of `Φ` (docs/maths.md §0).
///
/// ```
/// use densities::normal::erfcx;
/// assert_eq!(erfcx(0.0), 1.0);
/// // Large x: erfcx(x) ≈ 1/(x√π) (1 − 1/(2x²)).
/// let x = 1e4;
/// let approx = 1.0 / (x * std::f64::consts::PI.sqrt()) * (1.0 - 0.5 / (x * x));
/// assert!((erfcx(x) / approx - 1.0).abs() < 1e-15);
/// ```
pub fn erfcx(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        if x < -27.0 {
            return f64::INFINITY;
        }
        return 2.0 * exp_sq(x) - erfcx(-x);
    }
    if x < 2.0 {
        exp_sq(x) * x.compl_error()
    } else {
        1.0 / (SQRT_PI * (x + cf_tail(x)))
    }
}

/// `−erfcx′(t) = 2/√π − 2t·erfcx(t) > 0`, accurate (few ulp) for all `t ≥ −26`:
/// for `t ≥ 1.5` from the continued fraction, `(2/√π)·R/(t + R)` with
/// `R = 1/(√π erfcx(t)) − t` its tail (the direct form cancels like `2t²`).
pub(crate) fn neg_erfcx_deriv(t: f64) -> f64 {
    if t >= 1.5 {
        let r = cf_tail(t);
        FRAC_2_SQRT_PI * r / (t + r)
    } else {
        FRAC_2_SQRT_PI - 2.0 * t * erfcx(t)
    }
}

/// `Φ(−t)` for `t ≥ 1`: `½ e^{−t²/2} erfcx(t/√2)`, relative accuracy down to underflow.
fn lower_tail(t: f64) -> f64 {
    if t > 40.0 {
        return 0.0;
    }
    exp_neg_half_sq_mul(t, 0.5 * erfcx(t * FRAC_1_SQRT_2))
}

/// Mills-type ratio `Φ(x)/φ(x) = √(π/2)·erfcx(−x/√2)`, finite and accurate for `x ≤ 0`.
fn cdf_over_pdf(x: f64) -> f64 {
    SQRT_FRAC_PI_2 * erfcx(-x * FRAC_1_SQRT_2)
}

/// Standard normal density `φ(x) = e^{−x²/2}/√(2π)`, with relative accuracy down to
/// underflow (exactly split square; docs/maths.md §0).
///
/// ```
/// let p = densities::normal::pdf(0.0);
/// assert!((p - 1.0 / (2.0 * std::f64::consts::PI).sqrt()).abs() < 1e-17);
/// ```
pub fn pdf(x: f64) -> f64 {
    exp_neg_half_sq_mul(x, FRAC_1_SQRT_2PI)
}

/// Standard normal CDF `Φ(x)` (docs/maths.md §0: normal tails from `erfcx`).
///
/// Relative accuracy a few ulp everywhere, including the lower tail: for `x < −1`,
/// `Φ(x) = ½ e^{−x²/2} erfcx(−x/√2)` with an exactly split square, so `Φ(−37)` ≈ 5.7e-300
/// and `Φ(−38)` ≈ 2.9e-316 (subnormal) are correct, and `Φ(x) = 0` only below ≈ −38.5.
/// For `|x| ≤ 1`, `½ erfc(−x/√2)`; for `x > 1`, `1 − Φ(−x)`.
///
/// ```
/// use densities::normal::cdf;
/// assert_eq!(cdf(0.0), 0.5);
/// assert!(cdf(-38.0) > 0.0);
/// ```
pub fn cdf(x: f64) -> f64 {
    if x.is_nan() {
        f64::NAN
    } else if x < -1.0 {
        lower_tail(-x)
    } else if x <= 1.0 {
        0.5 * (-x * FRAC_1_SQRT_2).compl_error()
    } else {
        1.0 - lower_tail(x)
    }
}

/// Standard normal survival function `1 − Φ(x) = Φ(−x)`, with relative accuracy in the
/// upper tail (docs/maths.md §0).
///
/// ```
/// use densities::normal::{cdf, sf};
/// assert_eq!(sf(30.0), cdf(-30.0));
/// assert!(sf(30.0) > 4.9e-198 && sf(30.0) < 4.91e-198);
/// ```
pub fn sf(x: f64) -> f64 {
    cdf(-x)
}

/// `ln Φ(x)`, accurate everywhere it is representable (docs/maths.md §0: `ln Φ` stays
/// finite far beyond the underflow of `Φ`, for δ below 1e-300).
///
/// * `x < −1`: `−x²/2 + ln(½ erfcx(−x/√2))` (both terms negative, no cancellation; the
///   square split exactly), valid down to `x ≈ −1.9e154` (e.g. `ln Φ(−1e150) =
///   −5e299 − ln(1e150 √(2π))`);
/// * `−1 ≤ x ≤ 0`: `ln Φ(x)`;
/// * `x > 0`: `ln(1 − Φ(−x))` as `ln_1p(−sf(x))`, accurate as it tends to 0.
///
/// ```
/// use densities::normal::ln_cdf;
/// assert!((ln_cdf(-1e150) / -5e299 - 1.0).abs() < 1e-15);
/// assert!((ln_cdf(10.0) / -7.619853024160527e-24 - 1.0).abs() < 1e-14);
/// ```
pub fn ln_cdf(x: f64) -> f64 {
    if x.is_nan() {
        f64::NAN
    } else if x < -1.0 {
        let t = -x;
        let ht = 0.5 * t;
        let h = ht * t;
        if !h.is_finite() {
            return f64::NEG_INFINITY;
        }
        let e = ht.mul_add(t, -h);
        ((0.5 * erfcx(t * FRAC_1_SQRT_2)).ln() - e) - h
    } else if x <= 0.0 {
        cdf(x).ln()
    } else {
        (-sf(x)).ln_1p()
    }
}

/// Evaluates a polynomial with coefficients in increasing degree (Horner).
fn horner(c: &[f64], x: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &ci| acc * x + ci)
}

/// Wichura (1988), Algorithm AS 241 "PPND16": rational approximations of `Φ⁻¹` with
/// relative error ≈ 1e-16 (coefficients as published, to 20 digits).
#[allow(clippy::excessive_precision)]
fn as241(p: f64) -> f64 {
    const A: [f64; 8] = [
        3.387_132_872_796_366_608,
        1.331_416_678_917_843_774_5e2,
        1.971_590_950_306_551_442_7e3,
        1.373_169_376_550_946_112_5e4,
        4.592_195_393_154_987_145_7e4,
        6.726_577_092_700_870_085_3e4,
        3.343_057_558_358_812_810_5e4,
        2.509_080_928_730_122_672_7e3,
    ];
    const B: [f64; 8] = [
        1.0,
        4.231_333_070_160_091_125_2e1,
        6.871_870_074_920_579_083e2,
        5.394_196_021_424_751_107_7e3,
        2.121_379_430_158_659_586_7e4,
        3.930_789_580_009_271_061e4,
        2.872_908_573_572_194_267_4e4,
        5.226_495_278_852_854_561e3,
    ];
    const C: [f64; 8] = [
        1.423_437_110_749_683_577_34,
        4.630_337_846_156_545_295_9,
        5.769_497_221_460_691_405_5,
        3.647_848_324_763_204_605_04,
        1.270_458_252_452_368_382_58,
        2.417_807_251_774_506_117_7e-1,
        2.272_384_498_926_918_458_33e-2,
        7.745_450_142_783_414_076_4e-4,
    ];
    const D: [f64; 8] = [
        1.0,
        2.053_191_626_637_758_821_87,
        1.676_384_830_183_803_849_4,
        6.897_673_349_851_000_045_5e-1,
        1.481_039_764_274_800_745_9e-1,
        1.519_866_656_361_645_719_66e-2,
        5.475_938_084_995_344_946e-4,
        1.050_750_071_644_416_843_24e-9,
    ];
    const E: [f64; 8] = [
        6.657_904_643_501_103_777_2,
        5.463_784_911_164_114_369_9,
        1.784_826_539_917_291_335_8,
        2.965_605_718_285_048_912_3e-1,
        2.653_218_952_657_612_309_3e-2,
        1.242_660_947_388_078_438_6e-3,
        2.711_555_568_743_487_578_15e-5,
        2.010_334_399_292_288_132_65e-7,
    ];
    const F: [f64; 8] = [
        1.0,
        5.998_322_065_558_879_376_9e-1,
        1.369_298_809_227_358_053_1e-1,
        1.487_536_129_085_061_485_25e-2,
        7.868_691_311_456_132_591e-4,
        1.846_318_317_510_054_681_8e-5,
        1.421_511_758_316_445_888_7e-7,
        2.044_263_103_389_939_785_64e-15,
    ];
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180_625 - q * q;
        return q * horner(&A, r) / horner(&B, r);
    }
    let tail = if q < 0.0 { p } else { 1.0 - p };
    let r = (-tail.ln()).sqrt();
    let z = if r <= 5.0 {
        let r = r - 1.6;
        horner(&C, r) / horner(&D, r)
    } else {
        let r = r - 5.0;
        horner(&E, r) / horner(&F, r)
    };
    if q < 0.0 {
        -z
    } else {
        z
    }
}

/// `Φ⁻¹(p)` for `p ∈ (0, 0.25)` (result below −0.674): AS 241 plus one Newton step on
/// `ln Φ(x) − ln p`, whose derivative is `φ/Φ`.
fn lower_quantile(p: f64) -> f64 {
    let x = as241(p);
    let f = if p >= 1e-300 {
        // ln(Φ(x)/p) = ln_1p((Φ(x) − p)/p); the difference is exact near the root.
        ((cdf(x) - p) / p).ln_1p()
    } else {
        ln_cdf(x) - p.ln()
    };
    x - f * cdf_over_pdf(x)
}

/// Standard normal quantile `Φ⁻¹(p)` (docs/maths.md §0, §1.2).
///
/// Wichura's AS 241 (PPND16) followed by one Newton step using the tail-accurate
/// [`cdf`]/[`ln_cdf`]; relative error ≈ 1e-16 (well inside 1e-13) for all
/// `p ∈ [5e-324, 1 − 2⁻⁵³]`. For `p > 0.75` it uses `Φ⁻¹(p) = −Φ⁻¹(1 − p)` (where `1 − p`
/// is exact); for `p ∈ [0.25, 0.75]` the Newton step uses `erf` so that the relative
/// accuracy holds near the median too. Returns `∓∞` at 0 and 1, NaN outside `[0, 1]`.
///
/// ```
/// use densities::normal::{cdf, quantile};
/// assert_eq!(quantile(0.5), 0.0);
/// let x = quantile(1e-300);
/// assert!((cdf(x) / 1e-300 - 1.0).abs() < 1e-13);
/// ```
pub fn quantile(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    if p > 0.75 {
        return -lower_quantile(1.0 - p);
    }
    if p < 0.25 {
        return lower_quantile(p);
    }
    let q = p - 0.5; // exact
    let x = as241(p);
    // Φ(x) − p = ½ erf(x/√2) − (p − ½), both sides small and relatively accurate.
    let g = 0.5 * (x * FRAC_1_SQRT_2).error() - q;
    x - g / pdf(x)
}

/// Upper quantile `Φ⁻¹(1 − q)`, computed as `−Φ⁻¹(q)` so that `1 − q` is never rounded
/// (docs/maths.md §0); accurate for `q` down to 5e-324.
///
/// ```
/// let t = densities::normal::upper_quantile(1e-20);
/// assert!((densities::normal::sf(t) / 1e-20 - 1.0).abs() < 1e-13);
/// ```
pub fn upper_quantile(q: f64) -> f64 {
    -quantile(q)
}

/// The `t` (for `σ = 1`) with `P(max of k i.i.d. |N(0,1)| ≤ t) = 1 − β`:
/// `t = Φ⁻¹(1 − u/2)` with `u = 1 − (1 − β)^{1/k}` computed as
/// `u = −expm1(ln_1p(−β)/k)` (docs/maths.md §0 and §1.2, Dagan–Kur's `gaussHighProb`).
/// The naive `1 − (1 − β)^{1/k}` is exactly 0 for `k = 1e10`, `β = 1e-6`; here that case
/// gives `t ≈ 8.3`. Multiply by σ for `N(0, σ²)`.
///
/// `k ≥ 1` may be real; returns NaN when `k < 1` or `β ∉ (0, 1)`.
///
/// ```
/// let t = densities::normal::max_abs_quantile(1e10, 1e-6);
/// assert!(t > 8.0 && t < 9.0);
/// ```
pub fn max_abs_quantile(k: f64, beta: f64) -> f64 {
    let valid = k >= 1.0 && beta > 0.0 && beta < 1.0; // false for NaN too
    if !valid {
        return f64::NAN;
    }
    let u = -((-beta).ln_1p() / k).exp_m1();
    upper_quantile(0.5 * u)
}

/// The normal distribution `N(mean, σ²)` — the noise of the Gaussian mechanism
/// (Balle & Wang 2018, Theorem 8; docs/maths.md §1.2). Its CDF, survival function and
/// quantile use the tail-accurate standard-normal functions of this module.
///
/// ```
/// use densities::normal::Normal;
/// use densities::traits::NoiseMoments;
/// let n = Normal::new(0.0, 2.0).unwrap();
/// assert!((n.mean_abs() - 2.0 * (2.0 / std::f64::consts::PI).sqrt()).abs() < 1e-15);
/// assert_eq!(n.second_moment(), 4.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Normal {
    /// The mean `m`.
    pub mean: f64,
    /// The standard deviation `σ > 0`.
    pub sigma: f64,
}

impl Normal {
    /// `N(mean, σ²)` (docs/maths.md §1.2); the mean must be finite and `σ ∈ (0, ∞)`.
    ///
    /// Errors: `mean` not finite, `sigma` not in `(0, ∞)`.
    pub fn new(mean: f64, sigma: f64) -> Result<Self, DensityError> {
        check_open(
            "mean",
            mean,
            f64::NEG_INFINITY,
            f64::INFINITY,
            "(-inf, inf)",
        )?;
        check_open("sigma", sigma, 0.0, f64::INFINITY, "(0, inf)")?;
        Ok(Self { mean, sigma })
    }

    fn z(&self, x: f64) -> f64 {
        (x - self.mean) / self.sigma
    }
}

impl Continuous for Normal {
    fn pdf(&self, x: f64) -> f64 {
        pdf(self.z(x)) / self.sigma
    }
    fn ln_pdf(&self, x: f64) -> f64 {
        let z = self.z(x);
        -0.5 * z * z - self.sigma.ln() - HALF_LN_2PI
    }
}

impl ContinuousCdf for Normal {
    fn cdf(&self, x: f64) -> f64 {
        cdf(self.z(x))
    }
    fn sf(&self, x: f64) -> f64 {
        sf(self.z(x))
    }
    fn quantile(&self, p: f64) -> f64 {
        self.mean + self.sigma * quantile(p)
    }
}

impl NoiseMoments for Normal {
    /// `E|X| = σ√(2/π)` for mean 0 (docs/maths.md §1.2); for a mean `m ≠ 0` the folded
    /// normal `σ√(2/π) e^{−m²/(2σ²)} + m·erf(m/(σ√2))`.
    fn mean_abs(&self) -> f64 {
        let m = self.mean;
        let s = self.sigma;
        if m == 0.0 {
            s * SQRT_FRAC_2_PI
        } else {
            let r = m / s;
            s * SQRT_FRAC_2_PI * exp_neg_half_sq_mul(r, 1.0) + m * (r * FRAC_1_SQRT_2).error()
        }
    }
    /// `E X² = σ² + m²` (`σ²` for the mechanism's zero-mean noise; docs/maths.md §1.2).
    fn second_moment(&self) -> f64 {
        self.sigma * self.sigma + self.mean * self.mean
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    #[test]
    fn pi_constants() {
        assert!((SQRT_PI - PI.sqrt()).abs() < 1e-15);
        assert!((SQRT_FRAC_PI_2 - (PI / 2.0).sqrt()).abs() < 1e-15);
        assert!((SQRT_FRAC_2_PI - (2.0 / PI).sqrt()).abs() < 1e-15);
        assert!((FRAC_1_SQRT_2PI - 1.0 / (2.0 * PI).sqrt()).abs() < 1e-16);
        assert!((HALF_LN_2PI - 0.5 * (2.0 * PI).ln()).abs() < 1e-15);
    }
}
