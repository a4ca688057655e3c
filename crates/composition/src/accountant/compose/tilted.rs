//! Exponentially tilted FFT composition (docs/accountant.md §4, §5).
//!
//! For the finite part `ω_i` of factor `i` (a sub-probability law on the grid) and
//! `λ ≥ 0`, the tilted law is `ω_{i,λ}(x) = ω_i(x) e^{λx} / M_i(λ)`. Tilting commutes with
//! convolution, so the composed finite part `ω = ⊛ ω_i^{⊛c_i}` satisfies
//! `ω(x) = e^{Σ c_i ln M_i(λ) − λx} ω_λ(x)`, and for every ε
//!
//! `δ_fin(ε) = Σ_{x>ε} ω(x)(1 − e^{ε−x}) = e^{Σ c_i ln M_i(λ) − λε} · T(ε)`,
//! `T(ε) = Σ_{x>ε} ω_λ(x) e^{−λ(x−ε)} (1 − e^{ε−x})`.
//!
//! With λ at the saddle point (tilted mean = ε) the tilted law has its bulk at ε, `T` is of
//! order one and the FFT's round-off, which is absolute, is small *relative to δ* however
//! small δ is. Every weight `e^{−λ(x−ε)}(1 − e^{ε−x})` of `T` lies in `[0, 1)`.
//!
//! Error terms carried to the bracket, each one-sided:
//! - aliasing: the window `[l, h)` is chosen by Chernoff bounds of the tilted law, and the
//!   mass beyond it (which wraps around in the circular convolution) is bounded by them;
//! - round-off: every transform value carries the componentwise FFT bound
//!   `η(n)·‖a‖₁` (Higham 2002, Thm 24.2; `crate::accountant::core::fft::eta`), propagated through the
//!   power `A^c` exactly (`|A^c − Â^c| ≤ c·e·(|Â| + e)^{c−1}`), plus the rounding of the
//!   power itself, and the inverse transform's bound; the sum over frequencies gives a
//!   per-bin bound `E`, evaluated a posteriori from the computed transforms;
//! - masses: the tilted factors are normalised in floating point (relative error ≤ 4u
//!   each), charged as `Σ c_i · 4u` to `ln δ`.

use super::cumulants::{cgf, sum_cgf, total_cgf, Cumulants};
use crate::accountant::core::fft::U;
use crate::accountant::core::numeric::{ln_round, log_add};
use crate::accountant::core::pages::filled;
use crate::accountant::grid::lattice::Lattice;
use crate::error::{out_of_range, Result};
use rustfft::num_complex::Complex;

/// One factor of a composition: a lattice law used `count` times.
#[derive(Debug, Clone, Copy)]
pub struct Factor<'a> {
    /// The discretised law.
    pub law: &'a Lattice,
    /// How many times it is composed (1 ..= 1e10).
    pub count: u64,
}

/// The composed tilted law on a window, with its error terms.
#[derive(Debug, Clone)]
pub struct TiltedSum {
    pub(crate) step: f64,
    /// Tilt λ ≥ 0.
    pub lambda: f64,
    /// `Σ c_i ln M_i(λ)`.
    pub(crate) ln_norm: f64,
    /// Absolute grid index of `values[0]`.
    pub(crate) w_lo: i64,
    pub(crate) values: Vec<f64>,
    /// Per-bin bound on the absolute error of `values`.
    pub(crate) err_bin: f64,
    /// Chernoff bounds of the tilted mass below and above the window.
    pub(crate) tail_lo: f64,
    pub(crate) tail_hi: f64,
    /// `Σ c_i · 4u`, the normalisation error charged to `ln δ`.
    pub(crate) ln_margin: f64,
    /// Untilted Chernoff bound of the mass above the window (log).
    ln_abs_above: f64,
    /// Tilted mean and standard deviation of the composed loss.
    pub mean: f64,
    /// Tilted standard deviation.
    pub sd: f64,
    /// The frequencies left out below the cut (positions in the transform), and the
    /// charge they added to every bin's error bound (tests only).
    #[cfg(test)]
    pub(crate) left_out: (Vec<usize>, f64),
}

/// Bounds on `δ_fin(ε)` in log space.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LnDelta {
    pub lo: f64,
    pub hi: f64,
}

/// `ln` of the Chernoff bound `P_λ(S ≥ h)` (upper = true) or `P_λ(S ≤ h)`; `base` is
/// `Σ c_i K_i(λ)`.
pub(crate) fn ln_chernoff(factors: &[Factor], lambda: f64, base: f64, h: f64, upper: bool) -> f64 {
    ln_chernoff_in(&Cumulants::new(factors), lambda, base, h, upper)
}

