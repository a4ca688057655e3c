//! Private mean estimation with denoising (Balle & Wang 2018, Section 5.2 and
//! Figure 1, right; docs/maths.md §4): the experiment behind fig5.
//!
//! # Data and mechanisms
//!
//! Each dataset has `n` records in `ℝ^d`: `x₀ ~ N(0, I_d)`, `xᵢ = x₀ + ξᵢ` with `ξᵢ`
//! uniform on `[−½, ½]^d`; the query is the mean `f(x) = x₀ + (1/n) Σ ξᵢ`. A record moves
//! within a unit cube, so (as the paper states it) the L2 sensitivity is `√d/n` and the
//! L1 sensitivity `d/n`. Released with
//! - cGM: `N(0, σ_c² I)`, `σ_c` from [`densities::gaussian::classical_sigma`]
//!   (only for ε < 1; not applicable otherwise),
//! - aGM: `N(0, σ_a² I)`, `σ_a` from [`densities::gaussian::analytic_sigma`],
//! - aGM + JS: the positive-part James–Stein estimate of the aGM release,
//! - aGM + threshold: soft thresholding of the aGM release at `σ_a √(2 ln d)`,
//! - Laplace: i.i.d. Laplace with `b = (d/n)/ε` per coordinate (L1 sensitivity).
//!
//! The error of each method on a dataset is `‖M(x) − f(x)‖₂`; the result holds its mean
//! and standard deviation over the datasets.
//!
//! # Randomness and determinism
//!
//! Dataset `i` draws everything from its own `Pcg64` stream [`dataset_rng`]`(seed, i)`,
//! in this order: `x₀` (d standard normals), the `n·d` uniforms (coordinate by
//! coordinate), `z` (d standard normals), the Laplace noise (d draws). The cGM and aGM
//! releases are `f + σ_c z` and `f + σ_a z` (the same `z`), and both denoisers act on
//! that same aGM release, so the methods are compared on common random numbers. The
//! datasets and `z` do not depend on ε or δ, so calls that differ only in ε are paired
//! too. Datasets run in parallel (rayon); per-dataset errors are collected in dataset
//! order and reduced sequentially, so the result is bit-identical for any number of
//! threads.
//!
//! # Speed
//!
//! The `n·d` uniforms (10⁸ for d = 2000, n = 500, 100 datasets) dominate. No `n × d`
//! matrix is formed: for each coordinate, the mean of the `n` uniforms is accumulated
//! directly, and each 64-bit output of the generator gives two uniforms on the grid
//! `(k + ½)·2⁻³²− ½`, `k ∈ {0, …, 2³² − 1}` (the midpoints of 2³² equal cells, so the
//! distribution is symmetric with mean exactly 0; its spacing, 2.3e-10, is far below
//! every quantity the experiment measures). The 32-bit integers are summed exactly in a
//! `u64` and converted once per coordinate.
//!
//! [`dataset`] materialises the same dataset as arrays (the centre `x₀` and the `n × d`
//! offsets `ξ`) from the same draws, for inspection and tests; its [`Dataset::query`] is
//! bit-identical to the value the fast path computes (a test checks it), since every grid
//! uniform and every partial sum of at most [`MAX_RECORDS`] of them is exact in `f64`.

use densities::gaussian::{analytic_sigma, classical_sigma};
use ndarray::{Array1, Array2, Axis};
use rand::{Rng, RngCore};
use rand_distr::{Exp1, StandardNormal};
use rand_pcg::Pcg64;
use rayon::prelude::*;

use crate::error::{check_open, DenoiseError};
use crate::shrink::{james_stein_positive_in_place, soft_threshold_in_place};

/// Largest number of records per dataset: the exact `u64` sum of `n` 32-bit integers
/// must stay below 2⁵³ to convert to `f64` exactly.
pub const MAX_RECORDS: usize = 1 << 21;

/// The methods of fig5, in plotting order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// Classical Gaussian mechanism (Dwork & Roth, Theorem A.1), ε < 1 only.
    ClassicalGaussian,
    /// Analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8).
    AnalyticGaussian,
    /// Analytic Gaussian release, denoised by positive-part James–Stein.
    AnalyticJamesStein,
    /// Analytic Gaussian release, soft-thresholded at `σ √(2 ln d)`.
    AnalyticSoftThreshold,
    /// Laplace mechanism with L1 sensitivity `d/n`.
    Laplace,
}

