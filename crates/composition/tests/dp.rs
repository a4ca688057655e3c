//! Optimal DP composition (docs/maths.md §3.1) against independent references: brute-force
//! enumeration of composed randomized response, exact big-integer sums, and the defining
//! properties of the inverse.

mod common;
use common::{brute_hockey, exact_dp_delta, rel, TwoPoint};
use composition::{
    dp_delta, dp_delta_approx, dp_epsilon, dp_epsilon_approx, dp_expected_loss, dp_ln_delta,
    CompositionError,
};

#[test]
fn matches_brute_force_enumeration_of_randomized_response() {
    for k in [1u64, 2, 3, 5, 8, 12] {
        for eps in [0.05, 0.3, 1.0, 2.5] {
            let mechs = vec![TwoPoint::rr(eps); k as usize];
            let kinks: Vec<f64> = (0..=k).map(|i| (k as f64 - 2.0 * i as f64) * eps).collect();
            let mut grid: Vec<f64> = (0..40).map(|j| j as f64 * k as f64 * eps / 39.0).collect();
            grid.extend(kinks.iter().filter(|&&x| x >= 0.0));
            for eg in grid {
                let got = dp_delta(k, eps, eg).unwrap();
                let want = brute_hockey(&mechs, eg);
                assert!(
                    (got - want).abs() <= 1e-13 * want + 1e-15,
                    "k={k} eps={eps} eg={eg}: {got} vs {want}"
                );
            }
        }
    }
}

#[test]
fn k1_closed_forms() {
    // δ(ε_g) of one RR: (e^ε − e^{ε_g})/(1 + e^ε) for ε_g < ε.
    for eps in [0.01f64, 0.5, 3.0] {
        for f in [0.0, 0.2, 0.9] {
            let eg = f * eps;
            let want = eg.exp() * (eps - eg).exp_m1() / (1.0 + eps.exp());
            assert!(rel(dp_delta(1, eps, eg).unwrap(), want) < 1e-13);
        }
        assert_eq!(dp_delta(1, eps, eps).unwrap(), 0.0);
    }
}

/// Exact references with e^ε = 3/2 and e^ε = 2 (k up to 2000).
#[test]
fn matches_exact_rationals_moderate_k() {
    for &(a, b) in &[(3u64, 2u64), (2, 1), (101, 100)] {
        let eps = (a as f64 / b as f64).ln();
        for k in [1u64, 7, 50, 301, 2000] {
            if a == 101 && k > 301 {
                continue;
            }
            for frac in [0.0, 0.05, 0.2, 0.45, 0.8] {
                let j = (frac * k as f64) as u64;
                let want = exact_dp_delta(k, a, b, j);
                let got = dp_delta(k, eps, j as f64 * eps).unwrap();
                assert!(
                    rel(got, want) < 1e-11,
                    "a/b={a}/{b} k={k} j={j}: {got} vs {want} (rel {})",
                    rel(got, want)
                );
            }
        }
    }
}

/// k = 1e5 against exact big-integer arithmetic (e^ε = 2, e^{ε_g} = 2^j), forward and inverse.
#[test]
fn matches_exact_big_integers_at_k_1e5() {
    let k = 100_000u64;
    let eps = 2f64.ln();
    // Mean loss k·ε/3 (in units of ln 2: k/3), sd ≈ 2√(2k/9) ≈ 298 units.
    for j in [33_999u64, 34_700, 35_600] {
        let want = exact_dp_delta(k, 2, 1, j);
        assert!(want > 1e-14 && want < 1e-1, "j={j}: {want}");
        let eg = j as f64 * eps;
        let got = dp_delta(k, eps, eg).unwrap();
        eprintln!("k=1e5 j={j}: delta {want:e} rel err {:e}", rel(got, want));
        assert!(
            rel(got, want) < 1e-9,
            "j={j}: {got} vs {want} (rel {})",
            rel(got, want)
        );
        let e = dp_epsilon(k, eps, want).unwrap();
        eprintln!("  inverse rel err {:e}", rel(e, eg));
        assert!(rel(e, eg) < 1e-9, "inverse j={j}: {e} vs {eg}");
    }
}

