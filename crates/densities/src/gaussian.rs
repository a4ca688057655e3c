//! Calibration of the Gaussian mechanism (docs/maths.md §1.2): the classical bound of
//! Dwork & Roth (Theorem A.1), the analytic Gaussian mechanism of Balle & Wang (2018,
//! Theorem 8 and Algorithm 1), and the privacy profile `δ(ε)` of `N(0, 1)` against a
//! shift `μ` together with its inverse.
//!
//! # Numerics
//!
//! Every quantity here has the form `H(a, b) = Φ(−a) − e^ε Φ(−b)` with `b² − a² = 2ε`
//! (in the profile `a = ε/μ − μ/2`, `b = ε/μ + μ/2`; in Algorithm 1's `B⁻(u)`,
//! `a = √(εu)`, `b = √(ε(u+2))`; in `B⁺(v)`, `a = −√(εv)`). Written directly, both terms
//! are tiny and nearly equal when δ is small (catastrophic cancellation), and `e^ε Φ(−b)`
//! can even lose all digits. Since `e^ε e^{−b²/2} = e^{−a²/2}` exactly,
//!
//! `H(a, b) = ½ e^{−a²/2} [erfcx(a/√2) − erfcx(b/√2)]`,
//!
//! and the bracket is evaluated without cancellation: directly when
//! `erfcx(b/√2) ≤ ½ erfcx(a/√2)`, otherwise as `∫_{a/√2}^{b/√2} −erfcx′(t) dt` by 16-point
//! Gauss–Legendre quadrature (the integrand is positive, smooth and slowly varying on that
//! interval, and its length `(b − a)/√2` is formed without cancellation: `μ/√2` in the
//! profile, `√(2ε)/(√(u+2) + √u)` in `B⁻`). The prefactor `e^{−a²/2}` uses an exactly
//! split square and stays in log space for the comparisons with `ln δ` inside
//! Algorithm 1, so δ far below 1e-300 works.
//!
//! Since issue 16 the public functions take `erfcx` and its differences from a table of
//! Taylor coefficients on `[−1/2, 8]` (`erfcx_taylor.rs`; kernel `Taylor`): the difference is
//! then a sum of positive parts (Taylor differences inside cells, tabulated drops across
//! whole cells), used unless the plain difference above cannot cancel. The original
//! kernel (continued fraction, quadrature) is `ContinuedFraction`, used only by
//! [`reference`](mod@reference); the two agree to a few ulps (tests/gaussian_fast.rs).

use std::f64::consts::FRAC_1_SQRT_2;
use std::sync::OnceLock;

use crate::error::{check_open, DensityError};
use crate::normal::{erfcx, exp_neg_half_sq_mul, neg_erfcx_deriv};

mod newton;

/// Number of Gauss–Legendre nodes used for the `erfcx` differences.
const GL_N: usize = 16;

/// Gauss–Legendre nodes and weights on [−1, 1], computed once by Newton's method on the
/// Legendre polynomial `P_16` (three-term recurrence).
fn gauss_legendre() -> &'static ([f64; GL_N], [f64; GL_N]) {
    static NODES: OnceLock<([f64; GL_N], [f64; GL_N])> = OnceLock::new();
    NODES.get_or_init(|| {
        let n = GL_N;
        let mut x = [0.0; GL_N];
        let mut w = [0.0; GL_N];
        for i in 0..n / 2 {
            // Initial guess (Tricomi): cos(π(i + 3/4)/(n + 1/2)).
            let mut z = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
            let mut dp = 1.0;
            for _ in 0..100 {
                let (mut p0, mut p1) = (1.0, z);
                for k in 2..=n {
                    let p2 = ((2 * k - 1) as f64 * z * p1 - (k - 1) as f64 * p0) / k as f64;
                    p0 = p1;
                    p1 = p2;
                }
                dp = n as f64 * (z * p1 - p0) / (z * z - 1.0);
                let dz = p1 / dp;
                z -= dz;
                if dz.abs() < 1e-17 {
                    break;
                }
            }
            let wi = 2.0 / ((1.0 - z * z) * dp * dp);
            x[i] = -z;
            x[n - 1 - i] = z;
            w[i] = wi;
            w[n - 1 - i] = wi;
        }
        (x, w)
    })
}

