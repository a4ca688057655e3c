//! Trade-off brackets of the accountant (docs/accountant.md §9) against independent
//! computations: the closed-form `G_μ` of a k-fold Gaussian, the closed-form Laplace
//! trade-off, a Neyman–Pearson curve of k-fold randomized response built by direct
//! enumeration of the binomial likelihood ratios, and the Neyman–Pearson curves of the
//! Poisson-subsampled Gaussian and Laplace (both directions, their pointwise minimum) from
//! closed-form CDFs (one use) and a one-dimensional quadrature (two uses). The
//! central-limit μ against its closed form (Gaussian) and a quadrature of the Laplace loss
//! moments.

use composition::accountant::Composition;
use composition::accountant::{Accountant, DiscreteLaw, GaussianLaw, MechanismSpec};
use densities::tradeoff::{gaussian_tradeoff, laplace_tradeoff};

fn alphas() -> Vec<f64> {
    let mut a: Vec<f64> = (0..=100).map(|i| i as f64 / 100.0).collect();
    a.extend([1e-6, 1e-4, 1e-3, 0.999, 0.9999]);
    a
}

/// `tol` absorbs the reference's own round-off.
fn check(
    what: &str,
    pts: &[composition::accountant::TradeoffPoint],
    exact: impl Fn(f64) -> f64,
    width: f64,
    tol: f64,
) {
    for p in pts {
        let e = exact(p.alpha);
        assert!(
            p.lower <= e + tol && e - tol <= p.upper,
            "{what} at α = {}: exact {e} outside [{}, {}]",
            p.alpha,
            p.lower,
            p.upper
        );
        assert!(
            p.upper - p.lower <= width,
            "{what} at α = {}: bracket [{}, {}] wider than {width}",
            p.alpha,
            p.lower,
            p.upper
        );
    }
}

#[test]
fn k_fold_gaussian_brackets_g_mu() {
    for (mu, k) in [(1.0, 1u64), (0.5, 16), (0.05, 400), (2.0, 3)] {
        let acc = Accountant::new(vec![(Box::new(GaussianLaw::new(mu).unwrap()), k)]).unwrap();
        let m = mu * (k as f64).sqrt();
        let pts = acc.tradeoff(&alphas()).unwrap();
        check(
            &format!("G with μ={mu}, k={k}"),
            &pts,
            |a| gaussian_tradeoff(m, a).unwrap(),
            2e-4,
            1e-15,
        );
        // The central-limit μ of a Gaussian composition is its exact μ.
        let clt = acc.clt_mu().unwrap();
        assert!((clt / m - 1.0).abs() < 1e-4, "clt μ {clt} vs {m}");
    }
}

#[test]
fn laplace_brackets_closed_form_and_its_clt_mu_matches_quadrature() {
    for eps0 in [0.1, 1.0, 3.0] {
        let s: MechanismSpec = format!("laplace:scale={}", 1.0 / eps0).parse().unwrap();
        let c = Composition::of(&[s]).unwrap();
        let pts = c.tradeoff(&alphas()).unwrap();
        check(
            &format!("Laplace ε0={eps0}"),
            &pts,
            |a| laplace_tradeoff(1.0, 1.0 / eps0, a).unwrap(),
            2e-4,
            1e-15,
        );

        // Moments of L = (|x − 1| − |x|)ε0, x ~ Laplace(1/ε0), by the midpoint rule.
        let b = 1.0 / eps0;
        let (lo, hi, n) = (-60.0 * b, 60.0 * b + 1.0, 2_000_000);
        let h = (hi - lo) / n as f64;
        let (mut m1, mut m2) = (0.0, 0.0);
        for i in 0..n {
            let x = lo + (i as f64 + 0.5) * h;
            let w = (-(x.abs()) / b).exp() / (2.0 * b) * h;
            let l = ((x - 1.0).abs() - x.abs()) / b;
            m1 += w * l;
            m2 += w * l * l;
        }
        let k = 50u64;
        let expect = 2.0 * (k as f64).sqrt() * m1 / (m2 - m1 * m1).sqrt();
        let s: MechanismSpec = format!("laplace:scale={b},count={k}").parse().unwrap();
        let got = Composition::of(&[s]).unwrap().clt_mu().unwrap();
        assert!(
            (got / expect - 1.0).abs() < 1e-4,
            "ε0={eps0}: clt μ {got} vs quadrature {expect}"
        );
    }
}

