//! `exponential:epsilon=E` (the ε-bounded-range class, docs/accountant.md §2.14) against
//! independent computations: the dominating law's privacy curve against the largest of
//! the class's worst-case pairs (generalized randomized response, Dong, Durfee & Rogers),
//! scanned over their parameter; its cells against quadrature of its density; k uses
//! against the optimal non-adaptive composition in closed form (`composition::br_delta`,
//! fig13's), which must lie inside the certified bracket; and bad input.

use composition::accountant::laws::BoundedRangeLaw;
use composition::accountant::{Composition, LossLaw, MechanismSpec};

fn composition(text: &str) -> Composition {
    let s: MechanismSpec = text.parse().unwrap();
    Composition::of(&[s]).unwrap()
}

/// δ(x) of the ε-BR worst-case pair with parameter t (losses t and t − ε; P-mass of t
/// fixed by Q being a probability), from its definition `E_P[(1 − e^{x − L})₊]`.
fn grr_delta(eps: f64, t: f64, x: f64) -> f64 {
    let p = (eps.exp() - t.exp()) / eps.exp_m1();
    p * (-(x - t).exp_m1()).max(0.0) + (1.0 - p) * (-(x - t + eps).exp_m1()).max(0.0)
}

/// The closed form of the class's largest privacy curve, `(e^{ε/2} − e^{x/2})²/(e^ε − 1)`
/// on `[0, ε]`, is the supremum over t of the worst-case pairs' (a dense scan), and one
/// use's certified upper end holds it, narrowly.
#[test]
fn one_use_holds_the_largest_curve_of_the_class() {
    for &eps in &[0.1f64, 1.0, 3.0] {
        let comp = composition(&format!("exponential:epsilon={eps}"));
        for frac in [0.0, 0.2, 0.5, 0.9] {
            let x = frac * eps;
            let closed = ((0.5 * eps).exp() - (0.5 * x).exp()).powi(2) / eps.exp_m1();
            let scan = (0..=20_000)
                .map(|i| grr_delta(eps, eps * i as f64 / 20_000.0, x))
                .fold(0.0, f64::max);
            assert!(
                scan <= closed * (1.0 + 1e-12) && scan >= closed * (1.0 - 1e-6),
                "ε = {eps}, x = {x}: scan {scan} vs closed form {closed}"
            );
            let d = comp.delta(x).unwrap();
            assert!(
                closed <= d.upper && d.upper <= closed * (1.0 + 1e-3),
                "ε = {eps}, x = {x}: upper {} vs {closed}",
                d.upper
            );
        }
    }
}

/// Every cell's two numbers against an 8000-point midpoint quadrature of the density
/// `e^{(ε + ℓ)/2}/(2(e^ε − 1))`.
#[test]
fn the_cells_are_the_integrals_of_the_density() {
    for &eps in &[1e-3f64, 0.5, 4.0, 30.0] {
        let law = BoundedRangeLaw::new(eps).unwrap();
        let dens = |l: f64| ((eps + l) / 2.0).exp() / (2.0 * eps.exp_m1());
        for &(fa, fb) in &[(-1.0, 1.0), (-0.5, -0.49), (0.3, 0.9), (0.99, 1.0)] {
            let (a, b) = (fa * eps, fb * eps);
            let n = 8000;
            let h = (b - a) / n as f64;
            let (mut p, mut m) = (0.0, 0.0);
            for i in 0..n {
                let l = a + (i as f64 + 0.5) * h;
                p += dens(l) * h;
                m += dens(l) * (-(a - l).exp_m1()) * h;
            }
            let (lp, lm) = law.cell(a, b);
            assert!((lp.exp() / p - 1.0).abs() < 1e-6, "ε = {eps} [{a}, {b}]: P");
            assert!((lm.exp() / m - 1.0).abs() < 1e-5, "ε = {eps} [{a}, {b}]: m");
        }
    }
}