/// The special functions the profile is built on. Two sets exist: [`Taylor`], the
/// table-driven one the public functions use (module `erfcx_taylor`), and
/// [`ContinuedFraction`], the original one ([`crate::normal::erfcx`] and 16-point
/// quadrature), kept for [`reference`]. Both evaluate the same formulas.
pub(crate) trait Kernel {
    /// `erfcx(x)`.
    fn erfcx(x: f64) -> f64;
    /// `−erfcx′(t)`.
    fn neg_deriv(t: f64) -> f64;
    /// `erfcx(x) − erfcx(x + h)` when the kernel has a faster route than
    /// [`erfcx_drop`]'s, else `None`.
    fn drop_direct(x: f64, h: f64) -> Option<f64>;
}

/// Taylor tables on `[−1/2, 8]` (module `erfcx_taylor`), continued fraction beyond.
pub(crate) struct Taylor;

impl Kernel for Taylor {
    fn erfcx(x: f64) -> f64 {
        crate::erfcx_taylor::erfcx(x)
    }
    fn neg_deriv(t: f64) -> f64 {
        crate::erfcx_taylor::neg_deriv(t)
    }
    fn drop_direct(x: f64, h: f64) -> Option<f64> {
        // Long intervals: the plain difference when it cannot cancel (as in
        // `erfcx_drop`), which is cheaper and rounds less than many cells.
        if h > 0.25 {
            let (fx, fy) = (Self::erfcx(x), Self::erfcx(x + h));
            if fy <= 0.5 * fx {
                return Some(fx - fy);
            }
        }
        crate::erfcx_taylor::drop(x, h)
    }
}

/// The original kernel: [`crate::normal::erfcx`] (continued fraction from 2 on) and
/// 16-point Gauss–Legendre for differences.
pub(crate) struct ContinuedFraction;

impl Kernel for ContinuedFraction {
    fn erfcx(x: f64) -> f64 {
        erfcx(x)
    }
    fn neg_deriv(t: f64) -> f64 {
        neg_erfcx_deriv(t)
    }
    fn drop_direct(_: f64, _: f64) -> Option<f64> {
        None
    }
}

/// `erfcx(x) − erfcx(x + h)` for `h > 0`, `x ≥ −0.5`, with full relative accuracy.
fn erfcx_drop<K: Kernel>(x: f64, h: f64) -> f64 {
    if let Some(d) = K::drop_direct(x, h) {
        return d;
    }
    let y = x + h;
    let fx = K::erfcx(x);
    let fy = K::erfcx(y);
    if fy <= 0.5 * fx {
        return fx - fy;
    }
    let (nodes, weights) = gauss_legendre();
    let half = 0.5 * h;
    let mid = x + half;
    let sum: f64 = nodes
        .iter()
        .zip(weights)
        .map(|(&t, &w)| w * K::neg_deriv(mid + half * t))
        .sum();
    half * sum
}

/// `H = Φ(−a) − e^ε Φ(−b)` with `b = a + h`, `h > 0`, `b ≥ 0` and `ε = (b² − a²)/2`,
/// in one of two cancellation-free forms.
enum Hockey {
    /// `H = 1 − t` with `t ≤ 0.48` (when `a < −1/√2`).
    OneMinus(f64),
    /// `H = e^{−a²/2} · m` with `0 ≤ m ≤ 1` (when `a ≥ −1/√2`).
    Scaled(f64),
}

fn hockey_parts<K: Kernel>(a: f64, h: f64) -> Hockey {
    let x = a * FRAC_1_SQRT_2;
    if x < -0.5 {
        // Φ(|a|) − e^ε Φ(−b) = 1 − ½ e^{−a²/2} (erfcx(|a|/√2) + erfcx(b/√2)).
        let y = (a + h) * FRAC_1_SQRT_2;
        Hockey::OneMinus(exp_neg_half_sq_mul(a, 0.5 * (K::erfcx(-x) + K::erfcx(y))))
    } else {
        Hockey::Scaled(0.5 * erfcx_drop::<K>(x, h * FRAC_1_SQRT_2))
    }
}

/// `ln m − a²/2` for `H = e^{−a²/2} m`, with `a²/2` split exactly.
fn ln_scaled(a: f64, m: f64) -> f64 {
    let ha = 0.5 * a;
    let l = ha * a;
    let e = ha.mul_add(a, -l);
    (m.ln() - e) - l
}

