//! The fig5 experiment (Balle & Wang 2018, Section 5.2; docs/maths.md §4): determinism
//! across runs and rayon thread counts, calibration against `densities`, the error
//! distributions of the raw mechanisms against their moments, aGM below cGM, and
//! denoising against raw aGM on the fig5 grid.

use denoise::mean_estimation::{mean_estimation, MeanEstimationResult, Method};
use denoise::DenoiseError;
use densities::gaussian::{analytic_sigma, classical_sigma};

const DS: [usize; 8] = [10, 20, 50, 100, 200, 500, 1000, 2000];
const N: usize = 500;
const DELTA: f64 = 1e-4;
const SEED: u64 = 2018;

fn run(d: usize, eps: f64) -> MeanEstimationResult {
    mean_estimation(d, N, eps, DELTA, 100, SEED).unwrap()
}

/// Mean and standard error of the paired difference `a − b` over datasets.
fn paired(r: &MeanEstimationResult, a: Method, b: Method) -> (f64, f64) {
    let v: Vec<f64> = r
        .per_dataset
        .iter()
        .map(|e| e[a.index()] - e[b.index()])
        .collect();
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

/// Bit-identical results (NaN-aware: cGM is NaN per dataset when ε ≥ 1).
fn same(a: &MeanEstimationResult, b: &MeanEstimationResult) -> bool {
    a.stats == b.stats
        && a.sigma_analytic.to_bits() == b.sigma_analytic.to_bits()
        && a.per_dataset.len() == b.per_dataset.len()
        && a.per_dataset
            .iter()
            .flatten()
            .zip(b.per_dataset.iter().flatten())
            .all(|(x, y)| x.to_bits() == y.to_bits())
}

#[test]
fn identical_across_runs_and_thread_counts() {
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for &(d, eps) in &[(50, 0.01), (1000, 1.0)] {
        let a = one.install(|| mean_estimation(d, N, eps, DELTA, 37, 5).unwrap());
        let b = two.install(|| mean_estimation(d, N, eps, DELTA, 37, 5).unwrap());
        let c = mean_estimation(d, N, eps, DELTA, 37, 5).unwrap();
        assert!(same(&a, &b) && same(&a, &c));
        assert!(!same(
            &a,
            &mean_estimation(d, N, eps, DELTA, 37, 6).unwrap()
        ));
    }
}

#[test]
fn calibration_uses_the_stated_sensitivities() {
    let r = run(200, 0.5);
    let l2 = (200f64).sqrt() / 500.0;
    assert_eq!(r.sigma_analytic, analytic_sigma(0.5, DELTA, l2).unwrap());
    assert_eq!(
        r.sigma_classical,
        Some(classical_sigma(0.5, DELTA, l2).unwrap())
    );
    assert_eq!(r.laplace_scale, (200.0 / 500.0) / 0.5);
    let r1 = run(200, 1.0);
    assert_eq!(r1.sigma_classical, None);
    assert_eq!(r1.get(Method::ClassicalGaussian), None);
    assert!(r1.per_dataset.iter().all(|e| e[0].is_nan()));
}

/// `E‖σz‖² = dσ²` for the Gaussian mechanisms and `E‖L‖² = 2b²d` for Laplace: the
/// released noise has the calibrated scale (checked on squared errors, within 4
/// standard errors).
#[test]
fn raw_errors_match_noise_moments() {
    for &(d, eps) in &[(10, 0.01), (500, 0.5), (2000, 1.0)] {
        let r = mean_estimation(d, N, eps, DELTA, 400, 11).unwrap();
        let check = |m: Method, want: f64| {
            let v: Vec<f64> = r.per_dataset.iter().map(|e| e[m.index()].powi(2)).collect();
            let n = v.len() as f64;
            let mean = v.iter().sum::<f64>() / n;
            let se = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) / n).sqrt();
            assert!(
                (mean - want).abs() < 4.0 * se,
                "d={d} eps={eps} {}: {mean} ± {se} vs {want}",
                m.label()
            );
        };
        let df = d as f64;
        check(Method::AnalyticGaussian, df * r.sigma_analytic.powi(2));
        check(Method::Laplace, 2.0 * df * r.laplace_scale.powi(2));
        if let Some(sc) = r.sigma_classical {
            check(Method::ClassicalGaussian, df * sc * sc);
        }
    }
}

