//! Every row of the hard-case table of docs/accountant.md through the tilted accountant
//! (`composition::accountant`): ε(δ) with its certified bracket at the default accuracy
//! (relative width ≤ 1e-4), discretisation, grid choice and composition included; and the
//! DP-SGD case of issue 14 (subsampled Gaussian, both directions).

use composition::accountant::{Composition, MechanismSpec};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

/// (mechanism SPEC, δ) for each row of the table.
pub const ROWS: [(&str, f64); 8] = [
    ("gaussian:sigma=2,count=1000", 1e-18),
    ("gaussian:sigma=2,count=1000", 1e-12),
    ("gaussian:sigma=0.2,count=100", 1e-10),
    ("gaussian:sigma=0.02,count=10", 1e-6),
    ("gaussian:sigma=100,count=1000000", 1e-9),
    ("laplace:scale=7.0710678118654755,count=10000", 1e-6),
    ("laplace:scale=100,count=100000", 1e-12),
    ("rr:epsilon=3,count=1000", 1e-8),
];

/// DP-SGD at small sampling rates (issue 34's table, all five rows; the last took 90 s
/// before the fixes of docs/speed.md and 5 s after; then three rows of its grid at
/// q = 1e-4, T = 1e3, where the saddle point's window spanned nats of rare large losses,
/// the last of them the grid's last row slower than dp_accounting until the twenty-fourth
/// session), at the default accuracy: the README's side-by-side table times the same
/// questions through `dpw account`.
pub const DP_SGD_ROWS: [(&str, f64); 8] = [
    ("subsampled-gaussian:sigma=1,q=0.01,count=10000", 1e-5),
    ("subsampled-gaussian:sigma=0.8,q=0.001,count=100000", 1e-6),
    ("subsampled-gaussian:sigma=1.1,q=0.004,count=250000", 1e-6),
    ("subsampled-gaussian:sigma=2,q=0.1,count=1000", 1e-5),
    ("subsampled-gaussian:sigma=0.6,q=0.0001,count=1000000", 1e-6),
    ("subsampled-gaussian:sigma=0.8,q=0.0001,count=1000", 1e-6),
    ("subsampled-gaussian:sigma=1,q=0.0001,count=1000", 1e-6),
    ("subsampled-gaussian:sigma=2,q=0.0001,count=1000", 1e-6),
];

fn rows(c: &mut Criterion) {
    let mut g = c.benchmark_group("accountant");
    g.sample_size(10);
    for (spec, delta) in ROWS.into_iter().chain(DP_SGD_ROWS) {
        let s: MechanismSpec = spec.parse().unwrap();
        g.bench_function(format!("{spec} delta={delta:e}"), |b| {
            b.iter(|| {
                Composition::of(std::slice::from_ref(&s))
                    .unwrap()
                    .epsilon(black_box(delta))
                    .unwrap()
            })
        });
    }
    // DP-SGD (issue 14): q = 0.01, σ = 1, T = 1e4, δ = 1e-5 at accuracy 1e-3, both
    // directions of the subsampled loss.
    let s: MechanismSpec = "subsampled-gaussian:sigma=1,q=0.01,count=10000"
        .parse()
        .unwrap();
    g.bench_function(
        "subsampled-gaussian:sigma=1,q=0.01,count=10000 delta=1e-5 acc=1e-3",
        |b| {
            b.iter(|| {
                Composition::of(std::slice::from_ref(&s))
                    .unwrap()
                    .with_accuracy(1e-3)
                    .unwrap()
                    .epsilon(black_box(1e-5))
                    .unwrap()
            })
        },
    );
    // The verdict of fig21's bounded-noise calibration search (issue 16): δ(ε = 1) of
    // 1000 queries at accuracy 2e-2.
    let s: MechanismSpec = "bounded:family=power,alpha=2,radius=533,count=1000"
        .parse()
        .unwrap();
    g.bench_function(
        "bounded:family=power,alpha=2,radius=533,count=1000 delta(eps=1) acc=2e-2",
        |b| {
            b.iter(|| {
                Composition::of(std::slice::from_ref(&s))
                    .unwrap()
                    .with_accuracy(2e-2)
                    .unwrap()
                    .delta(black_box(1.0))
                    .unwrap()
            })
        },
    );
    g.finish();
}

