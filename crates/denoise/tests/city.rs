//! The fig6 heat-map release (Balle & Wang 2018, Figure 2; docs/maths.md §4): the
//! synthetic city generator and the denoised aGM release.

use denoise::city::{heatmap_release, synthetic_city, CITY_SIDE, CITY_TRIPS};
use densities::gaussian::analytic_sigma;

#[test]
fn city_is_deterministic_integral_and_has_the_right_total() {
    let a = synthetic_city(CITY_SIDE, CITY_TRIPS, 1).unwrap();
    assert_eq!(a, synthetic_city(CITY_SIDE, CITY_TRIPS, 1).unwrap());
    assert_ne!(a, synthetic_city(CITY_SIDE, CITY_TRIPS, 2).unwrap());
    assert_eq!(a.dim(), (CITY_SIDE, CITY_SIDE));
    assert!(a.iter().all(|&v| v >= 0.0 && v.fract() == 0.0));
    for seed in 0..20 {
        let total: f64 = synthetic_city(CITY_SIDE, CITY_TRIPS, seed)
            .unwrap()
            .iter()
            .sum();
        // Poisson total: sd √T ≈ 122.
        assert!(
            (total - CITY_TRIPS).abs() < 5.0 * CITY_TRIPS.sqrt(),
            "seed {seed}: {total}"
        );
    }
    // City-like: concentrated (the busiest 10 % of cells hold over a third of the trips)
    // with a low background (a fifth of the cells or more see no trip at all).
    let mut s = a.iter().copied().collect::<Vec<f64>>();
    s.sort_by(|x, y| y.total_cmp(x));
    let top: f64 = s[..CITY_SIDE * CITY_SIDE / 10].iter().sum();
    assert!(top > 0.35 * s.iter().sum::<f64>());
    assert!(s.iter().filter(|&&v| v == 0.0).count() > CITY_SIDE * CITY_SIDE / 5);
    assert!(synthetic_city(0, 1.0, 0).is_err());
    assert!(synthetic_city(8, 0.0, 0).is_err());
}

/// ε = 1, δ = 1e-6, Δ = 5 (fig6): over 5 cities × 4 noise draws, the raw RMSE is σ,
/// every denoiser is below raw in every draw, the wavelet cuts the RMSE at least 2.5×
/// in every draw (3× on average), and on average every denoiser beats the all-zero
/// estimate (so the gain is not just shrinkage to 0).
#[test]
fn every_denoiser_beats_the_raw_release() {
    let sigma = analytic_sigma(1.0, 1e-6, 5.0).unwrap();
    let mut sums = [0.0; 6];
    let mut count = 0.0;
    for city in 0..5 {
        let truth = synthetic_city(CITY_SIDE, CITY_TRIPS, 100 + city).unwrap();
        for noise in 0..4 {
            let r = heatmap_release(truth.view(), 1.0, 1e-6, 5.0, noise).unwrap();
            assert_eq!(r.sigma, sigma);
            // RMSE² of N(0, σ²) over 4096 cells: relative sd √(2/4096) = 2.2 %.
            assert!(
                (r.raw.rmse / sigma - 1.0).abs() < 0.05,
                "raw {}",
                r.raw.rmse
            );
            for p in &r.panels()[1..] {
                assert!(
                    p.rmse < r.raw.rmse,
                    "{}: {} vs raw {}",
                    p.label,
                    p.rmse,
                    r.raw.rmse
                );
                assert_eq!(p.field.dim(), truth.dim());
            }
            assert!(2.5 * r.wavelet.rmse < r.raw.rmse);
            for (s, v) in sums.iter_mut().zip(
                r.panels()
                    .iter()
                    .map(|p| p.rmse)
                    .chain(std::iter::once(r.zero_rmse)),
            ) {
                *s += v;
            }
            count += 1.0;
        }
    }
    let [raw, _mean, js, th, wav, zero] = sums.map(|s| s / count);
    assert!(3.0 * wav < raw, "wavelet {wav}, raw {raw}");
    for (label, v) in [("JS", js), ("threshold", th), ("wavelet", wav)] {
        assert!(v < zero, "{label} {v} vs all-zero {zero}");
    }
}

#[test]
fn release_is_deterministic_and_checks_its_inputs() {
    let truth = synthetic_city(CITY_SIDE, CITY_TRIPS, 3).unwrap();
    let a = heatmap_release(truth.view(), 1.0, 1e-6, 5.0, 9).unwrap();
    assert_eq!(a, heatmap_release(truth.view(), 1.0, 1e-6, 5.0, 9).unwrap());
    let labels: Vec<&str> = a.panels().iter().map(|p| p.label).collect();
    assert_eq!(labels, ["raw", "mean", "JS", "threshold", "wavelet"]);
    let direct = (a
        .raw
        .field
        .iter()
        .zip(&truth)
        .map(|(x, t)| (x - t).powi(2))
        .sum::<f64>()
        / truth.len() as f64)
        .sqrt();
    assert!((a.raw.rmse - direct).abs() < 1e-12 * direct);
    let s = ndarray::s![1.., ..];
    assert!(heatmap_release(truth.slice(s), 1.0, 1e-6, 5.0, 9).is_err());
    let odd = ndarray::s![1.., 1..];
    assert!(heatmap_release(truth.slice(odd), 1.0, 1e-6, 5.0, 9).is_err());
    assert!(heatmap_release(truth.view(), 0.0, 1e-6, 5.0, 9).is_err());
    assert!(heatmap_release(truth.view(), 1.0, 1e-6, -5.0, 9).is_err());
}

/// The flat baseline is the release's mean in every cell, and its RMSE follows the
/// bias–variance identity `RMSE² = Var(truth) + (mean(release) − mean(truth))²`
/// (a formula, not the panel's own sum of squares).
#[test]
fn the_flat_baseline_is_the_release_mean_and_obeys_bias_variance() {
    for seed in [3, 2018] {
        let truth = synthetic_city(CITY_SIDE, CITY_TRIPS, seed).unwrap();
        let r = heatmap_release(truth.view(), 1.0, 1e-6, 5.0, seed).unwrap();
        let n = truth.len() as f64;
        let release_mean = r.raw.field.iter().sum::<f64>() / n;
        assert!(r
            .mean
            .field
            .iter()
            .all(|&v| (v - release_mean).abs() <= 1e-12 * release_mean.abs()));
        let truth_mean = truth.iter().sum::<f64>() / n;
        let var = truth.iter().map(|t| (t - truth_mean).powi(2)).sum::<f64>() / n;
        let expect = (var + (release_mean - truth_mean).powi(2)).sqrt();
        assert!(
            (r.mean.rmse / expect - 1.0).abs() < 1e-9,
            "{} vs {expect}",
            r.mean.rmse
        );
        // The mean of σ-noise over 4096 cells moves by about σ/64 ≈ 0.33 trips.
        assert!((release_mean - truth_mean).abs() < 4.0 * r.sigma / 64.0);
    }
}
