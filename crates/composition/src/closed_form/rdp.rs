//! Rényi-DP accounting of the Poisson-subsampled Gaussian mechanism (the "moments
//! accountant" of DP-SGD; Abadi et al. 2016; Mironov, Talwar & Zhang 2019), the classical
//! upper bound beside which the exact accountant ([`crate::accountant`]) is drawn
//! (docs/accountant.md §8).
//!
//! For integer orders α ≥ 2 the Rényi divergence of the mixture `(1−q)N(0,σ²) + qN(1,σ²)`
//! from `N(0,σ²)` is `ln A_α / (α − 1)` with
//! `A_α = Σ_{k=0}^{α} C(α,k) (1−q)^{α−k} q^k e^{(k²−k)/(2σ²)}` (Mironov et al. 2019,
//! Section 3.3; it also bounds the other direction), T steps add, and RDP converts to
//! (ε, δ)-DP by the conversion of Balle, Barthe, Gaboardi, Hsu & Sato (2020, Theorem 21),
//! `ε(δ) = min_α T·ε_α + ln((α − 1)/α) − (ln δ + ln α)/(α − 1)`, the one the accounting
//! libraries use; the classical conversion `T·ε_α + ln(1/δ)/(α − 1)` (Mironov 2017,
//! Proposition 3) is larger at every α and is kept for comparison.

use crate::error::{out_of_range, Result};
use densities::outward;

/// `ln C(n, k)` by summing logarithms (n ≤ a few hundred here).
fn ln_choose(n: u32, k: u32) -> f64 {
    let k = k.min(n - k);
    (0..k).map(|i| ((n - i) as f64 / (i + 1) as f64).ln()).sum()
}

/// Largest order whose `ln C(α, k)` are kept in [`ln_choose_row`]'s table: the orders
/// [`subsampled_gaussian_epsilon`] minimises over.
const TABLED_ORDERS: u32 = 256;

/// `[ln C(n, 0), …, ln C(n, n)]`, each [`ln_choose`]'s own value (the same sums, so the
/// same bits), computed once for `n ≤` [`TABLED_ORDERS`]: a bisection on the RDP bound
/// (fig23's RDP rows, about 50 bounds a point) otherwise summed α²/4 logarithms per
/// order, 1.4 million per bound, two thirds of the figure's work. `None` above the table.
fn ln_choose_row(n: u32) -> Option<&'static [f64]> {
    static TABLE: std::sync::OnceLock<Vec<Vec<f64>>> = std::sync::OnceLock::new();
    TABLE
        .get_or_init(|| {
            (0..=TABLED_ORDERS)
                .map(|n| (0..=n).map(|k| ln_choose(n, k)).collect())
                .collect()
        })
        .get(n as usize)
        .map(Vec::as_slice)
}

/// Rényi divergence of order α (integer ≥ 2) of one subsampled-Gaussian step, sensitivity
/// 1, noise σ, rate q.
///
/// ```
/// // q = 1 is the Gaussian mechanism: α/(2σ²).
/// let r = composition::rdp::subsampled_gaussian_rdp(1.0, 2.0, 5).unwrap();
/// assert!((r - 5.0 / 8.0).abs() < 1e-12);
/// ```
pub fn subsampled_gaussian_rdp(q: f64, sigma: f64, alpha: u32) -> Result<f64> {
    if !(q > 0.0 && q <= 1.0) {
        return Err(out_of_range("q", q, "(0, 1]"));
    }
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(out_of_range("sigma", sigma, "(0, inf)"));
    }
    if !(2..=4096).contains(&alpha) {
        return Err(out_of_range("alpha", alpha as f64, "integers in [2, 4096]"));
    }
    let (lq, l1q) = (q.ln(), (-q).ln_1p());
    let row = ln_choose_row(alpha);
    let terms: Vec<f64> = (0..=alpha)
        .map(|k| {
            let kf = k as f64;
            let mix = if k == alpha {
                0.0
            } else {
                (alpha - k) as f64 * l1q
            };
            let qk = if k == 0 { 0.0 } else { kf * lq };
            let binom = row.map_or_else(|| ln_choose(alpha, k), |r| r[k as usize]);
            binom + mix + qk + (kf * kf - kf) / (2.0 * sigma * sigma)
        })
        .filter(|t| t.is_finite())
        .collect();
    let m = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let ln_a = m + terms.iter().map(|t| (t - m).exp()).sum::<f64>().ln();
    Ok(ln_a / (alpha - 1) as f64)
}