/// k uses: the certified bracket holds the optimal non-adaptive composition of k ε-BR
/// mechanisms (Dong, Durfee & Rogers, Thm 3; fig13's closed form), and its lower end
/// is at most the composition of the attained instance, randomized response at ε/2.
#[test]
fn k_uses_hold_the_optimal_non_adaptive_composition() {
    for &(k, eps, x) in &[
        (10u64, 0.5, 1.0),
        (100, 0.1, 1.5),
        (50, 0.3, 2.0),
        (1000, 0.05, 2.5),
    ] {
        let d = composition(&format!("exponential:epsilon={eps},count={k}"))
            .delta(x)
            .unwrap();
        let br = composition::br_delta(k, eps, x).unwrap();
        let rr = composition::dp_delta(k, 0.5 * eps, x).unwrap();
        assert!(
            d.lower <= rr * (1.0 + 1e-9) && rr <= br * (1.0 + 1e-9) && br <= d.upper,
            "k = {k}, ε = {eps}, x = {x}: [{}, {}] against rr {rr}, br {br}",
            d.lower,
            d.upper
        );
    }
}

/// `bounded-range` is the same kind.
#[test]
fn bounded_range_is_the_exponential_mechanisms_class() {
    let a = composition("exponential:epsilon=0.2,count=30")
        .epsilon(1e-6)
        .unwrap();
    let b = composition("bounded-range:epsilon=0.2,count=30")
        .epsilon(1e-6)
        .unwrap();
    assert_eq!(a, b);
}

#[test]
fn bad_exponential_specs_are_refused_naming_the_key() {
    for (text, key) in [
        ("exponential:epsilon=0", "epsilon"),
        ("exponential:epsilon=100", "epsilon"),
        ("exponential:epsilon=1,sensitivity=2", "sensitivity"),
        ("exponential:scale=1", "scale"),
    ] {
        let e = text.parse::<MechanismSpec>().unwrap_err().0;
        assert!(e.contains(key) && !e.contains('\n'), "{text}: {e:?}");
    }
}

/// The cells of a grid whose points miss the support's ends: their Q-masses
/// `e^{−a}(P − m)`, each `m` taken against the cell's own left end `a`, sum to the law's
/// Q-mass, 1 (the pair's second law is a probability). A cell that straddles `−ε` and
/// reports `m` against `−ε` instead sends too little of itself up: its Q-mass comes out
/// too large by about `(−ε − a)·P`, and a composition's mean loss drifts down with every
/// use (eecabc3's law, reverted in 2773ef8, read 0.1520 for 0.2206).
#[test]
fn cells_straddling_the_support_sum_to_q_mass_one() {
    for &(eps, steps) in &[(1e-4f64, 303.03), (1e-6, 121.7), (0.5, 40.4), (3.0, 999.9)] {
        let law = BoundedRangeLaw::new(eps).unwrap();
        let d = 2.0 * eps / steps;
        let j0 = (-eps / d).floor() as i64;
        let j1 = (eps / d).ceil() as i64;
        let (mut q, mut p) = (0.0, 0.0);
        for j in j0..j1 {
            let (a, b) = (j as f64 * d, (j + 1) as f64 * d);
            let (lp, lm) = law.cell(a, b);
            p += lp.exp();
            q += (-a).exp() * (lp.exp() - lm.exp());
        }
        assert!((p - 1.0).abs() < 1e-12, "ε = {eps}: P-mass {p}");
        assert!((q - 1.0).abs() < 1e-12, "ε = {eps}: Q-mass {q}");
    }
}