/// k = 1e5 with small ε: exact sums with e^ε = 101/100 (≈ 0.00995) at a few budgets.
#[test]
fn matches_exact_big_integers_small_eps_k_1e4() {
    let (k, a, b) = (10_000u64, 101u64, 100u64);
    let eps = (a as f64 / b as f64).ln();
    // Mean loss ≈ kε·tanh(ε/2) ≈ 0.495 (in units of ε: ≈ 50), sd ≈ ε√k = 100 units.
    for j in [0u64, 100, 300, 500] {
        let want = exact_dp_delta(k, a, b, j);
        let got = dp_delta(k, eps, j as f64 * eps).unwrap();
        assert!(rel(got, want) < 1e-9, "j={j}: {got} vs {want}");
    }
}

#[test]
fn inverse_is_safe_tight_and_monotone() {
    for k in [1u64, 10, 100, 1000, 100_000] {
        for eps in [0.01, 0.1, 0.5, 1.0] {
            let mut prev = f64::INFINITY;
            for delta in [1e-12, 1e-9, 1e-6, 1e-3, 0.05] {
                let e = dp_epsilon(k, eps, delta).unwrap();
                assert!(e.is_finite() && e >= 0.0 && e <= k as f64 * eps);
                if e > 0.0 {
                    // Safe side: δ(ε_g) ≤ target; tight: a hair lower violates it.
                    assert!(
                        dp_delta(k, eps, e).unwrap() <= delta,
                        "k={k} eps={eps} d={delta}"
                    );
                    let below = e * (1.0 - 1e-12);
                    assert!(
                        dp_delta(k, eps, below).unwrap() > delta,
                        "k={k} eps={eps} d={delta}"
                    );
                } else {
                    assert!(dp_delta(k, eps, 0.0).unwrap() <= delta);
                }
                assert!(e <= prev);
                prev = e;
            }
        }
    }
}

#[test]
fn delta_above_delta_at_zero_gives_zero() {
    let d0 = dp_delta(10, 0.1, 0.0).unwrap();
    assert_eq!(dp_epsilon(10, 0.1, d0).unwrap(), 0.0);
    assert_eq!(dp_epsilon(10, 0.1, (d0 + 1.0) / 2.0).unwrap(), 0.0);
    assert!(dp_epsilon(10, 0.1, d0 * 0.999).unwrap() > 0.0);
}

#[test]
fn ln_delta_is_finite_far_below_underflow() {
    let l = dp_ln_delta(100_000, 1.0, 99_999.5).unwrap();
    assert!(l.is_finite() && l < -1e4);
    // Only the i = 0 term is active: ln(q^k (1 − e^{ε_g − kε})), q = 1/(1 + e^{−1}).
    let k = 100_000f64;
    let want = -k * (-1f64).exp().ln_1p() + (-(-0.5f64).exp_m1()).ln();
    assert!(rel(l, want) < 1e-13, "{l} vs {want}");
    assert_eq!(
        dp_ln_delta(100_000, 1.0, 100_000.0).unwrap(),
        f64::NEG_INFINITY
    );
}

