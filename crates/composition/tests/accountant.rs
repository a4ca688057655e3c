//! The tilted accountant against independent computations: k-fold Gaussian (one Gaussian
//! with μ√k, closed form in log space), k-fold randomized response (the binomial formula
//! of docs/accountant.md §2.4), heterogeneous Gaussian lists, Laplace against its closed-form
//! profile and a quadrature of the two-fold composition, each discretisation against
//! a direct quadrature of the hockey-stick divergence in output space, DP-SGD against
//! Google's dp_accounting (a recorded value), and many uses of bounded noise against
//! saddle-point quadratures of one use's loss law (plain, and split at a mass level for
//! the one-jump regime).

use composition::accountant::{
    Accountant, BoundedNoiseLaw, ClippedLaplaceLaw, Composition, DiscreteLaw, GaussianLaw, Lattice,
    LossLaw, MechanismSpec,
};
use densities::gaussian::ln_gaussian_delta;

/// Whether the heavier variants run (`DPW_LONG=1`).
fn long() -> bool {
    std::env::var("DPW_LONG").is_ok_and(|v| v == "1")
}

/// Least ε ≥ 0 with `ln δ(ε) ≤ ln_target` for a decreasing `ln δ`, by bisection.
fn invert(ln_delta: impl Fn(f64) -> f64, ln_target: f64, hi: f64) -> f64 {
    let (mut a, mut b) = (0.0f64, hi);
    if ln_delta(0.0) <= ln_target {
        return 0.0;
    }
    for _ in 0..300 {
        let m = 0.5 * (a + b);
        if m <= a || m >= b {
            break;
        }
        if ln_delta(m) > ln_target {
            a = m;
        } else {
            b = m;
        }
    }
    0.5 * (a + b)
}

fn check_bracket(what: &str, lower: f64, upper: f64, exact: f64, tol: f64) {
    assert!(
        lower <= exact && exact <= upper,
        "{what}: exact {exact} outside [{lower}, {upper}]"
    );
    assert!(
        upper / exact - 1.0 <= tol,
        "{what}: upper {upper} vs exact {exact}"
    );
    assert!(
        1.0 - lower / exact <= tol,
        "{what}: lower {lower} vs exact {exact}"
    );
}

fn gaussian(mu: f64, k: u64) -> Accountant {
    Accountant::new(vec![(Box::new(GaussianLaw::new(mu).unwrap()), k)]).unwrap()
}

/// k-fold Gaussian against its closed form over k from 1 to 1e10 at δ = 1e-10 and 1e-300
/// (with `DPW_LONG=1` also 1e-2 and 1e-100): each bracket holds the exact ε and meets the
/// accuracy.
#[test]
fn k_fold_gaussian_over_a_grid_of_delta_and_k() {
    let deltas: &[f64] = if long() {
        &[1e-2, 1e-10, 1e-100, 1e-300]
    } else {
        &[1e-10, 1e-300]
    };
    for (k, mu) in [
        (1u64, 1.0),
        (10, 0.3),
        (1_000, 0.5),
        (100_000, 0.05),
        (10_000_000, 1.0),
        (10_000_000_000, 1e-4),
    ] {
        let acc = gaussian(mu, k);
        let m = mu * (k as f64).sqrt();
        for &d in deltas {
            let exact = invert(|e| ln_gaussian_delta(e, m), d.ln(), 1e13);
            let a = acc.epsilon(d).unwrap();
            check_bracket(
                &format!("gaussian mu={mu} k={k} delta={d:e}"),
                a.lower,
                a.upper,
                exact,
                1e-4,
            );
        }
    }
}

#[test]
fn k_fold_randomized_response_over_a_grid_of_delta_and_k() {
    for (k, e0) in [
        (1u64, 1.0),
        (10, 0.5),
        (1_000, 3.0),
        (100_000, 0.1),
        (10_000_000, 0.01),
        (10_000_000_000, 1e-3),
    ] {
        let acc = Accountant::new(vec![(
            Box::new(DiscreteLaw::randomized_response(e0).unwrap()),
            k,
        )])
        .unwrap();
        for d in [1e-2f64, 1e-10, 1e-100, 1e-300] {
            let ln_exact = |eg: f64| composition::dp_ln_delta(k, e0, eg).unwrap();
            if ln_exact(0.0) <= d.ln() {
                continue;
            }
            // ε(δ) of a lattice law is exact only up to the root search; the profile is
            // piecewise smooth with kinks at multiples of ε₀.
            let exact = invert(ln_exact, d.ln(), k as f64 * e0);
            let a = acc.epsilon(d).unwrap();
            check_bracket(
                &format!("rr eps0={e0} k={k} delta={d:e}"),
                a.lower,
                a.upper,
                exact,
                1e-4,
            );
        }
    }
}

#[test]
fn delta_of_epsilon_brackets_the_gaussian_profile_in_log_space() {
    for (mu, k, eps) in [
        (1.0, 100u64, 30.0),
        (1.0, 100, 200.0),
        (0.5, 1_000, 235.3982),
        (0.1, 1, 1.0),
    ] {
        let acc = gaussian(mu, k);
        let exact = ln_gaussian_delta(eps, mu * (k as f64).sqrt());
        let a = acc.delta(eps).unwrap();
        assert!(
            a.ln_lower <= exact && exact <= a.ln_upper,
            "mu={mu} k={k} eps={eps}: {exact} outside [{}, {}]",
            a.ln_lower,
            a.ln_upper
        );
        assert!(
            a.ln_upper - a.ln_lower <= 2e-3,
            "width {}",
            a.ln_upper - a.ln_lower
        );
    }
}

#[test]
fn heterogeneous_gaussians_compose_to_one_gaussian() {
    // k1 mechanisms with μ1 and k2 with μ2 are one Gaussian with √(k1 μ1² + k2 μ2²).
    let parts: Vec<(Box<dyn LossLaw>, u64)> = vec![
        (Box::new(GaussianLaw::new(0.5).unwrap()), 300),
        (Box::new(GaussianLaw::new(2.0).unwrap()), 7),
        (Box::new(GaussianLaw::new(0.05).unwrap()), 100_000),
    ];
    let m = (300.0 * 0.25 + 7.0 * 4.0 + 1e5 * 0.0025f64).sqrt();
    let acc = Accountant::new(parts).unwrap();
    for d in [1e-6f64, 1e-60] {
        let exact = invert(|e| ln_gaussian_delta(e, m), d.ln(), 1e9);
        let a = acc.epsilon(d).unwrap();
        check_bracket("heterogeneous", a.lower, a.upper, exact, 1e-4);
    }
}

/// Laplace profile, Lap(0, b) against Lap(Δ, b), μ = Δ/b: `1 − e^{(ε−μ)/2}` on [0, μ],
/// 0 above, `1 − e^ε + e^ε δ(−ε)` below 0 (symmetric pair).
fn laplace_delta(eps: f64, mu: f64) -> f64 {
    if eps >= mu {
        0.0
    } else if eps >= 0.0 {
        -((eps - mu) / 2.0).exp_m1()
    } else {
        -eps.exp_m1() + eps.exp() * laplace_delta(-eps, mu)
    }
}

