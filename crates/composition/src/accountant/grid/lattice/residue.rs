//! Coarsening a lattice onto a step that is an integer multiple of its own, by tables
//! indexed by an atom's residue (docs/accountant.md §5, "Coarsening by residue").
//!
//! When the coarse step is the rounded product `Δ = fl(r·s)` of the fine step `s` and an
//! integer `r`, the fine point `n·s`, `n = jr + i`, lies `i·s − jρ` above the coarse point
//! `jΔ` (`ρ = Δ − rs`, the product's exact remainder), so the connect-the-dots shares
//! (upper side) and the pour's excess and deficit factors (lower side) depend on the
//! residue `i` alone, to within `E ≥ |jρ|` over the lattice's coarse indices. They are
//! tabulated once, each at the end of its interval that keeps the side; each fine atom
//! then costs one `exp` and a few products, summed in linear space relative to a scale
//! per coarse cell, where the atom-by-atom path spends about nine transcendental
//! functions in log space. Every sum is moved to its side by a bound on its roundings.

use super::{
    grid_gap, grid_point, place_last_carry, pour_onto, too_many_bins, Item, Lattice, LogDense,
};
use crate::accountant::core::numeric::{chain_rounding, log_add};
use crate::error::Result;

const U: f64 = f64::EPSILON / 2.0;

/// Largest step ratio tabulated.
const MAX_RATIO: f64 = (1u64 << 20) as f64;

/// How far (in nats) an atom's log-mass may lie below its cell's scale in a linear sum:
/// `e^{−600}` is far above the smallest normal number even when multiplied by a share
/// down to [`SHARE_FLOOR`], so no term loses its relative accuracy. Atoms further below
/// are split in log space (upper side) or hand the pour over to the atom-by-atom one.
const SPAN: f64 = 600.0;

/// Least nonzero share or factor kept (smaller ones are raised to it on the side where
/// that is safe, and the tables are not used where that would be unsafe).
const SHARE_FLOOR: f64 = 1e-30;

/// `x` shrunk by at least the relative error `eps` (`x ≥ 0`): the factor and the product
/// each round by at most `u`, covered by the extra `4u`.
fn lower(x: f64, eps: f64) -> f64 {
    x * (1.0 - (eps + 4.0 * U))
}

/// `x` enlarged by at least the relative error `eps` (`x ≥ 0`).
fn upper(x: f64, eps: f64) -> f64 {
    x * (1.0 + (eps + 4.0 * U))
}

/// Relative error bound of a sum of `n` positive terms, each an `exp` of an argument
/// rounded by at most `u` times `amax` (a difference of two logs), times a factor taken
/// as exact: the argument's error (`u·amax`), the `exp` (an ulp, `2u`), the product (`u`)
/// and the `n − 1` additions (`u` each), a quarter more.
fn sum_error(amax: f64, n: u32) -> f64 {
    1.25 * U * (amax + n as f64 + 4.0)
}

/// The integer ratio `r` of the coarse step `d` to the lattice's own, when `d = fl(r·s)`
/// exactly and `1 ≤ r ≤ MAX_RATIO`, with `E`, a bound on `|jρ|` over the coarse indices
/// `j` any atom of the lattice can be measured from (`ρ = d − rs`).
fn ratio(lat: &Lattice, d: f64) -> Option<(i64, f64)> {
    let s = lat.step;
    if !(s > 1e-250 && s.is_finite() && d.is_finite()) {
        return None;
    }
    let r = (d / s).round();
    if !(1.0..=MAX_RATIO).contains(&r) || r * s != d {
        return None;
    }
    // The remainder of a product is a float, which the fused multiply-add returns exactly.
    let rho = r.mul_add(s, -d);
    let ri = r as i64;
    let n_lo = lat.lo;
    let n_hi = lat.lo + lat.ln_pmf.len() as i64;
    let jmax = (n_lo.div_euclid(ri) - 2)
        .unsigned_abs()
        .max((n_hi.div_euclid(ri) + 2).unsigned_abs()) as f64;
    Some((ri, upper(jmax * rho.abs(), 0.0)))
}

