//! Bounded noise `R·X`, `X ∝ e^{−f}` on (−1, 1) (Dagan & Kur; docs/accountant.md §2.4).

use super::{cell_in_output, gauss_legendre8, ContinuousRange, LossLaw};
use crate::accountant::core::numeric::log_add;
use crate::error::{out_of_range, Result};
use densities::bounded::BoundedFamily;

/// Bounded noise of Dagan & Kur (docs/accountant.md §2.5): density `∝ e^{−f(y/R)}` on `(−R, R)`
/// against its copy shifted by the sensitivity `s < 2R`. The loss
/// `ℓ(y) = f((y−s)/R) − f(y/R)` decreases in `y` on `(s − R, R)` (f convex), is `+∞` on
/// `(−R, s − R]` and `−∞` (no P-mass beyond R) above; cells are integrated in `y`.
#[derive(Debug, Clone)]
pub struct BoundedNoiseLaw {
    family: BoundedFamily,
    radius: f64,
    s: f64,
    ln_z: f64,
    ln_inf: f64,
    scale: f64,
    /// [`LossLaw::continuous_range`] by `ln_tail` (its bits): a pure function of the law,
    /// asked again at every grid step of a refinement and twice a step (the bin count
    /// and the cells), each time ~10 tail quadratures with a root per end.
    ranges: RangeMemo,
}

/// Memo of [`LossLaw::continuous_range`]: `(ln_tail bits, range)`, a few entries.
#[derive(Debug, Default)]
struct RangeMemo(std::sync::Mutex<Vec<(u64, Option<ContinuousRange>)>>);

impl Clone for RangeMemo {
    fn clone(&self) -> Self {
        Self(std::sync::Mutex::new(self.entries().clone()))
    }
}

impl RangeMemo {
    fn entries(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Option<ContinuousRange>)>> {
        // A panic elsewhere while held leaves entries that are still each correct.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The range memoised for `ln_tail`, or `compute`d (outside the lock) and kept.
    fn get_or(
        &self,
        ln_tail: f64,
        compute: impl FnOnce() -> Option<ContinuousRange>,
    ) -> Option<ContinuousRange> {
        let key = ln_tail.to_bits();
        if let Some(&(_, r)) = self.entries().iter().find(|e| e.0 == key) {
            return r;
        }
        let r = compute();
        let mut entries = self.entries();
        if !entries.iter().any(|e| e.0 == key) {
            entries.push((key, r));
        }
        r
    }
}

impl BoundedNoiseLaw {
    /// Noise `R·X`, `X ∝ e^{−f}` of `family`, for sensitivity `s`; `s/R ∈ [1e-12, 0.5]`
    /// (a radius below twice the sensitivity leaves hardly any privacy to account).
    ///
    /// ```
    /// use composition::accountant::{BoundedNoiseLaw, LossLaw};
    /// use densities::bounded::BoundedFamily;
    /// let b = BoundedNoiseLaw::new(BoundedFamily::power(2.0).unwrap(), 10.0, 1.0).unwrap();
    /// // P(L = ∞) = P(X ≤ r − 1), about e^{−f(0.9)} = e^{−27.7} for r = 0.1.
    /// assert!(b.loss_scale() > 0.0 && b.ln_inf_mass() < -20.0);
    /// ```
    pub fn new(family: BoundedFamily, radius: f64, s: f64) -> Result<Self> {
        Self::check(family, radius, s)?;
        let r = s / radius;
        let mut law = Self {
            family,
            radius,
            s,
            ln_z: 0.0,
            ln_inf: f64::NEG_INFINITY,
            scale: 1.0,
            ranges: RangeMemo::default(),
        };
        // Normaliser over x ∈ (−1, 1) by composite GL on 4096 cells (the density is
        // flat in the middle and vanishes faster than any power at ±1).
        law.ln_z = law.ln_integral(-1.0, 1.0, 4096);
        law.ln_inf = law.ln_integral(-1.0, r - 1.0, 1024) - law.ln_z;
        // The loss scale from the linearisation at the centre, |ℓ'(0)|·sd(X) =
        // |f'(−r)|·sd(X) (the loss can have a heavy upper tail near the edge of the
        // overlap, which a variance would follow); sd(X) by quadrature.
        let (mut x2, mut tot) = (0.0, 0.0);
        let n = 4096;
        let h = 2.0 / n as f64;
        for i in 0..n {
            for &(x, w) in gauss_legendre8() {
                let u = -1.0 + h * (i as f64 + 0.5 + 0.5 * x);
                let lp = -law.family.f(u) - law.ln_z;
                if !lp.is_finite() {
                    continue;
                }
                let p = lp.exp() * w * 0.5 * h;
                tot += p;
                x2 += p * u * u;
            }
        }
        if tot > 0.0 {
            law.scale = (law.family.f_prime(-r).abs() * (x2 / tot).sqrt()).max(1e-12);
        }
        Ok(law)
    }

