//! Trade-off brackets of the accountant (docs/accountant.md §9) against independent
//! computations: the closed-form `G_μ` of a k-fold Gaussian, the closed-form Laplace
//! trade-off, and a Neyman–Pearson curve of k-fold randomized response built by direct
//! enumeration of the binomial likelihood ratios. The central-limit μ against its closed
//! form (Gaussian) and a quadrature of the Laplace loss moments.

use composition::accountant::{spec, Accountant, DiscreteLaw, GaussianLaw, MechanismSpec};
use densities::tradeoff::{gaussian_tradeoff, laplace_tradeoff};

fn alphas() -> Vec<f64> {
    let mut a: Vec<f64> = (0..=100).map(|i| i as f64 / 100.0).collect();
    a.extend([1e-6, 1e-4, 1e-3, 0.999, 0.9999]);
    a
}

/// `tol` absorbs the reference's own round-off.
fn check(
    what: &str,
    pts: &[composition::accountant::TradeoffPoint],
    exact: impl Fn(f64) -> f64,
    width: f64,
    tol: f64,
) {
    for p in pts {
        let e = exact(p.alpha);
        assert!(
            p.lower <= e + tol && e - tol <= p.upper,
            "{what} at α = {}: exact {e} outside [{}, {}]",
            p.alpha,
            p.lower,
            p.upper
        );
        assert!(
            p.upper - p.lower <= width,
            "{what} at α = {}: bracket [{}, {}] wider than {width}",
            p.alpha,
            p.lower,
            p.upper
        );
    }
}

#[test]
fn k_fold_gaussian_brackets_g_mu() {
    for (mu, k) in [(1.0, 1u64), (0.5, 16), (0.05, 400), (2.0, 3)] {
        let acc = Accountant::new(vec![(Box::new(GaussianLaw::new(mu).unwrap()), k)]).unwrap();
        let m = mu * (k as f64).sqrt();
        let pts = acc.tradeoff(&alphas()).unwrap();
        check(
            &format!("G with μ={mu}, k={k}"),
            &pts,
            |a| gaussian_tradeoff(m, a).unwrap(),
            2e-4,
            1e-15,
        );
        // The central-limit μ of a Gaussian composition is its exact μ.
        let clt = acc.clt_mu().unwrap();
        assert!((clt / m - 1.0).abs() < 1e-4, "clt μ {clt} vs {m}");
    }
}

#[test]
fn laplace_brackets_closed_form_and_its_clt_mu_matches_quadrature() {
    for eps0 in [0.1, 1.0, 3.0] {
        let s: MechanismSpec = format!("laplace:scale={}", 1.0 / eps0).parse().unwrap();
        let c = spec::accountant(&[s]).unwrap();
        let pts = c.tradeoff(&alphas()).unwrap();
        check(
            &format!("Laplace ε0={eps0}"),
            &pts,
            |a| laplace_tradeoff(1.0, 1.0 / eps0, a).unwrap(),
            2e-4,
            1e-15,
        );

        // Moments of L = (|x − 1| − |x|)ε0, x ~ Laplace(1/ε0), by the midpoint rule.
        let b = 1.0 / eps0;
        let (lo, hi, n) = (-60.0 * b, 60.0 * b + 1.0, 2_000_000);
        let h = (hi - lo) / n as f64;
        let (mut m1, mut m2) = (0.0, 0.0);
        for i in 0..n {
            let x = lo + (i as f64 + 0.5) * h;
            let w = (-(x.abs()) / b).exp() / (2.0 * b) * h;
            let l = ((x - 1.0).abs() - x.abs()) / b;
            m1 += w * l;
            m2 += w * l * l;
        }
        let k = 50u64;
        let expect = 2.0 * (k as f64).sqrt() * m1 / (m2 - m1 * m1).sqrt();
        let s: MechanismSpec = format!("laplace:scale={b},count={k}").parse().unwrap();
        let got = spec::accountant(&[s]).unwrap().clt_mu().unwrap();
        assert!(
            (got / expect - 1.0).abs() < 1e-4,
            "ε0={eps0}: clt μ {got} vs quadrature {expect}"
        );
    }
}

/// The Neyman–Pearson trade-off of k-fold randomized response by enumeration: the loss
/// takes the values `(k − 2i)ε0`; reject from the largest loss down, interpolating linearly.
fn rr_tradeoff(eps0: f64, k: u64, alpha: f64) -> f64 {
    let p = eps0.exp() / (1.0 + eps0.exp());
    let ln_choose = |i: u64| -> f64 { (1..=i).map(|j| ((k - i + j) as f64 / j as f64).ln()).sum() };
    // Atoms in decreasing loss: i = 0 (all answers kept) first.
    let (mut qa, mut pb) = (0.0f64, 0.0f64);
    for i in 0..=k {
        let c = ln_choose(i);
        let pm = (c + (k - i) as f64 * p.ln() + i as f64 * (1.0 - p).ln()).exp();
        let qm = (c + (k - i) as f64 * (1.0 - p).ln() + i as f64 * p.ln()).exp();
        if qa + qm >= alpha {
            // Randomise on this atom.
            let frac = if qm > 0.0 { (alpha - qa) / qm } else { 0.0 };
            return (1.0 - pb - frac * pm).max(0.0);
        }
        qa += qm;
        pb += pm;
    }
    0.0
}