/// `ln(e^m·s)` raised by its rounding: `s` known to the relative error `eps`, then the
/// `ln` (an ulp of it), the sum and the slack's own addition.
fn ln_up(s: f64, m: f64, eps: f64) -> f64 {
    if s <= 0.0 {
        return f64::NEG_INFINITY;
    }
    let l = s.ln();
    let v = m + l;
    v + 1.25 * (eps + 2.0 * U * (l.abs() + v.abs() + 1.0))
}

/// `ln(e^m·s)` lowered by its rounding (as [`ln_up`]).
fn ln_down(s: f64, m: f64, eps: f64) -> f64 {
    if s <= 0.0 {
        return f64::NEG_INFINITY;
    }
    let l = s.ln();
    let v = m + l;
    v - 1.25 * (eps + 2.0 * U * (l.abs() + v.abs() + 1.0))
}

/// [`Lattice::coarsen_pessimistic`] by residue tables, when the steps allow it.
pub(super) fn coarsen_up(lat: &Lattice, d: f64, max_len: usize) -> Option<Result<Lattice>> {
    let (r, e) = ratio(lat, d)?;
    Some(split_by_residue(lat, d, r, e, max_len))
}

/// Connect the dots by residue: the share `w_i = (1 − e^{−g})/(1 − e^{−Δ})` sent up is
/// taken at the largest gap `g = i·s + E` (more mass up can only raise δ, and an atom a
/// hair below its coarse point, `i = 0`, then has all its mass at or above it), rounded
/// up, and the rest `1 − w_i` rounded up (no less mass in all).
fn split_by_residue(lat: &Lattice, d: f64, r: i64, e: f64, max_len: usize) -> Result<Lattice> {
    let s = lat.step;
    let infl = (8.0 * f64::EPSILON).ln_1p();
    let dm_lo = lower(-(-d).exp_m1(), 4.0 * U);
    let mut w_up = Vec::with_capacity(r as usize);
    let mut w_lo = Vec::with_capacity(r as usize);
    for i in 0..r {
        // fl(i·s) is within u of i·s, the sum within u of its own value: the 2u more
        // makes the gap at least i·s + E.
        let gap = upper(i as f64 * s + e, 2.0 * U);
        let f = upper(-(-gap).exp_m1(), 4.0 * U);
        let mut w = upper(f / dm_lo, 0.0).min(1.0);
        if w > 0.0 && w < SHARE_FLOOR {
            w = SHARE_FLOOR;
        }
        // 1 − w is exact for w ≥ 1/2 (Sterbenz) and for w = 0.
        let rest = if w == 0.0 || w >= 0.5 {
            1.0 - w
        } else {
            upper(1.0 - w, 0.0).min(1.0)
        };
        w_up.push(w);
        w_lo.push(rest);
    }
    let n0 = lat.lo;
    let len = lat.ln_pmf.len() as i64;
    let c_first = n0.div_euclid(r);
    let c_last = (n0 + len - 1).div_euclid(r);
    let bins = (c_last - c_first + 2) as usize;
    // ln of the mass each coarse point receives from the cell at it (lo) and from the
    // cell below (hi), each raised by its roundings.
    let mut from_cell = vec![f64::NEG_INFINITY; bins];
    let mut from_below = vec![f64::NEG_INFINITY; bins];
    // Parts of atoms too far below their cell's scale: (point, ln mass raised).
    let mut far: Vec<(usize, f64)> = Vec::new();
    for c in c_first..=c_last {
        let a = (c * r - n0).max(0);
        let b = ((c + 1) * r - n0).min(len);
        let cell = &lat.ln_pmf[a as usize..b as usize];
        let m = cell.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if m == f64::NEG_INFINITY {
            continue;
        }
        let i0 = (n0 + a - c * r) as usize;
        let at = (c - c_first) as usize;
        let (mut s_lo, mut s_up, mut amax, mut k) = (0.0, 0.0, 0.0f64, 0u32);
        for (t, &lp) in cell.iter().enumerate() {
            if lp == f64::NEG_INFINITY {
                continue;
            }
            let x = lp - m;
            if x < -SPAN {
                // Far below its cell's scale: its two parts in log space.
                for (to, w) in [(at, w_lo[i0 + t]), (at + 1, w_up[i0 + t])] {
                    if w > 0.0 {
                        let lw = w.ln();
                        let v = lp + lw;
                        far.push((to, v + chain_rounding(&[lp, lw, v, v])));
                    }
                }
                continue;
            }
            amax = amax.max(-x);
            let ex = x.exp();
            s_lo += ex * w_lo[i0 + t];
            s_up += ex * w_up[i0 + t];
            k += 1;
        }
        let eps = sum_error(amax, k);
        from_cell[at] = ln_up(s_lo, m, eps);
        from_below[at + 1] = ln_up(s_up, m, eps);
    }
    // log_add's exp, ln_1p and sum, raised by their roundings.
    let add_up = |a: f64, b: f64| {
        let x = log_add(a, b);
        if a == f64::NEG_INFINITY || b == f64::NEG_INFINITY {
            x
        } else {
            x + chain_rounding(&[a, b, a - b, x, x])
        }
    };
    for (to, v) in far {
        from_cell[to] = add_up(from_cell[to], v);
    }
    let v: Vec<f64> = from_cell
        .iter()
        .zip(&from_below)
        .map(|(&a, &b)| {
            let x = add_up(a, b);
            if x == f64::NEG_INFINITY {
                return x;
            }
            // The inflation and its addition's rounding.
            let y = x + infl;
            y + chain_rounding(&[y, y])
        })
        .collect();
    trimmed(v, c_first, d, lat.ln_inf + infl, max_len)
}