    /// Whether [`Self::new`] takes `(family, radius, s)`: its only error, without its
    /// quadratures (about 80 000 points, a millisecond), for a SPEC's range check.
    pub(crate) fn check(family: BoundedFamily, radius: f64, s: f64) -> Result<()> {
        if !(radius.is_finite() && radius > 0.0) {
            return Err(out_of_range("radius", radius, "(0, inf)"));
        }
        let r = s / radius;
        if !(r.is_finite() && (1e-12..=0.5).contains(&r)) {
            return Err(out_of_range("sensitivity/radius", r, "[1e-12, 0.5]"));
        }
        if let BoundedFamily::Power { alpha } = family {
            if !(alpha.is_finite() && alpha > 0.0 && alpha <= 100.0) {
                return Err(out_of_range("alpha", alpha, "(0, 100]"));
            }
        }
        Ok(())
    }

    /// Loss `f(x − r) − f(x)` at `x = y/R` (unit noise coordinates, `r = s/R`), through
    /// the shift exponents of the family (`f(|x| ± r) = f(|x|) e^{a or b}`, computed
    /// without cancellation) so that shifts down to 1e-15 keep their digits.
    fn loss_x(&self, x: f64) -> f64 {
        let r = self.s / self.radius;
        if x - r <= -1.0 {
            return f64::INFINITY;
        }
        if x >= 1.0 {
            return f64::NEG_INFINITY;
        }
        let ax = x.abs();
        if ax + r < 1.0 {
            let e = self.family.shift_exponents(ax, r);
            // x ≥ 0: f(x − r) = f(x)e^{b}; x < 0: f(x − r) = f(|x| + r) = f(|x|)e^{a}.
            let expo = if x >= 0.0 {
                0.5 * (e.sum - e.diff)
            } else {
                0.5 * (e.sum + e.diff)
            };
            return self.family.f(ax) * expo.exp_m1();
        }
        self.family.f(x - r) - self.family.f(x)
    }

    /// `ln ∫_u^v e^{−f(x)} dx` by composite 8-point GL on `n` equal cells.
    fn ln_integral(&self, u: f64, v: f64, n: usize) -> f64 {
        let h = (v - u) / n as f64;
        let mut acc = f64::NEG_INFINITY;
        for i in 0..n {
            for &(x, w) in gauss_legendre8() {
                let t = u + h * (i as f64 + 0.5 + 0.5 * x);
                acc = log_add(acc, -self.family.f(t) + (w * 0.5 * h).ln());
            }
        }
        acc
    }

    /// `x ∈ (r − 1, 1)` with `ℓ(x) = l` (bisection; the loss decreases in x).
    fn x_of_loss(&self, l: f64) -> f64 {
        let r = self.s / self.radius;
        self.x_of_loss_in(l, r - 1.0, 1.0)
    }

    /// [`Self::x_of_loss`] for increasing losses: each root is bracketed next to the
    /// previous one (x decreases), by a step extrapolated from the last two and doubled
    /// until it brackets; then bisected to the last ulp. The same roots as one by one,
    /// a fraction of the loss evaluations when the edges are a fine grid.
    fn xs_of_losses(&self, edges: &[f64]) -> Vec<f64> {
        let r = self.s / self.radius;
        let mut xs: Vec<f64> = Vec::with_capacity(edges.len());
        for (i, &l) in edges.iter().enumerate() {
            if i < 2 || edges[i - 1].partial_cmp(&l) != Some(std::cmp::Ordering::Less) {
                xs.push(self.x_of_loss(l));
                continue;
            }
            let (x1, x2) = (xs[i - 1], xs[i - 2]);
            let b = x1; // ℓ(x1) ≤ edges[i−1] < l: the root is below x1
            let mut step = (x2 - x1).max(0.0) * 1.5 + f64::EPSILON * x1.abs().max(1e-300);
            let mut a = b - step;
            let mut found = None;
            for _ in 0..60 {
                if a <= r - 1.0 {
                    break;
                }
                let la = self.loss_x(a);
                if la > l {
                    found = Some(la);
                    break;
                }
                step *= 2.0;
                a = b - step;
            }
            xs.push(if let Some(la) = found {
                // ℓ(a) is known: not evaluated again.
                self.x_of_loss_from(l, a, la, b)
            } else {
                self.x_of_loss_in(l, r - 1.0, b)
            });
        }
        xs
    }

