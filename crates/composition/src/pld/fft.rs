//! Numeric kernels of the accountant: linear convolution (direct or zero-padded FFT),
//! the k-th power of a law in the Fourier domain (circular, length `n`), Chernoff bounds
//! for the tails of a k-fold sum, and a-priori bounds on the ℓ1 norm of each kernel's
//! floating-point error (module docs of [`super`]).

use super::U;
use rustfft::num_complex::Complex;

/// A computed law and a bound on the ℓ1 norm of its floating-point error.
pub(crate) struct Conv {
    pub pmf: Vec<f64>,
    pub err: f64,
}

/// Smallest `2^a·3^b ≥ n` (fast sizes for rustfft's mixed-radix plans).
pub(crate) fn fast_len(n: usize) -> usize {
    let n = n.max(1);
    let mut best = n.next_power_of_two();
    let mut p3 = 1usize;
    while p3 < best {
        let mut v = p3;
        while v < n {
            v *= 2;
        }
        best = best.min(v);
        p3 *= 3;
    }
    best
}

/// Relative error constant of one FFT of length `n`: `(6⌈log₂n⌉ + 12)·u` (Higham 2002,
/// Thm 24.2, `‖fl(FFT x) − FFT x‖₂ ≤ η ‖FFT x‖₂`, with a margin for mixed radices and
/// twiddle-factor errors). The same constant bounds each output componentwise relative
/// to `‖x‖₁` (every output is a sum of the inputs times unit-modulus products).
pub(crate) fn eta(n: usize) -> f64 {
    let lg = (n.max(2) as f64).log2().ceil();
    (6.0 * lg + 12.0) * U
}

fn norms(x: &[f64]) -> (f64, f64) {
    let mut n1 = 0.0;
    let mut n2 = 0.0;
    for &v in x {
        n1 += v.abs();
        n2 += v * v;
    }
    (n1, n2.sqrt())
}

/// Linear convolution of two non-negative vectors. Direct summation when one side is
/// short (each output then has relative error `≤ γ_m`, `m` = shorter length), otherwise a
/// zero-padded FFT of length `≥ la + lb − 1` (no wrap-around) with both inputs packed into
/// one complex transform. Negative outputs are clamped to 0.
pub(crate) fn convolve(a: &[f64], b: &[f64]) -> Conv {
    let (la, lb) = (a.len(), b.len());
    let lc = la + lb - 1;
    let (n1a, n2a) = norms(a);
    let (n1b, n2b) = norms(b);
    if la.min(lb) <= 64 {
        let mut c = vec![0.0; lc];
        for (i, &x) in a.iter().enumerate() {
            if x == 0.0 {
                continue;
            }
            for (j, &y) in b.iter().enumerate() {
                c[i + j] += x * y;
            }
        }
        let m = (la.min(lb) + 1) as f64;
        let gamma = m * U / (1.0 - m * U);
        return Conv {
            pmf: c,
            err: gamma * n1a * n1b,
        };
    }
    let n = fast_len(lc);
    let (fwd, inv) = crate::fft_plans::forward_inverse(n);
    let mut z = vec![Complex::new(0.0, 0.0); n];
    for (i, v) in z.iter_mut().enumerate() {
        let re = if i < la { a[i] } else { 0.0 };
        let im = if i < lb { b[i] } else { 0.0 };
        *v = Complex::new(re, im);
    }
    fwd.process(&mut z);
    // A_j = (Z_j + conj Z_{n−j})/2, B_j = (Z_j − conj Z_{n−j})/(2i); C_j = A_j B_j.
    let mut c = vec![Complex::new(0.0, 0.0); n];
    for j in 0..n {
        let zj = z[j];
        let zc = z[(n - j) % n].conj();
        let aj = (zj + zc) * 0.5;
        let bj = (zj - zc) * Complex::new(0.0, -0.5);
        c[j] = aj * bj;
    }
    inv.process(&mut c);
    let scale = 1.0 / n as f64;
    let out: Vec<f64> = c[..lc].iter().map(|v| (v.re * scale).max(0.0)).collect();
    let (_, n2c) = norms(&out);
    let e = eta(n);
    let e2 = e * ((n1a + n1b) * (n2a * n2a + n2b * n2b).sqrt() + n2c) * (1.0 + 4.0 * e);
    Conv {
        pmf: out,
        err: (lc as f64).sqrt() * e2,
    }
}

