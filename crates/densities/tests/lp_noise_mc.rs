//! The noise `∝ exp(−‖x‖_p^a)` of Dong, Su & Zhang (docs/maths.md §2) against independent
//! computations: the closed forms for `E X_1²` and the Fisher scalar against direct
//! quadrature in d = 1 and d = 2; the sampler's moments and marginal CDF against those;
//! the Monte Carlo Fisher estimate and Cramér–Rao ratio; the gradient against finite
//! differences; the Monte Carlo trade-off curve against `G_1` (Gaussian) and against the
//! Laplace closed form (d = 1, where λ has atoms); determinism across thread counts.

use densities::lp_noise::{
    chunk_rng, empirical_tradeoff, estimate_fisher, llr_samples, random_direction, LpNoise,
    MonteCarlo,
};
use densities::tradeoff::{alpha_grid, gaussian_tradeoff, laplace_tradeoff};
use rand::{Rng, SeedableRng};

/// Nodes and weights of 8-point Gauss–Legendre on [−1, 1].
const GL_X: [f64; 4] = [
    0.183_434_642_495_649_8,
    0.525_532_409_916_329,
    0.796_666_477_413_626_7,
    0.960_289_856_497_536_3,
];
const GL_W: [f64; 4] = [
    0.362_683_783_378_362,
    0.313_706_645_877_887_3,
    0.222_381_034_453_374_5,
    0.101_228_536_290_376_3,
];

/// Composite 8-point Gauss–Legendre nodes on [0, l], panels of width ≤ h, with the given
/// breakpoints as panel ends.
fn gl_nodes(l: f64, h: f64, breaks: &[f64]) -> Vec<(f64, f64)> {
    let mut ends = vec![0.0, l];
    ends.extend(breaks.iter().copied().filter(|&b| b > 0.0 && b < l));
    ends.sort_by(f64::total_cmp);
    let mut out = Vec::new();
    for w in ends.windows(2) {
        let n = ((w[1] - w[0]) / h).ceil().max(1.0) as usize;
        let step = (w[1] - w[0]) / n as f64;
        for k in 0..n {
            let mid = w[0] + (k as f64 + 0.5) * step;
            let half = 0.5 * step;
            for j in 0..4 {
                out.push((mid - half * GL_X[j], half * GL_W[j]));
                out.push((mid + half * GL_X[j], half * GL_W[j]));
            }
        }
    }
    out
}

/// Direct 2-D quadrature over the positive quadrant (the density is symmetric under sign
/// flips and swaps) of `e^{−φ}`, `x₁² e^{−φ}`, `‖∇φ‖² e^{−φ}`, and of the marginal mass
/// `P(0 ≤ X₁ ≤ t)` for each t. Returns (E X₁², c = E‖∇φ‖²/2, [P(X₁ ≤ t)]).
fn quad_d2(p: f64, a: f64, ts: &[f64]) -> (f64, f64, Vec<f64>) {
    let l = 45f64.powf(1.0 / a);
    let nodes1 = gl_nodes(
        l,
        0.05 * l.min(5.0),
        &ts.iter().map(|t| t.abs()).collect::<Vec<_>>(),
    );
    let nodes2 = gl_nodes(l, 0.05 * l.min(5.0), &[]);
    let (mut z, mut m2, mut f) = (0.0, 0.0, 0.0);
    let mut marg = vec![0.0; ts.len()];
    for &(x1, w1) in &nodes1 {
        let (mut hz, mut hf) = (0.0, 0.0);
        for &(x2, w2) in &nodes2 {
            let s = x1.powf(p) + x2.powf(p);
            let norm = s.powf(1.0 / p);
            let e = (-norm.powf(a)).exp();
            let g2 = a
                * a
                * norm.powf(2.0 * a - 2.0 * p)
                * (x1.powf(2.0 * p - 2.0) + x2.powf(2.0 * p - 2.0));
            hz += w2 * e;
            hf += w2 * e * g2;
        }
        z += w1 * hz;
        m2 += w1 * x1 * x1 * hz;
        f += w1 * hf;
        for (m, t) in marg.iter_mut().zip(ts) {
            if x1 < t.abs() {
                *m += w1 * hz;
            }
        }
    }
    // Quadrant integrals: Z = 4z; P(0 ≤ X₁ ≤ |t|) = 2·marg/(4z).
    let cdf = ts
        .iter()
        .zip(&marg)
        .map(|(t, m)| 0.5 + t.signum() * 0.5 * m / z)
        .collect();
    (m2 / z, f / z / 2.0, cdf)
}

