//! Trade-off functions (docs/maths.md §0, §1.1–§1.3, §2; Dong, Roth & Su 2019; Dong, Su &
//! Zhang 2021) against independent computations: the general log-concave formula against
//! the Gaussian and Laplace closed forms, shape properties, fig10's claims, and the
//! convex-conjugate duality `δ(ε) = sup_α (1 − T(α) − e^ε α)` against the privacy
//! profiles computed elsewhere in the crate (gaussian_delta, laplace_delta, and the
//! truncated Laplacian's Theorem 1, itself checked by quadrature).

use densities::gaussian::{analytic_sigma, gaussian_delta};
use densities::laplace::{laplace_delta, Laplace};
use densities::normal::Normal;
use densities::tradeoff::{
    alpha_grid, f_eps_delta, gaussian_tradeoff, laplace_tradeoff, shift_tradeoff, EpsDelta, Gdp,
    LaplaceShift, Shifted, SymmetricLogConcave, TradeOff,
};
use densities::traits::ContinuousCdf;
use densities::truncated_laplace::TruncatedLaplace;

/// A dense grid on [0, 1] plus log-spaced points near 0 and near 1.
fn test_alphas() -> Vec<f64> {
    let mut a = alpha_grid(2001).unwrap();
    for k in 1..=300 {
        let t = 10f64.powf(-(k as f64));
        a.push(t);
        if k <= 15 {
            a.push(1.0 - t);
        }
    }
    a
}

#[test]
fn general_formula_reproduces_gaussian_closed_form() {
    for &sigma in &[0.3, 1.0, 2.5, 10.0] {
        for &shift in &[0.0, 0.1, 1.0, 3.0, 8.0] {
            let n = Normal::new(0.0, sigma).unwrap();
            let mu = shift / sigma;
            for &a in &test_alphas() {
                let t = shift_tradeoff(&n, shift, a).unwrap();
                let g = gaussian_tradeoff(mu, a).unwrap();
                assert!(
                    (t - g).abs() <= 1e-12 * g.max(1e-300) || (t - g).abs() < 1e-15,
                    "σ={sigma} Δ={shift} α={a}: {t} vs {g}"
                );
            }
        }
    }
    // A non-zero mean does not change the trade-off against a shift.
    let n = Normal::new(3.0, 2.0).unwrap();
    for &a in &alpha_grid(101).unwrap() {
        let t = shift_tradeoff(&n, 1.0, a).unwrap();
        assert!((t - gaussian_tradeoff(0.5, a).unwrap()).abs() < 1e-12);
    }
}

#[test]
fn general_formula_reproduces_laplace_closed_form() {
    for &b in &[0.2, 1.0, 3.0] {
        for &shift in &[0.0, 0.05, 1.0, 2.0, 10.0] {
            let l = Laplace::new(b).unwrap();
            for &a in &test_alphas() {
                let t = shift_tradeoff(&l, shift, a).unwrap();
                let c = laplace_tradeoff(shift, b, a).unwrap();
                assert!((t - c).abs() < 1e-12, "b={b} Δ={shift} α={a}: {t} vs {c}");
            }
        }
    }
}

fn assert_tradeoff_shape(t: &dyn TradeOff, label: &str) {
    let grid = alpha_grid(4001).unwrap();
    let c = t.curve(&grid).unwrap();
    for (i, &(a, b)) in c.iter().enumerate() {
        assert!((0.0..=1.0).contains(&b), "{label}: T({a}) = {b}");
        assert!(b <= 1.0 - a + 1e-15, "{label}: T({a}) = {b} > 1 − α");
        if i > 0 {
            assert!(b <= c[i - 1].1 + 1e-15, "{label}: not decreasing at {a}");
        }
        if i > 0 && i + 1 < c.len() {
            let second = c[i + 1].1 - 2.0 * b + c[i - 1].1;
            assert!(second >= -1e-12, "{label}: not convex at {a}: {second}");
        }
    }
}

#[test]
fn tradeoffs_are_convex_decreasing_and_below_identity() {
    assert_tradeoff_shape(&Gdp::new(1.0).unwrap(), "G_1");
    assert_tradeoff_shape(&Gdp::new(0.05).unwrap(), "G_0.05");
    assert_tradeoff_shape(&LaplaceShift::new(1.0, 1.0).unwrap(), "Laplace");
    assert_tradeoff_shape(&EpsDelta::new(1.0, 0.01).unwrap(), "f_1,0.01");
    for &(eps, delta) in &[(1.0, 0.01), (0.1, 1e-5), (3.0, 0.2)] {
        let tl = TruncatedLaplace::new(eps, delta, 1.0).unwrap();
        assert_tradeoff_shape(&Shifted::new(tl, 1.0).unwrap(), "truncated Laplace");
        assert_tradeoff_shape(&Shifted::new(tl, 0.3).unwrap(), "truncated Laplace Δ=0.3");
    }
    assert_tradeoff_shape(
        &Shifted::new(Normal::new(0.0, 0.5).unwrap(), 1.0).unwrap(),
        "Normal σ=0.5",
    );
}

