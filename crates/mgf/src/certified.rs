//! Certified upper bound on the least radius `R` that makes the bounded-noise mechanism
//! (ε, δ)-DP for k queries (docs/maths.md §1.4 steps 1–6; Dagan & Kur 2022, Section 10,
//! Lemma 10.2 and Algorithms 1–2).
//!
//! Steps: split `δ₁ = δ/100`, `δ₂ = δ − δ₁`; truncate at `L` with
//! `P(|X| > L) ≤ τ = δ₁/k`; for a shift `s = 1/R`, bound the log-MGF of the truncated
//! loss ([`crate::loss_mgf`]) and the deviation integral ([`crate::deviation`]); the
//! condition `I ≤ δ₂` is monotone in s, so bisect on `ln s` and report the end of the
//! bracket that passed. Each ingredient is one-sided, so the reported `R` is certified.

use crate::deviation::deviation_integral_upper;
use crate::error::MgfError;
use crate::loss_mgf::LossMesh;
use crate::noise::BoundedNoise;
use crate::quadrature::SubCell;
use densities::bounded::BoundedFamily;
use densities::error::check_open;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Relative precision of the bisection on `s` (the reported R is within this factor of
/// the least R the certificate can reach).
const BISECTION_TOL: f64 = 1e-5;

/// The certified radius and what it was derived with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CertifiedRadius {
    /// `R`: noise `R·X` per query makes k queries (ε, δ)-DP.
    pub radius: f64,
    /// The truncation level `L` used (docs/maths.md §1.4 step 2).
    pub truncation: f64,
    /// Natural log of the certified bound on the deviation integral at `radius`
    /// (at most `ln δ₂`).
    pub log_delta_bound: f64,
}

/// One (k, ε, δ) problem: the truncation, the fine partition of `[0, L]`, and the target.
struct Problem<'a> {
    noise: &'a BoundedNoise,
    k: f64,
    epsilon: f64,
    ln_delta2: f64,
    truncation: f64,
    base: Vec<SubCell>,
    fisher: f64,
}

impl Problem<'_> {
    /// The certified log-bound on the deviation integral at shift `s` (+∞ if `L + s ≥ 1`).
    fn ln_deviation(&self, s: f64) -> f64 {
        if self.truncation + s >= 1.0 {
            return f64::INFINITY;
        }
        let theta_ref = (self.epsilon / (self.k * s * s * self.fisher)).max(1.0);
        let mesh = LossMesh::new(self.noise, &self.base, s, 3.0 * theta_ref);
        let k = self.k;
        deviation_integral_upper(|th| mesh.log_mgf_upper(k, th), self.epsilon, theta_ref).ln_bound
    }

    fn passes(&self, s: f64) -> (bool, f64) {
        let v = self.ln_deviation(s);
        (v <= self.ln_delta2, v)
    }
}

/// Certified upper bound on the least `R` such that adding `R·X` (X i.i.d. from
/// `noise`) to each of `k` sensitivity-1 queries is (ε, δ)-DP.
///
/// ```
/// use densities::bounded::BoundedFamily;
/// use mgf::{certified_radius, BoundedNoise};
/// let noise = BoundedNoise::new(BoundedFamily::power(2.0).unwrap()).unwrap();
/// let r = certified_radius(&noise, 1e4, 0.1, 1e-10).unwrap();
/// let normalised = r.radius / ((1e4f64 * (1e10f64).ln()).sqrt() / 0.1);
/// assert!(normalised > 4.0 && normalised < 6.0);
/// ```
pub fn certified_radius(
    noise: &BoundedNoise,
    k: f64,
    epsilon: f64,
    delta: f64,
) -> Result<CertifiedRadius, MgfError> {
    // A pure function of the family and (k, ε, δ) (the noise's normaliser bounds come
    // from its family): memoised for the process, as the adaptive plans ask the same
    // radius at every n (k = 1 and the fixed point's k = 1e6) and the figures of one run
    // share points. Errors are not kept (computed again).
    type Key = (u64, u64, u64, u64);
    static MEMO: OnceLock<Mutex<HashMap<Key, CertifiedRadius>>> = OnceLock::new();
    let alpha = match noise.family() {
        BoundedFamily::Power { alpha } => alpha.to_bits(),
        // Not the bits of any α the family takes (α > 0 is finite).
        BoundedFamily::Exp => f64::NAN.to_bits(),
    };
    let key = (alpha, k.to_bits(), epsilon.to_bits(), delta.to_bits());
    let memo = MEMO.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(c) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(*c);
    }
    let c = computed_radius(noise, k, epsilon, delta)?;
    let mut m = memo.lock().unwrap_or_else(|e| e.into_inner());
    if m.len() >= MEMO_ENTRIES {
        m.clear();
    }
    m.insert(key, c);
    Ok(c)
}