/// The lattice of the coarse masses `v` (the first at index `lo`) without their empty
/// ends, as [`LogDense::finish`] forms it.
fn trimmed(v: Vec<f64>, lo: i64, d: f64, ln_inf: f64, max_len: usize) -> Result<Lattice> {
    let Some(first) = v.iter().position(|&x| x > f64::NEG_INFINITY) else {
        return Ok(Lattice {
            step: d,
            lo: 0,
            ln_pmf: vec![f64::NEG_INFINITY],
            ln_inf,
        });
    };
    let last = v
        .iter()
        .rposition(|&x| x > f64::NEG_INFINITY)
        .unwrap_or(first);
    let n = last - first + 1;
    if n > max_len {
        return Err(too_many_bins(n as f64));
    }
    Ok(Lattice {
        step: d,
        lo: lo + first as i64,
        ln_pmf: v[first..=last].to_vec(),
        ln_inf,
    })
}

/// [`Lattice::coarsen_optimistic`] by residue tables, when the steps allow it.
pub(super) fn coarsen_down(
    lat: &Lattice,
    d: f64,
    max_len: usize,
    uses: u64,
) -> Option<Result<Lattice>> {
    let (r, e) = ratio(lat, d)?;
    let t = PourTables::new(lat.step, r, e)?;
    Some(pour_by_residue(lat, d, &t, max_len, uses))
}

/// The pour's factors by residue. On this side an atom `n = jr + i` is counted in the
/// cell below `(j+1)Δ` with `i ∈ [1, r]` (an atom a hair from a coarse point is taken as
/// just below it: taking it above could raise its loss). `excess[i]` is a lower bound of
/// `1 − e^{−(x − jΔ)}` (at the least gap `i·s − E`), `deficit[i]` an upper bound of
/// `e^{(j+1)Δ − x} − 1` (at the largest distance `(r − i)·s + E`), `reach[i]` that
/// distance.
struct PourTables {
    r: i64,
    /// Whether `E = 0`: an atom with `i = r` is then exactly on its coarse point.
    exact: bool,
    excess: Vec<f64>,
    deficit: Vec<f64>,
    reach: Vec<f64>,
}

