//! Tests of the parent module.

use super::{
    group_weight, lower_group_weight, lower_profile_range, lower_slack_per_use, lower_weight,
    upper_weight,
};
use crate::accountant::core::exact_exp::{exp_fixed, rat, seeded, P};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

/// The Gaussian's profile `δ_μ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)`, in logs for
/// the second term so that it keeps digits far in the tail.
fn gauss_delta(mu: f64, eps: f64) -> f64 {
    use densities::normal::ln_cdf;
    let a = ln_cdf(0.5 * mu - eps / mu);
    let b = eps + ln_cdf(-0.5 * mu - eps / mu);
    a.exp() * -(b - a).exp_m1()
}

/// `(m, γ, remove) ↦` the hockey-stick divergence `H_γ` of the Poisson-subsampled
/// Gaussian at rate `q` and shift `m` (remove: `((1 − q)N(0) + qN(m), N(0))`, else the
/// reverse), by the midpoint rule with step 1e-3 over `n` points from `y0`.
fn subsampled_hockey(q: f64, y0: f64, n: usize) -> impl Fn(f64, f64, bool) -> f64 {
    let h = 1e-3;
    let ys: Vec<f64> = (0..n).map(|i| y0 + (i as f64 + 0.5) * h).collect();
    let phi = |y: f64| (-0.5 * y * y).exp() / (2.0 * std::f64::consts::PI).sqrt();
    move |m: f64, gamma: f64, remove: bool| -> f64 {
        ys.iter()
            .map(|&y| {
                let (p, q0) = ((1.0 - q) * phi(y) + q * phi(y - m), phi(y));
                let (a, b) = if remove { (p, q0) } else { (q0, p) };
                (a - gamma * b).max(0.0) * h
            })
            .sum()
    }
}

const CELLS: [(f64, f64); 5] = [
    (0.5, 0.55),
    (0.9, 0.9009),
    (1.0, 1.1),
    (2.0, 2.5),
    (4.0, 4.4),
];

#[test]
fn the_mixture_weight_dominates_the_gaussian_profile_and_the_chord_does_not() {
    // Independent route: the closed-form profile on a dense ε grid, each side's value
    // against the mixture's, for interior shifts of several cells. The chord (linear
    // interpolation weight) must fail somewhere: the profile is concave in μ for
    // ε < μ²/2, so the test can tell a weight too small.
    let mut chord_fails = 0;
    for &(lo, hi) in &CELLS {
        for k in 1..10 {
            let theta = k as f64 / 10.0;
            let mu = lo + theta * (hi - lo);
            let w = upper_weight(mu, lo, hi);
            assert!(w >= theta && w < theta + 0.2 * hi * (hi - lo), "{mu} {w}");
            for i in -4000..=4000 {
                let eps = i as f64 * 0.01;
                let (d, dl, dh) = (
                    gauss_delta(mu, eps),
                    gauss_delta(lo, eps),
                    gauss_delta(hi, eps),
                );
                let mix = w * dh + (1.0 - w) * dl;
                if d < 1e-250 {
                    continue; // the products below would underflow
                }
                assert!(d <= mix * (1.0 + 1e-10), "μ = {mu}, ε = {eps}: {d} > {mix}");
                if d > (theta * dh + (1.0 - theta) * dl) * (1.0 + 1e-10) {
                    chord_fails += 1;
                }
            }
        }
    }
    assert!(chord_fails > 100, "{chord_fails}");
}

#[test]
fn the_mixture_weight_dominates_the_subsampled_pair_by_quadrature_in_both_directions() {
    // The reduction to the Gaussian's profile checked on the mechanism itself: each
    // direction's hockey-stick divergence of the Poisson-subsampled Gaussian at
    // q = 0.05 by quadrature over the output, at shifts lo < μ < hi.
    let (q, lo, hi) = (0.05, 1.0, 1.3);
    let mu = 1.2;
    let w = upper_weight(mu, lo, hi);
    let hockey = subsampled_hockey(q, -15.0, 40_000);
    for remove in [true, false] {
        for i in 0..=60 {
            let gamma = (-3.0 + 0.1 * i as f64).exp();
            let d = hockey(mu, gamma, remove);
            let mix = w * hockey(hi, gamma, remove) + (1.0 - w) * hockey(lo, gamma, remove);
            assert!(
                d <= mix + 1e-12,
                "γ = {gamma}, remove {remove}: {d} > {mix}"
            );
        }
    }
}