/// The `k`-fold circular self-convolution (length `n`; a longer input is folded mod `n`
/// first) of a non-negative vector, by raising its DFT to the k-th power entrywise (polar form
/// `r^k e^{ikθ}`; only half the spectrum is computed, the input being real).
///
/// Error bound: each transform entry has error `≤ e∞ = η‖x‖₁`, so its k-th power has
/// error `≤ k (r + e∞)^{k−1} e∞` plus the rounding of the power itself,
/// `≤ r^k u (k(|ln r| + |θ|) + 8)`; the inverse transform maps the 2-norm of those
/// errors to the output (`/√n`), adds its own `η‖c‖₂`, and `‖·‖₁ ≤ √n ‖·‖₂`.
pub(crate) fn power_circular(x: &[f64], k: u64, n: usize) -> Conv {
    let kf = k as f64;
    let (n1x, _) = norms(x);
    let (fwd, inv) = crate::fft_plans::forward_inverse(n);
    let mut z = vec![Complex::new(0.0, 0.0); n];
    // Inputs longer than n are folded mod n (circular convolution commutes with folding).
    for (i, &xi) in x.iter().enumerate() {
        z[i % n].re += xi;
    }
    fwd.process(&mut z);
    let e = eta(n);
    let e_inf = e * n1x;
    let mut acc2 = 0.0;
    let half = n / 2;
    for (j, zj) in z.iter_mut().enumerate().take(half + 1) {
        let w = *zj;
        let r = w.norm();
        let (p, err) = if r == 0.0 {
            (
                Complex::new(0.0, 0.0),
                kf * ((kf - 1.0) * e_inf.ln()).exp() * e_inf,
            )
        } else {
            let lr = r.ln();
            let rk = (kf * lr).exp();
            let prop = kf * ((kf - 1.0) * (r + e_inf).ln()).exp() * e_inf;
            if rk == 0.0 {
                // The power underflows: it is exactly 0 and so is its rounding term (the
                // phase is not needed; a smooth law's high frequencies end here).
                (Complex::new(0.0, 0.0), prop)
            } else {
                let th = w.arg();
                let ph = kf * th;
                let p = Complex::new(rk * ph.cos(), rk * ph.sin());
                let rnd = rk * U * (kf * (lr.abs() + th.abs()) + 8.0);
                (p, prop + rnd)
            }
        };
        *zj = p;
        // Entries j and n − j (distinct unless j = 0 or j = n/2) carry the same error.
        let mult = if j == 0 || 2 * j == n { 1.0 } else { 2.0 };
        acc2 += mult * err * err;
    }
    for j in half + 1..n {
        z[j] = z[n - j].conj();
    }
    inv.process(&mut z);
    let scale = 1.0 / n as f64;
    let out: Vec<f64> = z.iter().map(|v| (v.re * scale).max(0.0)).collect();
    let (_, n2c) = norms(&out);
    let nf = n as f64;
    let e2 = acc2.sqrt() / nf.sqrt() + e * n2c * (1.0 + 4.0 * e);
    Conv {
        pmf: out,
        err: nf.sqrt() * e2,
    }
}

/// `ln Σᵢ xᵢ e^{λ i}` (indices from 0), with a shift that keeps the sum in range, and the
/// tilted mean `Σ i xᵢ e^{λi} / Σ xᵢ e^{λi}`.
///
/// The factors `e^{λi − ref}` are computed by one `exp` per block of [`MGF_BLOCK`] indices
/// and multiplied up by `e^λ` within it (relative error ≤ (MGF_BLOCK + 2)·u per factor,
/// inside the `len·u` that [`k_allowance`] grants K); a block whose first factor is
/// tiny takes one `exp` per index, so no factor is lost to underflow that `exp` keeps.
fn ln_mgf(x: &[f64], lam: f64) -> (f64, f64) {
    let top = (x.len() - 1) as f64;
    let reference = if lam > 0.0 { lam * top } else { 0.0 };
    let step = lam.exp();
    let mut s = 0.0;
    let mut si = 0.0;
    for (b, block) in x.chunks(MGF_BLOCK).enumerate() {
        let i0 = b * MGF_BLOCK;
        let mut e = (lam * i0 as f64 - reference).exp();
        let direct = e < 1e-250 || !step.is_finite();
        for (j, &v) in block.iter().enumerate() {
            let i = i0 + j;
            if j > 0 {
                e = if direct {
                    (lam * i as f64 - reference).exp()
                } else {
                    e * step
                };
            }
            if v > 0.0 {
                let w = v * e;
                s += w;
                si += w * i as f64;
            }
        }
    }
    (s.ln() + reference, si / s)
}