/// ε(δ) of `steps` subsampled-Gaussian steps by RDP over the orders 2..=256, with the
/// conversion of Balle et al. (2020, Theorem 21; docs/accountant.md §8).
///
/// ```
/// use composition::rdp::{subsampled_gaussian_epsilon, subsampled_gaussian_epsilon_classical};
/// let e = subsampled_gaussian_epsilon(0.01, 1.0, 10_000, 1e-5).unwrap();
/// assert!(e > 6.2 && e < subsampled_gaussian_epsilon_classical(0.01, 1.0, 10_000, 1e-5).unwrap());
/// ```
pub fn subsampled_gaussian_epsilon(q: f64, sigma: f64, steps: u64, delta: f64) -> Result<f64> {
    min_over_orders(q, sigma, steps, delta, balle_conversion(delta))
}

/// Whether [`subsampled_gaussian_epsilon`] is at most `epsilon ≥ 0`: the same bound of each
/// order, in the same order, stopping at the first at most `epsilon` (the minimum is at
/// most `epsilon` iff some order's bound is). A bisection on σ asks only this, and a σ
/// that meets is settled at the optimal order, a few dozen of the 255 (fig23's RDP rows).
pub fn subsampled_gaussian_epsilon_at_most(
    q: f64,
    sigma: f64,
    steps: u64,
    delta: f64,
    epsilon: f64,
) -> Result<bool> {
    if epsilon.is_nan() || epsilon < 0.0 {
        return Err(out_of_range("epsilon", epsilon, "[0, inf)"));
    }
    let mut within = false;
    orders_until(q, sigma, steps, delta, balle_conversion(delta), |v| {
        within = v <= epsilon;
        within
    })?;
    Ok(within)
}

/// The conversion of Balle et al. (2020, Theorem 21) at order α.
fn balle_conversion(delta: f64) -> impl Fn(u32) -> f64 {
    move |a| {
        let a = a as f64;
        ((a - 1.0) / a).ln() - (delta.ln() + a.ln()) / (a - 1.0)
    }
}

/// As [`subsampled_gaussian_epsilon`] with the classical conversion
/// `T·ε_α + ln(1/δ)/(α − 1)` (Mironov 2017, Proposition 3).
pub fn subsampled_gaussian_epsilon_classical(
    q: f64,
    sigma: f64,
    steps: u64,
    delta: f64,
) -> Result<f64> {
    min_over_orders(q, sigma, steps, delta, |a| {
        (1.0 / delta).ln() / (a - 1) as f64
    })
}

/// `max(0, min_α T·ε_α + conversion(α))` over the orders 2..=256.
fn min_over_orders(
    q: f64,
    sigma: f64,
    steps: u64,
    delta: f64,
    conversion: impl Fn(u32) -> f64,
) -> Result<f64> {
    let mut best = f64::INFINITY;
    orders_until(q, sigma, steps, delta, conversion, |v| {
        best = best.min(v);
        false
    })?;
    Ok(best.max(0.0))
}

/// `T·ε_α + conversion(α)` for the orders 2..=256 in turn, each given to `done` until it
/// says so.
fn orders_until(
    q: f64,
    sigma: f64,
    steps: u64,
    delta: f64,
    conversion: impl Fn(u32) -> f64,
    mut done: impl FnMut(f64) -> bool,
) -> Result<()> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(out_of_range("delta", delta, "(0, 1)"));
    }
    if steps == 0 {
        return Err(out_of_range("steps", 0.0, "[1, inf)"));
    }
    for alpha in 2..=256u32 {
        let r = subsampled_gaussian_rdp(q, sigma, alpha)?;
        if done(steps as f64 * r + conversion(alpha)) {
            break;
        }
    }
    Ok(())
}

/// Orders of the certified schedule bound: every integer from 2 to 64 ([`BASE_ORDERS`]),
/// and where the optimum lies at the top of those, about 6 % apart up to 1024
/// ([`high_orders`]; the optimum of a DP-SGD run lies between 2 and a few hundred).
pub const BASE_ORDERS: std::ops::RangeInclusive<u32> = 2..=64;