impl Method {
    /// Every method, in plotting order (also the index order of
    /// [`MeanEstimationResult::per_dataset`]).
    pub const ALL: [Method; 5] = [
        Method::ClassicalGaussian,
        Method::AnalyticGaussian,
        Method::AnalyticJamesStein,
        Method::AnalyticSoftThreshold,
        Method::Laplace,
    ];

    /// Short series label: `cGM`, `aGM`, `aGM+JS`, `aGM+threshold`, `Laplace`.
    ///
    /// ```
    /// assert_eq!(denoise::mean_estimation::Method::AnalyticJamesStein.label(), "aGM+JS");
    /// ```
    pub fn label(self) -> &'static str {
        match self {
            Method::ClassicalGaussian => "cGM",
            Method::AnalyticGaussian => "aGM",
            Method::AnalyticJamesStein => "aGM+JS",
            Method::AnalyticSoftThreshold => "aGM+threshold",
            Method::Laplace => "Laplace",
        }
    }

    /// Position of the method in [`Method::ALL`].
    ///
    /// ```
    /// use denoise::mean_estimation::Method;
    /// assert!(Method::ALL.iter().enumerate().all(|(i, m)| m.index() == i));
    /// ```
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Mean and standard deviation of the L2 error over the datasets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorStats {
    /// Mean of `‖M(x) − f(x)‖₂` over the datasets.
    pub mean: f64,
    /// Sample standard deviation (denominator `datasets − 1`; 0 for a single dataset).
    pub sd: f64,
}

/// Result of [`mean_estimation`] at one `(d, ε)`. (No `PartialEq`: the cGM column of
/// [`per_dataset`](Self::per_dataset) holds NaN when ε ≥ 1; compare bit patterns.)
#[derive(Debug, Clone)]
pub struct MeanEstimationResult {
    /// Dimension d.
    pub d: usize,
    /// Records per dataset n.
    pub n: usize,
    /// Privacy parameter ε.
    pub epsilon: f64,
    /// Privacy parameter δ.
    pub delta: f64,
    /// Number of datasets.
    pub datasets: usize,
    /// Classical Gaussian σ for L2 sensitivity `√d/n`; `None` when ε ≥ 1.
    pub sigma_classical: Option<f64>,
    /// Analytic Gaussian σ for L2 sensitivity `√d/n`.
    pub sigma_analytic: f64,
    /// Laplace scale `b = (d/n)/ε`.
    pub laplace_scale: f64,
    /// Error statistics per method, indexed by [`Method::index`]; `None` for cGM when
    /// ε ≥ 1.
    pub stats: [Option<ErrorStats>; 5],
    /// The L2 error of every method on every dataset (`per_dataset[i][m.index()]`;
    /// NaN for cGM when ε ≥ 1), in dataset order.
    pub per_dataset: Vec<[f64; 5]>,
}

impl MeanEstimationResult {
    /// Error statistics of one method (`None` for cGM when ε ≥ 1).
    pub fn get(&self, method: Method) -> Option<ErrorStats> {
        self.stats[method.index()]
    }
}

/// Splitmix64 step (Steele, Lea & Flood 2014), used to derive the dataset streams.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random stream of dataset `index` under `seed`: a `Pcg64` whose 128-bit state and
/// stream selector are derived from `(seed, index)` by splitmix64 (distinct indices give
/// distinct PCG streams, so the datasets are independent).
///
/// ```
/// use rand::RngCore;
/// let mut a = denoise::mean_estimation::dataset_rng(7, 3);
/// let mut b = denoise::mean_estimation::dataset_rng(7, 3);
/// let mut c = denoise::mean_estimation::dataset_rng(7, 4);
/// let x = a.next_u64();
/// assert_eq!(x, b.next_u64());
/// assert_ne!(x, c.next_u64());
/// ```
pub fn dataset_rng(seed: u64, index: u64) -> Pcg64 {
    let h1 = splitmix64(seed ^ splitmix64(index ^ 0x6A09_E667_F3BC_C908));
    let h2 = splitmix64(h1 ^ 0xBB67_AE85_84CA_A73B);
    let h3 = splitmix64(h2);
    let state = ((h1 as u128) << 64) | h2 as u128;
    let stream = ((h3 as u128) << 64) | index as u128;
    Pcg64::new(state, stream)
}

