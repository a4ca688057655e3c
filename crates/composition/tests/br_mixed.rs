//! Bounded range (docs/maths.md §3.2) and mixed DP + BR composition (Cesar–Rogers Theorem 3,
//! docs/maths.md §3.3) against brute-force enumeration, exact rationals, closed forms,
//! numeric maximisation and dense scans over t.

mod common;
use common::{brute_hockey, rel, TwoPoint};
use composition::{
    br_delta, br_epsilon, br_expected_loss_argmax, br_expected_loss_max, dp_delta, mixed_delta,
    mixed_delta_at_t, mixed_epsilon, mixed_optimum, CompositionError, GeneralizedRr,
};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};

#[test]
fn br_k1_total_variation_is_tanh_eps_over_4() {
    for eps in [1e-4f64, 0.01, 0.3, 1.0, 4.0, 20.0] {
        let d = br_delta(1, eps, 0.0).unwrap();
        assert!(rel(d, (eps / 4.0).tanh()) < 1e-13, "eps={eps}: {d}");
    }
}

#[test]
fn generalized_rr_probabilities_from_the_definition() {
    for eps in [0.01f64, 1.0, 5.0] {
        for f in [0.0, 0.1, 0.5, 0.99, 1.0] {
            let t = f * eps;
            let g = GeneralizedRr::new(eps, t).unwrap();
            let p = (eps.exp() - t.exp()) / (eps.exp() - 1.0);
            assert!((g.p_plus() - p).abs() < 1e-12);
            assert!((g.p_plus() + g.p_minus() - 1.0).abs() < 1e-15);
            assert!((g.q_plus() + g.q_minus() - 1.0).abs() < 1e-14);
            // Losses are ln(P/Q) of each outcome.
            if f > 0.0 && f < 1.0 {
                assert!((g.loss_plus() - (g.p_plus() / g.q_plus()).ln()).abs() < 1e-12);
                assert!((g.loss_minus() - (g.p_minus() / g.q_minus()).ln()).abs() < 1e-12);
            }
            let e = g.p_plus() * g.loss_plus() + g.p_minus() * g.loss_minus();
            assert!((g.expected_loss() - e).abs() < 1e-14 * (1.0 + eps));
        }
    }
    assert!(GeneralizedRr::new(1.0, 1.5).is_err());
    assert!(GeneralizedRr::new(1.0, -0.1).is_err());
}

#[test]
fn br_expected_loss_closed_form_equals_numeric_maximisation() {
    for eps in [1e-3f64, 0.01, 0.049, 0.051, 0.2, 1.0, 3.0, 10.0] {
        // Dense scan plus golden-section refinement of t ↦ E[L] (concave in t).
        let el = |t: f64| GeneralizedRr::new(eps, t).unwrap().expected_loss();
        let (mut a, mut b) = (0.0, eps);
        let gr = (5f64.sqrt() - 1.0) / 2.0;
        for _ in 0..200 {
            let c = b - gr * (b - a);
            let d = a + gr * (b - a);
            if el(c) > el(d) {
                b = d;
            } else {
                a = c;
            }
        }
        let t_num = 0.5 * (a + b);
        let numeric = el(t_num);
        let closed = br_expected_loss_max(eps).unwrap();
        // The direct form loses digits for small ε; so does the numeric E[L]. Compare
        // with a tolerance that reflects the numeric side's absolute error.
        assert!(
            (closed - numeric).abs() < 1e-15 * eps.max(1.0) * 8.0,
            "eps={eps}: {closed} vs {numeric}"
        );
        assert!((br_expected_loss_argmax(eps).unwrap() - t_num).abs() < 1e-6 * eps.max(1.0));
        // ≈ ε²/8 for small ε, below the DP expected loss ≈ ε²/2.
        if eps < 0.05 {
            assert!(rel(closed, eps * eps / 8.0) < eps * eps / 10.0);
        }
        assert!(closed < eps * (eps / 2.0).tanh());
    }
    // Continuity across the series switch at ε = 0.05.
    let lo = br_expected_loss_max(0.05 * (1.0 - 1e-12)).unwrap();
    let hi = br_expected_loss_max(0.05).unwrap();
    assert!(rel(lo, hi) < 1e-11);
}

/// F_t (fixed t) against brute-force enumeration of all 2^(ℓ+m) output sequences.
#[test]
fn fixed_t_objective_matches_brute_force() {
    for &(l, m) in &[(0u64, 1u64), (0, 4), (2, 3), (5, 2), (3, 0), (6, 6)] {
        for eps in [0.1f64, 0.7, 2.0] {
            for f in [0.0, 0.13, 0.5, 0.87, 1.0] {
                let t = f * eps;
                let mut mechs = vec![TwoPoint::rr(eps); l as usize];
                mechs.extend(vec![TwoPoint::grr(eps, t); m as usize]);
                for j in 0..25 {
                    let eg = j as f64 * (l + m) as f64 * eps / 24.0;
                    let got = mixed_delta_at_t(l, m, eps, t, eg).unwrap();
                    let want = brute_hockey(&mechs, eg);
                    assert!(
                        (got - want).abs() <= 1e-12 * want + 1e-15,
                        "l={l} m={m} eps={eps} t={t} eg={eg}: {got} vs {want}"
                    );
                }
            }
        }
    }
}

