//! Kernels of the certified bounded-noise calibration (`just bench`).
use criterion::{criterion_group, criterion_main, Criterion};
use densities::bounded::BoundedFamily;
use mgf::loss_mgf::LossMesh;
use mgf::{certified_radius, BoundedNoise};
use std::hint::black_box;

fn kernels(c: &mut Criterion) {
    let noise = BoundedNoise::new(BoundedFamily::power(2.0).unwrap()).unwrap();
    c.bench_function("normaliser bounds, power(2)", |b| {
        b.iter(|| BoundedNoise::new(black_box(BoundedFamily::Power { alpha: 2.0 })))
    });
    let l = noise.tail_level(1e-18);
    let base = noise.partition(l);
    c.bench_function("loss mesh, s = 2e-5", |b| {
        b.iter(|| LossMesh::new(&noise, &base, black_box(2e-5), 900.0))
    });
    let mesh = LossMesh::new(&noise, &base, 2e-5, 900.0);
    c.bench_function("m(θ) upper bound", |b| {
        b.iter(|| mesh.m_upper(black_box(450.0)))
    });
    let mut g = c.benchmark_group("certified radius");
    g.sample_size(10);
    g.bench_function("k = 1e6, ε = 0.1, δ = 1e-10", |b| {
        b.iter(|| certified_radius(&noise, black_box(1e6), 0.1, 1e-10))
    });
    g.bench_function("k = 1e2, ε = 0.1, δ = 1e-10", |b| {
        b.iter(|| certified_radius(&noise, black_box(1e2), 0.1, 1e-10))
    });
    g.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