/// The orders above [`BASE_ORDERS`], about 6 % apart up to 1024.
pub fn high_orders() -> Vec<u32> {
    let mut v: Vec<u32> = Vec::new();
    let mut a = 64.0f64;
    while a < 1024.0 {
        a *= 1.06;
        let k = (a.round() as u32).min(1024);
        if k > v.last().copied().unwrap_or(64) {
            v.push(k);
        }
    }
    v
}

/// `ln x` rounded up (the platform's `ln` within one ulp, moved two up).
fn ln_up(x: f64) -> f64 {
    outward::up_by(x.ln(), 2)
}

/// `ln x` rounded down.
fn ln_down(x: f64) -> f64 {
    outward::down_by(x.ln(), 2)
}

/// `a + b` rounded up.
fn add_up(a: f64, b: f64) -> f64 {
    let s = a + b;
    // Two-sum: the exact error of the rounded sum.
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    if err > 0.0 {
        outward::up(s)
    } else {
        s
    }
}

/// `a·b` rounded up for finite `a ≥ 0` and any finite `b`.
fn mul_up_signed(a: f64, b: f64) -> f64 {
    if b >= 0.0 {
        outward::mul_up(a, b)
    } else {
        -outward::mul_down(a, -b)
    }
}

/// `ln C(α, k)` for `k = 0..=α`, each rounded up (sums of `ln((α − i)/(i + 1))`).
fn ln_binomials_up(alpha: u32) -> Vec<f64> {
    let mut out = Vec::with_capacity(alpha as usize + 1);
    let mut acc = 0.0f64;
    out.push(0.0);
    for i in 0..alpha {
        let r = outward::div_up((alpha - i) as f64, (i + 1) as f64);
        acc = add_up(acc, ln_up(r));
        out.push(acc);
    }
    out
}

/// A certified upper bound on the Rényi divergence of order α (an integer ≥ 2) of one
/// Poisson-subsampled Gaussian step (sensitivity 1, noise σ, rate q), in either direction
/// of add/remove: `ln A_α/(α − 1)` with
/// `A_α = Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2σ²)}` (Mironov, Talwar & Zhang 2019,
/// §3.3; docs/accountant.md §8), every operation rounded up. `binoms`: [`ln_binomials_up`]
/// of α.
fn rdp_up(q: f64, sigma: f64, alpha: u32, binoms: &[f64], terms: &mut Vec<f64>) -> f64 {
    const U: f64 = f64::EPSILON / 2.0;
    // ln q and ln(1 − q) rounded up (each term's exponent is an upper bound).
    let lq = if q >= 1.0 { 0.0 } else { ln_up(q) };
    let l1q = if q >= 1.0 {
        f64::NEG_INFINITY
    } else {
        outward::up_by((-q).ln_1p(), 2)
    };
    let s2 = outward::mul_down(sigma, sigma);
    terms.clear();
    for k in 0..=alpha {
        let mix = if k == alpha {
            0.0
        } else if l1q == f64::NEG_INFINITY {
            continue; // (1 − q)^{α−k} = 0 at q = 1
        } else {
            mul_up_signed((alpha - k) as f64, l1q)
        };
        let qk = if k == 0 {
            0.0
        } else {
            mul_up_signed(k as f64, lq)
        };
        let kk = (k as f64) * (k as f64) - k as f64; // exact below 2^53
        let g = outward::div_up(kk, 2.0 * s2);
        let b = binoms[k as usize];
        // Three rounded additions, each within u of the magnitudes added: raised by 4u of
        // their sum of magnitudes (and a step), an upper bound on the exact sum.
        let t = b + mix + qk + g;
        let margin = 4.0 * U * (b.abs() + mix.abs() + qk.abs() + g.abs());
        terms.push(outward::up(t + margin));
    }
    let m = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // Positive terms, each rounded up, summed to nearest: the exact sum of the rounded
    // terms is at most the float sum times 1 + (n + 1)u.
    let sum: f64 = terms
        .iter()
        .map(|&t| outward::exp_up(outward::up(t - m)))
        .sum();
    let sum = outward::mul_up(sum, outward::up(1.0 + (terms.len() as f64 + 1.0) * U));
    let ln_a = add_up(m, ln_up(sum));
    outward::div_up(ln_a.max(0.0), (alpha - 1) as f64)
}

