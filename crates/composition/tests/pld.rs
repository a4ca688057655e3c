//! The privacy-loss-distribution accountant (`composition::pld`) against independent
//! computations: closed-form Gaussian profiles (composition of Gaussians is Gaussian,
//! docs/maths.md §1.2), optimal DP composition of randomized response (§3.1, binomial sums),
//! the Laplace profile (§1.1) and a quadrature of its 2-fold composition, the truncated
//! Laplacian's tight δ (§1.3) and a quadrature of its hockey-stick, and a quadrature of the
//! bounded-noise hockey-stick (§1.4). Every test also checks the one-sided claims:
//! `Lower ≤ exact ≤ Upper`.

use composition::pld::{
    Bound, DiscreteLoss, GaussianLoss, LaplaceLoss, LogConcaveNoise, PldBracket, PldConfig,
    PrivacyLoss, ShiftedNoise, TruncatedLaplaceLoss,
};
use composition::{dp_delta, CompositionError};
use densities::gaussian::{gaussian_delta, gaussian_epsilon};
use densities::laplace::laplace_delta;
use densities::traits::Continuous;
use densities::truncated_laplace::TruncatedLaplace;

fn cfg(step: f64, bound: Bound) -> PldConfig {
    PldConfig::new(step, bound).unwrap()
}

fn grid(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    (0..=n)
        .map(|i| lo + (hi - lo) * i as f64 / n as f64)
        .collect()
}

/// Composite Simpson on `[a, b]` with `n` (even) panels.
fn simpson(f: &dyn Fn(f64) -> f64, a: f64, b: f64, n: usize) -> f64 {
    if b <= a {
        return 0.0;
    }
    let n = n + n % 2;
    let h = (b - a) / n as f64;
    let mut s = f(a) + f(b);
    for i in 1..n {
        s += if i % 2 == 1 { 4.0 } else { 2.0 } * f(a + i as f64 * h);
    }
    s * h / 3.0
}

/// Asserts `lower ≤ exact + tol_lo`, `exact ≤ upper + tol_hi`, at one ε.
fn assert_brackets(what: &str, eps: f64, lower: f64, exact: f64, upper: f64, tol: f64) {
    assert!(
        lower <= exact + tol,
        "{what} eps={eps}: lower {lower} > exact {exact}"
    );
    assert!(
        upper >= exact - tol,
        "{what} eps={eps}: upper {upper} < exact {exact}"
    );
}

#[test]
fn composed_gaussians_match_the_exact_gaussian_profile() {
    // (μ per mechanism, k): μ√k = 2 in both cases.
    for &(mu, k) in &[(0.5, 16u64), (0.2, 100)] {
        let total = mu * (k as f64).sqrt();
        let step = 5e-4;
        let est = PrivacyLoss::gaussian(mu, &cfg(step, Bound::Estimate))
            .unwrap()
            .self_compose(k)
            .unwrap();
        let up = PrivacyLoss::gaussian(mu, &cfg(step, Bound::Upper))
            .unwrap()
            .self_compose(k)
            .unwrap();
        let lo = PrivacyLoss::gaussian(mu, &cfg(step, Bound::Lower))
            .unwrap()
            .self_compose(k)
            .unwrap();
        assert!((up.max_shift() - k as f64 * step).abs() < 1e-9);
        let mut worst: f64 = 0.0;
        for eps in grid(-1.0, 8.0, 180) {
            let exact = gaussian_delta(eps, total);
            let e = est.delta(eps).unwrap();
            worst = worst.max((e - exact).abs());
            let (l, u) = (lo.delta(eps).unwrap(), up.delta(eps).unwrap());
            assert_brackets("gaussian", eps, l, exact, u, 0.0);
            // The shift statement: Upper is at most the exact profile shifted by k·Δ.
            let shifted = gaussian_delta(eps - up.max_shift(), total);
            assert!(u <= shifted + up.tail_mass() + up.slack() + 1e-12);
            let shifted = gaussian_delta(eps + lo.max_shift(), total);
            assert!(l >= shifted - lo.slack() - 1e-12 - 1e-15);
        }
        assert!(worst < 1e-6, "mu={mu} k={k}: estimate off by {worst}");
    }
}

