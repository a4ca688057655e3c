//! The d-dimensional noise with density `∝ exp(−‖x‖_p^a)` (`p, a ≥ 1`) of Dong, Su &
//! Zhang (2021), "A central limit theorem for differentially private query answering",
//! Figure 1 and the class 𝓕 of their CLT (docs/maths.md §2).
//!
//! * [`LpNoise`]: the distribution (optionally scaled, `X_s = sX`), its potential
//!   `φ(x) = ‖x/s‖_p^a` and gradient, an exact sampler, and closed forms for the Fisher
//!   information scalar, the coordinate second moment and the Cramér–Rao ratio.
//! * [`estimate_fisher`]: Monte Carlo estimate of `I_X = E[∇φ(X)∇φ(X)ᵀ] = c·I`.
//! * [`llr_samples`] / [`empirical_tradeoff`]: the Monte Carlo trade-off curve of `X`
//!   against `X + v` through the log-likelihood ratio `λ(y) = φ(y) − φ(y − v)`, with a
//!   pointwise confidence band.
//!
//! **Determinism.** Monte Carlo work is split into chunks of [`CHUNK`] samples; chunk `k`
//! draws from its own `Pcg64` stream derived from `(seed, k)`, chunks run in parallel
//! (rayon) and partial results are combined in chunk order. The same seed therefore gives
//! bit-identical results on any number of threads.
//!
//! **Closed forms** (used by [`LpNoise::fisher_scalar`] and
//! [`LpNoise::coord_second_moment`]). Write the unscaled `X = R U` with `U = Y/‖Y‖_p`,
//! `R^a ~ Gamma(d/a)`, `|Y_i|^p ~ Gamma(1/p)` (docs/maths.md §2). `U` is independent of
//! `‖Y‖_p` (`Y` has density `∝ e^{−‖y‖_p^p}`, a function of `‖y‖_p` only) and of `R`, and
//! `E‖Y‖_p^m = Γ((d+m)/p)/Γ(d/p)`, `E|Y_1|^m = Γ((1+m)/p)/Γ(1/p)`, `E R^m = Γ((d+m)/a)/Γ(d/a)`.
//! Hence, with `‖X‖_p = R` and `|X_i| = R|U_i|`:
//!
//! * `E X_1² = E R² · E Y_1²/E‖Y‖_p² = Γ((d+2)/a)/Γ(d/a) · Γ(3/p)/Γ(1/p) · Γ(d/p)/Γ((d+2)/p)`;
//! * `c = E‖∇φ‖²/d = a² E R^{2a−2} · E|Y_1|^{2p−2}/E‖Y‖_p^{2p−2}`
//!   `= a² Γ((d+2a−2)/a)/Γ(d/a) · Γ((2p−1)/p)/Γ(1/p) · Γ(d/p)/Γ((d+2p−2)/p)`.
//!
//! (p = a = 2: `N(0, I/2)`, `c = 2`; p = a = 1: i.i.d. Laplace, `c = 1`, `E X_1² = 2`.)
//! Scaling by s multiplies `E X_1²` by `s²` and divides `c` by `s²`.

use ndarray::{Array2, Axis};
use rand::Rng;
use rand_distr::{Distribution, Exp1, Gamma as GammaDist, StandardNormal};
use rand_pcg::Pcg64;
use rayon::prelude::*;

use crate::error::{check_open, DensityError};
use crate::tradeoff::check_closed;

/// Samples per Monte Carlo chunk; each chunk has its own random stream, so results do
/// not depend on the number of threads.
pub const CHUNK: usize = 8192;

/// Relative tolerance within which two log-likelihood-ratio values count as a tie in
/// [`LlrSamples::tradeoff`] (atoms of λ computed along different paths differ by rounding).
pub const TIE_TOL: f64 = 1e-9;

/// `|t|^p`, specialised at construction so that the inner loops avoid `powf` for the
/// common exponents.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Power {
    One,
    Two,
    Four,
    Int(i32),
    Real(f64),
}

impl Power {
    fn new(p: f64) -> Self {
        if p == 1.0 {
            Power::One
        } else if p == 2.0 {
            Power::Two
        } else if p == 4.0 {
            Power::Four
        } else if p.fract() == 0.0 && p <= 64.0 {
            Power::Int(p as i32)
        } else {
            Power::Real(p)
        }
    }
}