/// The segments with σ rounded down and q rounded up onto the lattice `(1 + ρ)^k`
/// (exact-directed) and merged: each step leaks at least as much (a larger σ is a
/// post-processing of a smaller one, a smaller q of a larger one), so their Rényi
/// divergences bound the schedule's from above (docs/accountant.md §8).
fn onto_lattice(segments: &[(f64, f64, u64)], rho: f64) -> Vec<(f64, f64, u64)> {
    let mut merged: std::collections::BTreeMap<(u64, u64), u64> = Default::default();
    for &(sigma, q, c) in segments {
        let key = (
            outward::to_lattice(sigma, rho, false).to_bits(),
            outward::to_lattice(q, rho, true).min(1.0).to_bits(),
        );
        let e = merged.entry(key).or_insert(0);
        *e = e.saturating_add(c);
    }
    merged
        .into_iter()
        .map(|((s, q), c)| (f64::from_bits(s), f64::from_bits(q), c))
        .collect()
}

/// Distinct segments past which [`schedule_bound`] rounds them onto a lattice of ratio
/// [`RDP_LATTICE`] first (600k distinct pairs took 130 s; a first-order cost of about 2ρ
/// in the bound, where the bound is the fallback of a schedule the exact route cannot
/// reach either).
pub const RDP_EXACT_SEGMENTS: usize = 20_000;

/// The lattice ratio onto which [`schedule_bound`] rounds past [`RDP_EXACT_SEGMENTS`].
pub const RDP_LATTICE: f64 = 0.01;

/// The composed Rényi divergences `Σ_i c_i·D_α(step_i)` of a schedule of
/// Poisson-subsampled Gaussian segments `(σ, q, count)` at each of `orders`, rounded up
/// (the per-step bound of [`subsampled_gaussian_rdp`], certified; Rényi divergences add
/// under adaptive composition, Mironov 2017, Proposition 1).
pub fn schedule_rdp_up(segments: &[(f64, f64, u64)], orders: &[u32]) -> Vec<f64> {
    orders
        .iter()
        .map(|&a| {
            let binoms = ln_binomials_up(a);
            let mut scratch = Vec::with_capacity(a as usize + 1);
            segments.iter().fold(0.0f64, |acc, &(sigma, q, c)| {
                let r = rdp_up(q, sigma, a, &binoms, &mut scratch);
                add_up(acc, outward::mul_up(c as f64, r))
            })
        })
        .collect()
}

/// A certified upper bound on ε(δ) of a schedule from its composed Rényi divergences
/// `rdp` at `orders` ([`schedule_rdp_up`]), by the conversion of Balle et al. (2020,
/// Theorem 21), `ε = R_α + ln((α − 1)/α) − (ln δ + ln α)/(α − 1)`, the least over the
/// orders, each rounded up; at least 0. Also the order attaining it.
pub fn rdp_epsilon_up(rdp: &[f64], orders: &[u32], delta: f64) -> (f64, u32) {
    let ln_d = ln_down(delta);
    let mut best = (f64::INFINITY, orders[0]);
    for (&r, &a) in rdp.iter().zip(orders) {
        let af = a as f64;
        let shrink = ln_up(outward::div_up(af - 1.0, af));
        // −(ln δ + ln α)/(α − 1): the numerator's lower bound, negated, divided up.
        let num = -outward::down(ln_d + ln_down(af));
        let tail = if num >= 0.0 {
            outward::div_up(num, af - 1.0)
        } else {
            -outward::div_down(-num, af - 1.0)
        };
        let e = add_up(add_up(r, shrink), tail);
        if e < best.0 {
            best = (e, a);
        }
    }
    (best.0.max(0.0), best.1)
}

/// A certified upper bound on `ln δ(ε)` of a schedule from its composed Rényi divergences
/// (the same conversion solved for δ: `ln δ = (α − 1)(R_α − ε + ln((α − 1)/α)) − ln α`),
/// the least over the orders, each rounded up; at most 0.
pub fn rdp_ln_delta_up(rdp: &[f64], orders: &[u32], epsilon: f64) -> f64 {
    let mut best = 0.0f64;
    for (&r, &a) in rdp.iter().zip(orders) {
        let af = a as f64;
        let shrink = ln_up(outward::div_up(af - 1.0, af));
        let inner = add_up(add_up(r, -epsilon), shrink);
        let l = add_up(mul_up_signed(af - 1.0, inner), -ln_down(af));
        best = best.min(l);
    }
    best
}

