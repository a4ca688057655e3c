//! The truncated Laplacian mechanism of Geng, Ding, Guo & Kumar (2018), eq. 7 and
//! Theorems 1–3 (docs/maths.md §1.3).
//!
//! With `λ = Δ/ε`, `h = ln(1 + (e^ε − 1)/(2δ))`, `A = λh` and
//! `B = 1/(2λ(1 − e^{−h}))`, the density is `B e^{−|x|/λ}` on `[−A, A]`; adding it to a
//! query of sensitivity Δ is (ε, δ)-DP (Theorem 1).

use crate::error::{check_open, DensityError};
use crate::traits::{Continuous, ContinuousCdf, NoiseMoments};

/// The truncated Laplacian calibrated to (ε, δ) and sensitivity Δ.
///
/// ```
/// use densities::truncated_laplace::TruncatedLaplace;
/// use densities::traits::NoiseMoments;
/// let t = TruncatedLaplace::new(0.1, 1e-5, 1.0).unwrap();
/// assert!((t.mean_abs() - 9.983706903).abs() < 1e-8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TruncatedLaplace {
    /// Scale `λ = Δ/ε`.
    pub lambda: f64,
    /// Truncation in units of λ: `h = ln(1 + (e^ε − 1)/(2δ))`.
    pub h: f64,
    /// Half-width of the support `A = λh`.
    pub a: f64,
}

/// Lower incomplete gamma `γ(n, h) = ∫₀^h u^{n−1} e^{−u} du` for n = 2, 3, without the
/// cancellation of the closed forms `1 − e^{−h}(1 + h)` and `2 − e^{−h}(h² + 2h + 2)`
/// at small h (series below 1).
fn lower_gamma_small_n(n: u32, h: f64) -> f64 {
    if h < 1.0 {
        // Σ_j (−1)^j h^{j+n} / (j! (j+n)); terms fall like h^j/j!, 30 terms suffice.
        let mut term = h.powi(n as i32); // (−1)^j h^{j+n}/j!
        let mut sum = 0.0;
        for j in 0..30 {
            sum += term / (j + n) as f64;
            term *= -h / (j + 1) as f64;
        }
        sum
    } else {
        let e = (-h).exp();
        match n {
            2 => 1.0 - e * (1.0 + h),
            3 => 2.0 - e * (h * h + 2.0 * h + 2.0),
            _ => unreachable!("only n = 2, 3 are used"),
        }
    }
}

impl TruncatedLaplace {
    /// Calibrates to (ε, δ)-DP for sensitivity Δ: ε > 0, δ ∈ (0, 1), Δ > 0.
    pub fn new(epsilon: f64, delta: f64, sensitivity: f64) -> Result<Self, DensityError> {
        check_open("epsilon", epsilon, 0.0, f64::INFINITY, "(0, inf)")?;
        check_open("delta", delta, 0.0, 1.0, "(0, 1)")?;
        check_open("sensitivity", sensitivity, 0.0, f64::INFINITY, "(0, inf)")?;
        let lambda = sensitivity / epsilon;
        // ln(1 + (e^ε − 1)/(2δ)) with expm1 so that small ε keeps its digits.
        let h = (epsilon.exp_m1() / (2.0 * delta)).ln_1p();
        Ok(Self {
            lambda,
            h,
            a: lambda * h,
        })
    }

    /// Mass normaliser `1 − e^{−h}` (the density is `e^{−|x|/λ}/(2λ(1 − e^{−h}))`).
    fn mass(&self) -> f64 {
        -(-self.h).exp_m1()
    }

    /// Draws one sample by inversion of the CDF from a uniform `u ∈ (0, 1)`.
    pub fn sample_from_uniform(&self, u: f64) -> f64 {
        self.quantile(u)
    }

    /// Draws one sample from `rng` (inversion of the CDF).
    pub fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        self.quantile(rng.gen::<f64>())
    }
}

