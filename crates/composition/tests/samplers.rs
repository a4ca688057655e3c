//! The samplers, neighbour relations and groups of docs/accountant.md §2.7 (issue 31),
//! each dominating pair against the mechanism it stands for: small datasets of
//! one-dimensional contributions in [−1, 1], every batch enumerated, the two output laws
//! (mixtures of Gaussians) integrated by Gauss–Legendre between the crossings of
//! `p − e^ε q`. The mechanism's δ(ε) must never exceed the pair's certified upper end,
//! and at the worst configuration it must reach the pair's lower end (the pair is tight).

use composition::accountant::Composition;
use composition::accountant::MechanismSpec;
use densities::normal::ln_cdf;

const SIGMA: f64 = 0.8;
const EPSILONS: [f64; 4] = [0.05, 0.5, 1.0, 2.0];

/// A mixture of unit-variance Gaussians: `(weight, mean)`, equal means merged.
type Mixture = Vec<(f64, f64)>;

fn merged(mut c: Vec<(f64, f64)>) -> Mixture {
    c.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut out: Mixture = Vec::new();
    for (w, m) in c {
        match out.last_mut() {
            Some(last) if (last.1 - m).abs() < 1e-12 => last.0 += w,
            _ => out.push((w, m)),
        }
    }
    out
}

/// Output law of the noisy sum of a Poisson sample of rate q of `x` (in units of σ).
fn poisson(x: &[f64], q: f64) -> Mixture {
    let n = x.len();
    merged(
        (0u32..1 << n)
            .map(|mask| {
                let k = mask.count_ones() as i32;
                let s: f64 = (0..n).filter(|i| mask >> i & 1 == 1).map(|i| x[i]).sum();
                (q.powi(k) * (1.0 - q).powi(n as i32 - k), s / SIGMA)
            })
            .collect(),
    )
}

/// Output law of the noisy sum of a uniformly random batch of exactly `b` of `x`.
fn fixed(x: &[f64], b: u32) -> Mixture {
    let n = x.len();
    let masks: Vec<u32> = (0u32..1 << n).filter(|m| m.count_ones() == b).collect();
    let w = 1.0 / masks.len() as f64;
    merged(
        masks
            .iter()
            .map(|mask| {
                let s: f64 = (0..n).filter(|i| mask >> i & 1 == 1).map(|i| x[i]).sum();
                (w, s / SIGMA)
            })
            .collect(),
    )
}

fn density(c: &Mixture, y: f64) -> f64 {
    let norm = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
    c.iter()
        .map(|&(w, m)| w * norm * (-0.5 * (y - m) * (y - m)).exp())
        .sum()
}

/// Gauss–Legendre nodes and weights on [−1, 1] (8 points).
const GL8: [(f64, f64); 8] = [
    (-0.960_289_856_497_536_3, 0.101_228_536_290_376_26),
    (-0.796_666_477_413_626_7, 0.222_381_034_453_374_47),
    (-0.525_532_409_916_329, 0.313_706_645_877_887_3),
    (-0.183_434_642_495_649_8, 0.362_683_783_378_362),
    (0.183_434_642_495_649_8, 0.362_683_783_378_362),
    (0.525_532_409_916_329, 0.313_706_645_877_887_3),
    (0.796_666_477_413_626_7, 0.222_381_034_453_374_47),
    (0.960_289_856_497_536_3, 0.101_228_536_290_376_26),
];