#[test]
fn heterogeneous_gaussians_compose_to_root_sum_of_squares() {
    let mus = [0.3, 0.4, 1.2, 0.05, 0.7];
    let total = mus.iter().map(|m| m * m).sum::<f64>().sqrt();
    for bound in [Bound::Upper, Bound::Lower, Bound::Estimate] {
        let list: Vec<PrivacyLoss> = mus
            .iter()
            .map(|&m| PrivacyLoss::gaussian(m, &cfg(2e-4, bound)).unwrap())
            .collect();
        let p = PrivacyLoss::compose_all(&list).unwrap();
        for eps in grid(0.0, 6.0, 60) {
            let exact = gaussian_delta(eps, total);
            let d = p.delta(eps).unwrap();
            match bound {
                Bound::Upper => assert!(d >= exact && d - exact < 5e-4, "{eps}: {d} {exact}"),
                Bound::Lower => assert!(d <= exact && exact - d < 5e-4, "{eps}: {d} {exact}"),
                Bound::Estimate => assert!((d - exact).abs() < 1e-6, "{eps}: {d} {exact}"),
            }
        }
    }
}

#[test]
fn randomized_response_matches_optimal_dp_composition() {
    let eps0 = 0.1;
    for &k in &[1u64, 5, 20, 100, 400] {
        // The step divides ε: every mode is exact up to floating point.
        for bound in [Bound::Upper, Bound::Lower, Bound::Estimate] {
            let p = PrivacyLoss::randomized_response(eps0, &cfg(0.01, bound))
                .unwrap()
                .self_compose(k)
                .unwrap();
            assert!(p.max_shift() < 1e-15);
            for eg in grid(0.0, (k as f64 * eps0).min(8.0), 40) {
                let exact = dp_delta(k, eps0, eg).unwrap();
                let d = p.delta(eg).unwrap();
                assert!(
                    (d - exact).abs() < 1e-9,
                    "k={k} {bound:?} eg={eg}: {d} {exact}"
                );
                match bound {
                    Bound::Upper => assert!(d >= exact),
                    Bound::Lower => assert!(d <= exact),
                    Bound::Estimate => {}
                }
            }
        }
        // A step that does not divide ε: still one-sided.
        let b = PldBracket::from_model(
            &DiscreteLoss::randomized_response(eps0).unwrap(),
            &cfg(0.0037, Bound::Upper),
        )
        .unwrap()
        .self_compose(k)
        .unwrap();
        for eg in grid(0.0, (k as f64 * eps0).min(8.0), 40) {
            let exact = dp_delta(k, eps0, eg).unwrap();
            let d = b.delta(eg).unwrap();
            assert_brackets("rr", eg, d.lo, exact, d.hi, 0.0);
        }
    }
}

#[test]
fn single_laplace_matches_its_profile() {
    for &mu in &[0.1, 1.0, 3.0] {
        let step = 1e-3;
        let up = PrivacyLoss::laplace(mu, &cfg(step, Bound::Upper)).unwrap();
        let lo = PrivacyLoss::laplace(mu, &cfg(step, Bound::Lower)).unwrap();
        let est = PrivacyLoss::laplace(mu, &cfg(step, Bound::Estimate)).unwrap();
        for eps in grid(-mu - 0.5, mu + 0.5, 97) {
            let exact = laplace_delta(eps, mu);
            let (l, u) = (lo.delta(eps).unwrap(), up.delta(eps).unwrap());
            assert_brackets("laplace", eps, l, exact, u, 0.0);
            assert!(u - l < 2.0 * step, "{mu} {eps}: {l} {u}");
            let e = est.delta(eps).unwrap();
            assert!(
                (e - exact).abs() < 1e-6,
                "mu={mu} eps={eps}: {e} vs {exact}"
            );
        }
    }
}

/// `δ` of two composed Laplace mechanisms as a 1-D quadrature of the single profile:
/// `δ₂(ε) = E_{L₁}[δ₁(ε − L₁)]` with `L₁`'s law written out (atoms `±μ`, density
/// `½e^{−y}` of `y` on `(0, μ)` for the loss `μ − 2y`).
fn laplace_two_fold(eps: f64, mu: f64) -> f64 {
    let d1 = |e: f64| laplace_delta(e, mu);
    let atoms = 0.5 * d1(eps - mu) + 0.5 * (-mu).exp() * d1(eps + mu);
    let f = |y: f64| 0.5 * (-y).exp() * d1(eps - mu + 2.0 * y);
    // Kinks where ε − μ + 2y = ±μ.
    let mut pts = vec![0.0, mu, mu - 0.5 * eps, -0.5 * eps];
    pts.retain(|&p| (0.0..=mu).contains(&p));
    pts.sort_by(f64::total_cmp);
    let cont: f64 = pts
        .windows(2)
        .map(|w| simpson(&f, w[0], w[1], 20_000))
        .sum();
    atoms + cont
}