/// F_t against exact rational arithmetic: e^ε = 2, e^t = 3/2 (so p_t = 1/2), e^{ε_g} ∈ {1, 3/2, 4}.
#[test]
fn fixed_t_objective_matches_exact_rationals() {
    let r = |n: i64, d: i64| BigRational::new(BigInt::from(n), BigInt::from(d));
    let pow = |x: &BigRational, e: i64| -> BigRational {
        let mut acc = BigRational::one();
        for _ in 0..e.abs() {
            acc *= x;
        }
        if e < 0 {
            acc.recip()
        } else {
            acc
        }
    };
    let binom = |n: u64, k: u64| -> BigRational {
        let mut c = BigInt::one();
        for i in 0..k {
            c = c * BigInt::from(n - i) / BigInt::from(i + 1);
        }
        BigRational::from_integer(c)
    };
    let (eps, t) = (2f64.ln(), 1.5f64.ln());
    for &(l, m) in &[(0u64, 20u64), (10, 10), (25, 5), (3, 40)] {
        for (egn, egd) in [(1i64, 1i64), (3, 2), (4, 1)] {
            let e_g = r(egn, egd);
            let q = r(2, 3); // e^ε/(1+e^ε)
            let half = r(1, 2);
            let mut total = BigRational::zero();
            for a in 0..=l {
                for i in 0..=m {
                    // e^L = 2^{l−2a} (3/2)^{m−i} (3/4)^i
                    let el = pow(&r(2, 1), l as i64 - 2 * a as i64)
                        * pow(&r(3, 2), (m - i) as i64)
                        * pow(&r(3, 4), i as i64);
                    let h = BigRational::one() - &e_g / &el;
                    if h > BigRational::zero() {
                        let w = binom(l, a)
                            * pow(&q, (l - a) as i64)
                            * pow(&(BigRational::one() - &q), a as i64)
                            * binom(m, i)
                            * pow(&half, m as i64);
                        total += w * h;
                    }
                }
            }
            let want = total.to_f64().unwrap();
            let eg = (egn as f64 / egd as f64).ln();
            let got = mixed_delta_at_t(l, m, eps, t, eg).unwrap();
            assert!(
                rel(got, want) < 1e-12,
                "l={l} m={m} e^eg={egn}/{egd}: {got} vs {want}"
            );
        }
    }
}

/// The maximum over t equals a dense scan of F_t (20001 points): never below the scan by more
/// than 1e-12 relative, never above it by more than the scan's resolution (the largest change
/// of F_t between neighbouring scan points).
#[test]
fn max_over_t_equals_dense_scan() {
    const N: usize = 20_000;
    for &(l, m) in &[
        (0u64, 1u64),
        (0, 2),
        (0, 7),
        (0, 40),
        (3, 4),
        (10, 10),
        (25, 75),
        (50, 50),
        (75, 25),
        (0, 100),
    ] {
        for eps in [0.1f64, 0.5, 1.0] {
            let k = (l + m) as f64;
            for frac in [0.0, 0.03, 0.1, 0.25, 0.5] {
                let eg = frac * k * eps;
                let opt = mixed_optimum(l, m, eps, eg).unwrap();
                let scan: Vec<f64> = (0..=N)
                    .map(|j| mixed_delta_at_t(l, m, eps, eps * j as f64 / N as f64, eg).unwrap())
                    .collect();
                let smax = scan.iter().copied().fold(0.0, f64::max);
                let step = scan
                    .windows(2)
                    .map(|w| (w[1] - w[0]).abs())
                    .fold(0.0, f64::max);
                assert!(
                    opt.delta >= smax * (1.0 - 1e-12),
                    "l={l} m={m} eps={eps} eg={eg}: {} < scan {smax}",
                    opt.delta
                );
                assert!(
                    opt.delta <= smax + step,
                    "l={l} m={m} eps={eps} eg={eg}: {} > scan {smax} + {step}",
                    opt.delta
                );
                // The reported t attains the reported δ.
                let at = mixed_delta_at_t(l, m, eps, opt.t, eg).unwrap();
                assert!(rel(at, opt.delta) < 1e-12 || (at == 0.0 && opt.delta == 0.0));
            }
        }
    }
}