/// `δ(ε) = ∫ (p − e^ε q)_+`: panels of width 1/8 over the mixtures' range ± 12, each
/// split at the sign changes of `p − e^ε q` (found on 8 sub-points, then by bisection),
/// the positive pieces by 8-point Gauss–Legendre.
fn hockey_stick(p: &Mixture, q: &Mixture, eps: f64) -> f64 {
    let e = eps.exp();
    let g = |y: f64| density(p, y) - e * density(q, y);
    let lo = p.iter().chain(q).map(|c| c.1).fold(f64::INFINITY, f64::min) - 12.0;
    let hi = p
        .iter()
        .chain(q)
        .map(|c| c.1)
        .fold(f64::NEG_INFINITY, f64::max)
        + 12.0;
    let gl = |a: f64, b: f64| -> f64 {
        let (h, m) = (0.5 * (b - a), 0.5 * (a + b));
        GL8.iter()
            .map(|&(x, w)| w * g(m + h * x).max(0.0))
            .sum::<f64>()
            * h
    };
    let panels = ((hi - lo) * 8.0).ceil() as usize;
    let width = (hi - lo) / panels as f64;
    let mut total = 0.0;
    for i in 0..panels {
        let (a, b) = (lo + i as f64 * width, lo + (i + 1) as f64 * width);
        let mut cuts = vec![a];
        let sub = 8;
        for j in 0..sub {
            let (u, v) = (
                a + j as f64 * width / sub as f64,
                a + (j + 1) as f64 * width / sub as f64,
            );
            if (g(u) > 0.0) != (g(v) > 0.0) {
                let (mut s, mut t) = (u, v);
                for _ in 0..80 {
                    let m = 0.5 * (s + t);
                    if (g(m) > 0.0) == (g(s) > 0.0) {
                        s = m;
                    } else {
                        t = m;
                    }
                }
                cuts.push(0.5 * (s + t));
            }
        }
        cuts.push(b);
        total += cuts.windows(2).map(|w| gl(w[0], w[1])).sum::<f64>();
    }
    total
}

/// The pair's certified bracket of δ(ε), both directions, at relative accuracy 1e-6.
fn pair_delta(text: &str, eps: f64) -> (f64, f64) {
    let m: MechanismSpec = text.parse().unwrap();
    let a = Composition::of(&[m])
        .unwrap()
        .with_accuracy(1e-6)
        .unwrap()
        .delta(eps)
        .unwrap();
    (a.lower, a.upper)
}

/// Seeded uniform contributions in [−1, 1] (a small LCG: the test needs no crate).
fn contributions(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

/// The replacing value of a replace-one neighbour: −1 for +1 (the worst case), another
/// value in [−1, 1] otherwise.
fn other(v: f64) -> f64 {
    if v == 1.0 {
        -1.0
    } else {
        0.5 * v - 0.25
    }
}

/// One sampler and relation: `laws(x)` gives the two neighbouring output laws for the
/// configuration `x`; `worst` is the configuration where the pair is attained.
struct Case {
    spec: &'static str,
    laws: fn(&[f64]) -> (Mixture, Mixture),
    worst: Vec<f64>,
    len: usize,
}

/// Checks `case` at every ε: each configuration's δ (larger direction) at most the
/// pair's upper end, and the worst one's at least its lower end. Returns, per ε, the
/// worst configuration's δ in each direction `(P‖Q, Q‖P)`.
fn check(case: &Case) -> Vec<(f64, f64)> {
    let mut configs: Vec<Vec<f64>> = (1..=4).map(|s| contributions(s, case.len)).collect();
    configs.push(case.worst.clone());
    let mut worst = Vec::new();
    for &eps in &EPSILONS {
        let (lo, hi) = pair_delta(case.spec, eps);
        for (i, x) in configs.iter().enumerate() {
            let (p, q) = (case.laws)(x);
            let (d_pq, d_qp) = (hockey_stick(&p, &q, eps), hockey_stick(&q, &p, eps));
            let d = d_pq.max(d_qp);
            assert!(
                d <= hi * (1.0 + 1e-9) + 1e-15,
                "{} at ε = {eps}, configuration {x:?}: the mechanism's δ = {d:e} exceeds the \
                 pair's certified upper end {hi:e}",
                case.spec
            );
            if i == configs.len() - 1 {
                assert!(
                    d >= lo * (1.0 - 1e-9) - 1e-15,
                    "{} at ε = {eps}: the worst configuration's δ = {d:e} is below the pair's \
                     certified lower end {lo:e} (the pair is not tight there)",
                    case.spec
                );
                worst.push((d_pq, d_qp));
            }
        }
    }
    worst
}

#[test]
fn poisson_add_remove_pair_against_enumeration_and_both_directions_decide() {
    // D' = D ∪ {x_n}: the worst D has every other contribution 0 and x_n = 1.
    let case = Case {
        spec: "subsampled-gaussian:sigma=0.8,q=0.3",
        laws: |x| (poisson(x, 0.3), poisson(&x[..x.len() - 1], 0.3)),
        worst: vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
        len: 6,
    };
    let w = check(&case);
    // The remove direction decides δ(ε) here (for ε ≥ 0 it does for every rate and shift
    // tried, one use by quadrature and up to 100 uses by the accountant); the add
    // direction decides parts of the trade-off curve (the next test).
    assert!(
        w.iter().all(|&(pq, qp)| pq > qp * 1.01),
        "the remove direction does not decide: {w:?}"
    );
}

/// `T(Q, P)(α)` of a pair whose likelihood ratio `p/q` increases in y: the most powerful
/// test rejects Q for `y > t` with `Q(Y > t) = α`, and `β = P(Y ≤ t)`; `Φ` in closed form.
fn tradeoff_increasing(p: &Mixture, q: &Mixture, alpha: f64) -> f64 {
    let cdf =
        |c: &Mixture, t: f64| -> f64 { c.iter().map(|&(w, m)| w * ln_cdf(t - m).exp()).sum() };
    let sf = |c: &Mixture, t: f64| -> f64 { c.iter().map(|&(w, m)| w * ln_cdf(m - t).exp()).sum() };
    let (mut a, mut b) = (-60.0, 60.0);
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if sf(q, m) > alpha {
            a = m;
        } else {
            b = m;
        }
    }
    cdf(p, 0.5 * (a + b))
}

