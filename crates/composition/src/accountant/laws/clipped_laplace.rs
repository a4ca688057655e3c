//! The Laplace mechanism clipped to a range, and with it randomized response and the
//! truncated Laplacian (docs/accountant.md §2.2–2.3).

use super::{cell_by_density, ContinuousRange, LossLaw};
use crate::error::{out_of_range, Result};

/// Laplace-type loss (Laplace and the truncated Laplacian, docs/accountant.md §2.2, §2.3): atoms
/// at `±ε₀`, an atomless part with density `c·e^{ℓ/2}` on `(lo, hi) ⊂ (−ε₀, ε₀)`, and
/// possibly an atom at `+∞`.
#[derive(Debug, Clone, Copy)]
pub struct ClippedLaplaceLaw {
    eps0: f64,
    top: f64,
    bottom: f64,
    ln_c: f64,
    lo: f64,
    hi: f64,
    ln_inf: f64,
}

impl ClippedLaplaceLaw {
    /// Laplace noise of scale `b` for sensitivity `Δ`: `ε₀ = Δ/b` in `(0, 1e4]`.
    ///
    /// Output `y ~ Lap(0, b)` against `Lap(Δ, b)`: `L = ε₀` for `y ≤ 0` (P-mass ½),
    /// `L = −ε₀` for `y ≥ Δ` (P-mass `e^{−ε₀}/2`), `L = ε₀ − 2y/b` in between with
    /// density `e^{(ℓ−ε₀)/2}/4`.
    ///
    /// ```
    /// use composition::accountant::{ClippedLaplaceLaw, LossLaw};
    /// let l = ClippedLaplaceLaw::laplace(1.0).unwrap();
    /// assert_eq!(l.atoms().len(), 2);
    /// ```
    pub fn laplace(eps0: f64) -> Result<Self> {
        if !(eps0.is_finite() && (1e-8..=1e4).contains(&eps0)) {
            return Err(out_of_range("sensitivity/scale", eps0, "[1e-8, 1e4]"));
        }
        Ok(Self {
            eps0,
            top: 0.5,
            bottom: 0.5 * (-eps0).exp(),
            ln_c: -eps0 / 2.0 - 4f64.ln(),
            lo: -eps0,
            hi: eps0,
            ln_inf: f64::NEG_INFINITY,
        })
    }

    /// The truncated Laplacian of Geng et al. calibrated to `(ε, δ)` for sensitivity Δ,
    /// ε in `[1e-8, 700]` (docs/accountant.md §2.3).
    ///
    /// Density `B e^{−|y|/λ}` on `[−A, A]` with `λ = Δ/ε`, `A = λ ln(1 + (e^ε−1)/(2δ))`;
    /// against the copy shifted by Δ: `L = +∞` on `[−A, Δ − A)`, `L = ε₀ = Δ/λ` on
    /// `[Δ − A, 0]`, `L = −ε₀` on `[Δ, A]`, linear in between.
    ///
    /// ```
    /// use composition::accountant::{ClippedLaplaceLaw, LossLaw};
    /// let t = ClippedLaplaceLaw::truncated_laplace(1.0, 1e-6, 1.0).unwrap();
    /// assert!((t.ln_inf_mass().exp() / 1e-6 - 1.0).abs() < 1e-9);
    /// ```
    pub fn truncated_laplace(epsilon: f64, delta: f64, sensitivity: f64) -> Result<Self> {
        if epsilon.is_nan() || !(1e-8..=700.0).contains(&epsilon) {
            return Err(out_of_range(
                "truncated-laplace epsilon",
                epsilon,
                "[1e-8, 700]",
            ));
        }
        let tl = densities::truncated_laplace::TruncatedLaplace::new(epsilon, delta, sensitivity)
            .map_err(|_| {
            out_of_range(
                "truncated-laplace epsilon/delta",
                epsilon,
                "epsilon > 0, delta in (0, 1)",
            )
        })?;
        let lam = tl.lambda;
        let h = tl.h;
        let s = sensitivity;
        let eps0 = s / lam;
        // P-mass of y in [u, v] (in units of λ: t = y/λ), density e^{−|t|}/(2(1 − e^{−h})).
        let norm = 2.0 * (-(-h).exp_m1());
        let mass = |u: f64, v: f64| -> f64 {
            let (u, v) = (u.max(-h), v.min(h));
            if v <= u {
                return 0.0;
            }
            // ∫_u^v e^{−|t|} dt, split at 0, each piece without cancellation.
            let mut acc = 0.0;
            if u < 0.0 {
                let v0 = v.min(0.0);
                acc += v0.exp() * (-(u - v0).exp_m1());
            }
            if v > 0.0 {
                let u0 = u.max(0.0);
                acc += (-u0).exp() * (-(-(v - u0)).exp_m1());
            }
            acc / norm
        };
        let e = eps0; // s/λ in λ-units
        let inf = mass(-h, (e - h).min(h));
        let top = mass(e - h, 0.0);
        let bottom = mass(e, h);
        // Continuous: t in (max(0, e−h), min(e, h)), ℓ = e − 2t, density in ℓ:
        // e^{−t}/(2 norm) = e^{(ℓ − e)/2}/(2 norm).
        let t_lo = (e - h).max(0.0);
        let t_hi = e.min(h);
        let (lo, hi) = if t_hi > t_lo {
            (e - 2.0 * t_hi, e - 2.0 * t_lo)
        } else {
            (0.0, 0.0)
        };
        Ok(Self {
            eps0: e,
            top,
            bottom,
            ln_c: -e / 2.0 - (2.0 * norm).ln(),
            lo,
            hi,
            ln_inf: if inf > 0.0 {
                inf.ln()
            } else {
                f64::NEG_INFINITY
            },
        })
    }
}

impl LossLaw for ClippedLaplaceLaw {
    fn atoms(&self) -> Vec<(f64, f64)> {
        let mut v = Vec::new();
        if self.bottom > 0.0 {
            v.push((-self.eps0, self.bottom));
        }
        if self.top > 0.0 {
            v.push((self.eps0, self.top));
        }
        v
    }
    fn ln_inf_mass(&self) -> f64 {
        self.ln_inf
    }
    fn continuous_range(&self, ln_tail: f64) -> Option<ContinuousRange> {
        if self.hi <= self.lo {
            return None;
        }
        // The density c·e^{ℓ/2} puts at most 2c·e^{t/2} below t: cut where that is e^{ln_tail}
        // (for large ε₀ the part far below the top is negligible and would cost bins).
        let cut = 2.0 * (ln_tail - (2.0f64).ln() - self.ln_c);
        let (lo, ln_below) = if cut > self.lo && cut < self.hi {
            (cut, ln_tail)
        } else {
            (self.lo, f64::NEG_INFINITY)
        };
        Some(ContinuousRange {
            lo,
            hi: self.hi,
            ln_below,
            ln_above: f64::NEG_INFINITY,
        })
    }
    fn cell(&self, a: f64, b: f64) -> (f64, f64) {
        let (a2, b2) = (a.max(self.lo), b.min(self.hi));
        if b2 <= a2 {
            return (f64::NEG_INFINITY, f64::NEG_INFINITY);
        }
        let c = self.ln_c;
        let g = move |l: f64| c + 0.5 * l;
        cell_by_density(&g, a, a2, b2)
    }
    fn loss_scale(&self) -> f64 {
        self.eps0.min(2.0)
    }
    fn grid_unit(&self) -> Option<f64> {
        Some(self.eps0)
    }
}