#[test]
fn two_laplace_mechanisms_match_quadrature() {
    for &mu in &[0.3, 1.0] {
        let step = 1e-3;
        let b = PldBracket::from_model(&LaplaceLoss::new(mu).unwrap(), &cfg(step, Bound::Upper))
            .unwrap()
            .self_compose(2)
            .unwrap();
        let est = PrivacyLoss::laplace(mu, &cfg(step, Bound::Estimate))
            .unwrap()
            .self_compose(2)
            .unwrap();
        for eps in grid(-2.0 * mu, 2.0 * mu + 0.2, 60) {
            let exact = laplace_two_fold(eps, mu);
            let d = b.delta(eps).unwrap();
            assert_brackets("2 laplace", eps, d.lo, exact, d.hi, 1e-13);
            let e = est.delta(eps).unwrap();
            assert!(
                (e - exact).abs() < 2e-6,
                "mu={mu} eps={eps}: {e} vs {exact}"
            );
        }
    }
}

#[test]
fn many_laplace_mechanisms_are_bracketed_and_below_dp_composition() {
    // fig18 scale: 1e4 Laplace mechanisms, each ε₀ = 0.1.
    let (mu, k) = (0.1, 10_000u64);
    let b = PldBracket::from_model(&LaplaceLoss::new(mu).unwrap(), &cfg(1e-4, Bound::Upper))
        .unwrap()
        .self_compose(k)
        .unwrap();
    let est = PrivacyLoss::laplace(mu, &cfg(1e-4, Bound::Estimate))
        .unwrap()
        .self_compose(k)
        .unwrap();
    for eps in grid(0.0, 120.0, 48) {
        let d = b.delta(eps).unwrap();
        let e = est.delta(eps).unwrap();
        assert!(d.lo <= e + 1e-9 && e <= d.hi + 1e-9, "{eps}: {d:?} {e}");
        assert!(d.width() < 0.05, "{eps}: {d:?}");
        // Laplace with μ is μ-DP; the optimal DP composition (§3.1) is an upper bound.
        assert!(d.lo <= dp_delta(k, mu, eps).unwrap() + 1e-12);
    }
    // The power in the Fourier domain agrees with sequential convolution (k = 64).
    let one = PrivacyLoss::laplace(mu, &cfg(1e-3, Bound::Upper)).unwrap();
    let pow = one.self_compose(64).unwrap();
    let mut seq = one.clone();
    for _ in 1..64 {
        seq = seq.compose(&one).unwrap();
    }
    for eps in grid(0.0, 3.0, 30) {
        let (a, c) = (pow.delta(eps).unwrap(), seq.delta(eps).unwrap());
        assert!((a - c).abs() < 1e-9, "{eps}: {a} vs {c}");
    }
}

#[test]
fn truncated_laplace_is_tight_and_matches_quadrature() {
    for &(eps, delta, sens) in &[(0.5, 1e-3, 1.0), (1.0, 1e-5, 1.0), (0.1, 1e-2, 2.0)] {
        let tl = TruncatedLaplace::new(eps, delta, sens).unwrap();
        // Step dividing ε: the tight δ at ε comes out exactly in both directions.
        let step = eps / 50.0;
        let b = PldBracket::from_model(
            &TruncatedLaplaceLoss::new(&tl, sens).unwrap(),
            &cfg(step, Bound::Upper),
        )
        .unwrap();
        let d = b.delta(eps).unwrap();
        assert!(
            (d.lo - delta).abs() < 1e-12 * delta.max(1e-3),
            "{d:?} {delta}"
        );
        assert!(
            (d.hi - delta).abs() < 1e-12 * delta.max(1e-3),
            "{d:?} {delta}"
        );
        // Independent: ∫ (p(y) − e^ε p(y − Δ))_+ dy by Simpson between the kinks.
        let a = tl.a;
        for e in grid(-0.5 * eps, 1.2 * eps, 17) {
            let f = |y: f64| (tl.pdf(y) - e.exp() * tl.pdf(y - sens)).max(0.0);
            let mut pts = vec![-a, sens - a, 0.0, sens, a, a + sens];
            // The crossing p = e^ε q on (0, Δ): (Δ − 2y)/λ = e.
            pts.push(0.5 * (sens - tl.lambda * e));
            pts.retain(|p| *p >= -a && *p <= a + sens);
            pts.sort_by(f64::total_cmp);
            let w = 1e-13 * a;
            let exact: f64 = pts
                .windows(2)
                .map(|p| simpson(&f, p[0] + w, p[1] - w, 40_000))
                .sum();
            let d = b.delta(e).unwrap();
            assert_brackets("truncated laplace", e, d.lo, exact, d.hi, 1e-9 * delta);
        }
        // Composition: the +∞ atom composes as 1 − (1 − δ)^k.
        let k = 10;
        let bk = b.self_compose(k).unwrap();
        let want = 1.0 - (1.0 - delta).powi(k as i32);
        assert!((bk.upper.inf_mass() - want).abs() < 1e-14);
        assert!(bk.delta(k as f64 * eps).unwrap().contains(want));
    }
}