impl PourTables {
    /// `None` when some residue's least gap is not positive (E too large for the step).
    fn new(s: f64, r: i64, e: f64) -> Option<Self> {
        let n = r as usize + 1;
        let (mut excess, mut deficit, mut reach) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        for i in 1..=r {
            let gap = lower(lower(i as f64 * s, 0.0) - e, 0.0);
            if gap.is_nan() || gap <= 0.0 {
                return None;
            }
            excess[i as usize] = lower(-(-gap).exp_m1(), 4.0 * U);
            let dist = upper(upper((r - i) as f64 * s, 0.0) + e, 0.0);
            let mut b = upper(dist.exp_m1(), 4.0 * U);
            if b > 0.0 && b < SHARE_FLOOR {
                b = SHARE_FLOOR;
            }
            deficit[i as usize] = b;
            reach[i as usize] = dist;
        }
        Some(Self {
            r,
            exact: e == 0.0,
            excess,
            deficit,
            reach,
        })
    }
}

/// The grid point being filled: `ln` scale `m`, and relative to `e^m` the P-mass `p`,
/// the excess `a = Σ p_n(1 − e^{kΔ − x_n})` of the atoms above `kΔ` and the deficit
/// `b = Σ p_n(e^{kΔ − x_n} − 1)` of those below it taken in whole, with the counts and
/// the largest exponent argument that bound their roundings.
struct Point {
    k: i64,
    m: f64,
    p: f64,
    a: f64,
    b: f64,
    np: u32,
    na: u32,
    nb: u32,
    amax: f64,
}

impl Point {
    /// A point started by the fraction `frac` of the atom `n = cr + i` of log-mass `lp`
    /// (fine step `s`): at `(c+1)Δ` when the atom is certainly at or above it (exactly on
    /// it when `E = 0`; else as the atom-by-atom pour decides, from the exact gap), its
    /// excess then taken as 0; otherwise at `cΔ`.
    #[allow(clippy::too_many_arguments)]
    fn start(t: &PourTables, n: i64, c: i64, i: usize, lp: f64, frac: f64, s: f64, d: f64) -> Self {
        let on_point = i as i64 == t.r
            && (t.exact || {
                let nf = n as f64;
                let x = nf * s;
                let (g, e) = grid_gap(x, nf.mul_add(s, -x), c + 1, d);
                g - e >= 0.0
            });
        Self {
            k: if on_point { c + 1 } else { c },
            m: lp,
            p: frac,
            a: if on_point { 0.0 } else { frac * t.excess[i] },
            b: 0.0,
            np: 1,
            na: 1,
            nb: 0,
            amax: 0.0,
        }
    }

    fn a_lo(&self) -> f64 {
        lower(self.a, sum_error(self.amax, self.na))
    }

    fn b_hi(&self) -> f64 {
        upper(self.b, sum_error(self.amax, self.nb))
    }

    /// The point's mixture as a pour carry: its loss `kΔ − ln(1 − a/p)` lowered by its
    /// roundings (at `kΔ` when the excess is not certainly positive), its mass lowered.
    fn carry(&self, d: f64, defl: f64) -> Item {
        let eps_p = sum_error(self.amax, self.np);
        let lp = ln_down(self.p, self.m, eps_p) + defl;
        let lp = lp - 2.0 * U * (lp.abs() + 1.0);
        let (g, g_lo) = grid_point(self.k, d);
        let avail = self.a_lo() - self.b_hi();
        if avail.is_nan() || avail <= 0.0 {
            return (g, g_lo, lp);
        }
        let frac = lower(avail / upper(self.p, eps_p), 0.0).min(1.0 - f64::EPSILON);
        let off = lower(-(-frac).ln_1p(), 4.0 * U);
        let x = g + off;
        (
            x - 3.0 * (U * x.abs() + g_lo.abs()) - f64::MIN_POSITIVE,
            0.0,
            lp,
        )
    }
}

