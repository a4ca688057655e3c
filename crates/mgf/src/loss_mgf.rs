//! Upper bound on the log-MGF of one query's truncated privacy loss
//! (docs/maths.md §1.4 step 4; Dagan & Kur 2022, Lemma 10.3 and eq. 21).
//!
//! With `g(x) = f(x + s) − f(x)` and `Y = g(X)·1{|X| ≤ L}`,
//! `E e^{θY} = 1 + m(θ)` exactly, where `m(θ) = ∫_{−L}^{L} (e^{θ g} − 1) p`.
//! (Dagan & Kur's `∫_{−L}^{L} e^{θg}p + τ` is this plus `τ − P(|X| > L) ≥ 0`; we keep the
//! exact form, which is tighter by at most `kτ = δ/100` in the exponent.)
//!
//! Pairing `x` with `−x` (p is even) gives `m(θ) = ∫₀^L E_θ(x) p(x) dx` with
//! `E_θ = e^{θA} + e^{θB} − 2 = 2(e^{U} cosh V − 1)`, `A = f(x+s) − f(x)`,
//! `B = f(x−s) − f(x)`, `U = θ(A+B)/2`, `V = θ(A−B)/2`. This removes the first-order
//! cancellation between the two halves (at k = 1e10 the shift is s ≈ 4e-9 and `m` is
//! six orders below `∫|θ g| p`), and `U`, `V` come from the cancellation-free exponents
//! of [`densities::bounded::BoundedFamily::shift_exponents`].
//!
//! Rigour: for the families in `densities::bounded`, `U` and `V` are convex and
//! non-decreasing in `x ∈ [0, L]` (power series in x with non-negative coefficients)
//! and `(U, V) ↦ 2(e^U cosh V − 1)` is convex and increasing for `V ≥ 0` (its Hessian
//! has determinant `e^{2U} > 0`), so `E_θ` is convex in `x`. On each mesh cell `[a, b]`
//! it lies below its chord, hence
//! `∫_a^b E p ≤ E(a) ∫ p (b−x)/(b−a) + E(b) ∫ p (x−a)/(b−a)`,
//! and both weights are bounded above by the tangent bounds of [`crate::quadrature`].

use crate::noise::BoundedNoise;
use crate::quadrature::{SubCell, ROUNDING_SLACK};

/// The per-node data of the mesh for one shift `s`: `A + B` and `A − B` at each node,
/// with the chord weights `w_i` so that `m(θ) ≤ Σ E_θ(x_i) w_i`.
#[derive(Debug, Clone)]
pub struct LossMesh {
    sum: Vec<f64>,
    diff: Vec<f64>,
    weight: Vec<f64>,
}

/// How finely the mesh follows the loss: on each cell `θ_ref·Δ(A±B)/2 ≤ MAX_STEP`.
const MAX_STEP: f64 = 0.05;
/// Cells are never wider than `L / MIN_CELLS`.
const MIN_CELLS: f64 = 256.0;

impl LossMesh {
    /// Builds the mesh on `[0, L]` for shift `s` (requires `L + s < 1`), resolving the
    /// loss for tilts up to about `theta_ref`. `base` is the fine partition of `[0, L]`
    /// from [`BoundedNoise::partition`]; mesh nodes are a subset of its nodes.
    pub fn new(noise: &BoundedNoise, base: &[SubCell], s: f64, theta_ref: f64) -> Self {
        let fam = noise.family();
        let n = base.len();
        let node_x = |j: usize| {
            if j < n {
                base[j].z
            } else {
                base[n - 1].z + base[n - 1].h
            }
        };
        let eval = |x: f64| {
            let e = fam.shift_exponents(x, s);
            let fx = fam.f(x);
            // A + B = f (e^a + e^b − 2), A − B = f (e^a − e^b), a ± b = e.sum, e.diff.
            let half_sum = 0.5 * e.sum;
            let sum = 2.0
                * fx
                * (half_sum.exp_m1() * (0.5 * e.diff).cosh()
                    + 2.0 * (0.25 * e.diff).sinh().powi(2));
            let diff = 2.0 * fx * half_sum.exp() * (0.5 * e.diff).sinh();
            (sum, diff)
        };
        let max_width = node_x(n) / MIN_CELLS;
        let mut nodes = vec![0usize];
        let mut vals = vec![eval(0.0)];
        let mut step = 1usize;
        let mut j = 0usize;
        while j < n {
            let (s0, d0) = *vals.last().expect("non-empty");
            let mut cand = (j + step).min(n);
            loop {
                let (s1, d1) = eval(node_x(cand));
                let ok = theta_ref * (s1 - s0) * 0.5 <= MAX_STEP
                    && theta_ref * (d1 - d0) * 0.5 <= MAX_STEP
                    && node_x(cand) - node_x(j) <= max_width;
                if ok || cand == j + 1 {
                    nodes.push(cand);
                    vals.push((s1, d1));
                    step = if ok { 2 * (cand - j) } else { 1 };
                    j = cand;
                    break;
                }
                cand = j + (cand - j) / 2;
            }
        }
        // Chord weights per node from the sub-cells of each mesh cell.
        let mut weight = vec![0.0; nodes.len()];
        for c in 0..nodes.len() - 1 {
            let (ja, jb) = (nodes[c], nodes[c + 1]);
            let (a, b) = (node_x(ja), node_x(jb));
            let width = b - a;
            let (mut left, mut right) = (0.0, 0.0);
            for sc in &base[ja..jb] {
                // ∫ p (x − a) ≤ t2 + (z − a) t1 and ∫ p (b − x) ≤ (b − z) t1 − t2
                // (tangent-exponential bound times a non-negative weight).
                right += sc.t2 + (sc.z - a) * sc.t1;
                left += ((b - sc.z) * sc.t1 - sc.t2).max(0.0);
            }
            weight[c] += left / width;
            weight[c + 1] += right / width;
        }
        let (sum, diff) = vals.into_iter().unzip();
        Self { sum, diff, weight }
    }