const CONFIGS: [(f64, f64); 7] = [
    (1.0, 1.0),
    (2.0, 1.0),
    (4.0, 4.0),
    (2.0, 2.0),
    (1.5, 3.0),
    (3.0, 1.5),
    (1.0, 2.0),
];

#[test]
fn closed_forms_match_quadrature_in_one_and_two_dimensions() {
    for &(p, a) in &CONFIGS {
        // d = 1: density ∝ e^{−|x|^a}; E X² = Γ(3/a)/Γ(1/a), c = a² Γ(2 − 1/a)/Γ(1/a),
        // here by 1-D quadrature.
        let l = 45f64.powf(1.0 / a);
        let nodes = gl_nodes(l, 0.01, &[]);
        let z: f64 = nodes.iter().map(|(x, w)| w * (-x.powf(a)).exp()).sum();
        let m2: f64 = nodes
            .iter()
            .map(|(x, w)| w * x * x * (-x.powf(a)).exp())
            .sum();
        let f: f64 = nodes
            .iter()
            .map(|(x, w)| w * a * a * x.powf(2.0 * a - 2.0) * (-x.powf(a)).exp())
            .sum();
        let n1 = LpNoise::new(1, p, a).unwrap();
        assert!(
            (n1.coord_second_moment() / (m2 / z) - 1.0).abs() < 1e-9,
            "d=1 {p} {a}"
        );
        assert!(
            (n1.fisher_scalar() / (f / z) - 1.0).abs() < 1e-9,
            "d=1 fisher {p} {a}"
        );

        let (m2, c, _) = quad_d2(p, a, &[]);
        let n2 = LpNoise::new(2, p, a).unwrap();
        eprintln!(
            "d=2 p={p} a={a}: rel. err E X² {:.1e}, c {:.1e}",
            n2.coord_second_moment() / m2 - 1.0,
            n2.fisher_scalar() / c - 1.0
        );
        assert!(
            (n2.coord_second_moment() / m2 - 1.0).abs() < 1e-6,
            "d=2 E X² p={p} a={a}: {} vs {m2}",
            n2.coord_second_moment()
        );
        assert!(
            (n2.fisher_scalar() / c - 1.0).abs() < 1e-6,
            "d=2 c p={p} a={a}: {} vs {c}",
            n2.fisher_scalar()
        );
        // Scaling: sX has E X² · s² and c / s².
        let s = n2.with_scale(3.0).unwrap();
        assert!((s.coord_second_moment() / (9.0 * m2) - 1.0).abs() < 1e-6);
        assert!((s.fisher_scalar() * 9.0 / c - 1.0).abs() < 1e-6);
    }
}