#[test]
fn k_fold_randomized_response_brackets_the_enumerated_curve() {
    for (eps0, k) in [(0.5, 1u64), (0.5, 20), (0.1, 200), (2.0, 7)] {
        let acc = Accountant::new(vec![(
            Box::new(DiscreteLaw::randomized_response(eps0).unwrap()),
            k,
        )])
        .unwrap();
        let pts = acc.tradeoff(&alphas()).unwrap();
        check(
            &format!("RR ε0={eps0}, k={k}"),
            &pts,
            |a| rr_tradeoff(eps0, k, a),
            1e-9,
            1e-13,
        );
    }
}

#[test]
fn subsampled_at_q_one_is_the_plain_gaussian_and_asymmetric_brackets_are_ordered() {
    let s: MechanismSpec = "subsampled-gaussian:sigma=2,q=1,count=10".parse().unwrap();
    let pts = spec::accountant(&[s]).unwrap().tradeoff(&alphas()).unwrap();
    let m = 0.5 * 10f64.sqrt();
    check(
        "subsampled q=1",
        &pts,
        |a| gaussian_tradeoff(m, a).unwrap(),
        2e-4,
        1e-15,
    );
    // q < 1: less private than nothing, more than the full mechanism.
    let s: MechanismSpec = "subsampled-gaussian:sigma=1,q=0.1,count=50"
        .parse()
        .unwrap();
    let pts = spec::accountant(&[s]).unwrap().tradeoff(&alphas()).unwrap();
    let full = 50f64.sqrt();
    for p in &pts {
        assert!(
            p.lower <= p.upper && p.upper <= 1.0 - p.alpha + 1e-15,
            "{p:?}"
        );
        let g = gaussian_tradeoff(full, p.alpha).unwrap();
        assert!(p.upper >= g - 1e-12, "{p:?} below the full mechanism's {g}");
    }
}

#[test]
fn bad_alpha_is_refused() {
    let acc = Accountant::new(vec![(Box::new(GaussianLaw::new(1.0).unwrap()), 1)]).unwrap();
    assert!(acc.tradeoff(&[1.5]).is_err() && acc.tradeoff(&[f64::NAN]).is_err());
}

#[test]
fn truncated_laplacian_brackets_its_shift_tradeoff() {
    use densities::tradeoff::shift_tradeoff;
    use densities::truncated_laplace::TruncatedLaplace;
    for (eps, delta) in [(1.0, 1e-3), (0.3, 1e-6)] {
        let tl = TruncatedLaplace::new(eps, delta, 1.0).unwrap();
        let s: MechanismSpec = format!("truncated-laplace:epsilon={eps},delta={delta}")
            .parse()
            .unwrap();
        let pts = spec::accountant(&[s]).unwrap().tradeoff(&alphas()).unwrap();
        check(
            &format!("truncated Laplacian ({eps}, {delta})"),
            &pts,
            |a| shift_tradeoff(&tl, 1.0, a).unwrap(),
            2e-4,
            1e-14,
        );
    }
}

/// One use of bounded noise `R·X`, `X ∝ e^{−f}` on (−1, 1), against its shift by `r = s/R`:
/// `T(α) = F(F⁻¹(1 − α) − r)` (symmetric log-concave), with F by the trapezoidal rule on a
/// fine grid. Its loss has a long heavy upper tail, which the trade-off caps (moving it to
/// +∞ on one side, down to the cap on the other); the bracket must still hold.
#[test]
fn bounded_noise_single_use_brackets_the_quadrature_curve() {
    use densities::bounded::BoundedFamily;
    let fam = BoundedFamily::power(2.0).unwrap();
    let n = 2_000_000usize;
    let h = 2.0 / n as f64;
    let dens: Vec<f64> = (0..=n)
        .map(|i| (-fam.f(-1.0 + i as f64 * h)).exp())
        .collect();
    let mut cdf = vec![0.0; n + 1];
    for i in 1..=n {
        cdf[i] = cdf[i - 1] + 0.5 * h * (dens[i - 1] + dens[i]);
    }
    let z = cdf[n];
    let f_at = |x: f64| -> f64 {
        if x <= -1.0 {
            return 0.0;
        }
        let t = ((x + 1.0) / h).min(n as f64 - 1e-9);
        let i = t.floor() as usize;
        (cdf[i] + (t - i as f64) * (cdf[i + 1] - cdf[i])) / z
    };
    let quantile = |p: f64| -> f64 {
        let (mut a, mut b) = (-1.0f64, 1.0f64);
        for _ in 0..80 {
            let m = 0.5 * (a + b);
            if f_at(m) < p {
                a = m;
            } else {
                b = m;
            }
        }
        0.5 * (a + b)
    };
    for radius in [4.0, 10.0] {
        let r = 1.0 / radius;
        let s: MechanismSpec = format!("bounded:family=power,alpha=2,radius={radius}")
            .parse()
            .unwrap();
        let grid: Vec<f64> = (1..100).map(|i| i as f64 / 100.0).collect();
        let pts = spec::accountant(&[s]).unwrap().tradeoff(&grid).unwrap();
        check(
            &format!("bounded power(2), r = {r}"),
            &pts,
            |a| f_at(quantile(1.0 - a) - r),
            2e-3,
            1e-7,
        );
    }
}
