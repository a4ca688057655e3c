//! Orthonormal two-dimensional Haar wavelet transform of a `2^k × 2^k` field and
//! wavelet soft thresholding (VisuShrink, Donoho & Johnstone 1994), the denoiser used on
//! heat maps in Balle & Wang 2018, Section 4 and Figure 2 (docs/maths.md §4: soft
//! thresholding, applied in the wavelet basis).
//!
//! # Transform
//!
//! Fields are row-major slices of length `side²`, `side = 2^k`. The transform is the
//! full multilevel *non-standard* (square, Mallat) decomposition: at each level, on the
//! current `m × m` low-pass block in the top-left corner (`m = side, side/2, …, 2`),
//! every row and then every column is replaced by its pairwise averages
//! `(a + b)/√2` (first half) and differences `(a − b)/√2` (second half). After `k`
//! levels, index 0 holds the single coarsest scaling coefficient `side · mean(field)`;
//! every other index holds a detail (wavelet) coefficient. Each 1-D step is an
//! orthogonal matrix, so the whole transform `W` is orthogonal: it preserves the L2
//! norm, [`haar2d_inverse`] (`Wᵀ`) inverts it, and white noise `N(0, σ² I)` stays white
//! noise `N(0, σ² I)` in the coefficient domain, which is what lets the soft threshold
//! be calibrated with the same σ.
//!
//! # Thresholding
//!
//! [`haar_soft_threshold`] soft-thresholds the **detail coefficients only** at the
//! universal threshold `λ = σ √(2 ln N)` with `N = side²` the number of cells; the
//! coarsest scaling coefficient (the total mass) is kept as released.

use std::f64::consts::FRAC_1_SQRT_2;

use crate::error::{check_sigma, DenoiseError};
use crate::shrink::soft;

/// Checks that `len == side²` and `side` is a power of two (`side ≥ 1`).
fn check_grid(len: usize, side: usize) -> Result<(), DenoiseError> {
    if side.is_power_of_two() && side.checked_mul(side) == Some(len) {
        Ok(())
    } else {
        Err(DenoiseError::BadGrid { side, len })
    }
}

/// One orthonormal Haar analysis step on `x` (even length) into `out`.
fn analyse(x: &[f64], out: &mut [f64]) {
    let h = x.len() / 2;
    for i in 0..h {
        let (a, b) = (x[2 * i], x[2 * i + 1]);
        out[i] = (a + b) * FRAC_1_SQRT_2;
        out[h + i] = (a - b) * FRAC_1_SQRT_2;
    }
}

/// One orthonormal Haar synthesis step (inverse of [`analyse`]).
fn synthesise(x: &[f64], out: &mut [f64]) {
    let h = x.len() / 2;
    for i in 0..h {
        let (s, d) = (x[i], x[h + i]);
        out[2 * i] = (s + d) * FRAC_1_SQRT_2;
        out[2 * i + 1] = (s - d) * FRAC_1_SQRT_2;
    }
}

/// Applies `step` to every row and every column (`cols_first` chooses the order) of the
/// top-left `m × m` block of a row-major `side × side` field.
fn block_pass(
    field: &mut [f64],
    side: usize,
    m: usize,
    cols_first: bool,
    step: fn(&[f64], &mut [f64]),
) {
    let mut line = vec![0.0; m];
    let mut out = vec![0.0; m];
    let rows = |field: &mut [f64], out: &mut [f64]| {
        for r in 0..m {
            let row = &mut field[r * side..r * side + m];
            step(row, out);
            row.copy_from_slice(out);
        }
    };
    let mut cols = |field: &mut [f64], out: &mut [f64]| {
        for c in 0..m {
            for (r, v) in line.iter_mut().enumerate() {
                *v = field[r * side + c];
            }
            step(&line, out);
            for (r, v) in out.iter().enumerate() {
                field[r * side + c] = *v;
            }
        }
    };
    if cols_first {
        cols(field, &mut out);
        rows(field, &mut out);
    } else {
        rows(field, &mut out);
        cols(field, &mut out);
    }
}