/// Indices per `exp` call in [`ln_mgf`].
const MGF_BLOCK: usize = 32;

/// Golden-section minimisation of a unimodal `f` on `[a, b]`; returns the best value seen.
pub(crate) fn golden_min(f: &dyn Fn(f64) -> f64, mut a: f64, mut b: f64, iters: usize) -> f64 {
    let r = 0.5 * (5f64.sqrt() - 1.0);
    let mut c = b - r * (b - a);
    let mut d = a + r * (b - a);
    let mut fc = f(c);
    let mut fd = f(d);
    let mut best = fc.min(fd);
    for _ in 0..iters {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - r * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + r * (b - a);
            fd = f(d);
        }
        best = best.min(fc).min(fd);
    }
    best
}

/// Golden-section steps of the Chernoff optimisations: the ln λ range (about 53 wide)
/// shrinks to 1e-9. Every λ gives a valid bound, so stopping early is never unsafe,
/// and the objective is flat (quadratic) at its minimum.
const CHERNOFF_ITERS: usize = 52;

/// Range of `ln λ` searched by the Chernoff optimisations (λ per grid index).
fn ln_lambda_range(len: usize) -> (f64, f64) {
    ((1e-16 / len as f64).ln(), 700f64.ln())
}

/// Allowance for the rounding of `k·K(λ)`: the sum inside `K = ln Σ` carries a relative
/// error ≲ (len + MGF_BLOCK)·u (positive terms, block-multiplied factors), which is an
/// *absolute* error in `K`, plus `u|K|` from the logarithm.
fn k_allowance(k: f64, kk: f64, len: usize) -> f64 {
    k * (kk.abs() + 1.0) * 4.0 * (len as f64 + MGF_BLOCK as f64 + 4.0) * U + 1e-12
}

/// Upper bound on `ln P(J ≥ h)` for `J` the sum of `k` independent indices with law `x`
/// (a sub-probability vector; the bound is on the measure of `{J ≥ h}`):
/// `min_{λ > 0} k ln Σ xᵢ e^{λi} − λh` (Chernoff; convex in λ).
pub(crate) fn ln_upper_tail(x: &[f64], k: u64, h: f64) -> f64 {
    let kf = k as f64;
    let top = (x.len() - 1) as f64;
    if h > kf * top {
        return f64::NEG_INFINITY;
    }
    let (k0, mean) = ln_mgf(x, 0.0);
    let trivial = kf * k0 + k_allowance(kf, k0, x.len());
    if h <= kf * mean {
        return trivial;
    }
    let f = |ll: f64| {
        let lam = ll.exp();
        let (kk, _) = ln_mgf(x, lam);
        kf * kk - lam * h + k_allowance(kf, kk, x.len())
    };
    let (a, b) = ln_lambda_range(x.len());
    golden_min(&f, a, b, CHERNOFF_ITERS).min(trivial)
}

/// Upper bound on `ln P(J ≤ h)` (reflection of [`ln_upper_tail`]).
pub(crate) fn ln_lower_tail(x: &[f64], k: u64, h: f64) -> f64 {
    let rev: Vec<f64> = x.iter().rev().cloned().collect();
    let top = (x.len() - 1) as f64;
    ln_upper_tail(&rev, k, k as f64 * top - h)
}

/// Smallest `h` (real) such that the Chernoff bound of `P(J ≥ h)` for the *normalised*
/// law is at most `e^{ln_tau}`: `min_λ (k K̃(λ) − ln τ)/λ`, unimodal in λ.
pub(crate) fn upper_extent(x: &[f64], k: u64, ln_tau: f64) -> f64 {
    let kf = k as f64;
    let top = (x.len() - 1) as f64;
    let (k0, _) = ln_mgf(x, 0.0);
    let f = |ll: f64| {
        let lam = ll.exp();
        let (kk, _) = ln_mgf(x, lam);
        (kf * (kk - k0) + k_allowance(kf, kk - k0, x.len()) - ln_tau) / lam
    };
    let (a, b) = ln_lambda_range(x.len());
    golden_min(&f, a, b, CHERNOFF_ITERS).min(kf * top)
}