fn mean_se(xs: impl Iterator<Item = f64>) -> (f64, f64) {
    let v: Vec<f64> = xs.collect();
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

#[test]
fn sampler_moments_match_closed_forms() {
    let n_samples = 100_000;
    for &(p, a) in &CONFIGS {
        for &d in &[1usize, 2, 30] {
            let noise = LpNoise::new(d, p, a).unwrap().with_scale(1.7).unwrap();
            let xs = noise.sample_n(n_samples, 11);
            // E φ(X) = E‖X/s‖_p^a = d/a (φ(X) ~ Gamma(d/a)).
            let (m, se) = mean_se(
                xs.rows()
                    .into_iter()
                    .map(|x| noise.phi(x.as_slice().unwrap()).unwrap()),
            );
            let want = noise.mean_phi();
            assert!(
                (m - want).abs() < 4.5 * se,
                "Eφ d={d} p={p} a={a}: {m} vs {want} (se {se})"
            );
            assert!((se / (want / n_samples as f64).sqrt() - 1.0).abs() < 0.05);
            // E X_1² (all coordinates pooled per draw).
            let (m, se) = mean_se(
                xs.rows()
                    .into_iter()
                    .map(|x| x.iter().map(|v| v * v).sum::<f64>() / d as f64),
            );
            let want = noise.coord_second_moment();
            assert!(
                (m - want).abs() < 4.5 * se,
                "EX² d={d} p={p} a={a}: {m} vs {want} (se {se})"
            );
            // Symmetry: E X_1 = 0.
            let (m, se) = mean_se(xs.column(0).iter().copied());
            assert!(m.abs() < 4.5 * se, "EX₁ d={d} p={p} a={a}: {m}");
        }
    }
}

#[test]
fn sampler_marginal_cdf_matches_quadrature_in_two_dimensions() {
    let ts = [-1.3, -0.6, -0.1, 0.25, 0.7, 1.5];
    let n = 200_000;
    for &(p, a) in &CONFIGS {
        let (_, _, cdf) = quad_d2(p, a, &ts);
        let noise = LpNoise::new(2, p, a).unwrap();
        let xs = noise.sample_n(n, 5);
        for (t, f) in ts.iter().zip(&cdf) {
            let emp = xs.column(1).iter().filter(|&x| x <= t).count() as f64 / n as f64;
            let se = (f * (1.0 - f) / n as f64).sqrt();
            assert!(
                (emp - f).abs() < 4.5 * se,
                "p={p} a={a} t={t}: {emp} vs {f}"
            );
        }
    }
}

#[test]
fn gradient_matches_finite_differences() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
    for &(p, a) in &CONFIGS {
        let noise = LpNoise::new(5, p, a).unwrap().with_scale(0.8).unwrap();
        for _ in 0..20 {
            let x: Vec<f64> = (0..5).map(|_| rng.gen_range(-2.0..2.0)).collect();
            let mut g = vec![0.0; 5];
            noise.grad_phi(&x, &mut g).unwrap();
            for i in 0..5 {
                let h = 1e-6;
                let (mut xp, mut xm) = (x.clone(), x.clone());
                xp[i] += h;
                xm[i] -= h;
                let fd = (noise.phi(&xp).unwrap() - noise.phi(&xm).unwrap()) / (2.0 * h);
                assert!(
                    (fd - g[i]).abs() < 1e-6 * (1.0 + g[i].abs()),
                    "p={p} a={a}: {fd} vs {}",
                    g[i]
                );
            }
        }
    }
    let n = LpNoise::new(3, 2.0, 1.0).unwrap();
    let mut g = [1.0; 3];
    n.grad_phi(&[0.0; 3], &mut g).unwrap();
    assert_eq!(g, [0.0; 3]);
}

#[test]
fn fisher_monte_carlo_matches_exact_and_cramer_rao() {
    let mc = MonteCarlo::new(100_000, 17).unwrap();
    for &(p, a) in &CONFIGS {
        let noise = LpNoise::new(30, p, a).unwrap();
        let est = estimate_fisher(&noise, mc);
        let c = noise.fisher_scalar();
        assert!(
            (est.scalar - c).abs() <= 4.5 * est.scalar_se + 1e-12 * c,
            "p={p} a={a}: ĉ = {} ± {} vs {c}",
            est.scalar,
            est.scalar_se
        );
        let r = noise.cramer_rao_ratio();
        assert!(r >= 1.0 - 1e-12, "Cramér–Rao ratio {r} < 1 for p={p} a={a}");
        assert!(
            (est.cramer_rao_ratio - r).abs() <= 4.5 * est.cramer_rao_se + 1e-12,
            "p={p} a={a}: ratio {} ± {} vs {r}",
            est.cramer_rao_ratio,
            est.cramer_rao_se
        );
        // Normalised noise has Fisher information I (to the estimate's accuracy): scaling X
        // by s divides c by s², so the rescaled noise's own Monte Carlo estimate (fresh
        // draws, through its sampler and gradient, not the closed form) must be c/ĉ,
        // within 4.5 standard errors.
        let normed = noise.with_scale(est.normalising_scale()).unwrap();
        let again = estimate_fisher(&normed, MonteCarlo::new(20_000, 18).unwrap());
        assert!(
            (again.scalar - c / est.scalar).abs() <= 4.5 * again.scalar_se,
            "p={p} a={a}: normalised ĉ = {} ± {} vs {}",
            again.scalar,
            again.scalar_se,
            c / est.scalar
        );
    }
    // Gaussian p = a = 2: N(0, I/2), Fisher scalar exactly 2, ratio exactly 1.
    let g = LpNoise::new(30, 2.0, 2.0).unwrap();
    let est = estimate_fisher(&g, mc);
    assert!((est.scalar - 2.0).abs() < 4.5 * est.scalar_se);
    assert!((est.cramer_rao_ratio - 1.0).abs() < 4.5 * est.cramer_rao_se);
    assert!((est.cramer_rao_ratio - 1.0).abs() < 0.01);
    // (1, 1): i.i.d. Laplace coordinates, ratio 2.
    let l = LpNoise::new(30, 1.0, 1.0).unwrap();
    let est = estimate_fisher(&l, mc);
    assert!(est.cramer_rao_ratio > 1.9 && est.cramer_rao_ratio < 2.1);
    assert!((l.cramer_rao_ratio() - 2.0).abs() < 1e-12);
}

