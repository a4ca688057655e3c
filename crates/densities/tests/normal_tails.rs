//! Standard-normal numerics (docs/maths.md §0) against independent computations:
//! Gauss–Legendre quadrature of the density (with the tail written as
//! `φ(x)·∫₀^∞ e^{xs − s²/2} ds`), the asymptotic series of `erfcx` and `ln Φ`, the
//! integral representation of `erfcx`, and bisection.

mod common;
use common::integrate;
use densities::normal::{
    cdf, erfcx, ln_cdf, max_abs_quantile, quantile, sf, upper_quantile, Normal,
};
use densities::traits::{Continuous, ContinuousCdf, NoiseMoments};
use std::f64::consts::PI;

/// The density, written out here (not taken from the crate).
fn phi(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * PI).sqrt()
}

/// `Φ(x)` for `x ≤ 0` by quadrature: `φ(x) ∫₀^S e^{xs − s²/2} ds` (φ(x − s) = φ(x) e^{xs − s²/2}),
/// S where the integrand is below e^{−60}. Use x with x² exact so φ(x) is correctly rounded.
fn lower_tail_quad(x: f64) -> f64 {
    assert!(x <= 0.0);
    let ax = -x;
    let s_max = -ax + (ax * ax + 120.0).sqrt();
    phi(x) * integrate(|s| (x * s - 0.5 * s * s).exp(), 0.0, s_max, 200)
}

fn rel(a: f64, b: f64) -> f64 {
    (a / b - 1.0).abs()
}

#[test]
fn cdf_and_sf_match_quadrature_of_the_density() {
    // Points with exactly representable squares.
    for &x in &[
        -37.0, -30.0, -20.0, -10.5, -5.0, -2.5, -1.5, -1.0, -0.5, -0.25, 0.0,
    ] {
        let q = lower_tail_quad(x);
        assert!(
            rel(cdf(x), q) < 1e-13,
            "Φ({x}) = {} vs quadrature {q}",
            cdf(x)
        );
        assert!(
            rel(sf(-x), q) < 1e-13,
            "sf({}) = {} vs quadrature {q}",
            -x,
            sf(-x)
        );
        // Upper half: Φ(−x) = 1 − tail.
        assert!((cdf(-x) - (1.0 - q)).abs() < 1e-15, "Φ({})", -x);
    }
    // Centre: Φ(x) = ½ + ∫₀ˣ φ.
    for &x in &[-0.75, -0.1, 0.3, 0.9, 1.0] {
        let q = 0.5 + integrate(phi, 0.0, x, 20);
        assert!(rel(cdf(x), q) < 1e-15, "Φ({x})");
    }
    // Deep tail: Φ(−37) ≈ 5.7e-300, Φ(−38) subnormal but not 0, Φ(−39) underflows.
    assert!((cdf(-37.0) - 5.72557122252458e-300).abs() < 1e-12 * 5.7e-300);
    let c38 = cdf(-38.0);
    assert!(c38 > 2.8e-316 && c38 < 2.95e-316, "Φ(−38) = {c38:e}");
    assert_eq!(cdf(-40.0), 0.0);
    assert_eq!(cdf(f64::NEG_INFINITY), 0.0);
    assert_eq!(cdf(f64::INFINITY), 1.0);
    assert!(cdf(f64::NAN).is_nan());
}

/// `ln Φ(x) = −x²/2 − ln(|x|√(2π)) + ln(1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸ − 945/x¹⁰)`.
fn ln_cdf_asymptotic(x: f64) -> f64 {
    let z = 1.0 / (x * x);
    let series = 1.0 - z * (1.0 - z * (3.0 - z * (15.0 - z * (105.0 - 945.0 * z))));
    -0.5 * x * x - (-x * (2.0 * PI).sqrt()).ln() + series.ln()
}

#[test]
fn ln_cdf_matches_quadrature_and_asymptotics() {
    for &x in &[-37.0, -30.0, -12.5, -3.0, -1.5, -0.5, 0.0] {
        let q = lower_tail_quad(x).ln();
        assert!(
            (ln_cdf(x) - q).abs() < 1e-14 * q.abs().max(1.0),
            "ln Φ({x})"
        );
    }
    // Upper side, ln Φ(x) = ln(1 − tail) ≈ −tail.
    for &x in &[2.0, 5.0, 10.0, 20.0] {
        let t = lower_tail_quad(-x);
        let exact = (-t).ln_1p();
        assert!(
            rel(ln_cdf(x), exact) < 1e-13,
            "ln Φ({x}) = {} vs {exact}",
            ln_cdf(x)
        );
    }
    // Far out, where the asymptotic series is exact to double precision.
    for &x in &[-60.0, -100.0, -1e3, -1e5, -1e10, -1e50, -1e100, -1e150] {
        let a = ln_cdf_asymptotic(x);
        assert!(
            rel(ln_cdf(x), a) < 1e-15,
            "ln Φ({x}) = {} vs {a}",
            ln_cdf(x)
        );
    }
    // Where Φ is representable and not close to 1, ln Φ and ln(Φ) agree.
    for i in 0..=74 {
        let x = -37.0 + 0.5 * i as f64;
        let (l, c) = (ln_cdf(x), cdf(x).ln());
        assert!(
            (l - c).abs() <= 1e-14 * c.abs().max(1e-300),
            "x = {x}: {l} vs {c}"
        );
    }
}