/// `1 − θ` rounded down (the atom's two parts sum to at most its mass).
fn rest_of(theta: f64) -> f64 {
    if theta == 0.0 || theta >= 0.5 {
        // Exact (Sterbenz).
        1.0 - theta
    } else {
        lower(1.0 - theta, 0.0)
    }
}

/// The pour by residue over the lattice from its top down (the module docs of
/// `lattice`): the atoms above the point being filled are merged into it, and atoms
/// below it are taken in whole while the merged excess covers their deficit, then the
/// fraction θ of the next that puts the mixture at the point; the rest of that atom
/// starts the next point. θ is formed from the excess at its lower bound and the
/// deficits at their upper bounds, shrunk by 1e-12: the mixture's loss stays at or above
/// the point. An atom too far from its point's scale hands the rest to the atom-by-atom
/// pour, and so does the last carry ([`place_last_carry`]).
fn pour_by_residue(
    lat: &Lattice,
    d: f64,
    t: &PourTables,
    max_len: usize,
    uses: u64,
) -> Result<Lattice> {
    let defl = (-8.0 * f64::EPSILON).ln_1p();
    let r = t.r;
    let mut dense = LogDense::new(false, lat.ln_pmf.len() / r as usize + 4);
    let mut point: Option<Point> = None;
    let push = |dense: &mut LogDense, k: i64, s: f64, m: f64, eps: f64| {
        let v = ln_down(s, m, eps) + defl;
        dense.push(k, v - 2.0 * U * (v.abs() + 1.0));
    };
    for (idx, &lp) in lat.ln_pmf.iter().enumerate().rev() {
        if lp == f64::NEG_INFINITY {
            continue;
        }
        let n = lat.lo + idx as i64;
        let c = (n - 1).div_euclid(r);
        let i = (n - c * r) as usize;
        let Some(pt) = point.as_mut() else {
            point = Some(Point::start(t, n, c, i, lp, 1.0, lat.step, d));
            continue;
        };
        let x = lp - pt.m;
        if x.is_nan() || x.abs() > SPAN {
            // Hand over to the atom-by-atom pour: the point as its carry, the rest as items.
            let carry = pt.carry(d, defl);
            let items = lat.items_below(idx + 1, defl);
            return pour_onto(
                dense,
                Some(carry),
                items,
                d,
                lat.ln_inf + defl,
                max_len,
                uses,
            );
        }
        let ex = x.exp();
        let amax = pt.amax.max(x.abs());
        if c == pt.k {
            // Above the point: merged into it.
            pt.p += ex;
            pt.a += ex * t.excess[i];
            pt.np += 1;
            pt.na += 1;
            pt.amax = amax;
            continue;
        }
        // Below the point: its deficit, measured from kΔ.
        let f = if c == pt.k - 1 {
            t.deficit[i]
        } else {
            let dist = upper(upper((pt.k - c - 1) as f64 * d, 0.0) + t.reach[i], 0.0);
            upper(dist.exp_m1(), 4.0 * U)
        };
        let dd = ex * f;
        let a_lo = lower(pt.a, sum_error(amax, pt.na));
        let b_new = upper(pt.b + dd, sum_error(amax, pt.nb + 1));
        if dd == 0.0 || b_new <= a_lo {
            // Taken in whole: the merged excess still covers the deficits.
            pt.p += ex;
            pt.b += dd;
            pt.np += 1;
            pt.nb += 1;
            pt.amax = amax;
            continue;
        }
        let avail = a_lo - upper(pt.b, sum_error(amax, pt.nb));
        let dd_hi = upper(dd, sum_error(x.abs(), 1));
        let theta = if avail > 0.0 {
            (avail / dd_hi * (1.0 - 1e-12)).min(1.0)
        } else {
            0.0
        };
        let s = pt.p + theta * ex;
        push(&mut dense, pt.k, s, pt.m, sum_error(amax, pt.np + 1));
        let rest = rest_of(theta);
        point = (rest > 0.0).then(|| Point::start(t, n, c, i, lp, rest, lat.step, d));
    }
    if let Some(pt) = point {
        let (x, x_lo, lp) = pt.carry(d, defl);
        place_last_carry(&mut dense, x, x_lo, lp, d, uses)?;
    }
    dense.finish(d, lat.ln_inf + defl, max_len)
}