/// `ln H(a, a + h)` (see [`Hockey`]); finite far below the underflow of `H`.
fn ln_hockey<K: Kernel>(a: f64, h: f64) -> f64 {
    if a > 1e154 {
        return f64::NEG_INFINITY;
    }
    match hockey_parts::<K>(a, h) {
        Hockey::OneMinus(t) => (-t).ln_1p(),
        Hockey::Scaled(m) => ln_scaled(a, m),
    }
}

/// `H(a, a + h)` itself (0 only when it underflows).
fn hockey<K: Kernel>(a: f64, h: f64) -> f64 {
    if a > 40.0 {
        // e^{−a²/2} < 1e-347 and m ≤ 1.
        return 0.0;
    }
    match hockey_parts::<K>(a, h) {
        Hockey::OneMinus(t) => 1.0 - t,
        Hockey::Scaled(m) => exp_neg_half_sq_mul(a, m),
    }
}

/// `ln B⁻_ε(u) = ln[Φ(−√(εu)) − e^ε Φ(−√(ε(u+2)))]` (Balle & Wang 2018, Algorithm 1).
fn ln_b_minus<K: Kernel>(epsilon: f64, u: f64) -> f64 {
    let a = (epsilon * u).sqrt();
    let h = 2.0 * epsilon.sqrt() / ((u + 2.0).sqrt() + u.sqrt());
    ln_hockey::<K>(a, h)
}

/// `ln B⁺_ε(v) = ln[Φ(√(εv)) − e^ε Φ(−√(ε(v+2)))]` (Balle & Wang 2018, Algorithm 1).
fn ln_b_plus<K: Kernel>(epsilon: f64, v: f64) -> f64 {
    let sv = v.sqrt();
    let a = -(epsilon.sqrt() * sv);
    let h = epsilon.sqrt() * ((v + 2.0).sqrt() + sv);
    ln_hockey::<K>(a, h)
}

/// The boundary between the points where `g ≤ 0` ("passes") and `g > 0`, to the last
/// bit, given a bracket with `g(pass) ≤ 0 < g(fail)` (in either order). Illinois
/// (modified regula falsi) steps on the values of `g`, each kept strictly inside the
/// bracket and replaced by a bisection whenever the bracket fails to halve; then plain
/// bisection until the two ends are adjacent doubles. Returns the end that passes.
fn boundary(g: &impl Fn(f64) -> f64, mut pass: f64, mut fail: f64) -> f64 {
    let (mut gp, mut gf) = (g(pass), g(fail));
    let mut last_side = 0i8;
    let mut width = (fail - pass).abs();
    for _ in 0..200 {
        let mid = pass + 0.5 * (fail - pass);
        if mid == pass || mid == fail {
            return pass;
        }
        let secant = pass - gp * (fail - pass) / (gf - gp);
        let inside = secant.is_finite()
            && (secant - pass) * (secant - fail) < 0.0
            && gp.is_finite()
            && gf.is_finite();
        let x = if inside { secant } else { mid };
        let gx = g(x);
        if gx <= 0.0 {
            pass = x;
            gp = gx;
            if last_side == 1 {
                gf *= 0.5;
            }
            last_side = 1;
        } else {
            fail = x;
            gf = gx;
            if last_side == -1 {
                gp *= 0.5;
            }
            last_side = -1;
        }
        let w = (fail - pass).abs();
        if w > 0.5 * width {
            // Slow progress: one bisection step.
            let m = pass + 0.5 * (fail - pass);
            if m == pass || m == fail {
                return pass;
            }
            let gm = g(m);
            if gm <= 0.0 {
                pass = m;
                gp = gm;
            } else {
                fail = m;
                gf = gm;
            }
            last_side = 0;
        }
        width = (fail - pass).abs();
    }
    pass
}

/// Largest `t ≥ 0` (to the last bit) with `g(t) ≤ 0`, for `g ≤ 0` on an initial segment
/// `[0, t*]` and `g(0) ≤ 0`: doubling to bracket, then [`boundary`]. Returns the end that
/// passes.
fn last_ok(g: impl Fn(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1.0);
    while g(hi) <= 0.0 {
        lo = hi;
        hi *= 2.0;
        if !hi.is_finite() {
            return lo;
        }
    }
    boundary(&g, lo, hi)
}

/// Smallest `t ≥ 0` (to the last bit) with `g(t) ≤ 0`, for `g > 0` on `[0, t*)` and
/// `g ≤ 0` after: doubling, then [`boundary`]. Returns the end that passes (`+∞` if none).
fn first_ok(g: impl Fn(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1.0);
    while g(hi) > 0.0 {
        lo = hi;
        hi *= 2.0;
        if !hi.is_finite() {
            return f64::INFINITY;
        }
    }
    boundary(&g, hi, lo)
}

