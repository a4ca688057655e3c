//! Kernels of the privacy-loss-distribution accountant (`composition::pld`): composing
//! 1e4 Laplace mechanisms (fig18 scale; target: under a second, discretisation included),
//! the certified bracket of the same, 1e6 Gaussians through one windowed FFT power, 1e10
//! Gaussians by repeated squaring, and the bounded noise of Dagan–Kur (log-density only,
//! certified quadrature) composed 1e6 times.

use composition::pld::{
    least_radius, Bound, LogConcaveNoise, PldBracket, PldConfig, PrivacyLoss, RadiusMode,
    RadiusSettings,
};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn laplace(c: &mut Criterion) {
    let mut g = c.benchmark_group("pld");
    g.sample_size(10);
    for bound in [Bound::Upper, Bound::Estimate] {
        let cfg = PldConfig::new(1e-4, bound).unwrap();
        g.bench_function(
            format!("laplace mu=0.1 step=1e-4 k=1e4 {bound:?}: discretise+compose+eps"),
            |b| {
                b.iter(|| {
                    let p = PrivacyLoss::laplace(black_box(0.1), &cfg)
                        .unwrap()
                        .self_compose(black_box(10_000))
                        .unwrap();
                    p.epsilon(1e-6).unwrap()
                })
            },
        );
    }
    let cfg = PldConfig::new(1e-4, Bound::Upper).unwrap();
    g.bench_function(
        "laplace mu=0.1 step=1e-4 k=1e4 bracket: delta at 20 eps",
        |b| {
            b.iter(|| {
                let p = PldBracket::from_model(
                    &composition::pld::LaplaceLoss::new(black_box(0.1)).unwrap(),
                    &cfg,
                )
                .unwrap()
                .self_compose(10_000)
                .unwrap();
                (0..20)
                    .map(|i| p.delta(50.0 + i as f64).unwrap().hi)
                    .sum::<f64>()
            })
        },
    );
    let cfg = PldConfig::new(1e-4, Bound::Estimate).unwrap();
    g.bench_function("gaussian mu=0.002 step=1e-4 k=1e6 Estimate", |b| {
        b.iter(|| {
            PrivacyLoss::gaussian(black_box(0.002), &cfg)
                .unwrap()
                .self_compose(1_000_000)
                .unwrap()
                .delta(1.0)
                .unwrap()
        })
    });
    let cfg = PldConfig::new(1e-6, Bound::Estimate).unwrap();
    g.bench_function(
        "gaussian mu=2e-5 step=1e-6 k=1e10 Estimate (squaring)",
        |b| {
            b.iter(|| {
                PrivacyLoss::gaussian(black_box(2e-5), &cfg)
                    .unwrap()
                    .self_compose(10_000_000_000)
                    .unwrap()
                    .delta(1.0)
                    .unwrap()
            })
        },
    );
    let fam = densities::bounded::BoundedFamily::power(2.0).unwrap();
    let cfg = PldConfig::new(2e-5, Bound::Estimate)
        .unwrap()
        .with_tail(1e-12)
        .unwrap();
    g.bench_function(
        "bounded power(2) s=1e-3 step=2e-5: quadrature+discretise",
        |b| {
            b.iter(|| {
                let noise =
                    LogConcaveNoise::new(move |x: f64| -fam.f(x), (-1.0, 1.0), black_box(1e-3))
                        .unwrap();
                PrivacyLoss::from_model(&noise, &cfg).unwrap()
            })
        },
    );
    let noise = LogConcaveNoise::new(move |x: f64| -fam.f(x), (-1.0, 1.0), 1e-3).unwrap();
    let one = PrivacyLoss::from_model(&noise, &cfg).unwrap();
    g.bench_function("bounded power(2) s=1e-3 step=2e-5: compose k=1e6", |b| {
        b.iter(|| {
            one.self_compose(black_box(1_000_000))
                .unwrap()
                .delta(1.0)
                .unwrap()
        })
    });
    for (k, eps, delta, start) in [
        (10_000u64, 0.1, 1e-10, 22_931.0),
        (1_000_000, 0.1, 1e-10, 228_209.0),
    ] {
        g.bench_function(
            format!("least radius, bounded power(2), estimate, k={k:e} eps={eps} delta={delta:e}"),
            |b| {
                b.iter(|| {
                    least_radius(
                        &move |x: f64| -fam.f(x),
                        (-1.0, 1.0),
                        black_box(k),
                        eps,
                        delta,
                        RadiusMode::Estimate,
                        start,
                        &RadiusSettings::default(),
                    )
                    .unwrap()
                })
            },
        );
    }
    g.bench_function(
        "least radius, bounded power(2), pessimistic (recentred), k=1e4 eps=0.1 delta=1e-6",
        |b| {
            b.iter(|| {
                least_radius(
                    &move |x: f64| -fam.f(x),
                    (-1.0, 1.0),
                    black_box(10_000),
                    0.1,
                    1e-6,
                    RadiusMode::Pessimistic,
                    14_500.0,
                    &RadiusSettings::default(),
                )
                .unwrap()
            })
        },
    );
    g.finish();
}

criterion_group!(benches, laplace);
criterion_main!(benches);