/// `Σ_i |x_i + sign·w_i|^p` with the power chosen by the closure (monomorphised per
/// exponent; four accumulators so the adds pipeline).
#[inline(always)]
// `sign` is −1, 0 or 1, so `sign·w` is exact and `x + sign·w` rounds once, as a fused
// multiply-add would (which, without a target FMA feature, is a slow library call).
fn shifted_sum<F: Fn(f64) -> f64>(x: &[f64], w: &[f64], sign: f64, f: F) -> f64 {
    let mut acc = [0.0f64; 4];
    let mut xs = x.chunks_exact(4);
    let mut ws = w.chunks_exact(4);
    for (xc, wc) in (&mut xs).zip(&mut ws) {
        for j in 0..4 {
            acc[j] += f(xc[j] + sign * wc[j]);
        }
    }
    let mut tail = 0.0;
    for (a, b) in xs.remainder().iter().zip(ws.remainder()) {
        tail += f(*a + sign * *b);
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `t^e` for `t ≥ 0`, with the exponents 1 and ½ done without `powf`.
#[inline(always)]
fn pow_pos(t: f64, e: f64) -> f64 {
    if e == 1.0 {
        t
    } else if e == 0.5 {
        t.sqrt()
    } else if e == 2.0 {
        t * t
    } else {
        t.powf(e)
    }
}

/// Splitmix64 step (Steele, Lea & Flood 2014), used to derive chunk seeds.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random stream of Monte Carlo chunk `chunk` under `seed`: a `Pcg64` whose state and
/// stream (increment) are both derived from `(seed, chunk)` by splitmix64.
///
/// ```
/// use rand::RngCore;
/// let mut a = densities::lp_noise::chunk_rng(7, 3);
/// let mut b = densities::lp_noise::chunk_rng(7, 3);
/// assert_eq!(a.next_u64(), b.next_u64());
/// ```
pub fn chunk_rng(seed: u64, chunk: u64) -> Pcg64 {
    let h1 = splitmix64(seed ^ splitmix64(chunk));
    let h2 = splitmix64(h1 ^ 0xD1B5_4A32_D192_ED03);
    let h3 = splitmix64(h2);
    let state = ((h1 as u128) << 64) | h2 as u128;
    let stream = ((h3 as u128) << 64) | chunk as u128;
    Pcg64::new(state, stream)
}

/// Noise in `ℝ^d` with density `∝ exp(−‖x/s‖_p^a)`, `p, a ≥ 1`, scale `s > 0` (Dong, Su &
/// Zhang 2021, class 𝓕 with `U = I`; docs/maths.md §2). `s = 1` is the paper's
/// `∝ exp(−‖x‖_p^a)`; [`LpNoise::normalised`] picks `s` so that the Fisher information is
/// the identity.
///
/// ```
/// use densities::lp_noise::LpNoise;
/// let g = LpNoise::new(30, 2.0, 2.0).unwrap(); // N(0, I/2)
/// assert!((g.fisher_scalar() - 2.0).abs() < 1e-12);
/// assert!((g.coord_second_moment() - 0.5).abs() < 1e-12);
/// let n = LpNoise::normalised(30, 2.0, 2.0).unwrap(); // N(0, I)
/// assert!((n.fisher_scalar() - 1.0).abs() < 1e-12);
/// assert!(LpNoise::new(0, 2.0, 2.0).is_err() && LpNoise::new(3, 0.5, 2.0).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LpNoise {
    d: usize,
    p: f64,
    a: f64,
    scale: f64,
    power: Power,
}

impl LpNoise {
    /// The density `∝ exp(−‖x‖_p^a)` on `ℝ^d` (docs/maths.md §2).
    ///
    /// Errors: `d = 0`, `p` or `a` not in `[1, ∞)`.
    pub fn new(d: usize, p: f64, a: f64) -> Result<Self, DensityError> {
        if d == 0 {
            return Err(DensityError::OutOfRange {
                name: "d",
                value: 0.0,
                allowed: "{1, 2, ...}",
            });
        }
        check_closed("p", p, 1.0, f64::MAX, "[1, inf)")?;
        check_closed("a", a, 1.0, f64::MAX, "[1, inf)")?;
        Ok(Self {
            d,
            p,
            a,
            scale: 1.0,
            power: Power::new(p),
        })
    }

    /// The same family scaled so that its Fisher information is the identity,
    /// `s = √c` with `c` the exact unscaled [`fisher_scalar`](Self::fisher_scalar)
    /// (docs/maths.md §2: the CLT compares noises normalised to `I_X = I`; `sX` has Fisher
    /// information `c/s²·I`).
    ///
    /// Errors: as [`LpNoise::new`].
    pub fn normalised(d: usize, p: f64, a: f64) -> Result<Self, DensityError> {
        let n = Self::new(d, p, a)?;
        n.with_scale(n.fisher_scalar().sqrt())
    }

    /// The law of `sX` (density `∝ exp(−‖x/s‖_p^a)`), e.g. with `s = √ĉ` from a Monte
    /// Carlo [`estimate_fisher`] (docs/maths.md §2).
    ///
    /// Errors: `s` not in `(0, ∞)`.
    ///
    /// ```
    /// let n = densities::lp_noise::LpNoise::new(4, 1.0, 1.0).unwrap().with_scale(2.0).unwrap();
    /// assert_eq!(n.scale(), 2.0);
    /// assert!((n.fisher_scalar() - 0.25).abs() < 1e-15);
    /// ```
    pub fn with_scale(self, s: f64) -> Result<Self, DensityError> {
        check_open("scale", s, 0.0, f64::INFINITY, "(0, inf)")?;
        Ok(Self { scale: s, ..self })
    }

    /// Dimension `d`.
    pub fn dim(&self) -> usize {
        self.d
    }
    /// Norm exponent `p`.
    pub fn p(&self) -> f64 {
        self.p
    }
    /// Power `a` of the norm in the potential.
    pub fn a(&self) -> f64 {
        self.a
    }
    /// Scale `s`.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    fn check_len(&self, name: &'static str, len: usize) -> Result<(), DensityError> {
        if len == self.d {
            Ok(())
        } else {
            Err(DensityError::OutOfRange {
                name,
                value: len as f64,
                allowed: "length equal to the dimension d",
            })
        }
    }

    /// `Σ|x_i + sign·w_i|^p` (unscaled coordinates).
    #[inline]
    fn pow_sum(&self, x: &[f64], w: &[f64], sign: f64) -> f64 {
        match self.power {
            Power::One => shifted_sum(x, w, sign, f64::abs),
            Power::Two => shifted_sum(x, w, sign, |t| t * t),
            Power::Four => shifted_sum(x, w, sign, |t| {
                let s = t * t;
                s * s
            }),
            Power::Int(k) => shifted_sum(x, w, sign, |t| t.abs().powi(k)),
            Power::Real(p) => shifted_sum(x, w, sign, |t| t.abs().powf(p)),
        }
    }

    /// `φ₀(x + sign·w) = ‖x + sign·w‖_p^a` (unscaled potential).
    #[inline]
    fn phi0_shifted(&self, x: &[f64], w: &[f64], sign: f64) -> f64 {
        pow_pos(self.pow_sum(x, w, sign), self.a / self.p)
    }

    /// The potential `φ(x) = ‖x/s‖_p^a` (the density is `e^{−φ}/Z`; the constant `ln Z`
    /// is dropped, it cancels in likelihood ratios; docs/maths.md §2).
    ///
    /// Errors: `x.len() ≠ d`.
    ///
    /// ```
    /// let n = densities::lp_noise::LpNoise::new(2, 1.0, 2.0).unwrap();
    /// assert_eq!(n.phi(&[1.0, -2.0]).unwrap(), 9.0);
    /// ```
    pub fn phi(&self, x: &[f64]) -> Result<f64, DensityError> {
        self.check_len("x.len()", x.len())?;
        let sum = self.pow_sum(x, x, 0.0) / self.scale.powf(self.p);
        Ok(pow_pos(sum, self.a / self.p))
    }

    /// The gradient `∂ᵢφ(x) = (a/s) ‖y‖_p^{a−p} |yᵢ|^{p−1} sign(yᵢ)` with `y = x/s`
    /// (docs/maths.md §2), written into `out`. Where φ is not differentiable (`x = 0` when
    /// `a < p`, or `xᵢ = 0` when `p = 1`) the minimal-norm subgradient is returned (0 in
    /// those components).
    ///
    /// Errors: `x.len() ≠ d` or `out.len() ≠ d`.
    ///
    /// ```
    /// let n = densities::lp_noise::LpNoise::new(2, 2.0, 2.0).unwrap();
    /// let mut g = [0.0; 2];
    /// n.grad_phi(&[1.0, -3.0], &mut g).unwrap();
    /// assert_eq!(g, [2.0, -6.0]); // ∇‖x‖² = 2x
    /// ```
    pub fn grad_phi(&self, x: &[f64], out: &mut [f64]) -> Result<(), DensityError> {
        self.check_len("x.len()", x.len())?;
        self.check_len("out.len()", out.len())?;
        let s = self.scale;
        let sum = self.pow_sum(x, x, 0.0) / s.powf(self.p);
        if sum == 0.0 {
            out.fill(0.0);
            return Ok(());
        }
        let norm = sum.powf(1.0 / self.p);
        let front = self.a / s * norm.powf(self.a - self.p);
        for (o, &xi) in out.iter_mut().zip(x) {
            let y = xi / s;
            *o = if y == 0.0 {
                0.0
            } else {
                front * y.abs().powf(self.p - 1.0) * y.signum()
            };
        }
        Ok(())
    }

    /// `ln` of the ratio `Γ(x)/Γ(y)`.
    fn ln_gamma_ratio(x: f64, y: f64) -> f64 {
        special::Gamma::ln_gamma(x).0 - special::Gamma::ln_gamma(y).0
    }

    /// Exact Fisher information scalar `c` with `I_X = E[∇φ∇φᵀ] = c·I` (docs/maths.md §2;
    /// derivation in the module docs):
    /// `c = a²/s² · Γ((d+2a−2)/a)/Γ(d/a) · Γ((2p−1)/p)/Γ(1/p) · Γ(d/p)/Γ((d+2p−2)/p)`.
    /// (`I_X` is a multiple of `I` because the law is invariant under coordinate
    /// permutations and sign flips.)
    ///
    /// ```
    /// let n = densities::lp_noise::LpNoise::new(30, 2.0, 1.0).unwrap();
    /// assert!((n.fisher_scalar() - 1.0 / 30.0).abs() < 1e-14); // ‖∇‖x‖₂‖ = 1
    /// ```
    pub fn fisher_scalar(&self) -> f64 {
        let (d, p, a) = (self.d as f64, self.p, self.a);
        let ln = Self::ln_gamma_ratio((d + 2.0 * a - 2.0) / a, d / a)
            + Self::ln_gamma_ratio((2.0 * p - 1.0) / p, 1.0 / p)
            + Self::ln_gamma_ratio(d / p, (d + 2.0 * p - 2.0) / p);
        (a / self.scale).powi(2) * ln.exp()
    }

    /// Exact `E X_1²` (= `E‖X‖₂²/d`) (module docs; docs/maths.md §2):
    /// `s² Γ((d+2)/a)/Γ(d/a) · Γ(3/p)/Γ(1/p) · Γ(d/p)/Γ((d+2)/p)`.
    ///
    /// ```
    /// let n = densities::lp_noise::LpNoise::new(10, 1.0, 1.0).unwrap();
    /// assert!((n.coord_second_moment() - 2.0).abs() < 1e-13); // Laplace(1) coordinates
    /// ```
    pub fn coord_second_moment(&self) -> f64 {
        let (d, p, a) = (self.d as f64, self.p, self.a);
        let ln = Self::ln_gamma_ratio((d + 2.0) / a, d / a)
            + Self::ln_gamma_ratio(3.0 / p, 1.0 / p)
            + Self::ln_gamma_ratio(d / p, (d + 2.0) / p);
        self.scale * self.scale * ln.exp()
    }

    /// Exact Cramér–Rao ratio `E‖X‖₂² · ‖I_X‖ / d = E X_1² · c` (Dong, Su & Zhang, slides:
    /// "By Cramér–Rao, `E‖X‖² ‖I_X‖ ≥ d`"; docs/maths.md §2). It is ≥ 1, equal to 1 for the
    /// Gaussian (p = a = 2), and does not depend on the scale.
    ///
    /// ```
    /// use densities::lp_noise::LpNoise;
    /// assert!((LpNoise::new(30, 2.0, 2.0).unwrap().cramer_rao_ratio() - 1.0).abs() < 1e-12);
    /// assert!((LpNoise::new(30, 1.0, 1.0).unwrap().cramer_rao_ratio() - 2.0).abs() < 1e-12);
    /// ```
    pub fn cramer_rao_ratio(&self) -> f64 {
        let unscaled = Self {
            scale: 1.0,
            ..*self
        };
        unscaled.coord_second_moment() * unscaled.fisher_scalar()
    }

    /// `E φ(X) = E‖X/s‖_p^a = d/a` (`φ(X) = R^a ~ Gamma(d/a, 1)`; docs/maths.md §2).
    ///
    /// ```
    /// assert_eq!(densities::lp_noise::LpNoise::new(30, 4.0, 4.0).unwrap().mean_phi(), 7.5);
    /// ```
    pub fn mean_phi(&self) -> f64 {
        self.d as f64 / self.a
    }

    fn sampler(&self) -> Sampler {
        Sampler::new(self)
    }

    /// Draws one sample into `out` (docs/maths.md §2: `|Yᵢ|^p ~ Gamma(1/p, 1)` with a random
    /// sign, `U = Y/‖Y‖_p`, `R^a ~ Gamma(d/a, 1)`, `X = sRU`), from any generator (e.g. a
    /// seeded `rand_pcg::Pcg64`). Returns `φ(X) = R^a`.
    ///
    /// The coordinates are drawn as `|Yᵢ| ~ Exp(1)` with a random sign for p = 1,
    /// `Yᵢ ~ N(0, ½)` for p = 2, and otherwise `Yᵢ = G^{1/p}V` with `G ~ Gamma(1 + 1/p)`,
    /// `V` uniform on (−1, 1) — each the same law as `|Yᵢ|^p ~ Gamma(1/p)` with a random
    /// sign (since `Gamma(1/p) = Gamma(1 + 1/p)·U^p`), only cheaper.
    ///
    /// Errors: `out.len() ≠ d`.
    ///
    /// ```
    /// use rand::SeedableRng;
    /// let n = densities::lp_noise::LpNoise::new(3, 1.5, 2.0).unwrap();
    /// let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
    /// let mut x = [0.0; 3];
    /// let phi = n.sample(&mut rng, &mut x).unwrap();
    /// assert!((n.phi(&x).unwrap() - phi).abs() < 1e-12 * phi.max(1.0));
    /// ```
    pub fn sample<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<f64, DensityError> {
        self.check_len("out.len()", out.len())?;
        let g = self.sampler().draw(rng, out);
        if self.scale != 1.0 {
            out.iter_mut().for_each(|v| *v *= self.scale);
        }
        Ok(g)
    }

    /// `n` samples as the rows of an `n × d` array, drawn in parallel blocks of
    /// [`CHUNK`] rows, block `k` from its own stream [`chunk_rng`]`(seed, k)`: identical
    /// for a given seed on any number of threads (docs/maths.md §2 sampler).
    ///
    /// ```
    /// let n = densities::lp_noise::LpNoise::new(2, 2.0, 2.0).unwrap();
    /// assert_eq!(n.sample_n(10, 5).dim(), (10, 2));
    /// assert_eq!(n.sample_n(10, 5), n.sample_n(10, 5));
    /// ```
    pub fn sample_n(&self, n: usize, seed: u64) -> Array2<f64> {
        let mut out = Array2::zeros((n, self.d));
        out.axis_chunks_iter_mut(Axis(0), CHUNK)
            .into_par_iter()
            .enumerate()
            .for_each(|(k, mut block)| {
                let mut rng = chunk_rng(seed, k as u64);
                let sampler = self.sampler();
                for mut x in block.rows_mut() {
                    let x = x
                        .as_slice_mut()
                        .expect("rows of a new array are contiguous");
                    sampler.draw(&mut rng, x);
                    if self.scale != 1.0 {
                        x.iter_mut().for_each(|v| *v *= self.scale);
                    }
                }
            });
        out
    }
}

