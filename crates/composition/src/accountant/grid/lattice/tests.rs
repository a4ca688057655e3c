//! Tests of the parent module.

use super::*;
use crate::accountant::core::exact_exp::{exp_fixed, rat, sum_exp_vs_one, P};
use crate::accountant::laws::BoundedNoiseLaw;
use densities::bounded::BoundedFamily;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Signed;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// Log-space sums at masses down to e^-750 (where a log is known only to 1.7e-13
/// relative, 750 times a fixed 8u): each grid point's sum is at or above the exact
/// sum of its masses on the pessimistic side and at or below it on the optimistic
/// one, checked in exact arithmetic (docs/accountant.md §5). Without the slack about
/// half of these sums fall on the wrong side.
#[test]
fn log_space_sums_land_on_their_side_in_exact_arithmetic() {
    let mut rng = Pcg64::seed_from_u64(5);
    for _ in 0..150 {
        let base = rng.gen_range(-750.0..-1.0);
        let n = rng.gen_range(2..6);
        let lps: Vec<f64> = (0..n).map(|_| base - rng.gen_range(0.0..6.0)).collect();
        for up in [true, false] {
            let mut dense = LogDense::new(up, n);
            for &lp in &lps {
                dense.push(7, lp);
            }
            let lat = dense.finish(0.1, f64::NEG_INFINITY, 16).unwrap();
            let v = lat.ln_pmf[0];
            let ds: Vec<BigRational> = lps.iter().map(|&lp| rat(lp) - rat(v)).collect();
            let below_one = sum_exp_vs_one(&ds);
            assert_eq!(below_one, Some(up), "up {up}: {lps:?} -> {v}");
        }
    }
}

