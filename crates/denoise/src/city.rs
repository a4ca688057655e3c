//! The fig6 heat-map experiment (Balle & Wang 2018, Figure 2; docs/maths.md §4): a
//! synthetic city-like density of trip counts on a grid, released with the analytic
//! Gaussian mechanism and denoised.
//!
//! The paper uses New York taxi pick-ups; those data are not available offline, so
//! [`synthetic_city`] generates a stand-in with the same qualitative features: a few
//! dense areas of different sizes, sharp hot spots, line-shaped avenues, and a low
//! background over most of the map (documented on the function).

use std::f64::consts::{FRAC_PI_3, FRAC_PI_6, TAU};

use densities::gaussian::analytic_sigma;
use ndarray::{Array2, ArrayView2, Zip};
use rand::{Rng, SeedableRng};
use rand_distr::{Poisson, StandardNormal};
use rand_pcg::Pcg64;

use crate::error::{check_open, DenoiseError};
use crate::haar::haar_soft_threshold;
use crate::shrink::{james_stein_positive, soft_threshold};

/// Side of the fig6 grid (64 × 64 cells).
pub const CITY_SIDE: usize = 64;

/// Expected total number of trips of the fig6 field: 3.7 a cell on average, about what
/// one night hour of taxi pick-ups and drop-offs gives per junction in the paper's
/// Manhattan data. With σ ≈ 21 (ε = 1, δ = 1e-6, Δ = 5) the broad structure is then
/// about 1–2σ per cell and only the two point-like hot spots stand out cell by cell,
/// the regime where denoising pays. With many more trips the universal-threshold
/// denoisers lose ground: at 1e5 trips cell-wise soft thresholding is worse than the raw
/// release (it costs about `σ² + λ² ≈ 18σ²` on each of the hundreds of cells above `λ`).
pub const CITY_TRIPS: f64 = 1.5e4;

/// Mass shares of the components of [`synthetic_city`]: downtown, districts, hot spots,
/// avenues, background (they sum to 1).
const SHARES: [f64; 5] = [0.42, 0.32, 0.06, 0.10, 0.10];

/// Adds `mass · shape / Σ shape` to `acc` (a component normalised to its share).
fn add_component(acc: &mut Array2<f64>, shape: &Array2<f64>, mass: f64) {
    // A sequential sum in row-major order, as the checked-in fig6 data were made with
    // (ndarray's `sum()` adds in a different order, which moves the last bits).
    let total: f64 = shape.iter().sum();
    if total > 0.0 {
        Zip::from(acc)
            .and(shape)
            .for_each(|a, &s| *a += mass * s / total);
    }
}

/// Evaluates `g(u, v)` at the centre of every cell of a `side × side` grid on the unit
/// square (`v` along the rows, `u` along the columns).
fn on_grid(side: usize, g: impl Fn(f64, f64) -> f64) -> Array2<f64> {
    let h = 1.0 / side as f64;
    Array2::from_shape_fn((side, side), |(r, c)| {
        g((c as f64 + 0.5) * h, (r as f64 + 0.5) * h)
    })
}

/// `side × side` array from values listed row by row.
fn square(side: usize, values: Vec<f64>) -> Array2<f64> {
    Array2::from_shape_vec((side, side), values).expect("side² values")
}

/// Unnormalised Gaussian bump centred at `(cu, cv)`, standard deviations `su` along the
/// direction at angle `theta` and `sv` across it.
fn bump(u: f64, v: f64, cu: f64, cv: f64, su: f64, sv: f64, theta: f64) -> f64 {
    let (s, c) = theta.sin_cos();
    let (du, dv) = (u - cu, v - cv);
    let a = (c * du + s * dv) / su;
    let b = (-s * du + c * dv) / sv;
    (-0.5 * (a * a + b * b)).exp()
}

/// Unnormalised "avenue": a Gaussian ridge of cross-section sd `w` around the segment
/// from `p` to `q`.
fn ridge(u: f64, v: f64, p: (f64, f64), q: (f64, f64), w: f64) -> f64 {
    let (dx, dy) = (q.0 - p.0, q.1 - p.1);
    let len2 = dx * dx + dy * dy;
    let t = (((u - p.0) * dx + (v - p.1) * dy) / len2).clamp(0.0, 1.0);
    let (ex, ey) = (u - p.0 - t * dx, v - p.1 - t * dy);
    (-0.5 * (ex * ex + ey * ey) / (w * w)).exp()
}