/// The Neyman–Pearson trade-off of k-fold randomized response by enumeration: the loss
/// takes the values `(k − 2i)ε0`; reject from the largest loss down, interpolating linearly.
fn rr_tradeoff(eps0: f64, k: u64, alpha: f64) -> f64 {
    let p = eps0.exp() / (1.0 + eps0.exp());
    let ln_choose = |i: u64| -> f64 { (1..=i).map(|j| ((k - i + j) as f64 / j as f64).ln()).sum() };
    // Atoms in decreasing loss: i = 0 (all answers kept) first.
    let (mut qa, mut pb) = (0.0f64, 0.0f64);
    for i in 0..=k {
        let c = ln_choose(i);
        let pm = (c + (k - i) as f64 * p.ln() + i as f64 * (1.0 - p).ln()).exp();
        let qm = (c + (k - i) as f64 * (1.0 - p).ln() + i as f64 * p.ln()).exp();
        if qa + qm >= alpha {
            // Randomise on this atom.
            let frac = if qm > 0.0 { (alpha - qa) / qm } else { 0.0 };
            return (1.0 - pb - frac * pm).max(0.0);
        }
        qa += qm;
        pb += pm;
    }
    0.0
}

#[test]
fn k_fold_randomized_response_brackets_the_enumerated_curve() {
    for (eps0, k) in [(0.5, 1u64), (0.5, 20), (0.1, 200), (2.0, 7)] {
        let acc = Accountant::new(vec![(
            Box::new(DiscreteLaw::randomized_response(eps0).unwrap()),
            k,
        )])
        .unwrap();
        let pts = acc.tradeoff(&alphas()).unwrap();
        check(
            &format!("RR ε0={eps0}, k={k}"),
            &pts,
            |a| rr_tradeoff(eps0, k, a),
            1e-9,
            1e-13,
        );
    }
}

/// Rate q = 1 is the plain Gaussian: the bracket holds `G_μ` in closed form. At q < 1 with
/// 50 uses, where no independent curve is computed, it lies between the full mechanism's
/// curve and no privacy loss at all (the curves at one and two uses are checked against
/// Neyman–Pearson quadrature below).
#[test]
fn subsampled_at_q_one_is_the_plain_gaussian_and_many_uses_lie_between_the_extremes() {
    let s: MechanismSpec = "subsampled-gaussian:sigma=2,q=1,count=10".parse().unwrap();
    let pts = Composition::of(&[s]).unwrap().tradeoff(&alphas()).unwrap();
    let m = 0.5 * 10f64.sqrt();
    check(
        "subsampled q=1",
        &pts,
        |a| gaussian_tradeoff(m, a).unwrap(),
        2e-4,
        1e-15,
    );
    let s: MechanismSpec = "subsampled-gaussian:sigma=1,q=0.1,count=50"
        .parse()
        .unwrap();
    let pts = Composition::of(&[s]).unwrap().tradeoff(&alphas()).unwrap();
    let full = 50f64.sqrt();
    for p in &pts {
        assert!(
            p.lower <= p.upper && p.upper <= 1.0 - p.alpha + 1e-15,
            "{p:?}"
        );
        let g = gaussian_tradeoff(full, p.alpha).unwrap();
        assert!(p.upper >= g - 1e-12, "{p:?} below the full mechanism's {g}");
    }
}

/// One use of a Poisson-subsampled mechanism in units of its scale: base noise with CDF
/// `cdf` and survival function `sf` (unit scale), shift `mu` = sensitivity/scale, rate q.
/// The mixture is `M = (1 − q)B + q B_mu`.
struct Subsampled {
    cdf: fn(f64) -> f64,
    sf: fn(f64) -> f64,
    mu: f64,
    q: f64,
}

impl Subsampled {
    /// `M(y ≤ t)`.
    fn m_cdf(&self, t: f64) -> f64 {
        (1.0 - self.q) * (self.cdf)(t) + self.q * (self.cdf)(t - self.mu)
    }