#[cfg(test)]
mod tests {
    use super::super::tests::delta_fixed;
    use super::*;
    use crate::accountant::core::exact_exp::rat;
    use num_bigint::BigInt;
    use num_rational::BigRational;
    use num_traits::ToPrimitive;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    /// A fine lattice for the residue paths: step `s`, ratio `r`, first index near 0 or
    /// far from it (where the coarse step's rounding, `E`, is not 0 for most `r`), and
    /// masses of one of four shapes: smooth, random, with a cliff of 650 nats inside a
    /// cell (beyond the exponent span), or with empty runs several cells long.
    fn fine_lattice(rng: &mut Pcg64, case: usize) -> (Lattice, f64) {
        let s = [1e-6, 3.7e-4, 0.01, 0.13, 1.3e-13][case % 5];
        let r = [1i64, 2, 3, 5, 7, 16, 100][case % 7];
        let d = s * r as f64;
        let reach = if s < 1e-9 { 1e-10 } else { 200.0 };
        let lo = if case.is_multiple_of(3) {
            rng.gen_range(-3 * r..3 * r)
        } else {
            (rng.gen_range(-reach..reach) / s) as i64
        };
        let len = rng.gen_range(2 * r + 1..3 * r + 4) as usize;
        let lp0 = rng.gen_range(-60.0..-1.0);
        let shape = (case / 7) % 4;
        let mut ln_pmf: Vec<f64> = (0..len)
            .map(|t| {
                let z = (t as f64 - len as f64 / 2.0) / (len as f64);
                match shape {
                    0 => lp0 - 8.0 * z * z,
                    1 => lp0 - rng.gen_range(0.0..4.0),
                    2 => lp0 - if t < len / 2 { 0.0 } else { 650.0 } - rng.gen_range(0.0..1.0),
                    _ => lp0 - rng.gen_range(0.0..2.0),
                }
            })
            .collect();
        if shape == 3 {
            // Empty runs up to three cells long.
            let a = rng.gen_range(0..len);
            let b = (a + rng.gen_range(1..3 * r as usize + 2)).min(len - 1);
            for v in &mut ln_pmf[a..b] {
                *v = f64::NEG_INFINITY;
            }
        }
        if rng.gen_bool(0.2) {
            ln_pmf[rng.gen_range(0..len)] = f64::NEG_INFINITY;
        }
        let ln_inf = if rng.gen_bool(0.5) {
            lp0 - 5.0
        } else {
            f64::NEG_INFINITY
        };
        (
            Lattice {
                step: s,
                lo,
                ln_pmf,
                ln_inf,
            },
            d,
        )
    }

    /// `(exact position, ln p)` of a lattice's atoms.
    fn exact_atoms(lat: &Lattice) -> Vec<(BigRational, f64)> {
        lat.ln_pmf
            .iter()
            .enumerate()
            .filter(|(_, &v)| v > f64::NEG_INFINITY)
            .map(|(i, &v)| {
                let j = lat.lo + i as i64;
                (
                    BigRational::from_integer(BigInt::from(j)) * rat(lat.step),
                    v,
                )
            })
            .collect()
    }