/// `sup_α (1 − T(α) − e^ε α)` by golden-section search (the objective is concave since T
/// is convex), which is the hockey-stick divergence δ(ε) (docs/maths.md §0; convex duality
/// of Dong, Roth & Su 2019).
fn delta_from_tradeoff(t: &dyn Fn(f64) -> f64, eps: f64) -> f64 {
    let obj = |a: f64| 1.0 - t(a) - eps.exp() * a;
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let r = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..200 {
        let m1 = hi - r * (hi - lo);
        let m2 = lo + r * (hi - lo);
        if obj(m1) < obj(m2) {
            lo = m1;
        } else {
            hi = m2;
        }
    }
    obj(0.5 * (lo + hi)).max(obj(0.0)).max(obj(1.0))
}

#[test]
fn duality_recovers_privacy_profiles() {
    for &mu in &[0.3, 1.0, 2.0] {
        for &eps in &[0.0, 0.2, 1.0, 2.5] {
            let g = |a: f64| gaussian_tradeoff(mu, a).unwrap();
            let d = delta_from_tradeoff(&g, eps);
            let want = gaussian_delta(eps, mu);
            assert!(
                (d - want).abs() < 1e-10,
                "Gaussian μ={mu} ε={eps}: {d} vs {want}"
            );
            let l = |a: f64| laplace_tradeoff(mu, 1.0, a).unwrap();
            let d = delta_from_tradeoff(&l, eps);
            let want = laplace_delta(eps, mu);
            assert!(
                (d - want).abs() < 1e-10,
                "Laplace μ={mu} ε={eps}: {d} vs {want}"
            );
        }
    }
    // Truncated Laplacian: the hockey-stick divergence at its own ε is exactly δ (GDGK
    // Theorem 1, quadrature-checked in its module).
    for &(eps, delta) in &[(1.0, 0.01), (0.1, 1e-5), (0.5, 1e-3)] {
        let tl = TruncatedLaplace::new(eps, delta, 1.0).unwrap();
        let t = |a: f64| shift_tradeoff(&tl, 1.0, a).unwrap();
        let d = delta_from_tradeoff(&t, eps);
        assert!((d / delta - 1.0).abs() < 1e-9, "TL ε={eps} δ={delta}: {d}");
    }
}

/// fig10: truncated Laplace spends the (ε, δ) budget exactly (touches f_{ε,δ}), the
/// analytic Gaussian stays above it, and Laplace(Δ/ε) satisfies f_{ε,0}.
#[test]
fn fig10_mechanisms_respect_and_touch_the_budget() {
    let alphas = test_alphas();
    for &(eps, delta) in &[(1.0, 0.01), (0.5, 1e-3), (0.1, 1e-5), (2.0, 0.1)] {
        let tl = TruncatedLaplace::new(eps, delta, 1.0).unwrap();
        let sigma = analytic_sigma(eps, delta, 1.0).unwrap();
        let mut min_tl = f64::INFINITY;
        let mut min_g = f64::INFINITY;
        for &a in &alphas {
            let f = f_eps_delta(eps, delta, a).unwrap();
            let t = shift_tradeoff(&tl, 1.0, a).unwrap();
            let g = gaussian_tradeoff(1.0 / sigma, a).unwrap();
            assert!(t >= f - 1e-14, "TL below budget at α={a}: {t} < {f}");
            assert!(g >= f - 1e-14, "Gaussian below budget at α={a}: {g} < {f}");
            min_tl = min_tl.min(t - f);
            min_g = min_g.min(g - f);
            let lap = laplace_tradeoff(1.0, 1.0 / eps, a).unwrap();
            assert!(lap >= f_eps_delta(eps, 0.0, a).unwrap() - 1e-15);
        }
        assert!(min_tl.abs() < 1e-9, "TL does not touch: {min_tl}");
        // The touching region is a whole segment: T(α) = 1 − δ − e^ε α while the
        // threshold F⁻¹(α) + Δ stays ≤ 0, i.e. for α ≤ F(−Δ).
        let a = 0.5 * tl.cdf(-1.0);
        let t = shift_tradeoff(&tl, 1.0, a).unwrap();
        assert!((t - f_eps_delta(eps, delta, a).unwrap()).abs() < 1e-12);
        assert!(min_g >= -1e-14, "Gaussian min gap {min_g}");
    }
}

#[test]
fn generic_trait_objects_and_errors() {
    fn at<D: SymmetricLogConcave>(d: &D, a: f64) -> f64 {
        shift_tradeoff(d, 0.0, a).unwrap()
    }
    // Zero shift: T(α) = 1 − α.
    let l = Laplace::new(1.0).unwrap();
    assert!((at(&l, 0.3) - 0.7).abs() < 1e-15);
    assert!(Gdp::new(-0.1).is_err());
    assert!(LaplaceShift::new(1.0, -1.0).is_err());
    assert!(Shifted::new(l, f64::NAN).is_err());
    assert!(EpsDelta::new(1.0, 0.01).unwrap().beta(-0.1).is_err());
    assert!(alpha_grid(0).is_err());
}
