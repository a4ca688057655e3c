//! `BoundedNoise::tail_level` against quadrature of the density's tail (issue 19, item 3).
//!
//! The level L must satisfy `P(|X| > L) ≤ prob` (it feeds the max-of-k error bound of
//! `dpw calibrate`, Dagan & Kur 2022; docs/accountant.md §7). This file computes the exact
//! least level `L*` with `P(|X| > L*) = prob` by its own route — composite Simpson of
//! `e^{−f}` on `[L, 1]` over Simpson's normaliser, and bisection on L — and checks
//! `L ≥ L*` (safe, up to the quadrature's error) and that L is not much above `L*`. The
//! level comes from the bound `2(1 − L)p(L)` on the tail, loose by the factor
//! `≈ 2(1 − L)f′(L)`: measured on this grid, the tail at L is between prob/209 and
//! prob/1.6, and `(1 − L*)/(1 − L)` between 1.03 and 1.52. Asserted: the tail at L at
//! least prob/300 and `(1 − L*)/(1 − L) ≤ 1.6`.

use densities::bounded::BoundedFamily;
use mgf::BoundedNoise;

/// Composite Simpson of `g` on `[a, b]` with `n` (even) panels.
fn simpson(g: impl Fn(f64) -> f64, a: f64, b: f64, n: usize) -> f64 {
    let h = (b - a) / n as f64;
    let mut s = g(a) + g(b);
    for i in 1..n {
        s += if i % 2 == 1 { 4.0 } else { 2.0 } * g(a + i as f64 * h);
    }
    s * h / 3.0
}

struct Tail {
    fam: BoundedFamily,
    z: f64,
}

impl Tail {
    fn new(fam: BoundedFamily) -> Self {
        let z = 2.0 * simpson(|x| Self::weight(fam, x), 0.0, 1.0, 2_000_000);
        Self { fam, z }
    }

    fn weight(fam: BoundedFamily, x: f64) -> f64 {
        if x >= 1.0 {
            0.0
        } else {
            (-fam.f(x)).exp()
        }
    }

    /// `P(|X| > l) = 2∫_l^1 e^{−f}/Z`.
    fn prob(&self, l: f64) -> f64 {
        2.0 * simpson(|x| Self::weight(self.fam, x), l, 1.0, 20_000) / self.z
    }

    /// The level where the tail equals `p`, by bisection (the tail decreases in l).
    fn level(&self, p: f64) -> f64 {
        let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if self.prob(mid) > p {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }
}

#[test]
fn tail_level_is_safe_and_tight_against_quadrature() {
    for fam in [
        BoundedFamily::Power { alpha: 0.5 },
        BoundedFamily::Power { alpha: 2.0 },
        BoundedFamily::Power { alpha: 8.0 },
        BoundedFamily::Exp,
    ] {
        let noise = BoundedNoise::new(fam).unwrap();
        let tail = Tail::new(fam);
        for prob in [0.5, 0.05, 1e-3, 1e-6, 1e-10, 1e-14] {
            let l = noise.tail_level(prob);
            let exact = tail.level(prob);
            let at_l = tail.prob(l);
            let at = format!("{fam:?} prob={prob}: level {l}, exact {exact}");
            // Safe: the tail beyond L is at most prob (Simpson's error is far below 1e-9
            // relative here).
            assert!(at_l <= prob * (1.0 + 1e-9), "{at}: P(|X| > L) = {at_l}");
            assert!(l >= exact * (1.0 - 1e-12), "{at}");
            // Tight: within the stated factors of the least level.
            assert!(at_l >= prob / 300.0, "{at}: P(|X| > L) = {at_l} far below");
            assert!((1.0 - exact) / (1.0 - l) <= 1.6, "{at}");
        }
    }
}
