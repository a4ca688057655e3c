//! `discrete-laplace:scale=B` (docs/accountant.md §2.12) against independent computations:
//! its rates against exact rational arithmetic, its atoms against direct summation of the
//! noise over the integers, k uses against brute-force convolution of the losses (no
//! lattice, no FFT), and at sensitivity 1 against randomized response's binomial closed
//! form (`composition::dp_delta`, the same pair). And its SPEC's bad input.

use composition::accountant::laws::discrete::discrete_laplace_rate;
use composition::accountant::{Composition, DiscreteLaw, LossLaw, MechanismSpec};
use num_rational::BigRational;
use num_traits::One;
use std::collections::BTreeMap;

fn rat(x: f64) -> BigRational {
    BigRational::from_float(x).unwrap()
}

/// The two rates bound 1/b from each side in exact arithmetic, within 2^(bits(s) − 50) of
/// it, and
/// every loss k·t with |k| ≤ s is a float exactly. Fails if a rate is rounded to the
/// wrong side or keeps too many bits.
#[test]
fn the_rates_bound_one_over_the_scale_and_make_every_loss_exact() {
    for &b in &[0.3, 1.0, 2.0, 7.0, 10.0, 0.7077, 123.456, 1e-2, 3.3e5] {
        for &s in &[1u64, 2, 3, 7, 64, 1000, 99_999] {
            let (up, down) = (
                discrete_laplace_rate(b, s, true).unwrap(),
                discrete_laplace_rate(b, s, false).unwrap(),
            );
            let inv = BigRational::one() / rat(b);
            assert!(rat(up) >= inv && rat(down) <= inv, "b = {b}, s = {s}");
            let gap = (rat(up) - rat(down)) / inv.clone();
            let bits = 64 - s.leading_zeros() as i32;
            assert!(
                gap < rat(2f64.powi(bits - 50)),
                "b = {b}, s = {s}: too far apart"
            );
            for t in [up, down] {
                for k in [1, 2, s / 2 + 1, s - 1, s] {
                    let k = k.max(1) as f64;
                    assert!(
                        rat(k * t) == rat(k) * rat(t),
                        "b = {b}, s = {s}: {k}·{t} rounds"
                    );
                }
            }
        }
    }
}

/// The law's atoms against the noise summed over the integers: the P-mass of each loss
/// value `t(|x − s| − |x|)`, x from −N to N with the tails below 1e-300.
#[test]
fn the_atoms_are_the_noise_summed_over_the_integers() {
    for &(b, s) in &[(1.0, 1u64), (0.5, 3), (4.0, 5), (20.0, 2), (2.5, 12)] {
        let t = discrete_laplace_rate(b, s, true).unwrap();
        let law = DiscreteLaw::discrete_laplace(t, s).unwrap();
        let n = (700.0 / t) as i64 + s as i64 + 2;
        let mut by_loss: BTreeMap<i64, f64> = BTreeMap::new();
        let c = (1.0 - (-t).exp()) / (1.0 + (-t).exp());
        for x in -n..=n {
            let k = (x - s as i64).abs() - x.abs();
            *by_loss.entry(k).or_insert(0.0) += c * (-(x.abs() as f64) * t).exp();
        }
        let atoms = law.atoms();
        assert_eq!(atoms.len(), by_loss.len(), "b = {b}, s = {s}");
        for ((x, p), (k, q)) in atoms.iter().zip(&by_loss) {
            assert_eq!(*x, *k as f64 * t);
            assert!(
                (p / q - 1.0).abs() < 1e-12,
                "b = {b}, s = {s}, loss {x}: {p} vs {q}"
            );
        }
        assert_eq!(law.ln_inf_mass(), f64::NEG_INFINITY);
    }
}

/// δ(ε) of k uses by brute force: the losses' distribution convolved k times on the
/// integers (units of 1/b), then `Σ p (1 − e^{ε − L})₊`.
fn brute_force_delta(b: f64, s: i64, k: usize, eps: f64) -> f64 {
    let t = 1.0 / b;
    let a = (-t).exp();
    let mut one: BTreeMap<i64, f64> = BTreeMap::new();
    one.insert(s, 1.0 / (1.0 + a));
    one.insert(-s, (-(s as f64) * t).exp() / (1.0 + a));
    for x in 1..s {
        *one.entry(s - 2 * x).or_insert(0.0) += (1.0 - a) / (1.0 + a) * (-(x as f64) * t).exp();
    }
    let mut dist: BTreeMap<i64, f64> = BTreeMap::from([(0, 1.0)]);
    for _ in 0..k {
        let mut next = BTreeMap::new();
        for (i, p) in &dist {
            for (j, q) in &one {
                *next.entry(i + j).or_insert(0.0) += p * q;
            }
        }
        dist = next;
    }
    dist.iter()
        .map(|(j, p)| p * (-(eps - *j as f64 * t).exp_m1()).max(0.0))
        .sum()
}

