//! The zCDP-to-(ε, δ) conversions of `composition::zcdp` against routes that do not use
//! the module (issue 19, item 4):
//! - the Canonne–Kamath–Steinke (2020, "The discrete Gaussian for differential privacy",
//!   Prop. 12 / Cor. 13) bound written out here in its original product form
//!   `δ(α) = e^{(α−1)(αρ−ε)}/(α−1) · (1 − 1/α)^α` and minimised over α by this file's own
//!   scan and golden-section refinement (docs/accountant.md §8);
//! - the exact privacy profile of the Gaussian mechanism with `μ = √(2ρ)` (Balle & Wang
//!   2018, Thm 8: `δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)`), evaluated with `special`'s
//!   erfc. ρ-zCDP of that Gaussian is exact, so its true ε can never exceed any valid
//!   zCDP conversion.
//!
//! The module promises one-sidedness ("never below the true infimum"), so the checks are
//! one-sided: `δ_CKS(ε_cks(ρ, δ)) ≤ δ` and `δ_Gauss(ε_cks(ρ, δ)) ≤ δ`.

use composition::zcdp::{delta_cks, epsilon_bun_steinke, epsilon_cks};
use special::Error as _;

/// `δ(α)` of CKS in the paper's product form (no logarithms of the bound's pieces), for
/// one order α > 1; computed in f64 with `exp` of the exponent, fine for the δ ≥ 1e-12
/// used here.
fn cks_delta_product(rho: f64, eps: f64, alpha: f64) -> f64 {
    let am1 = alpha - 1.0;
    (am1 * (alpha * rho - eps)).exp() / am1 * (1.0 - 1.0 / alpha).powf(alpha)
}

/// The minimum over α > 1 of `g(α)`, by a scan of 20 001 points in `ln(α − 1) ∈ [−12, 12]`
/// and a golden-section search on the bracket around the best scan point. Returns the
/// smallest value evaluated, hence an upper bound on the infimum that is tight to the
/// golden-section resolution.
fn min_over_alpha(g: impl Fn(f64) -> f64) -> f64 {
    let (lo, hi, n) = (-12.0_f64, 12.0_f64, 20_000);
    let u = |j: usize| lo + (hi - lo) * j as f64 / n as f64;
    let val = |x: f64| g(1.0 + x.exp());
    let (mut best_j, mut best) = (0, f64::INFINITY);
    for j in 0..=n {
        let v = val(u(j));
        if v < best {
            best = v;
            best_j = j;
        }
    }
    let (mut a, mut b) = (u(best_j.saturating_sub(1)), u((best_j + 1).min(n)));
    let r = 0.5 * (5f64.sqrt() - 1.0);
    let (mut c, mut d) = (b - r * (b - a), a + r * (b - a));
    let (mut fc, mut fd) = (val(c), val(d));
    for _ in 0..80 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - r * (b - a);
            fc = val(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + r * (b - a);
            fd = val(d);
        }
        best = best.min(fc).min(fd);
    }
    best
}

/// Exact δ(ε) of the Gaussian mechanism with `μ = sensitivity/σ`, from erfc.
fn gaussian_profile(eps: f64, mu: f64) -> f64 {
    let phi = |x: f64| 0.5 * (-x / std::f64::consts::SQRT_2).compl_error();
    phi(mu / 2.0 - eps / mu) - eps.exp() * phi(-mu / 2.0 - eps / mu)
}

const RHOS: [f64; 7] = [0.001, 0.01, 0.05, 0.5, 2.0, 5.0, 20.0];
const DELTAS: [f64; 5] = [1e-1, 1e-3, 1e-6, 1e-9, 1e-12];