#[test]
fn poisson_add_remove_tradeoff_each_direction_decides_somewhere() {
    // The worst configuration's laws are the pair itself: M = (1 − q)N(0) + qN(μ) (with
    // the example) and B = N(0) (without). The attack-risk curve is min(T(B, M), T(M, B));
    // T(M, B) is T(B, M) mirrored, so with y ↦ −y it is again an increasing ratio.
    let q = 0.3;
    let mu = 1.0 / SIGMA;
    let m: Mixture = vec![(1.0 - q, 0.0), (q, mu)];
    let b: Mixture = vec![(1.0, 0.0)];
    let m_mirror: Mixture = vec![(1.0 - q, 0.0), (q, -mu)];
    let alphas = [1e-4, 1e-3, 0.01, 0.05, 0.1, 0.2, 0.4, 0.7];
    let spec: MechanismSpec = "subsampled-gaussian:sigma=0.8,q=0.3".parse().unwrap();
    let got = Composition::of(&[spec])
        .unwrap()
        .with_accuracy(1e-6)
        .unwrap()
        .tradeoff(&alphas)
        .unwrap();
    let (mut forward, mut reverse) = (false, false);
    for (pt, &alpha) in got.iter().zip(&alphas) {
        let f_bm = tradeoff_increasing(&m, &b, alpha);
        let f_mb = tradeoff_increasing(&b, &m_mirror, alpha);
        let f = f_bm.min(f_mb);
        assert!(
            pt.lower <= f + 1e-12 && f <= pt.upper + 1e-12,
            "α = {alpha}: the certified bracket [{}, {}] misses min(T(B, M), T(M, B)) = {f}",
            pt.lower,
            pt.upper
        );
        forward |= f_bm < f_mb - 1e-4;
        reverse |= f_mb < f_bm - 1e-4;
    }
    assert!(forward && reverse, "one direction never decides the curve");
}

#[test]
fn poisson_replace_one_pair_against_enumeration() {
    // x_n = 1 in D, −1 in D'; the worst has every other contribution 0.
    let case = Case {
        spec: "subsampled-gaussian:sigma=0.8,q=0.3,neighbours=replace-one",
        laws: |x| {
            let mut y = x.to_vec();
            let last = y.len() - 1;
            y[last] = other(y[last]);
            (poisson(x, 0.3), poisson(&y, 0.3))
        },
        worst: vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
        len: 6,
    };
    check(&case);
}

#[test]
fn fixed_size_pairs_against_enumeration() {
    // Replace-one: D' differs from D in its last value; the worst D' has every other
    // contribution equal to the replaced one's (−1) and the replacing one at +1.
    let replace = Case {
        spec: "subsampled-gaussian:sigma=0.8,sampling=fixed,batch=2,n=6,neighbours=replace-one",
        laws: |x| {
            let mut y = x.to_vec();
            let last = y.len() - 1;
            y[last] = other(y[last]);
            (fixed(x, 2), fixed(&y, 2))
        },
        worst: vec![-1.0, -1.0, -1.0, -1.0, -1.0, 1.0],
        len: 6,
    };
    check(&replace);
    // Add/remove: D' = D ∪ {x_n} of n = 6, D of 5, batches of 2 from each.
    let add_remove = Case {
        spec: "subsampled-gaussian:sigma=0.8,sampling=fixed,batch=2,n=6",
        laws: |x| (fixed(x, 2), fixed(&x[..x.len() - 1], 2)),
        worst: vec![-1.0, -1.0, -1.0, -1.0, -1.0, 1.0],
        len: 6,
    };
    check(&add_remove);
}