/// k uses at sensitivities 1–4: the certified bracket holds the brute-force δ and is
/// narrow. Fails if a mass, a loss value or the count is off (or the two rates' laws are
/// swapped: the bracket would then miss the truth by the rates' gap only at the level of
/// 1e-13, so that is tested by the rates' own test above).
#[test]
fn k_uses_hold_the_brute_force_convolution() {
    for &(b, s, k, eps) in &[
        (1.0, 1i64, 10usize, 2.0),
        (2.0, 2, 8, 1.5),
        (0.7, 3, 5, 4.0),
        (3.0, 4, 12, 2.5),
        (10.0, 1, 40, 0.8),
    ] {
        let exact = brute_force_delta(b, s, k, eps);
        let spec: MechanismSpec = format!("discrete-laplace:scale={b},sensitivity={s},count={k}")
            .parse()
            .unwrap();
        let d = Composition::of(&[spec]).unwrap().delta(eps).unwrap();
        assert!(
            d.lower <= exact * (1.0 + 1e-9) && exact <= d.upper * (1.0 + 1e-9),
            "b = {b}, s = {s}, k = {k}, ε = {eps}: [{}, {}] misses {exact}",
            d.lower,
            d.upper
        );
        assert!(d.upper / d.lower - 1.0 < 2e-3, "too wide: {d:?}");
    }
}

/// At sensitivity 1 the pair is randomized response's with ε₀ = 1/b: ε(δ) of k uses
/// brackets the root of its binomial closed form.
#[test]
fn at_sensitivity_one_it_is_randomized_response() {
    for &(b, k, delta) in &[(1.0, 100u64, 1e-6), (5.0, 1000, 1e-8), (0.3, 20, 1e-5)] {
        let spec: MechanismSpec = format!("discrete-laplace:scale={b},count={k}")
            .parse()
            .unwrap();
        let a = Composition::of(&[spec]).unwrap().epsilon(delta).unwrap();
        let at = |e: f64| composition::dp_delta(k, 1.0 / b, e).unwrap();
        assert!(
            at(a.upper) <= delta * (1.0 + 1e-9),
            "b = {b}: upper {}",
            a.upper
        );
        assert!(
            at(a.lower) >= delta * (1.0 - 1e-9),
            "b = {b}: lower {}",
            a.lower
        );
    }
}

/// At the widest scale, 1e8, both rounded rates are laws (the lower one lies just below
/// 1/b = 1e-8): the composition is built and answers.
#[test]
fn the_widest_scale_composes() {
    let s: MechanismSpec = "discrete-laplace:scale=1e8,sensitivity=100,count=1000"
        .parse()
        .unwrap();
    let a = Composition::of(&[s]).unwrap().epsilon(1e-6).unwrap();
    assert!(a.lower > 0.0 && a.lower <= a.upper);
}

/// A group of g at sensitivity s is sensitivity g·s.
#[test]
fn a_group_multiplies_the_sensitivity() {
    let a: MechanismSpec = "discrete-laplace:scale=2,sensitivity=3,group=2,count=7"
        .parse()
        .unwrap();
    let b: MechanismSpec = "discrete-laplace:scale=2,sensitivity=6,count=7"
        .parse()
        .unwrap();
    let ea = Composition::of(&[a]).unwrap().epsilon(1e-6).unwrap();
    let eb = Composition::of(&[b]).unwrap().epsilon(1e-6).unwrap();
    assert_eq!(ea, eb);
    assert!(ea.lower > 0.0 && ea.upper / ea.lower - 1.0 < 1e-3);
}

/// Bad input: one line naming the key and the allowed range.
#[test]
fn bad_discrete_laplace_specs_are_refused_naming_the_key() {
    for (text, key) in [
        ("discrete-laplace:scale=1,sensitivity=1.5", "sensitivity"),
        ("discrete-laplace:scale=1,sensitivity=200000", "sensitivity"),
        (
            "discrete-laplace:scale=1,sensitivity=1000,group=200",
            "sensitivity",
        ),
        ("discrete-laplace:scale=0", "scale"),
        ("discrete-laplace:scale=1e-6", "1/scale"),
        (
            "discrete-laplace:scale=0.3,sensitivity=300",
            "sensitivity/scale",
        ),
        ("discrete-laplace:sigma=1", "sigma"),
    ] {
        let e = text.parse::<MechanismSpec>().unwrap_err().0;
        assert!(e.contains(key) && !e.contains('\n'), "{text}: {e:?}");
    }
}