/// Fraction of grid points whose band contains the reference value.
fn coverage(points: &[densities::lp_noise::TradeoffPoint], reference: impl Fn(f64) -> f64) -> f64 {
    let inside = points
        .iter()
        .filter(|q| {
            let r = reference(q.alpha);
            q.lo <= r && r <= q.hi
        })
        .count();
    inside as f64 / points.len() as f64
}

#[test]
fn gaussian_monte_carlo_tradeoff_is_g1_within_band() {
    let d = 30;
    let noise = LpNoise::normalised(d, 2.0, 2.0).unwrap();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(99);
    let v = random_direction(d, &mut rng).unwrap();
    let mut e1 = vec![0.0; d];
    e1[0] = 1.0;
    let grid: Vec<f64> = alpha_grid(101).unwrap()[1..100].to_vec();
    for (label, dir) in [("random v", &v), ("e1", &e1)] {
        let pts = empirical_tradeoff(
            &noise,
            dir,
            &grid,
            MonteCarlo::new(200_000, 4).unwrap(),
            1.96,
        )
        .unwrap();
        let g1 = |a: f64| gaussian_tradeoff(1.0, a).unwrap();
        let cov = coverage(&pts, g1);
        let worst = pts
            .iter()
            .map(|q| (q.beta - g1(q.alpha)).abs())
            .fold(0.0, f64::max);
        eprintln!("Gaussian {label}: coverage {cov}, worst |β̂ − G_1| {worst}");
        // Pointwise 95% bands; neighbouring points are correlated, so allow slack.
        assert!(cov >= 0.8, "{label}: coverage {cov}");
        assert!(worst < 0.005, "{label}: worst deviation {worst}");
        for q in &pts {
            assert!(q.lo <= q.beta && q.beta <= q.hi && q.se > 0.0 && q.se < 0.01);
        }
    }
}

/// In d = 1, p = a = 1 is Laplace(1): the Monte Carlo curve must match the closed form of
/// docs/maths.md §1.1. λ(y) = |y| − |y − 1| has atoms at ±1, exercising the randomised test.
#[test]
fn one_dimensional_laplace_matches_closed_form() {
    let noise = LpNoise::new(1, 1.0, 1.0).unwrap();
    let grid: Vec<f64> = alpha_grid(201).unwrap();
    let pts = empirical_tradeoff(
        &noise,
        &[1.0],
        &grid,
        MonteCarlo::new(400_000, 8).unwrap(),
        1.96,
    )
    .unwrap();
    let lap = |a: f64| laplace_tradeoff(1.0, 1.0, a).unwrap();
    let cov = coverage(&pts[1..200], lap);
    let worst = pts
        .iter()
        .map(|q| (q.beta - lap(q.alpha)).abs())
        .fold(0.0, f64::max);
    eprintln!("Laplace d=1: coverage {cov}, worst |β̂ − T| {worst}");
    assert!(cov >= 0.8, "coverage {cov}");
    assert!(worst < 0.004, "worst {worst}");
}

#[test]
fn results_do_not_depend_on_thread_count() {
    let noise = LpNoise::normalised(30, 4.0, 4.0).unwrap();
    let mut v = vec![0.0; 30];
    v[0] = 1.0;
    let mc = MonteCarlo::new(3 * 8192 + 123, 2024).unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            (
                llr_samples(&noise, &v, mc).unwrap(),
                estimate_fisher(&noise, mc),
                noise.sample_n(20_000, 7),
            )
        })
    };
    let (l1, f1, s1) = run(1);
    for threads in [2, 3] {
        let (l, f, s) = run(threads);
        assert_eq!(l, l1);
        assert_eq!(f, f1);
        assert_eq!(s, s1);
    }
    // Run to run, and a different seed differs.
    assert_eq!(llr_samples(&noise, &v, mc).unwrap(), l1);
    let other = llr_samples(&noise, &v, MonteCarlo::new(mc.samples(), 2025).unwrap()).unwrap();
    assert_ne!(other, l1);
    // Different chunks have different streams.
    assert_ne!(chunk_rng(1, 0).gen::<u64>(), chunk_rng(1, 1).gen::<u64>());
}