    /// The exact trade-off function the accountant reports for the pair, by the
    /// Neyman–Pearson lemma: the likelihood ratio `dM/dB` is non-decreasing in y (the
    /// base is log-concave), so the most powerful tests are thresholds in y (on a stretch
    /// where the ratio is constant, a threshold inside it is as good as randomising).
    /// "Remove" `T(B, M)`: reject `{y > t}`, `α = B(y > t)`, `β = M(y ≤ t)`. "Add"
    /// `T(M, B)`: reject `{y < t}`, `α = M(y < t)`, `β = B(y ≥ t)`. The mechanism is
    /// f-DP for their pointwise minimum (docs/accountant.md §9, the curve reported).
    /// Each threshold is found by bisection on the closed-form CDFs.
    fn tradeoff(&self, alpha: f64) -> f64 {
        let (remove, add) = self.directions(alpha);
        remove.min(add)
    }

    /// The two directions' curves at α: `(T(B, M)(α), T(M, B)(α))`.
    fn directions(&self, alpha: f64) -> (f64, f64) {
        // α(t) is decreasing in t for "remove" and increasing for "add".
        let solve = |f: &dyn Fn(f64) -> f64, decreasing: bool| -> f64 {
            let (mut a, mut b) = (-80.0, 80.0 + self.mu);
            for _ in 0..200 {
                let m = 0.5 * (a + b);
                if (f(m) > alpha) == decreasing {
                    a = m;
                } else {
                    b = m;
                }
            }
            0.5 * (a + b)
        };
        let t = solve(&|t| (self.sf)(t), true);
        let remove = self.m_cdf(t);
        let t = solve(&|t| self.m_cdf(t), false);
        let add = (self.sf)(t);
        (remove, add)
    }
}

fn laplace_cdf(y: f64) -> f64 {
    if y < 0.0 {
        0.5 * y.exp()
    } else {
        1.0 - 0.5 * (-y).exp()
    }
}

fn laplace_sf(y: f64) -> f64 {
    laplace_cdf(-y)
}

/// Asserts that the bracket of the SPEC (at the accountant's default accuracy, or the one
/// given) holds the exact curve of `m` at every α in `grid`, within `width`, and that each
/// direction alone would miss it somewhere by more than ten of the widest bracket (so the
/// check sees a dropped direction).
fn check_subsampled(
    spec_text: &str,
    accuracy: Option<f64>,
    m: &Subsampled,
    grid: &[f64],
    width: f64,
) {
    let s: MechanismSpec = spec_text.parse().unwrap();
    let mut acc = Composition::of(&[s]).unwrap();
    if let Some(a) = accuracy {
        acc = acc.with_accuracy(a).unwrap();
    }
    let pts = acc.tradeoff(grid).unwrap();
    let wmax = pts.iter().map(|p| p.upper - p.lower).fold(0.0, f64::max);
    check(spec_text, &pts, |a| m.tradeoff(a), width, 1e-12);
    let (mut over_remove, mut over_add) = (0.0f64, 0.0f64);
    for &a in grid {
        let (r, d) = m.directions(a);
        over_remove = over_remove.max(r - d);
        over_add = over_add.max(d - r);
    }
    assert!(
        over_remove > 10.0 * wmax && over_add > 10.0 * wmax,
        "{spec_text}: the directions differ by only {over_remove:e} and {over_add:e}"
    );
}