/// Per-thread sampler state for the unscaled law (docs/maths.md §2).
struct Sampler {
    d: usize,
    p: f64,
    a: f64,
    power: Power,
    /// `Gamma(1 + 1/p, 1)` for the coordinates (unused for p = 1, 2).
    coord: GammaDist<f64>,
    /// `Gamma(d/a, 1)` for `R^a`.
    radius: GammaDist<f64>,
}

impl Sampler {
    fn new(n: &LpNoise) -> Self {
        // Shapes are finite and positive for validated parameters.
        let coord = GammaDist::new(1.0 + 1.0 / n.p, 1.0).expect("shape 1 + 1/p in (1, 2]");
        let radius = GammaDist::new(n.d as f64 / n.a, 1.0).expect("shape d/a > 0");
        Self {
            d: n.d,
            p: n.p,
            a: n.a,
            power: n.power,
            coord,
            radius,
        }
    }

    /// Unscaled draw into `out`; returns `R^a = φ₀(X)`.
    #[inline]
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> f64 {
        debug_assert_eq!(out.len(), self.d);
        // Σ|Y_i|^p, accumulated from the Gamma draws themselves.
        let sum_p = match self.power {
            Power::Two => {
                // |Y|² ~ Gamma(1/2): Y ~ N(0, 1/2), sign included.
                let mut s = 0.0;
                for o in out.iter_mut() {
                    let z: f64 = rng.sample(StandardNormal);
                    let y = z * std::f64::consts::FRAC_1_SQRT_2;
                    *o = y;
                    s += y * y;
                }
                s
            }
            Power::One => {
                // |Y| ~ Exp(1) = Gamma(1, 1), random sign from one bit each.
                let mut s = 0.0;
                let mut bits = 0u64;
                for (i, o) in out.iter_mut().enumerate() {
                    if i % 64 == 0 {
                        bits = rng.next_u64();
                    }
                    let g: f64 = rng.sample(Exp1);
                    s += g;
                    *o = if bits & 1 == 1 { -g } else { g };
                    bits >>= 1;
                }
                s
            }
            power => {
                // Gamma(1/p) = Gamma(1 + 1/p)·U^p (U uniform on (0, 1)), so
                // Y = G₊^{1/p}·V with V uniform on (−1, 1) has |Y|^p ~ Gamma(1/p) and a
                // random sign, and |Y|^p = G₊|V|^p. One Gamma draw of shape ≥ 1
                // (Marsaglia–Tsang) and one uniform per coordinate.
                let mut s = 0.0;
                let inv_p = 1.0 / self.p;
                for o in out.iter_mut() {
                    let g: f64 = self.coord.sample(rng);
                    let v: f64 = rng.gen_range(-1.0..1.0);
                    let (root, vp) = match power {
                        Power::Four => {
                            let v2 = v * v;
                            (g.sqrt().sqrt(), v2 * v2)
                        }
                        Power::Int(k) => (g.powf(inv_p), v.abs().powi(k)),
                        _ => (g.powf(inv_p), v.abs().powf(self.p)),
                    };
                    s += g * vp;
                    *o = root * v;
                }
                s
            }
        };
        let ga: f64 = self.radius.sample(rng);
        let r = pow_pos(ga, 1.0 / self.a);
        let norm = pow_pos(sum_p, 1.0 / self.p);
        let k = r / norm;
        out.iter_mut().for_each(|v| *v *= k);
        ga
    }
}