#[test]
fn invalid_inputs_are_errors() {
    assert!(LpNoise::new(0, 2.0, 2.0).is_err());
    assert!(LpNoise::new(3, 0.99, 2.0).is_err());
    assert!(LpNoise::new(3, 2.0, f64::NAN).is_err());
    assert!(LpNoise::new(3, f64::INFINITY, 2.0).is_err());
    let n = LpNoise::new(3, 2.0, 2.0).unwrap();
    assert!(n.with_scale(0.0).is_err());
    assert!(n.phi(&[1.0, 2.0]).is_err());
    assert!(n.grad_phi(&[1.0, 2.0, 3.0], &mut [0.0; 2]).is_err());
    let mut rng = rand_pcg::Pcg64::seed_from_u64(0);
    assert!(n.sample(&mut rng, &mut [0.0; 4]).is_err());
    assert!(MonteCarlo::new(0, 1).is_err());
    let mc = MonteCarlo::new(100, 1).unwrap();
    assert!(llr_samples(&n, &[1.0, 0.0], mc).is_err());
    assert!(llr_samples(&n, &[1.0, f64::NAN, 0.0], mc).is_err());
    assert!(empirical_tradeoff(&n, &[1.0, 0.0, 0.0], &[1.5], mc, 2.0).is_err());
    assert!(empirical_tradeoff(&n, &[1.0, 0.0, 0.0], &[0.5], mc, -1.0).is_err());
    assert!(random_direction(0, &mut rng).is_err());
    // Extreme but valid α and zero shift stay finite.
    let l = llr_samples(&n, &[0.0; 3], mc).unwrap();
    for q in l.tradeoff(&[0.0, 1.0, 0.5], 2.0).unwrap() {
        assert!(q.beta.is_finite() && q.lo.is_finite() && q.hi.is_finite());
    }
}

/// The reported standard error matches the spread of β̂ over independent seeds
/// (replicates), for a continuous λ (Gaussian), for λ with atoms (Laplace, d = 1), and
/// for the fig11 case (1, 1) with v = e₁ in d = 30.
#[test]
fn standard_error_matches_replicate_spread() {
    let alphas = [0.02, 0.1, 0.3, 0.6, 0.9];
    let d30 = |p, a| LpNoise::normalised(30, p, a).unwrap();
    let mut e1 = vec![0.0; 30];
    e1[0] = 1.0;
    let cases: Vec<(&str, LpNoise, Vec<f64>)> = vec![
        ("gauss d=30", d30(2.0, 2.0), vec![1.0 / 30f64.sqrt(); 30]),
        ("laplace d=1", LpNoise::new(1, 1.0, 1.0).unwrap(), vec![1.0]),
        ("(1,1) e1", d30(1.0, 1.0), e1.clone()),
        ("(2,1) e1", d30(2.0, 1.0), e1),
    ];
    let reps = 300;
    for (label, noise, v) in cases {
        let mut betas = vec![Vec::new(); alphas.len()];
        let mut ses = vec![0.0; alphas.len()];
        for seed in 0..reps {
            let pts = empirical_tradeoff(
                &noise,
                &v,
                &alphas,
                MonteCarlo::new(4000, 1000 + seed).unwrap(),
                1.0,
            )
            .unwrap();
            for (i, q) in pts.iter().enumerate() {
                betas[i].push(q.beta);
                ses[i] += q.se / reps as f64;
            }
        }
        for (i, bs) in betas.iter().enumerate() {
            let (m, se_of_mean) = mean_se(bs.iter().copied());
            let sd = se_of_mean * (reps as f64).sqrt();
            let ratio = ses[i] / sd;
            eprintln!("{label} α={}: mean β̂ {m:.4}, replicate sd {sd:.5}, mean se {:.5}, ratio {ratio:.3}", alphas[i], ses[i]);
            assert!(
                ratio > 0.8 && ratio < 1.25,
                "{label} α={}: se/sd = {ratio}",
                alphas[i]
            );
        }
    }
}