/// Mean of `n` uniforms on `[−½, ½]` on the grid `(k + ½)·2⁻³² − ½` (module
/// documentation), from `⌈n/2⌉` generator outputs.
#[inline]
fn mean_of_uniforms(rng: &mut Pcg64, n: usize) -> f64 {
    const LO: u64 = 0xFFFF_FFFF;
    let mut acc: u64 = 0;
    for _ in 0..n / 2 {
        let x = rng.next_u64();
        acc += (x & LO) + (x >> 32);
    }
    if n % 2 == 1 {
        acc += u64::from(rng.next_u32());
    }
    // Σ uᵢ = (K + n/2)·2⁻³² − n/2, exact in f64 for n ≤ MAX_RECORDS.
    let nf = n as f64;
    ((acc as f64 + 0.5 * nf) * 2f64.powi(-32) - 0.5 * nf) / nf
}

/// The uniform on `[−½, ½]` of the 32-bit integer `k`: `(k + ½)·2⁻³² − ½` (exact).
#[inline]
fn grid_uniform(k: u64) -> f64 {
    (k as f64 + 0.5) * 2f64.powi(-32) - 0.5
}

/// One dataset of the experiment: `n` records `xᵢ = x₀ + ξᵢ` in `ℝ^d` (module
/// documentation), as drawn by [`dataset`].
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// The centre `x₀ ~ N(0, I_d)`.
    pub centre: Array1<f64>,
    /// The offsets `ξᵢ`, uniform on the grid in `[−½, ½]^d`: row `i` is record `i`.
    pub offsets: Array2<f64>,
}

impl Dataset {
    /// The records `xᵢ = x₀ + ξᵢ` as the rows of an `n × d` array.
    pub fn records(&self) -> Array2<f64> {
        &self.offsets + &self.centre
    }

    /// The query `f(x) = x₀ + (1/n) Σ ξᵢ` (the mean of the records, with the offsets
    /// averaged exactly before the centre is added, as the experiment computes it).
    pub fn query(&self) -> Array1<f64> {
        let n = self.offsets.nrows() as f64;
        // Column sums of grid uniforms are exact in any order, so this is the fast
        // path's value bit for bit.
        let mut f = self.centre.clone();
        f.iter_mut()
            .zip(self.offsets.axis_iter(Axis(1)))
            .for_each(|(v, col)| *v += col.sum() / n);
        f
    }
}

/// Dataset `index` of [`mean_estimation`] under `seed`, materialised from the same
/// draws as the experiment (module documentation): the fast path never forms the
/// `n × d` offsets, this does.
///
/// Errors: `d = 0`, `n` not in `[1, MAX_RECORDS]`.
///
/// ```
/// let ds = denoise::mean_estimation::dataset(7, 0, 5, 100).unwrap();
/// assert_eq!(ds.offsets.dim(), (100, 5));
/// assert!(ds.offsets.iter().all(|u| u.abs() < 0.5));
/// let mean = ds.records().mean_axis(ndarray::Axis(0)).unwrap();
/// assert!((&mean - &ds.query()).iter().all(|e| e.abs() < 1e-12));
/// ```
pub fn dataset(seed: u64, index: u64, d: usize, n: usize) -> Result<Dataset, DenoiseError> {
    if d == 0 {
        return Err(DenoiseError::BadCount {
            name: "d",
            value: d,
            allowed: ">= 1",
        });
    }
    check_records(n)?;
    let mut rng = dataset_rng(seed, index);
    let centre: Array1<f64> = (0..d).map(|_| rng.sample(StandardNormal)).collect();
    // The draws go coordinate by coordinate: fill the columns in turn.
    let mut offsets = Array2::zeros((n, d));
    for mut col in offsets.columns_mut() {
        let mut cells = col.iter_mut();
        while let (Some(a), Some(b)) = (cells.next(), cells.next()) {
            let x = rng.next_u64();
            *a = grid_uniform(x & 0xFFFF_FFFF);
            *b = grid_uniform(x >> 32);
        }
        if n % 2 == 1 {
            col[n - 1] = grid_uniform(u64::from(rng.next_u32()));
        }
    }
    Ok(Dataset { centre, offsets })
}