#[test]
fn mixed_reduces_to_dp_and_br() {
    for eps in [0.05f64, 0.5, 1.0] {
        for k in [1u64, 2, 10, 100] {
            for frac in [0.0, 0.05, 0.2, 0.5] {
                let eg = frac * k as f64 * eps;
                let a = mixed_delta(k, 0, eps, eg).unwrap();
                let b = dp_delta(k, eps, eg).unwrap();
                assert!(
                    rel(a, b) < 1e-11 || (a - b).abs() < 1e-300,
                    "dp k={k} eps={eps} eg={eg}: {a} vs {b}"
                );
                // ℓ = 0 (all BR) is br_delta itself, which calls mixed_delta(0, k): it is
                // checked against brute force and DDR19 written out in br_independent.rs.
            }
        }
    }
}

#[test]
fn br_is_below_mixed_is_below_dp() {
    for eps in [0.01f64, 0.1, 1.0] {
        let k = 100u64;
        let mut prev = f64::INFINITY;
        for l in [100u64, 75, 50, 25, 0] {
            let e = mixed_epsilon(l, k - l, eps, 1e-6).unwrap();
            assert!(e <= prev * (1.0 + 1e-12), "eps={eps} l={l}");
            prev = e;
        }
    }
}

#[test]
fn inverses_are_safe_and_tight() {
    for &(l, m) in &[(0u64, 1u64), (0, 100), (50, 50), (1, 1), (90, 10)] {
        for eps in [0.01f64, 0.1, 1.0] {
            for delta in [1e-10, 1e-6, 1e-2] {
                let e = mixed_epsilon(l, m, eps, delta).unwrap();
                assert!(e.is_finite() && e >= 0.0);
                if e > 0.0 {
                    assert!(
                        mixed_delta(l, m, eps, e).unwrap() <= delta,
                        "l={l} m={m} eps={eps} d={delta}"
                    );
                    assert!(
                        mixed_delta(l, m, eps, e * (1.0 - 1e-10)).unwrap() > delta,
                        "l={l} m={m} eps={eps} d={delta}"
                    );
                }
            }
        }
    }
    let e = br_epsilon(100, 0.1, 1e-6).unwrap();
    assert!(br_delta(100, 0.1, e).unwrap() <= 1e-6);
}

#[test]
fn large_counts_and_extreme_eps_stay_finite() {
    for &(l, m, eps) in &[
        (0u64, 2000u64, 0.01f64),
        (5000, 50, 0.05),
        (3, 3, 40.0),
        (2, 2, 800.0),
        (1, 1, 1e-9),
    ] {
        let e = mixed_epsilon(l, m, eps, 1e-6).unwrap();
        assert!(e.is_finite() && e >= 0.0, "l={l} m={m} eps={eps}");
        let d = mixed_delta(l, m, eps, e).unwrap();
        assert!(!d.is_nan() && d <= 1e-6, "l={l} m={m} eps={eps}: {d}");
        // The least such ε, and (each ε-BR mechanism being ε-DP) never above the optimal
        // composition of l + m ε-DP mechanisms, the binomial closed form of `dp_delta`.
        if e > 0.0 {
            let below = mixed_delta(l, m, eps, e * (1.0 - 1e-9)).unwrap();
            assert!(below > 1e-6, "l={l} m={m} eps={eps}: {e} is not the least");
        }
        for eg in [0.0, 0.3 * eps, eps, e] {
            let mixed = mixed_delta(l, m, eps, eg).unwrap();
            let dp = composition::dp_delta(l + m, eps, eg).unwrap();
            assert!(
                mixed <= dp * (1.0 + 1e-9) + 1e-300,
                "l={l} m={m} eps={eps} eg={eg}: {mixed} above the DP bound {dp}"
            );
        }
    }
}

#[test]
fn invalid_inputs_are_typed_errors() {
    let is_oor =
        |r: Result<f64, CompositionError>| matches!(r, Err(CompositionError::OutOfRange { .. }));
    assert!(is_oor(mixed_delta(0, 0, 0.1, 1.0)));
    assert!(is_oor(mixed_delta(1, 1, 0.0, 1.0)));
    assert!(is_oor(mixed_delta(1, 1, 0.1, -1.0)));
    assert!(is_oor(mixed_delta(20_000_000, 1, 0.1, 1.0)));
    assert!(is_oor(mixed_epsilon(1, 1, 0.1, 0.0)));
    assert!(is_oor(mixed_epsilon(1, 1, 0.1, 1.0)));
    assert!(is_oor(mixed_delta_at_t(1, 1, 0.1, 0.2, 1.0)));
    assert!(is_oor(br_delta(0, 0.1, 1.0)));
    assert!(is_oor(br_delta(1, f64::NAN, 1.0)));
    assert!(is_oor(br_epsilon(0, 0.1, 1e-6)));
    assert!(is_oor(br_expected_loss_max(-1.0)));
    assert!(is_oor(br_expected_loss_argmax(f64::INFINITY)));
}