/// [`ln_chernoff`] on tables built beforehand (a window's several bounds share them).
pub(crate) fn ln_chernoff_in(cum: &Cumulants, lambda: f64, base: f64, h: f64, upper: bool) -> f64 {
    let factors = cum.factors;
    // f(t) = K(λ ± t) − K(λ) ∓ t h is convex in t ≥ 0, f(0) = 0, and any t gives a valid
    // bound: safeguarded Newton on f' (increasing), keeping the least f evaluated.
    let sgn = if upper { 1.0 } else { -1.0 };
    // Past the end of the support the tail is empty, exactly: the bound's minimum would
    // lie at t = ∞, and a walk towards it cost a hundred passes over every lattice (a
    // stage's window reaching down to `m·ln(1 − q)` at small sampling rates).
    if beyond_support(factors, h, upper) {
        return f64::NEG_INFINITY;
    }
    let eval = |t: f64| -> (f64, f64, f64) {
        let (k, k1, k2) = cum.total(lambda + sgn * t);
        (k - base - sgn * t * h, sgn * (k1 - h), k2)
    };
    let (_, d0, dd0) = eval(0.0);
    if d0.is_nan() || d0 >= 0.0 {
        return 0.0;
    }
    let mut best = 0.0f64;
    // Bracket the minimum, f'(lo) < 0 ≤ f'(hi), from the first Newton step off t = 0 (the
    // Gaussian guess |h − K'(λ)|/K''(λ)): a start near the minimum saves the evaluations
    // (each a pass over every lattice) a start at a fixed scale would spend.
    let d = factors[0].law.step;
    let guess = -d0 / dd0;
    let floor = 1e-6 / d;
    let (mut lo, mut hi) = (
        0.0f64,
        if guess.is_finite() {
            guess.max(floor)
        } else {
            1.0 / d
        },
    );
    let mut at_hi = eval(hi);
    let mut grown = 0;
    while at_hi.1 < 0.0 && at_hi.0.is_finite() && grown < 100 {
        best = best.min(at_hi.0);
        lo = hi;
        hi *= 2.0;
        at_hi = eval(hi);
        grown += 1;
    }
    if at_hi.0.is_finite() {
        best = best.min(at_hi.0);
    }
    if at_hi.1 < 0.0 || !at_hi.0.is_finite() {
        // The minimum is beyond reach (h at or above the largest loss) or f overflowed:
        // the best point seen stands (a valid bound).
        return best;
    }
    // Safeguarded Newton from the bracket's upper end (already evaluated).
    let (mut t, mut cur) = (hi, at_hi);
    for _ in 0..40 {
        let (_, dt, ddt) = cur;
        if dt < 0.0 {
            lo = t;
        } else {
            hi = t;
        }
        if hi - lo <= 1e-12 * hi || dt == 0.0 {
            break;
        }
        let newton = t - dt / ddt;
        let next = if ddt > 0.0 && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        // Newton has converged when its step is far below the bracket's resolution.
        let converged = (dt / ddt).abs() <= 1e-10 * t;
        t = next;
        cur = eval(t);
        if cur.0.is_finite() {
            best = best.min(cur.0);
        }
        if converged {
            break;
        }
    }
    best
}

/// Whether `h` lies more than half a grid step beyond the support of the composed finite
/// law (below its least sum for a lower tail, above its largest for an upper one). The
/// sums are `Δ·J` with `J` between `Σ c_i j_i` over each lattice's first (or last)
/// entry of positive mass, so the half step absorbs the rounding of `h/Δ`.
fn beyond_support(factors: &[Factor], h: f64, upper: bool) -> bool {
    let d = factors[0].law.step;
    let mut end: i128 = 0;
    for f in factors {
        let lp = &f.law.ln_pmf;
        let idx = if upper {
            lp.iter().rposition(|&v| v > f64::NEG_INFINITY)
        } else {
            lp.iter().position(|&v| v > f64::NEG_INFINITY)
        };
        let Some(i) = idx else {
            return false;
        };
        end += f.count as i128 * (f.law.lo + i as i64) as i128;
    }
    let x = h / d;
    if upper {
        x > end as f64 + 0.5
    } else {
        x < end as f64 - 0.5
    }
}

/// The nearest end `h` of a tail (`upper`: `P_λ(S ≥ h)`, else `P_λ(S ≤ h)`) whose Chernoff
/// bound is at most `e^{ln_target}` (`ln_target < 0`); `base = Σ c_i K_i(λ)`, `mean` and
/// `var` the tilted moments. Every `t > 0` gives one: with `G(t) = K(λ ± t) − base −
/// ln_target`, the bound at `h = ±G(t)/t` is exactly the target. The nearest is at the
/// minimum of `G(t)/t`, the root of `F(t) = t G'(t) − G(t)` (`F(0) = ln_target < 0`,
/// `F' = t K'' ≥ 0`): safeguarded Newton from the Gaussian value `t = √(−2 ln_target/var)`,
/// keeping the nearest `h` seen (any of them is valid; the caller bounds the tail at the
/// window it finally uses). `cum` holds the factors' cumulant tables (a window's bounds
/// share them).
pub(crate) fn chernoff_level(
    cum: &Cumulants,
    lambda: f64,
    base: f64,
    ln_target: f64,
    upper: bool,
    mean: f64,
    var: f64,
) -> f64 {
    let sgn = if upper { 1.0 } else { -1.0 };
    let d = cum.factors[0].law.step;
    // (G/t, F, F') at t.
    let eval = |t: f64| -> (f64, f64, f64) {
        let (k, k1, k2) = cum.total(lambda + sgn * t);
        let g = k - base - ln_target;
        (g / t, t * sgn * k1 - g, t * k2)
    };
    let sd = var.sqrt().max(d);
    let mut t = (-2.0 * ln_target).sqrt() / sd;
    // The fallback: far enough out for any law with this mean and sd is not known, so the
    // first evaluation's own level is the start.
    let mut best = f64::INFINITY;
    let (mut lo, mut hi) = (0.0f64, f64::INFINITY);
    for _ in 0..60 {
        let (q, f, fp) = eval(t);
        if q.is_finite() {
            best = best.min(q);
        }
        if !(f.is_finite() && q.is_finite()) {
            // Overflow far out: the minimum is nearer.
            hi = t;
            t = 0.5 * (lo + t);
            continue;
        }
        if f < 0.0 {
            lo = t;
        } else {
            hi = t;
        }
        if hi - lo <= 1e-6 * hi {
            break;
        }
        let newton = t - f / fp;
        let next = if fp > 0.0 && newton > lo && newton < hi {
            newton
        } else if hi.is_finite() {
            0.5 * (lo + hi)
        } else {
            2.0 * t
        };
        // Newton's step far below the level's resolution: done.
        if (next - t).abs() <= 1e-7 * t {
            break;
        }
        t = next;
        if t > 1e300 {
            break;
        }
    }
    if best.is_finite() {
        sgn * best
    } else {
        // No finite bound reached: a window of a million sd, as wide as the old search went.
        mean + sgn * 1e6 * sd
    }
}