    /// Number of mesh nodes.
    pub fn len(&self) -> usize {
        self.weight.len()
    }

    /// Whether the mesh is empty (never, once built).
    pub fn is_empty(&self) -> bool {
        self.weight.is_empty()
    }

    /// Rigorous upper bound on `m(θ) = E e^{θY} − 1` for `θ ≥ 0`.
    pub fn m_upper(&self, theta: f64) -> f64 {
        let mut total = 0.0;
        for ((&s, &d), &w) in self.sum.iter().zip(&self.diff).zip(&self.weight) {
            let u = 0.5 * theta * s;
            let v = 0.5 * theta * d;
            // E = 2(e^U cosh V − 1) = 2(expm1(U)(1 + q) + q) with q = cosh V − 1 =
            // expm1(V)²/(2e^V): two expm1 calls, every term non-negative (U, V ≥ 0), so
            // each summand is within ~10 ulps, far inside ROUNDING_SLACK.
            let em = v.exp_m1();
            let e = if em.is_finite() {
                let q = 0.5 * em * (em / (1.0 + em));
                2.0 * (u.exp_m1() * (1.0 + q) + q)
            } else {
                f64::INFINITY
            };
            total += e * w;
        }
        total * (1.0 + ROUNDING_SLACK)
    }

    /// Rigorous upper bound on the log-MGF of the k-fold sum, `k ln E e^{θY}`.
    pub fn log_mgf_upper(&self, k: f64, theta: f64) -> f64 {
        let m = self.m_upper(theta);
        if m.is_finite() {
            k * m.ln_1p() * (1.0 + ROUNDING_SLACK)
        } else {
            f64::INFINITY
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use densities::bounded::BoundedFamily;

    /// Independent route: direct Simpson quadrature of ∫_{−L}^{L} expm1(θ g) p with the
    /// plain difference g = f(x+s) − f(x), accurate for a shift this large.
    fn m_simpson(noise: &BoundedNoise, l: f64, s: f64, theta: f64) -> f64 {
        let fam = noise.family();
        let z = 0.5 * (noise.z_lower() + noise.z_upper());
        let n = 400_000;
        let h = 2.0 * l / n as f64;
        let g = |x: f64| (theta * (fam.f(x + s) - fam.f(x))).exp_m1() * (-fam.f(x)).exp() / z;
        let mut acc = g(-l) + g(l);
        for i in 1..n {
            acc += if i % 2 == 1 { 4.0 } else { 2.0 } * g(-l + i as f64 * h);
        }
        acc * h / 3.0
    }

    #[test]
    fn m_upper_bounds_quadrature_and_is_tight() {
        for fam in [BoundedFamily::Power { alpha: 2.0 }, BoundedFamily::Exp] {
            let noise = BoundedNoise::new(fam).unwrap();
            let l = noise.tail_level(1e-8);
            for &(s, theta) in &[(0.01, 5.0), (0.01, 50.0), (0.002, 200.0), (0.03, 1.0)] {
                if l + s >= 1.0 {
                    continue;
                }
                let base = noise.partition(l);
                let mesh = LossMesh::new(&noise, &base, s, theta);
                let upper = mesh.m_upper(theta);
                let reference = m_simpson(&noise, l, s, theta);
                assert!(
                    upper >= reference,
                    "{fam:?} s={s} θ={theta}: {upper} < {reference}"
                );
                assert!(
                    upper <= reference * 1.002,
                    "{fam:?} s={s} θ={theta}: {upper} vs {reference}"
                );
            }
        }
    }
}
