//! Tests of the parent module.

use super::*;
use crate::accountant::laws::GaussianLaw;

/// The decreasing-order sum (the one the window's choice of direct sums takes) never
/// exceeds `any_order_bound` of the sum in another order, over terms spread across
/// 600 orders of magnitude and orders chosen to round up (ascending) or down.
#[test]
fn the_any_order_bound_covers_the_sorted_sum() {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    for &len in &[1usize, 2, 7, 100, 4096, 100_000] {
        for spread in [0.0, 10.0, 300.0] {
            let mut v: Vec<f64> = (0..len)
                .map(|_| (1.0 + next()) * 10f64.powf(spread * (next() - 0.5)))
                .collect();
            let mut orders: Vec<Vec<f64>> = Vec::new();
            orders.push(v.clone());
            v.sort_by(|a, b| a.total_cmp(b));
            orders.push(v.clone());
            v.reverse();
            let sorted: f64 = v.iter().sum();
            for o in &orders {
                let rough: f64 = o.iter().sum();
                assert!(
                    sorted <= any_order_bound(rough, len),
                    "len {len}, spread {spread}: {sorted} > bound of {rough}"
                );
            }
        }
    }
    // The orders do round differently (were they alike, the loop above would test
    // nothing; it fails with the margin removed).
    let v: Vec<f64> = (0..4096).map(|i| 1.0 + i as f64 * 1e-3).collect();
    let asc: f64 = v.iter().sum();
    let desc: f64 = v.iter().rev().sum();
    assert!(asc != desc, "the test's orders round alike: {asc}");
}

/// The block tables' cumulants are the entry-by-entry ones ([`cgf`], one exponential
/// per entry) to 1e-12, on lattices with masses spread over 300 nats, at tilts of
/// both signs up to the block-span limit and beyond it (where they fall back to it).
#[test]
fn block_cumulants_match_the_entry_by_entry_sums() {
    let mut lats = Vec::new();
    for (n, lo, d) in [(5000usize, -300i64, 1e-3), (777, 12, 0.05), (64, -5, 0.3)] {
        let ln_pmf: Vec<f64> = (0..n)
            .map(|i| {
                let x = i as f64 / n as f64;
                if i % 97 == 13 {
                    f64::NEG_INFINITY
                } else {
                    -300.0 * x * x + (7.0 * x).sin()
                }
            })
            .collect();
        lats.push(Lattice {
            step: d,
            lo,
            ln_pmf,
            ln_inf: f64::NEG_INFINITY,
        });
    }
    let factors: Vec<Factor> = lats
        .iter()
        .zip([1u64, 30, 1000])
        .map(|(law, count)| Factor { law, count })
        .collect();
    let cum = Cumulants::new(&factors);
    for theta in [0.0, 1e-3, 0.5, -0.7, 3.0, 12.0, -12.0, 100.0, 1e4, -1e4] {
        let (a, b) = (cum.total(theta), total_cgf(&factors, theta));
        let close = |u: f64, v: f64| (u - v).abs() <= 1e-12 * (1.0 + v.abs());
        assert!(
            close(a.0, b.0) && close(a.1, b.1),
            "θ={theta}: {a:?} vs {b:?}"
        );
        assert!(
            (a.2 - b.2).abs() <= 1e-9 * (1.0 + b.2.abs()),
            "θ={theta}: {a:?} vs {b:?}"
        );
    }
}

/// One factor's window formed in one pass (the fused path) is the general path's to
/// the bit: values, error bound, margin and tails, on both sides and for both, for a
/// single use and for 40 and 3000 uses. Fails on any change to the sums' arithmetic
/// (seen failing on one ulp more in one error term).
#[test]
fn one_factor_fused_window_is_the_general_one_to_the_bit() {
    let (n, d) = (2000usize, 1e-3);
    let ln_pmf: Vec<f64> = (0..n)
        .map(|i| {
            let x = i as f64 / n as f64 - 0.3;
            -40.0 * x * x + (9.0 * x).sin() - 2.0
        })
        .collect();
    let law = Lattice {
        step: d,
        lo: -600,
        ln_pmf,
        ln_inf: f64::NEG_INFINITY,
    };
    for count in [1u64, 40, 3000] {
        let f = [Factor { law: &law, count }];
        for side in [None, Some(true), Some(false)] {
            for lambda in [0.0, 1.5] {
                let w = |fuse| {
                    TiltedSum::window(
                        &f,
                        lambda,
                        1 << 22,
                        f64::INFINITY,
                        side,
                        LN_ALIAS,
                        fuse,
                        LN_CUT,
                    )
                    .unwrap()
                };
                let (a, b) = (w(true), w(false));
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&a.values), bits(&b.values), "count {count} {side:?}");
                assert!(!a.values.is_empty());
                for (x, y) in [
                    (a.err_bin, b.err_bin),
                    (a.ln_margin, b.ln_margin),
                    (a.tail_lo, b.tail_lo),
                    (a.tail_hi, b.tail_hi),
                ] {
                    assert_eq!(x.to_bits(), y.to_bits(), "count {count} {side:?}");
                }
            }
        }
    }
}