/// `e^{−2πir/n}` for `r < n` as the product of two small tables (`r = 1024a + b`):
/// each factor within an ulp or two of the truth, the product within `5u`.
struct Twiddles {
    n: usize,
    hi: Vec<Complex<f64>>,
    lo: Vec<Complex<f64>>,
}

impl Twiddles {
    fn new(n: usize) -> Self {
        let w = 2.0 * std::f64::consts::PI / n as f64;
        let e = |r: usize| {
            let (s, c) = (w * r as f64).sin_cos();
            Complex::new(c, -s)
        };
        Self {
            n,
            hi: (0..n.div_ceil(1024)).map(|a| e(a * 1024)).collect(),
            lo: (0..1024).map(e).collect(),
        }
    }
    fn get(&self, r: usize) -> Complex<f64> {
        debug_assert!(r < self.n);
        self.hi[r >> 10] * self.lo[r & 1023]
    }
}

/// `λ·jΔ` as an unevaluated sum `hi + lo` with `|lo| ≤ 2u|hi|`, from two exact products
/// (`fma` remainders): the tilt of a far loss is hundreds of nats, and rounding it
/// would cost `u` times that in every tilted mass.
pub(crate) fn tilt_exponent(lambda: f64, j: i64, d: f64) -> (f64, f64) {
    let jf = j as f64;
    let x = jf * d;
    let x_lo = jf.mul_add(d, -x);
    let t = lambda * x;
    let t_lo = lambda.mul_add(x, -t) + lambda * x_lo;
    (t, t_lo)
}

/// Relative error bound of `e^y` (or of a mass whose log is `y`) where `y` came from a
/// chain of sums whose rounded results are `sums` (each rounds by at most `u` times its
/// own magnitude), one of the terms carrying [`tilt_exponent`]'s remainder of a tilt `t`
/// (`2u²|t|`, twice), and `exp` or `ln` rounding by an ulp; a quarter more to spare.
pub(crate) fn sum_rounding(sums: &[f64], t: f64) -> f64 {
    let m: f64 = sums.iter().map(|s| s.abs()).sum();
    1.25 * U * (m + 4.0 + 4.0 * U * t.abs())
}

/// `Σ v_p e^{−2πi kp/n}` with the phase index `kp mod n` exact and Neumaier summation.
fn direct_dft(entries: &[(usize, f64)], k: usize, n: usize, tw: &Twiddles) -> Complex<f64> {
    let (mut sr, mut cr, mut si, mut ci) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let add = |s: &mut f64, c: &mut f64, x: f64| {
        let t = *s + x;
        if s.abs() >= x.abs() {
            *c += (*s - t) + x;
        } else {
            *c += (x - t) + *s;
        }
        *s = t;
    };
    let (k64, n64) = (k as u64, n as u64);
    for &(p, v) in entries {
        let r = ((k64 * p as u64) % n64) as usize;
        let z = tw.get(r);
        add(&mut sr, &mut cr, v * z.re);
        add(&mut si, &mut ci, v * z.im);
    }
    Complex::new(sr + cr, si + ci)
}

/// FFT error per bin, relative to the tilted law's bins near its mean, above which the
/// significant frequencies of a factor are recomputed by direct sums.
const DIRECT_DFT_ABOVE: f64 = 1e-8;

/// Tail target of the window, as a natural logarithm of tilted mass.
pub(crate) const LN_ALIAS: f64 = -50.0;

/// The log of the power `|A|^c` (its bound, the transform's error included) below which
/// a window leaves a frequency out of its inverse transform, charging `2e^{LN_CUT}` to
/// every bin's error instead (docs/accountant.md §5). A law used tens of times whose
/// tilted spread is tens of bins has most of its frequencies' powers between e^{−800}
/// and e^{−200} (DP-SGD at q = 1e-4, σ = 2: 9 775 of 10 368), each of which cost a
/// logarithm, an arctangent, an exponential and a sine and cosine for nothing a bin can
/// hold: at e^{−100} (4e-44), the charge is far below the last bit of the bins near the
/// question and of the error already charged to every bin (about 1e-15).
const LN_CUT: f64 = -100.0;

/// The tail target of a window tilted at the saddle point of a single law's ε search
/// ([`crate::accountant::compose::plan::compose`]'s cheapest plan): there the tilted tail at ε, `T(ε)`, is of order
/// `1/(λ·sd)` (1e-2–1e-4), so tails of `e^{−30}` (charged on their side, as any) move δ by
/// under 1e-9 of itself, and the window is shorter by the jumps a long thin upper tail
/// adds at `e^{−50}` (DP-SGD at q = 1e-4, σ = 0.8: 30 % of the bins).
pub(crate) const LN_ALIAS_SADDLE: f64 = -30.0;

/// The loss range a window tilted at `lambda` spans (without its extension for an
/// untilted tail, [`TiltedSum::with_abs_tail`]'s `ln_abs_hi`): between the Chernoff levels
/// where each tilted tail is `e^{ln_alias}`. A cost estimate, before any transform.
pub(crate) fn window_span(cum: &Cumulants, lambda: f64, ln_alias: f64) -> f64 {
    let (base, mean, var) = cum.total(lambda);
    let l = chernoff_level(cum, lambda, base, ln_alias, false, mean, var);
    let h = chernoff_level(cum, lambda, base, ln_alias, true, mean, var);
    h - l
}

