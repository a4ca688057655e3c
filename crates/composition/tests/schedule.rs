//! Schedules (docs/accountant.md §2.8): segments of the Poisson-subsampled Gaussian with
//! changing (σ, q), exact up to a number of distinct laws, rounded onto a lattice beyond.

use composition::accountant::schedule::{accounted, parse_csv, Segment};
use composition::accountant::{spec, Answer, MechanismKind, MechanismSpec};

fn epsilon(specs: &[MechanismSpec], delta: f64, accuracy: f64) -> Answer {
    // (Each rounded copy's lower end is asked at `Accounted::lower_target` of δ.)
    spec::accountant(specs)
        .unwrap()
        .with_accuracy(accuracy)
        .unwrap()
        .epsilon(delta)
        .unwrap()
}

/// The Poisson-subsampled Gaussian at (σ, q), `count` steps, as a SPEC.
fn plain(sigma: f64, q: f64, count: u64) -> MechanismSpec {
    format!("subsampled-gaussian:sigma={sigma:?},q={q:?},count={count}")
        .parse()
        .unwrap()
}

/// The segments one law each: the unrounded composition.
fn unrounded(segs: &[Segment]) -> Vec<MechanismSpec> {
    segs.iter().map(|s| plain(s.sigma, s.q, s.count)).collect()
}

/// Each mixture of `specs` replaced by one of its two lattice laws (`leakier`: the one at
/// the smaller σ), its steps all there: the plain rounding on the same lattice.
fn at_part(specs: &[MechanismSpec], leakier: bool) -> Vec<MechanismSpec> {
    specs
        .iter()
        .map(|m| match m.kind {
            MechanismKind::SubsampledGaussianMix {
                sigma, sigma2, q, ..
            } => plain(if leakier { sigma } else { sigma2 }, q, m.count),
            _ => m.clone(),
        })
        .collect()
}

#[test]
fn a_schedule_of_identical_segments_is_the_plain_count() {
    let text = "sigma,q,count\n".to_string() + &"1.1,0.02,50\n".repeat(20);
    let segs = parse_csv(&text).unwrap();
    let a = accounted(&segs, 1e-4, 128).unwrap();
    assert_eq!((a.distinct, a.steps, a.ratio), (1, 1000, None));
    let plain: MechanismSpec = "subsampled-gaussian:sigma=1.1,q=0.02,count=1000"
        .parse()
        .unwrap();
    // The same law with the same count: the same bracket, bit for bit.
    assert_eq!(epsilon(&a.upper, 1e-5, 1e-4), epsilon(&[plain], 1e-5, 1e-4));
}

/// A seeded schedule of `n` segments with σ in [0.8, 1.6] and q in [0.005, 0.05].
fn random_schedule(n: usize, count: u64) -> Vec<Segment> {
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut u = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| Segment {
            sigma: 0.8 + 0.8 * u(),
            q: 0.005 * 10f64.powf(u()),
            count,
        })
        .collect()
}

#[test]
fn a_rounded_schedule_brackets_the_unrounded_composition() {
    // 16 distinct segments of 62 or 63 steps (T = 1e3), rounded onto a lattice that leaves
    // at most 8 laws a side; the unrounded composition (16 laws) is the independent route.
    let mut segs = random_schedule(16, 62);
    for s in &mut segs[..8] {
        s.count = 63;
    }
    let a = accounted(&segs, 1e-4, 8).unwrap();
    let rho = a.ratio.expect("rounded");
    assert!(a.upper.len() <= 8 && a.lower.len() <= 8, "ρ = {rho}");
    let total = |s: &[MechanismSpec]| s.iter().map(|m| m.count).sum::<u64>();
    assert_eq!((total(&a.upper), total(&a.lower)), (1000, 1000));
    let exact_specs = unrounded(&segs);
    let exact = epsilon(&exact_specs, 1e-5, 1e-3);
    let up = epsilon(&a.upper, 1e-5, 1e-3);
    let lo = epsilon(&a.lower, a.lower_target(1e-5, 1), 1e-3);
    // The rounded ends hold the exact composition's bracket: each rounded schedule leaks
    // more (upper) or less (lower, up to its slack) at every step.
    assert!(
        lo.lower <= exact.lower && exact.upper <= up.upper,
        "rounded [{}, {}] does not hold the exact [{}, {}]",
        lo.lower,
        up.upper,
        exact.lower,
        exact.upper
    );
    // And the rounding costs width but not much: ρ ≈ {rho} widens by a few ρ.
    let width = up.upper / lo.lower - 1.0;
    assert!(
        width > exact.upper / exact.lower - 1.0 && width < 20.0 * rho,
        "{width}"
    );
}