#[test]
fn laplace_one_and_two_fold_against_closed_form_and_quadrature() {
    let mu = 0.7;
    let law = ClippedLaplaceLaw::laplace(mu).unwrap();
    let one = Accountant::new(vec![(Box::new(law), 1)]).unwrap();
    for eps in [0.0, 0.1, 0.35, 0.69] {
        let a = one.delta(eps).unwrap();
        let exact = laplace_delta(eps, mu);
        assert!(
            a.lower <= exact && exact <= a.upper,
            "k=1 eps={eps}: {exact} vs [{}, {}]",
            a.lower,
            a.upper
        );
    }
    // Two-fold: δ₂(ε) = E[δ₁(ε − L)] with L the one-fold loss (atoms ±μ and density
    // e^{(ℓ−μ)/2}/4 on (−μ, μ)), by composite Simpson on 20000 panels (δ₁ is smooth
    // between its kinks; the error is far below the bracket's width).
    let two = Accountant::new(vec![(Box::new(law), 2)]).unwrap();
    for eps in [0.05, 0.4, 0.9, 1.3] {
        let mut exact =
            0.5 * laplace_delta(eps - mu, mu) + 0.5 * (-mu).exp() * laplace_delta(eps + mu, mu);
        let n = 20_000;
        let h = 2.0 * mu / n as f64;
        let f = |l: f64| ((l - mu) / 2.0).exp() / 4.0 * laplace_delta(eps - l, mu);
        let mut s = f(-mu) + f(mu);
        for i in 1..n {
            s += f(-mu + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
        }
        exact += s * h / 3.0;
        let a = two.delta(eps).unwrap();
        assert!(
            a.lower <= exact * (1.0 + 1e-9) && exact <= a.upper * (1.0 + 1e-9),
            "k=2 eps={eps}: {exact} vs [{}, {}]",
            a.lower,
            a.upper
        );
        assert!(a.upper / a.lower - 1.0 < 2e-3);
    }
}

/// k = 1000 Laplace mechanisms (ε₀ = 0.1414 each) between two exact closed forms: the
/// optimal composition of k ε₀-DP mechanisms (Kairouz–Oh–Viswanath; every ε₀-DP
/// mechanism's trade-off is at least randomized response's) above, and k-fold randomized
/// response with `ε₁ = ln(2e^{ε₀/2} − 1)` below (thresholding each output at half the
/// shift is a post-processing of Laplace that *is* that randomized response, whose
/// composition the same formula gives exactly). Replaces the comparison with the
/// fixed-grid accountant folded into this one (issue 32).
#[test]
fn laplace_many_fold_lies_between_two_randomized_responses() {
    let (eps0, k, d) = (1.0 / 7.0710678118654755, 1_000u64, 1e-6);
    let a = Accountant::new(vec![(
        Box::new(ClippedLaplaceLaw::laplace(eps0).unwrap()),
        k,
    )])
    .unwrap()
    .epsilon(d)
    .unwrap();
    let above = composition::dp_epsilon(k, eps0, d).unwrap();
    let eps1 = (2.0 * (0.5 * eps0).exp() - 1.0).ln();
    let below = composition::dp_epsilon(k, eps1, d).unwrap();
    assert!(
        below <= a.upper && a.lower <= above,
        "[{}, {}] vs RR(ε₁) {below} and RR(ε₀) {above}",
        a.lower,
        a.upper
    );
    // The closed forms are 3 % apart; the bracket is far narrower and strictly inside.
    assert!(below < a.lower && a.upper < above);
    assert!((a.upper - a.lower) / a.upper <= 1e-4);
}

/// `ln δ(ε)` of a single lattice law, directly.
fn lattice_ln_delta(l: &Lattice, eps: f64) -> f64 {
    let mut acc = l.ln_inf;
    for (i, &lp) in l.ln_pmf.iter().enumerate() {
        let x = l.loss(i);
        if x > eps && lp > f64::NEG_INFINITY {
            let t = lp + (-(eps - x).exp_m1()).ln();
            acc = if acc == f64::NEG_INFINITY {
                t
            } else {
                acc.max(t) + (-(acc - t).abs()).exp().ln_1p()
            };
        }
    }
    acc
}

/// `δ(ε) = ∫ (p − e^ε q)_+ dy` by composite 3-point Gauss–Legendre on `panels` panels
/// per piece, the pieces split at the given breakpoints (jumps of p or q) and at the
/// sign changes of `p − e^ε q` (kinks), so that the rule sees smooth pieces only and
/// never evaluates a jump.
fn hockey_quadrature(
    p: &dyn Fn(f64) -> f64,
    q: &dyn Fn(f64) -> f64,
    eps: f64,
    breaks: &[f64],
    panels: usize,
) -> f64 {
    let g = |y: f64| (p(y) - eps.exp() * q(y)).max(0.0);
    let sign = |y: f64| p(y) - eps.exp() * q(y) > 0.0;
    let mut pts: Vec<f64> = breaks.to_vec();
    for w in breaks.windows(2) {
        let n = 2000;
        let h = (w[1] - w[0]) / n as f64;
        for i in 0..n {
            // Consecutive scan points share their ends, so no sign change falls between.
            let (mut a, mut b) = (w[0] + i as f64 * h, w[0] + (i + 1) as f64 * h);
            if sign(a) != sign(b) {
                let sa = sign(a);
                for _ in 0..200 {
                    let m = 0.5 * (a + b);
                    if sign(m) == sa {
                        a = m;
                    } else {
                        b = m;
                    }
                }
                pts.push(0.5 * (a + b));
            }
        }
    }
    pts.sort_by(f64::total_cmp);
    let r = (0.6f64).sqrt();
    let mut s = 0.0;
    for w in pts.windows(2) {
        let h = (w[1] - w[0]) / panels as f64;
        for i in 0..panels {
            let c = w[0] + (i as f64 + 0.5) * h;
            s += h / 2.0
                * (5.0 / 9.0 * g(c - r * h / 2.0)
                    + 8.0 / 9.0 * g(c)
                    + 5.0 / 9.0 * g(c + r * h / 2.0));
        }
    }
    s
}

#[test]
fn each_discretisation_stays_on_its_side_of_the_exact_profile() {
    // Gaussian: exact profile in closed form.
    for mu in [0.01, 1.0, 50.0] {
        let law = GaussianLaw::new(mu).unwrap();
        for step in [mu / 8.0, mu / 40.0] {
            let up = Lattice::pessimistic(&law, step, -800.0, 1 << 22).unwrap();
            let lo = Lattice::optimistic(&law, step, -800.0, 1 << 22).unwrap();
            for z in [-3.0, -1.0, 0.0, 0.5, 2.0, 5.0, 20.0, 35.0] {
                let eps = 0.5 * mu * mu + z * mu;
                let exact = ln_gaussian_delta(eps, mu);
                // At grid points connect-the-dots is exact: allow the reference's own
                // rounding (1e-12 in ln δ).
                assert!(
                    lattice_ln_delta(&up, eps) >= exact - 1e-12,
                    "upper mu={mu} step={step} eps={eps}"
                );
                assert!(
                    lattice_ln_delta(&lo, eps) <= exact + 1e-12,
                    "lower mu={mu} step={step} eps={eps}"
                );
            }
        }
    }
    // Laplace and the truncated Laplacian: quadrature of the output densities.
    let tl = densities::truncated_laplace::TruncatedLaplace::new(1.0, 1e-3, 1.0).unwrap();
    let (lam, a) = (tl.lambda, tl.a);
    let norm = 2.0 * lam * (1.0 - (-tl.h).exp());
    let p_tl = move |y: f64| {
        if y.abs() <= a {
            (-y.abs() / lam).exp() / norm
        } else {
            0.0
        }
    };
    let q_tl = move |y: f64| p_tl(y - 1.0);
    let tl_law = ClippedLaplaceLaw::truncated_laplace(1.0, 1e-3, 1.0).unwrap();
    for step in [0.05, 0.01] {
        let up = Lattice::pessimistic(&tl_law, step, -800.0, 1 << 22).unwrap();
        let lo = Lattice::optimistic(&tl_law, step, -800.0, 1 << 22).unwrap();
        for eps in [-0.5, 0.0, 0.3, 0.7, 0.99] {
            let exact = hockey_quadrature(
                &p_tl,
                &q_tl,
                eps,
                &[-a, 1.0 - a, 0.0, 1.0, a, 1.0 + a],
                20_000,
            );
            assert!(
                lattice_ln_delta(&up, eps).exp() >= exact * (1.0 - 1e-9),
                "tl upper eps={eps}"
            );
            assert!(
                lattice_ln_delta(&lo, eps).exp() <= exact * (1.0 + 1e-9),
                "tl lower eps={eps}"
            );
        }
    }
    // Bounded noise (power family, α = 2), R = 4, sensitivity 1.
    let fam = densities::bounded::BoundedFamily::power(2.0).unwrap();
    let bl = BoundedNoiseLaw::new(fam, 4.0, 1.0).unwrap();
    let z: f64 = {
        let n = 200_000;
        let h = 2.0 / n as f64;
        (1..n)
            .map(|i| (-fam.f(-1.0 + i as f64 * h)).exp())
            .sum::<f64>()
            * h
    };
    let pb = move |y: f64| {
        if y.abs() < 4.0 {
            (-fam.f(y / 4.0)).exp() / (4.0 * z)
        } else {
            0.0
        }
    };
    let qb = move |y: f64| pb(y - 1.0);
    for step in [0.05, 0.01] {
        let up = Lattice::pessimistic(&bl, step, -800.0, 1 << 22).unwrap();
        let lo = Lattice::optimistic(&bl, step, -800.0, 1 << 22).unwrap();
        for eps in [0.0, 0.2, 0.5, 1.0, 2.0] {
            let exact = hockey_quadrature(&pb, &qb, eps, &[-4.0, -3.0, 4.0, 5.0], 200_000);
            assert!(
                lattice_ln_delta(&up, eps).exp() >= exact * (1.0 - 1e-7),
                "bounded upper eps={eps}"
            );
            assert!(
                lattice_ln_delta(&lo, eps).exp() <= exact * (1.0 + 1e-7),
                "bounded lower eps={eps}"
            );
        }
    }
}

#[test]
fn gaussian_cell_masses_match_normal_cdf_differences() {
    let mu = 1.3;
    let law = GaussianLaw::new(mu).unwrap();
    let m = 0.5 * mu * mu;
    for a in [-2.0, -0.3, 0.0, 0.77, 2.5] {
        let b = a + 0.02;
        let (lp, lm) = law.cell(a, b);
        let p = densities::normal::cdf((b - m) / mu) - densities::normal::cdf((a - m) / mu);
        // m(I) = P(I) − e^a Q(I), Q-law N(−m, μ²).
        let q = densities::normal::cdf((b + m) / mu) - densities::normal::cdf((a + m) / mu);
        let mm = p - a.exp() * q;
        assert!((lp.exp() / p - 1.0).abs() < 1e-12, "P at a={a}");
        assert!((lm.exp() / mm - 1.0).abs() < 1e-9, "m at a={a}");
    }
}

/// `ln(e^x − e^y)` for `x > y`.
fn ln_sub(x: f64, y: f64) -> f64 {
    x + (-(y - x).exp()).ln_1p()
}

/// `ln(e^x + e^y)`.
fn ln_plus(x: f64, y: f64) -> f64 {
    x.max(y) + (-(x - y).abs()).exp().ln_1p()
}

#[test]
fn subsampled_cells_far_in_the_tail_match_normal_cdf_differences() {
    use composition::accountant::sampling::subsampled::{Base, Direction, SubsampledLaw};
    use densities::normal::ln_cdf;
    // σ = 400: the cells at the bounded end of the loss range lie thousands of σ out,
    // where the density falls by e^{-y} per unit of y (8-point rules on pieces of 1/32
    // there were neither accurate nor cheap).
    let (mu, q) = (1.0 / 400.0, 1e-3);
    let law = SubsampledLaw::new(Base::Gaussian, mu, q, Direction::Remove).unwrap();
    let loss = |y: f64| (q * (mu * y - 0.5 * mu * mu).exp_m1()).ln_1p();
    for (y1, y2) in [
        (-50.0, -45.0),
        (-300.0, -41.0),
        (-2010.0, -2000.0),
        (-9000.0, -39.5),
    ] {
        let (lp, lm) = law.cell(loss(y1), loss(y2));
        // P = (1 − q)·N(0, 1) + q·N(μ, 1) in units of σ; Q = N(0, 1).
        let p0 = ln_sub(ln_cdf(y2), ln_cdf(y1));
        let p1 = ln_sub(ln_cdf(y2 - mu), ln_cdf(y1 - mu));
        let p = ln_plus((-q).ln_1p() + p0, q.ln() + p1);
        assert!(
            (lp - p).abs() < 1e-11 * p.abs().max(1.0),
            "P on [{y1}, {y2}]: {lp} vs {p}"
        );
        // m = P − e^a·Q = q·P1 − (e^a − 1 + q)·P0, with e^a − 1 + q = q·e^{g(y1)}.
        let ga = mu * y1 - 0.5 * mu * mu;
        let m = ln_sub(q.ln() + p1, q.ln() + ga + p0);
        assert!(
            (lm - m).abs() < 1e-8 * m.abs().max(1.0),
            "m on [{y1}, {y2}]: {lm} vs {m}"
        );
    }
}

#[test]
fn truncated_laplace_composition_refuses_delta_below_its_infinite_atom() {
    let s: MechanismSpec = "truncated-laplace:epsilon=1,delta=1e-6,count=100"
        .parse()
        .unwrap();
    let acc = Composition::of(&[s]).unwrap();
    let err = acc.epsilon(1e-5).unwrap_err().to_string();
    assert!(err.contains("unreachable"), "{err}");
    // Above the atom it answers: 100 mechanisms, each (1, 1e-6)-DP, at δ = 1e-3.
    let a = acc.epsilon(1e-3).unwrap();
    assert!(a.upper <= 100.0 && a.lower > 0.0);
}

#[test]
fn spec_language_parses_and_refuses_in_one_line() {
    let ok = [
        "gaussian:sigma=2",
        "laplace:scale=0.5,sensitivity=2,count=1e4",
        "rr:epsilon=1",
        "truncated-laplace:epsilon=1,delta=1e-6",
        "bounded:family=power,alpha=2,radius=10",
        "bounded:family=exp,radius=10,count=100",
    ];
    for s in ok {
        assert!(s.parse::<MechanismSpec>().is_ok(), "{s}");
    }
    let bad = [
        ("gauss:sigma=1", "unknown mechanism kind"),
        ("gaussian:sigma=0", "sigma"),
        ("gaussian", "missing key 'sigma'"),
        ("gaussian:sigma=1,scale=2", "unknown key 'scale'"),
        ("gaussian:sigma=1,count=1.5", "count"),
        ("gaussian:sigma=1,count=2e10", "count"),
        ("gaussian:sigma=1e-300", "sensitivity/sigma"),
        ("rr:epsilon=800", "epsilon"),
        ("truncated-laplace:epsilon=1,delta=1", "delta"),
        ("bounded:family=power,radius=1", "alpha"),
        ("bounded:family=cubic,radius=1", "family"),
        ("laplace:scale=nan", "not a finite number"),
        ("laplace:scale", "not key=value"),
    ];
    for (s, want) in bad {
        let e = s.parse::<MechanismSpec>().unwrap_err().0;
        assert!(e.contains(want) && !e.contains('\n'), "{s}: {e}");
    }
}

#[test]
fn least_radius_bracket_contains_the_one_query_quadrature() {
    use composition::accountant::least_radius_bracket;
    let fam = densities::bounded::BoundedFamily::power(2.0).unwrap();
    // k = 1: δ(ε; R) by quadrature of the output densities, bisected on R.
    let (eps, delta) = (1.0, 1e-6);
    let b = least_radius_bracket(fam, 1, eps, delta, 80.0, 1e-3).unwrap();
    let z: f64 = {
        let n = 200_000;
        let h = 2.0 / n as f64;
        (1..n)
            .map(|i| (-fam.f(-1.0 + i as f64 * h)).exp())
            .sum::<f64>()
            * h
    };
    let delta_of = |r: f64| {
        let p = move |y: f64| {
            if y.abs() < r {
                (-fam.f(y / r)).exp() / (r * z)
            } else {
                0.0
            }
        };
        let q = move |y: f64| p(y - 1.0);
        hockey_quadrature(&p, &q, eps, &[-r, 1.0 - r, r, 1.0 + r], 20_000)
    };
    assert!(
        delta_of(b.upper) <= delta * (1.0 + 1e-6),
        "upper R {} leaks {}",
        b.upper,
        delta_of(b.upper)
    );
    assert!(
        delta_of(b.lower) >= delta * (1.0 - 1e-6),
        "lower R {} leaks only {}",
        b.lower,
        delta_of(b.lower)
    );
}

/// Mixture density of a Poisson-subsampled Gaussian (σ = 1, shift μ, rate q).
fn mix(y: f64, mu: f64, q: f64) -> f64 {
    let phi = |x: f64| (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
    (1.0 - q) * phi(y) + q * phi(y - mu)
}

#[test]
fn subsampled_gaussian_one_step_matches_quadrature_in_both_directions() {
    let (mu, q) = (1.0, 0.2);
    let s: MechanismSpec = format!("subsampled-gaussian:sigma={},q={q}", 1.0 / mu)
        .parse()
        .unwrap();
    let acc = Composition::of(&[s]).unwrap();
    let phi = |y: f64| mix(y, mu, 0.0);
    let m = |y: f64| mix(y, mu, q);
    for eps in [0.0, 0.05, 0.1, 0.3] {
        let remove = hockey_quadrature(&m, &phi, eps, &[-40.0, 41.0], 40_000);
        let add = hockey_quadrature(&phi, &m, eps, &[-40.0, 41.0], 40_000);
        let exact = remove.max(add);
        // The direction that stays below the other is not refined further (its bracket
        // cannot move the max): the bracket of the max must still hold, accuracy met.
        let a = acc.delta(eps).unwrap();
        assert!(a.accuracy_met, "eps={eps}: {a:?}");
        assert!(
            a.lower <= exact * (1.0 + 1e-9) && exact <= a.upper * (1.0 + 1e-9),
            "eps={eps}: remove {remove} add {add} vs [{}, {}]",
            a.lower,
            a.upper
        );
    }
}

#[test]
fn subsampled_gaussian_two_steps_match_a_two_dimensional_quadrature() {
    let (mu, q, eps) = (1.0, 0.2, 0.3);
    let s: MechanismSpec = format!("subsampled-gaussian:sigma=1,q={q},count=2")
        .parse()
        .unwrap();
    let a = Composition::of(&[s]).unwrap().delta(eps).unwrap();
    // δ of the product pair by the midpoint rule on [−10, 11]², both directions.
    let n = 3000;
    let (lo, hi) = (-10.0, 11.0);
    let h = (hi - lo) / n as f64;
    let ys: Vec<f64> = (0..n).map(|i| lo + (i as f64 + 0.5) * h).collect();
    let m: Vec<f64> = ys.iter().map(|&y| mix(y, mu, q)).collect();
    let b: Vec<f64> = ys.iter().map(|&y| mix(y, mu, 0.0)).collect();
    let e = eps.exp();
    let (mut remove, mut add) = (0.0, 0.0);
    for i in 0..n {
        for j in 0..n {
            remove += (m[i] * m[j] - e * b[i] * b[j]).max(0.0);
            add += (b[i] * b[j] - e * m[i] * m[j]).max(0.0);
        }
    }
    let exact = remove.max(add) * h * h;
    assert!(
        a.lower * (1.0 - 1e-4) <= exact && exact <= a.upper * (1.0 + 1e-4),
        "{exact} vs [{}, {}]",
        a.lower,
        a.upper
    );
}

#[test]
fn subsampling_at_rate_one_is_the_plain_mechanism() {
    for (sub, plain) in [
        (
            "subsampled-gaussian:sigma=2,q=1,count=100",
            "gaussian:sigma=2,count=100",
        ),
        (
            "subsampled-laplace:scale=3,q=1,count=100",
            "laplace:scale=3,count=100",
        ),
    ] {
        let a = Composition::of(&[sub.parse().unwrap()])
            .unwrap()
            .epsilon(1e-8)
            .unwrap();
        let b = Composition::of(&[plain.parse().unwrap()])
            .unwrap()
            .epsilon(1e-8)
            .unwrap();
        assert!(
            a.lower <= b.upper && b.lower <= a.upper,
            "{sub}: {a:?} vs {b:?}"
        );
        assert!((a.upper - a.lower) / a.upper <= 1e-4);
    }
}

/// The certified ε(δ) bracket of one SPEC at the given accuracy.
fn epsilon_of(spec: &str, accuracy: f64, delta: f64) -> composition::accountant::Answer {
    let s: MechanismSpec = spec.parse().unwrap();
    Composition::of(&[s])
        .unwrap()
        .with_accuracy(accuracy)
        .unwrap()
        .epsilon(delta)
        .unwrap()
}

/// The first grid step of DP-SGD with few expected sampled uses (σ = 0.6, q = 1e-3,
/// T = 3000 and 1e4: 3 and 10 of them, δ = 1e-6, the default accuracy 1e-4) is coarse
/// enough that its bracket is within 7× of the accuracy asked, and still meets it. From the
/// loss's standard deviation alone (set by its log-normal tail) the bracket came out
/// 11.7× and 7.1× narrower than asked: a first step needlessly fine, its window 2–3×
/// the bins. Fails if the step scale falls back to the standard deviation, and if it is
/// so coarse that the accuracy is missed.
#[test]
fn few_sampled_uses_start_on_a_step_the_accuracy_needs() {
    for t in ["3000", "1e4"] {
        let a = epsilon_of(
            &format!("subsampled-gaussian:sigma=0.6,q=1e-3,count={t}"),
            1e-4,
            1e-6,
        );
        let width = (a.upper - a.lower) / a.upper;
        assert!(a.accuracy_met && width <= 1e-4, "T = {t}: {a:?}");
        assert!(width >= 1e-4 / 7.0, "T = {t}: width {width:e}, {a:?}");
    }
}

/// DP-SGD's usual question (q = 0.01, σ = 1, T = 1e4, δ = 1e-5; issue 14) against another
/// library: Google's dp_accounting 0.6.0 (pip, in a virtualenv outside the repository), its
/// privacy-loss-distribution accountant with add/remove neighbours (both directions),
/// pessimistic connect-the-dots discretisation at interval 1e-5:
/// `pld = dp_accounting.pld.privacy_loss_distribution.from_gaussian_mechanism(1.0,
/// pessimistic_estimate=True, value_discretization_interval=1e-5, sampling_prob=0.01)`;
/// `pld.self_compose(10000).get_epsilon_for_delta(1e-5)` gives 6.187712729102017 (at
/// intervals 1e-4 and 3e-5: 6.18774497574583 and 6.1877153343492095, so it has converged to
/// within about 3e-6 from above). The certified bracket must hold it (up to that 1e-6
/// relative) and be 1e-3 narrow (it was only asked to lie in (1, 10)). Catches a direction
/// dropped from the maximum (the add direction alone gives [5.6085, 5.6130]), and any
/// shift of the bracket by more than its width (1.3e-4 relative; 1 % in ε fails).
#[test]
fn dp_sgd_subsampled_gaussian_bracket_holds_dp_accountings_value() {
    let a = epsilon_of("subsampled-gaussian:sigma=1,q=0.01,count=1e4", 1e-3, 1e-5);
    let reference = 6.187712729102017;
    assert!((a.upper - a.lower) / a.upper <= 1e-3, "{a:?}");
    assert!(
        a.lower <= reference && reference <= a.upper * (1.0 + 1e-6),
        "{a:?} vs dp_accounting's {reference}"
    );
}

#[test]
fn rdp_of_the_subsampled_gaussian_matches_quadrature_and_bounds_the_exact_epsilon() {
    use composition::rdp::{subsampled_gaussian_epsilon, subsampled_gaussian_rdp};
    // One step: D_α(M‖B) = ln ∫ M^α B^{1−α} dy / (α − 1), by the midpoint rule.
    let (q, sigma) = (0.05, 1.5);
    for alpha in [2u32, 3, 8] {
        // In units of σ: B = N(0, 1), M/B = 1 − q + q e^{μx − μ²/2}, μ = 1/σ.
        let mu = 1.0 / sigma;
        let n = 400_000;
        let (lo, hi) = (-40.0, 40.0 + mu);
        let h = (hi - lo) / n as f64;
        let mut s = 0.0;
        for i in 0..n {
            let x = lo + (i as f64 + 0.5) * h;
            let ln_b = -0.5 * x * x - 0.5 * (2.0 * std::f64::consts::PI).ln();
            let ratio = 1.0 - q + q * (mu * x - 0.5 * mu * mu).exp();
            s += (ln_b + alpha as f64 * ratio.ln()).exp() * h;
        }
        let quad = s.ln() / (alpha - 1) as f64;
        let r = subsampled_gaussian_rdp(q, sigma, alpha).unwrap();
        assert!(
            (r / quad - 1.0).abs() < 1e-6,
            "alpha={alpha}: {r} vs {quad}"
        );
    }
    // The certified exact ε never exceeds the RDP bound.
    for (sigma, t) in [(0.8, 300u64), (1.0, 3_000), (2.0, 10_000)] {
        let a = epsilon_of(
            &format!("subsampled-gaussian:sigma={sigma},q=0.01,count={t}"),
            1e-3,
            1e-5,
        );
        let rdp = subsampled_gaussian_epsilon(0.01, sigma, t, 1e-5).unwrap();
        assert!(
            a.upper < rdp,
            "sigma={sigma} T={t}: exact {} vs RDP {rdp}",
            a.upper
        );
    }
}

#[test]
fn mutated_specs_are_parsed_or_refused_without_panic() {
    // Deterministic mutations (a small LCG) of valid SPECs: replace a value by a hostile
    // one, drop or duplicate a key, cut the text. Every outcome is Ok (with a law that
    // builds) or a one-line error naming something; none panics.
    let seeds = [
        "gaussian:sigma=2,count=1000",
        "laplace:scale=0.5,sensitivity=2",
        "rr:epsilon=1,count=1e4",
        "truncated-laplace:epsilon=1,delta=1e-6",
        "bounded:family=power,alpha=2,radius=10",
        "bounded:family=exp,radius=10",
        "subsampled-gaussian:sigma=1,q=0.01,count=1e4",
        "subsampled-laplace:scale=2,q=0.1",
    ];
    let hostile = [
        "0", "-1", "1e308", "1e-320", "5e-324", "nan", "inf", "-inf", "", "1e10", "1e11", "0.5",
        "2", "1.5", "abc", "1e-300", "700", "701", "1e3", "=", ",",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % n
    };
    let mut cases = 0;
    for _ in 0..4000 {
        let seed = seeds[next(seeds.len())];
        let (kind, rest) = seed.split_once(':').unwrap();
        let mut pairs: Vec<String> = rest.split(',').map(String::from).collect();
        match next(4) {
            0 => {
                let i = next(pairs.len());
                let key = pairs[i].split('=').next().unwrap().to_string();
                pairs[i] = format!("{key}={}", hostile[next(hostile.len())]);
            }
            1 => {
                let i = next(pairs.len());
                pairs.remove(i);
            }
            2 => {
                let i = next(pairs.len());
                let p = pairs[i].clone();
                pairs.push(p);
            }
            _ => {
                let i = next(pairs.len());
                pairs.push(format!("count={}", hostile[next(hostile.len())]));
                pairs.swap(0, i);
            }
        }
        let mut text = format!("{kind}:{}", pairs.join(","));
        if next(10) == 0 {
            let cut = next(text.len() + 1);
            text.truncate(cut);
        }
        match text.parse::<MechanismSpec>() {
            Ok(s) => {
                let (a, _) = s.laws().expect("a parsed SPEC builds its law");
                assert!(a.loss_scale().is_finite() && a.loss_scale() > 0.0, "{text}");
            }
            Err(e) => assert!(!e.0.is_empty() && !e.0.contains('\n'), "{text}: {e:?}"),
        }
        cases += 1;
    }
    assert_eq!(cases, 4000);
}

/// Tiny δ for wide bounded noise: the loss law's upper tail, which falls super-exponentially
/// until the loss nears the overlap's edge, is followed down to the tail the accountant
/// asks for (it used to be cut at 1e4 loss scales, leaving a `+∞` atom of about 2e-128 per
/// query whatever the radius, so every δ below 1e-122 at k = 1e6 was unreachable).
///
/// Independent routes: the cut mass against a Simpson quadrature of the density in x; the
/// accountant's ε at δ = 1e-126 against Dagan–Kur's certified (Chernoff) radius, which is
/// sufficient by a separate proof (at it the lower ε must be at most ε, a one-sided check
/// that a lower end up to 0.8 % too high here would pass); and both ends against the
/// saddle-point ε from a quadrature of one use's loss law
/// ([`power2_saddle_point_epsilon`], accurate to about 1e-8 here), which the bracket
/// (1e-3 wide at most) must hold. Catches a bracket shifted by 0.5 % either way (both
/// fail), an upper end below the truth, and a lower end above it.
#[test]
fn wide_bounded_noise_reaches_delta_1e_minus_126() {
    let fam = densities::bounded::BoundedFamily::power(2.0).unwrap();
    let (k, eps, delta) = (1_000_000u64, 0.1, 1e-126);
    let cert = dagan_kur_radius(fam, k, eps, delta);
    let law = BoundedNoiseLaw::new(fam, cert, 1.0).unwrap();
    // The tail the accountant asks for at this δ (docs/accountant.md §5).
    let ln_tail = delta.ln() - (k as f64).ln() - 12.0;
    let range = law.continuous_range(ln_tail).unwrap();
    assert!(
        range.ln_above <= ln_tail + 1.0,
        "upper tail cut at e^{} for a target e^{ln_tail}",
        range.ln_above
    );
    // The cut mass P(L > hi) = P(X < x(hi)) by Simpson in x, in log space relative to the
    // density at the right end (the loss decreases in x).
    let r = 1.0 / cert;
    let loss = |x: f64| fam.f(x - r) - fam.f(x);
    let (mut a, mut b) = (r - 1.0 + 1e-15, 0.0);
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if loss(m) > range.hi {
            a = m;
        } else {
            b = m;
        }
    }
    let x_hi = b;
    let ln_z = {
        let m = 200_000;
        let hz = 2.0 / m as f64;
        ((1..m)
            .map(|i| (-fam.f(-1.0 + i as f64 * hz)).exp())
            .sum::<f64>()
            * hz)
            .ln()
    };
    let ln_cut = ln_simpson(&|x| -fam.f(x), r - 1.0, x_hi, 20_000) - ln_z;
    assert!(
        ln_cut <= range.ln_above + 1e-6,
        "cut mass e^{ln_cut} above its bound e^{}",
        range.ln_above
    );
    // ε at δ = 1e-126 with the certified radius: answered, and consistent with it.
    let acc = Accountant::new(vec![(Box::new(law), k)])
        .unwrap()
        .with_accuracy(1e-3)
        .unwrap();
    let e = acc.epsilon(delta).unwrap();
    assert!(e.lower <= e.upper && e.upper.is_finite(), "{e:?}");
    assert!(
        e.lower <= eps,
        "certified radius {cert}: accountant ε ≥ {}",
        e.lower
    );
    assert!((e.upper - e.lower) / e.upper <= 1e-3, "{e:?}");
    // The saddle-point value (measured 0.0992595 in [0.099205, 0.099287]).
    let spa = power2_saddle_point_epsilon(cert, k, delta);
    assert!(
        e.lower <= spa * (1.0 + 1e-6) && spa <= e.upper * (1.0 + 1e-6),
        "R {cert}: saddle-point ε {spa} outside {e:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Saddle-point references for power(2) bounded noise, from a quadrature of one use's loss
// law in the noise's own coordinate. They share no code with the accountant (their own f,
// loss, nodes and moments; no lattice, FFT or tilted window).

/// `f(x) = (1 − x²)^{−2}` of the power(2) family, written out.
fn power2_f(x: f64) -> f64 {
    (1.0 - x * x).powi(-2)
}

/// One use's loss at shift r: `f(x − r) − f(x) = r(r − 2x)(a + b)/(a²b²)` with
/// `a = 1 − x²`, `b = 1 − (x − r)²` (no cancellation), falling in x, `+∞` where
/// `x − r ≤ −1`.
fn power2_loss(x: f64, r: f64) -> f64 {
    let (a, b) = (1.0 - x * x, 1.0 - (x - r) * (x - r));
    if b > 0.0 {
        r * (r - 2.0 * x) * (a + b) / (a * a * b * b)
    } else {
        f64::INFINITY
    }
}

/// Composite Simpson nodes `(x, ln(weight·e^{−f(x)}))` on `[a, b]`, `panels` even.
fn power2_simpson(a: f64, b: f64, panels: usize) -> Vec<(f64, f64)> {
    let h = (b - a) / panels as f64;
    (0..=panels)
        .map(|i| {
            let x = a + i as f64 * h;
            let w = if i == 0 || i == panels {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            (x, (w * h / 3.0).ln() - power2_f(x))
        })
        .collect()
}

/// `ln Σ e^{v}`.
fn log_sum(v: &[f64]) -> f64 {
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + v.iter().map(|t| (t - m).exp()).sum::<f64>().ln()
}

/// `(K, K′, K″)` at λ of the (sub-probability) law with atoms `(ln mass, loss)`.
fn tilted_moments(law: &[(f64, f64)], lam: f64) -> (f64, f64, f64) {
    let e: Vec<f64> = law.iter().map(|&(lm, l)| lm + lam * l).collect();
    let m = e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (mut s0, mut s1) = (0.0, 0.0);
    for (&t, &(_, l)) in e.iter().zip(law) {
        let p = (t - m).exp();
        s0 += p;
        s1 += p * l;
    }
    let mean = s1 / s0;
    let var = e
        .iter()
        .zip(law)
        .map(|(&t, &(_, l))| (t - m).exp() * (l - mean) * (l - mean))
        .sum::<f64>()
        / s0;
    (m + s0.ln(), mean, var)
}

/// Saddle-point `ln δ` of the m-fold composition of `law` at tilt λ, with the ε it
/// belongs to (`mK′(λ)`): the tilted sum taken as normal about ε with `s² = mK″(λ)`,
/// `δ ≈ e^{mK(λ) − λε}(e^{λ²s²/2}Φ(−λs) − e^{(λ+1)²s²/2}Φ(−(λ+1)s))` (the Gaussian
/// integral of `e^{−λu}(1 − e^{−u})` over u > 0, in log space).
fn saddle_point(law: &[(f64, f64)], m: f64, lam: f64) -> (f64, f64) {
    use densities::normal::ln_cdf;
    let (k0, k1, k2) = tilted_moments(law, lam);
    let (eps, s) = (m * k1, (m * k2).sqrt());
    let a = 0.5 * (lam * s).powi(2) + ln_cdf(-lam * s);
    let b = 0.5 * ((lam + 1.0) * s).powi(2) + ln_cdf(-(lam + 1.0) * s);
    (eps, m * k0 - lam * eps + a + (-(b - a).exp()).ln_1p())
}

/// The normalised law of one use on `[a, b]` as atoms `(ln mass, loss)`.
fn power2_law(a: f64, b: f64, panels: usize, r: f64, ln_z: f64) -> Vec<(f64, f64)> {
    power2_simpson(a, b, panels)
        .into_iter()
        .map(|(x, lw)| (lw - ln_z, power2_loss(x, r)))
        .collect()
}

/// `ln Z = ln ∫ e^{−f}` and the x below which one use holds the mass `e^{ln_p}` (the
/// loss above it exceeds the loss there).
fn power2_norm_and_level(ln_p: f64) -> (f64, f64) {
    let all = power2_simpson(-1.0 + 1e-12, 1.0 - 1e-12, 200_000);
    let ln_z = log_sum(&all.iter().map(|p| p.1).collect::<Vec<_>>());
    let mut acc = f64::NEG_INFINITY;
    for &(x, lw) in &all {
        acc = log_sum(&[acc, lw - ln_z]);
        if acc > ln_p {
            return (ln_z, x);
        }
    }
    (ln_z, 1.0)
}

/// ε at δ of k uses of power(2) bounded noise at radius `radius` (sensitivity 1) by the
/// saddle-point approximation ([`saddle_point`]) of one use's law below the level `c` with
/// `P(L > c) = δ·e^{−23}/k` (the losses above can change δ by at most `k·P(L > c)`, e^{−23}
/// of it), λ by bisection. Valid where one tilt describes the composition (large k, the
/// tilted law near-normal): at k = 1e6, R = 9.2e5, δ = 1e-126 the standardised skewness
/// of the tilted sum is 7.6e-4 and its excess kurtosis 3.4e-5, which move δ by about 1e-5
/// relative and ε by about 2e-9 (ln δ falls with slope λ ≈ 5600); halving the panels or
/// moving the level by 17 nats changes ε by less than 1e-12.
fn power2_saddle_point_epsilon(radius: f64, k: u64, delta: f64) -> f64 {
    let (r, kf, ln_delta) = (1.0 / radius, k as f64, delta.ln());
    let (ln_z, x_c) = power2_norm_and_level(ln_delta - kf.ln() - 23.0);
    let law = power2_law(x_c, 1.0 - 1e-12, 200_000, r, ln_z);
    let (mut lo, mut hi) = (1.0f64, 1e6f64);
    for _ in 0..80 {
        let m = (lo * hi).sqrt();
        if saddle_point(&law, kf, m).1 > ln_delta {
            lo = m;
        } else {
            hi = m;
        }
    }
    saddle_point(&law, kf, (lo * hi).sqrt()).0
}

/// `ln δ(ε)` of k uses of power(2) bounded noise at radius `radius` where one tilt does not
/// describe the composition (the mixed regime, docs/accountant.md §4.1): the law is split at
/// the mass level `c` with `k·P(L > c) = s = √(2δ)e^{−15}` (δ the target) into a body
/// (losses ≤ c) and a tail, and `δ(ε) = δ[B^k](ε) + k·E[δ[B^{k−1}](ε − L); L > c] + R₂`
/// with `0 ≤ R₂ ≤ s²/2 = e^{−30}δ` (dropped). Both body terms are saddle-point values
/// ([`saddle_point`], λ by bisection for the first; a table of 400 tilts from 0 to the
/// tilt of `ε − c`, interpolated linearly in ε, for the second); the tail expectation is
/// a Simpson sum over the noise coordinate of the tail (10⁴ panels, down to where the
/// density is e^{−300} of its value at the level). Tail points whose ε − L lies below the
/// body's mean (a jump beyond ε: 2e-10 of the sum at k = 3e4, 7e-4 at k = 1e4) take the
/// untilted body sum as normal.
///
/// At k = 3e4, R = 6e4, δ = 1e-126 it puts the exact ε at 0.3511543 (by interpolating
/// ln δ between two ε); levels 10 nats lower or higher, and 5× the panels, move that by
/// less than 3e-8 relative. The likeliest jump is near y = 0.27, where the body's tilted
/// sum (λ ≈ 600, λs ≈ 7) has standardised skewness below 0.01: about 5e-4 in ln δ and
/// 1e-6 in ε.
fn power2_one_jump_ln_delta(radius: f64, k: u64, eps: f64, ln_target: f64) -> f64 {
    let (r, kf) = (1.0 / radius, k as f64);
    let ln_s = 0.5 * (2f64.ln() + ln_target) - 15.0;
    let (ln_z, x_c) = power2_norm_and_level(ln_s - kf.ln());
    let c = power2_loss(x_c, r);
    let body = power2_law(x_c, 1.0 - 1e-12, 40_000, r, ln_z);
    // The tail from where the density is e^{−300} of its value at the level.
    let (mut a, mut b) = ((r - 1.0).max(-1.0) + 1e-15, x_c);
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if power2_f(m) > power2_f(x_c) + 300.0 {
            a = m;
        } else {
            b = m;
        }
    }
    let tail = power2_law(a, x_c, 10_000, r, ln_z);
    // The tilt λ ≥ 0 with mK′(λ) = e (0 if e is below the mean; +∞ beyond m·c).
    let tilt_for = |m: f64, e: f64| -> f64 {
        if saddle_point(&body, m, 0.0).0 >= e {
            return 0.0;
        }
        if m * c <= e {
            return f64::INFINITY;
        }
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        while saddle_point(&body, m, hi).0 < e {
            lo = hi;
            hi *= 2.0;
        }
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if saddle_point(&body, m, mid).0 < e {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    };
    let all_body = saddle_point(&body, kf, tilt_for(kf, eps)).1;
    let m = kf - 1.0;
    let top = 1.05 * tilt_for(m, eps - c) + 5.0;
    let table: Vec<(f64, f64)> = (0..=400)
        .map(|i| saddle_point(&body, m, top * i as f64 / 400.0))
        .collect();
    // Below the body's mean (where a tilt would be negative) the untilted sum is taken as
    // normal: with d = mean − e ≥ 0, δ ≈ mass·(Φ(d/s) − e^{s²/2 − d}Φ(d/s − s)).
    let (k0, k1, k2) = tilted_moments(&body, 0.0);
    let (mean, sd) = (m * k1, (m * k2).sqrt());
    let below_mean = |e: f64| -> f64 {
        use densities::normal::ln_cdf;
        let (d, s) = (mean - e, sd);
        let a = ln_cdf(d / s);
        let b = 0.5 * s * s - d + ln_cdf(d / s - s);
        m * k0 + a + (-(b - a).exp()).ln_1p()
    };
    let terms: Vec<f64> = tail
        .iter()
        .map(|&(lm, l)| {
            let e = eps - l;
            let ln_d = if e <= table[0].0 {
                below_mean(e)
            } else {
                let j = table.partition_point(|p| p.0 < e).min(table.len() - 1);
                let (p, q) = (table[j - 1], table[j]);
                p.1 + (q.1 - p.1) * (e - p.0) / (q.0 - p.0)
            };
            lm + ln_d
        })
        .collect();
    log_sum(&[all_body, kf.ln() + log_sum(&terms)])
}

/// Dagan–Kur's certified radius (mgf's Chernoff bound): sufficient by a proof separate
/// from the accountant's.
fn dagan_kur_radius(fam: densities::bounded::BoundedFamily, k: u64, eps: f64, delta: f64) -> f64 {
    let noise = mgf::BoundedNoise::new(fam).unwrap();
    mgf::certified_radius(&noise, k as f64, eps, delta)
        .unwrap()
        .radius
}

/// `ln ∫_a^b e^{g(x)} dx` by composite Simpson with `n` (even) panels, in log space.
fn ln_simpson(g: &dyn Fn(f64) -> f64, a: f64, b: f64, n: usize) -> f64 {
    let h = (b - a) / n as f64;
    let vals: Vec<f64> = (0..=n).map(|i| g(a + i as f64 * h)).collect();
    let m = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let s: f64 = vals
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let w = if i == 0 || i == n {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            w * (v - m).exp()
        })
        .sum();
    m + (s * h / 3.0).ln()
}

/// δ(ε) of one use of bounded noise `power(2)` at radius `radius`, by quadrature in the
/// noise's own coordinate: the loss `L(x) = f(x − r) − f(x)` falls in x, so
/// `δ(ε) = ∫_{−1}^{x_ε} p(x)(1 − e^{ε − L(x)}) dx` with `L(x_ε) = ε` (the part below
/// `r − 1`, where the shifted density vanishes, counts in full).
fn bounded_single_ln_delta(radius: f64, eps: f64) -> f64 {
    let fam = densities::bounded::BoundedFamily::power(2.0).unwrap();
    let r = 1.0 / radius;
    let loss = |x: f64| fam.f(x - r) - fam.f(x);
    let (mut a, mut b) = (r - 1.0 + 1e-15, 0.5 * r);
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if loss(m) > eps {
            a = m;
        } else {
            b = m;
        }
    }
    let x_eps = a;
    let ln_z = ln_simpson(&|x| -fam.f(x), -1.0 + 1e-9, 1.0 - 1e-9, 400_000);
    let edge = ln_simpson(&|x| -fam.f(x), -1.0 + 1e-9, r - 1.0, 2_000);
    // Simpson in panels on a grid fine against the density's scale 1/f'(x_ε).
    let part = ln_simpson(
        &|x: f64| {
            let l = loss(x);
            if l <= eps {
                f64::NEG_INFINITY
            } else {
                -fam.f(x) + (-(eps - l).exp_m1()).ln()
            }
        },
        r - 1.0,
        x_eps,
        400_000,
    );
    let (hi, lo) = if part > edge {
        (part, edge)
    } else {
        (edge, part)
    };
    hi + (lo - hi).exp().ln_1p() - ln_z
}

/// One use of bounded noise at δ = 1e-60 and 1e-250, where the loss tail is log-convex
/// and a tilted FFT cannot resolve δ (its bracket was [0.53, 5.7] at δ = 1e-60, R = 1000):
/// the accountant's ε bracket against a quadrature of δ(ε) in the noise's coordinate
/// (docs/accountant.md §4.1). The quadrature's δ at the bracket's ends must straddle the
/// target, and the bracket must meet the accuracy.
#[test]
fn single_bounded_use_at_tiny_delta_matches_quadrature() {
    let fam = densities::bounded::BoundedFamily::power(2.0).unwrap();
    for &(radius, delta) in &[(1000.0, 1e-60), (1000.0, 1e-250)] {
        let law = BoundedNoiseLaw::new(fam, radius, 1.0).unwrap();
        let acc = Accountant::new(vec![(Box::new(law), 1)]).unwrap();
        let e = acc.epsilon_ln(f64::ln(delta)).unwrap();
        assert!(e.accuracy_met, "R {radius} δ {delta}: {e:?}");
        assert!((e.upper - e.lower) / e.upper <= 1e-4, "{e:?}");
        let lnd = delta.ln();
        let at_hi = bounded_single_ln_delta(radius, e.upper);
        let at_lo = bounded_single_ln_delta(radius, e.lower);
        assert!(
            at_hi <= lnd + 1e-6 && at_lo >= lnd - 1e-6,
            "R {radius} δ {delta}: quadrature ln δ {at_lo} at ε {} and {at_hi} at ε {} vs {lnd}",
            e.lower,
            e.upper
        );
    }
}

/// A refinement that no longer narrows the bracket stops (docs/accountant.md §6): one use
/// of bounded noise at R = 6.58, δ = 1e-6, where ε ≈ 600 and the bracket [538, 715] is
/// set by the mass above the law's cut range (charged to `+∞`), not by the step. It used
/// to refine from a step of 0.03 to 5e-4 (20 s, 1.2 GB) for the same bracket; now it stops
/// after the first finer step that does not narrow it, saying that the accuracy was not
/// met. Its work is at most 1.5e7 bins (1.0e7 now; 2.8e7 with the refinement that did not
/// pay), and the bracket still holds the quadrature's ε. Fails on a loop that refines regardless, and on
/// a stop that reports the accuracy as met.
#[test]
fn refinement_stops_when_a_finer_step_no_longer_narrows() {
    let fam = densities::bounded::BoundedFamily::power(2.0).unwrap();
    let law = BoundedNoiseLaw::new(fam, 6.58, 1.0).unwrap();
    let work = composition::accountant::Work::new(None);
    let acc = Accountant::new(vec![(Box::new(law), 1)])
        .unwrap()
        .with_accuracy(1e-2)
        .unwrap()
        .with_work(work.clone());
    let e = acc.epsilon(1e-6).unwrap();
    assert!(!e.accuracy_met, "{e:?}");
    assert!((e.upper - e.lower) / e.upper > 0.1, "{e:?}");
    assert!(work.done() <= 1.5e7 as u64, "work {}", work.done());
    let lnd = 1e-6f64.ln();
    let (at_lo, at_hi) = (
        bounded_single_ln_delta(6.58, e.lower),
        bounded_single_ln_delta(6.58, e.upper),
    );
    assert!(
        at_lo >= lnd - 1e-6 && at_hi <= lnd + 1e-6,
        "quadrature ln δ {at_lo} at ε {} and {at_hi} at ε {} vs {lnd}",
        e.lower,
        e.upper
    );
}

/// δ(ε) questions where δ is tiny and bounded noise is far in its tail (the one-jump
/// regime). One use: the bracket of `ln δ` holds the quadrature. Ten thousand uses at
/// R = 85000, where the old refinement stopped at [9.6e-127, 5.4e-95] (no pilot step, a
/// tail cut made for a loose lower end, its finer steps beyond the stage budget): the
/// accuracy is met, and the other direction agrees: ε at the bracket's upper δ is at
/// most the ε asked. By default the many-use case is a thousand uses at R = 70000
/// (δ ≈ 2.3e-115, 16 s of CPU instead of 44 s), the same question in the same regime;
/// `DPW_LONG=1` asks the original one.
#[test]
#[ignore = "long: 9 s at delta ~ 1e-115; runs in CI's long step (just test-all)"]
fn delta_questions_at_tiny_delta_meet_the_accuracy() {
    let fam = densities::bounded::BoundedFamily::power(2.0).unwrap();
    for &eps in &[5.7, 19.0] {
        let law = BoundedNoiseLaw::new(fam, 1000.0, 1.0).unwrap();
        let acc = Accountant::new(vec![(Box::new(law), 1)]).unwrap();
        let d = acc.delta(eps).unwrap();
        assert!(d.accuracy_met, "ε {eps}: {d:?}");
        let q = bounded_single_ln_delta(1000.0, eps);
        assert!(
            d.ln_lower <= q + 1e-6 && q - 1e-6 <= d.ln_upper,
            "ε {eps}: quadrature ln δ {q} outside [{}, {}]",
            d.ln_lower,
            d.ln_upper
        );
    }
    let eps = 0.2275;
    // (radius, uses, a bound on ln δ): δ ≈ 9.9e-127 and 2.3e-115.
    let (radius, uses, ln_below) = if long() {
        (85000.0, 10_000, -280.0)
    } else {
        (70000.0, 1_000, -260.0)
    };
    let law = BoundedNoiseLaw::new(fam, radius, 1.0).unwrap();
    let acc = Accountant::new(vec![(Box::new(law), uses)]).unwrap();
    let d = acc.delta(eps).unwrap();
    assert!(d.accuracy_met && d.ln_upper < ln_below, "{d:?}");
    assert!(-(d.ln_lower - d.ln_upper).exp_m1() <= 1e-3, "{d:?}");
    let at_upper = acc.epsilon_ln(d.ln_upper).unwrap();
    assert!(
        at_upper.lower <= eps && eps - at_upper.lower < 1e-4,
        "ε at ln δ {}: {at_upper:?}",
        d.ln_upper
    );
}

/// The mixed regime: k = 3e4 at δ = 1e-126 (R = 60000), where the bulk of the
/// composition and single large losses weigh alike. A split two σ below ε alone left a
/// certified bracket 1.5 % wide; with the mass levels the accuracy asked (1e-3) is met.
/// Independent routes: δ at both ends of the bracket from a one-jump saddle-point
/// quadrature of one use's loss law ([`power2_one_jump_ln_delta`], which puts the exact ε
/// at 0.3511543, accurate to about 1e-6 in ε and 2e-3 in ln δ): the upper end must leak
/// at most δ and the lower end at least δ, within that; and Dagan–Kur's certified radius
/// for the lower ε is at least R (the exact ε at R is at least that lower end). The
/// accountant's own δ(ε) route, which this replaces, took two thirds of the test's time.
/// Catches either end on the wrong side of the truth by more than about 3e-6 in ε: the
/// bracket ([0.351041, 0.351210]) shifted down by 2e-4 relative or up by 4e-4 fails, and so
/// does a lower end up to 7.9 % too high, which the Dagan–Kur check alone lets pass.
#[test]
fn mixed_regime_meets_the_accuracy() {
    let fam = densities::bounded::BoundedFamily::power(2.0).unwrap();
    let (r, k, delta) = (60000.0, 30_000u64, 1e-126f64);
    let law = BoundedNoiseLaw::new(fam, r, 1.0).unwrap();
    let e = Accountant::new(vec![(Box::new(law), k)])
        .unwrap()
        .with_accuracy(1e-3)
        .unwrap()
        .epsilon(delta)
        .unwrap();
    assert!(
        e.accuracy_met && (e.upper - e.lower) / e.upper <= 1e-3,
        "{e:?}"
    );
    let ln_delta = delta.ln();
    let at_upper = power2_one_jump_ln_delta(r, k, e.upper, ln_delta);
    let at_lower = power2_one_jump_ln_delta(r, k, e.lower, ln_delta);
    assert!(
        at_upper <= ln_delta + 2e-3 && at_lower >= ln_delta - 2e-3,
        "saddle-point ln δ {at_upper} at ε {} and {at_lower} at ε {}, target {ln_delta}",
        e.upper,
        e.lower
    );
    let dk = dagan_kur_radius(fam, k, e.lower, delta);
    assert!(dk >= r, "Dagan-Kur radius {dk} for ε {} below {r}", e.lower);
}

/// `ln δ(ε)` of the two-fold composition of a lattice by a direct convolution in log
/// space (no FFT, no tilt, no split): the independent reference of the one-jump split.
fn two_fold_ln_delta(lat: &Lattice, eps: f64) -> f64 {
    let n = lat.ln_pmf.len();
    let mut conv = vec![f64::NEG_INFINITY; 2 * n - 1];
    let add = |a: f64, b: f64| {
        if a == f64::NEG_INFINITY {
            return b;
        }
        if b == f64::NEG_INFINITY {
            return a;
        }
        let (h, l) = if a > b { (a, b) } else { (b, a) };
        h + (l - h).exp().ln_1p()
    };
    for i in 0..n {
        if lat.ln_pmf[i] == f64::NEG_INFINITY {
            continue;
        }
        for j in 0..n {
            conv[i + j] = add(conv[i + j], lat.ln_pmf[i] + lat.ln_pmf[j]);
        }
    }
    // P(+∞) = 1 − (1 − p)² = p(2 − p).
    let p = lat.ln_inf.exp();
    let mut out = lat.ln_inf + (2.0 - p).ln();
    for (z, &lp) in conv.iter().enumerate() {
        let x = (2 * lat.lo + z as i64) as f64 * lat.step;
        if x > eps && lp > f64::NEG_INFINITY {
            out = add(out, lp + (-(eps - x).exp_m1()).ln());
        }
    }
    out
}

/// Two uses of bounded noise at δ = 1e-60, where the tilted FFT's bracket was 4e-4
/// wide against the 1e-4 asked: on a fixed grid, the accountant's ε bracket (one-jump
/// split) against a direct log-space convolution of the same two lattices. The
/// pessimistic lattice's exact δ at the upper end must be at most the target, the
/// optimistic one's at the lower end at least it, and both within 1e-4 of it in `ln δ`.
#[test]
fn two_bounded_uses_at_tiny_delta_match_a_direct_convolution() {
    let fam = densities::bounded::BoundedFamily::power(2.0).unwrap();
    let (radius, lnd, d) = (1000.0, f64::ln(1e-60), 4e-3);
    let law = BoundedNoiseLaw::new(fam, radius, 1.0).unwrap();
    let acc = Accountant::new(vec![(Box::new(law.clone()), 2)]).unwrap();
    let (lo, hi) = acc.epsilon_at_step(lnd, d).unwrap();
    let ln_tail = lnd - 2f64.ln() - 12.0;
    let pess = Lattice::pessimistic(&law, d, ln_tail, 1 << 22).unwrap();
    let opt = Lattice::optimistic(&law, d, ln_tail, 1 << 22).unwrap();
    let at_hi = two_fold_ln_delta(&pess, hi);
    let at_lo = two_fold_ln_delta(&opt, lo);
    assert!(
        at_hi <= lnd + 1e-9 && at_hi >= lnd - 1e-4,
        "pessimistic ln δ {at_hi} at ε {hi} vs {lnd}"
    );
    assert!(
        at_lo >= lnd - 1e-9 && at_lo <= lnd + 1e-4,
        "optimistic ln δ {at_lo} at ε {lo} vs {lnd}"
    );
}

/// The radius search when the geometric middle of its bracket is undecided (ε inside the
/// accountant's bracket there): it used to ask that middle again and again until its
/// deadline (k = 1e4, ε = 0.5, δ = 1e-126 from 0.8 times the certified radius, as
/// `dpw calibrate` starts). Now it converges, and the certified radius (Dagan–Kur, an
/// independent proof) lies above the bracket. With both ends known it moves the end
/// farther from the secant's root to just past it: at most four evaluations (ten when it
/// bisected). The Dagan–Kur check is one-sided and 5 % loose here (an upper end 5 % too
/// large passes it), so both ends are also checked against δ from the one-jump
/// saddle-point quadrature ([`power2_one_jump_ln_delta`], accurate to about 2e-3 in ln δ
/// here; it puts the least R near 38853): the upper end must leak at most δ, the lower
/// end at least δ, within 0.01 in ln δ (measured on [38829.3, 38943.2]: −290.59 and
/// −290.00 against −290.13). Catches a search that stops on the wrong side of the root or
/// reports a bracket not containing it (shifted by 0.07 % up or 0.25 % down, it fails).
#[test]
#[ignore = "long: 10 s, the k = 1e4, delta = 1e-126 search; runs in CI's long step (just test-all)"]
fn radius_search_moves_past_an_undecided_middle() {
    use composition::accountant::least_radius_bracket;
    let fam = densities::bounded::BoundedFamily::power(2.0).unwrap();
    let (k, eps, delta) = (10_000u64, 0.5, 1e-126);
    let cert = dagan_kur_radius(fam, k, eps, delta);
    let b = least_radius_bracket(fam, k, eps, delta, 0.8 * cert, 1e-3).unwrap();
    assert!(b.upper / b.lower - 1.0 <= 4e-3 + 1e-9, "{b:?}");
    assert!(b.evaluations <= 4, "{b:?}");
    assert!(b.upper < cert, "{b:?} vs certified {cert}");
    let ln_delta = delta.ln();
    let at_upper = power2_one_jump_ln_delta(b.upper, k, eps, ln_delta);
    let at_lower = power2_one_jump_ln_delta(b.lower, k, eps, ln_delta);
    assert!(
        at_upper <= ln_delta + 0.01 && at_lower >= ln_delta - 0.01,
        "{b:?}: saddle-point ln δ {at_upper} at the upper end, {at_lower} at the lower, \
         target {ln_delta}"
    );
}

/// The work budget holds within a step (issue 58): budgets below what the unlimited
/// refinement spent give either the bracket of the steps that fit (certified: it holds the
/// unlimited one) or, where not even a coarser first step fits, the budget's error; never
/// work past the budget, for ε(δ) and δ(ε). A law with a pilot step (at most one sampled
/// use expected) stops before its second step with the pilot's bracket. Failed before
/// (a step once begun was finished: the first step of 1500 laws spent 1.1e9 against 6e8).
#[test]
fn the_work_budget_is_never_passed_and_stops_before_a_step() {
    use composition::accountant::{MechanismSpec, Work};
    use composition::CompositionError;
    let parse =
        |v: &[&str]| -> Vec<MechanismSpec> { v.iter().map(|s| s.parse().unwrap()).collect() };
    let cases = [
        (
            parse(&[
                "subsampled-gaussian:sigma=0.9,q=0.01,count=2000",
                "subsampled-gaussian:sigma=1.3,q=0.003,count=5000",
                "gaussian:sigma=40,count=30",
            ]),
            false,
        ),
        (
            parse(&["subsampled-gaussian:sigma=0.8,q=0.001,count=500"]),
            true,
        ),
    ];
    for (specs, pilot) in &cases {
        for delta_question in [false, true] {
            let ask = |w: &Work| {
                let a = Composition::of(specs)
                    .unwrap()
                    .with_accuracy(if delta_question { 1e-4 } else { 1e-5 })
                    .unwrap()
                    .with_work(w.clone());
                if delta_question {
                    a.delta(1.0)
                } else {
                    a.epsilon(1e-6)
                }
            };
            let free = Work::new(None);
            let full = ask(&free).unwrap();
            let spent = free.done();
            let mut brackets = 0;
            for budget in [spent - 1, spent / 2, spent / 5, 1000] {
                let w = Work::new(Some(budget));
                let r = ask(&w);
                assert!(w.done() <= budget, "{} > {budget}", w.done());
                match r {
                    Ok(a) => {
                        // (The same accuracy can be met on less work: a different order
                        // of the two directions' steps.)
                        brackets += usize::from(w.budget_hit() && !a.accuracy_met);
                        assert!(
                            a.lower <= full.lower && full.upper <= a.upper,
                            "{a:?} does not hold {full:?}"
                        );
                    }
                    Err(e) => {
                        assert_eq!(e, CompositionError::WorkBudget);
                        assert!(w.budget_hit());
                    }
                }
            }
            if *pilot && !delta_question {
                assert!(
                    brackets >= 1,
                    "no budget below {spent} gave the pilot's bracket"
                );
            }
        }
    }
}