/// Connect-the-dots splits of atoms at losses up to ±300 on steps down to 1e-6 (a
/// step far below the loss's magnitude amplifies the rounding of `1 − e^{a − x}`),
/// masses down to e^-700, atoms on, or a few ulps off, the floating-point grid points
/// (whose real values `jΔ` they may lie on either side of), and atoms at the rounded
/// points of a finer lattice (real position `n·Δ_f`): in exact arithmetic, the masses
/// sit at real grid points `a < x ≤ b` or one point at or above `x`, the upper point's
/// mass is at least the exact share `p(1 − e^{a−x})/(1 − e^{−Δ})` and the masses sum to
/// at least `p` (so δ can only grow).
#[test]
fn atom_splits_dominate_the_exact_split_in_exact_arithmetic() {
    let mut rng = Pcg64::seed_from_u64(6);
    let infl = (8.0 * f64::EPSILON).ln_1p();
    let one = BigInt::from(1) << P;
    let zero = BigRational::from_integer(0.into());
    let (mut near, mut single) = (0, 0);
    for case in 0..400 {
        let d = [1e-6, 3.7e-4, 0.01, 0.37][case % 4];
        let j0 = (rng.gen_range(-300.0..300.0) / d) as i64;
        // (x_hi, x_lo, the exact real position)
        let (x_hi, x_lo, x) = match case % 3 {
            0 => {
                // On, or a few ulps either side of, fl(j0·Δ).
                let g = j0 as f64 * d;
                let mut x = g;
                let steps: i64 = rng.gen_range(-3..4);
                for _ in 0..steps.abs() {
                    let up = (steps > 0) == (x > 0.0);
                    x = f64::from_bits(if up { x.to_bits() + 1 } else { x.to_bits() - 1 });
                }
                near += 1;
                (x, 0.0, rat(x))
            }
            1 => {
                // A finer lattice's point n·Δ_f, Δ_f = Δ/r, passed rounded.
                let r = [1.0, 2.0, 3.0, 7.0][rng.gen_range(0..4)];
                let df = d / r;
                let n = (j0 as f64 * r + rng.gen_range(0..8) as f64).round();
                let xh = n * df;
                let exact = BigRational::from_integer(BigInt::from(n as i64)) * rat(df);
                (xh, n.mul_add(df, -xh), exact)
            }
            _ => {
                let x = (j0 as f64 + rng.gen_range(0.0..1.0)) * d;
                (x, 0.0, rat(x))
            }
        };
        let lp = rng.gen_range(-700.0..0.0);
        let ln_dm = (-(-d).exp_m1()).ln();
        let mut dense = LogDense::new(true, 2);
        dense.split_atom(x_hi, x_lo, lp, d, ln_dm, infl).unwrap();
        let mut idx: Vec<i64> = dense.entries.iter().map(|e| e.0).collect();
        idx.sort_unstable();
        idx.dedup();
        let mass = |k: i64| {
            dense
                .entries
                .iter()
                .filter(|e| e.0 == k)
                .map(|e| e.1)
                .fold(f64::NEG_INFINITY, log_add)
        };
        let point = |k: i64| BigRational::from_integer(BigInt::from(k)) * rat(d);
        let what = format!("case {case}: x = {x_hi:e} + {x_lo:e}, d = {d:e}, lp = {lp}");
        if idx.len() == 1 {
            // All of it at one point, which must lie at or above the atom.
            single += 1;
            assert!(point(idx[0]) >= x, "{what}: placed below the atom");
            let total = sum_exp_vs_one(&[rat(mass(idx[0])) - rat(lp)]);
            assert_eq!(total, Some(false), "{what}: mass below p");
            continue;
        }
        assert_eq!(idx.len(), 2, "{what}");
        let j = idx[0];
        assert_eq!(idx[1], j + 1, "{what}");
        let gap = &x - point(j);
        assert!(
            gap >= zero && gap < rat(d),
            "{what}: not between its points"
        );
        let (lo_m, up_m) = (mass(j), mass(j + 1));
        // Exact share ≤ e^{up − lp}  ⟸  (1 − e^{−gap}) ≤ e^{up − lp}(1 − e^{−Δ}), the
        // left side rounded up and the right side down.
        let left_hi = &one - exp_fixed(&(-gap)).0;
        let right_lo =
            (exp_fixed(&(rat(up_m) - rat(lp))).0 * (&one - exp_fixed(&(-rat(d))).1)) >> P;
        assert!(
            left_hi <= right_lo,
            "{what}: upper mass {up_m} below the exact share"
        );
        let total = sum_exp_vs_one(&[rat(up_m) - rat(lp), rat(lo_m) - rat(lp)]);
        assert_eq!(total, Some(false), "{what}: the two masses below p");
    }
    assert!(near > 80 && single > 10, "near {near}, single {single}");
}

/// `(lo, hi)` fixed-point enclosure of `Σ_i e^{lp_i}(1 − e^{ε − x_i})` over `x_i > ε`
/// (δ at ε of atoms at exact real losses).
pub(super) fn delta_fixed(atoms: &[(BigRational, f64)], eps: &BigRational) -> (BigInt, BigInt) {
    let (mut lo, mut hi) = (BigInt::from(0), BigInt::from(0));
    for (x, lp) in atoms {
        if x <= eps {
            continue;
        }
        let (m_lo, m_hi) = exp_fixed(&rat(*lp));
        let (w_lo, w_hi) = exp_fixed(&(rat(*lp) + eps - x));
        lo += m_lo - w_hi;
        hi += m_hi - w_lo;
    }
    (lo, hi)
}