/// Monte Carlo settings: number of samples and seed (docs/maths.md §2; fig11 uses 10⁶
/// samples and a fixed seed).
///
/// ```
/// let mc = densities::lp_noise::MonteCarlo::new(1_000, 42).unwrap();
/// assert_eq!(mc.samples(), 1_000);
/// assert!(densities::lp_noise::MonteCarlo::new(1, 42).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonteCarlo {
    samples: usize,
    seed: u64,
}

impl MonteCarlo {
    /// Validates `samples ≥ 2`.
    pub fn new(samples: usize, seed: u64) -> Result<Self, DensityError> {
        if samples < 2 {
            return Err(DensityError::OutOfRange {
                name: "samples",
                value: samples as f64,
                allowed: "{2, 3, ...}",
            });
        }
        Ok(Self { samples, seed })
    }
    /// Number of samples.
    pub fn samples(&self) -> usize {
        self.samples
    }
    /// Seed of the chunk streams ([`chunk_rng`]).
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

/// Monte Carlo estimate of the Fisher information `I_X = E[∇φ(X)∇φ(X)ᵀ] = c·I` and of the
/// Cramér–Rao ratio (docs/maths.md §2), each with its standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FisherEstimate {
    /// `ĉ`, the mean of `‖∇φ(X)‖²/d`.
    pub scalar: f64,
    /// Standard error of `ĉ`.
    pub scalar_se: f64,
    /// The mean of `‖X‖₂²/d` (estimates `E X_1²`).
    pub second_moment: f64,
    /// Standard error of `second_moment`.
    pub second_moment_se: f64,
    /// `second_moment · scalar`, estimating `E‖X‖₂²·‖I_X‖/d` (≥ 1, = 1 for the Gaussian).
    pub cramer_rao_ratio: f64,
    /// Delta-method standard error of the ratio (with the covariance of the two means).
    pub cramer_rao_se: f64,
    /// Number of samples.
    pub samples: usize,
}

