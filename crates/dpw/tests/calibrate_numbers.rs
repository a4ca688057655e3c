//! `dpw calibrate`'s numbers, row by row, against routes that do not go through
//! `dpw::calibrate` (issue 19, item 6):
//! - Laplace (Dwork–Roth Thm 3.6): `b = kΔ/ε` written out, E|X| = b, E X² = 2b²;
//! - classical Gaussian (Dwork–Roth Thm A.1): `σ = √k Δ √(2 ln(1.25/δ))/ε` written out;
//! - analytic Gaussian (Balle & Wang 2018, Thm 8; docs/accountant.md §2): the exact
//!   profile `δ(σ) = Φ(Δ₂/(2σ) − εσ/Δ₂) − e^ε Φ(−Δ₂/(2σ) − εσ/Δ₂)` at the L2 sensitivity
//!   `Δ₂ = √k Δ`, from `special`'s erfc: at most δ at the printed σ, above δ just below it;
//! - truncated Laplacian (Geng et al. 2020, Thm 1): λ = Δ/ε and A written out; its δ (the
//!   mass of `[−A, Δ − A)`, where the shifted density vanishes; elsewhere the loss is at
//!   most ε), its moments and its β-quantile by Simpson quadrature of the density;
//! - bounded noise (Dagan & Kur 2022; docs/accountant.md §7): the scale is the certified
//!   radius times Δ, and the moments and tail level bound Simpson quadratures;
//! - every max-of-k error: the closed-form coverage, and a seeded simulation of N runs of
//!   k answers (exceedance frequency within 5 standard errors of β, one-sided for the
//!   bounds).

use dpw::calibrate::{calibrate, Numbers, Request};
use mgf::{certified_radius, BoundedNoise};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use rand_pcg::Pcg64;
use special::Error as _;

fn row(rows: &[dpw::calibrate::Row], name: &str) -> Result<Numbers, String> {
    rows.iter()
        .find(|r| r.mechanism == name)
        .unwrap_or_else(|| panic!("no row {name}"))
        .result
        .clone()
}

fn rel(a: f64, b: f64) -> f64 {
    (a / b - 1.0).abs()
}

/// Standard normal upper tail `1 − Φ(x)` from erfc.
fn normal_sf(x: f64) -> f64 {
    0.5 * (x / std::f64::consts::SQRT_2).compl_error()
}

/// Exact δ(ε) of the Gaussian mechanism, noise σ, L2 sensitivity `s`.
fn gaussian_profile(eps: f64, s: f64, sigma: f64) -> f64 {
    let (a, b) = (s / (2.0 * sigma), eps * sigma / s);
    normal_sf(b - a) - eps.exp() * normal_sf(a + b)
}

/// Composite Simpson of `g` on `[a, b]` with `n` (even) panels.
fn simpson(g: impl Fn(f64) -> f64, a: f64, b: f64, n: usize) -> f64 {
    let h = (b - a) / n as f64;
    let mut s = g(a) + g(b);
    for i in 1..n {
        s += if i % 2 == 1 { 4.0 } else { 2.0 } * g(a + i as f64 * h);
    }
    s * h / 3.0
}

const EPS: [f64; 4] = [0.3, 0.9, 1.0, 3.0];
const DELTAS: [f64; 3] = [1e-3, 1e-6, 1e-9];
const KS: [f64; 3] = [1.0, 10.0, 100.0];
const SENS: [f64; 2] = [0.5, 2.0];
const BETA: f64 = 0.05;