impl TiltedSum {
    /// Composes `factors` tilted by `lambda` on a window that holds all but `e^{−50}` of
    /// the tilted mass on each side; errors when the window needs more than `max_len` bins.
    pub fn new(factors: &[Factor], lambda: f64, max_len: usize) -> Result<Self> {
        Self::with_abs_tail(factors, lambda, max_len, f64::INFINITY, None)
    }

    /// As [`Self::new`] for one side of a bracket (`upper`): the tilted masses' rounding
    /// is charged to the masses, raised or lowered, instead of to the transform's error
    /// bound (which every bin of the window then carries).
    /// `ln_alias`: the tilted mass each of the window's tails may leave out (its bound is
    /// charged either way; [`LN_ALIAS`] but for windows at a saddle, [`LN_ALIAS_SADDLE`]).
    pub(crate) fn for_side(
        factors: &[Factor],
        lambda: f64,
        max_len: usize,
        ln_abs_hi: f64,
        upper: bool,
        ln_alias: f64,
    ) -> Result<Self> {
        Self::with_alias(factors, lambda, max_len, ln_abs_hi, Some(upper), ln_alias)
    }

    /// As [`Self::new`], with the window also extended upwards until the *untilted* mass
    /// above it is at most `e^{ln_abs_hi}` (for a composition that is turned into a
    /// lattice, whose mass above the window goes to `+∞`). `side`: the bracket's side the
    /// sum serves (the tilted masses' rounding then raises or lowers them), or none (it
    /// joins the transform's error bound, valid for both).
    pub fn with_abs_tail(
        factors: &[Factor],
        lambda: f64,
        max_len: usize,
        ln_abs_hi: f64,
        side: Option<bool>,
    ) -> Result<Self> {
        Self::with_alias(factors, lambda, max_len, ln_abs_hi, side, LN_ALIAS)
    }

    /// As [`Self::with_abs_tail`], each tail of the window leaving out at most
    /// `e^{ln_alias}` of the tilted mass (charged to its side, §5).
    fn with_alias(
        factors: &[Factor],
        lambda: f64,
        max_len: usize,
        ln_abs_hi: f64,
        side: Option<bool>,
        ln_alias: f64,
    ) -> Result<Self> {
        Self::window(
            factors, lambda, max_len, ln_abs_hi, side, ln_alias, true, LN_CUT,
        )
    }