/// One-sided round trip: at `ε = ε_cks(ρ, δ)` the CKS bound, minimised over α by this
/// file's own route, is at most δ (the module's ε is a value of ε(α) at some α, never
/// below the infimum). The bound is also tight: 1e-6 below ε the bound exceeds δ, which
/// is what shows that the module's minimisation over α is not merely safe but complete.
#[test]
fn cks_epsilon_meets_its_delta_by_an_independent_minimisation() {
    for &rho in &RHOS {
        for &delta in &DELTAS {
            let e = epsilon_cks(rho, delta).unwrap();
            if e == 0.0 {
                continue;
            }
            let d = min_over_alpha(|a| cks_delta_product(rho, e, a));
            assert!(
                d <= delta * (1.0 + 1e-9),
                "rho={rho} delta={delta}: CKS delta at eps_cks={e} is {d}"
            );
            let below = e - 1e-6 * e.max(1.0);
            let d_below = min_over_alpha(|a| cks_delta_product(rho, below, a));
            assert!(
                d_below > delta,
                "rho={rho} delta={delta}: eps_cks={e} is not the least eps ({d_below})"
            );
        }
    }
}

/// The same one-sided round trip through the module's own δ(ε) (as the docs promise:
/// `δ_cks(ρ, ε_cks(ρ, δ)) ≤ δ`, within the rounding of one evaluation), and δ_cks itself
/// never below the independent minimum (it is a valid δ, not an under-estimate).
#[test]
fn cks_round_trip_is_one_sided() {
    for &rho in &RHOS {
        for &delta in &DELTAS {
            let e = epsilon_cks(rho, delta).unwrap();
            if e == 0.0 {
                continue;
            }
            let d = delta_cks(rho, e).unwrap();
            assert!(
                d <= delta * (1.0 + 1e-12),
                "rho={rho} delta={delta}: delta_cks(eps_cks) = {d}"
            );
            for eps in [0.5 * e, e, 2.0 * e] {
                let module = delta_cks(rho, eps).unwrap();
                let indep = min_over_alpha(|a| cks_delta_product(rho, eps, a)).min(1.0);
                assert!(
                    module >= indep * (1.0 - 1e-9),
                    "rho={rho} eps={eps}: delta_cks {module} below the infimum {indep}"
                );
                assert!(
                    module <= indep * (1.0 + 1e-9),
                    "rho={rho} eps={eps}: delta_cks {module} far above {indep}"
                );
            }
        }
    }
}

/// ρ-zCDP is exact for the Gaussian with `μ² = 2ρ`, so its exact ε (from erfc) is at most
/// the CKS ε, which is at most the Bun–Steinke ε: at `ε_cks` the exact Gaussian δ is at
/// most δ, and both conversions are within a bounded factor of the exact ε (CKS is the
/// tighter one).
#[test]
fn exact_gaussian_epsilon_is_below_cks_below_bun_steinke() {
    for &rho in &RHOS {
        let mu = (2.0 * rho).sqrt();
        for &delta in &DELTAS {
            let e = epsilon_cks(rho, delta).unwrap();
            let bs = epsilon_bun_steinke(rho, delta).unwrap();
            assert!(
                e <= bs * (1.0 + 1e-12),
                "rho={rho} delta={delta}: {e} > BS {bs}"
            );
            let dg = gaussian_profile(e, mu);
            assert!(
                dg <= delta * (1.0 + 1e-9),
                "rho={rho} delta={delta}: exact Gaussian delta at eps_cks={e} is {dg}"
            );
            // The exact Gaussian ε by bisection on the erfc profile, in this file.
            let (mut lo, mut hi) = (0.0_f64, bs.max(1.0));
            if gaussian_profile(0.0, mu) <= delta {
                continue;
            }
            for _ in 0..200 {
                let mid = 0.5 * (lo + hi);
                if gaussian_profile(mid, mu) > delta {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            assert!(hi <= e, "rho={rho} delta={delta}: exact {hi} > CKS {e}");
            // CKS is not absurdly loose: within +0.5 + 25 % of the exact ε on this grid.
            assert!(
                e <= 1.25 * hi + 0.5,
                "rho={rho} delta={delta}: {e} vs exact {hi}"
            );
        }
    }
}