/// What [`schedule_bound`] found: a certified upper end and the order attaining it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RdpBound {
    /// The certified upper end: ε at the δ asked, or `ln δ` at the ε asked.
    pub value: f64,
    /// The Rényi order that gave it.
    pub order: u32,
}

/// The certified Rényi-DP upper end of a schedule of Poisson-subsampled Gaussian segments
/// `(σ, q, count)`: ε at δ (`epsilon_at = false`, `x = δ`) or `ln δ` at ε
/// (`epsilon_at = true`, `x = ε`), over [`BASE_ORDERS`] and, where the optimum lies at
/// their top, [`high_orders`] (docs/accountant.md §8).
///
/// ```
/// use composition::rdp::{schedule_bound, subsampled_gaussian_epsilon};
/// let b = schedule_bound(&[(1.0, 0.01, 10_000)], false, 1e-5);
/// let plain = subsampled_gaussian_epsilon(0.01, 1.0, 10_000, 1e-5).unwrap();
/// assert!(b.value >= plain && b.value < plain * (1.0 + 1e-3));
/// ```
pub fn schedule_bound(segments: &[(f64, f64, u64)], epsilon_at: bool, x: f64) -> RdpBound {
    let rounded;
    let segments = if segments.len() > RDP_EXACT_SEGMENTS {
        rounded = onto_lattice(segments, RDP_LATTICE);
        &rounded[..]
    } else {
        segments
    };
    let best = |orders: &[u32]| -> RdpBound {
        let r = schedule_rdp_up(segments, orders);
        if epsilon_at {
            let mut b = RdpBound {
                value: f64::INFINITY,
                order: orders[0],
            };
            for (i, &a) in orders.iter().enumerate() {
                let v = rdp_ln_delta_up(&r[i..=i], &[a], x);
                if v < b.value {
                    b = RdpBound { value: v, order: a };
                }
            }
            b
        } else {
            let (value, order) = rdp_epsilon_up(&r, orders, x);
            RdpBound { value, order }
        }
    };
    let base: Vec<u32> = BASE_ORDERS.collect();
    let b = best(&base);
    if b.order + 4 < *BASE_ORDERS.end() {
        return b;
    }
    let h = best(&high_orders());
    if h.value < b.value {
        h
    } else {
        b
    }
}

#[cfg(test)]
mod certified_tests {
    use super::{
        high_orders, rdp_epsilon_up, rdp_ln_delta_up, schedule_bound, schedule_rdp_up,
        subsampled_gaussian_epsilon,
    };
    use crate::accountant::core::exact_exp::{exp_fixed, rat, seeded, P};
    use num_bigint::BigInt;
    use num_rational::BigRational;
    use num_traits::{One, Zero};

    fn r(x: f64) -> BigRational {
        rat(x)
    }

    fn int(n: u64) -> BigRational {
        BigRational::from_integer(BigInt::from(n))
    }

    /// `e^d` from below, as a rational.
    fn exp_lo(d: &BigRational) -> BigRational {
        BigRational::new(exp_fixed(d).0, BigInt::one() << P)
    }

    /// `e^d` from above, as a rational.
    fn exp_hi(d: &BigRational) -> BigRational {
        BigRational::new(exp_fixed(d).1, BigInt::one() << P)
    }

    /// `A_α = Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2σ²)}` from above, exactly.
    fn a_alpha_hi(q: f64, sigma: f64, alpha: u64) -> BigRational {
        let (q, s) = (r(q), r(sigma));
        let one = BigRational::one();
        let mut binom = BigRational::one();
        let mut sum = BigRational::zero();
        for k in 0..=alpha {
            if k > 0 {
                binom = binom * int(alpha - k + 1) / int(k);
            }
            let g = int(k * k - k) / (int(2) * &s * &s);
            let t = &binom
                * num_traits::pow(&one - &q, (alpha - k) as usize)
                * num_traits::pow(q.clone(), k as usize)
                * exp_hi(&g);
            sum += t;
        }
        sum
    }