/// The classical Gaussian mechanism (Dwork & Roth 2014, Theorem A.1; Balle & Wang
/// 2018, Theorem 1; docs/maths.md §1.2): `σ = Δ √(2 ln(1.25/δ)) / ε`, (ε, δ)-DP for
/// `ε ∈ (0, 1)` only.
///
/// Errors: `epsilon` outside `(0, 1)` ("(0, 1) for the classical Gaussian mechanism"),
/// `delta` outside `(0, 1)`, `sensitivity` not in `(0, ∞)`.
///
/// ```
/// use densities::gaussian::classical_sigma;
/// let s = classical_sigma(0.5, 1e-5, 1.0).unwrap();
/// assert!((s - 2.0 * (2.0 * (1.25e5f64).ln()).sqrt()).abs() < 1e-12);
/// assert!(classical_sigma(1.0, 1e-5, 1.0).is_err());
/// ```
pub fn classical_sigma(epsilon: f64, delta: f64, sensitivity: f64) -> Result<f64, DensityError> {
    check_open(
        "epsilon",
        epsilon,
        0.0,
        1.0,
        "(0, 1) for the classical Gaussian mechanism",
    )?;
    check_open("delta", delta, 0.0, 1.0, "(0, 1)")?;
    check_open("sensitivity", sensitivity, 0.0, f64::INFINITY, "(0, inf)")?;
    // ln(1.25/δ) without forming 1.25/δ (which overflows for subnormal δ).
    let l = 1.25f64.ln() - delta.ln();
    Ok(sensitivity * (2.0 * l).sqrt() / epsilon)
}

/// The analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8 and Algorithm 1;
/// docs/maths.md §1.2): the smallest σ such that `N(0, σ²)` with L2 sensitivity Δ is
/// (ε, δ)-DP, i.e. `Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) ≤ δ` (eq. 6).
///
/// Solved by Newton's method on the profile in the variable `a = ε/μ − μ/2` (`μ = Δ/σ`;
/// see `gaussian/newton.rs`), from the start `a = √(−2 ln δ)`, in a few profile
/// evaluations; then certified on the public profile: σ is moved by single ulps to the
/// smallest double near the root with `gaussian_delta(ε, Δ/σ) ≤ δ` as computed (for
/// δ ≥ 1e-305; below, `ln_gaussian_delta(ε, Δ/σ) ≤ ln δ`). Should the iteration fail
/// to settle (not seen in the tests), Balle & Wang's Algorithm 1 is run instead, as
/// [`reference::analytic_sigma_search`] does: a last-bit root search for
/// `u* = inf{u ≥ 0 : B⁻(u) ≤ δ}` (or `v* = sup{v : B⁺(v) ≤ δ}` when `δ ≥ δ₀`), then
/// the same certification. Over 10⁵ grid points the two agree within 2 ulps in more
/// than 99.5 % of cases and within 8 everywhere (tests/gaussian_fast.rs).
///
/// The profile is evaluated without cancellation, in log space (module documentation),
/// so the result keeps ≈ 1e-12 relative accuracy for δ down to 1e-300 and beyond and
/// ε from 1e-4 to 20.
///
/// Errors: ε not in `(0, ∞)`, δ not in `(0, 1)`, Δ not in `(0, ∞)`.
///
/// ```
/// use densities::gaussian::{analytic_sigma, classical_sigma, gaussian_delta};
/// let s = analytic_sigma(0.5, 1e-5, 1.0).unwrap();
/// assert!(s < classical_sigma(0.5, 1e-5, 1.0).unwrap());
/// assert!(gaussian_delta(0.5, 1.0 / s) <= 1e-5);
/// ```
pub fn analytic_sigma(epsilon: f64, delta: f64, sensitivity: f64) -> Result<f64, DensityError> {
    check_sigma_args(epsilon, delta, sensitivity)?;
    let ln_delta = delta.ln();
    if let Some(sigma) = newton::sigma(epsilon, delta, ln_delta, sensitivity) {
        return Ok(sigma);
    }
    Ok(sigma_by_search::<Taylor>(
        epsilon,
        delta,
        ln_delta,
        sensitivity,
    ))
}

