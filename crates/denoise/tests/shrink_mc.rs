//! Monte Carlo checks of the denoisers against their risk theory (Balle & Wang 2018,
//! Section 4; docs/maths.md §4): James–Stein and its positive part beat the raw release
//! under a Gaussian prior (d ≥ 3), the Bayes risk `d w²σ²/(σ² + w²)`, the JS risk
//! `2σ²` at `f = 0`, the JS Bayes risk `dσ² − (d − 2)σ⁴/(σ² + w²)` (from
//! `E[1/χ²_d] = 1/(d − 2)`), and soft thresholding on a sparse signal against the
//! Donoho–Johnstone oracle inequality.

use denoise::shrink::{
    bayes_gaussian_prior, bayes_risk, james_stein, james_stein_positive, soft_threshold,
    universal_threshold,
};
use denoise::DenoiseError;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use rand_pcg::Pcg64;

fn normals(rng: &mut Pcg64, d: usize, scale: f64) -> Vec<f64> {
    (0..d)
        .map(|_| scale * rng.sample::<f64, _>(StandardNormal))
        .collect()
}

fn sq_err(a: &[f64], f: &[f64]) -> f64 {
    a.iter().zip(f).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// Mean and standard error of a sample.
fn mean_se(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

#[test]
fn james_stein_beats_raw_under_a_gaussian_prior() {
    let reps = 20_000;
    for &(d, sigma, w) in &[
        (3usize, 1.0, 1.0),
        (10, 1.0, 1.0),
        (50, 2.0, 1.0),
        (200, 0.5, 3.0),
    ] {
        let mut rng = Pcg64::seed_from_u64(d as u64);
        let (mut raw, mut js, mut jsp, mut d_js, mut d_jsp) =
            (vec![], vec![], vec![], vec![], vec![]);
        for _ in 0..reps {
            let f = normals(&mut rng, d, w);
            let z = normals(&mut rng, d, sigma);
            let y: Vec<f64> = f.iter().zip(&z).map(|(a, b)| a + b).collect();
            let e_raw = sq_err(&y, &f);
            let e_js = sq_err(&james_stein(&y, sigma).unwrap(), &f);
            let e_jsp = sq_err(&james_stein_positive(&y, sigma).unwrap(), &f);
            raw.push(e_raw);
            js.push(e_js);
            jsp.push(e_jsp);
            d_js.push(e_js - e_raw);
            d_jsp.push(e_jsp - e_js);
        }
        let (m_raw, se_raw) = mean_se(&raw);
        let (m_js, se_js) = mean_se(&js);
        let (m_djs, se_djs) = mean_se(&d_js);
        let (m_djsp, se_djsp) = mean_se(&d_jsp);
        // Raw risk dσ² and the JS Bayes risk dσ² − (d − 2)σ⁴/(σ² + w²).
        let (s2, w2, df) = (sigma * sigma, w * w, d as f64);
        assert!((m_raw - df * s2).abs() < 4.0 * se_raw, "d={d}: raw {m_raw}");
        let js_risk = df * s2 - (df - 2.0) * s2 * s2 / (s2 + w2);
        assert!(
            (m_js - js_risk).abs() < 4.0 * se_js,
            "d={d}: JS {m_js} vs {js_risk}"
        );
        // Paired differences (common random numbers): JS significantly below raw; the
        // positive part never above JS on average (it differs only where the factor is
        // clipped, and there it helps in expectation).
        assert!(
            m_djs + 4.0 * se_djs < 0.0,
            "d={d}: JS − raw = {m_djs} ± {se_djs}"
        );
        assert!(m_djsp <= 0.0, "d={d}: JS+ − JS = {m_djsp} ± {se_djsp}");
    }
}

#[test]
fn bayes_risk_matches_simulation() {
    let reps = 20_000;
    for &(d, sigma, w) in &[
        (1usize, 1.0, 1.0),
        (5, 1.0, 2.0),
        (20, 3.0, 1.0),
        (100, 0.7, 0.7),
    ] {
        let mut rng = Pcg64::seed_from_u64(100 + d as u64);
        let errs: Vec<f64> = (0..reps)
            .map(|_| {
                let f = normals(&mut rng, d, w);
                let y: Vec<f64> = f
                    .iter()
                    .zip(normals(&mut rng, d, sigma))
                    .map(|(a, b)| a + b)
                    .collect();
                sq_err(&bayes_gaussian_prior(&y, sigma, w).unwrap(), &f)
            })
            .collect();
        let (m, se) = mean_se(&errs);
        let r = bayes_risk(d, sigma, w).unwrap();
        assert!(
            (m - r).abs() < 3.0 * se,
            "d={d}: MC {m} ± {se}, formula {r}"
        );
    }
}

/// At `f = 0`, `E‖JS(y)‖² = 2σ²` for every `d ≥ 3` (`‖JS(y)‖² = ‖y‖² − 2(d−2)σ² +
/// (d−2)²σ⁴/‖y‖²` and `E[1/χ²_d] = 1/(d − 2)`). `d ≥ 5` so that the variance is finite
/// and the standard error meaningful.
#[test]
fn james_stein_risk_at_zero_is_two_sigma_squared() {
    let reps = 40_000;
    for &(d, sigma) in &[(5usize, 1.0), (10, 2.0), (100, 0.3)] {
        let mut rng = Pcg64::seed_from_u64(200 + d as u64);
        let errs: Vec<f64> = (0..reps)
            .map(|_| {
                let y = normals(&mut rng, d, sigma);
                james_stein(&y, sigma).unwrap().iter().map(|v| v * v).sum()
            })
            .collect();
        let (m, se) = mean_se(&errs);
        let want = 2.0 * sigma * sigma;
        assert!(
            (m - want).abs() < 3.0 * se,
            "d={d}: MC {m} ± {se}, want {want}"
        );
        assert!(m < 0.5 * d as f64 * sigma * sigma);
    }
}

/// Sparse signal: soft thresholding at `σ√(2 ln d)` beats the raw release by far and
/// obeys the oracle inequality `E‖ŷ − f‖² ≤ (2 ln d + 1)(σ² + Σ min(fᵢ², σ²))`
/// (Donoho & Johnstone 1994, Theorem 1; the bound behind Balle & Wang's Theorem 12).
#[test]
fn soft_threshold_beats_raw_on_a_sparse_signal() {
    let (d, sigma, reps) = (1000usize, 1.0, 2000);
    let mut f = vec![0.0; d];
    for (i, v) in f.iter_mut().enumerate().take(10) {
        *v = if i % 2 == 0 { 8.0 } else { -0.5 };
    }
    let mut rng = Pcg64::seed_from_u64(300);
    let (mut raw, mut th) = (vec![], vec![]);
    for _ in 0..reps {
        let y: Vec<f64> = f
            .iter()
            .zip(normals(&mut rng, d, sigma))
            .map(|(a, b)| a + b)
            .collect();
        raw.push(sq_err(&y, &f));
        th.push(sq_err(&soft_threshold(&y, sigma).unwrap(), &f));
    }
    let (m_raw, _) = mean_se(&raw);
    let (m_th, se_th) = mean_se(&th);
    let oracle: f64 = f.iter().map(|v| (v * v).min(sigma * sigma)).sum::<f64>() + sigma * sigma;
    let bound = (2.0 * (d as f64).ln() + 1.0) * oracle;
    assert!(m_th * 10.0 < m_raw, "threshold {m_th}, raw {m_raw}");
    assert!(
        m_th + 3.0 * se_th < bound,
        "threshold {m_th} vs bound {bound}"
    );
}

#[test]
fn closed_forms_and_errors() {
    // JS factor by hand: y = (1, 2, 2), ‖y‖² = 9, d − 2 = 1, σ = 2: 1 − 4/9.
    let y = [1.0, 2.0, 2.0];
    let js = james_stein(&y, 2.0).unwrap();
    assert!((js[1] - 2.0 * 5.0 / 9.0).abs() < 1e-15);
    // σ = 3: factor 1 − 9/9 = 0; σ = 4: plain goes negative, positive part clips.
    let js = james_stein(&y, 4.0).unwrap();
    assert!((js[0] - (1.0 - 16.0 / 9.0)).abs() < 1e-15);
    assert_eq!(james_stein_positive(&y, 4.0).unwrap(), vec![0.0; 3]);
    assert_eq!(james_stein(&[0.0; 4], 1.0).unwrap(), vec![0.0; 4]);
    assert!(matches!(
        james_stein(&[1.0, 2.0], 1.0),
        Err(DenoiseError::DimensionTooSmall { d: 2, min: 3, .. })
    ));
    assert!(james_stein_positive(&[1.0; 5], 0.0).is_err());
    assert!(james_stein(&[1.0; 5], f64::NAN).is_err());
    assert!(soft_threshold(&[], 1.0).is_err());
    assert_eq!(universal_threshold(1.0, 1).unwrap(), 0.0);
    assert!(bayes_gaussian_prior(&[1.0], 1.0, -1.0).is_err());
    assert_eq!(bayes_gaussian_prior(&[1.0], 1.0, 0.0).unwrap(), vec![0.0]);
    assert_eq!(bayes_risk(3, 1.0, 0.0).unwrap(), 0.0);
}
