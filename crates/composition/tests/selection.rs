//! Selection mechanisms (docs/accountant.md §2.14, §2.15) against brute force: each
//! instance on two to four candidates with utilities on a grid of sensitivity-1
//! neighbours, its output law written out from the mechanism's definition (every visiting
//! order of permute-and-flip, the normalised weights of the exponential mechanism, a
//! piecewise quadrature of the noisy maximum with Laplace noise). Its privacy curve
//! `δ(x) = Σ_y (P(y) − e^x Q(y))₊` never exceeds the certified upper end; the lower end is
//! the two-candidate instance's curve; and compositions of different ε, enumerated over
//! their joint outputs, sit inside the composed bracket.

use composition::accountant::{Composition, MechanismSpec};

fn composition(texts: &[String]) -> Composition {
    let specs: Vec<MechanismSpec> = texts.iter().map(|t| t.parse().unwrap()).collect();
    Composition::of(&specs).unwrap()
}

/// `δ(x)` of an output law pair.
fn curve(p: &[f64], q: &[f64], x: f64) -> f64 {
    p.iter()
        .zip(q)
        .map(|(&a, &b)| (a - x.exp() * b).max(0.0))
        .sum()
}

/// Permute-and-flip's output law by enumerating every visiting order: candidate `i`
/// is accepted with probability `e^{ε(u_i − max u)/2}`, the first accepted is output.
fn permute_and_flip(u: &[f64], eps: f64) -> Vec<f64> {
    let n = u.len();
    let top = u.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let accept: Vec<f64> = u.iter().map(|&v| (0.5 * eps * (v - top)).exp()).collect();
    let mut out = vec![0.0; n];
    let mut orders = 0usize;
    let mut order: Vec<usize> = (0..n).collect();
    permutations(&mut order, 0, &mut |o| {
        orders += 1;
        let mut none_yet = 1.0;
        for &i in o {
            out[i] += none_yet * accept[i];
            none_yet *= 1.0 - accept[i];
        }
    });
    out.iter().map(|&v| v / orders as f64).collect()
}

fn permutations(v: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize])) {
    if k == v.len() {
        f(v);
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permutations(v, k + 1, f);
        v.swap(k, i);
    }
}

/// The exponential mechanism's output law, `P(i) ∝ e^{εu_i/2}`.
fn exponential(u: &[f64], eps: f64) -> Vec<f64> {
    let w: Vec<f64> = u.iter().map(|&v| (0.5 * eps * v).exp()).collect();
    let z: f64 = w.iter().sum();
    w.iter().map(|&v| v / z).collect()
}

/// Report-noisy-max with Laplace noise of scale `2/ε`: `P(i) = ∫ f(z − u_i) Π_{j≠i}
/// F(z − u_j) dz`, by Simpson's rule on each piece between the utilities (the integrand
/// is smooth there) and on tails 60 scales long.
fn noisy_max_laplace(u: &[f64], eps: f64) -> Vec<f64> {
    let b = 2.0 / eps;
    let pdf = |z: f64| (-z.abs() / b).exp() / (2.0 * b);
    let cdf = |z: f64| {
        if z < 0.0 {
            0.5 * (z / b).exp()
        } else {
            1.0 - 0.5 * (-z / b).exp()
        }
    };
    let mut cuts: Vec<f64> = u.to_vec();
    cuts.sort_by(f64::total_cmp);
    let mut knots = vec![cuts[0] - 60.0 * b];
    knots.extend(cuts.iter().copied());
    knots.push(cuts[cuts.len() - 1] + 60.0 * b);
    (0..u.len())
        .map(|i| {
            let g = |z: f64| {
                pdf(z - u[i])
                    * (0..u.len())
                        .filter(|&j| j != i)
                        .map(|j| cdf(z - u[j]))
                        .product::<f64>()
            };
            let mut total = 0.0;
            for w in knots.windows(2) {
                let (lo, hi) = (w[0], w[1]);
                if hi <= lo {
                    continue;
                }
                let n = 4000;
                let h = (hi - lo) / n as f64;
                let mut s = g(lo) + g(hi);
                for k in 1..n {
                    s += g(lo + k as f64 * h) * if k % 2 == 1 { 4.0 } else { 2.0 };
                }
                total += s * h / 3.0;
            }
            total
        })
        .collect()
}