    #[test]
    fn the_certified_renyi_divergences_and_conversions_are_rounded_up_in_exact_arithmetic() {
        // Seeded schedules of a few segments, orders 2..12: each composed divergence's
        // bound R against Σ c·ln A_α/(α − 1) enclosed exactly (e^{(α−1)R/c}... taken as
        // Π A^c ≤ e^{(α−1)R}), then the ε(δ) and ln δ(ε) conversions at that R.
        let mut u = seeded(23);
        for _ in 0..12 {
            let segs: Vec<(f64, f64, u64)> = (0..1 + (u() * 3.0) as usize)
                .map(|_| (0.8 + 2.0 * u(), 0.001 + 0.2 * u(), 1 + (u() * 5.0) as u64))
                .collect();
            let orders: Vec<u32> = (2..=12).collect();
            let rs = schedule_rdp_up(&segs, &orders);
            for (&a, &rr) in orders.iter().zip(&rs) {
                let a64 = a as u64;
                let exact = segs.iter().fold(BigRational::one(), |acc, &(s, q, c)| {
                    acc * num_traits::pow(a_alpha_hi(q, s, a64), c as usize)
                });
                let bound = exp_lo(&(r(rr) * int(a64 - 1)));
                assert!(bound >= exact, "{segs:?}, α = {a}");
                // ε(δ) at this order alone: (α−1)(ε − R) ≥ (α−1)ln((α−1)/α) − ln δ − ln α.
                for delta in [1e-3, 1e-7] {
                    let (e, _) = rdp_epsilon_up(&[rr], &[a], delta);
                    let lhs = exp_lo(&((r(e) - r(rr)) * int(a64 - 1)));
                    let rhs = num_traits::pow(int(a64 - 1) / int(a64), (a - 1) as usize)
                        / (r(delta) * int(a64));
                    assert!(e == 0.0 || lhs >= rhs, "ε at δ = {delta}, α = {a}");
                }
                // ln δ(ε): e^{ln δ − (α−1)(R − ε)} ≥ ((α−1)/α)^{α−1}/α.
                for eps in [0.5, 4.0] {
                    let l = rdp_ln_delta_up(&[rr], &[a], eps);
                    if l >= 0.0 {
                        continue;
                    }
                    let lhs = exp_lo(&(r(l) - (r(rr) - r(eps)) * int(a64 - 1)));
                    let rhs = num_traits::pow(int(a64 - 1) / int(a64), (a - 1) as usize) / int(a64);
                    assert!(lhs >= rhs, "ln δ at ε = {eps}, α = {a}");
                }
            }
        }
    }

    #[test]
    fn the_certified_bound_is_the_plain_one_to_a_few_ulps_and_mixes_segments_by_counts() {
        // Independent of the rounding: the plain (nearest) RDP accountant of one segment,
        // and a schedule of two halves equal to the whole.
        for &(q, s, t, d) in &[
            (0.01, 1.0, 10_000u64, 1e-5),
            (0.001, 0.8, 100_000, 1e-6),
            (0.1, 2.0, 1000, 1e-5),
            (1.0, 5.0, 10, 1e-5),
        ] {
            let b = schedule_bound(&[(s, q, t)], false, d);
            let plain = subsampled_gaussian_epsilon(q, s, t, d).unwrap();
            assert!(b.value >= plain, "q = {q}: {} < {plain}", b.value);
            assert!(
                b.value <= plain * (1.0 + 1e-9),
                "q = {q}: {} ≫ {plain}",
                b.value
            );
            let halves = schedule_bound(&[(s, q, t / 2), (s, q, t - t / 2)], false, d);
            assert!((halves.value / b.value - 1.0).abs() < 1e-12);
        }
        // Past RDP_EXACT_SEGMENTS distinct segments, rounded onto the lattice: never
        // below the bound of the segments as given (σ down, q up), within a few percent.
        let mut u = seeded(29);
        let many: Vec<(f64, f64, u64)> = (0..super::RDP_EXACT_SEGMENTS + 1)
            .map(|_| (0.7 + 0.8 * u(), 0.001 + 0.009 * u(), 10))
            .collect();
        let orders: Vec<u32> = super::BASE_ORDERS.collect();
        let given = rdp_epsilon_up(&schedule_rdp_up(&many, &orders), &orders, 1e-5).0;
        let rounded = schedule_bound(&many, false, 1e-5).value;
        assert!(
            rounded >= given && rounded <= given * 1.05,
            "{rounded} vs {given}"
        );
        // Where the optimum lies above 64 (a small ε), the higher orders are used.
        let b = schedule_bound(&[(20.0, 0.01, 100)], false, 1e-10);
        assert!(b.order > 64 && high_orders().contains(&b.order), "{b:?}");
    }
}

