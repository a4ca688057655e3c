//! Kernels of the composition crate: the inverse ε_g(δ) of optimal DP composition at
//! k = 1e5 (target: under 10 ms), the mixed / BR inverses used by the figures (k = 100),
//! and the adaptive recursion for two BR + one DP (Figure 3 of Cesar–Rogers).

use composition::Mechanism::{Br, Dp};
use composition::{adaptive_delta, br_epsilon, dp_delta, dp_epsilon, mixed_epsilon};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn dp(c: &mut Criterion) {
    for eps in [0.01, 0.1, 1.0] {
        c.bench_function(&format!("dp_epsilon k=1e5 eps={eps} delta=1e-6"), |b| {
            b.iter(|| dp_epsilon(black_box(100_000), black_box(eps), black_box(1e-6)).unwrap())
        });
    }
    let e = dp_epsilon(100_000, 0.1, 1e-6).unwrap();
    c.bench_function("dp_delta k=1e5 eps=0.1", |b| {
        b.iter(|| dp_delta(black_box(100_000), black_box(0.1), black_box(e)).unwrap())
    });
}

fn mixed(c: &mut Criterion) {
    c.bench_function("br_epsilon k=100 eps=0.1 delta=1e-6", |b| {
        b.iter(|| br_epsilon(black_box(100), black_box(0.1), black_box(1e-6)).unwrap())
    });
    c.bench_function("mixed_epsilon l=50 m=50 eps=0.1 delta=1e-6", |b| {
        b.iter(|| {
            mixed_epsilon(
                black_box(50),
                black_box(50),
                black_box(0.1),
                black_box(1e-6),
            )
            .unwrap()
        })
    });
}

fn adaptive(c: &mut Criterion) {
    c.bench_function("adaptive_delta (DP,BR,BR) eps=0.5 eps_g=0.1", |b| {
        b.iter(|| adaptive_delta(black_box(&[Dp(0.5), Br(0.5), Br(0.5)]), black_box(0.1)).unwrap())
    });
}

criterion_group!(benches, dp, mixed, adaptive);
criterion_main!(benches);
