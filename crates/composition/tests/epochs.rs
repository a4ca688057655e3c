//! Shuffled epochs (docs/accountant.md §2.9): the certified lower bound from the largest
//! of an epoch's outputs, against the closed-form law of that maximum (one epoch, by
//! quadrature) and against the epoch's own pair by Monte Carlo; the balls-in-bins SPEC's
//! parse errors. (Balls-in-bins' own bracket, §2.10, is tested in `allocation.rs`.)

use composition::accountant::{Composition, MechanismSpec};
use densities::normal::ln_cdf;

fn parse(s: &str) -> MechanismSpec {
    s.parse().unwrap()
}

/// `δ(ε)` of the pair (max under P, max under Q) in the larger direction, by the
/// midpoint rule on a fine grid over [−12, μ + 12] (densities in closed form).
fn max_statistic_delta(mu: f64, t: f64, eps: f64) -> f64 {
    let phi = |z: f64| (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let cdf = |z: f64| ln_cdf(z).exp();
    let f_p = |x: f64| {
        phi(x - mu) * cdf(x).powf(t - 1.0)
            + (t - 1.0) * cdf(x - mu) * phi(x) * cdf(x).powf((t - 2.0).max(0.0))
    };
    let f_q = |x: f64| t * phi(x) * cdf(x).powf(t - 1.0);
    let (a, b, n) = (-12.0, mu + 12.0, 400_000);
    let h = (b - a) / n as f64;
    let e = eps.exp();
    let (mut pq, mut qp) = (0.0, 0.0);
    for i in 0..n {
        let x = a + (i as f64 + 0.5) * h;
        let (p, q) = (f_p(x), f_q(x));
        pq += (p - e * q).max(0.0) * h;
        qp += (q - e * p).max(0.0) * h;
    }
    pq.max(qp)
}

#[test]
fn one_epoch_brackets_the_maximum_statistics_closed_form() {
    for (sigma, t) in [(0.7, 10u64), (1.0, 100)] {
        let s = parse(&format!(
            "subsampled-gaussian:sigma={sigma},sampling=shuffle,batch=1000,n={}",
            1000 * t
        ));
        let comp = Composition::lower_bound(&[s])
            .unwrap()
            .with_accuracy(1e-4)
            .unwrap();
        for eps in [0.1, 1.5] {
            let exact = max_statistic_delta(1.0 / sigma, t as f64, eps);
            let a = comp.delta(eps).unwrap();
            assert!(
                a.lower <= exact * (1.0 + 1e-6) && exact <= a.upper * (1.0 + 1e-6),
                "σ = {sigma}, t = {t}, ε = {eps}: [{}, {}] misses {exact}",
                a.lower,
                a.upper
            );
        }
    }
}

/// Seeded standard normals (a small LCG and Box–Muller: the test needs no crate).
struct Normals(u64);

impl Normals {
    fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn next(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

#[test]
fn the_lower_bound_is_below_the_epochs_own_pair_by_monte_carlo() {
    // The epoch with every other contribution 0: P = (1/t)Σ N(μe_j), Q = N(0, I_t). With
    // S = Σ e^{μZ_j − μ²/2}, Z ~ N(0, I): δ_{P‖Q}(ε) = E[(S/t − e^ε)_+] and
    // δ_{Q‖P}(ε) = E[(1 − e^ε S/t)_+]. The certified lower end must not exceed the larger
    // (mean + 5 standard errors), and should not be far below it.
    let (sigma, t) = (0.8, 4usize);
    let mu = 1.0 / sigma;
    let s = parse(&format!(
        "subsampled-gaussian:sigma={sigma},sampling=shuffle,batch=1000,n={}",
        1000 * t
    ));
    let comp = Composition::lower_bound(&[s]).unwrap();
    let mut g = Normals(7);
    let n = 400_000;
    let draws: Vec<f64> = (0..n)
        .map(|_| {
            (0..t)
                .map(|_| (mu * g.next() - 0.5 * mu * mu).exp())
                .sum::<f64>()
                / t as f64
        })
        .collect();
    for eps in [0.1f64, 0.5, 1.0] {
        let e = eps.exp();
        let stats = |f: &dyn Fn(f64) -> f64| {
            let v: Vec<f64> = draws.iter().map(|&r| f(r)).collect();
            let m = v.iter().sum::<f64>() / n as f64;
            let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
            (m, (var / n as f64).sqrt())
        };
        let (m1, se1) = stats(&|r| (r - e).max(0.0));
        let (m2, se2) = stats(&|r| (1.0 - e * r).max(0.0));
        let (m, se) = if m1 > m2 { (m1, se1) } else { (m2, se2) };
        let lo = comp.delta(eps).unwrap().lower;
        assert!(
            lo <= m + 5.0 * se,
            "ε = {eps}: lower bound {lo} above the pair's δ {m} ± {se}"
        );
        assert!(
            lo >= 0.5 * m,
            "ε = {eps}: lower bound {lo} far below the pair's δ {m}"
        );
    }
}

#[test]
fn one_step_epochs_are_the_gaussian_and_the_samplers_are_refused_where_no_upper_bound_holds() {
    // t = 1: the maximum is the output itself, the Gaussian mechanism (Balle & Wang's δ).
    let (sigma, eps): (f64, f64) = (0.9, 1.0);
    let mu = 1.0 / sigma;
    let exact = ln_cdf(mu / 2.0 - eps / mu).exp() - eps.exp() * ln_cdf(-mu / 2.0 - eps / mu).exp();
    let s = parse("subsampled-gaussian:sigma=0.9,sampling=shuffle,batch=100,n=100");
    let a = Composition::lower_bound(std::slice::from_ref(&s))
        .unwrap()
        .delta(eps)
        .unwrap();
    assert!(a.lower <= exact && exact <= a.upper);
    // Everything but the lower-bound route refuses them (manifests, the solver, Python's
    // object API all go through `accountant`).
    let e = Composition::of(&[s]).unwrap_err().0;
    assert!(e.contains("no certified upper bound"), "{e}");
    let err = |s: &str| s.parse::<MechanismSpec>().unwrap_err().0;
    for (bad, needle) in [
        (
            "subsampled-gaussian:sigma=1,sampling=shuffle,batch=700,n=100",
            "at most n",
        ),
        (
            "subsampled-gaussian:sigma=1,sampling=shuffle,batch=10,n=101",
            "mod batch",
        ),
        (
            "subsampled-gaussian:sigma=1,sampling=shuffle,batch=10",
            "needs batch and n",
        ),
        (
            "subsampled-gaussian:sigma=1,sampling=allocation",
            "needs steps",
        ),
        (
            "subsampled-gaussian:sigma=1,sampling=allocation,steps=0",
            "steps = 0",
        ),
        (
            "subsampled-gaussian:sigma=1,sampling=allocation,steps=10,q=0.1",
            "no q",
        ),
        (
            "subsampled-gaussian:sigma=1,q=0.1,steps=10",
            "allocation only",
        ),
        (
            "subsampled-gaussian:sigma=1,sampling=shuffle,batch=10,n=100,neighbours=replace-one",
            "add/remove",
        ),
        (
            "subsampled-laplace:scale=1,sampling=allocation,steps=10",
            "subsampled-gaussian",
        ),
    ] {
        let e = err(bad);
        assert!(e.contains(needle), "{bad}: '{e}' lacks '{needle}'");
    }
}
