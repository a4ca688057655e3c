//! Denoisers for a Gaussian-mechanism release `y = f + N(0, σ² I_d)` with σ known
//! (Balle & Wang 2018, Section 4; docs/maths.md §4): James–Stein (Theorem 11) plain and
//! positive-part, soft thresholding at the universal threshold `σ √(2 ln d)`
//! (Theorem 12, after Donoho & Johnstone 1994), and the Bayes estimator under a Gaussian
//! prior `f ~ N(0, w² I_d)`.
//!
//! Every denoiser is a pure function of the release and σ (post-processing, so the
//! privacy guarantee of the release is unchanged). Each comes as an allocating version
//! (`&[f64] → Vec<f64>`) and an `_in_place` version.

use crate::error::{check_sigma, DenoiseError};

/// Sum of squares `‖y‖²`.
fn norm_sq(y: &[f64]) -> f64 {
    y.iter().map(|v| v * v).sum()
}

fn check_js_dim(method: &'static str, d: usize) -> Result<(), DenoiseError> {
    if d < 3 {
        Err(DenoiseError::DimensionTooSmall { method, d, min: 3 })
    } else {
        Ok(())
    }
}

/// The James–Stein shrinkage factor `1 − (d − 2)σ²/‖y‖²` (Balle & Wang 2018,
/// Theorem 11; docs/maths.md §4), or `None` when `‖y‖² = 0` (a null event under
/// Gaussian noise; both James–Stein functions then return the zero vector).
fn js_factor(y: &[f64], sigma: f64) -> Option<f64> {
    let s = norm_sq(y);
    if s > 0.0 {
        Some(1.0 - (y.len() as f64 - 2.0) * sigma * sigma / s)
    } else {
        None
    }
}

/// James–Stein estimator (Balle & Wang 2018, Theorem 11; James & Stein 1961;
/// docs/maths.md §4): `ŷ = (1 − (d − 2)σ²/‖y‖²) y`, in place.
///
/// For `d ≥ 3` its risk `E‖ŷ − f‖²` is below `dσ²` (the risk of `y`) for every `f`; at
/// `f = 0` it equals `2σ²`. The factor can be negative (overshrinkage through the
/// origin); [`james_stein_positive_in_place`] clips it at 0. `y = 0` (probability zero)
/// gives `0`.
///
/// Errors: `d = y.len() < 3`, σ not in `(0, ∞)`.
///
/// ```
/// let mut y = vec![3.0, 0.0, 4.0, 0.0];
/// denoise::shrink::james_stein_in_place(&mut y, 1.0).unwrap();
/// // factor 1 − 2·1/25 = 0.92
/// assert!((y[0] - 2.76).abs() < 1e-12 && (y[2] - 3.68).abs() < 1e-12);
/// ```
pub fn james_stein_in_place(y: &mut [f64], sigma: f64) -> Result<(), DenoiseError> {
    check_sigma(sigma)?;
    check_js_dim("James-Stein", y.len())?;
    let c = js_factor(y, sigma).unwrap_or(0.0);
    y.iter_mut().for_each(|v| *v *= c);
    Ok(())
}

/// James–Stein estimator, allocating version of [`james_stein_in_place`]
/// (Balle & Wang 2018, Theorem 11; docs/maths.md §4).
///
/// ```
/// let y = denoise::shrink::james_stein(&[1.0, 1.0, 1.0], 1.0).unwrap();
/// // factor 1 − 1/3
/// assert!((y[0] - 2.0 / 3.0).abs() < 1e-15);
/// ```
pub fn james_stein(y: &[f64], sigma: f64) -> Result<Vec<f64>, DenoiseError> {
    let mut out = y.to_vec();
    james_stein_in_place(&mut out, sigma)?;
    Ok(out)
}