/// The argument checks of [`analytic_sigma`].
fn check_sigma_args(epsilon: f64, delta: f64, sensitivity: f64) -> Result<(), DensityError> {
    check_open("epsilon", epsilon, 0.0, f64::INFINITY, "(0, inf)")?;
    check_open("delta", delta, 0.0, 1.0, "(0, 1)")?;
    check_open("sensitivity", sensitivity, 0.0, f64::INFINITY, "(0, inf)")?;
    Ok(())
}

/// Balle & Wang's Algorithm 1 as a last-bit root search (the algorithm [`analytic_sigma`]
/// used before issue 16): `δ₀ = Φ(0) − e^ε Φ(−√(2ε))`; if `δ ≥ δ₀`,
/// `v* = sup{v ≥ 0 : B⁺(v) ≤ δ}` with `B⁺(v) = Φ(√(εv)) − e^ε Φ(−√(ε(v+2)))` and
/// `α = √(1 + v*/2) − √(v*/2)`; otherwise `u* = inf{u ≥ 0 : B⁻(u) ≤ δ}` with
/// `B⁻(u) = Φ(−√(εu)) − e^ε Φ(−√(ε(u+2)))` and `α = √(1 + u*/2) + √(u*/2)`; then
/// `σ = αΔ/√(2ε)`. `v*`/`u*` are found by doubling and Illinois regula falsi
/// (safeguarded by bisection) to the last bit, keeping the end that satisfies the
/// condition; σ is then stepped up by ulps until the profile itself passes.
fn sigma_by_search<K: Kernel>(epsilon: f64, delta: f64, ln_delta: f64, sensitivity: f64) -> f64 {
    let ln_delta0 = ln_b_minus::<K>(epsilon, 0.0);
    let alpha = if ln_delta >= ln_delta0 {
        let v = last_ok(|v| ln_b_plus::<K>(epsilon, v) - ln_delta);
        // √(1 + v/2) − √(v/2) without cancellation.
        1.0 / ((1.0 + 0.5 * v).sqrt() + (0.5 * v).sqrt())
    } else {
        let u = first_ok(|u| ln_b_minus::<K>(epsilon, u) - ln_delta);
        (1.0 + 0.5 * u).sqrt() + (0.5 * u).sqrt()
    };
    let mut sigma = alpha * sensitivity / (2.0 * epsilon).sqrt();
    // Certify against the profile itself: v*/u* already pass, but the final product
    // and the profile's own parametrisation (μ = Δ/σ) round differently; step σ up by
    // single ulps (one or two in practice) until `δ(ε; Δ/σ) ≤ δ`.
    let passes = |s: f64| profile_at_most::<K>(epsilon, sensitivity / s, delta, ln_delta);
    for _ in 0..64 {
        if !sigma.is_finite() || passes(sigma) {
            break;
        }
        sigma = f64::from_bits(sigma.to_bits() + 1);
    }
    sigma
}

/// Below this δ the comparison switches from [`gaussian_delta`] to [`ln_gaussian_delta`].
/// Above it the linear value is the sharper one (near ln δ ≈ −690 one ulp of the
/// logarithm is 1.1e-13 relative in δ, against ≈ 1e-16 for δ itself); below it δ nears
/// the subnormal range, where the linear value loses bits.
const LINEAR_DELTA_MIN: f64 = 1e-305;

/// `δ(ε; μ) ≤ δ`, tested on the profile itself when δ is far from underflow and on its
/// logarithm below.
fn profile_at_most<K: Kernel>(epsilon: f64, mu: f64, delta: f64, ln_delta: f64) -> bool {
    if delta >= LINEAR_DELTA_MIN {
        delta_with::<K>(epsilon, mu) <= delta
    } else {
        ln_delta_with::<K>(epsilon, mu) <= ln_delta
    }
}

/// [`ln_gaussian_delta`] on the kernel `K`.
fn ln_delta_with<K: Kernel>(epsilon: f64, mu: f64) -> f64 {
    if epsilon.is_nan() || mu.is_nan() {
        return f64::NAN;
    }
    if epsilon < 0.0 {
        return delta_with::<K>(epsilon, mu).ln();
    }
    let mu = mu.abs();
    if mu == 0.0 || epsilon == f64::INFINITY {
        return f64::NEG_INFINITY;
    }
    if mu == f64::INFINITY {
        return 0.0;
    }
    ln_hockey::<K>(epsilon / mu - 0.5 * mu, mu)
}

