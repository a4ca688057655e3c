//! DP-SGD at small sampling rates (issue 34): the dominated discretisation keeps the mean
//! loss, so the bracket narrows like the step squared, and refinement lands near the
//! accuracy asked instead of far below it.

use composition::accountant::sampling::subsampled::{Base, Direction, SubsampledLaw};
use composition::accountant::Composition;
use composition::accountant::{Accountant, GridCells, Lattice, LossLaw, MechanismSpec};

/// `E_P[L]` (the Kullback–Leibler divergence) of the remove direction of a Poisson-
/// subsampled Gaussian, `L = ln(1 − q + q e^{μy − μ²/2})`, `y ~ (1 − q)N(0,1) + qN(μ,1)`,
/// by the midpoint rule on [−40, 40 + μ] (2e6 panels): the independent reference.
fn kl_by_quadrature(mu: f64, q: f64) -> f64 {
    let (a, b, n) = (-40.0, 40.0 + mu, 2_000_000);
    let h = (b - a) / n as f64;
    let phi = |x: f64| (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let mut s = 0.0;
    for i in 0..n {
        let y = a + (i as f64 + 0.5) * h;
        let p = (1.0 - q) * phi(y) + q * phi(y - mu);
        let l = (q * (mu * y - 0.5 * mu * mu).exp_m1()).ln_1p();
        s += p * l * h;
    }
    s
}

/// `(P-mass, Q-mass, mean loss)` of a lattice.
fn moments(lat: &Lattice) -> (f64, f64, f64) {
    let (mut p, mut q, mut m) = (0.0, 0.0, 0.0);
    for (i, &lp) in lat.ln_pmf.iter().enumerate() {
        let x = lat.loss(i);
        let w = lp.exp();
        p += w;
        q += w * (-x).exp();
        m += w * x;
    }
    (p, q, m)
}

/// The dominated (merged and poured) lattice of a law used 1e5 times is a post-processing
/// of the true pair: its
/// Q-mass is at most 1 and its mean loss (a KL divergence) at most the true one, the
/// dominating lattice's at least; and the dominated mean is within 1 % of the truth at a
/// step of a twentieth of the loss's standard deviation. Before the pour's last carry
/// (the mass piled up at the lower end `ln(1 − q)`) was merged instead of rounded down a
/// step, the dominated Q-mass was 1 + 8e-7 and its mean 43 % low at q = 1e-3, σ = 0.8,
/// Δ = 1e-4: over 1e5 uses the lower end of ε fell 3 % (and to 0.08 at Δ = 3e-4).
#[test]
fn dominated_lattice_keeps_the_mean_loss_at_small_rates() {
    for (q, sigma) in [(1e-3, 0.8), (1e-4, 0.6), (1e-2, 1.0), (4e-3, 1.1)] {
        let mu = 1.0 / sigma;
        let law = SubsampledLaw::new(Base::Gaussian, mu, q, Direction::Remove).unwrap();
        let kl = kl_by_quadrature(mu, q);
        for per_sd in [20.0, 60.0] {
            let d = law.loss_scale() / per_sd;
            let cells = GridCells::new(&law, d, -40.0, 1 << 23, f64::INFINITY).unwrap();
            let opt = Lattice::optimistic_for_uses(&law, &cells, -40.0, 1 << 23, 100_000).unwrap();
            let pess = Lattice::pessimistic(&law, d, -40.0, 1 << 23).unwrap();
            let (p_o, q_o, m_o) = moments(&opt);
            let (_, _, m_p) = moments(&pess);
            let what = format!("q={q}, σ={sigma}, Δ=sd/{per_sd}");
            assert!(
                q_o <= 1.0 + 1e-12 && p_o <= 1.0 + 1e-12,
                "{what}: P {p_o}, Q {q_o}"
            );
            assert!(
                m_o <= kl * (1.0 + 1e-6) && kl <= m_p * (1.0 + 1e-6),
                "{what}: KL {kl} outside [{m_o}, {m_p}]"
            );
            assert!(
                (kl - m_o) / kl <= 0.01,
                "{what}: dominated mean {m_o} vs {kl}"
            );
        }
    }
}

/// ε of 1e5 uses at q = 1e-3, σ = 0.8, δ = 1e-6 on a fixed step of 1e-4 (a nineteenth of
/// the loss's sd): both ends within 1e-3 of each other (the lower end was 2.8 % low, the
/// dominated side's first-order error above), and the bracket narrows like the step
/// squared to 3e-5 (at least 5× for 3.3× the step; it was 20× with the first-order
/// error gone only at fine steps).
#[test]
fn small_rate_bracket_narrows_like_the_step_squared() {
    let law = SubsampledLaw::new(Base::Gaussian, 1.25, 1e-3, Direction::Remove).unwrap();
    let acc = Accountant::new(vec![(Box::new(law), 100_000)]).unwrap();
    let ln_delta = 1e-6f64.ln();
    let (l1, h1) = acc.epsilon_at_step(ln_delta, 1e-4).unwrap();
    let (l2, h2) = acc.epsilon_at_step(ln_delta, 3e-5).unwrap();
    let (w1, w2) = ((h1 - l1) / h1, (h2 - l2) / h2);
    assert!(w1 <= 1e-3, "Δ = 1e-4: [{l1}, {h1}], width {w1}");
    assert!(w1 / w2 >= 5.0 && w1 / w2 <= 20.0, "widths {w1} → {w2}");
    // The finer bracket lies inside the coarser one (both are certified).
    assert!(
        l1 <= h2 && l2 <= h1,
        "[{l1}, {h1}] and [{l2}, {h2}] disjoint"
    );
}

/// The certified ε(δ) bracket of one SPEC at the default accuracy (1e-4).
fn epsilon_of(spec: &str, delta: f64) -> composition::accountant::Answer {
    let s: MechanismSpec = spec.parse().unwrap();
    Composition::of(&[s]).unwrap().epsilon(delta).unwrap()
}

/// Refinement aims at the accuracy asked, not far below it: the final bracket of the
/// DP-SGD workloads of issue 34's table (smaller counts where the table's take seconds)
/// is at most 1e-4 wide and at least a quarter of that (the square-law step schedule
/// ended 15× narrower at q = 1e-3, T = 1e5). The last two have at most one sampled step
/// expected, where the loss scale's first step was 10–16× finer than needed (brackets
/// of 9e-6 and 6e-6) until such compositions started from a pilot 4× coarser.
#[test]
fn refinement_stops_within_four_times_the_accuracy() {
    for (spec, delta) in [
        ("subsampled-gaussian:sigma=0.8,q=0.001,count=1000", 1e-6),
        ("subsampled-gaussian:sigma=0.8,q=0.01,count=100", 1e-6),
        ("subsampled-gaussian:sigma=1,q=0.01,count=1e4", 1e-5),
        ("subsampled-gaussian:sigma=0.8,q=0.001,count=1e4", 1e-6),
        ("subsampled-gaussian:sigma=2,q=0.1,count=1000", 1e-5),
        ("subsampled-gaussian:sigma=1.1,q=0.004,count=2e4", 1e-6),
    ] {
        let a = epsilon_of(spec, delta);
        let w = (a.upper - a.lower) / a.upper;
        assert!(a.accuracy_met && w <= 1e-4, "{spec}: {a:?}");
        assert!(
            w >= 2.5e-5,
            "{spec}: width {w}, 4× narrower than asked: {a:?}"
        );
    }
}

/// At q = 1e-5 the loss scale (q·√(e^{μ²} − 1) ≈ 2e-5) is six orders below the law's
/// range (about 12 nats): a first step from the scale alone started past the bin budget,
/// and the bracket came back as [0.0018, 1057]. The first step is now floored at the
/// range over 2^20 bins, and refinement goes finer from a step that works.
#[test]
#[ignore = "long: about 5 s of accountant work at a sampling rate of 1e-5 (CI's long step)"]
fn tiny_sampling_rates_start_from_a_step_the_bin_budget_allows() {
    let m: MechanismSpec = "subsampled-gaussian:sigma=0.8,q=1e-5,count=100"
        .parse()
        .unwrap();
    let a = Composition::of(&[m])
        .unwrap()
        .with_accuracy(1e-2)
        .unwrap()
        .epsilon(1e-6)
        .unwrap();
    assert!(a.lower > 0.0 && a.upper.is_finite(), "{a:?}");
    assert!(
        a.upper / a.lower - 1.0 <= 0.05,
        "[{}, {}]",
        a.lower,
        a.upper
    );
}