/// Every pair of utility vectors on `n` candidates with entries in {0, 0.5, 1, 1.5}
/// (the first 0) whose neighbour moves each entry by −1, 0 or 1.
fn instances(n: usize) -> Vec<(Vec<f64>, Vec<f64>)> {
    let grid = [0.0, 0.5, 1.0, 1.5];
    let mut out = Vec::new();
    let cells = grid.len().pow(n as u32 - 1);
    let moves = 3usize.pow(n as u32);
    for c in 0..cells {
        let mut u = vec![0.0];
        let mut r = c;
        for _ in 1..n {
            u.push(grid[r % grid.len()]);
            r /= grid.len();
        }
        for m in 0..moves {
            let mut v = u.clone();
            let mut r = m;
            for x in v.iter_mut() {
                *x += (r % 3) as f64 - 1.0;
                r /= 3;
            }
            out.push((u.clone(), v));
        }
    }
    out
}

/// The largest `δ(x)` over the instances, both orders of each pair, at each x.
fn largest_curves(law: &dyn Fn(&[f64]) -> Vec<f64>, n: usize, xs: &[f64]) -> Vec<f64> {
    let mut worst = vec![0.0f64; xs.len()];
    for (u, v) in instances(n) {
        let (p, q) = (law(&u), law(&v));
        for (w, &x) in worst.iter_mut().zip(xs) {
            *w = w.max(curve(&p, &q, x)).max(curve(&q, &p, x));
        }
    }
    worst
}

type Law = fn(&[f64], f64) -> Vec<f64>;

