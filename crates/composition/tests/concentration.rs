//! The concentration bound (Cesar–Rogers eq. 3, docs/maths.md §3.3): its limiting cases and
//! that it is an upper bound on every optimal composition in the crate.

mod common;
use common::rel;
use composition::{
    br_expected_loss_max, concentration_epsilon, dp_epsilon, mixed_epsilon, Cdp, CompositionError,
};

#[test]
fn all_dp_is_advanced_composition() {
    for k in [1u64, 10, 100, 10_000] {
        for eps in [0.001f64, 0.1, 1.0] {
            for delta in [1e-3f64, 1e-9] {
                let kf = k as f64;
                // Kairouz–Oh–Viswanath / Dwork–Rothblum–Vadhan advanced composition.
                let ac = eps * (2.0 * kf * (1.0 / delta).ln()).sqrt()
                    + kf * eps * (eps.exp() - 1.0) / (eps.exp() + 1.0);
                let c = concentration_epsilon(k, 0, eps, &[], delta).unwrap();
                assert!(rel(c, ac) < 1e-12, "k={k} eps={eps}: {c} vs {ac}");
            }
        }
    }
}

#[test]
fn all_br_is_dong_durfee_rogers_corollary() {
    for k in [1u64, 100] {
        for eps in [0.01f64, 0.5] {
            let kf = k as f64;
            let delta = 1e-6f64;
            let want = kf * br_expected_loss_max(eps).unwrap()
                + eps * (kf * (1.0 / delta).ln() / 2.0).sqrt();
            let c = concentration_epsilon(0, k, eps, &[], delta).unwrap();
            assert!(rel(c, want) < 1e-12);
        }
    }
}

#[test]
fn cdp_terms_add_mean_and_variance() {
    // Gaussian mechanisms only: Σμ + √(2 Στ² ln(1/δ)).
    let g = [Cdp::gaussian(0.3).unwrap(), Cdp::gaussian(0.4).unwrap()];
    let delta = 1e-5f64;
    let c = concentration_epsilon(0, 0, 1.0, &g, delta).unwrap();
    let want = 0.5 * (0.09 + 0.16) + (2.0 * 0.25 * (1.0 / delta).ln()).sqrt();
    assert!(rel(c, want) < 1e-14);
    let z = Cdp::zcdp(0.125).unwrap();
    assert!(rel(z.tau(), 0.5) < 1e-15 && z.mu() == 0.125);
}

#[test]
fn is_an_upper_bound_on_the_optimal_compositions() {
    for eps in [0.01f64, 0.1, 0.5, 1.0] {
        for delta in [1e-3f64, 1e-6, 1e-9] {
            for &(l, m) in &[
                (100u64, 0u64),
                (75, 25),
                (50, 50),
                (25, 75),
                (0, 100),
                (1, 0),
                (0, 1),
                (3, 2),
            ] {
                let c = concentration_epsilon(l, m, eps, &[], delta).unwrap();
                let opt = mixed_epsilon(l, m, eps, delta).unwrap();
                assert!(c >= opt, "l={l} m={m} eps={eps} d={delta}: {c} < {opt}");
                if m == 0 {
                    assert!(c >= dp_epsilon(l, eps, delta).unwrap());
                }
            }
        }
    }
}

#[test]
fn invalid_inputs_are_typed_errors() {
    assert!(matches!(
        concentration_epsilon(0, 0, 0.1, &[], 1e-6),
        Err(CompositionError::Empty { .. })
    ));
    assert!(matches!(
        concentration_epsilon(1, 0, 0.0, &[], 1e-6),
        Err(CompositionError::OutOfRange { .. })
    ));
    assert!(matches!(
        concentration_epsilon(1, 0, 0.1, &[], 1.0),
        Err(CompositionError::OutOfRange { .. })
    ));
    assert!(Cdp::new(-1.0, 1.0).is_err());
    assert!(Cdp::new(1.0, f64::NAN).is_err());
    assert!(Cdp::zcdp(-0.1).is_err());
    assert!(Cdp::gaussian(f64::INFINITY).is_err());
}