impl Continuous for TruncatedLaplace {
    fn pdf(&self, x: f64) -> f64 {
        if x.abs() > self.a {
            0.0
        } else {
            (-x.abs() / self.lambda).exp() / (2.0 * self.lambda * self.mass())
        }
    }
    fn ln_pdf(&self, x: f64) -> f64 {
        if x.abs() > self.a {
            f64::NEG_INFINITY
        } else {
            -x.abs() / self.lambda - (2.0 * self.lambda * self.mass()).ln()
        }
    }
}

impl ContinuousCdf for TruncatedLaplace {
    fn cdf(&self, x: f64) -> f64 {
        if x <= -self.a {
            0.0
        } else if x >= self.a {
            1.0
        } else if x <= 0.0 {
            // ½ (e^{x/λ} − e^{−h}) / (1 − e^{−h})
            0.5 * ((x / self.lambda).exp() - (-self.h).exp()) / self.mass()
        } else {
            1.0 - self.sf(x)
        }
    }
    fn sf(&self, x: f64) -> f64 {
        self.cdf(-x)
    }
    fn quantile(&self, p: f64) -> f64 {
        if p <= 0.0 {
            return -self.a;
        }
        if p >= 1.0 {
            return self.a;
        }
        if p <= 0.5 {
            // e^{x/λ} = 2p(1 − e^{−h}) + e^{−h}
            self.lambda * (2.0 * p * self.mass() + (-self.h).exp()).ln().max(-self.h)
        } else {
            -self.quantile(1.0 - p)
        }
    }
}