#[test]
fn analytic_beats_classical_where_both_apply() {
    for &eps in &[0.01, 0.5] {
        for &d in &[10, 200, 2000] {
            let r = run(d, eps);
            // Same noise draw, smaller σ: below on every dataset.
            assert!(r.per_dataset.iter().all(|e| e[1] < e[0]));
            let (a, c) = (
                r.get(Method::AnalyticGaussian).unwrap().mean,
                r.get(Method::ClassicalGaussian).unwrap().mean,
            );
            assert!(a < c, "d={d} eps={eps}: aGM {a}, cGM {c}");
        }
    }
}

/// ε = 0.01 (fig5 panel a): both denoisers below raw aGM at every d, significantly
/// (paired over datasets), and by more than 10× at d = 2000.
#[test]
fn denoising_beats_raw_at_every_d_for_small_epsilon() {
    for &d in &DS {
        let r = run(d, 0.01);
        let raw = r.get(Method::AnalyticGaussian).unwrap().mean;
        for m in [Method::AnalyticJamesStein, Method::AnalyticSoftThreshold] {
            let den = r.get(m).unwrap().mean;
            assert!(den < raw, "d={d}: {} {den} vs aGM {raw}", m.label());
            let (diff, se) = paired(&r, m, Method::AnalyticGaussian);
            assert!(diff + 3.0 * se < 0.0, "d={d} {}: {diff} ± {se}", m.label());
            if d == 2000 {
                assert!(10.0 * den < raw);
            }
        }
    }
}

/// ε = 1 (fig5 panel b): σ_aGM ≪ ‖f‖/√d = 1, so the possible gain of James–Stein is
/// only ≈ σ²/2 relative (2e-4 at d = 10): it is never significantly worse than raw aGM,
/// and significantly better from d = 200 on. Soft thresholding at σ√(2 ln d) pays its
/// "cost of adaptivity" on this dense signal (every |fᵢ| ≫ λ costs σ² + λ²) and is worse
/// than raw at every d, as Balle & Wang note for the low-privacy regime (Appendix B.2).
#[test]
fn large_epsilon_james_stein_helps_threshold_does_not() {
    for &d in &DS {
        let r = run(d, 1.0);
        let raw = r.get(Method::AnalyticGaussian).unwrap().mean;
        let (diff, se) = paired(&r, Method::AnalyticJamesStein, Method::AnalyticGaussian);
        assert!(diff < 3.0 * se, "d={d}: JS − aGM = {diff} ± {se}");
        if d >= 200 {
            assert!(diff + 3.0 * se < 0.0, "d={d}: JS − aGM = {diff} ± {se}");
        }
        let th = r.get(Method::AnalyticSoftThreshold).unwrap().mean;
        assert!(th > raw, "d={d}: threshold {th} vs aGM {raw}");
    }
}

#[test]
fn stats_are_mean_and_sample_sd_of_the_per_dataset_errors() {
    let r = mean_estimation(30, 50, 0.3, DELTA, 7, 1).unwrap();
    for m in Method::ALL {
        let s = r.get(m).unwrap();
        let v: Vec<f64> = r.per_dataset.iter().map(|e| e[m.index()]).collect();
        let mean = v.iter().sum::<f64>() / 7.0;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 6.0).sqrt();
        assert!((s.mean - mean).abs() <= 1e-15 * mean.abs());
        assert!((s.sd - sd).abs() <= 1e-12 * sd);
    }
    let one = mean_estimation(30, 50, 0.3, DELTA, 1, 1).unwrap();
    assert_eq!(one.get(Method::Laplace).unwrap().sd, 0.0);
    // Odd n works too.
    assert!(mean_estimation(30, 51, 0.3, DELTA, 3, 1).is_ok());
}

#[test]
fn invalid_inputs_are_refused() {
    assert!(matches!(
        mean_estimation(2, N, 1.0, DELTA, 10, 0),
        Err(DenoiseError::DimensionTooSmall { d: 2, .. })
    ));
    assert!(matches!(
        mean_estimation(10, 0, 1.0, DELTA, 10, 0),
        Err(DenoiseError::BadCount { name: "n", .. })
    ));
    assert!(matches!(
        mean_estimation(10, N, 1.0, DELTA, 0, 0),
        Err(DenoiseError::BadCount {
            name: "datasets",
            ..
        })
    ));
    assert!(matches!(
        mean_estimation(10, N, 0.0, DELTA, 10, 0),
        Err(DenoiseError::OutOfRange {
            name: "epsilon",
            ..
        })
    ));
    assert!(mean_estimation(10, N, 1.0, 1.0, 10, 0).is_err());
    assert!(mean_estimation(10, N, f64::NAN, DELTA, 10, 0).is_err());
}
