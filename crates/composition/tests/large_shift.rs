//! One use of a mechanism whose loss spans many of its own scales above the cap the
//! accountant puts far above ε (issue 57, found by the hostile-input campaign): the
//! Gaussian at μ = 100 had a certified δ(0) of [0.3137, 0.3137] for 1, and at μ = 6.7 a
//! lower end of 0.99964 above the true 0.99914 — the last grid cell reached a step past
//! the cap and was counted twice, and the capped mass was one 8-point quadrature over
//! tens of standard deviations. The brackets against the closed forms (erfc from the
//! `special` crate, not the library's normal module).

use composition::accountant::Composition;
use composition::accountant::MechanismSpec;
use special::Error;

fn phi(x: f64) -> f64 {
    0.5 * Error::compl_error(-x / std::f64::consts::SQRT_2)
}

fn bracket(text: &str, eps: f64) -> (f64, f64) {
    let m: MechanismSpec = text.parse().unwrap();
    let a = Composition::of(&[m]).unwrap().delta(eps).unwrap();
    (a.lower, a.upper)
}

#[test]
fn delta_brackets_of_large_shifts_hold_the_closed_forms() {
    for sigma in [0.01, 0.05, 0.15, 0.4, 1.0] {
        let mu = 1.0 / sigma;
        for eps in [0.0, 0.5, 3.0] {
            // δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) (docs/accountant.md §2.1).
            let exact = phi(mu / 2.0 - eps / mu) - f64::exp(eps) * phi(-mu / 2.0 - eps / mu);
            let (lo, up) = bracket(&format!("gaussian:sigma={sigma}"), eps);
            let slack = 1e-13 * exact;
            assert!(
                lo <= exact + slack && exact <= up + slack,
                "Gaussian σ = {sigma} at ε = {eps}: exact {exact} outside [{lo}, {up}]"
            );
        }
    }
    for scale in [0.01f64, 0.1, 0.5] {
        let e0 = 1.0 / scale;
        for eps in [0.0, 0.5, 3.0] {
            // δ(ε) = 1 − e^{(ε − ε₀)/2} for 0 ≤ ε ≤ ε₀, 0 beyond (docs/accountant.md §2.2).
            let exact = if eps >= e0 {
                0.0
            } else {
                -((eps - e0) / 2.0).exp_m1()
            };
            let (lo, up) = bracket(&format!("laplace:scale={scale}"), eps);
            let slack = 1e-13 * exact;
            assert!(
                lo <= exact + slack && exact <= up + slack,
                "Laplace b = {scale} at ε = {eps}: exact {exact} outside [{lo}, {up}]"
            );
        }
    }
}