#[test]
fn lattice_rounding_is_on_its_side_and_every_lattice_segment_comes_from_the_schedule() {
    let segs = random_schedule(300, 3);
    let a = accounted(&segs, 1e-3, 10).unwrap();
    // (σ, q) of a lattice law, (σ of the leakier part, q) of a mixture; and the other
    // part's σ (+∞ for a lattice law).
    let parse2 = |m: &MechanismSpec| match m.kind {
        MechanismKind::SubsampledGaussian { sigma, q } => (sigma, q, f64::INFINITY),
        MechanismKind::SubsampledGaussianMix {
            sigma,
            sigma2,
            q,
            weight,
            ..
        } => {
            assert!(weight > 0.0 && weight < 1.0 && sigma < sigma2);
            (sigma, q, sigma2)
        }
        _ => unreachable!(),
    };
    let parse = |m: &MechanismSpec| {
        let (s, q, _) = parse2(m);
        (s, q)
    };
    let (smin, smax) = segs.iter().fold((f64::INFINITY, 0.0f64), |(a, b), s| {
        (a.min(s.sigma), b.max(s.sigma))
    });
    let (qmin, qmax) = segs.iter().fold((f64::INFINITY, 0.0f64), |(a, b), s| {
        (a.min(s.q), b.max(s.q))
    });
    let rho = a.upper_ratio.unwrap();
    for m in &a.upper {
        let (s, q) = parse(m);
        assert!(s <= smax && s >= smin / (1.0 + rho) && q >= qmin && q <= qmax * (1.0 + rho));
    }
    // Sorted by σ, each segment's upper-side σ is at most its own and its q at least its
    // own: check on the rounding of every segment through a one-segment schedule.
    for s in &segs[..50] {
        let one = [
            *s,
            Segment {
                sigma: s.sigma * 3.0,
                q: s.q,
                count: 1,
            },
        ];
        let b = accounted(&one, 1e-3, 1).unwrap();
        // The segment's laws: at a lattice point at most its σ (upper) or at least it
        // (lower), or a mixture of the two lattice points around it.
        let (su, qu, su2) = parse2(&b.upper[0]);
        let (sl, ql, sl2) = parse2(&b.lower[0]);
        let lower_ok = if sl2.is_finite() {
            sl <= s.sigma && s.sigma <= sl2
        } else {
            sl >= s.sigma
        };
        assert!(
            su <= s.sigma && s.sigma <= su2 && qu >= s.q && lower_ok && ql <= s.q,
            "{s:?}"
        );
    }
}

#[test]
fn schedule_files_refuse_bad_rows_naming_line_and_column() {
    let cases = [
        ("", 1, "header"),
        ("sigma,q\n1,0.1\n", 1, "header"),
        ("sigma,q,count\n", 1, "rows"),
        ("sigma,q,count\n1,0.1,10\n1,1.5,10\n", 3, "q"),
        ("# a comment\nsigma,q,count\n\n-1,0.1,10\n", 4, "sigma"),
        ("sigma,q,count\n1,0.1,2.5\n", 2, "count"),
        ("sigma,q,count\n1,0.1\n", 2, "row"),
        ("sigma,q,count\nnan,0.1,3\n", 2, "sigma"),
        ("sigma,q,count\n0.001,0.1,3\n", 2, "sigma"),
        (
            "sigma,q,count\n1,0.1,6000000000\n1,0.1,6000000000\n",
            3,
            "count",
        ),
    ];
    for (text, line, key) in cases {
        let e = parse_csv(text).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (line, key), "{text:?}: {e:?}");
        assert!(!e.message.is_empty() && !e.message.contains('\n'));
    }
    // Columns in any order.
    let s = parse_csv("count,q,sigma\n7,0.25,2\n").unwrap();
    assert_eq!(
        s,
        vec![Segment {
            sigma: 2.0,
            q: 0.25,
            count: 7
        }]
    );
}

#[test]
fn the_upper_ends_mixtures_hold_and_cost_a_fraction_of_rounding_down() {
    // 40 distinct σ in [0.9, 1.1] at q = 0.02, 25 steps each (T = 1e3), with at most 16
    // laws a side. Independent routes: the unrounded composition
    // (40 laws), and the same upper lattice without mixtures (each mixture's steps at its
    // leakier lattice point, the plain rounding down).
    let segs: Vec<Segment> = (0..40)
        .map(|i| Segment {
            sigma: 0.9 + 0.2 * (i as f64 + 0.5) / 40.0,
            q: 0.02,
            count: 25,
        })
        .collect();
    let a = accounted(&segs, 1e-4, 16).unwrap();
    assert!(a.upper.len() <= 16 && a.lower.len() <= 16 && !a.q_rounded);
    let mixtures = a
        .upper
        .iter()
        .filter(|m| matches!(m.kind, MechanismKind::SubsampledGaussianMix { .. }))
        .count();
    assert!(mixtures >= 2, "{:?}", a.upper);
    let total: u64 = a.upper.iter().map(|m| m.count).sum();
    assert_eq!(total, 1000);
    let exact_specs = unrounded(&segs);
    let down = at_part(&a.upper, true);
    let exact = epsilon(&exact_specs, 1e-5, 1e-4);
    let up = epsilon(&a.upper, 1e-5, 1e-4);
    let plain = epsilon(&down, 1e-5, 1e-4);
    // Certified: the mixtures' upper end is at least the exact composition's lower end.
    assert!(up.upper >= exact.lower, "{} < {}", up.upper, exact.lower);
    // And a fraction of what rounding down on the same lattice costs.
    let (cost, plain_cost) = (up.upper - exact.upper, plain.upper - exact.upper);
    assert!(
        plain_cost > 0.0 && cost < 0.25 * plain_cost,
        "mixtures {cost:e} against rounding {plain_cost:e} (ε = {}, ρ = {:?})",
        exact.upper,
        a.upper_ratio
    );
}