#[test]
fn the_weights_are_rounded_up_in_exact_arithmetic() {
    // α = n/(n + d) with n = e^{L(μ−lo)} − 1, d = 1 − e^{−L(hi−μ)}, L = hi/4, from the
    // floats as given, enclosed exactly: the float weight is at least the exact one.
    for &(lo, hi) in &CELLS {
        for k in 1..200 {
            let mu = lo + (hi - lo) * k as f64 / 200.0;
            let w = rat(upper_weight(mu, lo, hi));
            let l = rat(hi) / BigRational::from_integer(4.into());
            let (a, b) = (rat(mu) - rat(lo), rat(hi) - rat(mu));
            // The exponents in rationals, then enclosed: e^{La} from above and
            // e^{−Lb} from above (d from below).
            let ea = exp_fixed(&(&l * &a)).1;
            let eb = exp_fixed(&(-(&l * &b))).1;
            let s = BigInt::one() << P;
            let n_hi = BigRational::new(ea - &s, s.clone());
            let d_lo = BigRational::new(&s - eb, s.clone());
            let one = BigRational::one();
            assert!(
                &n_hi * (&one - &w) <= &w * &d_lo,
                "μ = {mu} in [{lo}, {hi}]"
            );
        }
    }
    // The group weight: (1 − α*)^n ≤ Π (1 − α_i)^{c_i} exactly (the tail P(S ≥ 1) of
    // the binomial at least the Poisson-binomial's), for seeded weights.
    let mut u = seeded(7);
    for _ in 0..200 {
        let k = 1 + (u() * 6.0) as usize;
        let parts: Vec<(f64, u64)> = (0..k).map(|_| (u(), 1 + (u() * 4.0) as u64)).collect();
        let n: u64 = parts.iter().map(|p| p.1).sum();
        let sum_ln: f64 = parts.iter().map(|&(a, c)| c as f64 * (-a).ln_1p()).sum();
        let w = rat(group_weight(sum_ln, n, k));
        let one = BigRational::one();
        let lhs = num_traits::pow(&one - &w, n as usize);
        let rhs = parts.iter().fold(one.clone(), |acc, &(a, c)| {
            acc * num_traits::pow(&one - rat(a), c as usize)
        });
        assert!(lhs <= rhs, "{parts:?}");
    }
}

/// `P(S ≥ j)` for `j = 0..=n` of a sum of independent Bernoulli(p_i), exactly.
fn tails(ps: &[BigRational]) -> Vec<BigRational> {
    let mut pmf = vec![BigRational::one()];
    for p in ps {
        let mut next = vec![BigRational::zero(); pmf.len() + 1];
        for (j, m) in pmf.iter().enumerate() {
            next[j] += m * (BigRational::one() - p);
            next[j + 1] += m * p;
        }
        pmf = next;
    }
    let mut t = vec![BigRational::zero(); pmf.len()];
    let mut acc = BigRational::zero();
    for j in (0..pmf.len()).rev() {
        acc += &pmf[j];
        t[j] = acc.clone();
    }
    t
}

#[test]
fn the_group_weights_binomial_is_stochastically_larger_and_the_mean_is_not() {
    // Every tail of Binomial(n, α*) against the Poisson-binomial's, exactly, for
    // seeded weights and counts; the binomial at the mean weight (the same expected
    // count) must fall short of some tail for many of them.
    let mut u = seeded(11);
    let mut mean_fails = 0;
    for _ in 0..100 {
        let k = 2 + (u() * 5.0) as usize;
        let parts: Vec<(f64, u64)> = (0..k).map(|_| (u(), 1 + (u() * 3.0) as u64)).collect();
        let n: u64 = parts.iter().map(|p| p.1).sum();
        let each: Vec<BigRational> = parts
            .iter()
            .flat_map(|&(a, c)| std::iter::repeat_n(rat(a), c as usize))
            .collect();
        let sum_ln: f64 = parts.iter().map(|&(a, c)| c as f64 * (-a).ln_1p()).sum();
        let w = rat(group_weight(sum_ln, n, k));
        let pb = tails(&each);
        let bin = tails(&vec![w; n as usize]);
        for j in 0..pb.len() {
            assert!(bin[j] >= pb[j], "j = {j}, {parts:?}");
        }
        let mean = each.iter().fold(BigRational::zero(), |a, b| a + b)
            / BigRational::from_integer((n as i64).into());
        let at_mean = tails(&vec![mean; n as usize]);
        if (0..pb.len()).any(|j| at_mean[j] < pb[j]) {
            mean_fails += 1;
        }
    }
    assert!(mean_fails > 50, "{mean_fails}");
}

