//! Balls-in-bins epochs (docs/accountant.md §2.10): the upper and lower loss laws of one
//! epoch against independent computations of the epoch's own pair — the Gaussian closed
//! form at t = 1, quadratures with a closed-form inner expectation at t = 2, 3 and 4 (at
//! t = 4 through the density of a sum of two steps), a seeded Monte Carlo at t = 100 — and
//! through the accountant against the composed Gaussian.

use composition::accountant::sampling::allocation::{epoch_laws, EpochGrid};
use composition::accountant::{Accountant, DiscreteLaw, LossLaw};
use densities::normal::{cdf, sf};
use rand::{Rng, SeedableRng};

/// δ(ε) of one law by its atoms (a sum of nonnegative terms: monotone in every mass and
/// loss, so the upper law's value bounds from above and the lower law's from below).
fn delta(l: &DiscreteLaw, eps: f64) -> f64 {
    let mut d = l.ln_inf_mass().exp();
    for (x, p) in l.atoms() {
        if x > eps {
            d += p * -(eps - x).exp_m1();
        }
    }
    d
}

/// `E[(X − c)_+]` and `E[(c − X)_+]` for `X = e^{μZ − μ²/2}` (mean 1), closed forms.
fn call(mu: f64, c: f64) -> f64 {
    if c <= 0.0 {
        return 1.0 - c;
    }
    let d2 = (-c.ln() - 0.5 * mu * mu) / mu;
    sf(-(d2 + mu)) - c * sf(-d2)
}
fn put(mu: f64, c: f64) -> f64 {
    if c <= 0.0 {
        return 0.0;
    }
    let d2 = (-c.ln() - 0.5 * mu * mu) / mu;
    c * cdf(-d2) - cdf(-d2 - mu)
}

/// `∫ φ(z) g(z) dz` by composite Simpson on [−12, 12] (the tails beyond are below 1e-32).
fn gauss_average(g: impl Fn(f64) -> f64) -> f64 {
    gauss_average_n(g, 40_000)
}

