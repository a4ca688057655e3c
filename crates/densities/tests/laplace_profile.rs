//! Laplace mechanism (docs/maths.md §1.1) against quadrature: moments, CDF, and the
//! privacy profile as the hockey-stick divergence `∫ (p − e^ε q)_+`.

mod common;
use common::integrate;
use densities::laplace::{laplace_delta, laplace_scale, Laplace};
use densities::traits::{Continuous, ContinuousCdf, NoiseMoments};

/// Integral of a function that is smooth between the given sorted breakpoints.
fn piecewise(f: impl Fn(f64) -> f64, points: &[f64]) -> f64 {
    points
        .windows(2)
        .filter(|w| w[1] > w[0])
        .map(|w| integrate(&f, w[0], w[1], 400))
        .sum()
}

/// The density of Laplace(b) written out here.
fn lap(x: f64, b: f64) -> f64 {
    (-x.abs() / b).exp() / (2.0 * b)
}

#[test]
fn laplace_delta_matches_hockey_stick_quadrature() {
    for &mu in &[0.5, 1.0, 3.0] {
        for &eps in &[-5.0, -2.0, -0.5, 0.0, 0.3, 0.99, 1.0, 2.0, 4.0] {
            let f = |y: f64| (lap(y, 1.0) - f64::exp(eps) * lap(y - mu, 1.0)).max(0.0);
            // Kinks at 0, μ and where the (piecewise linear) privacy loss crosses ε.
            let mut pts = vec![-60.0, 0.0, mu, 60.0 + mu];
            let cross = 0.5 * (mu - eps);
            if cross > 0.0 && cross < mu {
                pts.push(cross);
            }
            pts.sort_by(f64::total_cmp);
            let q = piecewise(f, &pts);
            let d = laplace_delta(eps, mu);
            assert!(
                (d - q).abs() < 1e-11 * q.max(1e-3),
                "ε={eps} μ={mu}: {d} vs quadrature {q}"
            );
        }
    }
    // Calibration b = Δ/ε gives ε-DP (δ = 0 at the shift Δ), and less than ε gives δ > 0.
    let b = laplace_scale(0.5, 2.0).unwrap();
    assert_eq!(laplace_delta(0.5, 2.0 / b), 0.0);
    assert!(laplace_delta(0.4, 2.0 / b) > 0.0);
    // ε just below μ: expm1 keeps relative accuracy, 1 − e^{−h} ≈ h.
    let d = laplace_delta(1.0 - 2e-12, 1.0);
    assert!((d / 1e-12 - 1.0).abs() < 1e-4, "{d}");
}

#[test]
fn laplace_moments_cdf_and_quantile() {
    for &b in &[0.1, 1.0, 7.0] {
        let l = Laplace::new(b).unwrap();
        let pts = [-80.0 * b, 0.0, 80.0 * b];
        let mass = piecewise(|x| l.pdf(x), &pts);
        let m1 = piecewise(|x| x.abs() * l.pdf(x), &pts);
        let m2 = piecewise(|x| x * x * l.pdf(x), &pts);
        assert!((mass - 1.0).abs() < 1e-12);
        assert!((l.mean_abs() / m1 - 1.0).abs() < 1e-12, "E|X| b={b}");
        assert!((l.second_moment() / m2 - 1.0).abs() < 1e-12, "E X² b={b}");
        for &x in &[-3.0 * b, -0.2 * b, 0.5 * b, 4.0 * b] {
            let brk: Vec<f64> = if x > 0.0 {
                vec![-80.0 * b, 0.0, x]
            } else {
                vec![-80.0 * b, x]
            };
            let c = piecewise(|t| l.pdf(t), &brk);
            assert!((l.cdf(x) - c).abs() < 1e-12, "cdf({x})");
            assert!((l.sf(x) - (1.0 - c)).abs() < 1e-12, "sf({x})");
            assert!(
                (l.quantile(l.cdf(x)) - x).abs() < 1e-12 * b.max(x.abs()),
                "quantile"
            );
            assert!((l.ln_pdf(x) - lap(x, b).ln()).abs() < 1e-14 * lap(x, b).ln().abs().max(1.0));
        }
        // Far upper tail keeps relative accuracy.
        assert!((l.sf(700.0 * b) / (0.5 * (-700.0f64).exp()) - 1.0).abs() < 1e-14);
    }
    assert!(Laplace::new(0.0).is_err() && Laplace::new(f64::NAN).is_err());
    assert!(laplace_scale(-1.0, 1.0).is_err() && laplace_scale(1.0, 0.0).is_err());
    assert!(Laplace::new(1.0).unwrap().quantile(1.5).is_nan());
}
