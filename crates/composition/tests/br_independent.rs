//! Optimal composition of k ε-bounded-range mechanisms (`composition::br_delta`,
//! `br_epsilon`) against routes that do not go through `composition::mixed` (issue 19,
//! item 5):
//! - brute force: every one of the `2^k` output sequences of k copies of generalized
//!   randomized response (Dong–Durfee–Rogers 2019, Lemma 3.1), maximised over the
//!   analyst's t by this file's own scan and golden-section refinement (small k);
//! - the Dong–Durfee–Rogers (2019, Theorem 3) binomial sum written out here, with its
//!   probabilities taken from the definition of generalized randomized response, and the
//!   same maximisation over t (k up to 400).
//!
//! The δ of the library is an upper bound only if it is not below the true maximum over t,
//! so that side is held to rounding (1e-11 relative); the other side to the refinement's
//! resolution.

mod common;
use common::{brute_hockey, TwoPoint};
use composition::{br_delta, br_epsilon};

/// The maximum of `g` over `[lo, eps]`: a scan of `n + 1` points, then golden-section
/// refinement on the bracket around each of the 12 best local maxima of the scan (δ_t is
/// piecewise smooth in t with a kink wherever a term `kt − iε > ε_g` switches on, so it
/// can have several local maxima); the largest value evaluated. Below `lo = ε_g/k` every
/// total loss `kt − iε` is at most ε_g and δ_t = 0, so the scan starts there (it resolves
/// a narrow window near `t = ε`).
fn max_over_t(lo: f64, eps: f64, n: usize, g: impl Fn(f64) -> f64) -> f64 {
    let lo = lo.clamp(0.0, eps);
    let t = |j: usize| lo + (eps - lo) * j as f64 / n as f64;
    let v: Vec<f64> = (0..=n).map(|j| g(t(j))).collect();
    let mut peaks: Vec<usize> = (0..=n)
        .filter(|&j| (j == 0 || v[j] >= v[j - 1]) && (j == n || v[j] >= v[j + 1]))
        .collect();
    peaks.sort_by(|&a, &b| v[b].total_cmp(&v[a]));
    let mut best = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let r = 0.5 * (5f64.sqrt() - 1.0);
    for &j in peaks.iter().take(12) {
        let (mut a, mut b) = (t(j.saturating_sub(1)), t((j + 1).min(n)));
        let (mut c, mut d) = (b - r * (b - a), a + r * (b - a));
        let (mut gc, mut gd) = (g(c), g(d));
        for _ in 0..90 {
            if gc > gd {
                b = d;
                d = c;
                gd = gc;
                c = b - r * (b - a);
                gc = g(c);
            } else {
                a = c;
                c = d;
                gc = gd;
                d = a + r * (b - a);
                gd = g(d);
            }
            best = best.max(gc).max(gd);
        }
    }
    best
}

/// Dong–Durfee–Rogers (2019) Theorem 3 at a fixed t: under P each mechanism has loss `t`
/// with probability `p = (e^ε − e^t)/(e^ε − 1)` and `t − ε` otherwise, so with `i` losses
/// of the second kind the total is `kt − iε` and
/// `δ_t = Σ_i C(k,i) p^{k−i} (1−p)^i (1 − e^{ε_g − (kt − iε)})_+`.
fn ddr_delta_at_t(k: u64, eps: f64, t: f64, eps_g: f64) -> f64 {
    let p = (eps.exp() - t.exp()) / (eps.exp() - 1.0);
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut ln_c = 0.0; // ln C(k, i)
    let mut total = 0.0;
    for i in 0..=k {
        if i > 0 {
            ln_c += ((k - i + 1) as f64).ln() - (i as f64).ln();
        }
        let loss = k as f64 * t - i as f64 * eps;
        if loss <= eps_g {
            // Losses decrease in i: no later term is positive.
            break;
        }
        let ln_w = ln_c
            + if k - i > 0 { (k - i) as f64 * lp } else { 0.0 }
            + if i > 0 { i as f64 * lq } else { 0.0 };
        total += ln_w.exp() * -(eps_g - loss).exp_m1();
    }
    total
}

#[test]
fn br_delta_equals_brute_force_over_generalized_randomized_response() {
    for k in [1u64, 2, 3, 5, 8, 10] {
        for eps in [0.05f64, 0.5, 2.0] {
            for frac in [0.0, 0.05, 0.2, 0.5, 0.8] {
                let eg = frac * k as f64 * eps;
                let brute = max_over_t(eg / k as f64, eps, 400, |t| {
                    brute_hockey(&vec![TwoPoint::grr(eps, t); k as usize], eg)
                });
                let got = br_delta(k, eps, eg).unwrap();
                assert!(
                    got >= brute * (1.0 - 1e-11),
                    "k={k} eps={eps} eg={eg}: br_delta {got} below brute force {brute}"
                );
                assert!(
                    got <= brute * (1.0 + 1e-9) + 1e-300,
                    "k={k} eps={eps} eg={eg}: br_delta {got} above brute force {brute}"
                );
            }
        }
    }
}

#[test]
fn br_delta_equals_ddr19_written_out() {
    for k in [20u64, 100, 400] {
        for eps in [0.01f64, 0.1, 1.0] {
            for frac in [0.02, 0.1, 0.3] {
                let eg = frac * k as f64 * eps;
                let want = max_over_t(eg / k as f64, eps, 2000, |t| ddr_delta_at_t(k, eps, t, eg));
                let got = br_delta(k, eps, eg).unwrap();
                if want < 1e-280 {
                    continue;
                }
                assert!(
                    got >= want * (1.0 - 1e-10),
                    "k={k} eps={eps} eg={eg}: br_delta {got} below DDR19 {want}"
                );
                assert!(
                    got <= want * (1.0 + 1e-8),
                    "k={k} eps={eps} eg={eg}: br_delta {got} above DDR19 {want}"
                );
            }
        }
    }
}

/// `br_epsilon` is safe and tight by the written-out DDR19 δ: at the returned ε_g the
/// independent δ is at most the target; 1e-6 below it, above the target.
#[test]
fn br_epsilon_is_safe_and_tight_by_ddr19_written_out() {
    for k in [1u64, 7, 100, 400] {
        for eps in [0.01f64, 0.1, 1.0] {
            for delta in [1e-2, 1e-6, 1e-10] {
                let e = br_epsilon(k, eps, delta).unwrap();
                if e == 0.0 {
                    continue;
                }
                let at = max_over_t(e / k as f64, eps, 2000, |t| ddr_delta_at_t(k, eps, t, e));
                assert!(
                    at <= delta * (1.0 + 1e-10),
                    "k={k} eps={eps} delta={delta}: DDR19 delta at br_epsilon {e} is {at}"
                );
                let below = {
                    let e2 = e * (1.0 - 1e-6);
                    max_over_t(e2 / k as f64, eps, 2000, |t| ddr_delta_at_t(k, eps, t, e2))
                };
                assert!(
                    below > delta,
                    "k={k} eps={eps} delta={delta}: {e} is not the least eps_g ({below})"
                );
            }
        }
    }
}