/// Forward orthonormal 2-D Haar transform, full multilevel non-standard decomposition
/// (module documentation), in place on a row-major `side × side` field.
///
/// Errors: `side` not a power of two or `field.len() ≠ side²`.
///
/// ```
/// let mut f = vec![1.0, 1.0, 1.0, 1.0];
/// denoise::haar::haar2d_forward(&mut f, 2).unwrap();
/// // all mass in the scaling coefficient: side · mean = 2
/// assert!((f[0] - 2.0).abs() < 1e-15 && f[1..].iter().all(|v| v.abs() < 1e-15));
/// ```
pub fn haar2d_forward(field: &mut [f64], side: usize) -> Result<(), DenoiseError> {
    check_grid(field.len(), side)?;
    let mut m = side;
    while m >= 2 {
        block_pass(field, side, m, false, analyse);
        m /= 2;
    }
    Ok(())
}

/// Inverse of [`haar2d_forward`] (its transpose, the transform being orthogonal), in
/// place.
///
/// Errors: `side` not a power of two or `coeffs.len() ≠ side²`.
///
/// ```
/// use denoise::haar::{haar2d_forward, haar2d_inverse};
/// let orig: Vec<f64> = (0..16).map(|i| (i * i) as f64).collect();
/// let mut f = orig.clone();
/// haar2d_forward(&mut f, 4).unwrap();
/// haar2d_inverse(&mut f, 4).unwrap();
/// assert!(f.iter().zip(&orig).all(|(a, b)| (a - b).abs() < 1e-12));
/// ```
pub fn haar2d_inverse(coeffs: &mut [f64], side: usize) -> Result<(), DenoiseError> {
    check_grid(coeffs.len(), side)?;
    let mut m = 2;
    while m <= side {
        block_pass(coeffs, side, m, true, synthesise);
        m *= 2;
    }
    Ok(())
}

/// Wavelet soft thresholding of a noisy `side × side` field at a given `λ ≥ 0`:
/// forward Haar transform, soft threshold of every **detail** coefficient (the coarsest
/// scaling coefficient is kept), inverse transform.
///
/// Errors: bad grid (see [`haar2d_forward`]), λ not in `[0, ∞)`.
///
/// ```
/// // λ = 0 changes nothing.
/// let y = vec![1.0, 2.0, 3.0, 4.0];
/// let z = denoise::haar::haar_soft_threshold_at(&y, 2, 0.0).unwrap();
/// assert!(z.iter().zip(&y).all(|(a, b)| (a - b).abs() < 1e-14));
/// ```
pub fn haar_soft_threshold_at(
    y: &[f64],
    side: usize,
    lambda: f64,
) -> Result<Vec<f64>, DenoiseError> {
    if !(lambda >= 0.0 && lambda.is_finite()) {
        return Err(DenoiseError::OutOfRange {
            name: "lambda",
            value: lambda,
            allowed: "[0, inf)",
        });
    }
    let mut c = y.to_vec();
    haar2d_forward(&mut c, side)?;
    c[1..].iter_mut().for_each(|v| *v = soft(*v, lambda));
    haar2d_inverse(&mut c, side)?;
    Ok(c)
}

/// Haar-wavelet soft thresholding (VisuShrink) of a release `y = f + N(0, σ² I)` on a
/// `side × side` grid, at the universal threshold `λ = σ √(2 ln N)`, `N = side²`
/// (Balle & Wang 2018, Theorem 12 applied in the orthonormal Haar basis, where the
/// noise is again `N(0, σ² I)`; docs/maths.md §4). Detail coefficients only are
/// thresholded (module documentation).
///
/// Errors: bad grid, σ not in `(0, ∞)`.
///
/// ```
/// // A constant field plus small noise comes back (nearly) constant.
/// let y = vec![5.1, 4.9, 5.0, 5.0];
/// let z = denoise::haar::haar_soft_threshold(&y, 2, 1.0).unwrap();
/// assert!(z.iter().all(|v| (v - 5.0).abs() < 1e-12));
/// ```
pub fn haar_soft_threshold(y: &[f64], side: usize, sigma: f64) -> Result<Vec<f64>, DenoiseError> {
    check_sigma(sigma)?;
    check_grid(y.len(), side)?;
    let lambda = sigma * (2.0 * (y.len() as f64).ln()).sqrt();
    haar_soft_threshold_at(y, side, lambda)
}
