//! Kernel benchmark for the fig11 Monte Carlo (docs/maths.md §2; Dong, Su & Zhang 2021,
//! Figure 1): 10⁶ draws of the noise `∝ exp(−‖x‖_p^a)` in d = 30, with the
//! log-likelihood ratio evaluated under both hypotheses (`llr_samples`, including the
//! sorts), then the trade-off curve on 101 α. Target: under 2 s per configuration on
//! 2 cores.

use criterion::{criterion_group, criterion_main, Criterion};
use densities::lp_noise::{llr_samples, random_direction, LpNoise, MonteCarlo};
use densities::tradeoff::alpha_grid;
use rand::SeedableRng;
use std::hint::black_box;
use std::time::Duration;

fn bench_llr(c: &mut Criterion) {
    let d = 30;
    let mc = MonteCarlo::new(1_000_000, 1).expect("valid");
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    let v = random_direction(d, &mut rng).expect("d > 0");
    let grid = alpha_grid(101).expect("n ≥ 2");
    let mut group = c.benchmark_group("lp_noise_1e6_d30");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    for &(p, a) in &[(1.0, 1.0), (2.0, 1.0), (4.0, 4.0), (2.0, 2.0), (1.5, 3.0)] {
        let noise = LpNoise::normalised(d, p, a).expect("valid");
        group.bench_function(format!("llr_p{p}_a{a}"), |b| {
            b.iter(|| {
                let l = llr_samples(&noise, black_box(&v), mc).expect("valid");
                black_box(l.tradeoff(&grid, 1.96).expect("valid"))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_llr);
criterion_main!(benches);