/// `erfcx(x) = (2/√π) ∫₀^∞ e^{−t² − 2xt} dt`, valid for every real x.
fn erfcx_quad(x: f64) -> f64 {
    let t0 = (-x).max(0.0); // the integrand's peak
    let t_max = t0 + 10.0;
    2.0 / PI.sqrt() * integrate(|t| (-t * t - 2.0 * x * t).exp(), 0.0, t_max, 400)
}

/// Asymptotic series `erfcx(x) ~ 1/(x√π) Σ (−1)ⁿ (2n−1)!!/(2x²)ⁿ`, summed to its
/// smallest term (error below e^{−x²}, i.e. exact in double precision for x ≥ 8).
fn erfcx_asymptotic(x: f64) -> f64 {
    let z = 1.0 / (2.0 * x * x);
    let (mut term, mut sum) = (1.0f64, 1.0f64);
    for n in 1..200 {
        let next = -term * (2 * n - 1) as f64 * z;
        if next.abs() >= term.abs() {
            break;
        }
        term = next;
        sum += term;
    }
    sum / (x * PI.sqrt())
}

#[test]
fn erfcx_matches_integral_product_and_asymptotics() {
    use special::Error;
    // Integral representation, including negative arguments.
    for &x in &[
        -5.0, -2.0, -0.5, 0.0, 0.25, 1.0, 1.9, 2.0, 2.1, 3.0, 5.5, 8.0,
    ] {
        let q = erfcx_quad(x);
        assert!(
            rel(erfcx(x), q) < 1e-13,
            "erfcx({x}) = {} vs quadrature {q}",
            erfcx(x)
        );
    }
    // erfc·exp where both are representable and x² is exact (so exp(x²) is correctly rounded).
    for &x in &[
        0.5f64, 1.5, 2.25, 3.0, 4.5, 7.0, 10.0, 16.0, 20.5, 25.0, 26.0,
    ] {
        let prod = (x * x).exp() * x.compl_error();
        assert!(
            rel(erfcx(x), prod) < 1e-13,
            "erfcx({x}) = {} vs {prod}",
            erfcx(x)
        );
    }
    // Large arguments: asymptotic series.
    for &x in &[8.0, 10.0, 15.0, 26.5, 30.0, 100.0, 1e4, 1e10, 1e100, 1e300] {
        let a = erfcx_asymptotic(x);
        assert!(rel(erfcx(x), a) < 1e-14, "erfcx({x}) = {} vs {a}", erfcx(x));
    }
    assert_eq!(erfcx(f64::INFINITY), 0.0);
}