    /// Root of `ℓ(x) = l` on `[a, b]` with `ℓ(a) > l ≥ ℓ(b)` (or the domain ends),
    /// narrowed to adjacent floats: the same bracket bisection would end on, found by
    /// regula falsi with the Illinois modification (a handful of loss evaluations instead
    /// of ~50), falling back to bisection whenever a step fails to halve the bracket. The
    /// invariant `ℓ(a) > l ≥ ℓ(b)` is kept at every step, so each cell's output interval
    /// still holds only losses on its side of the edge.
    fn x_of_loss_in(&self, l: f64, a: f64, b: f64) -> f64 {
        self.x_of_loss_from(l, a, self.loss_x(a), b)
    }

    /// [`Self::x_of_loss_in`] given `la = ℓ(a)`.
    fn x_of_loss_from(&self, l: f64, a: f64, la: f64, b: f64) -> f64 {
        let (mut a, mut b) = (a, b);
        // g = ℓ − l at the ends, when finite (the domain ends give ±∞: bisect first).
        let mut ga = la - l;
        let mut gb = self.loss_x(b) - l;
        let mut side = 0i8; // which end the last two steps kept (Illinois)
        for _ in 0..200 {
            let w = b - a;
            let mid = 0.5 * (a + b);
            if mid <= a || mid >= b {
                break;
            }
            let falsi = if ga.is_finite() && gb.is_finite() && ga > gb {
                a + w * ga / (ga - gb)
            } else {
                f64::NAN
            };
            let m = if falsi > a && falsi < b { falsi } else { mid };
            let gm = self.loss_x(m) - l;
            if gm > 0.0 {
                a = m;
                ga = gm;
                if side == -1 {
                    gb *= 0.5;
                }
                side = -1;
            } else {
                b = m;
                gb = gm;
                if side == 1 {
                    ga *= 0.5;
                }
                side = 1;
            }
            if b - a > 0.5 * w {
                // A slow step (one end stuck): bisect once.
                let mid = 0.5 * (a + b);
                if mid <= a || mid >= b {
                    break;
                }
                let gm = self.loss_x(mid) - l;
                if gm > 0.0 {
                    a = mid;
                    ga = gm;
                } else {
                    b = mid;
                    gb = gm;
                }
                side = 0;
            }
        }
        0.5 * (a + b)
    }

