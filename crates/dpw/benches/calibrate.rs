//! Calibration speed: one analytic-Gaussian σ (Balle–Wang Algorithm 1) and one whole
//! `dpw calibrate` table.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use densities::gaussian::{analytic_sigma, classical_sigma};
use densities::truncated_laplace::TruncatedLaplace;
use dpw::calibrate::{calibrate, Request};

fn kernels(c: &mut Criterion) {
    c.bench_function("analytic_sigma eps=1 delta=1e-5", |b| {
        b.iter(|| analytic_sigma(black_box(1.0), black_box(1e-5), 1.0).unwrap())
    });
    c.bench_function("analytic_sigma eps=0.01 delta=1e-300", |b| {
        b.iter(|| analytic_sigma(black_box(0.01), black_box(1e-300), 1.0).unwrap())
    });
    c.bench_function("classical_sigma", |b| {
        b.iter(|| classical_sigma(black_box(0.5), black_box(1e-5), 1.0).unwrap())
    });
    c.bench_function("truncated_laplace new+moments", |b| {
        use densities::traits::NoiseMoments;
        b.iter(|| {
            let t = TruncatedLaplace::new(black_box(1.0), black_box(1e-5), 1.0).unwrap();
            t.mean_abs() + t.second_moment()
        })
    });
    let req = Request::new(1.0, 1e-6, 1e4, 1.0, 0.05).unwrap();
    c.bench_function("calibrate table k=1e4", |b| {
        b.iter(|| calibrate(black_box(&req)))
    });
}

criterion_group!(benches, kernels);
criterion_main!(benches);
