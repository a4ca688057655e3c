//! `gaussian-mixture:sigma=S,shifts=…,probs=…` (docs/accountant.md §2.16) against
//! independent routes: one use against direct quadrature of the two densities, both
//! directions; the two-component mixture `0;1` at `1 − q; q` against the Poisson-subsampled
//! Gaussian's own law (a different implementation); bad input.

use composition::accountant::{Composition, MechanismSpec};

fn composition(text: &str) -> Composition {
    let s: MechanismSpec = text.parse().unwrap();
    Composition::of(&[s]).unwrap()
}

/// `δ(ε)` of one use by Simpson's rule on `y ∈ [−40, 40 + max shift]` (in units of σ),
/// the larger over the two orders of `P = Σ p_i N(μ_i, 1)` and `Q = N(0, 1)`.
fn quadrature(mix: &[(f64, f64)], eps: f64) -> f64 {
    let phi =
        |y: f64, m: f64| (-0.5 * (y - m) * (y - m)).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let p = |y: f64| mix.iter().map(|&(w, m)| w * phi(y, m)).sum::<f64>();
    let q = |y: f64| phi(y, 0.0);
    let top = mix.iter().map(|c| c.1).fold(0.0, f64::max);
    let (a, b) = (-40.0, 40.0 + top);
    let n = 400_000;
    let h = (b - a) / n as f64;
    let mut fwd = 0.0;
    let mut rev = 0.0;
    for k in 0..=n {
        let y = a + k as f64 * h;
        let w = if k == 0 || k == n {
            1.0
        } else if k % 2 == 1 {
            4.0
        } else {
            2.0
        };
        fwd += w * (p(y) - eps.exp() * q(y)).max(0.0);
        rev += w * (q(y) - eps.exp() * p(y)).max(0.0);
    }
    (fwd.max(rev)) * h / 3.0
}

/// One use of a three-component mixture: the certified bracket holds the quadrature, and
/// is narrow about it.
#[test]
fn one_use_brackets_the_quadrature() {
    let mix = [(0.5, 0.0), (0.3, 0.5), (0.2, 2.0)];
    for &sigma in &[1.0, 0.7] {
        let comp = composition(&format!(
            "gaussian-mixture:sigma={sigma},shifts=0;0.5;2,probs=0.5;0.3;0.2"
        ));
        let scaled: Vec<(f64, f64)> = mix.iter().map(|&(w, c)| (w, c / sigma)).collect();
        for &eps in &[0.0, 0.3, 1.0, 2.0] {
            let d = comp.delta(eps).unwrap();
            let exact = quadrature(&scaled, eps);
            assert!(
                d.lower <= exact * (1.0 + 1e-7) && exact <= d.upper * (1.0 + 1e-7),
                "σ = {sigma}, ε = {eps}: [{}, {}] against {exact}",
                d.lower,
                d.upper
            );
            assert!(d.upper <= exact * 1.01, "σ = {sigma}, ε = {eps}: loose");
        }
    }
}

/// Shifts 0 and 1 at probabilities 1 − q and q are Poisson subsampling at rate q under
/// add/remove (dp_accounting's own example): the two brackets, from two implementations
/// of the law, overlap at every question, and sensitivity scales the shifts.
#[test]
fn zero_one_shifts_are_poisson_subsampling() {
    for &(sigma, q, k) in &[(1.5, 0.1, 50u64), (0.8, 0.01, 1000)] {
        let mix = composition(&format!(
            "gaussian-mixture:sigma={sigma},shifts=0;1,probs={};{q},count={k}",
            1.0 - q
        ));
        let scaled = composition(&format!(
            "gaussian-mixture:sigma={},shifts=0;0.5,probs={};{q},sensitivity=2,count={k}",
            sigma,
            1.0 - q
        ));
        let sub = composition(&format!(
            "subsampled-gaussian:sigma={sigma},q={q},count={k}"
        ));
        for &delta in &[1e-5, 1e-8] {
            let (a, b, c) = (
                mix.epsilon(delta).unwrap(),
                sub.epsilon(delta).unwrap(),
                scaled.epsilon(delta).unwrap(),
            );
            for (x, name) in [(&a, "mixture"), (&c, "sensitivity 2")] {
                assert!(
                    x.lower <= b.upper && b.lower <= x.upper,
                    "σ = {sigma}, q = {q}, k = {k}, δ = {delta}: {name} [{}, {}] vs \
                     subsampled [{}, {}]",
                    x.lower,
                    x.upper,
                    b.lower,
                    b.upper
                );
            }
        }
    }
}

#[test]
fn bad_mixtures_are_refused_naming_the_key() {
    for (text, key) in [
        ("gaussian-mixture:sigma=1,shifts=0;1,probs=0.9;0.2", "probs"),
        ("gaussian-mixture:sigma=1,shifts=0;1,probs=0.9", "probs"),
        (
            "gaussian-mixture:sigma=1,shifts=0;-1,probs=0.5;0.5",
            "shifts",
        ),
        (
            "gaussian-mixture:sigma=1,shifts=0;0,probs=0.5;0.5",
            "shifts",
        ),
        ("gaussian-mixture:sigma=0,shifts=0;1,probs=0.5;0.5", "sigma"),
        (
            "gaussian-mixture:sigma=1,shifts=0;x,probs=0.5;0.5",
            "shifts",
        ),
        ("gaussian-mixture:sigma=1,probs=1", "shifts"),
        ("gaussian-mixture:sigma=1,shifts=1,probs=0", "probs"),
    ] {
        let e = text.parse::<MechanismSpec>().unwrap_err().0;
        assert!(e.contains(key) && !e.contains('\n'), "{text}: {e:?}");
    }
    // A shift beyond 50 σ, naming it and the range.
    let e = "gaussian-mixture:sigma=0.01,shifts=0;1,probs=0.5;0.5"
        .parse::<MechanismSpec>()
        .unwrap_err()
        .0;
    assert!(e.contains("shift") && e.contains("50"), "{e}");
}