/// The solver's questions of issue 30 (docs/accountant.md §10): σ for q = 1e-3, T = 1e5,
/// δ = 1e-6 at ε ∈ {0.01, 1, 8}, and the exact count for σ = 1, q = 0.01, ε = 8,
/// δ = 1e-5, at the default accuracy (1e-4). `scripts/compare_solve.py` times the same
/// questions through `dpw solve` beside dp_accounting's calibration.
pub const SOLVE_ROWS: [(&str, f64, f64); 4] = [
    (
        "subsampled-gaussian:sigma=?,q=1e-3,count=100000",
        0.01,
        1e-6,
    ),
    ("subsampled-gaussian:sigma=?,q=1e-3,count=100000", 1.0, 1e-6),
    ("subsampled-gaussian:sigma=?,q=1e-3,count=100000", 8.0, 1e-6),
    ("subsampled-gaussian:sigma=1,q=0.01,count=?", 8.0, 1e-5),
];

fn solve_rows(c: &mut Criterion) {
    use composition::accountant::{Solver, Target, Template};
    let mut g = c.benchmark_group("solve");
    g.sample_size(10);
    for (spec, epsilon, delta) in SOLVE_ROWS {
        g.bench_function(format!("{spec} eps={epsilon} delta={delta:e}"), |b| {
            b.iter(|| {
                let t = Template::parse(&[spec]).unwrap();
                Solver::new(t, vec![Target::Privacy { epsilon, delta }])
                    .unwrap()
                    .solve()
                    .unwrap()
            })
        });
    }
    g.finish();
}

/// Issue 31's schedule (docs/accountant.md §2.8): 1e4 distinct segments, σ from 1.5 down
/// to 0.8, q = 1e-3, 100 steps each (T = 1e6), ε at δ = 1e-5 from both rounded copies as
/// `dpw account --schedule` computes it (the lattices, then the upper copy's upper end and
/// the lower copy's lower end side by side at the accuracy `end_accuracy` gives).
fn schedule_rows(c: &mut Criterion) {
    use composition::accountant::input::schedule::{accounted_with_slack, Segment, MAX_EXACT_LAWS};
    let segments: Vec<Segment> = (0..10_000)
        .map(|i| Segment {
            sigma: 1.5 - 0.7 * i as f64 / 9999.0,
            q: 1e-3,
            count: 100,
        })
        .collect();
    let mut g = c.benchmark_group("schedule");
    g.sample_size(10);
    g.bench_function("1e4 distinct segments T=1e6 q=1e-3 delta=1e-5", |b| {
        b.iter(|| {
            let delta = black_box(1e-5);
            let a = accounted_with_slack(&segments, 1e-4, MAX_EXACT_LAWS, 1e-4 * delta).unwrap();
            let acc = a.end_accuracy(1e-4);
            let copy = |specs: &[MechanismSpec]| {
                Composition::of(specs).unwrap().with_accuracy(acc).unwrap()
            };
            let e = copy(&a.upper)
                .epsilon_with_lower(delta, &copy(&a.lower), a.lower_target(delta, 1))
                .unwrap();
            (e.lower, e.upper)
        })
    });
    g.finish();
}

/// Selection mechanisms (issue 60, docs/accountant.md §2.14–§2.15): k = 1e4 exponential
/// mechanisms at ε₀ = 0.01 composed with 1e4 Gaussian counts (target ≤ 0.2 s, the bracket
/// with its stated gap); one exponential mechanism, permute-and-flip and report-noisy-max
/// with Laplace noise against the Laplace mechanism at the same ε (1e4 uses each).
pub const SELECTION_ROWS: [(&[&str], f64); 5] = [
    (
        &[
            "exponential:epsilon=0.01,count=10000",
            "gaussian:sigma=100,count=10000",
        ],
        1e-6,
    ),
    (&["exponential:epsilon=0.01,count=10000"], 1e-6),
    (&["permute-and-flip:epsilon=0.01,count=10000"], 1e-6),
    (
        &["report-noisy-max:epsilon=0.01,noise=laplace,count=10000"],
        1e-6,
    ),
    (&["laplace:scale=100,count=10000"], 1e-6),
];

fn selection_rows(c: &mut Criterion) {
    let mut g = c.benchmark_group("selection");
    g.sample_size(10);
    for (specs, delta) in SELECTION_ROWS {
        let list: Vec<MechanismSpec> = specs.iter().map(|t| t.parse().unwrap()).collect();
        g.bench_function(format!("{} delta={delta:e}", specs.join(" + ")), |b| {
            b.iter(|| {
                Composition::of(&list)
                    .unwrap()
                    .epsilon(black_box(delta))
                    .unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, rows, solve_rows, schedule_rows, selection_rows);
criterion_main!(benches);