/// Frequencies left out below a cut move no bin by more than their charge: windows
/// cut at e^{−3}, e^{−10} and [`LN_CUT`] against the uncut one (e^{−800}, below the
/// least double), one law (the fused pass) and two (the general path), both sides
/// and neither: every bin within the sum of the two windows' error bounds. At e^{−3}
/// the bins move by far more than the uncut window's own bound, so the test fails
/// when the charge is left out.
#[test]
fn frequencies_left_out_are_charged_to_every_bin() {
    let law = |n: usize, a: f64, lo: i64| Lattice {
        step: 1e-3,
        lo,
        ln_pmf: (0..n)
            .map(|i| {
                let x = i as f64 / n as f64 - 0.3;
                -a * x * x + (9.0 * x).sin() - 2.0
            })
            .collect(),
        ln_inf: f64::NEG_INFINITY,
    };
    let (l1, l2) = (law(2000, 40.0, -600), law(900, 15.0, -200));
    let one = [Factor {
        law: &l1,
        count: 40,
    }];
    let two = [
        Factor {
            law: &l1,
            count: 20,
        },
        Factor {
            law: &l2,
            count: 30,
        },
    ];
    for f in [&one[..], &two[..]] {
        for side in [None, Some(true), Some(false)] {
            let w = |cut| {
                TiltedSum::window(f, 1.5, 1 << 22, f64::INFINITY, side, LN_ALIAS, true, cut)
                    .unwrap()
            };
            let full = w(-800.0);
            for cut in [-3.0, -10.0, LN_CUT] {
                let c = w(cut);
                assert_eq!((c.w_lo, c.values.len()), (full.w_lo, full.values.len()));
                let worst = c
                    .values
                    .iter()
                    .zip(&full.values)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert!(
                    worst <= c.err_bin + full.err_bin,
                    "cut {cut}: a bin moved {worst:e}, bounds {:e} + {:e}",
                    c.err_bin,
                    full.err_bin
                );
                if cut == -3.0 {
                    assert!(
                        worst > 4.0 * full.err_bin,
                        "cut {cut}: moved only {worst:e}"
                    );
                }
            }
        }
    }
}