/// The dominated discretisation (the pour) of atoms at losses up to ±300, on, or a
/// few ulps off, the floating-point grid points, or at a finer lattice's real points
/// `n·Δ_f` (coarsened), masses near e^-600: its δ at every grid point, atom and
/// midpoint is at most the atoms' exact δ, in exact arithmetic.
#[test]
fn pours_stay_below_the_exact_delta_in_exact_arithmetic() {
    let mut rng = Pcg64::seed_from_u64(8);
    for case in 0..50 {
        // Steps down to 1e-13 at losses of 1e-10 (bounded noise of a large radius,
        // where a merged atom's loss as a difference of logs of masses would be known
        // only to a tenth of a step).
        let d = [1e-5, 3.7e-4, 0.01, 0.37, 1.3e-13][case % 5];
        let reach = if d < 1e-9 { 1e-10 } else { 300.0 };
        let j0 = (rng.gen_range(-reach..reach) / d) as i64;
        let n_atoms = rng.gen_range(2..7);
        let lp0 = rng.gen_range(-650.0..-1.0);
        // (exact position, ln p) and the lattice they came from or the float items.
        let (atoms, lat): (Vec<(BigRational, f64)>, Lattice) = if case % 2 == 0 {
            let r = [2.0, 3.0, 4.0, 7.0][rng.gen_range(0..4)];
            let df = d / r;
            let base = (j0 as f64 * r).round() as i64;
            let mut ln_pmf = vec![f64::NEG_INFINITY; 3 * r as usize];
            let mut atoms = Vec::new();
            for _ in 0..n_atoms {
                let i = rng.gen_range(0..ln_pmf.len());
                if ln_pmf[i] > f64::NEG_INFINITY {
                    continue;
                }
                ln_pmf[i] = lp0 - rng.gen_range(0.0..3.0);
                let n = base + i as i64;
                atoms.push((
                    BigRational::from_integer(BigInt::from(n)) * rat(df),
                    ln_pmf[i],
                ));
            }
            let fine = Lattice {
                step: df,
                lo: base,
                ln_pmf,
                ln_inf: f64::NEG_INFINITY,
            };
            (
                atoms,
                fine.coarsen_optimistic(d, 1 << 20, 1 + case as u64)
                    .unwrap(),
            )
        } else {
            let mut items = Vec::new();
            let mut atoms = Vec::new();
            for _ in 0..n_atoms {
                let g = (j0 + rng.gen_range(0..3)) as f64 * d;
                let mut x = g;
                for _ in 0..rng.gen_range(0..4) {
                    x = f64::from_bits(x.to_bits() + 1);
                }
                if rng.gen_bool(0.3) {
                    x += rng.gen_range(0.0..d);
                }
                let lp = lp0 - rng.gen_range(0.0..3.0);
                items.push((x, 0.0, lp));
                atoms.push((rat(x), lp));
            }
            items.sort_by(|u, v| v.0.total_cmp(&u.0));
            (
                atoms,
                pour(items, d, f64::NEG_INFINITY, 1 << 20, 1 + case as u64).unwrap(),
            )
        };
        let out: Vec<(BigRational, f64)> = lat
            .ln_pmf
            .iter()
            .enumerate()
            .filter(|(_, &v)| v > f64::NEG_INFINITY)
            .map(|(i, &v)| {
                let j = lat.lo + i as i64;
                (BigRational::from_integer(BigInt::from(j)) * rat(d), v)
            })
            .collect();
        let mut eps: Vec<BigRational> = Vec::new();
        for (x, _) in atoms.iter().chain(&out) {
            eps.push(x.clone());
            eps.push(x - rat(d * 0.5));
            eps.push(x - rat(d * 1e-9));
        }
        for e in &eps {
            // The enclosures are about 2^-1780 wide: far below any rounding of f64, and
            // equality (an atom placed exactly) passes.
            let (low_lo, _) = delta_fixed(&out, e);
            let (_, true_hi) = delta_fixed(&atoms, e);
            assert!(
                low_lo <= true_hi,
                "case {case}: d = {d:e}, the pour's δ above the exact one at ε = {}",
                crate::accountant::core::exact_exp::approx(e).ln()
            );
        }
    }
}

/// `tilt_exponent`'s two parts sum to `λ·jΔ` within `4u²` of it, in exact arithmetic.
#[test]
fn tilt_exponents_are_exact_to_second_order() {
    let mut rng = Pcg64::seed_from_u64(7);
    for _ in 0..500 {
        let lambda = rng.gen_range(-50.0..50.0);
        let d = rng.gen_range(1e-7..0.1);
        let j = rng.gen_range(-(1i64 << 40)..(1i64 << 40));
        let (t, t_lo) = crate::accountant::compose::tilted::tilt_exponent(lambda, j, d);
        let exact = rat(lambda) * BigRational::from_integer(BigInt::from(j)) * rat(d);
        let err = (rat(t) + rat(t_lo) - &exact).abs();
        let bound = rat(4.0 * f64::EPSILON * f64::EPSILON * t.abs());
        assert!(err <= bound, "λ {lambda} j {j} d {d}");
    }
}