/// Extreme k and ε: the inverse is safe and the least (a hair below it violates δ);
/// for ε ≥ 50 with few uses δ(ε_g) is one binomial tail term written out here
/// (`P(all k losses = +ε) = (e^ε/(1+e^ε))^k`, the only loss above kε − 2ε), and for huge k
/// with small ε the k-fold randomized response is near its central limit, the Gaussian
/// mechanism with μ = √k·ε (Dong, Su & Zhang 2021, Thm 5; docs/maths.md §3.1): ε within
/// 1 % of the Gaussian's.
#[test]
fn very_large_k_and_eps_are_safe_tight_and_near_their_limits() {
    for &(k, eps) in &[
        (1u64 << 40, 1e-6),
        (10_000_000, 0.01),
        (1000, 50.0),
        (3, 800.0),
    ] {
        let e = dp_epsilon(k, eps, 1e-6).unwrap();
        assert!(e.is_finite() && e > 0.0, "k={k} eps={eps}: {e}");
        let d = dp_delta(k, eps, e).unwrap();
        assert!(d <= 1e-6 && !d.is_nan(), "k={k} eps={eps}: {d}");
        let below = dp_delta(k, eps, e * (1.0 - 1e-9)).unwrap();
        assert!(
            below > 1e-6,
            "k={k} eps={eps}: {e} is not the least ({below})"
        );
        if k as f64 * eps * eps < 1e-2 || eps < 0.02 {
            let mu = (k as f64).sqrt() * eps;
            let g = densities::gaussian::gaussian_epsilon(1e-6, mu);
            assert!(rel(e, g) < 1e-2, "k={k} eps={eps}: {e} vs the CLT's {g}");
        }
    }
    // Few uses of a huge ε: between (k−2)ε and kε only the all-+ε outcome has a loss
    // above ε_g, so δ(ε_g) = q^k (1 − e^{ε_g − kε}), q = 1/(1 + e^{−ε}).
    for &(k, eps) in &[(3u64, 800.0f64), (2, 60.0)] {
        let eg = (k as f64 - 1.0) * eps;
        let q_k = -(k as f64) * (-eps).exp().ln_1p();
        let want = q_k.exp() * -(eg - k as f64 * eps).exp_m1();
        let got = dp_delta(k, eps, eg).unwrap();
        assert!(rel(got, want) < 1e-12, "k={k} eps={eps}: {got} vs {want}");
    }
}