#[test]
fn shifted_noise_with_a_cdf_matches_closed_forms() {
    let step = 1e-3;
    // Normal(0, σ = 2) shifted by 1: Gaussian profile with μ = 0.5.
    let n = densities::normal::Normal::new(0.0, 2.0).unwrap();
    let b = PldBracket::from_model(
        &ShiftedNoise::new(n, 1.0).unwrap(),
        &cfg(step, Bound::Upper),
    )
    .unwrap();
    for eps in grid(-0.5, 2.0, 50) {
        let d = b.delta(eps).unwrap();
        assert_brackets("normal", eps, d.lo, gaussian_delta(eps, 0.5), d.hi, 0.0);
    }
    // Laplace(b = 2) shifted by 1.0017 (atoms off the grid).
    let l = densities::laplace::Laplace::new(2.0).unwrap();
    let s = 1.0017;
    let b = PldBracket::from_model(&ShiftedNoise::new(l, s).unwrap(), &cfg(step, Bound::Upper))
        .unwrap();
    for eps in grid(-0.7, 0.7, 50) {
        let d = b.delta(eps).unwrap();
        assert_brackets(
            "laplace",
            eps,
            d.lo,
            laplace_delta(eps, s / 2.0),
            d.hi,
            1e-15,
        );
        assert!(d.width() < 3.0 * step);
    }
    // Gaussian model and ShiftedNoise(Normal) give the same law (Estimate mode).
    let g = PrivacyLoss::gaussian(0.5, &cfg(step, Bound::Estimate)).unwrap();
    let sn = PrivacyLoss::from_model(
        &ShiftedNoise::new(n, 1.0).unwrap(),
        &cfg(step, Bound::Estimate),
    )
    .unwrap();
    for eps in grid(0.0, 2.0, 20) {
        assert!((g.delta(eps).unwrap() - sn.delta(eps).unwrap()).abs() < 1e-12);
    }
}