/// Entries [`certified_radius`] keeps before it starts over (a few MB at most).
const MEMO_ENTRIES: usize = 1 << 16;

/// [`certified_radius`] computed (not memoised).
fn computed_radius(
    noise: &BoundedNoise,
    k: f64,
    epsilon: f64,
    delta: f64,
) -> Result<CertifiedRadius, MgfError> {
    check_open("k", k, 1.0 - 1e-12, f64::INFINITY, "[1, inf)")?;
    check_open("epsilon", epsilon, 0.0, f64::INFINITY, "(0, inf)")?;
    check_open("delta", delta, 0.0, 1.0, "(0, 1)")?;
    let delta1 = delta / 100.0;
    let delta2 = delta - delta1;
    let truncation = noise.tail_level(delta1 / k);
    let base = noise.partition(truncation);
    let fam = noise.family();
    // Fisher information E f'(X)² (only to choose starting points and scales).
    let fisher = 2.0
        * base
            .iter()
            .map(|c| fam.f_prime(c.z).powi(2) * c.t1)
            .sum::<f64>();
    let problem = Problem {
        noise,
        k,
        epsilon,
        ln_delta2: delta2.ln(),
        truncation,
        base,
        fisher,
    };

    // Start from the Gaussian approximation of the summed loss, then bracket.
    let mut s = epsilon / (2.0 * k * fisher * (1.0 / delta).ln()).sqrt();
    s = s.min(0.5 * (1.0 - truncation));
    let (mut lo, mut hi);
    let mut lo_val;
    let (ok, v) = problem.passes(s);
    if ok {
        lo = s;
        lo_val = v;
        hi = s * 2.0;
        for _ in 0..200 {
            let (ok, v) = problem.passes(hi);
            if !ok {
                break;
            }
            lo = hi;
            lo_val = v;
            hi *= 2.0;
        }
    } else {
        hi = s;
        lo = s / 2.0;
        lo_val = f64::INFINITY;
        for _ in 0..200 {
            let (ok, v) = problem.passes(lo);
            if ok {
                lo_val = v;
                break;
            }
            hi = lo;
            lo /= 2.0;
        }
        if !lo_val.is_finite() {
            return Err(MgfError::NotCertified(format!(
                "no shift down to {lo:e} passes for k={k}, ε={epsilon}, δ={delta}"
            )));
        }
    }
    while hi / lo > 1.0 + BISECTION_TOL {
        let mid = (lo * hi).sqrt();
        let (ok, v) = problem.passes(mid);
        if ok {
            lo = mid;
            lo_val = v;
        } else {
            hi = mid;
        }
    }
    Ok(CertifiedRadius {
        // R = 1/s rounded up, so that the shift 1/R of the radius reported is at most the
        // shift `lo` that passed (docs/accountant.md §5).
        radius: densities::outward::div_up(1.0, lo),
        truncation,
        log_delta_bound: lo_val,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The memoised radius is the computed one for each family and each of k, ε, δ, asked
    /// in any order and again.
    #[test]
    fn memoised_radius_is_the_computed_one_for_each_family_and_point() {
        let power2 = BoundedNoise::new(BoundedFamily::power(2.0).unwrap()).unwrap();
        let power3 = BoundedNoise::new(BoundedFamily::power(3.0).unwrap()).unwrap();
        let exp = BoundedNoise::new(BoundedFamily::Exp).unwrap();
        let points = [
            (1e3, 0.5, 1e-6),
            (1e4, 0.5, 1e-6),
            (1e3, 0.25, 1e-6),
            (1e3, 0.5, 1e-9),
        ];
        let mut seen = Vec::new();
        for _ in 0..2 {
            for noise in [&power2, &power3, &exp] {
                for &(k, e, d) in &points {
                    let got = certified_radius(noise, k, e, d).unwrap();
                    let want = computed_radius(noise, k, e, d).unwrap();
                    assert_eq!(got, want, "{:?} k={k} ε={e} δ={d}", noise.family());
                    seen.push(got.radius.to_bits());
                }
            }
        }
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 12, "twelve distinct radii");
    }
}