/// Positive-part James–Stein estimator (Balle & Wang 2018, Theorem 11 and the remark
/// after it; Baranchik 1964; docs/maths.md §4): `ŷ = (1 − (d − 2)σ²/‖y‖²)₊ y`, in place.
/// Its risk is never above that of the plain estimator, for every `f`.
///
/// Errors: `d = y.len() < 3`, σ not in `(0, ∞)`.
///
/// ```
/// let mut y = vec![0.1, -0.1, 0.1];
/// denoise::shrink::james_stein_positive_in_place(&mut y, 1.0).unwrap();
/// assert_eq!(y, vec![0.0, 0.0, 0.0]);
/// ```
pub fn james_stein_positive_in_place(y: &mut [f64], sigma: f64) -> Result<(), DenoiseError> {
    check_sigma(sigma)?;
    check_js_dim("positive-part James-Stein", y.len())?;
    let c = js_factor(y, sigma).unwrap_or(0.0).max(0.0);
    y.iter_mut().for_each(|v| *v *= c);
    Ok(())
}

/// Positive-part James–Stein estimator, allocating version of
/// [`james_stein_positive_in_place`] (Balle & Wang 2018, Theorem 11; docs/maths.md §4).
///
/// ```
/// let y = denoise::shrink::james_stein_positive(&[10.0, 0.0, 0.0], 1.0).unwrap();
/// assert!((y[0] - 9.9).abs() < 1e-12);
/// ```
pub fn james_stein_positive(y: &[f64], sigma: f64) -> Result<Vec<f64>, DenoiseError> {
    let mut out = y.to_vec();
    james_stein_positive_in_place(&mut out, sigma)?;
    Ok(out)
}

/// The universal threshold `λ = σ √(2 ln d)` of Balle & Wang 2018, Theorem 12
/// (Donoho & Johnstone 1994; docs/maths.md §4). `d = 1` gives `λ = 0`.
///
/// Errors: σ not in `(0, ∞)`, `d = 0`.
///
/// ```
/// let l = denoise::shrink::universal_threshold(2.0, 100).unwrap();
/// assert!((l - 2.0 * (2.0 * 100f64.ln()).sqrt()).abs() < 1e-12);
/// ```
pub fn universal_threshold(sigma: f64, d: usize) -> Result<f64, DenoiseError> {
    check_sigma(sigma)?;
    if d == 0 {
        return Err(DenoiseError::DimensionTooSmall {
            method: "soft thresholding",
            d,
            min: 1,
        });
    }
    Ok(sigma * (2.0 * (d as f64).ln()).sqrt())
}

/// Soft thresholding of one value: `sign(x)(|x| − λ)₊` (docs/maths.md §4).
///
/// ```
/// use denoise::shrink::soft;
/// assert_eq!(soft(3.0, 1.0), 2.0);
/// assert_eq!(soft(-3.0, 1.0), -2.0);
/// assert_eq!(soft(0.5, 1.0), 0.0);
/// ```
#[inline]
pub fn soft(x: f64, lambda: f64) -> f64 {
    if x > lambda {
        x - lambda
    } else if x < -lambda {
        x + lambda
    } else {
        0.0
    }
}

/// Soft thresholding of every coordinate at a given `λ ≥ 0`, in place:
/// `yᵢ ← sign(yᵢ)(|yᵢ| − λ)₊` (docs/maths.md §4).
///
/// Errors: λ not in `[0, ∞)`.
///
/// ```
/// let mut y = vec![2.0, -0.5, -4.0];
/// denoise::shrink::soft_threshold_at_in_place(&mut y, 1.0).unwrap();
/// assert_eq!(y, vec![1.0, 0.0, -3.0]);
/// ```
pub fn soft_threshold_at_in_place(y: &mut [f64], lambda: f64) -> Result<(), DenoiseError> {
    if !(lambda >= 0.0 && lambda.is_finite()) {
        return Err(DenoiseError::OutOfRange {
            name: "lambda",
            value: lambda,
            allowed: "[0, inf)",
        });
    }
    y.iter_mut().for_each(|v| *v = soft(*v, lambda));
    Ok(())
}