impl FisherEstimate {
    /// The scale `s = √ĉ` that normalises the noise to Fisher information `I`
    /// (`sX` has Fisher information `c/s²·I`; docs/maths.md §2).
    ///
    /// ```
    /// use densities::lp_noise::{estimate_fisher, LpNoise, MonteCarlo};
    /// let n = LpNoise::new(5, 2.0, 2.0).unwrap();
    /// let f = estimate_fisher(&n, MonteCarlo::new(20_000, 1).unwrap());
    /// assert!((f.normalising_scale() - 2f64.sqrt()).abs() < 0.02);
    /// ```
    pub fn normalising_scale(&self) -> f64 {
        self.scalar.sqrt()
    }
}

/// Monte Carlo estimate of `I_X = E[∇φ∇φᵀ]` as the scalar `ĉ = mean ‖∇φ(X)‖²/d` (the
/// matrix is `c·I` by symmetry), of `E‖X‖₂²/d`, and of the Cramér–Rao ratio
/// `E‖X‖₂²·‖I_X‖/d` (Dong, Su & Zhang, CLT slides; docs/maths.md §2). Uses [`LpNoise::sample`]
/// and [`LpNoise::grad_phi`]; deterministic in the seed regardless of thread count.
///
/// ```
/// use densities::lp_noise::{estimate_fisher, LpNoise, MonteCarlo};
/// let n = LpNoise::new(5, 1.0, 1.0).unwrap();
/// let f = estimate_fisher(&n, MonteCarlo::new(10_000, 3).unwrap());
/// assert!((f.scalar - 1.0).abs() < 1e-12); // ‖∇‖x‖₁‖² = d almost surely
/// ```
pub fn estimate_fisher(noise: &LpNoise, mc: MonteCarlo) -> FisherEstimate {
    let n = mc.samples;
    let d = noise.d;
    let chunks = n.div_ceil(CHUNK);
    // Per chunk: Σg, Σg², Σm, Σm², Σgm with g = ‖∇φ‖²/d, m = ‖X‖²/d.
    let partial: Vec<[f64; 5]> = (0..chunks)
        .into_par_iter()
        .map(|k| {
            let len = CHUNK.min(n - k * CHUNK);
            let mut rng = chunk_rng(mc.seed, k as u64);
            // One reused d-vector per draw, as in `llr_samples`.
            let mut x = vec![0.0; d];
            let mut grad = vec![0.0; d];
            let mut s = [0.0f64; 5];
            let sampler = noise.sampler();
            for _ in 0..len {
                // The same draw as `noise.sample`, without rebuilding the Gamma laws.
                sampler.draw(&mut rng, &mut x);
                x.iter_mut().for_each(|v| *v *= noise.scale);
                noise.grad_phi(&x, &mut grad).expect("length d");
                let g = grad.iter().map(|v| v * v).sum::<f64>() / d as f64;
                let m = x.iter().map(|v| v * v).sum::<f64>() / d as f64;
                s[0] += g;
                s[1] += g * g;
                s[2] += m;
                s[3] += m * m;
                s[4] += g * m;
            }
            s
        })
        .collect();
    let mut t = [0.0f64; 5];
    for s in &partial {
        for j in 0..5 {
            t[j] += s[j];
        }
    }
    let nf = n as f64;
    let (mg, mm) = (t[0] / nf, t[2] / nf);
    let unbiased = nf / (nf - 1.0);
    let var_g = ((t[1] / nf - mg * mg) * unbiased).max(0.0);
    let var_m = ((t[3] / nf - mm * mm) * unbiased).max(0.0);
    let cov = (t[4] / nf - mg * mm) * unbiased;
    let var_ratio = (mg * mg * var_m + mm * mm * var_g + 2.0 * mg * mm * cov).max(0.0);
    FisherEstimate {
        scalar: mg,
        scalar_se: (var_g / nf).sqrt(),
        second_moment: mm,
        second_moment_se: (var_m / nf).sqrt(),
        cramer_rao_ratio: mg * mm,
        cramer_rao_se: (var_ratio / nf).sqrt(),
        samples: n,
    }
}