/// `∫_a^b f` by composite Simpson with `n` (even) intervals.
fn simpson(a: f64, b: f64, n: usize, f: impl Fn(f64) -> f64) -> f64 {
    let h = (b - a) / n as f64;
    let mut s = 0.0;
    for i in 0..=n {
        let w = if i == 0 || i == n {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        s += w * f(a + i as f64 * h);
    }
    s * h / 3.0
}

/// [`gauss_average`] with `n` (even) intervals.
fn gauss_average_n(g: impl Fn(f64) -> f64, n: usize) -> f64 {
    simpson(-12.0, 12.0, n, |z| (-0.5 * z * z).exp() * g(z)) / (2.0 * std::f64::consts::PI).sqrt()
}

fn assert_brackets(name: &str, lo: f64, exact: f64, hi: f64, width: f64) {
    assert!(
        lo <= exact * (1.0 + 1e-9) && exact <= hi * (1.0 + 1e-9),
        "{name}: [{lo:e}, {hi:e}] misses {exact:e}"
    );
    assert!(
        hi / lo - 1.0 <= width,
        "{name}: [{lo:e}, {hi:e}] wider than {width}"
    );
}

#[test]
fn one_step_epochs_are_the_gaussian_mechanism() {
    // μ ≤ 1: larger shifts need a grid finer than the budget allows (module docs).
    for mu in [0.3, 1.0] {
        let l = epoch_laws(mu, 1, EpochGrid::default()).unwrap();
        for eps in [0.0, 0.5, 1.0, 2.0, 4.0] {
            let exact = cdf(mu / 2.0 - eps / mu) - eps.exp() * cdf(-mu / 2.0 - eps / mu);
            if exact < 1e-9 {
                continue;
            }
            let name = format!("mu {mu} eps {eps}");
            // The pair is symmetric at t = 1: both directions bracket the same δ.
            let (r0, r1) = (delta(&l.remove_lower, eps), delta(&l.remove_upper, eps));
            let (a0, a1) = (delta(&l.add_lower, eps), delta(&l.add_upper, eps));
            assert_brackets(&format!("{name} remove"), r0, exact, r1, 2e-3);
            // Q‖P at one step looks at X near e^{−ε}, a few cells of the grid wide when ε
            // is large (sums of many steps have their whole body there).
            let width = if eps <= 2.0 { 2e-2 } else { 10.0 };
            assert_brackets(&format!("{name} add"), a0, exact, a1, width);
        }
    }
}

#[test]
fn two_step_epochs_match_quadrature_in_both_directions() {
    for mu in [0.5, 1.0] {
        let l = epoch_laws(mu, 2, EpochGrid::default()).unwrap();
        for eps in [0.1, 0.4, 1.0] {
            let a = f64::exp(eps);
            // S = (X1 + X2)/2: E[(S − a)_+] = E[½ call(2a − X1)], E[(1 − aS)_+] = a E[½ put(2/a − X1)].
            let x1 = |z: f64| (mu * z - 0.5 * mu * mu).exp();
            let remove = gauss_average(|z| 0.5 * call(mu, 2.0 * a - x1(z)));
            let add = a * gauss_average(|z| 0.5 * put(mu, 2.0 / a - x1(z)));
            let name = format!("t 2 mu {mu} eps {eps}");
            if remove > 1e-12 {
                let (lo, hi) = (delta(&l.remove_lower, eps), delta(&l.remove_upper, eps));
                assert_brackets(&format!("{name} remove"), lo, remove, hi, 2e-3);
            }
            if add > 1e-12 {
                let (lo, hi) = (delta(&l.add_lower, eps), delta(&l.add_upper, eps));
                assert_brackets(&format!("{name} add"), lo, add, hi, 2e-3);
            }
        }
    }
}

#[test]
fn three_step_epochs_match_a_two_dimensional_quadrature() {
    // S = (X1 + X2 + X3)/3: the inner expectation over X3 in closed form, X1 and X2 by a
    // product Simpson rule.
    let mu = 0.8;
    let l = epoch_laws(mu, 3, EpochGrid::default()).unwrap();
    let x = |z: f64| (mu * z - 0.5 * mu * mu).exp();
    for eps in [0.2, 0.6] {
        let a = f64::exp(eps);
        let remove = gauss_average_n(
            |z1| gauss_average_n(|z2| call(mu, 3.0 * a - x(z1) - x(z2)) / 3.0, 2000),
            2000,
        );
        let add = a * gauss_average_n(
            |z1| gauss_average_n(|z2| put(mu, 3.0 / a - x(z1) - x(z2)) / 3.0, 2000),
            2000,
        );
        let name = format!("t 3 mu {mu} eps {eps}");
        let (lo, hi) = (delta(&l.remove_lower, eps), delta(&l.remove_upper, eps));
        assert_brackets(&format!("{name} remove"), lo, remove, hi, 2e-3);
        let (lo, hi) = (delta(&l.add_lower, eps), delta(&l.add_upper, eps));
        assert_brackets(&format!("{name} add"), lo, add, hi, 2e-3);
    }
}

/// Density of `X₁ + X₂` at `s > 0` (`X = e^{μZ − μ²/2}`, i.i.d.): twice the integral over
/// the half where `X₁ ≤ s/2`, `∫ φ(z) f_X(s − x(z)) dz` by Simpson with `n` intervals, where
/// the log-normal density `f_X(v) = φ((ln v + μ²/2)/μ)/(μv)` is taken on `[s/2, s)` only
/// (smooth there, so the rule converges fast at every `s`).
fn two_sum_density(mu: f64, s: f64, n: usize) -> f64 {
    let x = |z: f64| (mu * z - 0.5 * mu * mu).exp();
    let f_x = |v: f64| {
        let u = (v.ln() + 0.5 * mu * mu) / mu;
        (-0.5 * u * u).exp() / ((2.0 * std::f64::consts::PI).sqrt() * mu * v)
    };
    let (a, b) = (-12.0f64, (((0.5 * s).ln() + 0.5 * mu * mu) / mu).min(12.0));
    if b <= a {
        return 0.0;
    }
    2.0 * simpson(a, b, n, |z| (-0.5 * z * z).exp() * f_x(s - x(z)))
        / (2.0 * std::f64::consts::PI).sqrt()
}

/// `∫ f_A(s) g(s) ds` for `A = X₁ + X₂`, in `w = ln s` by Simpson with `m` intervals over
/// the range that `Z ∈ [−12, 12]` gives `A`.
fn two_sum_average(mu: f64, g: impl Fn(f64) -> f64, m: usize) -> f64 {
    let (a, b) = (
        std::f64::consts::LN_2 - 12.0 * mu - 0.5 * mu * mu,
        std::f64::consts::LN_2 + 12.0 * mu - 0.5 * mu * mu,
    );
    simpson(a, b, m, |w| {
        let s = w.exp();
        two_sum_density(mu, s, 2000) * s * g(s)
    })
}

#[test]
fn four_step_epochs_match_a_quadrature_through_the_density_of_pairs() {
    // S = (A + B)/4 with A = X1 + X2, B = X3 + X4 i.i.d.: the expectation over B is the
    // two-step one (Simpson over X3, closed form over X4), the one over A an integral
    // against A's density (itself a Simpson integral). The route is first checked at
    // t = 3, where S = (A + X3)/3 and the product Simpson rule of the test above is an
    // independent second route.
    let mu = 0.8;
    let x = |z: f64| (mu * z - 0.5 * mu * mu).exp();
    let m = 2400;
    let a3 = f64::exp(0.4);
    let by_density = two_sum_average(mu, |s| call(mu, 3.0 * a3 - s) / 3.0, m);
    let by_product = gauss_average_n(
        |z1| gauss_average_n(|z2| call(mu, 3.0 * a3 - x(z1) - x(z2)) / 3.0, 2000),
        2000,
    );
    assert!(
        (by_density / by_product - 1.0).abs() < 1e-7,
        "t = 3 by the density of pairs {by_density:e}, by the product rule {by_product:e}"
    );
    let l = epoch_laws(mu, 4, EpochGrid::default()).unwrap();
    for eps in [0.15, 0.5] {
        let a = f64::exp(eps);
        // E[(S − a)_+] = ¼ E[(A + B − 4a)_+]; E[(1 − aS)_+] = (a/4) E[(4/a − A − B)_+].
        let remove = two_sum_average(
            mu,
            |s| gauss_average_n(|z| call(mu, 4.0 * a - s - x(z)), 2000) / 4.0,
            m,
        );
        let add = a * two_sum_average(
            mu,
            |s| gauss_average_n(|z| put(mu, 4.0 / a - s - x(z)), 2000) / 4.0,
            m,
        );
        let name = format!("t 4 mu {mu} eps {eps}");
        eprintln!(
            "{name}: remove [{:e}, {:e}] quadrature {remove:e}; add [{:e}, {:e}] quadrature {add:e}",
            delta(&l.remove_lower, eps),
            delta(&l.remove_upper, eps),
            delta(&l.add_lower, eps),
            delta(&l.add_upper, eps)
        );
        let (lo, hi) = (delta(&l.remove_lower, eps), delta(&l.remove_upper, eps));
        assert_brackets(&format!("{name} remove"), lo, remove, hi, 2e-3);
        let (lo, hi) = (delta(&l.add_lower, eps), delta(&l.add_upper, eps));
        assert_brackets(&format!("{name} add"), lo, add, hi, 2e-3);
    }
}

#[test]
fn hundred_step_epoch_agrees_with_monte_carlo() {
    let (mu, t) = (1.0f64, 100usize);
    let l = epoch_laws(mu, t as u64, EpochGrid::default()).unwrap();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(31);
    let n = 200_000;
    let eps_list = [0.05, 0.1, 0.2];
    let mut sums = vec![(0.0f64, 0.0f64, 0.0f64, 0.0f64); eps_list.len()];
    for _ in 0..n {
        let mut s = 0.0;
        let mut i = 0;
        while i < t {
            // Box–Muller, two normals a draw.
            let (u1, u2): (f64, f64) = (rng.gen::<f64>().max(1e-300), rng.gen());
            let r = (-2.0 * u1.ln()).sqrt();
            let th = 2.0 * std::f64::consts::PI * u2;
            for z in [r * th.cos(), r * th.sin()] {
                if i < t {
                    s += (mu * z - 0.5 * mu * mu).exp();
                    i += 1;
                }
            }
        }
        let s = s / t as f64;
        for (k, &eps) in eps_list.iter().enumerate() {
            let a = f64::exp(eps);
            let (x, y) = ((s - a).max(0.0), (1.0 - a * s).max(0.0));
            sums[k].0 += x;
            sums[k].1 += x * x;
            sums[k].2 += y;
            sums[k].3 += y * y;
        }
    }
    for (k, &eps) in eps_list.iter().enumerate() {
        let nf = n as f64;
        let (m1, m2) = (sums[k].0 / nf, sums[k].2 / nf);
        let se1 = ((sums[k].1 / nf - m1 * m1) / nf).sqrt();
        let se2 = ((sums[k].3 / nf - m2 * m2) / nf).sqrt();
        assert!(
            m1 > 1e-3 && m2 > 1e-3,
            "eps {eps}: δ below the test's range"
        );
        let (lo, hi) = (delta(&l.remove_lower, eps), delta(&l.remove_upper, eps));
        assert!(
            lo <= m1 + 5.0 * se1 && hi >= m1 - 5.0 * se1 && hi / lo - 1.0 < 1e-3,
            "remove eps {eps}: [{lo}, {hi}] against {m1} ± {se1}"
        );
        let (lo, hi) = (delta(&l.add_lower, eps), delta(&l.add_upper, eps));
        assert!(
            lo <= m2 + 5.0 * se2 && hi >= m2 - 5.0 * se2 && hi / lo - 1.0 < 1e-3,
            "add eps {eps}: [{lo}, {hi}] against {m2} ± {se2}"
        );
    }
}

#[test]
fn composed_one_step_epochs_bracket_the_composed_gaussian() {
    // Ten epochs of one step: the Gaussian mechanism with μ√10.
    let mu = 0.8f64;
    let l = epoch_laws(mu, 1, EpochGrid::default()).unwrap();
    let m = mu * 10f64.sqrt();
    let exact = |eps: f64| cdf(m / 2.0 - eps / m) - eps.exp() * cdf(-m / 2.0 - eps / m);
    let eps_of = |law: &DiscreteLaw, upper: bool| {
        let acc = Accountant::new(vec![(Box::new(law.clone()) as Box<dyn LossLaw>, 10)])
            .unwrap()
            .with_accuracy(1e-5)
            .unwrap();
        let a = acc.epsilon(1e-6).unwrap();
        if upper {
            a.upper
        } else {
            a.lower
        }
    };
    let (lo, hi) = (
        eps_of(&l.remove_lower, false),
        eps_of(&l.remove_upper, true),
    );
    assert!(exact(lo) >= 1e-6 && exact(hi) <= 1e-6, "[{lo}, {hi}]");
    assert!(hi / lo - 1.0 < 1e-3, "[{lo}, {hi}]");
}

#[test]
fn masses_sit_on_their_sides() {
    // The upper laws carry at least all of the mass (plus error bounds), the lower at most.
    let l = epoch_laws(1.0, 37, EpochGrid::default()).unwrap();
    let total =
        |x: &DiscreteLaw| x.atoms().iter().map(|a| a.1).sum::<f64>() + x.ln_inf_mass().exp();
    assert!(total(&l.remove_upper) >= 1.0 && total(&l.add_upper) >= 1.0);
    assert!(total(&l.remove_lower) <= 1.0 && total(&l.add_lower) <= 1.0);
    assert!(total(&l.remove_lower) > 1.0 - 1e-6 && total(&l.add_lower) > 1.0 - 1e-6);
}

#[test]
fn a_balls_in_bins_spec_brackets_monte_carlo_of_its_composed_epochs() {
    // Five epochs of t = 20 steps at σ = 1 through the SPEC language and the two-sided
    // composition, against a seeded Monte Carlo of the composed pair: δ(ε) is the larger of
    // E_P[(1 − e^{ε − L})_+] (P: each epoch's ratio size-biased, one step shifted by μ)
    // and E_Q[(1 − e^{ε + L})_+], L the sum of the epochs' ln(S).
    let (mu, t, k) = (1.0f64, 20usize, 5usize);
    let spec: composition::accountant::MechanismSpec =
        format!("subsampled-gaussian:sigma=1,sampling=allocation,steps={t},count={k}")
            .parse()
            .unwrap();
    let comp = composition::accountant::Composition::of(&[spec])
        .unwrap()
        .with_accuracy(1e-4)
        .unwrap();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    let mut normal = move || {
        let (u1, u2): (f64, f64) = (rng.gen::<f64>().max(1e-300), rng.gen());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    };
    let n = 100_000;
    let eps_list = [0.3, 0.6];
    let mut acc = vec![[0.0f64; 4]; eps_list.len()];
    for _ in 0..n {
        let (mut lp, mut lq) = (0.0, 0.0);
        for _ in 0..k {
            let (mut sp, mut sq) = (0.0, 0.0);
            for j in 0..t {
                let (zp, zq) = (normal(), normal());
                sp += (mu * (zp + if j == 0 { mu } else { 0.0 }) - 0.5 * mu * mu).exp();
                sq += (mu * zq - 0.5 * mu * mu).exp();
            }
            lp += (sp / t as f64).ln();
            lq += (sq / t as f64).ln();
        }
        for (i, &eps) in eps_list.iter().enumerate() {
            let x = (1.0 - (eps - lp).exp()).max(0.0);
            let y = (1.0 - (eps + lq).exp()).max(0.0);
            acc[i][0] += x;
            acc[i][1] += x * x;
            acc[i][2] += y;
            acc[i][3] += y * y;
        }
    }
    for (i, &eps) in eps_list.iter().enumerate() {
        let nf = n as f64;
        let stat = |s: f64, s2: f64| {
            let m = s / nf;
            (m, ((s2 / nf - m * m) / nf).sqrt())
        };
        let (m1, se1) = stat(acc[i][0], acc[i][1]);
        let (m2, se2) = stat(acc[i][2], acc[i][3]);
        let a = comp.delta(eps).unwrap();
        assert!(m1.max(m2) > 1e-3, "ε = {eps}: δ below the test's range");
        // δ = max of the two directions: the bracket must meet [max − 5se, max + 5se].
        let (lo_mc, hi_mc) = (
            (m1 - 5.0 * se1).max(m2 - 5.0 * se2),
            (m1 + 5.0 * se1).max(m2 + 5.0 * se2),
        );
        assert!(
            a.lower <= hi_mc && a.upper >= lo_mc && a.upper / a.lower - 1.0 < 1e-2,
            "ε = {eps}: [{}, {}] against MC [{lo_mc}, {hi_mc}]",
            a.lower,
            a.upper
        );
    }
}

#[test]
fn the_solver_finds_a_certified_sigma_for_balls_in_bins() {
    // The definition: at `meets` the certified upper ε is within the target, at `fails`
    // the certified lower ε is beyond it (both re-asked through the SPEC language, finer
    // than the solver's last evaluations, which decided them at the accuracy they needed).
    use composition::accountant::{Solver, Target, Template};
    let spec = "subsampled-gaussian:sigma=?,sampling=allocation,steps=10,count=4";
    let s = Solver::new(
        Template::parse(&[spec]).unwrap(),
        vec![Target::Privacy {
            epsilon: 2.0,
            delta: 1e-5,
        }],
    )
    .unwrap()
    .with_accuracy(1e-3)
    .unwrap()
    .solve()
    .unwrap();
    let eps_at = |sigma: f64| {
        let m: composition::accountant::MechanismSpec =
            spec.replace('?', &format!("{sigma:e}")).parse().unwrap();
        composition::accountant::Composition::of(&[m])
            .unwrap()
            .with_accuracy(1e-5)
            .unwrap()
            .epsilon(1e-5)
            .unwrap()
    };
    let fails = s.fails.expect("a failing σ");
    assert!(
        fails < s.meets && s.meets / fails - 1.0 <= 1e-3,
        "{fails} {}",
        s.meets
    );
    let (m, f) = (eps_at(s.meets), eps_at(fails));
    assert!(m.upper <= 2.0 && f.lower > 2.0, "meets {m:?}, fails {f:?}");
}

#[test]
fn randomized_response_given_as_a_law_of_many_atoms_composes_exactly() {
    // 300-fold randomized response given as one law of 301 atoms (binomial masses, the
    // extreme ones far below the tail target), composed twice: 600-fold randomized
    // response, whose δ is the exact binomial sum.
    let (e0, k) = (0.03f64, 300usize);
    let ln_c = |n: usize, i: usize| {
        (1..=n).map(|j| (j as f64).ln()).sum::<f64>()
            - (1..=i).map(|j| (j as f64).ln()).sum::<f64>()
            - (1..=n - i).map(|j| (j as f64).ln()).sum::<f64>()
    };
    let ln_norm = |n: usize| -(n as f64) * e0.exp().ln_1p();
    // P-mass of i negative answers out of n: C(n, i) e^{(n−i)ε0}/(1 + e^{ε0})^n.
    let atoms: Vec<(f64, f64)> = (0..=k)
        .map(|i| {
            let loss = (k as f64 - 2.0 * i as f64) * e0;
            (loss, (ln_c(k, i) + (k - i) as f64 * e0 + ln_norm(k)).exp())
        })
        .collect();
    let law = DiscreteLaw::from_atoms(atoms, f64::NEG_INFINITY);
    let acc = Accountant::new(vec![(Box::new(law) as Box<dyn LossLaw>, 2)])
        .unwrap()
        .with_accuracy(1e-4)
        .unwrap();
    let n = 2 * k;
    for eps in [1.0f64, 2.0] {
        let exact: f64 = (0..=n)
            .map(|i| {
                let a = (ln_c(n, i) + (n - i) as f64 * e0 + ln_norm(n)).exp();
                let b = (ln_c(n, i) + eps + i as f64 * e0 + ln_norm(n)).exp();
                (a - b).max(0.0)
            })
            .sum();
        let a = acc.delta(eps).unwrap();
        assert!(a.lower <= exact * (1.0 + 1e-9) && exact <= a.upper * (1.0 + 1e-9));
        assert!(
            a.upper / a.lower - 1.0 <= 1e-3,
            "ε {eps}: [{}, {}]",
            a.lower,
            a.upper
        );
    }
}

#[test]
fn a_tail_of_many_negligible_atoms_is_kept_on_the_lower_side() {
    // One atom at loss 0 and a million atoms of mass 1e-13 each (every one below the tail
    // target of ε(δ = 5e-8), δ·e^{−12}) spread over losses [2, 4]: ε(5e-8) from their exact
    // δ(ε) by bisection. The lower side once dropped every negligible atom of a purely
    // atomic law, high losses included: its end fell to 0 (a balls-in-bins epoch's bracket
    // stalled at 4e-4 whatever the step).
    let n = 1_000_000usize;
    let tail = 1e-7;
    let mut atoms = vec![(0.0, 1.0 - tail)];
    atoms.extend((0..n).map(|i| (2.0 + 2.0 * i as f64 / n as f64, tail / n as f64)));
    let delta_of = |eps: f64| -> f64 {
        atoms
            .iter()
            .filter(|a| a.0 > eps)
            .map(|&(x, p)| p * -(eps - x).exp_m1())
            .sum()
    };
    let target = 5e-8;
    let (mut lo, mut hi) = (0.0f64, 4.0f64);
    for _ in 0..60 {
        let m = 0.5 * (lo + hi);
        if delta_of(m) > target {
            lo = m
        } else {
            hi = m
        }
    }
    let exact = 0.5 * (lo + hi);
    let law = DiscreteLaw::from_atoms(atoms.clone(), f64::NEG_INFINITY);
    let a = Accountant::new(vec![(Box::new(law) as Box<dyn LossLaw>, 1)])
        .unwrap()
        .epsilon(target)
        .unwrap();
    assert!(
        a.lower <= exact + 1e-9 && exact <= a.upper + 1e-9,
        "[{}, {}] {exact}",
        a.lower,
        a.upper
    );
    assert!(
        a.upper / a.lower - 1.0 <= 1e-3,
        "[{}, {}] around {exact}",
        a.lower,
        a.upper
    );
}

#[test]
fn short_grids_leave_the_tail_to_the_branch_and_still_bracket_quadrature() {
    // A grid of 2^11 bins stops at a few dozen times X's mean, so at the larger ε every
    // δ comes from the epochs with a step above it (the branch of allocation.rs): the
    // other steps replaced by Scarf's law on the upper side, merged into barycentres on
    // the lower one.
    let grid = EpochGrid {
        max_bins: 1 << 11,
        ..EpochGrid::default()
    };
    for (mu, t) in [(1.5f64, 2u64), (2.0, 2), (2.0, 3)] {
        let l = epoch_laws(mu, t, grid).unwrap();
        let x = |z: f64| (mu * z - 0.5 * mu * mu).exp();
        let tf = t as f64;
        for eps in [0.5, 2.0, 4.0, 6.0] {
            let a = f64::exp(eps);
            // E[(S − a)_+]: the inner step in closed form, the others by Simpson.
            let remove = if t == 2 {
                gauss_average(|z| call(mu, 2.0 * a - x(z)) / 2.0)
            } else {
                gauss_average_n(
                    |z1| gauss_average_n(|z2| call(mu, 3.0 * a - x(z1) - x(z2)) / 3.0, 3000),
                    3000,
                )
            };
            let name = format!("short grid: t {t} mu {mu} eps {eps} (top {:.1})", l.cap);
            let (lo, hi) = (delta(&l.remove_lower, eps), delta(&l.remove_upper, eps));
            assert!(
                eps < 6.0 || l.cap < tf * a,
                "{name}: the branch is not reached"
            );
            // Past the top the upper side knows of the other steps only their mean (all
            // of it may sit at the far point): wide there, but on its side.
            // Past the top the upper side knows of the other steps only a bound on their
            // mean and variance (Scarf's law): a few % wide there.
            assert_brackets(&format!("{name} remove"), lo, remove, hi, 5e-2);
            // The lower side merges each event into its barycentre: close to the truth.
            assert!(
                lo >= remove * 0.99,
                "{name}: lower end {lo:e} far below {remove:e}"
            );
        }
    }
}

#[test]
fn large_shifts_bracket_the_gaussian_at_one_step() {
    // σ = 0.5 (μ = 2) and 0.4: one step is the Gaussian mechanism; the default grid's
    // top is below the e^{-32} cap, so the branch carries the far tail.
    for mu in [2.0f64, 2.5] {
        let l = epoch_laws(mu, 1, EpochGrid::default()).unwrap();
        for eps in [0.5, 2.0, 4.0, 8.0] {
            let exact = cdf(mu / 2.0 - eps / mu) - eps.exp() * cdf(-mu / 2.0 - eps / mu);
            let name = format!("mu {mu} eps {eps}");
            let (r0, r1) = (delta(&l.remove_lower, eps), delta(&l.remove_upper, eps));
            assert_brackets(&format!("{name} remove"), r0, exact, r1, 1e-3);
            let (a0, a1) = (delta(&l.add_lower, eps), delta(&l.add_upper, eps));
            assert!(
                a0 <= exact * (1.0 + 1e-9) && exact <= a1 * (1.0 + 1e-9),
                "{name} add: [{a0:e}, {a1:e}] misses {exact:e}"
            );
        }
    }
}

#[test]
fn large_shifts_with_few_steps_keep_the_add_direction_finite() {
    // σ = 0.5 and 0.4, two steps an epoch: X's median e^{−μ²/2} is a fraction of the
    // default grid's first cell, whose spread onto {0, h} put Q-mass at U = 0 (δ of Q‖P
    // at least that at every ε: 6e-2 before); that direction's laws now come from a grid
    // fine at the median. Against the two-step quadrature, both directions.
    for mu in [2.0f64, 2.5] {
        let l = epoch_laws(mu, 2, EpochGrid::default()).unwrap();
        assert!(
            l.add_upper.ln_inf_mass().exp() < 1e-6,
            "mu {mu}: Q‖P mass at +∞ {:e}",
            l.add_upper.ln_inf_mass().exp()
        );
        let x1 = |z: f64| (mu * z - 0.5 * mu * mu).exp();
        for eps in [0.1, 0.5, 1.0, 2.0] {
            let a = f64::exp(eps);
            let remove = gauss_average(|z| 0.5 * call(mu, 2.0 * a - x1(z)));
            let add = a * gauss_average(|z| 0.5 * put(mu, 2.0 / a - x1(z)));
            let name = format!("t 2 mu {mu} eps {eps}");
            let (lo, hi) = (delta(&l.remove_lower, eps), delta(&l.remove_upper, eps));
            assert_brackets(&format!("{name} remove"), lo, remove, hi, 2e-3);
            let (lo, hi) = (delta(&l.add_lower, eps), delta(&l.add_upper, eps));
            assert_brackets(&format!("{name} add"), lo, add, hi, 2e-2);
        }
    }
}

#[test]
fn shifts_beyond_three_are_refused_with_the_range() {
    // σ = 0.1 and 0.05 (shifts 10 and 20) panicked in the FFT sums or ran for minutes.
    for mu in [3.01f64, 10.0, 20.0, 50.0] {
        assert!(epoch_laws(mu, 50, EpochGrid::default()).is_err(), "mu {mu}");
    }
    for sigma in ["0.1", "0.05", "0.3"] {
        let e = format!("subsampled-gaussian:sigma={sigma},sampling=allocation,steps=50")
            .parse::<composition::accountant::input::spec::MechanismSpec>()
            .unwrap_err()
            .0;
        assert!(
            e.contains("sensitivity/sigma") && e.contains("[1e-6, 3]"),
            "{e}"
        );
    }
    assert!(
        "subsampled-gaussian:sigma=0.34,sampling=allocation,steps=50"
            .parse::<composition::accountant::input::spec::MechanismSpec>()
            .is_ok()
    );
}