/// `δ(ε)` of `μ`-GDP (Dong, Roth & Su), the limit of many uses of a law of loss
/// variance `μ²/k`, by erfc (independent of the accountant).
fn gdp_epsilon(mu: f64, delta: f64) -> f64 {
    use special::Error;
    let phi = |x: f64| 0.5 * Error::compl_error(-x / std::f64::consts::SQRT_2);
    let d = |e: f64| phi(-e / mu + 0.5 * mu) - e.exp() * phi(-e / mu - 0.5 * mu);
    let (mut lo, mut hi) = (0.0, 50.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if d(mid) > delta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Many uses of a small ε: the sum of k bounded losses of variance ε²/3 (the dominating
/// law is uniform to first order) is Gaussian to far better than 0.3 %, so the upper end
/// sits at the GDP value with `μ² = kε²/3`, where the grid step is hundreds of times the
/// mean loss of one use. The lower end is the attained instance's (randomized response
/// at ε/2, `μ² = kε²/4`).
#[test]
fn many_uses_of_a_small_epsilon_meet_the_central_limit() {
    for &(eps, k) in &[(1e-4f64, 100_000_000u64), (1e-6, 10_000_000_000)] {
        let text = format!("exponential:epsilon={eps},count={k}");
        // The dominating pair's composition alone (the two-sided answer's upper end may
        // be the zCDP route's, below it).
        let up = Composition::dominating(&[text.parse().unwrap()])
            .unwrap()
            .epsilon(1e-6)
            .unwrap()
            .upper;
        let e = composition(&text).epsilon(1e-6).unwrap();
        let up_limit = gdp_epsilon((k as f64 / 3.0).sqrt() * eps, 1e-6);
        let low = gdp_epsilon((k as f64 / 4.0).sqrt() * eps, 1e-6);
        assert!(
            (up / up_limit - 1.0).abs() < 3e-3 && (e.lower / low - 1.0).abs() < 3e-3,
            "ε = {eps}, k = {k}: [{}, {}] against the limits {low}, {up_limit}",
            e.lower,
            up
        );
    }
}

/// Past a few dozen uses the upper end is the zCDP route's (every ε-BR mechanism is
/// ε²/8-zCDP, Cesar & Rogers Lemma 3.2; a Gaussian `1/(2σ²)`), which the dominating pair
/// alone exceeds; it still holds Dong, Durfee & Rogers' optimal non-adaptive composition
/// (closed form, fig13's), which no valid upper end may fall below, and the attained
/// lower end stays below it. Both questions, ε(δ) and δ(ε).
#[test]
fn many_uses_are_never_looser_than_the_zcdp_route() {
    use composition::zcdp::{delta_cks_up, epsilon_cks_up};
    for &(eps, k) in &[(0.1f64, 1000u64), (0.03, 3000)] {
        let text = format!("exponential:epsilon={eps},count={k}");
        let comp = composition(&text);
        let alone = Composition::dominating(&[text.parse().unwrap()]).unwrap();
        let rho = k as f64 * eps * eps / 8.0;
        let e = comp.epsilon(1e-6).unwrap();
        let pair = alone.epsilon(1e-6).unwrap();
        let route = epsilon_cks_up(rho, 1e-6).unwrap();
        let optimum = composition::br_epsilon(k, eps, 1e-6).unwrap();
        assert!(
            route < pair.lower
                && e.upper <= route * (1.0 + 1e-12)
                && optimum <= e.upper
                && e.lower <= optimum,
            "ε = {eps}, k = {k}: [{}, {}], pair from {}, route {route}, optimum {optimum}",
            e.lower,
            e.upper,
            pair.lower
        );
        let x = 0.8 * e.upper;
        let d = comp.delta(x).unwrap();
        let route = delta_cks_up(rho, x).unwrap();
        let optimum = composition::br_delta(k, eps, x).unwrap();
        assert!(
            d.upper <= route * (1.0 + 1e-12) && optimum <= d.upper && d.lower <= optimum,
            "ε = {eps}, k = {k}, x = {x}: [{}, {}], route {route}, optimum {optimum}",
            d.lower,
            d.upper
        );
    }
    // Selections composed with Gaussian counts: ρ adds up.
    let specs: Vec<MechanismSpec> = [
        "exponential:epsilon=0.1,count=1000",
        "gaussian:sigma=20,count=1000",
    ]
    .iter()
    .map(|t| t.parse().unwrap())
    .collect();
    let e = Composition::of(&specs).unwrap().epsilon(1e-6).unwrap();
    let rho = 1000.0 * (0.01 / 8.0 + 1.0 / 800.0);
    assert!(e.upper <= epsilon_cks_up(rho, 1e-6).unwrap() * (1.0 + 1e-12) && e.lower < e.upper);
}