/// Largest `h` such that the bound of `P(J ≤ h)` (normalised law) is at most `e^{ln_tau}`.
pub(crate) fn lower_extent(x: &[f64], k: u64, ln_tau: f64) -> f64 {
    let rev: Vec<f64> = x.iter().rev().cloned().collect();
    let top = (x.len() - 1) as f64;
    (k as f64 * top - upper_extent(&rev, k, ln_tau)).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`ln_mgf`]'s block-multiplied factors against one `exp` per index written here:
    /// within the rounding allowance [`k_allowance`] grants K (per unit of k), for λ from
    /// 1e-12 to 700, on laws with zeros and a long, light tail.
    #[test]
    fn ln_mgf_blocks_match_one_exp_per_index_within_the_allowance() {
        let len = 5000;
        let x: Vec<f64> = (0..len)
            .map(|i| {
                if i % 7 == 3 {
                    0.0
                } else {
                    (-(i as f64 - 800.0).powi(2) / 2e5).exp() * 1e-3
                }
            })
            .collect();
        for lam in [1e-12, 1e-6, 1e-3, 0.05, 1.0, 30.0, 700.0] {
            let top = (len - 1) as f64;
            let reference = lam * top;
            let s: f64 = x
                .iter()
                .enumerate()
                .map(|(i, &v)| v * (lam * i as f64 - reference).exp())
                .sum();
            let direct = s.ln() + reference;
            let (got, _) = ln_mgf(&x, lam);
            let allowed = k_allowance(1.0, direct, len);
            assert!(
                (got - direct).abs() <= allowed,
                "lambda {lam}: {got} vs {direct} (allowance {allowed})"
            );
        }
    }

    fn direct(a: &[f64], b: &[f64]) -> Vec<f64> {
        let mut c = vec![0.0; a.len() + b.len() - 1];
        for (i, x) in a.iter().enumerate() {
            for (j, y) in b.iter().enumerate() {
                c[i + j] += x * y;
            }
        }
        c
    }

    #[test]
    fn fast_len_is_smooth_and_minimal() {
        assert_eq!(fast_len(1), 1);
        assert_eq!(fast_len(5), 6);
        assert_eq!(fast_len(7), 8);
        assert_eq!(fast_len(1000), 1024);
        assert_eq!(fast_len(1537), 1728);
        for n in 1..3000 {
            let f = fast_len(n);
            let mut m = f;
            for p in [2usize, 3] {
                while m / p * p == m {
                    m /= p;
                }
            }
            assert!(f >= n && m == 1);
        }
    }

    #[test]
    fn fft_convolution_matches_direct_within_its_bound() {
        let a: Vec<f64> = (0..300)
            .map(|i| ((i * 7 % 13) as f64 + 1.0) / 3000.0)
            .collect();
        let b: Vec<f64> = (0..500)
            .map(|i| ((i * 5 % 11) as f64 + 0.5) / 4000.0)
            .collect();
        let c = convolve(&a, &b);
        let d = direct(&a, &b);
        let l1: f64 = c.pmf.iter().zip(&d).map(|(x, y)| (x - y).abs()).sum();
        assert!(l1 <= c.err, "{l1} > {}", c.err);
        assert!(c.err < 1e-12);
    }

    #[test]
    fn power_matches_repeated_convolution() {
        let x = [0.2, 0.5, 0.3];
        let p = power_circular(&x, 5, 16);
        let mut d = vec![1.0];
        for _ in 0..5 {
            d = direct(&d, &x);
        }
        let l1: f64 = (0..16)
            .map(|i| (p.pmf[i] - d.get(i).cloned().unwrap_or(0.0)).abs())
            .sum();
        assert!(l1 <= p.err && p.err < 1e-12, "{l1} {}", p.err);
    }

    #[test]
    fn chernoff_bounds_hold_for_binomial() {
        // x = Bernoulli(0.3): J ~ Bin(k, 0.3).
        let x = [0.7, 0.3];
        let k = 200u64;
        let mut pmf = vec![1.0];
        for _ in 0..k {
            pmf = direct(&pmf, &x);
        }
        for h in [70usize, 80, 100, 150] {
            let tail: f64 = pmf[h..].iter().sum();
            assert!(tail <= ln_upper_tail(&x, k, h as f64).exp() * (1.0 + 1e-9));
        }
        for h in [50usize, 30, 10] {
            let tail: f64 = pmf[..=h].iter().sum();
            assert!(tail <= ln_lower_tail(&x, k, h as f64).exp() * (1.0 + 1e-9));
        }
        let hi = upper_extent(&x, k, (1e-12f64).ln());
        assert!(ln_upper_tail(&x, k, hi.ceil()) <= (1e-12f64).ln() + 1e-6);
        assert!(hi > 60.0 && hi < 200.0);
        let lo = lower_extent(&x, k, (1e-12f64).ln());
        assert!(lo < 60.0 && lo > 0.0);
    }
}