/// fig11's claims in d = 30 (Dong, Su & Zhang, Figure 1; docs/maths.md §2): with Fisher
/// information normalised to I, the trade-off against a random unit direction is close to
/// G_1, while v = e₁ stays one-dimensional and visibly non-Gaussian for (1, 1) and (4, 4)
/// (for (2, 1) the law is rotation invariant, so e₁ is as good as any direction).
#[test]
fn fig11_random_direction_is_nearly_gaussian_e1_is_not() {
    let d = 30;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    let v = random_direction(d, &mut rng).unwrap();
    let mut e1 = vec![0.0; d];
    e1[0] = 1.0;
    let grid = alpha_grid(51).unwrap();
    let mc = MonteCarlo::new(200_000, 1).unwrap();
    let worst = |noise: &LpNoise, dir: &[f64]| {
        empirical_tradeoff(noise, dir, &grid, mc, 1.96)
            .unwrap()
            .iter()
            .map(|q| (q.beta - gaussian_tradeoff(1.0, q.alpha).unwrap()).abs())
            .fold(0.0, f64::max)
    };
    for &(p, a) in &[(1.0, 1.0), (2.0, 1.0), (4.0, 4.0)] {
        let noise = LpNoise::normalised(d, p, a).unwrap();
        let (w_rand, w_e1) = (worst(&noise, &v), worst(&noise, &e1));
        eprintln!("fig11 p={p} a={a}: max |β̂ − G_1| random v {w_rand:.4}, e1 {w_e1:.4}");
        assert!(w_rand < 0.025, "p={p} a={a}: random v deviates {w_rand}");
        if p != 2.0 {
            assert!(w_e1 > 0.08, "p={p} a={a}: e1 deviates only {w_e1}");
        }
    }
}

/// The rows of `sample_n` are the draws behind `llr_samples` and `estimate_fisher` (same
/// chunk streams): the log-likelihood ratios recomputed from the sample matrix with the
/// public, scaled `phi` match `llr_samples` (which works in unscaled coordinates), and
/// the Fisher scalar recomputed with `grad_phi` matches `estimate_fisher`.
#[test]
fn sample_matrix_reproduces_the_monte_carlo_statistics() {
    let n = 2 * 8192 + 77;
    for &(p, a) in &CONFIGS {
        let noise = LpNoise::normalised(6, p, a).unwrap();
        let v = [0.7, -0.2, 0.0, 0.1, 0.0, 0.3];
        let mc = MonteCarlo::new(n, 31).unwrap();
        let xs = noise.sample_n(n, 31);
        assert_eq!(xs.dim(), (n, 6));
        let shifted = |x: &[f64], sign: f64| -> Vec<f64> {
            x.iter().zip(&v).map(|(a, b)| a + sign * b).collect()
        };
        let (mut null, mut alt) = (Vec::new(), Vec::new());
        let mut grad = [0.0; 6];
        let mut g_sum = 0.0;
        for x in xs.rows() {
            let x = x.as_slice().unwrap();
            let phi = noise.phi(x).unwrap();
            null.push(phi - noise.phi(&shifted(x, -1.0)).unwrap());
            alt.push(noise.phi(&shifted(x, 1.0)).unwrap() - phi);
            noise.grad_phi(x, &mut grad).unwrap();
            g_sum += grad.iter().map(|g| g * g).sum::<f64>() / 6.0;
        }
        null.sort_by(f64::total_cmp);
        alt.sort_by(f64::total_cmp);
        let l = llr_samples(&noise, &v, mc).unwrap();
        for (got, want) in [(l.null(), &null), (l.alt(), &alt)] {
            for (g, w) in got.iter().zip(want.iter()) {
                assert!(
                    (g - w).abs() < 1e-9 * (1.0 + w.abs()),
                    "p={p} a={a}: {g} vs {w}"
                );
            }
        }
        let f = estimate_fisher(&noise, mc);
        let c = g_sum / n as f64;
        assert!(
            (f.scalar / c - 1.0).abs() < 1e-12,
            "p={p} a={a}: {} vs {c}",
            f.scalar
        );
    }
}