#[test]
fn poisson_group_pairs_against_enumeration() {
    // A group of two: D' = D plus two examples (add/remove), or the last two values
    // changed (replace-one: the worst moves each from +1 to −1).
    let add_remove = Case {
        spec: "subsampled-gaussian:sigma=0.8,q=0.3,group=2",
        laws: |x| (poisson(x, 0.3), poisson(&x[..x.len() - 2], 0.3)),
        worst: vec![0.0, 0.0, 0.0, 1.0, 1.0],
        len: 5,
    };
    check(&add_remove);
    let replace = Case {
        spec: "subsampled-gaussian:sigma=0.8,q=0.3,group=2,neighbours=replace-one",
        laws: |x| {
            let mut y = x.to_vec();
            let n = y.len();
            for v in &mut y[n - 2..] {
                *v = other(*v);
            }
            (poisson(x, 0.3), poisson(&y, 0.3))
        },
        worst: vec![0.0, 0.0, 0.0, 1.0, 1.0],
        len: 5,
    };
    check(&replace);
}

#[test]
fn group_of_a_plain_gaussian_is_its_sensitivity_times_g_against_the_closed_form() {
    // Three examples together under N(0, σ²) with sensitivity 1: δ(ε) of the shift 3/σ,
    // `Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)` (Balle & Wang, Theorem 8).
    let (sigma, g, eps) = (2.0, 3.0, 0.7);
    let mu = g / sigma;
    let phi = |x: f64| ln_cdf(x).exp();
    let exact = phi(mu / 2.0 - eps / mu) - eps.exp() * phi(-mu / 2.0 - eps / mu);
    let (lo, hi) = pair_delta("gaussian:sigma=2,group=3", eps);
    assert!(lo <= exact && exact <= hi, "[{lo}, {hi}] misses {exact}");
    assert!(hi / lo - 1.0 < 1e-5);
}

#[test]
fn pipeline_keys_refuse_bad_input_with_one_line_naming_the_key() {
    let err = |s: &str| s.parse::<MechanismSpec>().unwrap_err().0;
    let cases = [
        (
            "subsampled-gaussian:sigma=1,batch=70,n=60,sampling=fixed",
            "batch = 70",
        ),
        (
            "subsampled-gaussian:sigma=1,batch=60,n=60,sampling=fixed",
            "at most n − 1",
        ),
        (
            "subsampled-gaussian:sigma=1,q=0.1,neighbours=replace-on",
            "neighbours = 'replace-on'",
        ),
        (
            "subsampled-gaussian:sigma=1,q=0.1,sampling=shuffled",
            "sampling = 'shuffled'",
        ),
        (
            "subsampled-gaussian:sigma=1,sampling=fixed,q=0.1",
            "needs batch and n",
        ),
        ("subsampled-gaussian:sigma=1,q=0.1,batch=5,n=10", "not both"),
        ("subsampled-gaussian:sigma=1,batch=5", "missing key 'n'"),
        ("subsampled-gaussian:sigma=1,batch=2.5,n=10", "batch = 2.5"),
        ("subsampled-gaussian:sigma=1,q=0.1,group=0", "group = 0"),
        (
            "subsampled-gaussian:sigma=1,q=0.1,group=1001",
            "group = 1001",
        ),
        ("gaussian:sigma=1,sampling=fixed", "unknown key 'sampling'"),
        ("rr:epsilon=1,group=2", "unknown key 'group'"),
        (
            "subsampled-laplace:scale=1,q=0.1,neighbours=replace-one",
            "not built",
        ),
        (
            "subsampled-gaussian:sigma=1,batch=5,n=10,sampling=fixed,group=2",
            "not built",
        ),
        ("subsampled-gaussian:sigma=0.1,q=0.1,group=1000", "group"),
    ];
    for (spec, needle) in cases {
        let e = err(spec);
        assert!(
            e.contains(needle) && !e.contains('\n'),
            "{spec}: '{e}' lacks '{needle}'"
        );
    }
    // Poisson sampling at q = batch/n is the same mechanism as at that q.
    let a: MechanismSpec = "subsampled-gaussian:sigma=1,batch=1,n=4".parse().unwrap();
    let b: MechanismSpec = "subsampled-gaussian:sigma=1,q=0.25".parse().unwrap();
    assert_eq!(a.kind, b.kind);
}