#[test]
fn the_lower_weight_is_dominated_on_its_profile_range_and_the_chord_is_not() {
    // Independent route: the closed-form profile on a dense ε grid of [0, e_max], the
    // mixture's value against the step's, for interior shifts of several cells and two
    // ranges; beyond e_max the excess stays within δ_hi(e_max) ≤ Φ(−z). The chord
    // (linear interpolation weight) must fail somewhere in the range: the profile is
    // convex in μ for ε > μ²/2, so the test can tell a weight too large.
    use densities::normal::sf;
    let mut chord_fails = 0;
    for &(lo, hi) in &CELLS {
        for z in [2.0, 6.0] {
            let e_max = lower_profile_range(hi, z);
            for k in 1..10 {
                let theta = k as f64 / 10.0;
                let mu = lo + theta * (hi - lo);
                let w = lower_weight(mu, lo, hi, e_max);
                assert!(w > 0.0 && w < theta, "{mu} {w}");
                for i in 0..=4000 {
                    let eps = e_max * i as f64 / 4000.0;
                    let (d, dl, dh) = (
                        gauss_delta(mu, eps),
                        gauss_delta(lo, eps),
                        gauss_delta(hi, eps),
                    );
                    if d < 1e-250 {
                        continue; // the products below would underflow
                    }
                    let mix = w * dh + (1.0 - w) * dl;
                    assert!(mix <= d * (1.0 + 1e-10), "μ = {mu}, ε = {eps}: {mix} > {d}");
                    if theta * dh + (1.0 - theta) * dl > d * (1.0 + 1e-10) {
                        chord_fails += 1;
                    }
                }
                for i in 0..=400 {
                    let eps = e_max + 0.05 * i as f64;
                    let (d, dl, dh) = (
                        gauss_delta(mu, eps),
                        gauss_delta(lo, eps),
                        gauss_delta(hi, eps),
                    );
                    let excess = w * dh + (1.0 - w) * dl - d;
                    assert!(excess <= sf(z) * (1.0 + 1e-9), "ε = {eps}: {excess:e}");
                }
            }
        }
    }
    assert!(chord_fails > 100, "{chord_fails}");
}

#[test]
fn the_lower_mixture_is_dominated_by_the_subsampled_pair_up_to_its_slack_by_quadrature() {
    // The reduction checked on the mechanism itself: each direction's hockey-stick
    // divergence of the Poisson-subsampled Gaussian at q = 0.05 by quadrature over the
    // output at shifts lo < μ < hi, γ from e^-4 to e^4 (both sides of 1, so the
    // trade-off curves, not one tail). The mixture must lie below the step revealed
    // with probability η = slack, `(1 − η)δ + η`; at a short profile range (z = 0.5)
    // it must actually exceed the step somewhere, so that the slack is needed.
    let (q, lo, hi, mu) = (0.05, 1.0, 1.3, 1.15);
    let hockey = subsampled_hockey(q, -18.0, 44_000);
    for z in [0.5, 2.0, 6.0] {
        let w = lower_weight(mu, lo, hi, lower_profile_range(hi, z));
        let slack = lower_slack_per_use(q, z);
        let mut worst = f64::NEG_INFINITY;
        for remove in [true, false] {
            for i in 0..=160 {
                let gamma = (-4.0 + 0.05 * i as f64).exp();
                let d = hockey(mu, gamma, remove);
                let mix = w * hockey(hi, gamma, remove) + (1.0 - w) * hockey(lo, gamma, remove);
                worst = worst.max(mix - d);
                assert!(
                    mix <= (1.0 - slack) * d + slack + 1e-12,
                    "z = {z}, γ = {gamma}, remove {remove}: {mix} > {d} (slack {slack:e})"
                );
            }
        }
        if z == 0.5 {
            assert!(
                worst > 1e-9,
                "z = 0.5: the mixture never exceeds the step ({worst:e})"
            );
        }
    }
}

