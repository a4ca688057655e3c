//! `discrete-gaussian:sigma=S` (docs/accountant.md §2.13) against independent
//! computations: its atoms against the noise summed over the integers, one use against
//! the hockey-stick sum over the integers (Canonne, Kamath & Steinke's δ, written out),
//! and k uses against brute-force convolution of the losses (no lattice, no FFT). And its
//! SPEC's bad input.

use composition::accountant::laws::DiscreteGaussianLaw;
use composition::accountant::{Composition, LossLaw, MechanismSpec};
use std::collections::BTreeMap;

/// The noise's masses on |x| ≤ n, normalised over a range whose tails are below 1e-300.
fn masses(sigma: f64) -> (i64, Vec<f64>) {
    let n = (40.0 * sigma).ceil() as i64 + 5;
    let w: Vec<f64> = (-n..=n)
        .map(|x| (-((x * x) as f64) / (2.0 * sigma * sigma)).exp())
        .collect();
    // Kahan-summed, an independent normalisation.
    let (mut z, mut c) = (0.0f64, 0.0f64);
    for &v in &w {
        let y = v - c;
        let t = z + y;
        c = (t - z) - y;
        z = t;
    }
    (n, w.iter().map(|v| v / z).collect())
}

/// The atoms: each the mass of one integer and its loss `s(s − 2x)/2σ²`.
#[test]
fn the_atoms_are_the_noise_over_the_integers() {
    for &(sigma, s) in &[(0.5, 1u64), (1.0, 1), (3.0, 2), (17.3, 5), (100.0, 1)] {
        let law = DiscreteGaussianLaw::new(sigma, s).unwrap();
        let (n, p) = masses(sigma);
        let atoms = law.atoms();
        let m = (atoms.len() as i64 - 1) / 2;
        assert!(m < n);
        for (i, &(l, q)) in atoms.iter().enumerate() {
            let x = m - i as i64;
            let loss = (s * s) as f64 / (2.0 * sigma * sigma)
                - (2 * s as i64 * x) as f64 / (2.0 * sigma * sigma);
            assert!(
                (l - loss).abs() <= 1e-12 * loss.abs().max(1.0),
                "σ = {sigma}, x = {x}"
            );
            let want = p[(x + n) as usize];
            assert!(
                (q / want - 1.0).abs() < 1e-9,
                "σ = {sigma}, x = {x}: {q} vs {want}"
            );
        }
        // The cut tails: below e^{-600}, charged on the dominating side only.
        assert!(law.ln_inf_mass() < -600.0 && law.ln_inf_mass().is_finite());
        assert_eq!(law.ln_inf_mass_lower(), f64::NEG_INFINITY);
    }
}

/// δ(ε) of k uses by brute force: the losses in units of s/2σ²... as integers
/// `k = s(s − 2x)`, convolved k times, then `Σ p (1 − e^{ε − k/2σ²})₊`.
fn brute_force_delta(sigma: f64, s: i64, uses: usize, eps: f64) -> f64 {
    let (n, p) = masses(sigma);
    let mut one: BTreeMap<i64, f64> = BTreeMap::new();
    for x in -n..=n {
        let q = p[(x + n) as usize];
        if q > 0.0 {
            *one.entry(s * (s - 2 * x)).or_insert(0.0) += q;
        }
    }
    let mut dist: BTreeMap<i64, f64> = BTreeMap::from([(0, 1.0)]);
    for _ in 0..uses {
        let mut next = BTreeMap::new();
        for (i, a) in &dist {
            for (j, b) in &one {
                let w = a * b;
                if w > 1e-300 {
                    *next.entry(i + j).or_insert(0.0) += w;
                }
            }
        }
        dist = next;
    }
    let v = 1.0 / (2.0 * sigma * sigma);
    dist.iter()
        .map(|(k, q)| q * (-(eps - *k as f64 * v).exp_m1()).max(0.0))
        .sum()
}

/// One and several uses: the certified bracket holds the brute-force δ and is narrow.
/// Fails if a mass, a loss or the tails' side is wrong.
#[test]
fn uses_hold_the_brute_force_convolution() {
    for &(sigma, s, k, eps) in &[
        (1.0, 1i64, 1usize, 0.5),
        (0.7, 1, 3, 2.0),
        (2.0, 2, 4, 1.0),
        (3.0, 1, 5, 0.6),
        (1.5, 3, 2, 3.0),
    ] {
        let exact = brute_force_delta(sigma, s, k, eps);
        let spec: MechanismSpec =
            format!("discrete-gaussian:sigma={sigma},sensitivity={s},count={k}")
                .parse()
                .unwrap();
        let d = Composition::of(&[spec]).unwrap().delta(eps).unwrap();
        assert!(
            d.lower <= exact * (1.0 + 1e-9) && exact <= d.upper * (1.0 + 1e-9),
            "σ = {sigma}, s = {s}, k = {k}, ε = {eps}: [{}, {}] misses {exact}",
            d.lower,
            d.upper
        );
        assert!(d.upper / d.lower - 1.0 < 5e-3, "too wide: {d:?}");
    }
}

/// Many uses at a large σ: the bracket of ε(δ) is narrow and lies within a percent of
/// the continuous Gaussian's (μ = √k·s/σ; the two laws differ by far less at σ = 20, and
/// the bracket is certified for the discrete one: a sanity check of scale, not a bound).
#[test]
fn many_uses_at_a_large_sigma_are_near_the_continuous_gaussian() {
    let (sigma, k) = (20.0, 400u64);
    let spec: MechanismSpec = format!("discrete-gaussian:sigma={sigma},count={k}")
        .parse()
        .unwrap();
    let a = Composition::of(&[spec]).unwrap().epsilon(1e-6).unwrap();
    let g: MechanismSpec = format!("gaussian:sigma={sigma},count={k}").parse().unwrap();
    let b = Composition::of(&[g]).unwrap().epsilon(1e-6).unwrap();
    assert!(a.upper / a.lower - 1.0 < 1e-3, "{a:?}");
    assert!(
        (a.estimate / b.estimate - 1.0).abs() < 1e-2,
        "{a:?} vs {b:?}"
    );
}

/// Bad input: one line naming the key.
#[test]
fn bad_discrete_gaussian_specs_are_refused_naming_the_key() {
    for (text, key) in [
        ("discrete-gaussian:sigma=0.1", "sigma"),
        ("discrete-gaussian:sigma=2e4", "sigma"),
        ("discrete-gaussian:sigma=1,sensitivity=1.5", "sensitivity"),
        ("discrete-gaussian:sigma=1,sensitivity=500", "sensitivity"),
        ("discrete-gaussian:scale=1", "scale"),
    ] {
        let e = text.parse::<MechanismSpec>().unwrap_err().0;
        assert!(e.contains(key) && !e.contains('\n'), "{text}: {e:?}");
    }
}