    /// [`Self::with_alias`]; `fuse`: one factor's power formed in the pass over its
    /// transform (false: through the sums of the general path, for the test that the
    /// two agree to the bit); `ln_cut`: the log of the power below which a frequency is
    /// left out and charged ([`LN_CUT`]; other values for the test that compares them).
    #[allow(clippy::too_many_arguments)]
    fn window(
        factors: &[Factor],
        lambda: f64,
        max_len: usize,
        ln_abs_hi: f64,
        side: Option<bool>,
        ln_alias: f64,
        fuse: bool,
        ln_cut: f64,
    ) -> Result<Self> {
        let d = factors[0].law.step;
        // Each factor's cumulants at λ once, for the sum and for its own tilt below (the
        // same values `total_cgf` adds, added in the same order).
        let each: Vec<(f64, f64, f64)> = factors.iter().map(|f| cgf(f.law, lambda)).collect();
        let (base, mean, var) = sum_cgf(factors, &each);
        let at_zero = total_cgf(factors, 0.0);
        let base0 = at_zero.0;
        let sd = var.sqrt().max(d);
        // One set of tables for every Chernoff bound of this window.
        let cum = Cumulants::new(factors);
        // Window ends by Chernoff bounds: the nearest ends whose tail bound is e^{−50}.
        let mut l = chernoff_level(&cum, lambda, base, ln_alias, false, mean, var);
        let mut h = chernoff_level(&cum, lambda, base, ln_alias, true, mean, var);
        if ln_abs_hi.is_finite() {
            // The untilted mass below the window is moved up to its lowest bin: keep its
            // tilted weight e^{λl − K}·P(S ≤ l) as small as the tilted tails.
            let mut z = 1.0;
            while ln_chernoff_in(&cum, 0.0, base0, l, false) + lambda * l - base > ln_alias
                && z < 1e6
            {
                l -= z * sd;
                z *= 1.5;
            }
            let (_, m0, v0) = at_zero;
            h = h.max(chernoff_level(&cum, 0.0, base0, ln_abs_hi, true, m0, v0));
        }
        let w_lo = (l / d).floor() as i64 - 1;
        let span = ((h - l) / d).ceil() as usize + 3;
        let n = crate::accountant::core::fft::fast_len(span);
        if n > max_len {
            return Err(out_of_range(
                "FFT window (bins)",
                n as f64,
                "within the bin budget of one FFT window (2^23 by default, 2^22 for a stage of a large count): ask for a coarser accuracy",
            ));
        }
        let tail_lo = ln_chernoff_in(&cum, lambda, base, w_lo as f64 * d, false).exp();
        let top = (w_lo + n as i64) as f64 * d;
        let tail_hi = ln_chernoff_in(&cum, lambda, base, top, true).exp();
        let ln_abs_above = ln_chernoff_in(&cum, 0.0, base0, top, true);

        // The work of this window (docs/accountant.md §6.1), and a cancellation point.
        crate::accountant::core::work::charge(n as u64 * (factors.len() as u64 + 1))?;
        let tf = crate::accountant::core::fft::transforms(n);
        let e_fft = crate::accountant::core::fft::eta(n);
        // A large window's work arrays wait for any other's to be freed (`pages`); the
        // guard outlives them (it is dropped last).
        let _large = crate::accountant::core::pages::large_window(n);
        // Written, not calloc'ed, and on huge pages where offered (`pages`).
        // One factor (a law used `count` times: DP-SGD's stages) has each sum below as its
        // single term: the power is formed in the same pass as the terms, without the
        // four arrays (40 bytes a bin, most of a large window's fresh pages).
        let one = fuse && factors.len() == 1;
        // The window's error terms (summed by the power pass, or by the fused one).
        let mut err_sum = 0.0;
        let mut abs_sum = 0.0;
        // Frequencies whose power is at most e^{ln_cut}, left out of the inverse transform
        // (charged below); a frequency pruned from `alive` earlier is one of them.
        let mut dropped = 0u64;
        #[cfg(test)]
        let mut left_out: Vec<usize> = Vec::new();
        let drop_charge = 2.0 * ln_cut.exp();
        let sums = if one { 0 } else { n };
        let mut acc = filled(sums, Complex::new(0.0, 0.0)); // Σ c (ln|A| + i arg A)
        let mut lmag = filled(sums, 0.0f64); // Σ c ln(|A| + e)
        let mut ratio = filled(sums, 0.0f64); // Σ c e/(|A| + e)
        let mut powerr = filled(sums, 0.0f64); // Σ c 2u(|ln|A|| + |arg A| + 2)
        let mut buf = filled(n, Complex::new(0.0, 0.0));
        // The frequencies not yet negligible (`lmag ≥ −800`), ascending: after a factor
        // used thousands of times, most of the window's n are not; the passes below visit
        // only these, and the selection pass's values are kept beside them rather than in
        // an array of n per factor.
        let mut alive: Vec<usize> = (0..n).collect();
        let mut twiddles: Option<Twiddles> = None;
        let mut shift: i128 = 0;
        let mut ln_margin = 0.0;
        for (f, &(lm, m1, _)) in factors.iter().zip(&each) {
            let c_i = (m1 / d).round() as i64;
            shift += f.count as i128 * c_i as i128;
            for z in buf.iter_mut() {
                *z = Complex::new(0.0, 0.0);
            }
            let mut l1 = 0.0;
            // Each tilted mass's rounding (docs/accountant.md §5): to its side (twice the
            // bound, for the product's own rounding), or Σ v·bound into the transform's
            // error when the sum serves both sides.
            let mut v_err = 0.0;
            let mut entries: Vec<(usize, f64)> = Vec::with_capacity(f.law.ln_pmf.len());
            for (i, &lp) in f.law.ln_pmf.iter().enumerate() {
                if lp == f64::NEG_INFINITY {
                    continue;
                }
                let j = f.law.lo + i as i64;
                let (t, t_lo) = tilt_exponent(lambda, j, d);
                let s = lp + t;
                let r = s - lm;
                let ex = r + t_lo;
                let v = ex.exp();
                let rho = sum_rounding(&[s, r, ex], t);
                let v = match side {
                    Some(true) => v * (1.0 + 2.0 * rho),
                    Some(false) => v * (1.0 - 2.0 * rho),
                    None => {
                        v_err += v * rho;
                        v
                    }
                };
                l1 += v;
                let p = (j - c_i).rem_euclid(n as i64) as usize;
                buf[p].re += v;
                entries.push((p, v));
            }
            tf.forward(&mut buf);
            let c = f.count as f64;
            // The transform's error, and the inputs' (their ℓ1 bounds every frequency).
            let e = e_fft * l1 + v_err;
            // Where the power is significant and the count amplifies the transform's
            // error, recompute the transform by a direct sum with exact phase reduction
            // and compensated summation: error ≤ 10u‖a‖₁ (twiddle 5u, product and sum) instead
            // of the FFT's η(n)‖a‖₁.
            let mut exact = vec![false; 0];
            // `(|A|, c·ln(|A| + e), e^{c·ln(|A| + e)})` per alive frequency (position in
            // `alive`) from the selection pass, reused below where the transform value is
            // kept (empty: not computed; the exponential NaN where not formed). One
            // factor's power pass needs that exponential again, bit for bit the same.
            let mut seen: Vec<(f64, f64, f64)> = Vec::new();
            if f.count >= 2 {
                // Only where it matters: the largest contributions `|A|^c·c·e/(|A| + e)`
                // to the error sum below, until the others add up to at most 1/128 of
                // it (they keep the FFT's error; the bound holds either way). A smooth
                // law's transform falls off fast, so this is a few of the frequencies
                // whose power is above e^-800.
                seen = Vec::with_capacity(alive.len());
                let mut cand: Vec<(usize, f64)> = Vec::new();
                for &k in &alive {
                    let r = buf[k].norm();
                    let lr = c * (r + e).ln();
                    let mut ex = f64::NAN;
                    let before = if one { 0.0 } else { lmag[k] };
                    if before + lr >= ln_cut {
                        let x = (before + lr).exp();
                        if one {
                            ex = x;
                        }
                        cand.push((k, x * c * e / (r + e)));
                    }
                    seen.push((r, lr, ex));
                }
                // The total below is summed in decreasing order. Where the bound on any
                // order's sum (`any_order_bound`) already leaves the test below false, the
                // sort and the choice of frequencies it serves are skipped: the outcome is
                // the same.
                let direct_possible =
                    |total: f64| total / n as f64 * 2.5 * sd / d > DIRECT_DFT_ABOVE;
                let rough: f64 = cand.iter().map(|x| x.1).sum();
                let mut total = 0.0;
                let mut sig: Vec<usize> = Vec::new();
                if direct_possible(any_order_bound(rough, cand.len())) {
                    // Ties (a real law's transform has |A(k)| = |A(n − k)|) go to the
                    // lower frequency: the choice then depends on no other candidate, so
                    // leaving out the negligible ones (below `ln_cut`) changes nothing.
                    cand.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                    total = cand.iter().map(|x| x.1).sum();
                    let mut rest = total;
                    for &(k, w) in &cand {
                        if rest <= total / 128.0 {
                            break;
                        }
                        sig.push(k);
                        rest -= w;
                    }
                }
                // Where the FFT's own error per bin is at most 1e-8 of the tilted law's
                // bins near its mean (about d/(2.5 sd)), which the hockey-stick sums
                // weigh most, the direct sums would only narrow a bracket far narrower
                // than any accuracy asked: they are skipped (DP-SGD at q = 1e-3: a tenth
                // of a step's time). The bound charged is the FFT's either way.
                if direct_possible(total)
                    && !sig.is_empty()
                    && (sig.len() as f64) * (entries.len() as f64) <= 4e7
                {
                    let tw = twiddles.get_or_insert_with(|| Twiddles::new(n));
                    exact = vec![false; n];
                    for &k in &sig {
                        buf[k] = direct_dft(&entries, k, n, tw);
                        exact[k] = true;
                    }
                }
            }
            let e_dir = 10.0 * U * l1 + v_err;
            // A frequency's error bound (the direct sum's where it replaced the transform),
            // `|A|` and `c·ln(|A| + e)` (kept from the selection pass where it was formed).
            let term = |pos: usize, k: usize, z: Complex<f64>| {
                let e = if !exact.is_empty() && exact[k] {
                    e_dir
                } else {
                    e
                };
                let kept = !seen.is_empty() && !exact.get(k).copied().unwrap_or(false);
                let (r, lr_e, ex) = if kept {
                    seen[pos]
                } else {
                    let r = z.norm();
                    (r, c * (r + e).ln(), f64::NAN)
                };
                (e, r, lr_e, ex)
            };
            if one {
                // The terms and the power pass below in one: each sum is `0 + term`, formed
                // as such, so every value is the general path's to the bit.
                for (pos, &k) in alive.iter().enumerate() {
                    let z = buf[k];
                    let (e, r, lr_e, ex) = term(pos, k, z);
                    let lm = 0.0 + lr_e;
                    if lm < ln_cut {
                        buf[k] = Complex::new(0.0, 0.0);
                        dropped += 1;
                        #[cfg(test)]
                        left_out.push(k);
                        continue;
                    }
                    let lr = r.ln();
                    let th = z.im.atan2(z.re);
                    let s = Complex::new(0.0 + c * lr, 0.0 + c * th);
                    let rt = 0.0 + c * e / (r + e);
                    let pe = 0.0 + c * 2.0 * U * (lr.abs().min(1e300) + th.abs() + 2.0);
                    buf[k] = power_at(s, lm, ex, rt, pe, &mut abs_sum, &mut err_sum);
                }
                ln_margin += c * 4.0 * U;
                continue;
            }
            // A frequency already below e^{−800} stays negligible (every later factor has
            // |A| ≤ 1 + e): it is left dead (out of `alive`), its magnitude not computed.
            for (pos, &k) in alive.iter().enumerate() {
                let z = &buf[k];
                let (e, r, lr_e, _) = term(pos, k, *z);
                if lmag[k] + lr_e < -800.0 {
                    // Negligible (later factors have |A| ≤ 1 + e): skip the trig.
                    lmag[k] += lr_e;
                    continue;
                }
                let lr = r.ln();
                let th = z.im.atan2(z.re);
                acc[k] += Complex::new(c * lr, c * th);
                lmag[k] += lr_e;
                ratio[k] += c * e / (r + e);
                powerr[k] += c * 2.0 * U * (lr.abs().min(1e300) + th.abs() + 2.0);
            }
            alive.retain(|&k| lmag[k] >= -800.0);
            ln_margin += c * 4.0 * U;
        }
        // Power, error per frequency (done above for one factor), inverse transform.
        for k in 0..sums {
            if lmag[k] < ln_cut {
                buf[k] = Complex::new(0.0, 0.0);
                dropped += 1;
                #[cfg(test)]
                left_out.push(k);
                continue;
            }
            buf[k] = power_at(
                acc[k],
                lmag[k],
                f64::NAN,
                ratio[k],
                powerr[k],
                &mut abs_sum,
                &mut err_sum,
            );
        }
        // Each left-out frequency moves every bin by at most e^{ln_cut}/n (its magnitude
        // bound e^{lmag} includes the transform's error): charged at twice that. Far
        // below the window's other terms (err_sum ≥ c·e, about 1e-14, whose own slack
        // covers this sum's rounding), it seldom moves err_sum's bits at all.
        let cut_charge = dropped as f64 * drop_charge;
        err_sum += cut_charge;
        drop(acc);
        drop(lmag);
        drop(ratio);
        drop(powerr);
        tf.inverse(&mut buf);
        let nf = n as f64;
        let err_bin = err_sum / nf + e_fft * abs_sum / nf + 4.0 * U;
        let mut values = filled(n, 0.0);
        // Window bin J ↔ circular position (J − shift) mod n.
        for (t, v) in values.iter_mut().enumerate() {
            let j = w_lo as i128 + t as i128;
            let p = (j - shift).rem_euclid(n as i128) as usize;
            *v = buf[p].re / nf;
        }
        Ok(Self {
            step: d,
            lambda,
            ln_norm: base,
            w_lo,
            values,
            err_bin,
            tail_lo,
            tail_hi,
            ln_margin,
            ln_abs_above,
            mean,
            sd,
            #[cfg(test)]
            left_out: (left_out, cut_charge / nf),
        })
    }