#[test]
fn laplace_and_gaussian_rows_match_their_closed_forms() {
    for (i, eps) in EPS.into_iter().enumerate() {
        for (j, delta) in DELTAS.into_iter().enumerate() {
            // One (k, Δ) per (ε, δ), every k with every δ: 12 calls (without the exact
            // bounded row, which these rows do not depend on and which takes the time).
            let (k, s) = (KS[(i + j) % 3], SENS[(i + 2 * j) % 2]);
            let req = Request::new(eps, delta, k, s, BETA)
                .unwrap()
                .without_exact_row();
            let rows = calibrate(&req);
            let at = format!("eps={eps} delta={delta} k={k} s={s}");

            let lap = row(&rows, "Laplace").unwrap();
            let b = k * s / eps;
            assert!(rel(lap.scale, b) < 1e-15, "{at}: b {}", lap.scale);
            assert!(rel(lap.mean_abs, b) < 1e-15 && rel(lap.second_moment, 2.0 * b * b) < 1e-15);
            // P(max |X_i| ≤ t) = (1 − e^{−t/b})^k = 1 − β.
            let cover = k * (-(-lap.max_error / b).exp()).ln_1p();
            assert!(
                rel(cover, (-BETA).ln_1p()) < 1e-10,
                "{at}: Laplace max {}",
                lap.max_error
            );

            let l2 = k.sqrt() * s;
            let classical = row(&rows, "classical Gaussian");
            if eps < 1.0 {
                let want = l2 * (2.0 * (1.25 / delta).ln()).sqrt() / eps;
                assert!(rel(classical.as_ref().unwrap().scale, want) < 1e-14, "{at}");
            } else {
                assert!(classical.is_err(), "{at}");
            }

            let g = row(&rows, "analytic Gaussian").unwrap();
            let sigma = g.scale;
            let d_at = gaussian_profile(eps, l2, sigma);
            assert!(
                d_at <= delta * (1.0 + 1e-9),
                "{at}: delta(sigma={sigma}) = {d_at}"
            );
            let d_below = gaussian_profile(eps, l2, sigma * (1.0 - 1e-6));
            assert!(d_below > delta, "{at}: sigma={sigma} not least ({d_below})");
            let m1 = sigma * (2.0 / std::f64::consts::PI).sqrt();
            assert!(rel(g.mean_abs, m1) < 1e-15 && rel(g.second_moment, sigma * sigma) < 1e-15);
            // P(max |X_i| ≤ t) = (1 − 2 Φ̄(t/σ))^k = 1 − β.
            let cover = k * (-2.0 * normal_sf(g.max_error / sigma)).ln_1p();
            assert!(
                rel(cover, (-BETA).ln_1p()) < 1e-9,
                "{at}: Gaussian max {}",
                g.max_error
            );
            if let Ok(c) = classical {
                let cover = k * (-2.0 * normal_sf(c.max_error / c.scale)).ln_1p();
                assert!(rel(cover, (-BETA).ln_1p()) < 1e-9, "{at}");
            }
        }
    }
}

#[test]
fn truncated_laplacian_row_by_quadrature() {
    for (i, eps) in EPS.into_iter().enumerate() {
        for delta in DELTAS {
            let s = SENS[i % 2];
            let req = Request::new(eps, delta, 1.0, s, BETA)
                .unwrap()
                .without_exact_row();
            let rows = calibrate(&req);
            let at = format!("eps={eps} delta={delta} s={s}");
            let n = row(&rows, "truncated Laplacian").unwrap();
            let lambda = s / eps;
            assert!(rel(n.scale, lambda) < 1e-15, "{at}: lambda {}", n.scale);
            let a = lambda * ((eps.exp() - 1.0) / (2.0 * delta)).ln_1p();
            // Density on [−A, A] (unnormalised e^{−|x|/λ}); Z, δ, moments and the
            // β-quantile by Simpson on [0, A] (symmetric) or [−A, Δ − A].
            let u = |x: f64| (-x.abs() / lambda).exp();
            let panels = 200_000;
            let z = 2.0 * simpson(u, 0.0, a, panels);
            assert!(s <= a, "{at}");
            let d = simpson(u, -a, s - a, panels) / z;
            assert!(d <= delta * (1.0 + 1e-9), "{at}: delta of TL = {d}");
            assert!(d >= delta * (1.0 - 1e-6), "{at}: TL not tight, delta = {d}");
            let m1 = 2.0 * simpson(|x| x * u(x), 0.0, a, panels) / z;
            let m2 = 2.0 * simpson(|x| x * x * u(x), 0.0, a, panels) / z;
            assert!(
                rel(n.mean_abs, m1) < 1e-9,
                "{at}: E|X| {} vs {m1}",
                n.mean_abs
            );
            assert!(
                rel(n.second_moment, m2) < 1e-9,
                "{at}: E X^2 {} vs {m2}",
                n.second_moment
            );
            // P(|X| > max_error) = β (or the edge A when β is beyond the support).
            let t = n.max_error;
            let tail = 2.0 * simpson(u, t, a, panels) / z;
            if t < a {
                assert!(rel(tail, BETA) < 1e-8, "{at}: P(|X| > {t}) = {tail}");
            } else {
                assert!(tail <= BETA, "{at}");
            }
        }
    }
}

