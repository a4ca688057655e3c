//! Orthonormal two-dimensional Haar wavelet transform of a `2^k × 2^k` field and
//! wavelet soft thresholding (VisuShrink, Donoho & Johnstone 1994), the denoiser used on
//! heat maps in Balle & Wang 2018, Section 4 and Figure 2 (docs/maths.md §4: soft
//! thresholding, applied in the wavelet basis).
//!
//! # Transform
//!
//! Fields are `side × side` arrays (row index first), `side = 2^k`. The transform is the
//! full multilevel *non-standard* (square, Mallat) decomposition: at each level, on the
//! current `m × m` low-pass block in the top-left corner (`m = side, side/2, …, 2`),
//! every row and then every column is replaced by its pairwise averages
//! `(a + b)/√2` (first half) and differences `(a − b)/√2` (second half). After `k`
//! levels, entry `[0, 0]` holds the single coarsest scaling coefficient `side · mean(field)`;
//! every other entry holds a detail (wavelet) coefficient. Each 1-D step is an
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

use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, ArrayViewMut1, ArrayViewMut2, Axis, Zip};

use crate::error::{check_sigma, DenoiseError};
use crate::shrink::soft;

/// Checks that the field is square with a power-of-two side (`side ≥ 1`).
fn check_grid(shape: &[usize]) -> Result<(), DenoiseError> {
    let (rows, cols) = (shape[0], shape[1]);
    if rows == cols && rows.is_power_of_two() {
        Ok(())
    } else {
        Err(DenoiseError::BadGrid { rows, cols })
    }
}

/// One orthonormal Haar analysis step on `x` (even length) into `out`: pairwise sums
/// into the first half, pairwise differences into the second.
fn analyse(x: ArrayView1<f64>, out: ArrayViewMut1<f64>) {
    let h = x.len() / 2;
    let (sums, diffs) = out.split_at(Axis(0), h);
    Zip::from(sums)
        .and(diffs)
        .and(x.slice(s![..;2]))
        .and(x.slice(s![1..;2]))
        .for_each(|s, d, &a, &b| {
            *s = (a + b) * FRAC_1_SQRT_2;
            *d = (a - b) * FRAC_1_SQRT_2;
        });
}

/// One orthonormal Haar synthesis step (inverse of [`analyse`]).
fn synthesise(x: ArrayView1<f64>, mut out: ArrayViewMut1<f64>) {
    let h = x.len() / 2;
    let (evens, odds) = out.multi_slice_mut((s![..;2], s![1..;2]));
    Zip::from(evens)
        .and(odds)
        .and(x.slice(s![..h]))
        .and(x.slice(s![h..]))
        .for_each(|e, o, &s, &d| {
            *e = (s + d) * FRAC_1_SQRT_2;
            *o = (s - d) * FRAC_1_SQRT_2;
        });
}

/// Applies `step` to every row and every column (`cols_first` chooses the order) of the
/// top-left `m × m` block of the field. Rows go through `step` one by one; the columns
/// are transformed all at once, row pair by row pair ([`column_pass`]): a column of a
/// row-major array is strided, and stepping down each one was twice as slow.
fn block_pass(
    field: &mut ArrayViewMut2<f64>,
    m: usize,
    cols_first: bool,
    step: fn(ArrayView1<f64>, ArrayViewMut1<f64>),
    synthesis: bool,
) {
    let mut block = field.slice_mut(s![..m, ..m]);
    // A step moves values (sums to the front, differences to the back), so it cannot
    // work in place: it writes into scratch that is then copied back.
    let mut out = Array1::zeros(m);
    let mut rows = |block: &mut ArrayViewMut2<f64>| {
        for mut line in block.lanes_mut(Axis(1)) {
            step(line.view(), out.view_mut());
            line.assign(&out);
        }
    };
    let mut scratch = Array2::zeros((m, m));
    if cols_first {
        column_pass(&mut block, &mut scratch, synthesis);
        rows(&mut block);
    } else {
        rows(&mut block);
        column_pass(&mut block, &mut scratch, synthesis);
    }
}