/// The trade-off curves of one use of the Poisson-subsampled Gaussian and Laplace
/// mechanisms (both directions of the add/remove pair enter as a pointwise minimum)
/// against the Neyman–Pearson curve from the closed-form normal and Laplace CDFs (no
/// privacy-loss law, no discretisation: [`Subsampled::tradeoff`]). The bracket must hold
/// it at 106 α, at the default accuracy and at 1e-6, and be narrow. Catches: a direction
/// dropped from the minimum (either curve alone misses the exact one by 0.0016–0.14 here,
/// at least ten bracket widths), the two directions' losses swapped or mis-signed, a wrong
/// mixture weight, a wrong Laplace plateau. Measured widest brackets: Gaussian 1.2e-5 to
/// 2.2e-4 at the default accuracy, 1e-6 at 1e-6; Laplace, whose loss atoms (the plateaus
/// of the likelihood ratio) do not fall on the grid, up to 9.7e-3 and 4.5e-4.
#[test]
fn subsampled_one_use_brackets_the_neyman_pearson_curve() {
    let grid = alphas();
    for (accuracy, gauss_width, laplace_width) in [(None, 3e-4, 1.5e-2), (Some(1e-6), 2e-6, 7e-4)] {
        for (sigma, q) in [(1.0, 0.1), (0.5, 0.02), (2.0, 0.5)] {
            let m = Subsampled {
                cdf: densities::normal::cdf,
                sf: densities::normal::sf,
                mu: 1.0 / sigma,
                q,
            };
            let spec = format!("subsampled-gaussian:sigma={sigma},q={q}");
            check_subsampled(&spec, accuracy, &m, &grid, gauss_width);
        }
        for (b, q) in [(1.0, 0.1), (0.5, 0.3), (2.0, 0.02)] {
            let m = Subsampled {
                cdf: laplace_cdf,
                sf: laplace_sf,
                mu: 1.0 / b,
                q,
            };
            let spec = format!("subsampled-laplace:scale={b},q={q}");
            check_subsampled(&spec, accuracy, &m, &grid, laplace_width);
        }
    }
}

/// Two uses of the subsampled Gaussian (σ = 1 in units of the sensitivity, shift μ):
/// the exact trade-off of the product pair by the Neyman–Pearson lemma in the summed
/// loss `ℓ(y₁) + ℓ(y₂)`, `ℓ(y) = ln(1 − q + q e^{μy − μ²/2})` increasing in y, so that for
/// a threshold c both errors are one-dimensional integrals over y₁ of a closed-form
/// conditional probability in y₂: `A(c) = B⊗B(ℓ₁ + ℓ₂ > c)`, `C(c) = M⊗M(ℓ₁ + ℓ₂ ≤ c)`.
/// The remove curve is `α = A(c) ↦ C(c)`, the add curve (its inverse) `α = C(c) ↦ A(c)`;
/// c by bisection. Above `y*` with `ℓ(y*) = c − ln(1 − q)` every y₂ exceeds the threshold
/// (closed form); below it the threshold `t(y₁)` in y₂ falls like `ln(y* − y₁)/μ`, so the
/// last unit before y* is integrated in `u = ln(y* − y₁)`, where the integrand is smooth
/// (composite 8-point Gauss–Legendre throughout).
struct TwoUses {
    mu: f64,
    q: f64,
    /// Gauss–Legendre nodes and weights on [0, 1].
    gl: Vec<(f64, f64)>,
    /// Panels on each of the two pieces below y*.
    panels: usize,
}

impl TwoUses {
    fn new(mu: f64, q: f64, panels: usize) -> Self {
        let x = [
            0.183_434_642_495_649_8,
            0.525_532_409_916_329,
            0.796_666_477_413_626_7,
            0.960_289_856_497_536_3,
        ];
        let w = [
            0.362_683_783_378_362,
            0.313_706_645_877_887_3,
            0.222_381_034_453_374_5,
            0.101_228_536_290_376_3,
        ];
        let mut gl = Vec::with_capacity(8);
        for j in 0..4 {
            gl.push((0.5 - 0.5 * x[j], 0.5 * w[j]));
            gl.push((0.5 + 0.5 * x[j], 0.5 * w[j]));
        }
        Self { mu, q, gl, panels }
    }

    /// `Σ f` over composite Gauss–Legendre nodes on `[a, b]` with `n` panels.
    fn integrate(&self, a: f64, b: f64, n: usize, f: &mut dyn FnMut(f64, f64)) {
        if b <= a {
            return;
        }
        let h = (b - a) / n as f64;
        for i in 0..n {
            for &(x, w) in &self.gl {
                f(a + (i as f64 + x) * h, w * h);
            }
        }
    }

    fn loss(&self, y: f64) -> f64 {
        (self.q * (self.mu * y - 0.5 * self.mu * self.mu).exp_m1()).ln_1p()
    }