/// The certified bounded-noise row: its scale is the certified radius of mgf times Δ, and
/// its moments and max-of-k error bound Simpson quadratures of the unit density.
#[test]
fn bounded_row_matches_certified_radius_and_bounds_quadrature() {
    use densities::bounded::BoundedFamily;
    for (spec, fam) in [
        ("power:2", BoundedFamily::Power { alpha: 2.0 }),
        ("exp", BoundedFamily::Exp),
    ] {
        let noise = BoundedNoise::new(fam).unwrap();
        let g = |x: f64| {
            if x.abs() >= 1.0 {
                0.0
            } else {
                (-fam.f(x)).exp()
            }
        };
        let z = 2.0 * simpson(g, 0.0, 1.0, 400_000);
        let m1 = 2.0 * simpson(|x| x * g(x), 0.0, 1.0, 400_000) / z;
        let m2 = 2.0 * simpson(|x| x * x * g(x), 0.0, 1.0, 400_000) / z;
        for (eps, delta, k, s) in [
            (1.0, 1e-6, 10.0, 2.0),
            (0.5, 1e-9, 100.0, 1.0),
            (3.0, 1e-3, 1.0, 0.5),
        ] {
            let req = Request::new(eps, delta, k, s, BETA)
                .unwrap()
                .with_density(spec)
                .unwrap()
                .without_exact_row();
            let rows = calibrate(&req);
            let at = format!("{spec} eps={eps} delta={delta} k={k}");
            let n = row(&rows, &format!("bounded noise {}", fam.name())).unwrap();
            let r = certified_radius(&noise, k, eps, delta).unwrap().radius;
            assert!(
                rel(n.scale, r * s) < 1e-15,
                "{at}: scale {} vs R*s {}",
                n.scale,
                r * s
            );
            assert!(n.upper_bounds);
            let unit = |v: f64| v / n.scale;
            assert!(
                unit(n.mean_abs) >= m1 && unit(n.mean_abs) <= m1 * (1.0 + 1e-4),
                "{at}"
            );
            assert!(
                n.second_moment / (n.scale * n.scale) >= m2
                    && n.second_moment / (n.scale * n.scale) <= m2 * (1.0 + 1e-4),
                "{at}"
            );
            // Union bound: P(|X| > L) ≤ β/k at L = max_error/scale.
            let l = unit(n.max_error);
            let tail = 2.0 * simpson(g, l, 1.0, 200_000) / z;
            assert!(tail <= BETA / k, "{at}: P(|X| > {l}) = {tail} > beta/k");
            assert!(l < 1.0);
        }
    }
}

/// Rejection sampler of the unit bounded density `e^{−f}` (proposal uniform on (−1, 1),
/// acceptance `e^{f(0) − f(x)}`; f is smallest at 0).
fn bounded_draw(fam: densities::bounded::BoundedFamily, rng: &mut Pcg64) -> f64 {
    let f0 = fam.f(0.0);
    loop {
        let x: f64 = rng.gen_range(-1.0..1.0);
        if rng.gen::<f64>() < (f0 - fam.f(x)).exp() {
            return x;
        }
    }
}

/// Exceedance frequency of the max-of-k error over `runs` seeded runs.
fn exceedance(runs: usize, k: usize, level: f64, mut draw: impl FnMut() -> f64) -> f64 {
    let mut hits = 0usize;
    for _ in 0..runs {
        let mut max = 0.0_f64;
        for _ in 0..k {
            max = max.max(draw().abs());
        }
        if max > level {
            hits += 1;
        }
    }
    hits as f64 / runs as f64
}

/// The max-of-k error's coverage by simulation: `P(max_i |X_i| > max error)` is β for the
/// exact rows (within 5 standard errors both ways) and at most β for bounded noise.
#[test]
fn max_of_k_errors_cover_by_simulation() {
    use densities::bounded::BoundedFamily;
    let beta = 0.1;
    let runs = 20_000;
    let se = (beta * (1.0 - beta) / runs as f64).sqrt();
    let mut rng = Pcg64::seed_from_u64(19);
    for (k, eps, delta) in [(1usize, 1.0, 1e-3), (10, 0.5, 1e-6), (50, 2.0, 1e-5)] {
        let req = Request::new(eps, delta, k as f64, 1.0, beta)
            .unwrap()
            .without_exact_row();
        let rows = calibrate(&req);
        let at = format!("k={k} eps={eps}");

        let lap = row(&rows, "Laplace").unwrap();
        let b = lap.scale;
        let freq = exceedance(runs, k, lap.max_error, || {
            // Inverse CDF of |X|, with a random sign (irrelevant to |X|).
            -b * (1.0 - rng.gen::<f64>()).ln()
        });
        assert!(
            (freq - beta).abs() <= 5.0 * se,
            "{at}: Laplace exceeds {freq}"
        );

        let g = row(&rows, "analytic Gaussian").unwrap();
        let freq = exceedance(runs, k, g.max_error, || {
            let z: f64 = StandardNormal.sample(&mut rng);
            g.scale * z
        });
        assert!(
            (freq - beta).abs() <= 5.0 * se,
            "{at}: Gaussian exceeds {freq}"
        );

        if k == 1 {
            let t = row(&rows, "truncated Laplacian").unwrap();
            // |X| has density ∝ e^{−x/λ} on [0, A]: inverse CDF.
            let (lambda, a) = (
                t.scale,
                eps.recip() * ((eps.exp() - 1.0) / (2.0 * delta)).ln_1p(),
            );
            let freq = exceedance(runs, 1, t.max_error, || {
                let u: f64 = rng.gen();
                -lambda * (-u * -(-a / lambda).exp_m1()).ln_1p()
            });
            assert!((freq - beta).abs() <= 5.0 * se, "{at}: TL exceeds {freq}");
        }

        let n = row(&rows, "bounded noise power(2)").unwrap();
        let fam = BoundedFamily::Power { alpha: 2.0 };
        let freq = exceedance(runs, k, n.max_error, || {
            n.scale * bounded_draw(fam, &mut rng)
        });
        assert!(freq <= beta + 5.0 * se, "{at}: bounded exceeds {freq}");
    }
}

