//! The accountant's FFTs: the transform lengths, the round-off bound of one transform
//! (docs/accountant.md §5), and the plans, shared by every transform in the crate.
//!
//! Planning a mixed-radix transform (twiddle tables, the AVX butterfly tree) cost as much
//! as the transforms themselves when each call built its own planner: fig18 spent a quarter
//! of its time there. The lengths used are `2^a·3^b` ([`fast_len`]), so a handful of
//! plans serve a whole run; they are built once and shared by all threads.
//!
//! A plan holds about a bin's worth of twiddle factors (16 bytes) per bin of its length
//! and direction, so the cache is bounded: the lengths it keeps add up to at most
//! [`CACHE_BINS`], the least recently used going first. Unbounded, a refinement that
//! walked through a dozen window lengths of millions of bins kept every one's plans:
//! 2.3 GB of twiddles beside the windows in a hostile-input case (a composition at δ =
//! 1e-320), which a 4 GiB limit on the process stopped.
//!
//! Each length's pair is built by a fresh planner, exactly as an uncached call would: one
//! planner shared by all lengths picks sub-transforms from what it has already built, so
//! the rounding of a transform (and fig19's radii, at the 1e-5 level) would depend on
//! which lengths other figures happened to plan first.

use rustfft::num_complex::Complex;
use rustfft::{Fft, FftPlanner};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

type Plan = Arc<dyn Fft<f64>>;

/// Unit round-off of `f64`.
pub(crate) const U: f64 = f64::EPSILON / 2.0;

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

/// One length's forward transform, planned once: the cell is taken from the map under
/// its lock, then filled outside it, so that a second thread asking for the same length
/// (the two sides of a bracket compose windows of the same length at the same time) waits
/// for the first one's plan instead of planning it again, while other lengths are planned
/// meanwhile. The inverse is formed from it ([`Transforms::inverse`]).
type Cell = Arc<OnceLock<Plan>>;

/// The cache bound: the lengths kept add up to at most this many bins (a length's plan
/// holds about 16 bytes a bin, so at most about 128 MiB), except that the length
/// just asked for is always kept. One window at the default bin budget fills it.
pub(crate) const CACHE_BINS: usize = 1 << 23;

/// The cached lengths: each one's cell and when it was last asked for.
#[derive(Default)]
struct Cache {
    cells: HashMap<usize, (Cell, u64)>,
    clock: u64,
}

impl Cache {
    /// The cell of length `n` (a new, empty one if not cached), marked as just used; then
    /// the least recently used other lengths leave until the rest fit [`CACHE_BINS`]. A
    /// thread still using a plan that left keeps it alive through its own `Arc`; the next
    /// request for that length plans it afresh, rounding exactly as before (each length
    /// has a planner of its own).
    fn get(&mut self, n: usize) -> Cell {
        self.clock += 1;
        let now = self.clock;
        let c = {
            let e = self.cells.entry(n).or_default();
            e.1 = now;
            e.0.clone()
        };
        let mut kept: usize = self.cells.keys().sum();
        while kept > CACHE_BINS {
            let oldest = self
                .cells
                .iter()
                .filter(|(&m, _)| m != n)
                .min_by_key(|(_, e)| e.1)
                .map(|(&m, _)| m);
            let Some(m) = oldest else { break };
            self.cells.remove(&m);
            kept -= m;
        }
        c
    }

    /// The lengths kept, ascending (tests).
    #[cfg(test)]
    fn lengths(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.cells.keys().copied().collect();
        v.sort_unstable();
        v
    }
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Cache::default()))
}

fn cell(n: usize) -> Cell {
    // A poisoned lock only means another thread panicked while inserting a cell; the map
    // holds cells only, each filled by `get_or_init` or not at all, so keep using it.
    cache().lock().unwrap_or_else(|e| e.into_inner()).get(n)
}

/// A length's two transforms from one plan: the forward one, and the inverse as the
/// conjugate of the forward transform of the conjugate. That is rustfft's own inverse
/// plan to the bit (every butterfly mirrors the forward one's, with sign changes that
/// are exact; test `cached_transforms_round_exactly_as_fresh_ones`, every `2^a·3^b` from
/// 64 to 2^18, and up to 2^23 when checked this session), so no number moved, and a
/// process plans and caches one table of twiddle factors a length instead of two
/// (planning was 5–7 % of a 10 ms DP-SGD answer's time, and a plan holds 16 bytes a bin).
#[derive(Clone)]
pub(crate) struct Transforms {
    fwd: Plan,
}