    /// The y with `ℓ(y) = v`, or −∞ when every y has a larger loss (`v ≤ ln(1 − q)`).
    fn inverse(&self, v: f64) -> f64 {
        let r = v.exp_m1() + self.q; // e^v − (1 − q)
        if r <= 0.0 {
            f64::NEG_INFINITY
        } else {
            ((r / self.q).ln() + 0.5 * self.mu * self.mu) / self.mu
        }
    }

    fn m_cdf(&self, t: f64) -> f64 {
        use densities::normal::cdf;
        (1.0 - self.q) * cdf(t) + self.q * cdf(t - self.mu)
    }

    fn m_pdf(&self, y: f64) -> f64 {
        use densities::normal::pdf;
        (1.0 - self.q) * pdf(y) + self.q * pdf(y - self.mu)
    }

    /// `(A(c), C(c))`.
    fn errors(&self, c: f64) -> (f64, f64) {
        use densities::normal::{pdf, sf};
        let y_star = self.inverse(c - (-self.q).ln_1p());
        if y_star == f64::NEG_INFINITY {
            return (1.0, 0.0);
        }
        // Above y*: A gets B(y₁ > y*), C nothing. Below: both laws hold less than 1e-50
        // outside [−15, 15 + μ].
        let (mut a, mut b) = (sf(y_star), 0.0);
        let mut add = |y: f64, w: f64| {
            let t = self.inverse(c - self.loss(y));
            a += w * pdf(y) * sf(t);
            b += w * self.m_pdf(y) * self.m_cdf(t);
        };
        let (lo, hi) = (-15.0, 15.0 + self.mu);
        let mid = (y_star - 1.0).min(hi);
        self.integrate(lo, mid, self.panels, &mut |y, w| add(y, w));
        // The last unit below y*, in u = ln(y* − y): dy = e^u du (below e^{−40} it adds
        // less than 1e-17).
        let (u_lo, u_hi) = (
            (y_star - hi).max((-40f64).exp()).ln(),
            (y_star - lo).min(1.0).ln(),
        );
        self.integrate(u_lo, u_hi, self.panels, &mut |u, w| {
            let d = u.exp();
            add(y_star - d, w * d)
        });
        (a, b)
    }

    /// `(remove, add)` curves at α.
    fn directions(&self, alpha: f64) -> (f64, f64) {
        // A falls and C rises with c; the losses lie in (2 ln(1 − q), 40μ).
        let solve = |pick: &dyn Fn((f64, f64)) -> f64, falling: bool| -> f64 {
            let (mut lo, mut hi) = (2.0 * (-self.q).ln_1p(), 40.0 * self.mu);
            for _ in 0..56 {
                let m = 0.5 * (lo + hi);
                if (pick(self.errors(m)) > alpha) == falling {
                    lo = m;
                } else {
                    hi = m;
                }
            }
            0.5 * (lo + hi)
        };
        let remove = self.errors(solve(&|e| e.0, true)).1;
        let add = self.errors(solve(&|e| e.1, false)).0;
        (remove, add)
    }
}

/// Two uses of the Poisson-subsampled Gaussian against [`TwoUses`] (a one-dimensional
/// quadrature of the product pair's Neyman–Pearson errors, independent of the privacy-loss
/// lattice, its FFT composition and its envelope), at 23 α from 1e-4 to 0.99: the bracket
/// (accuracy 1e-6) holds the minimum of the two directions and is narrow. Catches what
/// the one-use test does, in a composition, and a composition that mixes the directions
/// (e.g. one remove and one add factor), which one use cannot show.
#[test]
fn subsampled_gaussian_two_uses_bracket_the_quadrature_curve() {
    let mut grid: Vec<f64> = (1..20).map(|i| i as f64 / 20.0).collect();
    grid.extend([1e-4, 1e-3, 1e-2, 0.99]);
    for (sigma, q) in [(1.0, 0.2), (0.5, 0.05)] {
        let two = TwoUses::new(1.0 / sigma, q, 60);
        let dirs: Vec<(f64, f64)> = grid.iter().map(|&a| two.directions(a)).collect();
        let s: MechanismSpec = format!("subsampled-gaussian:sigma={sigma},q={q},count=2")
            .parse()
            .unwrap();
        let pts = Composition::of(&[s])
            .unwrap()
            .with_accuracy(1e-6)
            .unwrap()
            .tradeoff(&grid)
            .unwrap();
        let exact = |a: f64| {
            let i = grid.iter().position(|&g| g == a).unwrap();
            dirs[i].0.min(dirs[i].1)
        };
        check(
            &format!("two uses, σ = {sigma}, q = {q}"),
            &pts,
            exact,
            1e-5,
            1e-11,
        );
        let gap = dirs.iter().map(|(r, d)| (r - d).abs()).fold(0.0, f64::max);
        assert!(
            gap > 1e-3,
            "σ {sigma} q {q}: directions differ by only {gap}"
        );
    }
}