#[test]
fn log_density_noise_matches_closed_forms_and_quadrature() {
    // A Gaussian given only by its log-density (support cut at ±40σ: mass < 1e-300).
    let noise = LogConcaveNoise::new(|x: f64| -0.5 * x * x / 4.0, (-80.0, 80.0), 1.0).unwrap();
    let b = PldBracket::from_model(&noise, &cfg(1e-3, Bound::Upper)).unwrap();
    for eps in grid(-0.5, 2.0, 26) {
        let d = b.delta(eps).unwrap();
        assert_brackets(
            "log-density normal",
            eps,
            d.lo,
            gaussian_delta(eps, 0.5),
            d.hi,
            0.0,
        );
        assert!(d.width() < 2e-3);
    }
    // The bounded noise of Dagan–Kur (power family, α = 2) with shift s: exact δ by
    // quadrature, δ(ε) = F(y_c) − e^ε F(y_c − s) with y_c the crossing of p and e^ε q.
    let fam = densities::bounded::BoundedFamily::power(2.0).unwrap();
    let s = 0.05;
    let dens = move |x: f64| (-fam.f(x)).exp();
    let z = simpson(&dens, -1.0, 1.0, 400_000);
    let cdf = |y: f64| simpson(&dens, -1.0, y, 400_000) / z;
    let noise = LogConcaveNoise::new(move |x: f64| -fam.f(x), (-1.0, 1.0), s).unwrap();
    let step = 1e-3;
    let cf = cfg(step, Bound::Upper).with_tail(1e-13).unwrap();
    let b = PldBracket::from_model(&noise, &cf).unwrap();
    let est = PrivacyLoss::from_model(&noise, &cf.with_bound(Bound::Estimate)).unwrap();
    let inf_exact = cdf(-1.0 + s);
    assert!(b.lower.inf_mass() <= inf_exact && inf_exact <= b.upper.inf_mass());
    assert!((b.upper.inf_mass() / inf_exact - 1.0).abs() < 1e-6);
    for &eps in &[0.0, 0.1, 0.3, 0.6, 1.0] {
        // p(y) = e^ε p(y − s) ⇔ f(y − s) − f(y) = ε; the loss decreases in y.
        let loss = |y: f64| fam.f(y - s) - fam.f(y);
        let (mut a, mut c) = (-1.0 + s + 1e-12, 1.0 - 1e-12);
        for _ in 0..200 {
            let m = 0.5 * (a + c);
            if loss(m) > eps {
                a = m;
            } else {
                c = m;
            }
        }
        let exact = cdf(a) - eps.exp() * cdf(a - s);
        let d = b.delta(eps).unwrap();
        assert_brackets("bounded noise", eps, d.lo, exact, d.hi, 1e-10);
        assert!(d.width() < 0.05, "{eps}: {d:?}");
        assert!((est.delta(eps).unwrap() - exact).abs() < 1e-5);
    }
    // Composition keeps the order, and the +∞ atom composes.
    let b10 = b.self_compose(10).unwrap();
    assert!(b10.lower.inf_mass() <= b10.upper.inf_mass());
    let d = b10.delta(1.0).unwrap();
    assert!(d.lo <= d.hi && d.lo > 0.0);
}

#[test]
fn epsilon_inverts_delta() {
    let plds = [
        PrivacyLoss::gaussian(0.5, &cfg(1e-3, Bound::Upper))
            .unwrap()
            .self_compose(16)
            .unwrap(),
        PrivacyLoss::laplace(0.2, &cfg(1e-3, Bound::Lower))
            .unwrap()
            .self_compose(50)
            .unwrap(),
        PrivacyLoss::randomized_response(0.1, &cfg(0.01, Bound::Estimate))
            .unwrap()
            .self_compose(100)
            .unwrap(),
    ];
    for p in &plds {
        for &target in &[0.3, 1e-2, 1e-4, 1e-6, 1e-9] {
            let e = p.epsilon(target).unwrap();
            let at = p.delta(e).unwrap();
            let gap = 1e-12 * e.max(1.0);
            match p.bound() {
                Bound::Lower => {
                    // Lower end of the final bracket: δ just above the target.
                    assert!(at >= target || e == 0.0, "{target}: {at}");
                    assert!(p.delta(e + gap).unwrap() <= target);
                }
                _ => {
                    assert!(at <= target, "{target}: δ({e}) = {at}");
                    assert!(e == 0.0 || p.delta(e - gap).unwrap() > target);
                }
            }
        }
        assert!(p.epsilon(0.0).is_err() && p.epsilon(1.0).is_err());
    }
    // The bracket contains the exact ε of the composed Gaussian.
    let b = PldBracket::from_model(&GaussianLoss::new(0.5).unwrap(), &cfg(1e-3, Bound::Upper))
        .unwrap()
        .self_compose(16)
        .unwrap();
    for &target in &[1e-2, 1e-5, 1e-8] {
        let e = b.epsilon(target).unwrap();
        assert!(e.contains(gaussian_epsilon(target, 2.0)), "{target}: {e:?}");
        // Up to k·Δ apart (plus the effect of tails and slack, tiny here).
        assert!(e.width() <= 1.01 * 16.0 * 1e-3, "{target}: {e:?}");
    }
    // Unreachable: the +∞ mass alone exceeds the target.
    let p = PrivacyLoss::from_atoms(&[(0.5, 0.9)], 0.1, &cfg(0.5, Bound::Upper)).unwrap();
    assert!(matches!(
        p.epsilon(0.05),
        Err(CompositionError::Unreachable { .. })
    ));
}