/// `n ∈ [1, MAX_RECORDS]`.
fn check_records(n: usize) -> Result<(), DenoiseError> {
    if n == 0 || n > MAX_RECORDS {
        return Err(DenoiseError::BadCount {
            name: "n",
            value: n,
            allowed: "[1, 2^21]",
        });
    }
    Ok(())
}

/// The query value `f(x) = x₀ + (1/n) Σ ξᵢ` of one dataset (module documentation).
fn dataset_mean(rng: &mut Pcg64, d: usize, n: usize) -> Vec<f64> {
    let mut f: Vec<f64> = (0..d).map(|_| rng.sample(StandardNormal)).collect();
    for v in f.iter_mut() {
        *v += mean_of_uniforms(rng, n);
    }
    f
}

/// L2 distance `‖a − b‖₂`.
fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// Calibrated scales shared by every dataset.
struct Scales {
    sigma_c: Option<f64>,
    sigma_a: f64,
    b: f64,
}

/// Errors of every method on dataset `index` ([`Method::ALL`] order).
fn one_dataset(seed: u64, index: u64, d: usize, n: usize, s: &Scales) -> [f64; 5] {
    let mut rng = dataset_rng(seed, index);
    let f = dataset_mean(&mut rng, d, n);
    let z: Vec<f64> = (0..d).map(|_| rng.sample(StandardNormal)).collect();
    let z_norm = z.iter().map(|v| v * v).sum::<f64>().sqrt();
    let laplace_norm = (0..d)
        .map(|_| {
            let e1: f64 = rng.sample(Exp1);
            let e2: f64 = rng.sample(Exp1);
            let l = s.b * (e1 - e2);
            l * l
        })
        .sum::<f64>()
        .sqrt();
    let y: Vec<f64> = f
        .iter()
        .zip(&z)
        .map(|(fi, zi)| fi + s.sigma_a * zi)
        .collect();
    let mut js = y.clone();
    james_stein_positive_in_place(&mut js, s.sigma_a).expect("d >= 3 and sigma > 0 checked");
    let mut th = y;
    soft_threshold_in_place(&mut th, s.sigma_a).expect("d >= 1 and sigma > 0 checked");
    [
        s.sigma_c.map_or(f64::NAN, |sc| sc * z_norm),
        s.sigma_a * z_norm,
        dist(&js, &f),
        dist(&th, &f),
        laplace_norm,
    ]
}

/// Mean and sample standard deviation, summed in the given order.
fn stats(values: impl Iterator<Item = f64> + Clone) -> ErrorStats {
    let (mut count, mut sum) = (0usize, 0.0);
    for v in values.clone() {
        count += 1;
        sum += v;
    }
    let mean = sum / count as f64;
    let ss: f64 = values.map(|v| (v - mean) * (v - mean)).sum();
    let sd = if count > 1 {
        (ss / (count - 1) as f64).sqrt()
    } else {
        0.0
    };
    ErrorStats { mean, sd }
}