/// Soft thresholding at the universal threshold `λ = σ √(2 ln d)`, `d = y.len()`
/// (Balle & Wang 2018, Theorem 12; docs/maths.md §4), in place.
///
/// Errors: σ not in `(0, ∞)`, empty `y`.
///
/// ```
/// let mut y = vec![10.0, 0.5, -0.5, -10.0];
/// denoise::shrink::soft_threshold_in_place(&mut y, 1.0).unwrap();
/// let l = (2.0 * 4f64.ln()).sqrt();
/// assert_eq!(y, vec![10.0 - l, 0.0, 0.0, -10.0 + l]);
/// ```
pub fn soft_threshold_in_place(y: &mut [f64], sigma: f64) -> Result<(), DenoiseError> {
    let lambda = universal_threshold(sigma, y.len())?;
    soft_threshold_at_in_place(y, lambda)
}

/// Soft thresholding at `λ = σ √(2 ln d)`, allocating version of
/// [`soft_threshold_in_place`] (Balle & Wang 2018, Theorem 12; docs/maths.md §4).
///
/// ```
/// let y = denoise::shrink::soft_threshold(&[0.1, 5.0], 1.0).unwrap();
/// assert_eq!(y[0], 0.0);
/// ```
pub fn soft_threshold(y: &[f64], sigma: f64) -> Result<Vec<f64>, DenoiseError> {
    let mut out = y.to_vec();
    soft_threshold_in_place(&mut out, sigma)?;
    Ok(out)
}

/// Checks the prior scale `w ∈ [0, ∞)`.
fn check_w(w: f64) -> Result<f64, DenoiseError> {
    if w >= 0.0 && w.is_finite() {
        Ok(w)
    } else {
        Err(DenoiseError::OutOfRange {
            name: "w",
            value: w,
            allowed: "[0, inf)",
        })
    }
}

/// Bayes (posterior-mean) estimator under the Gaussian prior `f ~ N(0, w² I_d)`
/// (Balle & Wang 2018, Section 4; docs/maths.md §4): `ŷ = w²/(w² + σ²) y`, in place.
/// Its Bayes risk is [`bayes_risk`].
///
/// Errors: σ not in `(0, ∞)`, `w` not in `[0, ∞)`.
///
/// ```
/// let mut y = vec![2.0, -4.0];
/// denoise::shrink::bayes_gaussian_prior_in_place(&mut y, 1.0, 1.0).unwrap();
/// assert_eq!(y, vec![1.0, -2.0]);
/// ```
pub fn bayes_gaussian_prior_in_place(
    y: &mut [f64],
    sigma: f64,
    w: f64,
) -> Result<(), DenoiseError> {
    check_sigma(sigma)?;
    check_w(w)?;
    let w2 = w * w;
    let c = w2 / (w2 + sigma * sigma);
    y.iter_mut().for_each(|v| *v *= c);
    Ok(())
}

/// Bayes estimator under `f ~ N(0, w² I_d)`, allocating version of
/// [`bayes_gaussian_prior_in_place`] (docs/maths.md §4).
///
/// ```
/// let y = denoise::shrink::bayes_gaussian_prior(&[3.0], 1.0, 2f64.sqrt()).unwrap();
/// assert!((y[0] - 2.0).abs() < 1e-15);
/// ```
pub fn bayes_gaussian_prior(y: &[f64], sigma: f64, w: f64) -> Result<Vec<f64>, DenoiseError> {
    let mut out = y.to_vec();
    bayes_gaussian_prior_in_place(&mut out, sigma, w)?;
    Ok(out)
}

/// Bayes risk of [`bayes_gaussian_prior`] (Balle & Wang 2018, Section 4; docs/maths.md
/// §4): `E‖ŷ − f‖² = d w² σ²/(σ² + w²)` with the expectation over both the prior
/// `f ~ N(0, w² I_d)` and the noise.
///
/// Errors: σ not in `(0, ∞)`, `w` not in `[0, ∞)`.
///
/// ```
/// let r = denoise::shrink::bayes_risk(10, 1.0, 1.0).unwrap();
/// assert_eq!(r, 5.0);
/// ```
pub fn bayes_risk(d: usize, sigma: f64, w: f64) -> Result<f64, DenoiseError> {
    check_sigma(sigma)?;
    check_w(w)?;
    let (s2, w2) = (sigma * sigma, w * w);
    Ok(d as f64 * w2 * s2 / (s2 + w2))
}