    /// The composed law as a lattice of untilted masses on the same step, on the side
    /// `upper` selects: every bin moved by the round-off bound (up or down), the tilted
    /// mass above the window (bounded by Chernoff) moved to `+∞` and the untilted mass
    /// below it (`e^{ln_below}`, a Chernoff bound of the caller's) to the lowest bin on the
    /// upper side; both dropped on the lower side. `ln_inf` is the composed `+∞` atom.
    pub(crate) fn to_lattice(&self, upper: bool, ln_inf: f64, ln_below: f64) -> Lattice {
        let d = self.step;
        let mut ln_pmf = Vec::with_capacity(self.values.len());
        for (i, &v) in self.values.iter().enumerate() {
            let m = if upper {
                v.max(0.0) + self.err_bin
            } else {
                v - self.err_bin
            };
            ln_pmf.push(if m > 0.0 {
                // ln_norm − λx + ln m ± margin, moved outward by its rounding (§5).
                let (t, t_lo) = tilt_exponent(self.lambda, self.w_lo + i as i64, d);
                let b1 = self.ln_norm - t;
                let base = b1 - t_lo;
                let lm = m.ln();
                let sum = base + lm;
                // `o` twice: its own rounding and that of adding the slack to it.
                if upper {
                    let o = sum + self.ln_margin;
                    o + sum_rounding(&[b1, base, sum, o, o, lm, lm], t)
                } else {
                    let o = sum - self.ln_margin;
                    o - sum_rounding(&[b1, base, sum, o, o, lm, lm], t)
                }
            } else {
                f64::NEG_INFINITY
            });
        }
        let mut ln_inf = ln_inf;
        if upper {
            let top = (self.w_lo + self.values.len() as i64) as f64 * d;
            let lt = self.lambda * top;
            let via_tilt = self.ln_norm - lt + self.tail_hi.ln();
            let via_tilt =
                via_tilt + ln_round(5.0, self.ln_norm.abs() + 2.0 * lt.abs() + via_tilt.abs());
            let above = self.ln_abs_above + ln_round(8.0, 2.0 * self.ln_abs_above);
            let tail = via_tilt.min(above);
            ln_inf = log_add(ln_inf, tail);
            ln_inf += ln_round(2.0, ln_inf);
            let below = log_add(ln_pmf[0], ln_below + ln_round(8.0, 2.0 * ln_below));
            ln_pmf[0] = below + ln_round(2.0, below);
        }
        Lattice {
            step: d,
            lo: self.w_lo,
            ln_pmf,
            ln_inf,
        }
    }