impl NoiseMoments for TruncatedLaplace {
    /// Theorem 2: `E|X| = λ(1 − h/(e^h − 1)) = λ γ(2, h)/(1 − e^{−h})`.
    fn mean_abs(&self) -> f64 {
        self.lambda * lower_gamma_small_n(2, self.h) / self.mass()
    }
    /// Theorem 3: `E X² = 2λ²(1 − h(h+2)/(2(e^h − 1))) = λ² γ(3, h)/(1 − e^{−h})`.
    fn second_moment(&self) -> f64 {
        self.lambda * self.lambda * lower_gamma_small_n(3, self.h) / self.mass()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Composite Simpson on [a, b].
    fn simpson(f: impl Fn(f64) -> f64, a: f64, b: f64, n: usize) -> f64 {
        let w = (b - a) / n as f64;
        let mut s = f(a) + f(b);
        for i in 1..n {
            s += if i % 2 == 1 { 4.0 } else { 2.0 } * f(a + i as f64 * w);
        }
        s * w / 3.0
    }

    #[test]
    fn moments_match_quadrature_and_paper_formulas() {
        for &(eps, delta) in &[
            (0.1, 1e-5),
            (1.0, 1e-2),
            (1e-3, 0.1),
            (5.0, 1e-8),
            (1e-6, 0.3),
        ] {
            let t = TruncatedLaplace::new(eps, delta, 1.0).unwrap();
            let q1 = simpson(|x| x.abs() * t.pdf(x), -t.a, t.a, 400_000);
            let q2 = simpson(|x| x * x * t.pdf(x), -t.a, t.a, 400_000);
            let mass = simpson(|x| t.pdf(x), -t.a, t.a, 400_000);
            assert!((mass - 1.0).abs() < 1e-9, "mass {mass}");
            assert!(
                (t.mean_abs() / q1 - 1.0).abs() < 1e-8,
                "E|X| {eps} {delta}: {} vs {q1}",
                t.mean_abs()
            );
            assert!(
                (t.second_moment() / q2 - 1.0).abs() < 1e-8,
                "E X² {eps} {delta}"
            );
            // Theorems 2–3 as printed, where they are numerically safe (h not small).
            if t.h > 1.0 {
                let h = t.h;
                let l = t.lambda;
                assert!((t.mean_abs() / (l * (1.0 - h / h.exp_m1())) - 1.0).abs() < 1e-12);
                assert!(
                    (t.second_moment()
                        / (2.0 * l * l * (1.0 - h * (h + 2.0) / (2.0 * h.exp_m1())))
                        - 1.0)
                        .abs()
                        < 1e-10
                );
            }
        }
        // docs/maths.md §1.3's quadrature check.
        let t = TruncatedLaplace::new(0.1, 1e-5, 1.0).unwrap();
        assert!((t.mean_abs() - 9.983706903).abs() < 1e-8);
        assert!((t.second_moment() - 198.2781781).abs() < 1e-6);
    }

    #[test]
    fn limits_are_laplace_and_uniform() {
        // δ → 0: Laplace (λ, 2λ²).
        let t = TruncatedLaplace::new(1.0, 1e-300, 1.0).unwrap();
        assert!((t.mean_abs() - 1.0).abs() < 1e-12 && (t.second_moment() - 2.0).abs() < 1e-12);
        // ε → 0: uniform on [−Δ/(2δ), Δ/(2δ)].
        let delta = 0.01;
        let t = TruncatedLaplace::new(1e-9, delta, 1.0).unwrap();
        let half = 1.0 / (2.0 * delta);
        assert!((t.mean_abs() / (half / 2.0) - 1.0).abs() < 1e-6);
        assert!((t.second_moment() / (half * half / 3.0) - 1.0).abs() < 1e-6);
    }

    /// Theorem 1 is tight: the hockey-stick divergence at shift Δ equals δ.
    #[test]
    fn hockey_stick_at_sensitivity_equals_delta() {
        for &(eps, delta, sens) in &[(0.1, 1e-5, 1.0), (1.0, 0.01, 1.0), (0.5, 1e-3, 3.0)] {
            let t = TruncatedLaplace::new(eps, delta, sens).unwrap();
            let f: f64 = eps;
            let hs = |x: f64| (t.pdf(x) - f.exp() * t.pdf(x - sens)).max(0.0);
            // Integrand has jumps at −A and A + Δ... split at the kinks.
            let pts = [-t.a, -t.a + sens, 0.0, sens, t.a, t.a + sens];
            let mut total = 0.0;
            for w in pts.windows(2) {
                if w[1] > w[0] {
                    total += simpson(hs, w[0] + 1e-15 * t.a, w[1] - 1e-15 * t.a, 200_000);
                }
            }
            assert!(
                (total / delta - 1.0).abs() < 1e-6,
                "ε={eps} δ={delta}: {total}"
            );
        }
    }

    #[test]
    fn samples_match_closed_form_moments() {
        use rand::SeedableRng;
        let t = TruncatedLaplace::new(0.5, 1e-3, 2.0).unwrap();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let n = 400_000;
        let (mut s1, mut s2, mut s4, mut m) = (0.0, 0.0, 0.0, 0.0f64);
        for _ in 0..n {
            let x = t.sample(&mut rng);
            s1 += x.abs();
            s2 += x * x;
            s4 += x.powi(4);
            m = m.max(x.abs());
        }
        let nf = n as f64;
        let (e1, e2) = (s1 / nf, s2 / nf);
        // Standard errors from the sample itself.
        let se1 = ((e2 - e1 * e1) / nf).sqrt();
        let se2 = ((s4 / nf - e2 * e2) / nf).sqrt();
        assert!(
            (e1 - t.mean_abs()).abs() < 5.0 * se1,
            "{e1} vs {}",
            t.mean_abs()
        );
        assert!((e2 - t.second_moment()).abs() < 5.0 * se2);
        assert!(m <= t.a);
    }

    #[test]
    fn quantile_inverts_cdf() {
        let t = TruncatedLaplace::new(0.5, 1e-4, 2.0).unwrap();
        for i in 1..100 {
            let p = i as f64 / 100.0;
            assert!((t.cdf(t.quantile(p)) - p).abs() < 1e-12);
        }
        assert_eq!(t.quantile(0.0), -t.a);
        assert!(TruncatedLaplace::new(0.0, 0.1, 1.0).is_err());
        assert!(TruncatedLaplace::new(1.0, 1.0, 1.0).is_err());
    }
}