#[test]
fn the_lower_ends_mixtures_hold_and_cost_a_fraction_of_rounding_up() {
    // As the upper end's test: 100 distinct σ in [0.9, 1.1] at q = 0.02, 10 steps each,
    // at most 32 laws for the lower end. Independent routes: the unrounded composition
    // (100 laws), and the same lower lattice without mixtures (each mixture's steps at its
    // less leaky lattice point, the plain rounding up).
    let segs: Vec<Segment> = (0..100)
        .map(|i| Segment {
            sigma: 0.9 + 0.2 * (i as f64 + 0.5) / 100.0,
            q: 0.02,
            count: 10,
        })
        .collect();
    let a = accounted(&segs, 1e-4, 32).unwrap();
    assert!(a.lower.len() <= 32 && !a.q_rounded);
    let mixtures = a
        .lower
        .iter()
        .filter(|m| matches!(m.kind, MechanismKind::SubsampledGaussianMix { .. }))
        .count();
    assert!(mixtures >= 2, "{:?}", a.lower);
    assert!(
        a.lower_slack > 0.0 && a.lower_slack < 1e-15,
        "{}",
        a.lower_slack
    );
    assert_eq!(a.lower.iter().map(|m| m.count).sum::<u64>(), 1000);
    let exact_specs = unrounded(&segs);
    let up = at_part(&a.lower, false);
    let exact = epsilon(&exact_specs, 1e-5, 1e-4);
    let low = epsilon(&a.lower, a.lower_target(1e-5, 1), 1e-4);
    let plain = epsilon(&up, 1e-5, 1e-4);
    // Certified: the mixtures' lower end is at most the exact composition's upper end.
    assert!(low.lower <= exact.upper, "{} > {}", low.lower, exact.upper);
    // And a fraction of what rounding up on the same lattice costs (about `Uh/6` of it
    // for the weight, plus the groups' geometric means: docs/accountant.md §2.8).
    let (cost, plain_cost) = (exact.lower - low.lower, exact.lower - plain.lower);
    assert!(
        plain_cost > 0.0 && cost < 0.3 * plain_cost,
        "mixtures {cost:e} against rounding {plain_cost:e} (ε = {}, ρ = {:?})",
        exact.lower,
        a.ratio
    );
}

#[test]
fn the_side_by_side_ends_hold_against_each_copys_own_finer_bracket() {
    // `epsilon_with_lower` computes only the upper copy's upper end and the lower copy's
    // lower end, side by side. Independent routes: each copy's own two-sided bracket at a
    // 10× finer accuracy (the side-by-side end must be on its side of it), and the
    // unrounded composition (16 laws), which the bracket must hold.
    let segs = random_schedule(16, 62);
    let a = accounted(&segs, 1e-4, 8).unwrap();
    assert!(a.lower_mixtures);
    let copy = |specs: &[MechanismSpec], acc: f64| {
        spec::accountant(specs).unwrap().with_accuracy(acc).unwrap()
    };
    let delta = 1e-5;
    let low_delta = a.lower_target(delta, 1);
    let both = copy(&a.upper, 1e-3)
        .epsilon_with_lower(delta, &copy(&a.lower, 1e-3), low_delta)
        .unwrap();
    let up = copy(&a.upper, 1e-4).epsilon(delta).unwrap();
    let lo = copy(&a.lower, 1e-4).epsilon(low_delta).unwrap();
    assert!(
        both.upper >= up.lower && both.lower <= lo.upper && both.lower <= both.upper,
        "side by side [{}, {}], upper copy [{}, {}], lower copy [{}, {}]",
        both.lower,
        both.upper,
        up.lower,
        up.upper,
        lo.lower,
        lo.upper
    );
    let exact_specs = unrounded(&segs);
    let exact = epsilon(&exact_specs, delta, 1e-4);
    assert!(both.lower <= exact.upper && exact.lower <= both.upper);
    // And each end within the accuracy asked of its copy's finer one.
    assert!(both.upper <= up.upper * (1.0 + 2e-3) && both.lower >= lo.lower * (1.0 - 2e-3));
}