    /// [`LossLaw::continuous_range`], computed (not memoised).
    fn continuous_range_computed(&self, ln_tail: f64) -> Option<ContinuousRange> {
        // Walk out from the centre in steps of the scale until the tail mass in x is below
        // e^{ln_tail} (tails integrated by GL on the x-interval, which is monotone).
        let r = self.s / self.radius;
        let tail_above = |l: f64| self.ln_integral(r - 1.0, self.x_of_loss(l), 256) - self.ln_z;
        let tail_below = |l: f64| self.ln_integral(self.x_of_loss(l), 1.0, 256) - self.ln_z;
        // Heavy upper tails (loss → ∞ at the left edge of the overlap, mass falling like
        // a power of the loss) are cut at 1e4 scales: their mass is then returned with
        // the range. A tail still falling fast there (a wide radius: the loss is large
        // only where the density is already tiny, and the mass beyond 1e4 scales can be
        // 1e-128 while δ asks for 1e-250) is followed on, up to 1e8 scales, while each
        // step divides it by at least e (docs/accountant.md §2.5).
        let cap = 1e4 * self.scale;
        let far = 1e8 * self.scale;
        let centre = self.loss_x(0.0);
        let mut hi = centre + self.scale;
        let mut w = self.scale;
        let mut t_hi = tail_above(hi);
        let mut falling = true;
        while t_hi > ln_tail && (hi - centre < cap || falling && hi - centre < far) {
            hi += w;
            w *= 1.5;
            let t = tail_above(hi);
            falling = t < t_hi - 1.0;
            t_hi = t;
        }
        let mut lo = centre - self.scale;
        let mut w = self.scale;
        while tail_below(lo) > ln_tail && centre - lo < cap {
            lo -= w;
            w *= 1.5;
        }
        // The cut masses by the same quadrature, doubled as a margin for its error.
        Some(ContinuousRange {
            lo,
            hi,
            ln_below: tail_below(lo) + std::f64::consts::LN_2,
            ln_above: t_hi + std::f64::consts::LN_2,
        })
    }
}

impl LossLaw for BoundedNoiseLaw {
    fn atoms(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    fn log_convex_tail(&self) -> bool {
        true
    }
    fn ln_inf_mass(&self) -> f64 {
        self.ln_inf
    }
    fn continuous_range(&self, ln_tail: f64) -> Option<ContinuousRange> {
        self.ranges
            .get_or(ln_tail, || self.continuous_range_computed(ln_tail))
    }
    fn cell(&self, a: f64, b: f64) -> (f64, f64) {
        self.cells(&[a, b])[0]
    }
    fn cells(&self, edges: &[f64]) -> Vec<(f64, f64)> {
        let xs = self.xs_of_losses(edges);
        let mut out = Vec::with_capacity(edges.len().saturating_sub(1));
        for i in 0..edges.len().saturating_sub(1) {
            let (a, xa, xb) = (edges[i], xs[i], xs[i + 1]);
            // loss in (a, b] ⇔ x in [x(b), x(a)).
            let (u, v) = (xb, xa);
            if v <= u {
                out.push((f64::NEG_INFINITY, f64::NEG_INFINITY));
                continue;
            }
            let ln_p = |t: f64| -self.family.f(t) - self.ln_z;
            let loss = |t: f64| self.loss_x(t);
            let (lp, lm) = cell_in_output(u, v, 256.0, a, &ln_p, &loss);
            out.push((lp, lm));
        }
        out
    }
    fn loss_scale(&self) -> f64 {
        self.scale
    }
    fn grid_unit(&self) -> Option<f64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The roots of a fine grid of losses, each bracketed next to the one before (the
    /// loss at the bracket's far end reused), are the roots found one by one, to the bit.
    #[test]
    fn roots_of_a_grid_are_the_roots_one_by_one() {
        for (fam, radius) in [
            (BoundedFamily::power(2.0).unwrap(), 30.0),
            (BoundedFamily::Exp, 300.0),
        ] {
            let law = BoundedNoiseLaw::new(fam, radius, 1.0).unwrap();
            let range = law.continuous_range(-60.0).unwrap();
            let d = law.loss_scale() / 50.0;
            let edges: Vec<f64> = (0..4000)
                .map(|i| range.lo + i as f64 * d)
                .take_while(|&e| e <= range.hi)
                .collect();
            assert!(edges.len() > 100, "{fam:?}: {} edges", edges.len());
            let grid = law.xs_of_losses(&edges);
            for (&e, &x) in edges.iter().zip(&grid) {
                assert_eq!(x.to_bits(), law.x_of_loss(e).to_bits(), "{fam:?}: loss {e}");
            }
        }
    }

    /// The memoised range is the computed one for each tail asked, in any order, and a
    /// clone keeps answering each tail with its own range.
    #[test]
    fn continuous_range_memo_answers_each_tail_with_its_own_range() {
        let law = BoundedNoiseLaw::new(BoundedFamily::power(2.0).unwrap(), 30.0, 1.0).unwrap();
        let tails = [-40.0, -700.0, -40.0, -120.0, -700.0];
        let fresh = |t: f64| {
            BoundedNoiseLaw::new(BoundedFamily::power(2.0).unwrap(), 30.0, 1.0)
                .unwrap()
                .continuous_range_computed(t)
        };
        for &t in &tails {
            assert_eq!(law.continuous_range(t), fresh(t), "ln_tail {t}");
        }
        assert_ne!(law.continuous_range(-40.0), law.continuous_range(-700.0));
        let twin = law.clone();
        for &t in tails.iter().rev() {
            assert_eq!(twin.continuous_range(t), fresh(t), "clone, ln_tail {t}");
        }
    }
}