/// At the ends of the accepted ranges (ε ∈ {1e-8, 100}, δ ∈ {1e-300, 0.5}, k up to 1e10,
/// Δ ∈ {1e-100, 1e100}) every row keeps its digits: noise is linear in the sensitivity,
/// so each scale, E|X| and max error at Δ must be Δ times the one at Δ = 1, and E X² Δ²
/// times (within 1e-12 relative: the calibrations run at unit sensitivity or are
/// homogeneous formulas), with the same rows applicable. A subnormal or overflowing
/// intermediate (issue 15: σ at ε = 1e308 printed 3e-322, Δ = 1e-320 lost its digits)
/// breaks the identity. The Laplace row is also held to `kΔ/ε` written out. The exact
/// bounded row (a search of seconds each) is held to it at the point marked `true`: its
/// search runs at unit sensitivity, so one point shows that the scale is applied after it.
#[test]
fn every_row_scales_with_the_sensitivity_at_the_range_ends() {
    let points: [(f64, f64, f64, bool); 8] = [
        (1e-8, 1e-6, 1.0, false),
        (100.0, 1e-6, 1.0, false),
        (1.0, 1e-300, 1.0, false),
        (1.0, 0.5, 1.0, false),
        (1e-8, 1e-300, 1e10, false),
        (100.0, 0.5, 1e4, true),
        (0.5, 1e-12, 1e6, false),
        (1.0, 1e-6, 10.0, false),
    ];
    for (eps, delta, k, exact) in points {
        let request = |s: f64| {
            let r = Request::new(eps, delta, k, s, 0.05).unwrap();
            if exact {
                r
            } else {
                r.without_exact_row()
            }
        };
        let unit = calibrate(&request(1.0));
        if exact {
            let r = unit
                .iter()
                .find(|r| r.mechanism.ends_with("exact R"))
                .unwrap();
            assert!(
                r.result.is_ok(),
                "eps {eps}, k {k}: exact row {:?}",
                r.result
            );
        }
        for s in [1e-100, 1e100] {
            let at = format!("eps {eps}, delta {delta}, k {k}, sensitivity {s}");
            let scaled = calibrate(&request(s));
            assert_eq!(unit.len(), scaled.len(), "{at}");
            for (u, r) in unit.iter().zip(&scaled) {
                assert_eq!(u.mechanism, r.mechanism, "{at}");
                let name = &u.mechanism;
                match (&u.result, &r.result) {
                    (Ok(a), Ok(b)) => {
                        for (what, x, y, p) in [
                            ("scale", a.scale, b.scale, 1),
                            ("E|X|", a.mean_abs, b.mean_abs, 1),
                            ("E X^2", a.second_moment, b.second_moment, 2),
                            ("max error", a.max_error, b.max_error, 1),
                        ] {
                            let want = x * s.powi(p);
                            assert!(
                                want.is_finite() && want > 0.0 && rel(y, want) <= 1e-12,
                                "{at}, {name}, {what}: {y:e} against {want:e}"
                            );
                        }
                    }
                    (Err(_), Err(_)) => {}
                    (a, b) => panic!("{at}, {name}: unit {a:?} but scaled {b:?}"),
                }
            }
            let lap = row(&scaled, "Laplace").unwrap();
            assert!(rel(lap.scale, k * s / eps) <= 1e-15, "{at}: Laplace b");
        }
    }
}
