//! fig2's optimisation (`mgf::adaptive`) against dense scans written here, and its
//! reported points checked from the transfer theorem written out (docs/maths.md §5).

use densities::bounded::BoundedFamily;
use densities::gaussian::analytic_sigma;
use densities::normal::cdf;
use mgf::adaptive::Transfer;
use mgf::{certified_radius, BoundedNoise};

/// The Gaussian optimisation (a 5⁴ grid start, then coordinate-wise Brent over ln ε,
/// ln ln(1/δ), ln β_s and logit w) against a dense scan of the same box (16⁴ = 65,536
/// points, offset from the optimiser's grid): the optimiser's k is never below the scan's
/// best (measured: 25,084 against 22,440 at n = 1e6), and no coordinate step from it gains
/// more than 1 %. Its reported point is then checked from the transfer theorem: the
/// accuracy and failure budgets add up to at most α and β, and k answers with noise σ
/// (the analytic σ at sensitivity √k/n, checked through the Gaussian profile written out)
/// stay within α_s with probability at least 1 − β_s, by the max-of-k law
/// `(1 − 2Φ(−α_s/σ))^k`, while k·1.02 answers would not.
#[test]
fn gaussian_optimum_beats_a_dense_scan_and_is_feasible() {
    let t = Transfer::new(0.1, 0.05).unwrap();
    for n in [1e4, 1e6] {
        let got = t.best_gaussian(n);
        let bounds = t.gaussian_box();
        let m = 16usize;
        let mut scan = 0.0f64;
        for idx in 0..m.pow(4) {
            let mut x = [0.0; 4];
            let mut r = idx;
            for (xi, &(lo, hi)) in x.iter_mut().zip(&bounds) {
                *xi = lo + (hi - lo) * (r % m) as f64 / (m - 1) as f64;
                r /= m;
            }
            scan = scan.max(t.gaussian_point(n, &x).k.floor());
        }
        assert!(scan >= 1.0, "n {n}: the scan found nothing");
        assert!(
            got.k >= scan,
            "n {n}: optimiser k {} below the scan's {scan}",
            got.k
        );
        // A local maximum: no coordinate step of ±0.02 (in the log/logit parameters)
        // from the reported point gains more than 1 % in k.
        let w = got.beta_s / (t.beta * got.c);
        let x0 = [
            got.epsilon.ln(),
            (-got.delta.ln()).ln(),
            got.beta_s.ln(),
            (w / (1.0 - w)).ln(),
        ];
        for i in 0..4 {
            for h in [-0.02, 0.02] {
                let mut x = x0;
                x[i] += h;
                let k = t.gaussian_point(n, &x).k.floor();
                assert!(
                    k <= got.k * 1.01 + 1.0,
                    "n {n}: step {h} in {i} gives {k} > {}",
                    got.k
                );
            }
        }
        let (eps, delta, bs, c, d, a_s, k) = (
            got.epsilon,
            got.delta,
            got.beta_s,
            got.c,
            got.d,
            got.alpha_s,
            got.k,
        );
        assert!(
            a_s + eps.exp_m1() + c + 2.0 * d <= t.alpha * (1.0 + 1e-12),
            "n {n}"
        );
        assert!(bs / c + delta / d <= t.beta * (1.0 + 1e-12), "n {n}");
        // P(max of k |N(0, σ²)| > α_s) at the σ that k queries of sensitivity 1/n need.
        let miss = |k: f64| {
            let sigma = analytic_sigma(eps, delta, k.sqrt() / n).unwrap();
            let mu = k.sqrt() / n / sigma;
            let gauss_delta = cdf(-eps / mu + mu / 2.0) - eps.exp() * cdf(-eps / mu - mu / 2.0);
            assert!(gauss_delta <= delta * (1.0 + 1e-9), "n {n}: σ not private");
            let tail = 2.0 * cdf(-a_s / sigma);
            -(k * (-tail).ln_1p()).exp_m1()
        };
        assert!(
            miss(k) <= bs * (1.0 + 1e-9),
            "n {n}: P(max > α_s) = {} > β_s {bs}",
            miss(k)
        );
        // Tight: 2 % more queries (and at least one more) break the failure budget.
        let more = (k * 1.02).max(k + 1.0);
        assert!(miss(more) > bs, "n {n}: {more} queries still fit");
    }
}

/// Bounded noise: the n-independent (ε, δ) of `bounded_start` against a scan of the
/// real quantity, the certified k at n = 1e6, over a 5 × 5 grid of the search box; its
/// k is the scan's best or above. The reported point is checked from the transfer
/// condition written out (`R(k)/n + e^ε − 1 + 2δ/β ≤ α`, R the certified radius), and it
/// is within 1 % of the largest such k at that (ε, δ) (k·1.01 fails the condition).
#[test]
#[ignore = "long: 12 s of certified-radius searches; runs in CI's long step (just test-all)"]
fn bounded_optimum_beats_a_scan_and_is_feasible() {
    let t = Transfer::new(0.1, 0.05).unwrap();
    let noise = BoundedNoise::new(BoundedFamily::power(2.0).unwrap()).unwrap();
    let n = 1e6;
    let start = t.bounded_start(&noise);
    let got = t.best_bounded(&noise, n, &start);
    let bx = t.bounded_box();
    let m = 5usize;
    let mut scan = 0.0f64;
    for i in 0..m {
        for j in 0..m {
            let u = bx[0].0 + (bx[0].1 - bx[0].0) * (i as f64 + 0.5) / m as f64;
            let v = bx[1].0 + (bx[1].1 - bx[1].0) * (j as f64 + 0.5) / m as f64;
            scan = scan.max(t.bounded_k(&noise, n, u.exp(), (-v.exp()).exp(), true));
        }
    }
    assert!(scan >= 1.0, "the scan found nothing");
    assert!(
        got.k >= scan,
        "optimiser k {} below the scan's {scan}",
        got.k
    );
    let fits = |k: f64| {
        let r = certified_radius(&noise, k, got.epsilon, got.delta)
            .unwrap()
            .radius;
        r / n + got.epsilon.exp_m1() + 2.0 * got.delta / t.beta <= t.alpha
    };
    assert!(fits(got.k), "the reported k = {} is not feasible", got.k);
    assert!(
        !fits(got.k * 1.01),
        "k = {} is 1 % short of the largest",
        got.k
    );
    assert_eq!(got.d, got.delta / t.beta);
}