#[test]
fn bad_alpha_is_refused() {
    let acc = Accountant::new(vec![(Box::new(GaussianLaw::new(1.0).unwrap()), 1)]).unwrap();
    assert!(acc.tradeoff(&[1.5]).is_err() && acc.tradeoff(&[f64::NAN]).is_err());
}

#[test]
fn truncated_laplacian_brackets_its_shift_tradeoff() {
    use densities::tradeoff::shift_tradeoff;
    use densities::truncated_laplace::TruncatedLaplace;
    for (eps, delta) in [(1.0, 1e-3), (0.3, 1e-6)] {
        let tl = TruncatedLaplace::new(eps, delta, 1.0).unwrap();
        let s: MechanismSpec = format!("truncated-laplace:epsilon={eps},delta={delta}")
            .parse()
            .unwrap();
        let pts = Composition::of(&[s]).unwrap().tradeoff(&alphas()).unwrap();
        check(
            &format!("truncated Laplacian ({eps}, {delta})"),
            &pts,
            |a| shift_tradeoff(&tl, 1.0, a).unwrap(),
            2e-4,
            1e-14,
        );
    }
}

/// One use of bounded noise `R·X`, `X ∝ e^{−f}` on (−1, 1), against its shift by `r = s/R`:
/// `T(α) = F(F⁻¹(1 − α) − r)` (symmetric log-concave), with F by the trapezoidal rule on a
/// fine grid. Its loss has a long heavy upper tail, which the trade-off caps (moving it to
/// +∞ on one side, down to the cap on the other); the bracket must still hold.
#[test]
fn bounded_noise_single_use_brackets_the_quadrature_curve() {
    use densities::bounded::BoundedFamily;
    let fam = BoundedFamily::power(2.0).unwrap();
    let n = 2_000_000usize;
    let h = 2.0 / n as f64;
    let dens: Vec<f64> = (0..=n)
        .map(|i| (-fam.f(-1.0 + i as f64 * h)).exp())
        .collect();
    let mut cdf = vec![0.0; n + 1];
    for i in 1..=n {
        cdf[i] = cdf[i - 1] + 0.5 * h * (dens[i - 1] + dens[i]);
    }
    let z = cdf[n];
    let f_at = |x: f64| -> f64 {
        if x <= -1.0 {
            return 0.0;
        }
        let t = ((x + 1.0) / h).min(n as f64 - 1e-9);
        let i = t.floor() as usize;
        (cdf[i] + (t - i as f64) * (cdf[i + 1] - cdf[i])) / z
    };
    let quantile = |p: f64| -> f64 {
        let (mut a, mut b) = (-1.0f64, 1.0f64);
        for _ in 0..80 {
            let m = 0.5 * (a + b);
            if f_at(m) < p {
                a = m;
            } else {
                b = m;
            }
        }
        0.5 * (a + b)
    };
    for radius in [4.0, 10.0] {
        let r = 1.0 / radius;
        let s: MechanismSpec = format!("bounded:family=power,alpha=2,radius={radius}")
            .parse()
            .unwrap();
        let grid: Vec<f64> = (1..100).map(|i| i as f64 / 100.0).collect();
        let pts = Composition::of(&[s]).unwrap().tradeoff(&grid).unwrap();
        check(
            &format!("bounded power(2), r = {r}"),
            &pts,
            |a| f_at(quantile(1.0 - a) - r),
            2e-3,
            1e-7,
        );
    }
}
