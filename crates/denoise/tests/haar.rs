//! The 2-D Haar transform: exact inversion, orthonormality (brute-force Gram matrix),
//! the explicit 2 × 2 case, and wavelet soft thresholding on a field that is sparse in
//! the Haar basis.

use denoise::haar::{haar2d_forward, haar2d_inverse, haar_soft_threshold, haar_soft_threshold_at};
use denoise::DenoiseError;
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use rand_pcg::Pcg64;

fn random_field(side: usize, seed: u64) -> Array2<f64> {
    let mut rng = Pcg64::seed_from_u64(seed);
    Array2::from_shape_simple_fn((side, side), || {
        100.0 * rng.sample::<f64, _>(StandardNormal) + rng.gen_range(0.0..50.0)
    })
}

fn max_abs(v: &Array2<f64>) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

#[test]
fn forward_then_inverse_is_identity_and_norm_is_preserved() {
    for (k, side) in [1usize, 2, 4, 8, 32, 64, 128].into_iter().enumerate() {
        let x = random_field(side, k as u64);
        let scale = max_abs(&x);
        let mut c = x.clone();
        haar2d_forward(c.view_mut()).unwrap();
        let n2: f64 = x.iter().map(|v| v * v).sum();
        let c2: f64 = c.iter().map(|v| v * v).sum();
        assert!((n2 - c2).abs() <= 1e-12 * n2, "side {side}: {n2} vs {c2}");
        haar2d_inverse(c.view_mut()).unwrap();
        let err = x
            .iter()
            .zip(&c)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err <= 1e-12 * scale, "side {side}: max error {err}");
        // The other order too.
        let mut d = x.clone();
        haar2d_inverse(d.view_mut()).unwrap();
        haar2d_forward(d.view_mut()).unwrap();
        let err = x
            .iter()
            .zip(&d)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err <= 1e-12 * scale, "side {side}: max error {err}");
    }
}

/// Brute force: the images of the basis vectors are orthonormal (Gram matrix = I).
#[test]
fn transform_matrix_is_orthogonal() {
    let side = 8;
    let n = side * side;
    let cols: Vec<Array2<f64>> = (0..n)
        .map(|k| {
            let mut e = Array2::zeros((side, side));
            e[[k / side, k % side]] = 1.0;
            haar2d_forward(e.view_mut()).unwrap();
            e
        })
        .collect();
    for i in 0..n {
        for j in 0..n {
            let g: f64 = cols[i].iter().zip(&cols[j]).map(|(a, b)| a * b).sum();
            let want = if i == j { 1.0 } else { 0.0 };
            assert!((g - want).abs() < 1e-14, "Gram[{i}][{j}] = {g}");
        }
    }
}

/// The 2 × 2 transform written out by hand, and the scaling coefficient
/// `side · mean` of a larger field.
#[test]
fn explicit_coefficients() {
    let (a, b, c, d) = (1.0, 2.0, 5.0, 11.0);
    let mut f = ndarray::array![[a, b], [c, d]];
    haar2d_forward(f.view_mut()).unwrap();
    let want = [
        (a + b + c + d) / 2.0,
        (a - b + c - d) / 2.0,
        (a + b - c - d) / 2.0,
        (a - b - c + d) / 2.0,
    ];
    for (g, w) in f.iter().zip(want) {
        assert!((g - w).abs() < 1e-14, "{f:?} vs {want:?}");
    }
    let x = random_field(16, 99);
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    let mut cx = x.clone();
    haar2d_forward(cx.view_mut()).unwrap();
    assert!((cx[[0, 0]] - 16.0 * mean).abs() < 1e-10 * max_abs(&x));
    // A field constant on dyadic 8 × 8 blocks has no detail coefficient at the two
    // finest scales: every coefficient outside the top-left 2 × 2 block is 0.
    let blocks = Array2::from_shape_fn((16, 16), |(r, c)| (r / 8 * 2 + c / 8) as f64 * 3.0 + 1.0);
    let mut cb = blocks.clone();
    haar2d_forward(cb.view_mut()).unwrap();
    for ((r, c), v) in cb.indexed_iter() {
        if r >= 2 || c >= 2 {
            assert!(v.abs() < 1e-12, "coefficient ({r}, {c}) = {v}");
        }
    }
}

#[test]
fn bad_grids_are_refused() {
    let mut v = Array2::zeros((3, 4));
    assert!(matches!(
        haar2d_forward(v.view_mut()),
        Err(DenoiseError::BadGrid { rows: 3, cols: 4 })
    ));
    let mut w = Array2::zeros((3, 3));
    assert!(haar2d_forward(w.view_mut()).is_err());
    assert!(haar2d_inverse(w.view_mut()).is_err());
    assert!(haar_soft_threshold(w.view(), 1.0).is_err());
    let z = Array2::zeros((4, 4));
    assert!(haar_soft_threshold(z.view(), 0.0).is_err());
    assert!(haar_soft_threshold_at(z.view(), -1.0).is_err());
}

/// A field constant on dyadic 16 × 16 blocks (sparse in the Haar basis) plus
/// `N(0, σ²)` noise: wavelet soft thresholding cuts the RMSE several-fold; pure noise is
/// (almost always) mapped to its mean.
#[test]
fn wavelet_threshold_denoises_a_blocky_field() {
    let side = 64;
    let sigma = 10.0;
    let truth = Array2::from_shape_fn((side, side), |(r, c)| {
        [0.0, 40.0, 5.0, 80.0][(r / 16 + 2 * (c / 16)) % 4]
    });
    let mut rng = Pcg64::seed_from_u64(3);
    let (mut raw_ss, mut den_ss) = (0.0, 0.0);
    for _ in 0..20 {
        let y = truth.mapv(|t| t + sigma * rng.sample::<f64, _>(StandardNormal));
        let z = haar_soft_threshold(y.view(), sigma).unwrap();
        raw_ss += y
            .iter()
            .zip(&truth)
            .map(|(a, b)| (a - b).powi(2))
            .sum::<f64>();
        den_ss += z
            .iter()
            .zip(&truth)
            .map(|(a, b)| (a - b).powi(2))
            .sum::<f64>();
    }
    assert!(den_ss * 9.0 < raw_ss, "raw {raw_ss}, denoised {den_ss}");

    let mut kept_noise = 0;
    for _ in 0..20 {
        let y = Array2::from_shape_simple_fn((side, side), || {
            sigma * rng.sample::<f64, _>(StandardNormal)
        });
        let mean = y.iter().sum::<f64>() / y.len() as f64;
        let z = haar_soft_threshold(y.view(), sigma).unwrap();
        if z.iter().any(|v| (v - mean).abs() > 1e-9) {
            kept_noise += 1;
        }
    }
    // P(some of 4095 detail coefficients exceeds σ√(2 ln 4096)) ≈ 0.14 per draw.
    assert!(
        kept_noise <= 8,
        "{kept_noise} of 20 noise fields kept a coefficient"
    );
}