/// The frequencies left out at the production cut ([`LN_CUT`]) against their exact
/// powers, computed here in closed form (issue 57 item 3a): each factor is a law on
/// two or three lattice points, so its tilted transform at frequency k is a sum of two
/// or three phases, `Σ_j w_j e^{−2πi k j/n}` with `w_j ∝ p_j e^{λ x_j}` normalised
/// here, and the composed power is `Π |A_i(k)|^{c_i}`. Every frequency a window left
/// out has an exact power of at most `e^{LN_CUT}` (so it moves no bin by more than
/// `e^{LN_CUT}/n`), and the charge the window added to every bin is at least the sum
/// over them of `|P(k)|/n`, which bounds what they move any bin by. The two-point law
/// is set so that its composed power's least value is `e^{−101}`: dozens of
/// frequencies just below the cut, their sum at least a tenth of the charge (0.24 of
/// it: a charge four times too small fails). One factor (the fused pass) and two (the
/// general path), both sides and neither, λ = 0 and 0.8. Seen failing when frequencies
/// are left out below `e^{LN_CUT + 3}` while `2e^{LN_CUT}` is charged, and when the
/// charge is `0.1e^{LN_CUT}`; the comparison with the uncut window above passes both.
#[test]
fn frequencies_left_out_at_the_cut_weigh_less_than_their_charge() {
    let (d, g, g2) = (0.01, 40i64, 23i64);
    // A lattice with masses `p` at the indices `at`, the rest empty.
    let lattice = |at: &[i64], p: &[f64]| {
        let top = *at.last().unwrap();
        let mut ln_pmf = vec![f64::NEG_INFINITY; top as usize + 1];
        for (&j, &m) in at.iter().zip(p) {
            ln_pmf[j as usize] = m.ln();
        }
        Lattice {
            step: d,
            lo: 0,
            ln_pmf,
            ln_inf: f64::NEG_INFINITY,
        }
    };
    // ln |Σ w_j e^{−2πi k j/n}| with `w ∝ p e^{λ j d}`.
    let ln_abs = |at: &[i64], p: &[f64], lambda: f64, k: usize, n: usize| {
        let w: Vec<f64> = at
            .iter()
            .zip(p)
            .map(|(&j, &m)| m * (lambda * j as f64 * d).exp())
            .collect();
        let total: f64 = w.iter().sum();
        let (mut re, mut im) = (0.0, 0.0);
        for (&j, &v) in at.iter().zip(&w) {
            let r = ((k as u128 * j as u128) % n as u128) as f64;
            let th = -2.0 * std::f64::consts::PI * r / n as f64;
            re += v / total * th.cos();
            im += v / total * th.sin();
        }
        0.5 * (re * re + im * im).ln()
    };
    let (count_a, count_b) = (50u64, 12u64);
    let mut checked = 0;
    for lambda in [0.0, 0.8] {
        // The tilted masses (w, 1 − w) with |2w − 1|^50 = e^{−101}, untilted.
        let w = 0.5 * (1.0 + (-101.0f64 / count_a as f64).exp());
        let ratio = w / (1.0 - w) * (lambda * g as f64 * d).exp();
        let pa = [ratio / (1.0 + ratio), 1.0 / (1.0 + ratio)];
        let at_a = [0, g];
        let (at_b, pb) = ([0, g2, 2 * g2], [0.3, 0.45, 0.25]);
        let (la, lb) = (lattice(&at_a, &pa), lattice(&at_b, &pb));
        let one = [Factor {
            law: &la,
            count: count_a,
        }];
        let two = [
            Factor {
                law: &la,
                count: count_a,
            },
            Factor {
                law: &lb,
                count: count_b,
            },
        ];
        for (f, parts) in [(&one[..], 1), (&two[..], 2)] {
            for side in [None, Some(true), Some(false)] {
                let win = TiltedSum::window(
                    f,
                    lambda,
                    1 << 22,
                    f64::INFINITY,
                    side,
                    LN_ALIAS,
                    true,
                    LN_CUT,
                )
                .unwrap();
                let n = win.values.len();
                let (left, charge) = &win.left_out;
                let ln_power = |k: usize| {
                    let mut l = count_a as f64 * ln_abs(&at_a, &pa, lambda, k, n);
                    if parts == 2 {
                        l += count_b as f64 * ln_abs(&at_b, &pb, lambda, k, n);
                    }
                    l
                };
                let mut moved = 0.0;
                for &k in left {
                    let l = ln_power(k);
                    assert!(
                        l <= LN_CUT + 1e-9,
                        "λ {lambda}, {parts} laws, {side:?}: frequency {k} of {n} left out \
                         at power e^{l}"
                    );
                    moved += l.exp() / n as f64;
                }
                assert!(
                    moved <= *charge,
                    "λ {lambda}, {parts} laws, {side:?}: {} left out move a bin by up \
                     to {moved:e}, charged {charge:e}",
                    left.len()
                );
                assert!(left.len() >= 10, "only {} left out", left.len());
                if parts == 1 {
                    assert!(
                        moved >= 0.1 * charge,
                        "λ {lambda}, {side:?}: {moved:e} against {charge:e}"
                    );
                }
                checked += left.len();
            }
        }
    }
    assert!(checked > 100, "{checked}");
}

