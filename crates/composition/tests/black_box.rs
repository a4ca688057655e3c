//! `approx-dp:epsilon=E,delta=D`, any (ε, δ)-DP black box by its worst-case pair
//! (docs/accountant.md §2.11), against independent computations: k of them composed
//! against Kairouz, Oh & Viswanath's optimal composition in closed form
//! (`composition::dp_delta_approx`, log-space binomial sums that share no code with the
//! accountant), and one of them beside a Gaussian mechanism against the mixture of the
//! Gaussian's closed-form δ that the pair's three atoms make. And its SPEC's bad input.

use composition::accountant::{Composition, MechanismSpec};
use densities::normal::cdf;

fn composition(text: &str) -> Composition {
    let spec: MechanismSpec = text.parse().unwrap();
    Composition::of(&[spec]).unwrap()
}

/// k (ε₀, δ₀)-DP black boxes: the certified bracket of δ(ε) holds the optimal composition
/// of KOV Thm 3.3, and is as narrow as asked. Fails if an atom's mass, the +∞ atom or the
/// count is wrong (each moves δ by far more than the bracket's width here).
#[test]
fn k_black_boxes_hold_the_optimal_composition_theorem() {
    for &(k, e0, d0, eps) in &[
        (1u64, 1.0, 1e-6, 0.5),
        (10, 0.5, 1e-7, 2.0),
        (50, 0.1, 1e-8, 1.0),
        (200, 0.05, 0.0, 1.5),
        (1000, 0.02, 1e-9, 1.2),
    ] {
        let exact = composition::dp_delta_approx(k, e0, d0, eps).unwrap();
        let text = format!("approx-dp:epsilon={e0},delta={d0},count={k}");
        let b = composition(&text).delta(eps).unwrap();
        assert!(
            b.lower <= exact && exact <= b.upper,
            "{text} at ε = {eps}: [{}, {}] misses {exact}",
            b.lower,
            b.upper
        );
        assert!(
            b.upper / b.lower - 1.0 < 2e-3,
            "{text}: [{}, {}] too wide",
            b.lower,
            b.upper
        );
    }
}

/// ε(δ) of k black boxes brackets the inverse of the closed form: the closed form's δ at
/// the bracket's ends lies on the right side of the target.
#[test]
fn the_epsilon_of_k_black_boxes_brackets_the_closed_forms_root() {
    let (k, e0, d0, delta) = (100u64, 0.1, 1e-8, 1e-5);
    let a = composition(&format!("approx-dp:epsilon={e0},delta={d0},count={k}"))
        .epsilon(delta)
        .unwrap();
    let at = |e: f64| composition::dp_delta_approx(k, e0, d0, e).unwrap();
    assert!(at(a.upper) <= delta, "upper end {} not private", a.upper);
    assert!(
        at(a.lower) >= delta,
        "lower end {} already private",
        a.lower
    );
    assert!(a.upper / a.lower - 1.0 < 1e-3);
}

/// δ(ε) of the Gaussian mechanism whose loss is N(m²/2, m²), at any real x (Balle & Wang
/// 2018, Thm 8; docs/accountant.md §2.1).
fn gaussian_delta(m: f64, x: f64) -> f64 {
    cdf(-x / m + 0.5 * m) - x.exp() * cdf(-x / m - 0.5 * m)
}

/// One black box beside one Gaussian mechanism: the loss is the sum of the box's (+∞
/// with P-mass δ₀, ±ε₀ with `(1 − δ₀)/(1 + e^{∓ε₀})`) and the Gaussian's, so
/// `δ(ε) = δ₀ + p₊·δ_G(ε − ε₀) + p₋·δ_G(ε + ε₀)`. The bracket of the heterogeneous
/// composition holds it at several ε.
#[test]
fn a_black_box_beside_a_gaussian_holds_the_mixture_of_closed_forms() {
    let (e0, d0, sigma): (f64, f64, f64) = (0.7, 1e-6, 2.0);
    let m = 1.0 / sigma;
    let specs: Vec<MechanismSpec> = [
        format!("approx-dp:epsilon={e0},delta={d0}"),
        format!("gaussian:sigma={sigma}"),
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect();
    let comp = Composition::of(&specs).unwrap();
    let p_up = (1.0 - d0) / (1.0 + (-e0).exp());
    let p_down = (1.0 - d0) / (1.0 + e0.exp());
    for eps in [0.2, 0.8, 1.5, 2.5, 4.0] {
        let exact = d0 + p_up * gaussian_delta(m, eps - e0) + p_down * gaussian_delta(m, eps + e0);
        let b = comp.delta(eps).unwrap();
        assert!(
            b.lower <= exact * (1.0 + 1e-12) && exact <= b.upper * (1.0 + 1e-12),
            "ε = {eps}: [{}, {}] misses {exact}",
            b.lower,
            b.upper
        );
        assert!(b.upper / b.lower - 1.0 < 2e-3, "ε = {eps}: too wide");
    }
}

/// δ₀ = 0 is an ε₀-DP black box: the law of randomized response, so the same bracket to
/// the bit as `rr` (a consistency check beside the independent ones above).
#[test]
fn a_pure_black_box_is_randomized_response() {
    let a = composition("approx-dp:epsilon=0.3,delta=0,count=40")
        .epsilon(1e-6)
        .unwrap();
    let b = composition("rr:epsilon=0.3,count=40")
        .epsilon(1e-6)
        .unwrap();
    assert_eq!(a, b);
}

/// Bad input: each refused with one line naming the key and the allowed range.
#[test]
fn bad_black_boxes_are_refused_naming_the_key() {
    for (text, key) in [
        ("approx-dp:epsilon=1,delta=1", "delta"),
        ("approx-dp:epsilon=1,delta=-0.1", "delta"),
        ("approx-dp:epsilon=0,delta=1e-6", "epsilon"),
        ("approx-dp:epsilon=800,delta=1e-6", "epsilon"),
        ("approx-dp:epsilon=1", "delta"),
        (
            "approx-dp:epsilon=1,delta=1e-6,sensitivity=2",
            "sensitivity",
        ),
        ("approx-dp:epsilon=1,delta=1e-6,sigma=2", "sigma"),
    ] {
        let e = text.parse::<MechanismSpec>().unwrap_err().0;
        assert!(
            e.contains(key) && !e.contains('\n'),
            "{text}: {e:?} does not name {key}"
        );
    }
}