/// A uniformly random unit vector in `ℝ^d` (normalised standard normal), for the CLT's
/// random direction `v ~ S^{d−1}` (docs/maths.md §2).
///
/// Errors: `d = 0`.
///
/// ```
/// use rand::SeedableRng;
/// let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
/// let v = densities::lp_noise::random_direction(30, &mut rng).unwrap();
/// assert!((v.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-14);
/// ```
pub fn random_direction<R: Rng + ?Sized>(d: usize, rng: &mut R) -> Result<Vec<f64>, DensityError> {
    if d == 0 {
        return Err(DensityError::OutOfRange {
            name: "d",
            value: 0.0,
            allowed: "{1, 2, ...}",
        });
    }
    loop {
        let v: Vec<f64> = (0..d).map(|_| rng.sample(StandardNormal)).collect();
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm > 1e-150 {
            return Ok(v.into_iter().map(|x| x / norm).collect());
        }
    }
}

/// Monte Carlo samples of the log-likelihood ratio `λ(y) = φ(y) − φ(y − v)` of `X + v`
/// against `X` (docs/maths.md §2), under the null (`y = x`) and the alternative (`y = x + v`)
/// for the same draws `x`, both sorted ascending. Build with [`llr_samples`].
#[derive(Debug, Clone, PartialEq)]
pub struct LlrSamples {
    null: Vec<f64>,
    alt: Vec<f64>,
}

/// One point of an empirical trade-off curve with its pointwise confidence band
/// (docs/maths.md §2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TradeoffPoint {
    /// Type I error α (attained exactly by the randomised empirical test).
    pub alpha: f64,
    /// Estimated type II error `β̂(α)`.
    pub beta: f64,
    /// Standard error of `β̂` (delta method; see [`LlrSamples::tradeoff`]); `+∞` when the
    /// slope overflows.
    pub se: f64,
    /// `max(0, β̂ − z·se)`.
    pub lo: f64,
    /// `min(1, β̂ + z·se)`.
    pub hi: f64,
}

impl LlrSamples {
    /// `λ(x)` for null draws, sorted ascending.
    pub fn null(&self) -> &[f64] {
        &self.null
    }
    /// `λ(x + v)` for the same draws, sorted ascending.
    pub fn alt(&self) -> &[f64] {
        &self.alt
    }