/// Private mean estimation at one `(d, ε)` (Balle & Wang 2018, Section 5.2; docs/maths.md
/// §4; fig5): for `datasets` datasets of `n` records in `ℝ^d`, the mean and standard
/// deviation of the L2 error of cGM, aGM, aGM + positive-part James–Stein,
/// aGM + soft threshold and Laplace (module documentation for the data, the
/// calibration, the random streams and determinism).
///
/// Runs the datasets in parallel on the current rayon pool; the result depends only on
/// the arguments, not on the number of threads.
///
/// Errors: `d < 3` (James–Stein), `n` not in `[1, MAX_RECORDS]`, `datasets = 0`,
/// ε not in `(0, ∞)`, δ not in `(0, 1)`.
///
/// ```
/// use denoise::mean_estimation::{mean_estimation, Method};
/// let r = mean_estimation(50, 500, 0.01, 1e-4, 10, 1).unwrap();
/// let raw = r.get(Method::AnalyticGaussian).unwrap().mean;
/// assert!(r.get(Method::AnalyticJamesStein).unwrap().mean < raw);
/// assert!(raw < r.get(Method::ClassicalGaussian).unwrap().mean);
/// ```
pub fn mean_estimation(
    d: usize,
    n: usize,
    epsilon: f64,
    delta: f64,
    datasets: usize,
    seed: u64,
) -> Result<MeanEstimationResult, DenoiseError> {
    if d < 3 {
        return Err(DenoiseError::DimensionTooSmall {
            method: "mean estimation with James-Stein",
            d,
            min: 3,
        });
    }
    check_records(n)?;
    if datasets == 0 {
        return Err(DenoiseError::BadCount {
            name: "datasets",
            value: datasets,
            allowed: ">= 1",
        });
    }
    check_open("epsilon", epsilon, 0.0, f64::INFINITY, "(0, inf)")?;
    check_open("delta", delta, 0.0, 1.0, "(0, 1)")?;
    let l2 = (d as f64).sqrt() / n as f64;
    let l1 = d as f64 / n as f64;
    let scales = Scales {
        sigma_c: if epsilon < 1.0 {
            Some(classical_sigma(epsilon, delta, l2)?)
        } else {
            None
        },
        sigma_a: analytic_sigma(epsilon, delta, l2)?,
        b: l1 / epsilon,
    };
    let per_dataset: Vec<[f64; 5]> = (0..datasets as u64)
        .into_par_iter()
        .map(|i| one_dataset(seed, i, d, n, &scales))
        .collect();
    let mut out_stats = [None; 5];
    for m in Method::ALL {
        if m == Method::ClassicalGaussian && scales.sigma_c.is_none() {
            continue;
        }
        out_stats[m.index()] = Some(stats(per_dataset.iter().map(|e| e[m.index()])));
    }
    Ok(MeanEstimationResult {
        d,
        n,
        epsilon,
        delta,
        datasets,
        sigma_classical: scales.sigma_c,
        sigma_analytic: scales.sigma_a,
        laplace_scale: scales.b,
        stats: out_stats,
        per_dataset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mean of `n` grid uniforms has mean 0 and variance `1/(12n)` (the grid's own
    /// variance differs from the continuous one by 2⁻⁶⁴/12, negligible), for even and
    /// odd `n`; and the conversion is exact at the extremes.
    #[test]
    fn mean_of_uniforms_has_the_uniform_moments() {
        for &n in &[1usize, 2, 7, 500] {
            let mut rng = dataset_rng(1, n as u64);
            let reps = 200_000;
            let v: Vec<f64> = (0..reps).map(|_| mean_of_uniforms(&mut rng, n)).collect();
            let m = v.iter().sum::<f64>() / reps as f64;
            let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (reps - 1) as f64;
            let want = 1.0 / (12.0 * n as f64);
            // se(mean) = √(want/reps); se(var) ≈ want √(2/reps) (near-Gaussian for n ≥ 2).
            assert!(
                m.abs() < 4.0 * (want / reps as f64).sqrt(),
                "n={n}: mean {m}"
            );
            assert!(
                (var / want - 1.0).abs() < 0.02,
                "n={n}: var {var} vs {want}"
            );
            assert!(v.iter().all(|x| x.abs() < 0.5));
        }
    }

    /// The materialised dataset averages to the fast path's query bit for bit (the
    /// exact-sum argument of the module documentation), for even and odd `n`, and its
    /// offsets are the draws themselves: they have the uniform's mean and variance.
    #[test]
    fn materialised_dataset_has_the_fast_path_query() {
        for &(d, n) in &[(3usize, 1usize), (7, 2), (20, 501), (50, 500)] {
            for index in 0..3 {
                let fast = dataset_mean(&mut dataset_rng(11, index), d, n);
                let ds = dataset(11, index, d, n).unwrap();
                let slow = ds.query();
                assert!(
                    fast.iter()
                        .zip(&slow)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "d={d} n={n}: {fast:?} vs {slow}"
                );
            }
        }
        let ds = dataset(5, 0, 200, 1000).unwrap();
        let m = ds.offsets.iter().sum::<f64>() / ds.offsets.len() as f64;
        let var = ds.offsets.iter().map(|u| u * u).sum::<f64>() / ds.offsets.len() as f64;
        // 2e5 uniforms: se(mean) = 6.5e-4, se(var) ≈ 1.9e-4.
        assert!(m.abs() < 4.0 * 6.5e-4, "mean {m}");
        assert!((var - 1.0 / 12.0).abs() < 4.0 * 1.9e-4, "var {var}");
        assert!(dataset(5, 0, 0, 10).is_err() && dataset(5, 0, 3, 0).is_err());
    }
}
