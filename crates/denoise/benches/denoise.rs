//! Kernel benchmarks for fig5 and fig6 (Balle & Wang 2018, Sections 4 and 5.2;
//! docs/maths.md §4): one fig5 point at the largest d (10⁸ uniforms), the full fig5 grid
//! (8 d × 2 ε × 100 datasets, n = 500), the fig6 release on 64 × 64, and the single
//! denoisers. Target: fig5 + fig6 together well under 5 s on 2 cores.

use criterion::{criterion_group, criterion_main, Criterion};
use denoise::city::{heatmap_release, synthetic_city, CITY_SIDE, CITY_TRIPS};
use denoise::haar::{haar2d_forward, haar2d_inverse, haar_soft_threshold};
use denoise::mean_estimation::mean_estimation;
use denoise::shrink::{james_stein_positive, soft_threshold};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::hint::black_box;
use std::time::Duration;

const DS: [usize; 8] = [10, 20, 50, 100, 200, 500, 1000, 2000];

fn bench_fig5(c: &mut Criterion) {
    let mut g = c.benchmark_group("fig5");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(10));
    g.bench_function("d2000_eps0.01_100datasets", |b| {
        b.iter(|| black_box(mean_estimation(black_box(2000), 500, 0.01, 1e-4, 100, 1).unwrap()))
    });
    g.bench_function("full_grid", |b| {
        b.iter(|| {
            for eps in [0.01, 1.0] {
                for d in DS {
                    black_box(mean_estimation(d, 500, eps, 1e-4, 100, 1).unwrap());
                }
            }
        })
    });
    g.finish();
}

fn bench_fig6(c: &mut Criterion) {
    let truth = synthetic_city(CITY_SIDE, CITY_TRIPS, 1).unwrap();
    c.bench_function("fig6/city_generate", |b| {
        b.iter(|| black_box(synthetic_city(CITY_SIDE, CITY_TRIPS, black_box(1)).unwrap()))
    });
    c.bench_function("fig6/heatmap_release", |b| {
        b.iter(|| black_box(heatmap_release(truth.view(), 1.0, 1e-6, 5.0, 2).unwrap()))
    });
}

fn bench_denoisers(c: &mut Criterion) {
    let mut rng = Pcg64::seed_from_u64(3);
    let y: Vec<f64> = (0..4096).map(|_| rng.gen_range(-50.0..50.0)).collect();
    let field = ndarray::Array2::from_shape_vec((64, 64), y.clone()).expect("64² values");
    c.bench_function("haar/forward_inverse_64x64", |b| {
        b.iter(|| {
            let mut v = field.clone();
            haar2d_forward(v.view_mut()).unwrap();
            haar2d_inverse(v.view_mut()).unwrap();
            black_box(v)
        })
    });
    c.bench_function("haar/soft_threshold_64x64", |b| {
        b.iter(|| black_box(haar_soft_threshold(field.view(), 20.0).unwrap()))
    });
    c.bench_function("shrink/js_positive_4096", |b| {
        b.iter(|| black_box(james_stein_positive(&y, 20.0).unwrap()))
    });
    c.bench_function("shrink/soft_threshold_4096", |b| {
        b.iter(|| black_box(soft_threshold(&y, 20.0).unwrap()))
    });
}

criterion_group!(benches, bench_fig5, bench_fig6, bench_denoisers);
criterion_main!(benches);