/// The Haar step (analysis, or `synthesis`) down every column of `block` at once, as
/// whole-row operations: analysis writes `(r_{2i} + r_{2i+1})/√2` to row `i` and
/// `(r_{2i} − r_{2i+1})/√2` to row `m/2 + i`; synthesis the inverse. The same arithmetic,
/// value for value, as [`analyse`] and [`synthesise`] on each column.
fn column_pass(block: &mut ArrayViewMut2<f64>, scratch: &mut Array2<f64>, synthesis: bool) {
    let h = block.nrows() / 2;
    for i in 0..h {
        if synthesis {
            let (sr, dr) = (block.row(i), block.row(h + i));
            let (mut e, mut o) = scratch.multi_slice_mut((s![2 * i, ..], s![2 * i + 1, ..]));
            Zip::from(&mut e)
                .and(&mut o)
                .and(sr)
                .and(dr)
                .for_each(|e, o, &s, &d| {
                    *e = (s + d) * FRAC_1_SQRT_2;
                    *o = (s - d) * FRAC_1_SQRT_2;
                });
        } else {
            let (a, b) = (block.row(2 * i), block.row(2 * i + 1));
            let (mut sr, mut dr) = scratch.multi_slice_mut((s![i, ..], s![h + i, ..]));
            Zip::from(&mut sr)
                .and(&mut dr)
                .and(a)
                .and(b)
                .for_each(|s, d, &a, &b| {
                    *s = (a + b) * FRAC_1_SQRT_2;
                    *d = (a - b) * FRAC_1_SQRT_2;
                });
        }
    }
    block.assign(scratch);
}

/// Forward orthonormal 2-D Haar transform, full multilevel non-standard decomposition
/// (module documentation), in place on a `side × side` field.
///
/// Errors: the field is not square with a power-of-two side.
///
/// ```
/// use ndarray::array;
/// let mut f = array![[1.0, 1.0], [1.0, 1.0]];
/// denoise::haar::haar2d_forward(f.view_mut()).unwrap();
/// // all mass in the scaling coefficient: side · mean = 2
/// assert!((f[[0, 0]] - 2.0).abs() < 1e-15);
/// assert!(f.iter().skip(1).all(|v| v.abs() < 1e-15));
/// ```
pub fn haar2d_forward(mut field: ArrayViewMut2<f64>) -> Result<(), DenoiseError> {
    check_grid(field.shape())?;
    let mut m = field.nrows();
    while m >= 2 {
        block_pass(&mut field, m, false, analyse, false);
        m /= 2;
    }
    Ok(())
}

/// Inverse of [`haar2d_forward`] (its transpose, the transform being orthogonal), in
/// place.
///
/// Errors: the field is not square with a power-of-two side.
///
/// ```
/// use denoise::haar::{haar2d_forward, haar2d_inverse};
/// let orig = ndarray::Array2::from_shape_fn((4, 4), |(r, c)| ((4 * r + c).pow(2)) as f64);
/// let mut f = orig.clone();
/// haar2d_forward(f.view_mut()).unwrap();
/// haar2d_inverse(f.view_mut()).unwrap();
/// assert!(f.iter().zip(&orig).all(|(a, b)| (a - b).abs() < 1e-12));
/// ```
pub fn haar2d_inverse(mut coeffs: ArrayViewMut2<f64>) -> Result<(), DenoiseError> {
    check_grid(coeffs.shape())?;
    let side = coeffs.nrows();
    let mut m = 2;
    while m <= side {
        block_pass(&mut coeffs, m, true, synthesise, true);
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
/// let y = ndarray::array![[1.0, 2.0], [3.0, 4.0]];
/// let z = denoise::haar::haar_soft_threshold_at(y.view(), 0.0).unwrap();
/// assert!(z.iter().zip(&y).all(|(a, b)| (a - b).abs() < 1e-14));
/// ```
pub fn haar_soft_threshold_at(
    y: ArrayView2<f64>,
    lambda: f64,
) -> Result<Array2<f64>, DenoiseError> {
    if !(lambda >= 0.0 && lambda.is_finite()) {
        return Err(DenoiseError::OutOfRange {
            name: "lambda",
            value: lambda,
            allowed: "[0, inf)",
        });
    }
    let mut c = y.to_owned();
    haar2d_forward(c.view_mut())?;
    let scaling = c[[0, 0]];
    c.mapv_inplace(|v| soft(v, lambda));
    c[[0, 0]] = scaling;
    haar2d_inverse(c.view_mut())?;
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
/// let y = ndarray::array![[5.1, 4.9], [5.0, 5.0]];
/// let z = denoise::haar::haar_soft_threshold(y.view(), 1.0).unwrap();
/// assert!(z.iter().all(|v| (v - 5.0).abs() < 1e-12));
/// ```
pub fn haar_soft_threshold(y: ArrayView2<f64>, sigma: f64) -> Result<Array2<f64>, DenoiseError> {
    check_sigma(sigma)?;
    check_grid(y.shape())?;
    let lambda = sigma * (2.0 * (y.len() as f64).ln()).sqrt();
    haar_soft_threshold_at(y, lambda)
}