#[test]
fn huge_k_uses_windows_and_repeated_squaring() {
    // k = 1e6 Gaussians with μ = 0.002: exactly Gaussian with μ = 2.
    let (mu, k) = (0.002, 1_000_000u64);
    let step = 1e-4;
    let direct = PrivacyLoss::gaussian(mu, &cfg(step, Bound::Estimate))
        .unwrap()
        .self_compose(k)
        .unwrap();
    // A small FFT limit forces binary exponentiation with coarsening.
    let small = cfg(step, Bound::Estimate).with_max_len(1 << 12).unwrap();
    let squared = PrivacyLoss::gaussian(mu, &small)
        .unwrap()
        .self_compose(k)
        .unwrap();
    assert!(squared.step() > step);
    for eps in grid(0.0, 6.0, 30) {
        let exact = gaussian_delta(eps, 2.0);
        let a = direct.delta(eps).unwrap();
        let b = squared.delta(eps).unwrap();
        // Rounding to nearest inflates the variance by k·Δ²/12 (Sheppard): ~2e-4 relative.
        assert!((a - exact).abs() < 2e-4, "{eps}: {a} vs {exact}");
        assert!((b - exact).abs() < 2e-3, "{eps}: {b} vs {exact}");
    }
    // k = 1e10 (the bounded-noise calibration's range): μ = 2e-5 each, again μ√k = 2.
    // Squaring with coarsening; the error is the initial discretisation's (Δ = σ_L/20).
    let p = PrivacyLoss::gaussian(2e-5, &cfg(1e-6, Bound::Estimate))
        .unwrap()
        .self_compose(10_000_000_000)
        .unwrap();
    for eps in grid(0.0, 6.0, 12) {
        let exact = gaussian_delta(eps, 2.0);
        let d = p.delta(eps).unwrap();
        assert!((d - exact).abs() < 5e-5, "k=1e10 eps={eps}: {d} vs {exact}");
    }
    // The certified laws stay one-sided on both paths.
    for c in [cfg(step, Bound::Upper), small.with_bound(Bound::Upper)] {
        let up = PrivacyLoss::gaussian(mu, &c)
            .unwrap()
            .self_compose(k)
            .unwrap();
        let lo = PrivacyLoss::gaussian(mu, &c.with_bound(Bound::Lower))
            .unwrap()
            .self_compose(k)
            .unwrap();
        for eps in grid(0.0, 150.0, 30) {
            let exact = gaussian_delta(eps, 2.0);
            assert_brackets(
                "k=1e6",
                eps,
                lo.delta(eps).unwrap(),
                exact,
                up.delta(eps).unwrap(),
                0.0,
            );
        }
        // Truncation: the budget plus the FFT noise floor (which the slack bounds).
        assert!(up.tail_mass() <= 1e-15 + up.slack() && lo.tail_mass() <= 1e-15 + lo.slack());
        assert!(up.slack() < 1e-6);
    }
}

#[test]
fn coarsening_and_truncation_stay_one_sided() {
    let up = PrivacyLoss::gaussian(1.0, &cfg(1e-3, Bound::Upper)).unwrap();
    let lo = PrivacyLoss::gaussian(1.0, &cfg(1e-3, Bound::Lower)).unwrap();
    let (cu, cl) = (up.coarsened().coarsened(), lo.coarsened().coarsened());
    assert_eq!(cu.step(), 4e-3);
    for eps in grid(-1.0, 4.0, 50) {
        assert!(cu.delta(eps).unwrap() >= up.delta(eps).unwrap());
        assert!(cl.delta(eps).unwrap() <= lo.delta(eps).unwrap());
    }
    // Steps in a power-of-two ratio compose; others do not.
    assert!(up.compose(&cu).is_ok());
    let odd = PrivacyLoss::gaussian(1.0, &cfg(3e-3, Bound::Upper)).unwrap();
    assert!(up.compose(&odd).is_err());
    assert!(up.compose(&lo).is_err());
    assert!(up.self_compose(0).is_err());
    assert!(PrivacyLoss::compose_all(&[]).is_err());
    // An unbounded loss needs a positive tail budget.
    let c0 = cfg(1e-3, Bound::Upper).with_tail(0.0).unwrap();
    assert!(PrivacyLoss::gaussian(1.0, &c0).is_err());
    assert!(PrivacyLoss::laplace(1.0, &c0).is_ok());
    assert!(DiscreteLoss::new(vec![(f64::INFINITY, 0.5)], 0.0).is_err());
    assert!(PrivacyLoss::gaussian(1.0, &cfg(1e-3, Bound::Upper))
        .unwrap()
        .delta(f64::NAN)
        .is_err());
}