/// A synthetic city-like field of trip counts on a `side × side` grid,
/// deterministic given `seed`; the stand-in for the NYC taxi heat map of Balle & Wang
/// 2018, Figure 2 (fig6: `side = 64`, `total_trips = `[`CITY_TRIPS`]).
///
/// Coordinates are the unit square; every length below is in those units (one cell of
/// the 64-grid is 0.0156). The expected density is a mixture, each component evaluated
/// at the cell centres and normalised to its share of `total_trips`:
/// - 42 % **downtown**: an elongated Gaussian (an island-like core), centre uniform in
///   `[0.4, 0.6]²`, sd 0.22 along and 0.12 across its axis, axis angle uniform in
///   `[π/6, π/3]`;
/// - 32 % **districts**: 3 round Gaussians, centres uniform in `[0.2, 0.8]²`, sd
///   uniform in `[0.12, 0.18]`, equal shares;
/// - 6 % **hot spots** (a station, an airport): 2 point-like round Gaussians, centres
///   uniform in `[0.1, 0.9]²`, sd uniform in `[0.006, 0.008]` (about half a cell),
///   equal shares;
/// - 10 % **avenues**: 2 straight segments from the downtown centre to a point at
///   distance uniform in `[0.3, 0.45]` in a uniform direction (clipped by the map edge),
///   Gaussian cross-section sd 0.025, equal shares;
/// - 10 % **background**: uniform over the map.
///
/// The counts are then drawn independently per cell as `Poisson(expected count)`, so
/// they are integers whose total is close to `total_trips`. All randomness comes from
/// one `Pcg64::seed_from_u64(seed)`, drawn in the order listed (the counts row by row).
///
/// Errors: `side = 0`, `total_trips` not in `(0, ∞)`.
///
/// ```
/// let f = denoise::city::synthetic_city(64, 1.5e4, 7).unwrap();
/// assert_eq!(f.dim(), (64, 64));
/// let total: f64 = f.iter().sum();
/// assert!((total - 1.5e4).abs() < 1e3);
/// assert_eq!(f, denoise::city::synthetic_city(64, 1.5e4, 7).unwrap());
/// ```
pub fn synthetic_city(
    side: usize,
    total_trips: f64,
    seed: u64,
) -> Result<Array2<f64>, DenoiseError> {
    if side == 0 {
        return Err(DenoiseError::BadCount {
            name: "side",
            value: side,
            allowed: ">= 1",
        });
    }
    check_open("total_trips", total_trips, 0.0, f64::INFINITY, "(0, inf)")?;
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut rate = Array2::zeros((side, side));
    let unif = |rng: &mut Pcg64, lo: f64, hi: f64| rng.gen_range(lo..hi);
    let [s_core, s_districts, s_spots, s_avenues, s_background] = SHARES;

    // Downtown.
    let (cu, cv) = (unif(&mut rng, 0.4, 0.6), unif(&mut rng, 0.4, 0.6));
    let theta = unif(&mut rng, FRAC_PI_6, FRAC_PI_3);
    let shape = on_grid(side, |u, v| bump(u, v, cu, cv, 0.22, 0.12, theta));
    add_component(&mut rate, &shape, s_core * total_trips);

    // Districts.
    for _ in 0..3 {
        let (pu, pv) = (unif(&mut rng, 0.2, 0.8), unif(&mut rng, 0.2, 0.8));
        let s = unif(&mut rng, 0.12, 0.18);
        let shape = on_grid(side, |u, v| bump(u, v, pu, pv, s, s, 0.0));
        add_component(&mut rate, &shape, s_districts * total_trips / 3.0);
    }

    // Hot spots.
    for _ in 0..2 {
        let (pu, pv) = (unif(&mut rng, 0.1, 0.9), unif(&mut rng, 0.1, 0.9));
        let s = unif(&mut rng, 0.006, 0.008);
        let shape = on_grid(side, |u, v| bump(u, v, pu, pv, s, s, 0.0));
        add_component(&mut rate, &shape, s_spots * total_trips / 2.0);
    }

    // Avenues.
    for _ in 0..2 {
        let phi = unif(&mut rng, 0.0, TAU);
        let len = unif(&mut rng, 0.3, 0.45);
        let q = (cu + len * phi.cos(), cv + len * phi.sin());
        let shape = on_grid(side, |u, v| ridge(u, v, (cu, cv), q, 0.025));
        add_component(&mut rate, &shape, s_avenues * total_trips / 2.0);
    }

    // Background.
    let bg = s_background * total_trips / (side * side) as f64;
    rate += bg;

    // `iter` visits the cells row by row, the documented order of the draws.
    let counts = rate
        .iter()
        .map(|&lam| {
            Poisson::new(lam)
                .map(|p| rng.sample(p))
                .expect("rate > 0: the background is positive")
        })
        .collect();
    Ok(square(side, counts))
}

/// One panel of a heat-map release: a field and its RMSE against the truth.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Series label: `raw`, `mean`, `JS`, `threshold` or `wavelet`.
    pub label: &'static str,
    /// The released (or denoised) `side × side` field.
    pub field: Array2<f64>,
    /// `√(mean over cells of (field − truth)²)`.
    pub rmse: f64,
}