    /// The empirical Neyman–Pearson trade-off curve (docs/maths.md §2: reject when
    /// `λ > c`, `α(c) = P₀(λ > c)`, `β(c) = P₁(λ ≤ c)`), at each α of `alphas`, with a
    /// pointwise band `β̂ ± z·se`.
    ///
    /// For each α the threshold `ĉ` is the empirical upper-α quantile of the null
    /// sample, and ties at `ĉ` (values within [`TIE_TOL`]·max(1, |ĉ|)) are rejected with the
    /// probability γ that makes the empirical type I error exactly α (the randomised
    /// Neyman–Pearson test, needed where λ has atoms, e.g. p = a = 1 with `v = e₁`). Then
    /// `β̂ = P̂₁(λ < ĉ) + (1 − γ) P̂₁(λ = ĉ)`.
    ///
    /// Standard error (delta method): `β̂` depends on the alternative frequencies directly
    /// and on the null frequencies through `ĉ` and γ. Since `Q(λ ∈ A) = e^c P(λ ∈ A)` on
    /// any set where `λ = c` (λ is the log-likelihood ratio), the ROC has slope `−e^c`
    /// there, and one draw's influence is `ψ = (1 − φ_c(λ₁)) + e^c φ_c(λ₀)` with
    /// `φ_c(λ) = 1{λ > c} + γ 1{λ = c}`. Because `λ₁(x) − λ₀(x) = φ(x+v) − 2φ(x) + φ(x−v) ≥ 0`
    /// (φ convex), `(1 − φ_c(λ₁))φ_c(λ₀)` is non-zero only when `λ₀ = λ₁ = c`, whose
    /// frequency is bounded by `min(P̂₁(λ = c), P̂₀(λ = c))` (conservative; 0 without
    /// atoms). So `Var ψ = a + (1−γ)²b + e^{2c}(u + γ²m) + 2e^cγ(1−γ)·min(b, m) − (β̂ + e^c α)²`
    /// with `a = P̂₁(λ < c)`, `b = P̂₁(λ = c)`, `u = P̂₀(λ > c)`, `m = P̂₀(λ = c)`, and
    /// `se = √(Var ψ / n)`. This accounts for the coupling of the null and alternative
    /// samples through the common draws.
    ///
    /// Errors: an α outside `[0, 1]`, z not in `[0, ∞)`.
    pub fn tradeoff(&self, alphas: &[f64], z: f64) -> Result<Vec<TradeoffPoint>, DensityError> {
        check_closed("z", z, 0.0, f64::MAX, "[0, inf)")?;
        alphas
            .iter()
            .map(|&alpha| {
                check_closed("alpha", alpha, 0.0, 1.0, "[0, 1]")?;
                Ok(self.point(alpha, z))
            })
            .collect()
    }