/// The Chernoff bound of a composed three-point law against its tails enumerated
/// exactly (the 6-fold law on 13 points by repeated convolution): never below them
/// at every point of the support and half a step around it, and exactly empty (−∞)
/// beyond the least and largest sums, where the bound's search once walked a hundred
/// doublings of the tilt towards t = ∞.
#[test]
fn chernoff_bounds_hold_up_to_the_support_ends_and_vanish_beyond_them() {
    let (d, lo) = (0.25, -1i64);
    let p = [0.5f64, 0.3, 0.2];
    let law = Lattice {
        step: d,
        lo,
        ln_pmf: p.iter().map(|v| v.ln()).collect(),
        ln_inf: f64::NEG_INFINITY,
    };
    let count = 6u64;
    let f = [Factor { law: &law, count }];
    // Exact law of the sum, index j ↦ P(S = (6·lo + j)Δ).
    let mut pmf = vec![1.0f64];
    for _ in 0..count {
        let mut next = vec![0.0; pmf.len() + 2];
        for (i, a) in pmf.iter().enumerate() {
            for (k, b) in p.iter().enumerate() {
                next[i + k] += a * b;
            }
        }
        pmf = next;
    }
    let first = count as i64 * lo;
    for lambda in [0.0, 0.8] {
        let base = total_cgf(&f, lambda).0;
        // Tilted masses e^{λx − base}·P(S = x).
        let tilted: Vec<f64> = pmf
            .iter()
            .enumerate()
            .map(|(i, v)| v * (lambda * (first + i as i64) as f64 * d - base).exp())
            .collect();
        for half_steps in -3..=(2 * pmf.len() as i64 + 2) {
            let h = (first as f64 + 0.5 * (half_steps - 1) as f64) * d;
            let below: f64 = (0..pmf.len())
                .filter(|&i| (first + i as i64) as f64 * d <= h)
                .map(|i| tilted[i])
                .sum();
            let above: f64 = (0..pmf.len())
                .filter(|&i| (first + i as i64) as f64 * d >= h)
                .map(|i| tilted[i])
                .sum();
            for (upper, exact) in [(false, below), (true, above)] {
                let b = ln_chernoff(&f, lambda, base, h, upper);
                let last = (first + pmf.len() as i64 - 1) as f64 * d;
                let beyond = if upper {
                    h > last + 0.5 * d
                } else {
                    h < first as f64 * d - 0.5 * d
                };
                if beyond {
                    assert_eq!(b, f64::NEG_INFINITY, "λ {lambda} h {h} upper {upper}");
                } else {
                    assert!(
                        b >= exact.ln() - 1e-12,
                        "λ {lambda} h {h} upper {upper}: bound {b} below the tail {}",
                        exact.ln()
                    );
                }
            }
        }
    }
}

/// The window end of a composed Gaussian loss against the Gaussian's closed-form
/// Chernoff level `m + √(−2 ln target)·s`, and against `ln_chernoff`'s own
/// minimisation: the bound at the level meets the target and a level 1 % of an sd
/// nearer does not (the nearest end, not only a valid one).
#[test]
fn chernoff_level_of_a_gaussian_composition_is_the_closed_form_and_the_nearest() {
    for &(mu, count) in &[(0.5, 100u64), (2.0, 1), (0.05, 10_000)] {
        let law = GaussianLaw::new(mu).unwrap();
        let lat = Lattice::pessimistic(&law, mu / 64.0, -300.0, 1 << 22).unwrap();
        let f = [Factor { law: &lat, count }];
        for &target in &[-50.0, -10.0] {
            let (base, m, v) = total_cgf(&f, 0.0);
            let s = v.sqrt();
            for upper in [true, false] {
                let sgn = if upper { 1.0 } else { -1.0 };
                let h = chernoff_level(&Cumulants::new(&f), 0.0, base, target, upper, m, v);
                let closed = m + sgn * (-2.0 * target).sqrt() * s;
                assert!(
                    (h - closed).abs() <= 2e-3 * s * (-2.0 * target).sqrt(),
                    "mu {mu} k {count} target {target} upper {upper}: {h} vs {closed}"
                );
                let at = ln_chernoff(&f, 0.0, base, h, upper);
                assert!(
                    at <= target + 1e-9,
                    "bound {at} above {target} at its level"
                );
                let nearer = ln_chernoff(&f, 0.0, base, h - sgn * 0.01 * s, upper);
                assert!(nearer > target, "a nearer end {nearer} also meets {target}");
            }
        }
    }
}