/// The three mechanisms by their SPEC and their brute-force law.
fn mechanisms() -> [(&'static str, Law, usize); 3] {
    [
        ("permute-and-flip", permute_and_flip as Law, 4),
        ("exponential", exponential as Law, 4),
        (
            "report-noisy-max:noise=laplace",
            noisy_max_laplace as Law,
            3,
        ),
    ]
}

fn spec(kind: &str, eps: f64, count: u64) -> String {
    match kind.split_once(':') {
        Some((k, rest)) => format!("{k}:epsilon={eps},{rest},count={count}"),
        None => format!("{kind}:epsilon={eps},count={count}"),
    }
}

/// One use: no instance on two to four candidates (three for Laplace noise) leaks more
/// than the certified upper end, at four ε and four x; and the two-candidate swap, the
/// lower end's instance, is met by the lower end.
#[test]
fn no_instance_exceeds_the_upper_end_and_two_candidates_attain_the_lower() {
    for (kind, law, most) in mechanisms() {
        for &eps in &[0.1, 0.5, 1.0, 3.0] {
            let comp = composition(&[spec(kind, eps, 1)]);
            let f = |u: &[f64]| law(u, eps);
            let xs: Vec<f64> = [0.0, 0.25, 0.5, 0.9].iter().map(|f| f * eps).collect();
            let certified: Vec<_> = xs.iter().map(|&x| comp.delta(x).unwrap()).collect();
            for n in 2..=most {
                for ((worst, d), x) in largest_curves(&f, n, &xs).iter().zip(&certified).zip(&xs) {
                    assert!(
                        *worst <= d.upper * (1.0 + 1e-9),
                        "{kind} ε = {eps}, x = {x}, {n} candidates: {worst} above {}",
                        d.upper
                    );
                }
            }
            for (d, &x) in certified.iter().zip(&xs) {
                let two = curve(&f(&[1.0, 0.0]), &f(&[0.0, 1.0]), x);
                assert!(
                    d.lower <= two * (1.0 + 1e-9) && two <= d.lower * (1.0 + 2e-3) + 1e-15,
                    "{kind} ε = {eps}, x = {x}: the two-candidate swap {two} against the \
                     lower end {}",
                    d.lower
                );
            }
        }
    }
}

/// Three uses of different ε, each its own instance on three candidates (and the
/// two-candidate swaps), enumerated over all joint outputs: inside the composed bracket,
/// the swaps at its lower end.
#[test]
fn three_uses_of_different_epsilon_sit_inside_the_bracket() {
    let joint = |laws: &[(Vec<f64>, Vec<f64>)]| {
        let mut p = vec![1.0];
        let mut q = vec![1.0];
        for (a, b) in laws {
            p = p
                .iter()
                .flat_map(|&x| a.iter().map(move |&y| x * y))
                .collect();
            q = q
                .iter()
                .flat_map(|&x| b.iter().map(move |&y| x * y))
                .collect();
        }
        (p, q)
    };
    let epsilons = [0.3, 0.6, 1.0];
    for (kind, law, _) in mechanisms() {
        let specs: Vec<String> = epsilons.iter().map(|&e| spec(kind, e, 1)).collect();
        let comp = composition(&specs);
        let three: Vec<_> = epsilons
            .iter()
            .enumerate()
            .map(|(i, &e)| {
                // A different three-candidate instance at each step.
                let u = [0.0, 0.5 * i as f64, 1.0];
                let v = [1.0, 0.5 * i as f64 - 1.0, 0.0];
                (law(&u, e), law(&v, e))
            })
            .collect();
        let swaps: Vec<_> = epsilons
            .iter()
            .map(|&e| (law(&[1.0, 0.0], e), law(&[0.0, 1.0], e)))
            .collect();
        let (p3, q3) = joint(&three);
        let (p2, q2) = joint(&swaps);
        for &x in &[0.0, 0.5, 1.0, 1.5] {
            let d = comp.delta(x).unwrap();
            let a = curve(&p3, &q3, x).max(curve(&q3, &p3, x));
            let s = curve(&p2, &q2, x);
            assert!(
                a <= d.upper * (1.0 + 1e-9) && s <= d.upper * (1.0 + 1e-9),
                "{kind}, x = {x}: instances {a}, swaps {s}, upper {}",
                d.upper
            );
            assert!(
                d.lower <= s * (1.0 + 1e-9) && s <= d.lower * (1.0 + 2e-3) + 1e-15,
                "{kind}, x = {x}: swaps {s} against the lower end {}",
                d.lower
            );
        }
    }
}

/// Report-noisy-max with Gumbel noise is the exponential mechanism and with exponential
/// noise permute-and-flip: the same answers, bit for bit.
#[test]
fn report_noisy_max_names_its_noise() {
    let e = |t: &str| composition(&[t.to_string()]).epsilon(1e-6).unwrap();
    assert_eq!(
        e("report-noisy-max:epsilon=0.3,noise=gumbel,count=20"),
        e("exponential:epsilon=0.3,count=20")
    );
    assert_eq!(
        e("report-noisy-max:epsilon=0.3,noise=exponential,count=20"),
        e("permute-and-flip:epsilon=0.3,count=20")
    );
}

#[test]
fn bad_selection_specs_are_refused_naming_the_key() {
    for (text, key) in [
        ("permute-and-flip:epsilon=0", "epsilon"),
        ("permute-and-flip:epsilon=51", "epsilon"),
        ("permute-and-flip:epsilon=1,sensitivity=2", "sensitivity"),
        ("report-noisy-max:epsilon=1", "noise"),
        ("report-noisy-max:epsilon=1,noise=gauss", "noise"),
        ("report-noisy-max:epsilon=-1,noise=laplace", "epsilon"),
        ("permute-and-flip:epsilon=1,noise=laplace", "noise"),
    ] {
        let e = text.parse::<MechanismSpec>().unwrap_err().0;
        assert!(e.contains(key) && !e.contains('\n'), "{text}: {e:?}");
    }
}

/// Permute-and-flip on two candidates meets Laplace(1/ε)'s curve `1 − e^{(x − ε)/2}` at
/// x with the utilities `(1 − x/ε, 0)` against `(−x/ε, 1)` (docs/accountant.md §2.15): its
/// enumerated law against the closed form, and no instance of the brute-force sweep above
/// it (the search behind the docs, in small).
#[test]
fn permute_and_flip_meets_the_laplace_curve_one_x_at_a_time() {
    for &eps in &[0.1, 1.0, 3.0] {
        let lap = |x: f64| -((x - eps) / 2.0).exp_m1();
        let xs: Vec<f64> = [0.25, 0.5, 0.9].iter().map(|f| f * eps).collect();
        for &x in &xs {
            let r = x / eps;
            let (p, q) = (
                permute_and_flip(&[1.0 - r, 0.0], eps),
                permute_and_flip(&[-r, 1.0], eps),
            );
            let d = curve(&p, &q, x);
            assert!(
                (d / lap(x) - 1.0).abs() < 1e-12,
                "ε = {eps}, x = {x}: {d} vs {}",
                lap(x)
            );
        }
        let f = |u: &[f64]| permute_and_flip(u, eps);
        for n in 2..=4 {
            for (w, &x) in largest_curves(&f, n, &xs).iter().zip(&xs) {
                assert!(
                    *w <= lap(x) * (1.0 + 1e-12),
                    "ε = {eps}, x = {x}, n = {n}: {w}"
                );
            }
        }
    }
}