    /// δ at `eps` of a lattice in floating point (for comparing two paths' tightness).
    fn delta_f64(lat: &Lattice, eps: f64) -> f64 {
        lat.ln_pmf
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let x = lat.loss(i);
                if x > eps {
                    v.exp() * -(eps - x).exp_m1()
                } else {
                    0.0
                }
            })
            .sum()
    }

    /// The ε at which two lattices are compared: each coarse point, the midpoints, and
    /// some fine atoms and points just below them.
    fn probes(fine: &[(BigRational, f64)], out: &[(BigRational, f64)], d: f64) -> Vec<BigRational> {
        let mut eps = Vec::new();
        for (x, _) in out {
            eps.push(x.clone());
            eps.push(x - rat(d * 0.5));
        }
        for (x, _) in fine.iter().step_by((fine.len() / 12).max(3)) {
            eps.push(x.clone());
            eps.push(x - rat(d * 1e-9));
        }
        eps
    }

    /// Connect the dots by residue, on steps down to 1e-13, ratios 1 to 100 (powers of
    /// two, where the coarse step is exact, and others, where it is rounded and atoms on
    /// a coarse point's float may lie a hair on either side of the real one), masses
    /// spread over 650 nats inside a cell and empty runs: in exact arithmetic its δ at
    /// every coarse point, midpoint and probed atom is at least the fine lattice's, and
    /// its `+∞` mass at least the fine one's. In floating point its δ is within 1e-9 of
    /// the atom-by-atom split's (the tables lose nothing the split keeps).
    #[test]
    fn residue_splits_stay_above_the_exact_delta_in_exact_arithmetic() {
        let mut rng = Pcg64::seed_from_u64(21);
        let mut rounded = 0;
        for case in 0..56 {
            let (fine, d) = fine_lattice(&mut rng, case);
            let (_, big_e) = ratio(&fine, d).expect("an integer ratio");
            rounded += usize::from(big_e > 0.0);
            let out = coarsen_up(&fine, d, 1 << 20)
                .expect("the residue path")
                .unwrap();
            let slow = fine.split_atoms(d, 1 << 20).unwrap();
            let mass: f64 = fine.ln_pmf.iter().map(|v| v.exp()).sum();
            assert!(out.ln_inf >= fine.ln_inf, "case {case}: +∞ mass");
            let atoms = exact_atoms(&fine);
            let placed = exact_atoms(&out);
            for eps in probes(&atoms, &placed, d) {
                let (up_lo, _) = delta_fixed(&placed, &eps);
                let (_, true_hi) = delta_fixed(&atoms, &eps);
                let e = eps.to_f64().expect("finite");
                assert!(
                    up_lo >= true_hi,
                    "case {case}: s = {:e}, r = {}: δ below the exact one at ε = {e}",
                    fine.step,
                    (d / fine.step).round()
                );
                // Shares are taken at the gap's largest, up to `E` above the atom-by-atom
                // split's: at most about E/Δ more of each atom's mass one step up.
                let (a, b) = (delta_f64(&out, e), delta_f64(&slow, e));
                let tol = 4.0 * big_e / fine.step.min(1.0) * mass;
                assert!(
                    a <= b * (1.0 + 1e-9) + tol + 1e-300,
                    "case {case}: looser at {e}: {a:e} > {b:e}"
                );
            }
        }
        assert!(
            rounded > 15,
            "only {rounded} cases with a rounded coarse step"
        );
    }

    /// The pour by residue on the same lattices (its hand-over to the atom-by-atom pour
    /// taken at the cliffs, its far-cell deficits at the empty runs): in exact arithmetic
    /// its δ at every probe is at most the fine lattice's, and its `+∞` mass at most the
    /// fine one's; in floating point its δ is within 1e-9 of the atom-by-atom pour's.
    #[test]
    fn residue_pours_stay_below_the_exact_delta_in_exact_arithmetic() {
        let mut rng = Pcg64::seed_from_u64(22);
        let mut rounded = 0;
        for case in 0..56 {
            let (fine, d) = fine_lattice(&mut rng, case);
            let (_, e) = ratio(&fine, d).expect("an integer ratio");
            rounded += usize::from(e > 0.0);
            let uses = 1 + (case as u64 % 4) * 1000;
            let out = coarsen_down(&fine, d, 1 << 20, uses)
                .expect("the residue path")
                .unwrap();
            let slow = fine.pour_atoms(d, 1 << 20, uses).unwrap();
            assert!(out.ln_inf <= fine.ln_inf, "case {case}: +∞ mass");
            let atoms = exact_atoms(&fine);
            let placed = exact_atoms(&out);
            for eps in probes(&atoms, &placed, d) {
                let (low_lo, _) = delta_fixed(&placed, &eps);
                let (_, true_hi) = delta_fixed(&atoms, &eps);
                let e = eps.to_f64().expect("finite");
                assert!(
                    low_lo <= true_hi,
                    "case {case}: s = {:e}, r = {}: δ above the exact one at ε = {e}",
                    fine.step,
                    (d / fine.step).round()
                );
                let (a, b) = (delta_f64(&out, e), delta_f64(&slow, e));
                assert!(
                    a >= b * (1.0 - 1e-9) - 1e-300,
                    "case {case}: looser at {e}: {a:e} < {b:e}"
                );
            }
        }
        assert!(
            rounded > 15,
            "only {rounded} cases with a rounded coarse step"
        );
    }

    /// The linear-space sums both paths form, `Σ w_i e^{lp_i − m}` with `m` the largest
    /// log-mass, masses near e^-700 (logs known to 8e-14) spread over up to 600 nats, and
    /// factors in (0, 1], taken back to logs by `ln_up` and `ln_down` with `sum_error`:
    /// in exact arithmetic the first is at or above the exact `ln Σ w_i e^{lp_i}` and the
    /// second at or below it. Without the error bounds about half of them fall on the
    /// wrong side.
    #[test]
    fn linear_sums_land_on_their_side_in_exact_arithmetic() {
        use crate::accountant::core::exact_exp::{exp_fixed, P};
        let mut rng = Pcg64::seed_from_u64(23);
        let one = BigInt::from(1) << P;
        for case in 0..200 {
            let n = rng.gen_range(1..40);
            let spread = [1.0, 30.0, 600.0][case % 3];
            let base = rng.gen_range(-705.0..-1.0);
            let terms: Vec<(f64, f64)> = (0..n)
                .map(|_| (base - rng.gen_range(0.0..spread), rng.gen_range(1e-6..1.0)))
                .collect();
            let m = terms.iter().map(|t| t.0).fold(f64::NEG_INFINITY, f64::max);
            let (mut sum, mut amax) = (0.0, 0.0f64);
            for &(lp, w) in &terms {
                let x = lp - m;
                amax = amax.max(x.abs());
                sum += x.exp() * w;
            }
            let eps = sum_error(amax, n);
            let (hi, lo) = (ln_up(sum, m, eps), ln_down(sum, m, eps));
            // Σ w e^{lp − v} against 1 in fixed point, each exponential at the end of its
            // enclosure that makes the check harder to pass.
            let side = |v: f64, upper_end: bool| -> BigInt {
                terms
                    .iter()
                    .map(|&(lp, w)| {
                        let (e_lo, e_hi) = exp_fixed(&(rat(lp) - rat(v)));
                        let e = if upper_end { e_hi } else { e_lo };
                        let x = BigRational::from_integer(e) * rat(w);
                        if upper_end {
                            x.ceil().to_integer()
                        } else {
                            x.floor().to_integer()
                        }
                    })
                    .sum()
            };
            assert!(
                side(hi, true) <= one,
                "case {case}: ln_up below the exact sum"
            );
            assert!(
                side(lo, false) >= one,
                "case {case}: ln_down above the exact sum"
            );
        }
    }
}