    /// The untilted composition (`λ = 0`) as a lattice on the side `upper` selects
    /// ([`Self::to_lattice`]), with the mass below the window bounded by the window's own
    /// Chernoff tail.
    pub(crate) fn untilted_lattice(&self, upper: bool, ln_inf: f64) -> Lattice {
        debug_assert!(self.lambda == 0.0);
        let ln_below = self.ln_norm + self.tail_lo.ln();
        self.to_lattice(upper, ln_inf, ln_below)
    }

    /// Loss range covered by the window.
    pub fn range(&self) -> (f64, f64) {
        (
            self.w_lo as f64 * self.step,
            (self.w_lo + self.values.len() as i64) as f64 * self.step,
        )
    }

    /// Bounds on `ln δ_fin(ε)` (finite part only).
    ///
    /// The weights `e^{−λz}(1 − e^{−z})`, `z = x − ε`, are built from one set of
    /// exponentials per block of [`BLOCK`] bins: with `z = z₀ + i·d`,
    /// `e^{−λz} = e^{−λz₀}·e^{−λdi}` and `1 − e^{−z} = (1 − e^{−z₀}) + e^{−z₀}(1 − e^{−di})`
    /// (two non-negative terms, so no cancellation near `z = 0`), the per-offset factors
    /// tabulated once. Each weight is then within `(3a + 20)u` relative of the exact weight
    /// at the exact grid point (`a = λz ≤ 700`: the rounding of `z₀` (one fma) and of `λdi`
    /// shift the exponent by at most `a·u` each, the products and the sum add `≤ 12u`),
    /// and that margin is charged to both bounds.
    pub(crate) fn ln_delta(&self, eps: f64) -> LnDelta {
        let d = self.step;
        let lam = self.lambda;
        // Per-offset factors e^{−λdi} and 1 − e^{−di}.
        let mut tilt = [0.0f64; BLOCK];
        let mut rise = [0.0f64; BLOCK];
        for i in 0..BLOCK {
            tilt[i] = (-lam * d * i as f64).exp();
            rise[i] = -(-d * i as f64).exp_m1();
        }
        let n = self.values.len();
        let z_of = |t: usize| ((self.w_lo + t as i64) as f64).mul_add(d, -eps);
        let mut t0 = ((eps / d).floor() as i64 + 1 - self.w_lo).max(0) as usize;
        while t0 < n && z_of(t0) <= 0.0 {
            t0 += 1;
        }
        let (mut t, mut wsum) = (0.0, 0.0);
        let mut cut = false;
        let mut a_cut = CUT_EXPONENT;
        let mut a_max = 0.0f64;
        // Every weight from a bin on is at most e^{−a} there, and the values sum to at
        // most 1 + E·n: once that bound is below 1e-18 of the sum so far, the rest is
        // charged by it instead of summed (a window far above ε held most of the passes).
        let total_bound = 1.0 + self.err_bin * n as f64;
        'blocks: while t0 < n {
            let z0 = z_of(t0);
            let a0 = lam * z0;
            if t > 0.0 && a0 > 0.0 && (-a0).exp() * total_bound <= 1e-18 * t {
                cut = true;
                a_cut = a0;
                break 'blocks;
            }
            let (g0, e0, m0) = ((-a0).exp(), (-z0).exp(), -(-z0).exp_m1());
            let len = BLOCK.min(n - t0);
            for i in 0..len {
                let a = a0 + lam * d * i as f64;
                if a > CUT_EXPONENT {
                    cut = true;
                    break 'blocks;
                }
                a_max = a;
                let w = g0 * tilt[i] * (m0 + e0 * rise[i]);
                t += self.values[t0 + i].max(0.0) * w;
                wsum += w;
            }
            t0 += len;
        }
        let rel = (3.0 * a_max + 20.0) * U;
        // Beyond the cut every weight is below e^{−a_cut} (a_cut ≤ 700); their total mass
        // is at most 1 + E·n.
        let beyond = if cut {
            (-a_cut).exp() * total_bound
        } else {
            0.0
        };
        let below_window = eps < self.w_lo as f64 * d;
        // ε below the window: the bins under the window and above ε are bounded by tail_lo.
        let extra_lo = if below_window { self.tail_lo } else { 0.0 };
        let up = (t + self.err_bin * wsum) * (1.0 + rel) + self.tail_hi + beyond + extra_lo;
        let lo =
            (t - self.err_bin * wsum * (1.0 + rel)) * (1.0 - rel) - (self.tail_lo + self.tail_hi);
        let base = self.ln_norm - lam * eps;
        LnDelta {
            hi: base + up.ln() + self.ln_margin,
            lo: if lo > 0.0 {
                base + lo.ln() - self.ln_margin
            } else {
                f64::NEG_INFINITY
            },
        }
    }

    /// [`Self::ln_delta`] with two exponentials per bin, the independent reference of
    /// its block evaluation (tests only).
    #[cfg(test)]
    pub(crate) fn ln_delta_per_bin(&self, eps: f64) -> LnDelta {
        let d = self.step;
        let lam = self.lambda;
        let (mut t, mut wsum) = (0.0, 0.0);
        for (t_idx, &v) in self.values.iter().enumerate() {
            let x = (self.w_lo + t_idx as i64) as f64 * d;
            if x <= eps {
                continue;
            }
            let a = lam * (x - eps);
            if a > CUT_EXPONENT {
                break;
            }
            let w = (-a).exp() * (-(eps - x).exp_m1());
            t += v.max(0.0) * w;
            wsum += w;
        }
        let extra_lo = if eps < self.w_lo as f64 * d {
            self.tail_lo
        } else {
            0.0
        };
        let up = t + self.err_bin * wsum + self.tail_hi + extra_lo;
        let lo = t - self.err_bin * wsum - (self.tail_lo + self.tail_hi);
        let base = self.ln_norm - lam * eps;
        LnDelta {
            hi: base + up.ln() + self.ln_margin,
            lo: if lo > 0.0 {
                base + lo.ln() - self.ln_margin
            } else {
                f64::NEG_INFINITY
            },
        }
    }
}