/// [`gaussian_delta`] on the kernel `K`.
fn delta_with<K: Kernel>(epsilon: f64, mu: f64) -> f64 {
    if epsilon.is_nan() || mu.is_nan() {
        return f64::NAN;
    }
    if epsilon < 0.0 {
        let e = epsilon.exp();
        return -epsilon.exp_m1() + e * delta_with::<K>(-epsilon, mu);
    }
    let mu = mu.abs();
    if mu == 0.0 || epsilon == f64::INFINITY {
        return 0.0;
    }
    if mu == f64::INFINITY {
        return 1.0;
    }
    hockey::<K>(epsilon / mu - 0.5 * mu, mu)
}

/// `ln δ(ε)` of `N(0, 1)` against `N(μ, 1)` (Balle & Wang 2018, Theorem 8;
/// docs/accountant.md §2.1; see [`gaussian_delta`]), computed in log space as
/// `−a²/2 + ln(½[erfcx(a/√2) − erfcx(b/√2)])`, so it stays finite far below the
/// underflow of `δ` itself (e.g. `ε = 2000`, `μ = 1` gives `ln δ ≈ −2.0e6`).
///
/// ```
/// use densities::gaussian::{gaussian_delta, ln_gaussian_delta};
/// assert!((ln_gaussian_delta(1.0, 1.0) - gaussian_delta(1.0, 1.0).ln()).abs() < 1e-14);
/// assert!(ln_gaussian_delta(2000.0, 1.0).is_finite());
/// ```
pub fn ln_gaussian_delta(epsilon: f64, mu: f64) -> f64 {
    ln_delta_with::<Taylor>(epsilon, mu)
}

/// Privacy profile of the Gaussian mechanism (Balle & Wang 2018, Theorem 8 / Lemma 6;
/// docs/maths.md §0 and §1.2): the hockey-stick divergence between `N(0, 1)` and `N(μ, 1)`
/// (i.e. `N(0, σ²)` with shift Δ, `μ = Δ/σ`),
///
/// `δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)`.
///
/// Evaluated as `½ e^{−a²/2}[erfcx(a/√2) − erfcx(b/√2)]`, `a = ε/μ − μ/2`, `b = a + μ`
/// (module documentation), so it keeps relative accuracy when δ is tiny; it is 0 only
/// when δ underflows. For `ε < 0` it uses `δ(ε) = 1 − e^ε + e^ε δ(−ε)` (the pair is
/// symmetric). `μ` is used as `|μ|`; `μ = 0` gives `max(0, 1 − e^ε)`.
///
/// ```
/// use densities::gaussian::gaussian_delta;
/// // ε = 0: total variation 2Φ(μ/2) − 1.
/// let tv = 2.0 * densities::normal::cdf(0.5) - 1.0;
/// assert!((gaussian_delta(0.0, 1.0) / tv - 1.0).abs() < 1e-14);
/// ```
pub fn gaussian_delta(epsilon: f64, mu: f64) -> f64 {
    delta_with::<Taylor>(epsilon, mu)
}

/// Inverse of the Gaussian privacy profile (docs/maths.md §1.2): the least `ε ≥ 0` with
/// `gaussian_delta(ε, μ) ≤ δ` (0 if `δ(0) = 2Φ(μ/2) − 1 ≤ δ` already).
///
/// Newton's method on `√(−2 ln δ(ε))` (nearly linear in ε; `gaussian/newton.rs`), then
/// single-ulp steps to the smallest ε near the root that satisfies the bound, tested on
/// [`gaussian_delta`] itself for δ ≥ 1e-305 and on [`ln_gaussian_delta`] below (so δ
/// far below 1e-300 is fine). Should the iteration fail to settle, the doubling and
/// bisection search of [`reference::gaussian_epsilon_search`] is used instead. `μ` is
/// used as `|μ|`; `δ ≥ 1` or `μ = 0` give 0, `δ ≤ 0` or `μ = ∞` give `+∞`.
///
/// ```
/// use densities::gaussian::{gaussian_delta, gaussian_epsilon};
/// let eps = gaussian_epsilon(1e-6, 0.5);
/// assert!(gaussian_delta(eps, 0.5) <= 1e-6);
/// assert!(gaussian_delta(eps * (1.0 - 1e-12), 0.5) > 1e-6);
/// ```
pub fn gaussian_epsilon(delta: f64, mu: f64) -> f64 {
    epsilon_with(delta, mu, true)
}