#[cfg(test)]
mod table_tests {
    use super::{
        ln_choose, ln_choose_row, subsampled_gaussian_epsilon, subsampled_gaussian_epsilon_at_most,
        subsampled_gaussian_rdp, TABLED_ORDERS,
    };

    /// The divergence as it was computed before the table: every `ln C(α, k)` summed anew.
    fn rdp_untabled(q: f64, sigma: f64, alpha: u32) -> f64 {
        let (lq, l1q) = (q.ln(), (-q).ln_1p());
        let terms: Vec<f64> = (0..=alpha)
            .map(|k| {
                let kf = k as f64;
                let mix = if k == alpha {
                    0.0
                } else {
                    (alpha - k) as f64 * l1q
                };
                let qk = if k == 0 { 0.0 } else { kf * lq };
                ln_choose(alpha, k) + mix + qk + (kf * kf - kf) / (2.0 * sigma * sigma)
            })
            .filter(|t| t.is_finite())
            .collect();
        let m = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let ln_a = m + terms.iter().map(|t| (t - m).exp()).sum::<f64>().ln();
        ln_a / (alpha - 1) as f64
    }

    /// The table holds `ln_choose`'s own bits, and the divergence read from it is the
    /// untabled one bit for bit, at every order of the table and past it (summed there).
    #[test]
    fn the_tabled_binomials_give_the_untabled_divergence_bit_for_bit() {
        for n in 0..=TABLED_ORDERS {
            let row = ln_choose_row(n).unwrap();
            assert_eq!(row.len(), n as usize + 1);
            for (k, &v) in row.iter().enumerate() {
                assert_eq!(v.to_bits(), ln_choose(n, k as u32).to_bits(), "C({n}, {k})");
            }
        }
        assert!(ln_choose_row(TABLED_ORDERS + 1).is_none());
        for &q in &[1e-3, 0.01, 0.1, 0.5, 1.0] {
            for &sigma in &[0.3, 0.7, 1.0, 4.0, 40.0] {
                for alpha in (2..=300).chain([1000, 4096]) {
                    let got = subsampled_gaussian_rdp(q, sigma, alpha).unwrap();
                    let want = rdp_untabled(q, sigma, alpha);
                    assert_eq!(
                        got.to_bits(),
                        want.to_bits(),
                        "q {q} sigma {sigma} alpha {alpha}"
                    );
                }
            }
        }
    }

    /// The early-stopping comparison says what the minimum over the orders says, at ε
    /// above, below and exactly at it (and at 0), and refuses what it refuses.
    #[test]
    fn at_most_is_the_minimum_compared() {
        for &q in &[1e-3, 0.01, 0.1, 1.0] {
            for &sigma in &[0.3, 0.6, 1.0, 3.0, 30.0] {
                for &t in &[1, 100, 100_000] {
                    for &delta in &[1e-5, 1e-10] {
                        let e = subsampled_gaussian_epsilon(q, sigma, t, delta).unwrap();
                        let below = f64::from_bits(e.to_bits().saturating_sub(1));
                        for eps in [0.0, below, e, e * (1.0 + 1e-15), 2.0 * e + 1.0, 8.0] {
                            let got = subsampled_gaussian_epsilon_at_most(q, sigma, t, delta, eps)
                                .unwrap();
                            assert_eq!(got, e <= eps, "q {q} sigma {sigma} T {t} eps {eps} vs {e}");
                        }
                    }
                }
            }
        }
        assert!(subsampled_gaussian_epsilon_at_most(0.0, 1.0, 10, 1e-5, 1.0).is_err());
        assert!(subsampled_gaussian_epsilon_at_most(0.1, 1.0, 0, 1e-5, 1.0).is_err());
        assert!(subsampled_gaussian_epsilon_at_most(0.1, 1.0, 10, 1.0, 1.0).is_err());
        assert!(subsampled_gaussian_epsilon_at_most(0.1, 1.0, 10, 1e-5, f64::NAN).is_err());
    }
}