    fn point(&self, alpha: f64, z: f64) -> TradeoffPoint {
        let n0 = self.null.len();
        let n1 = self.alt.len();
        let r = alpha * n0 as f64;
        let k = (r.ceil() as usize).clamp(1, n0);
        let c = self.null[n0 - k];
        // Values within τ of c count as ties (atoms of λ are smeared by rounding).
        let tau = TIE_TOL * c.abs().max(1.0);
        let (c_lo, c_hi) = (c - tau, c + tau);
        let count = |v: &[f64]| {
            let below = v.partition_point(|&x| x < c_lo);
            let upto = v.partition_point(|&x| x <= c_hi);
            (below as f64, (upto - below) as f64, (v.len() - upto) as f64)
        };
        let (_, m_eq, m_gt) = count(&self.null);
        let (a_lt, b_eq, _) = count(&self.alt);
        let gamma = if m_eq > 0.0 {
            ((r - m_gt) / m_eq).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let (nf0, nf1) = (n0 as f64, n1 as f64);
        let (u, m) = (m_gt / nf0, m_eq / nf0);
        let (a, b) = (a_lt / nf1, b_eq / nf1);
        let beta = (a + (1.0 - gamma) * b).clamp(0.0, 1.0);
        // Influence of one draw: ψ = (1 − φ_c(λ₁)) + e^c φ_c(λ₀), φ_c the randomised test.
        let ec = c.exp();
        let times_ec = |coef: f64| if coef == 0.0 { 0.0 } else { coef * ec };
        let alpha_hat = u + gamma * m;
        let mean = beta + times_ec(alpha_hat);
        let joint = b.min(m); // bound on P(λ₀ = λ₁ = c), exact when one atom maps onto the other
        let second = a
            + (1.0 - gamma) * (1.0 - gamma) * b
            + times_ec(times_ec(u + gamma * gamma * m))
            + 2.0 * times_ec(gamma * (1.0 - gamma) * joint);
        let var = second - mean * mean;
        let se = if var.is_finite() {
            (var.max(0.0) / n1 as f64).sqrt()
        } else {
            f64::INFINITY
        };
        let half = z * se;
        let (lo, hi) = if half.is_finite() {
            ((beta - half).max(0.0), (beta + half).min(1.0))
        } else {
            (0.0, 1.0)
        };
        TradeoffPoint {
            alpha,
            beta,
            se,
            lo,
            hi,
        }
    }
}

/// Draws `mc.samples` points `x` of `noise` and returns the sorted log-likelihood ratios
/// `λ(x)` and `λ(x + v)`, `λ(y) = φ(y) − φ(y − v)` (docs/maths.md §2; Dong, Su & Zhang 2021,
/// Figure 1). Computed in unscaled coordinates with `w = v/s`, using `φ₀(x) = R^a` from
/// the sampler: `λ₀ = φ₀(x) − φ₀(x − w)`, `λ₁ = φ₀(x + w) − φ₀(x)`. Parallel over
/// [`CHUNK`]-sized chunks with per-chunk streams; the result depends only on the seed.
///
/// Errors: `v.len() ≠ d`, a non-finite entry of `v`.
///
/// ```
/// use densities::lp_noise::{llr_samples, LpNoise, MonteCarlo};
/// let n = LpNoise::normalised(3, 2.0, 2.0).unwrap();
/// let l = llr_samples(&n, &[1.0, 0.0, 0.0], MonteCarlo::new(1000, 1).unwrap()).unwrap();
/// // Gaussian: λ₀ ~ N(−1/2, 1), λ₁ ~ N(1/2, 1).
/// assert_eq!(l.null().len(), 1000);
/// ```
pub fn llr_samples(noise: &LpNoise, v: &[f64], mc: MonteCarlo) -> Result<LlrSamples, DensityError> {
    let mut out = llr_samples_many(noise, &[v], mc)?;
    Ok(out.pop().expect("one direction in, one out"))
}

/// [`llr_samples`] for several shifts `v` on the same draws (common random numbers): entry
/// `j` is exactly what `llr_samples(noise, vs[j], mc)` returns, while the noise, the costly
/// part, is drawn once for all of them.
///
/// Errors: as [`llr_samples`], for any `v`.
///
/// ```
/// use densities::lp_noise::{llr_samples, llr_samples_many, LpNoise, MonteCarlo};
/// let n = LpNoise::normalised(2, 1.0, 1.0).unwrap();
/// let mc = MonteCarlo::new(500, 7).unwrap();
/// let both = llr_samples_many(&n, &[&[1.0, 0.0], &[0.6, 0.8]], mc).unwrap();
/// assert_eq!(both[1], llr_samples(&n, &[0.6, 0.8], mc).unwrap());
/// ```
pub fn llr_samples_many(
    noise: &LpNoise,
    vs: &[&[f64]],
    mc: MonteCarlo,
) -> Result<Vec<LlrSamples>, DensityError> {
    for v in vs {
        noise.check_len("v.len()", v.len())?;
        for &vi in v.iter() {
            check_open("v", vi, f64::NEG_INFINITY, f64::INFINITY, "finite entries")?;
        }
    }
    let d = noise.d;
    let m = vs.len();
    let ws: Vec<Vec<f64>> = vs
        .iter()
        .map(|v| v.iter().map(|vi| vi / noise.scale).collect())
        .collect();
    let n = mc.samples;
    // Draw-major layout: entry i·m + j is draw i under shift j.
    let mut null = vec![0.0; n * m];
    let mut alt = vec![0.0; n * m];
    null.par_chunks_mut(CHUNK * m)
        .zip(alt.par_chunks_mut(CHUNK * m))
        .enumerate()
        .for_each(|(k, (nc, ac))| {
            let mut rng = chunk_rng(mc.seed, k as u64);
            let sampler = noise.sampler();
            // Each draw is used once, so it goes into one reused d-vector rather than a
            // CHUNK × d block as in `sample_n` (the same draws, less memory traffic).
            let mut x = vec![0.0; d];
            for (l0, l1) in nc.chunks_mut(m).zip(ac.chunks_mut(m)) {
                let phi_x = sampler.draw(&mut rng, &mut x);
                for (j, w) in ws.iter().enumerate() {
                    l0[j] = phi_x - noise.phi0_shifted(&x, w, -1.0);
                    l1[j] = noise.phi0_shifted(&x, w, 1.0) - phi_x;
                }
            }
        });
    let split = |all: &[f64], j: usize| -> Vec<f64> {
        let mut v: Vec<f64> = all.iter().skip(j).step_by(m).copied().collect();
        v.par_sort_unstable_by(f64::total_cmp);
        v
    };
    Ok((0..m)
        .map(|j| LlrSamples {
            null: split(&null, j),
            alt: split(&alt, j),
        })
        .collect())
}

/// The Monte Carlo trade-off curve of `X` against `X + v` on a grid of α with a
/// pointwise `±z·se` band: [`llr_samples`] followed by [`LlrSamples::tradeoff`]
/// (docs/maths.md §2; Dong, Su & Zhang 2021, Figure 1).
///
/// Errors: as [`llr_samples`] and [`LlrSamples::tradeoff`].
///
/// ```
/// use densities::lp_noise::{empirical_tradeoff, LpNoise, MonteCarlo};
/// use densities::tradeoff::gaussian_tradeoff;
/// let n = LpNoise::normalised(4, 2.0, 2.0).unwrap();
/// let mc = MonteCarlo::new(50_000, 2).unwrap();
/// let pts = empirical_tradeoff(&n, &[0.5, 0.5, 0.5, 0.5], &[0.3], mc, 3.0).unwrap();
/// assert!((pts[0].beta - gaussian_tradeoff(1.0, 0.3).unwrap()).abs() < 0.01);
/// ```
pub fn empirical_tradeoff(
    noise: &LpNoise,
    v: &[f64],
    alphas: &[f64],
    mc: MonteCarlo,
    z: f64,
) -> Result<Vec<TradeoffPoint>, DensityError> {
    check_closed("z", z, 0.0, f64::MAX, "[0, inf)")?;
    for &a in alphas {
        check_closed("alpha", a, 0.0, 1.0, "[0, 1]")?;
    }
    llr_samples(noise, v, mc)?.tradeoff(alphas, z)
}