/// Result of [`heatmap_release`].
#[derive(Debug, Clone, PartialEq)]
pub struct HeatmapRelease {
    /// Side of the grid.
    pub side: usize,
    /// Analytic Gaussian σ used for the release.
    pub sigma: f64,
    /// RMSE of the all-zero estimate, i.e. the root mean square of the truth: the
    /// reference a denoiser that only shrinks towards 0 cannot beat by much.
    pub zero_rmse: f64,
    /// The aGM release `truth + N(0, σ² I)`.
    pub raw: Panel,
    /// The baseline: every cell set to the release's mean (post-processing, so private
    /// too). It keeps no structure at all, and a denoiser that does not beat it has
    /// learnt nothing the RMSE can see.
    pub mean: Panel,
    /// Positive-part James–Stein on the whole field (docs/maths.md §4).
    pub james_stein: Panel,
    /// Soft thresholding of every cell at `σ √(2 ln N)`, `N = side²` (docs/maths.md §4).
    pub threshold: Panel,
    /// Haar-wavelet soft thresholding of the detail coefficients at `σ √(2 ln N)`
    /// ([`crate::haar::haar_soft_threshold`]).
    pub wavelet: Panel,
}

impl HeatmapRelease {
    /// The five panels in plotting order: raw, mean, JS, threshold, wavelet.
    pub fn panels(&self) -> [&Panel; 5] {
        [
            &self.raw,
            &self.mean,
            &self.james_stein,
            &self.threshold,
            &self.wavelet,
        ]
    }
}

/// Root mean squared difference of two fields of the same shape.
fn rmse(a: ArrayView2<f64>, b: ArrayView2<f64>) -> f64 {
    // Summed sequentially in row-major order (see `add_component`).
    let ss: f64 = a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y)).sum();
    (ss / a.len() as f64).sqrt()
}

/// Heat-map release with denoising (Balle & Wang 2018, Section 4 and Figure 2;
/// docs/maths.md §1.2 and §4; fig6): releases the `side × side` field `truth` with the
/// analytic Gaussian mechanism (`σ = analytic_sigma(ε, δ, Δ)`, Δ the L2 sensitivity,
/// fig6 uses Δ = 5), then denoises the release with positive-part James–Stein, soft
/// thresholding and Haar-wavelet soft thresholding, and reports each panel's RMSE
/// against `truth`, beside the flat baseline that sets every cell to the release's mean.
///
/// The noise is `N(0, I)` drawn cell by cell (row by row) from `Pcg64::seed_from_u64(seed)`
/// and scaled by σ; every denoiser acts on that same release.
///
/// Errors: bad grid (`truth` not square with a power-of-two side), `side² < 3`
/// (James–Stein), ε not in `(0, ∞)`, δ not in `(0, 1)`, Δ not in `(0, ∞)`.
///
/// ```
/// use denoise::city::{heatmap_release, synthetic_city};
/// let truth = synthetic_city(64, 1.5e4, 1).unwrap();
/// let r = heatmap_release(truth.view(), 1.0, 1e-6, 5.0, 2).unwrap();
/// assert!(r.panels()[1..].iter().all(|p| p.rmse < r.raw.rmse));
/// ```
pub fn heatmap_release(
    truth: ArrayView2<f64>,
    epsilon: f64,
    delta: f64,
    sensitivity: f64,
    seed: u64,
) -> Result<HeatmapRelease, DenoiseError> {
    let (side, cols) = truth.dim();
    if !(side == cols && side.is_power_of_two()) {
        return Err(DenoiseError::BadGrid { rows: side, cols });
    }
    let sigma = analytic_sigma(epsilon, delta, sensitivity)?;
    let mut rng = Pcg64::seed_from_u64(seed);
    let raw = truth
        .iter()
        .map(|t| {
            let z: f64 = rng.sample(StandardNormal);
            t + sigma * z
        })
        .collect();
    let raw = square(side, raw);
    let panel = |label, field: Array2<f64>| Panel {
        label,
        rmse: rmse(field.view(), truth),
        field,
    };
    // James–Stein and the cell-wise threshold see the field as one vector of side² cells.
    let cells = raw.as_slice().expect("a new array is contiguous");
    let james_stein = panel("JS", square(side, james_stein_positive(cells, sigma)?));
    let threshold = panel("threshold", square(side, soft_threshold(cells, sigma)?));
    let wavelet = panel("wavelet", haar_soft_threshold(raw.view(), sigma)?);
    // Summed sequentially in row-major order (see `add_component`).
    let level = cells.iter().sum::<f64>() / cells.len() as f64;
    let mean = panel("mean", Array2::from_elem(truth.raw_dim(), level));
    let zero_rmse = rmse(Array2::zeros(truth.raw_dim()).view(), truth);
    Ok(HeatmapRelease {
        side,
        sigma,
        zero_rmse,
        raw: panel("raw", raw),
        mean,
        james_stein,
        threshold,
        wavelet,
    })
}