#[test]
fn approx_dp_composition() {
    let (k, eps, d0) = (30u64, 0.2, 1e-4f64);
    for eg in [0.0, 0.5, 1.0, 2.0] {
        let pure = dp_delta(k, eps, eg).unwrap();
        let naive = 1.0 - (1.0 - d0).powi(k as i32) * (1.0 - pure);
        assert!(rel(dp_delta_approx(k, eps, d0, eg).unwrap(), naive) < 1e-12);
    }
    // δ₀ = 0 is pure DP.
    assert!(
        rel(
            dp_delta_approx(k, eps, 0.0, 1.0).unwrap(),
            dp_delta(k, eps, 1.0).unwrap()
        ) < 1e-15
    );
    // Inverse: safe side.
    let e = dp_epsilon_approx(k, eps, 1e-8, 1e-5).unwrap();
    assert!(dp_delta_approx(k, eps, 1e-8, e).unwrap() <= 1e-5);
    assert!(dp_delta_approx(k, eps, 1e-8, e * (1.0 - 1e-12)).unwrap() > 1e-5);
    // Tiny δ₀ at huge k: 1 − (1−δ₀)^k must not be lost (docs/maths.md §0).
    let d = dp_delta_approx(1_000_000, 0.001, 1e-15, 100.0).unwrap();
    assert!(rel(d, 1e-9) < 1e-6, "{d}");
    // Unreachable target.
    match dp_epsilon_approx(10, 0.1, 1e-3, 5e-3) {
        Err(CompositionError::Unreachable { floor, .. }) => {
            assert!(rel(floor, 1.0 - (1.0f64 - 1e-3).powi(10)) < 1e-12)
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
}

#[test]
fn expected_loss_of_randomized_response() {
    for eps in [1e-6f64, 0.01, 0.5, 2.0, 30.0] {
        let q = eps.exp() / (1.0 + eps.exp());
        let direct = q * eps - (1.0 - q) * eps;
        let got = dp_expected_loss(eps).unwrap();
        assert!(rel(got, direct) < 1e-9, "{eps}");
        assert!(rel(got, eps * (eps.exp() - 1.0) / (eps.exp() + 1.0)) < 1e-9);
    }
}

#[test]
fn invalid_inputs_are_typed_errors() {
    let oor = |r: Result<f64, CompositionError>, name: &str| match r {
        Err(CompositionError::OutOfRange { name: n, .. }) => assert_eq!(n, name),
        other => panic!("expected OutOfRange({name}), got {other:?}"),
    };
    oor(dp_delta(0, 0.1, 1.0), "k");
    oor(dp_delta(10, 0.0, 1.0), "epsilon");
    oor(dp_delta(10, -1.0, 1.0), "epsilon");
    oor(dp_delta(10, f64::NAN, 1.0), "epsilon");
    oor(dp_delta(10, f64::INFINITY, 1.0), "epsilon");
    oor(dp_delta(10, 0.1, -0.1), "epsilon_g");
    oor(dp_delta(10, 0.1, f64::NAN), "epsilon_g");
    oor(dp_epsilon(10, 0.1, 0.0), "delta");
    oor(dp_epsilon(10, 0.1, 1.0), "delta");
    oor(dp_epsilon(10, 0.1, f64::NAN), "delta");
    oor(dp_delta_approx(10, 0.1, 1.0, 1.0), "delta0");
    oor(dp_delta_approx(10, 0.1, -1e-3, 1.0), "delta0");
    oor(dp_epsilon_approx(0, 0.1, 0.0, 0.1), "k");
    oor(dp_expected_loss(0.0), "epsilon");
}

/// The per-release Gaussian composed as DP guarantees (`gaussian_via_dp_epsilon`, fig15
/// and fig16's `gaussian_analytic_composed`): its minimum over ε₀ against this test's own
/// dense scan of ln ε₀ over [−9, 3] (120,001 points) of the same valid bounds: never above
/// the scan's best (the optimiser found the minimum; measured 2e-8 to 8e-5 below it, and
/// a coarser library scan stopped in local minima up to 0.13 % above), never above basic
/// composition (whose ε₀ sits at the edge of the feasible range, where the minimum often
/// is and no scan resolves it), never below the exact
/// composition, the Gaussian with μ = √k·μ₀ (no bound on a composition of guarantees can
/// beat the composition itself).
#[test]
fn gaussian_via_dp_minimum_against_a_dense_scan() {
    use composition::dp::gaussian_via_dp_epsilon;
    use densities::gaussian::{gaussian_delta, gaussian_epsilon};
    for &(mu0, k, delta) in &[
        (0.1f64, 20u64, 1e-6f64),
        (0.1, 100, 1e-6),
        (0.5, 10, 1e-8),
        (0.02, 1000, 1e-5),
        (1.0, 3, 1e-3),
    ] {
        let got = gaussian_via_dp_epsilon(mu0, k, delta).unwrap();
        let n = 120_000;
        let mut best = f64::INFINITY;
        for j in 0..=n {
            let e0 = (-9.0 + 12.0 * j as f64 / n as f64).exp();
            let d0 = gaussian_delta(e0, mu0);
            if let Ok(e) = dp_epsilon_approx(k, e0, d0, delta) {
                best = best.min(e);
            }
        }
        let at = format!("mu0 {mu0} k {k} delta {delta}");
        assert!(best.is_finite(), "{at}: the scan found nothing");
        assert!(
            got <= best * (1.0 + 1e-9),
            "{at}: {got} above the scan's {best}"
        );
        assert!(
            got >= best * (1.0 - 1e-3),
            "{at}: {got} far below the scan's {best}"
        );
        let exact = gaussian_epsilon(delta, mu0 * (k as f64).sqrt());
        assert!(
            got >= exact,
            "{at}: {got} below the exact composition {exact}"
        );
        // Basic composition is one of the bounds minimised over: kε₀* with each release
        // (ε₀*, δ₀)-DP, (1 − δ₀)^k = 1 − δ; ε₀* by bisection of the Gaussian profile here.
        let d0 = -((-delta).ln_1p() / k as f64).exp_m1();
        let (mut lo, mut hi) = (0.0f64, 100.0f64);
        for _ in 0..200 {
            let m = 0.5 * (lo + hi);
            if gaussian_delta(m, mu0) > d0 {
                lo = m;
            } else {
                hi = m;
            }
        }
        let basic = k as f64 * hi;
        assert!(
            got <= basic * (1.0 + 1e-9),
            "{at}: {got} above basic composition {basic}"
        );
    }
    assert!(gaussian_via_dp_epsilon(5.0, 100_000, 1e-12).is_err());
}