/// The subsampled law's cells are pointwise: split at any edges (between the cores by
/// `cells_between`, or at random edges, each part a call of its own) they are the
/// cells of one pass, bit for bit, in both directions and for both bases.
#[test]
fn subsampled_cells_split_anywhere_match_one_pass() {
    use crate::accountant::sampling::subsampled::{Base, Direction, SubsampledLaw};
    let mut rng = Pcg64::seed_from_u64(34);
    for (base, mu, q, dir) in [
        (Base::Gaussian, 0.5, 1e-4, Direction::Remove),
        (Base::Gaussian, 1.25, 1e-3, Direction::Add),
        (Base::Laplace, 1.0, 0.01, Direction::Remove),
    ] {
        let law = SubsampledLaw::new(base, mu, q, dir).unwrap();
        assert!(law.pointwise_cells());
        let r = law.continuous_range(-40.0).unwrap();
        // A few thousand cells: fewer than two chunks of CELL_CHUNK, shared between
        // the cores only by the pointwise rule.
        let d = (r.hi.min(r.lo + 30.0) - r.lo) / 3000.0;
        let ia = floor_index(r.lo, d).unwrap();
        let idx: Vec<i64> = (ia..=ia + 3000).collect();
        let edges: Vec<f64> = idx.iter().map(|&j| j as f64 * d).collect();
        let one = law.cells(&edges);
        let shared = cells_between(&law, &idx, d).unwrap();
        assert_eq!(one.len(), shared.len());
        // Split at random edges, each part a call of its own.
        let mut cuts: Vec<usize> = (0..7).map(|_| rng.gen_range(1..3000)).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut parts = Vec::new();
        let mut a = 0;
        for &c in cuts.iter().chain(std::iter::once(&3000)) {
            parts.extend(law.cells(&edges[a..=c]));
            a = c;
        }
        for (i, ((o, s), p)) in one.iter().zip(&shared).zip(&parts).enumerate() {
            let bits = |x: &(f64, f64)| (x.0.to_bits(), x.1.to_bits());
            assert_eq!(bits(o), bits(s), "cell {i}: shared between the cores");
            assert_eq!(bits(o), bits(p), "cell {i}: split at {cuts:?}");
        }
    }
}

/// Cells split between threads are the cells of one sequential pass over the same
/// edges, and both sides built from shared cells are the lattices built on their own.
#[test]
fn cells_computed_in_chunks_match_one_pass_and_both_sides_match() {
    let law = BoundedNoiseLaw::new(BoundedFamily::power(2.0).unwrap(), 100.0, 1.0).unwrap();
    let d = law.loss_scale() / 64.0;
    let g = GridCells::new(&law, d, -40.0, 1 << 22, f64::INFINITY).unwrap();
    let (cells, ia, _, _) = g.cells.as_ref().unwrap();
    assert!(cells.iter().all(|c| c.k == 1));
    assert!(
        cells.len() > 2 * CELL_CHUNK,
        "{} cells: not chunked",
        cells.len()
    );
    let edges: Vec<f64> = (0..=cells.len())
        .map(|i| (ia + i as i64) as f64 * d)
        .collect();
    let one = law.cells(&edges);
    for (i, (c, o)) in cells.iter().zip(&one).enumerate() {
        assert_eq!((c.lp, c.lm), *o, "cell {i}");
    }
    let p = Lattice::pessimistic_from(&law, &g, -40.0, 1 << 22).unwrap();
    let q = Lattice::optimistic_from(&law, &g, -40.0, 1 << 22).unwrap();
    assert_eq!(p, Lattice::pessimistic(&law, d, -40.0, 1 << 22).unwrap());
    assert_eq!(q, Lattice::optimistic(&law, d, -40.0, 1 << 22).unwrap());
}