#[test]
fn the_lower_weights_and_slack_are_rounded_to_their_side_in_exact_arithmetic() {
    // β = n/(n + d) with n = 1 − e^{−U(μ−lo)}, d = e^{U(hi−μ)} − 1, U = e_max²/lo³ − lo/4
    // from the floats as given, all in rationals and enclosed: β·d_hi ≤ n_lo·(1 − β).
    let s = BigInt::one() << P;
    let one = BigRational::one();
    for &(lo, hi) in &CELLS {
        for z in [1.0, 8.0, 30.0] {
            let e_max = lower_profile_range(hi, z);
            for k in 1..200 {
                let mu = lo + (hi - lo) * k as f64 / 200.0;
                let w = rat(lower_weight(mu, lo, hi, e_max));
                let (l, e) = (rat(lo), rat(e_max));
                let u = &e * &e / (&l * &l * &l) - &l / BigRational::from_integer(4.into());
                let (a, b) = (rat(mu) - rat(lo), rat(hi) - rat(mu));
                // e^{−Ua} from above (n from below), e^{Ub} from above (d from above).
                let ea = exp_fixed(&(-(&u * &a))).1;
                let eb = exp_fixed(&(&u * &b)).1;
                let n_lo = BigRational::new(&s - ea, s.clone());
                let d_hi = BigRational::new(eb - &s, s.clone());
                assert!(
                    &w * &d_hi <= &n_lo * (&one - &w),
                    "μ = {mu} in [{lo}, {hi}], z = {z}"
                );
            }
        }
    }
    // The group weight: β*^n ≤ Π β_i^{c_i} exactly (the tail P(S = n)), for seeded
    // weights.
    let mut u = seeded(13);
    for _ in 0..200 {
        let k = 1 + (u() * 6.0) as usize;
        let parts: Vec<(f64, u64)> = (0..k)
            .map(|_| (0.01 + 0.99 * u(), 1 + (u() * 4.0) as u64))
            .collect();
        let n: u64 = parts.iter().map(|p| p.1).sum();
        let sum_ln: f64 = parts.iter().map(|&(b, c)| c as f64 * b.ln()).sum();
        let w = rat(lower_group_weight(sum_ln, n, k));
        let lhs = num_traits::pow(w, n as usize);
        let rhs = parts.iter().fold(one.clone(), |acc, &(b, c)| {
            acc * num_traits::pow(rat(b), c as usize)
        });
        assert!(lhs <= rhs, "{parts:?}");
    }
    // The slack: 2qΦ(−z) through the Mills ratio, at least the normal tail computed
    // by another route (the erfc of densities::normal), at every z.
    for i in 0..=740 {
        let z = 0.5 + 0.05 * i as f64;
        let bound = lower_slack_per_use(0.3, z);
        let tail = 2.0 * 0.3 * densities::normal::sf(z);
        assert!(
            bound >= tail * (1.0 + 1e-12),
            "z = {z}: {bound:e} < {tail:e}"
        );
        assert!(
            bound <= tail * (1.0 + 4.0 / (z * z)),
            "z = {z}: {bound:e} ≫ {tail:e}"
        );
    }
}

#[test]
fn the_lower_group_weights_binomial_is_stochastically_smaller_and_the_mean_is_not() {
    // Every tail of Binomial(n, β*) against the exact Poisson-binomial's, for seeded
    // weights and counts; the binomial at the mean weight (the same expected count)
    // must exceed some tail for many of them.
    let mut u = seeded(17);
    let mut mean_fails = 0;
    for _ in 0..100 {
        let k = 2 + (u() * 5.0) as usize;
        let parts: Vec<(f64, u64)> = (0..k)
            .map(|_| (0.01 + 0.99 * u(), 1 + (u() * 3.0) as u64))
            .collect();
        let n: u64 = parts.iter().map(|p| p.1).sum();
        let each: Vec<BigRational> = parts
            .iter()
            .flat_map(|&(b, c)| std::iter::repeat_n(rat(b), c as usize))
            .collect();
        let sum_ln: f64 = parts.iter().map(|&(b, c)| c as f64 * b.ln()).sum();
        let w = rat(lower_group_weight(sum_ln, n, k));
        let pb = tails(&each);
        let bin = tails(&vec![w; n as usize]);
        for j in 0..pb.len() {
            assert!(bin[j] <= pb[j], "j = {j}, {parts:?}");
        }
        let mean = each.iter().fold(BigRational::zero(), |a, b| a + b)
            / BigRational::from_integer((n as i64).into());
        let at_mean = tails(&vec![mean; n as usize]);
        if (0..pb.len()).any(|j| at_mean[j] > pb[j]) {
            mean_fails += 1;
        }
    }
    assert!(mean_fails > 50, "{mean_fails}");
}