#[test]
fn quantile_round_trips_and_matches_bisection() {
    // Lower half and the lower tail: quantile(Φ(x)) = x, relative 1e-13.
    for i in 0..=370 {
        let x = -37.0 + 0.1 * i as f64;
        if x.abs() < 1e-9 {
            continue;
        }
        let r = quantile(cdf(x));
        assert!(rel(r, x) < 1e-13, "x = {x}: {r}");
    }
    // Upper half: Φ(x) carries only absolute precision 1.1e-16 near 1, so the round trip
    // is bounded by the conditioning ulp(Φ)/φ; the upper tail round trip is exact.
    for i in 1..=80 {
        let x = 0.1 * i as f64;
        let r = quantile(cdf(x));
        let bound = 2.0 * f64::EPSILON / phi(x) + 1e-13 * x;
        assert!((r - x).abs() <= bound, "x = {x}: {r}");
    }
    for i in 1..=370 {
        let x = 0.1 * i as f64;
        let r = upper_quantile(sf(x));
        assert!(rel(r, x) < 1e-13, "upper x = {x}: {r}");
    }
    // Against bisection on Φ (to the last bit) at assorted p, including p ≥ 1 − 1e-16.
    let ps = [
        1e-300, 1e-200, 1e-100, 1e-50, 1e-20, 1e-8, 1e-3, 0.02, 0.1, 0.3, 0.4999, 0.5001, 0.7, 0.9,
        0.99,
    ];
    for &p in &ps {
        let (mut lo, mut hi) = (-40.0f64, 40.0f64);
        loop {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if cdf(mid) < p {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        // The bisection itself is only as sharp as Φ's absolute resolution, ulp(p)/φ(x).
        let tol = 1e-13 * hi.abs() + 2.0 * p * f64::EPSILON / phi(hi);
        assert!(
            (quantile(p) - hi).abs() <= tol,
            "p = {p}: {} vs bisection {hi}",
            quantile(p)
        );
    }
    for &q in &[1e-16, 1e-12, 1e-6, 1e-3] {
        // p = 1 − q, via sf (1 − p is exact for these p).
        let p = 1.0 - q;
        let qq = 1.0 - p;
        let (mut lo, mut hi) = (0.0f64, 40.0f64);
        loop {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if sf(mid) > qq {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        assert!(
            rel(quantile(p), hi) < 1e-13,
            "p = 1 − {q}: {} vs {hi}",
            quantile(p)
        );
    }
    assert_eq!(quantile(0.5), 0.0);
    assert_eq!(quantile(0.0), f64::NEG_INFINITY);
    assert_eq!(quantile(1.0), f64::INFINITY);
    assert!(quantile(1.5).is_nan() && quantile(-0.1).is_nan() && quantile(f64::NAN).is_nan());
    // Subnormal p still inverts.
    let x = quantile(1e-320);
    assert!(x < -38.0 && x > -38.5, "{x}");
}

#[test]
fn max_abs_quantile_matches_naive_and_bisection() {
    // Small k: the naive u = 1 − (1 − β)^{1/k} is accurate.
    for &k in &[1.0, 2.0, 7.5, 100.0] {
        for &beta in &[0.01f64, 0.05, 0.3] {
            let u: f64 = 1.0 - (1.0 - beta).powf(1.0 / k);
            let naive = -quantile(0.5 * u);
            assert!(
                rel(max_abs_quantile(k, beta), naive) < 1e-12,
                "k = {k}, β = {beta}"
            );
        }
    }
    // Bisection on k·ln(1 − 2Φ(−t)) = ln(1 − β) with ln_1p on both sides.
    for &(k, beta) in &[
        (1.0, 0.1f64),
        (1e3, 1e-3),
        (1e6, 0.05),
        (1e10, 1e-6),
        (1e15, 1e-9),
    ] {
        let target = (-beta).ln_1p();
        let g = |t: f64| k * (-2.0 * sf(t)).ln_1p() - target; // increasing in t
        let (mut lo, mut hi) = (0.0f64, 40.0f64);
        loop {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if g(mid) < 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let t = max_abs_quantile(k, beta);
        assert!(rel(t, hi) < 1e-12, "k = {k}, β = {beta}: {t} vs {hi}");
    }
    // docs/maths.md §0: the naive u = 1 − (1 − β)^{1/k} is lost to rounding here (it comes
    // out as 0 or one ulp of 1, 1.1e-16, instead of 1.0000005e-16).
    let naive_u = 1.0 - (1.0 - 1e-6f64).powf(1e-10);
    assert!((naive_u / 1.0000005000003333e-16 - 1.0).abs() > 0.05);
    let t = max_abs_quantile(1e10, 1e-6);
    assert!(t.is_finite() && t > 6.0, "{t}");
    // 40-digit value of Φ⁻¹(1 − u/2) (mpmath).
    assert!(rel(t, 8.304785365825312) < 1e-13, "{t}");
    assert!(max_abs_quantile(0.5, 0.1).is_nan() && max_abs_quantile(2.0, 1.0).is_nan());
}

#[test]
fn normal_distribution_moments_and_cdf() {
    for &(m, s) in &[(0.0, 1.0), (0.0, 2.5), (1.5, 0.7), (-3.0, 2.0)] {
        let n = Normal::new(m, s).unwrap();
        let (a, b) = (m - 40.0 * s, m + 40.0 * s);
        let mass = integrate(|x| n.pdf(x), a, b, 400);
        let q1 = integrate(|x| x.abs() * n.pdf(x), a, m, 200)
            + integrate(|x| x.abs() * n.pdf(x), m, b, 200);
        let q1 = if m != 0.0 {
            // |x| has a kink at 0: split there too.
            integrate(|x| x.abs() * n.pdf(x), a, 0.0, 400)
                + integrate(|x| x.abs() * n.pdf(x), 0.0, b, 400)
        } else {
            q1
        };
        let q2 = integrate(|x| x * x * n.pdf(x), a, b, 400);
        assert!((mass - 1.0).abs() < 1e-13, "mass {mass}");
        assert!(
            rel(n.mean_abs(), q1) < 1e-12,
            "E|X| for N({m}, {s}²): {} vs {q1}",
            n.mean_abs()
        );
        assert!(rel(n.second_moment(), q2) < 1e-12, "E X² for N({m}, {s}²)");
        for &x in &[m - 3.0 * s, m - 0.5 * s, m + 2.0 * s] {
            let q = integrate(|t| n.pdf(t), a, x, 200);
            assert!(rel(n.cdf(x), q) < 1e-12, "cdf");
            assert!((n.sf(x) - (1.0 - q)).abs() < 1e-13, "sf");
            assert!(
                (n.quantile(n.cdf(x)) - x).abs() < 1e-12 * s.max(x.abs()),
                "quantile"
            );
            let lp = (n.pdf(x)).ln();
            assert!(
                (n.ln_pdf(x) - lp).abs() < 1e-14 * lp.abs().max(1.0),
                "ln_pdf"
            );
        }
    }
    assert!(Normal::new(0.0, 0.0).is_err());
    assert!(Normal::new(0.0, -1.0).is_err());
    assert!(Normal::new(f64::NAN, 1.0).is_err());
    assert!(Normal::new(0.0, f64::INFINITY).is_err());
}