/// [`gaussian_epsilon`] by Newton's method (`newton = true`) or by the search alone.
fn epsilon_with(delta: f64, mu: f64, newton: bool) -> f64 {
    if delta.is_nan() || mu.is_nan() {
        return f64::NAN;
    }
    let mu = mu.abs();
    if delta >= 1.0 || mu == 0.0 {
        return 0.0;
    }
    if delta <= 0.0 || mu == f64::INFINITY {
        return f64::INFINITY;
    }
    let ln_delta = delta.ln();
    if profile_at_most::<Taylor>(0.0, mu, delta, ln_delta) {
        return 0.0;
    }
    if newton {
        if let Some(e) = newton::epsilon(delta, ln_delta, mu) {
            return e;
        }
    }
    epsilon_by_search::<Taylor>(delta, ln_delta, mu)
}

/// The least ε with `δ(ε; μ) ≤ δ` by doubling and Illinois/bisection to the last bit
/// (the algorithm [`gaussian_epsilon`] used before issue 16), for `μ` finite and
/// positive and `δ ∈ (0, 1)` not met at ε = 0.
fn epsilon_by_search<K: Kernel>(delta: f64, ln_delta: f64, mu: f64) -> f64 {
    // The sign follows the certified comparison; the size (for the secant steps) is
    // the gap in log space.
    let g = |e: f64| {
        let gap = ln_delta_with::<K>(e, mu) - ln_delta;
        if profile_at_most::<K>(e, mu, delta, ln_delta) {
            gap.min(0.0)
        } else {
            gap.max(f64::MIN_POSITIVE)
        }
    };
    first_ok(g)
}

/// The algorithms and the special-function kernel as they were before issue 16, kept
/// so that tests can compare the fast versions with them (tests/gaussian_fast.rs).
/// Not part of the supported interface.
#[doc(hidden)]
pub mod reference {
    use super::{
        check_sigma_args, epsilon_by_search, epsilon_with, profile_at_most, sigma_by_search,
        ContinuedFraction, DensityError, Taylor,
    };

    /// [`super::gaussian_delta`] on the original kernel ([`crate::normal::erfcx`] and
    /// 16-point Gauss–Legendre quadrature of `−erfcx′`).
    pub fn gaussian_delta(epsilon: f64, mu: f64) -> f64 {
        super::delta_with::<ContinuedFraction>(epsilon, mu)
    }

    /// [`super::ln_gaussian_delta`] on the original kernel.
    pub fn ln_gaussian_delta(epsilon: f64, mu: f64) -> f64 {
        super::ln_delta_with::<ContinuedFraction>(epsilon, mu)
    }

    /// The analytic σ exactly as before issue 16: Algorithm 1's root search on the
    /// original kernel, certified on the original kernel's profile.
    pub fn analytic_sigma(epsilon: f64, delta: f64, sensitivity: f64) -> Result<f64, DensityError> {
        check_sigma_args(epsilon, delta, sensitivity)?;
        Ok(sigma_by_search::<ContinuedFraction>(
            epsilon,
            delta,
            delta.ln(),
            sensitivity,
        ))
    }

    /// Algorithm 1's root search on the public (fast) profile: the fallback of
    /// [`super::analytic_sigma`].
    pub fn analytic_sigma_search(
        epsilon: f64,
        delta: f64,
        sensitivity: f64,
    ) -> Result<f64, DensityError> {
        check_sigma_args(epsilon, delta, sensitivity)?;
        Ok(sigma_by_search::<Taylor>(
            epsilon,
            delta,
            delta.ln(),
            sensitivity,
        ))
    }

    /// The inverse in ε exactly as before issue 16 (search on the original kernel).
    /// `δ ∈ (0, 1)`, `μ ∈ (0, ∞)`.
    pub fn gaussian_epsilon(delta: f64, mu: f64) -> f64 {
        let mu = mu.abs();
        let ln_delta = delta.ln();
        if profile_at_most::<ContinuedFraction>(0.0, mu, delta, ln_delta) {
            return 0.0;
        }
        epsilon_by_search::<ContinuedFraction>(delta, ln_delta, mu)
    }

    /// The search of [`gaussian_epsilon`] on the public (fast) profile: the fallback of
    /// [`super::gaussian_epsilon`].
    pub fn gaussian_epsilon_search(delta: f64, mu: f64) -> f64 {
        epsilon_with(delta, mu, false)
    }
}
