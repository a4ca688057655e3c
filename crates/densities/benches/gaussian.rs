//! Gaussian calibration kernels (Balle & Wang 2018, Theorem 8 and Algorithm 1): the
//! analytic σ over the 42-point grid of issue 16 (7 ε log-spaced in [1e-3, 5] × 6 δ
//! log-spaced in [1e-10, 1e-2]), the privacy profile at those σ, and its inverse in ε,
//! each beside the algorithm it replaced (`gaussian::reference`). Times are per grid
//! sweep; the declared throughput (42 elements) gives the time per call.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use densities::gaussian::{analytic_sigma, gaussian_delta, gaussian_epsilon, reference};
use std::hint::black_box;

/// `n` points log-spaced from `lo` to `hi` inclusive.
fn log_grid(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let (a, b) = (lo.ln(), hi.ln());
    (0..n)
        .map(|i| (a + (b - a) * i as f64 / (n - 1) as f64).exp())
        .collect()
}

/// The 42 (ε, δ) points of issue 16.
fn grid() -> Vec<(f64, f64)> {
    let eps = log_grid(1e-3, 5.0, 7);
    let del = log_grid(1e-10, 1e-2, 6);
    eps.iter()
        .flat_map(|&e| del.iter().map(move |&d| (e, d)))
        .collect()
}

fn bench_gaussian(c: &mut Criterion) {
    let pts = grid();
    let mus: Vec<(f64, f64, f64)> = pts
        .iter()
        .map(|&(e, d)| (e, d, 1.0 / analytic_sigma(e, d, 1.0).expect("valid")))
        .collect();
    let mut group = c.benchmark_group("gaussian_42pt");
    group.throughput(Throughput::Elements(pts.len() as u64));
    group.bench_function("analytic_sigma", |b| {
        b.iter(|| {
            let mut s = 0.0;
            for &(e, d) in &pts {
                s += analytic_sigma(black_box(e), black_box(d), 1.0).expect("valid");
            }
            s
        })
    });
    group.bench_function("gaussian_delta", |b| {
        b.iter(|| {
            let mut s = 0.0;
            for &(e, _, mu) in &mus {
                s += gaussian_delta(black_box(e), black_box(mu));
            }
            s
        })
    });
    group.bench_function("gaussian_epsilon", |b| {
        b.iter(|| {
            let mut s = 0.0;
            for &(_, d, mu) in &mus {
                s += gaussian_epsilon(black_box(d), black_box(mu));
            }
            s
        })
    });
    group.bench_function("analytic_sigma_before", |b| {
        b.iter(|| {
            let mut s = 0.0;
            for &(e, d) in &pts {
                s += reference::analytic_sigma(black_box(e), black_box(d), 1.0).expect("valid");
            }
            s
        })
    });
    group.bench_function("gaussian_delta_before", |b| {
        b.iter(|| {
            let mut s = 0.0;
            for &(e, _, mu) in &mus {
                s += reference::gaussian_delta(black_box(e), black_box(mu));
            }
            s
        })
    });
    group.bench_function("gaussian_epsilon_before", |b| {
        b.iter(|| {
            let mut s = 0.0;
            for &(_, d, mu) in &mus {
                s += reference::gaussian_epsilon(black_box(d), black_box(mu));
            }
            s
        })
    });
    group.finish();
}

criterion_group!(benches, bench_gaussian);
criterion_main!(benches);