/// Bins per block of [`TiltedSum::ln_delta`] (one set of exponentials per block).
const BLOCK: usize = 32;

/// Weights `e^{−a}` with `a` above this are not summed (their total is bounded instead).
const CUT_EXPONENT: f64 = 700.0;

/// `ln P(L = ∞)` of the composition, `ln(1 − Π (1 − p_i)^{c_i})`; `upper` selects the
/// rounding direction of the small-mass branch.
pub(crate) fn ln_inf_total(factors: &[Factor], upper: bool) -> f64 {
    let mut s = 0.0; // Σ c ln(1 − p)
    let mut lsum = f64::NEG_INFINITY; // ln Σ c p
    for f in factors {
        if f.law.ln_inf == f64::NEG_INFINITY {
            continue;
        }
        let c = f.count as f64;
        lsum = log_add(lsum, c.ln() + f.law.ln_inf);
        s += c * (-f.law.ln_inf.exp()).ln_1p();
    }
    if lsum == f64::NEG_INFINITY {
        return lsum;
    }
    if lsum < -30.0 {
        // 1 − Π(1−p)^c ∈ [x − x²/2, x], x = Σ c p.
        if upper {
            lsum
        } else {
            lsum + (-0.5 * lsum.exp()).ln_1p()
        }
    } else {
        (-s.exp_m1()).ln() + if upper { 1e-14 } else { -1e-14 }
    }
}

/// An upper bound on any floating-point sum, in any order, of the `len` non-negative
/// terms whose sum in one order is `rough`: each order's sum is within `γ_{len}` of the
/// exact one, so `rough·(1 + 4(len + 1)u)` exceeds them all while `len·u ≪ 1` (a window's
/// candidates are at most a few million).
fn any_order_bound(rough: f64, len: usize) -> f64 {
    rough * (1.0 + 4.0 * (len as f64 + 1.0) * U)
}

/// One frequency's power `e^{s}` (`s = Σ c (ln|A| + i arg A)`), its magnitude added to
/// `abs_sum` and its error terms to `err_sum`: `e^{lmag}·ratio` (the inputs' and the
/// transform's error, amplified by the power) and the log-space rounding `powerr + 8u`.
fn power_at(
    s: Complex<f64>,
    lmag: f64,
    lmag_exp: f64,
    ratio: f64,
    powerr: f64,
    abs_sum: &mut f64,
    err_sum: &mut f64,
) -> Complex<f64> {
    let mag = s.re.exp();
    let ph = s.im.rem_euclid(2.0 * std::f64::consts::PI);
    *abs_sum += mag;
    // `e^{lmag}` where the selection pass formed it from the same sum (NaN: not formed).
    let el = if lmag_exp.is_nan() {
        lmag.exp()
    } else {
        lmag_exp
    };
    *err_sum += el * ratio;
    if mag > 0.0 {
        *err_sum += mag * (powerr + 8.0 * U);
    }
    Complex::new(mag * ph.cos(), mag * ph.sin())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod block_tests;