impl Transforms {
    /// The forward transform, in place.
    pub(crate) fn forward(&self, buf: &mut [Complex<f64>]) {
        self.fwd.process(buf);
    }

    /// The inverse transform (unnormalised), in place.
    pub(crate) fn inverse(&self, buf: &mut [Complex<f64>]) {
        for z in buf.iter_mut() {
            z.im = -z.im;
        }
        self.fwd.process(buf);
        for z in buf.iter_mut() {
            z.im = -z.im;
        }
    }
}

/// The transforms of length `n` (planned on first use by a fresh planner of its own, then
/// cached).
pub(crate) fn transforms(n: usize) -> Transforms {
    let c = cell(n);
    let fwd = c
        .get_or_init(|| FftPlanner::<f64>::new().plan_fft_forward(n))
        .clone();
    Transforms { fwd }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After many other lengths have been planned (in an order that lets a shared planner
    /// reuse sub-transforms), every cached transform rounds exactly as a fresh planner's:
    /// the figures' numbers cannot depend on what else ran in the same process. And the
    /// inverse formed from the forward plan (conjugates around it) is the fresh planner's
    /// inverse plan to the bit, on complex input with both parts nonzero.
    #[test]
    fn cached_transforms_round_exactly_as_fresh_ones() {
        // Every 2^a·3^b from 64 to 2^18 (the lengths `fast_len` hands out).
        let mut lens: Vec<usize> = Vec::new();
        let mut p3 = 1usize;
        while p3 <= 1 << 18 {
            let mut v = p3;
            while v <= 1 << 18 {
                if v >= 64 {
                    lens.push(v);
                }
                v *= 2;
            }
            p3 *= 3;
        }
        lens.sort_unstable();
        for &n in lens.iter().rev() {
            transforms(n);
        }
        let same = |a: &[Complex<f64>], b: &[Complex<f64>]| {
            a.iter()
                .zip(b)
                .all(|(p, q)| p.re.to_bits() == q.re.to_bits() && p.im.to_bits() == q.im.to_bits())
        };
        for &n in &lens {
            let x: Vec<Complex<f64>> = (0..n)
                .map(|i| Complex::new((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos()))
                .collect();
            let t = transforms(n);
            let (f2, i2) = (
                FftPlanner::<f64>::new().plan_fft_forward(n),
                FftPlanner::<f64>::new().plan_fft_inverse(n),
            );
            let (mut a, mut b) = (x.clone(), x.clone());
            t.forward(&mut a);
            f2.process(&mut b);
            assert!(same(&a, &b), "forward, n = {n}");
            let (mut a, mut b) = (x.clone(), x.clone());
            t.inverse(&mut a);
            i2.process(&mut b);
            assert!(same(&a, &b), "inverse, n = {n}");
        }
    }

    /// The cache keeps at most `CACHE_BINS` bins of lengths, dropping the least recently
    /// used first and never the length just asked for (checked on a cache of its own,
    /// against a list kept by hand).
    #[test]
    fn the_cache_keeps_the_most_recent_lengths_within_its_bound() {
        let mut c = Cache::default();
        let big = CACHE_BINS / 2;
        let quarter = CACHE_BINS / 4;
        c.get(big);
        c.get(quarter);
        c.get(quarter + 1);
        // big + quarter + (quarter + 1) > CACHE_BINS: big, the oldest, left.
        assert_eq!(c.lengths(), vec![quarter, quarter + 1]);
        // quarter, now the most recent; then quarter + (quarter + 1) + big > CACHE_BINS:
        // quarter + 1, now the oldest, leaves.
        c.get(quarter);
        c.get(big);
        assert_eq!(c.lengths(), vec![quarter, big]);
        // A length larger than the bound is kept alone.
        c.get(2 * CACHE_BINS);
        assert_eq!(c.lengths(), vec![2 * CACHE_BINS]);
        // Small lengths all stay.
        for n in 1..=100 {
            c.get(n);
        }
        assert_eq!(c.lengths(), (1..=100).collect::<Vec<_>>());
        let kept: usize = c.lengths().iter().sum();
        assert!(kept <= CACHE_BINS);
    }
}
