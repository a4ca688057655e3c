//! The interface a mechanism offers to the accountant ([`LossModel`]: finite atoms, the
//! `+∞` atom, and the survival function of the atomless part, each possibly as a
//! bracket), and its discretisation onto the grid with the rounding of each [`Bound`].

use super::{Bound, Interval, Parts, PldConfig, PrivacyLoss, U};
use crate::error::{out_of_range, Result};

/// The P-law of one mechanism's privacy loss `L = ln(p(Y)/q(Y))`, `Y ~ P` (docs/maths.md §0),
/// split into finite atoms, an atom at `+∞` and an atomless ("continuous") part `L_c`.
///
/// Quantities a model cannot compute exactly are returned as brackets [`Interval`]; the
/// `Upper` discretisation uses the upper ends of survival probabilities and the `Lower`
/// one the lower ends, so the results stay certified (module docs of [`super`]).
///
/// ```
/// use composition::pld::{Interval, LossModel};
/// /// Loss uniform on (0, 1) (not a real mechanism; an interface illustration).
/// struct Uniform;
/// impl LossModel for Uniform {
///     fn atoms(&self) -> Vec<(f64, f64)> { vec![] }
///     fn inf_mass(&self) -> Interval { Interval::point(0.0) }
///     fn continuous_sf(&self, t: f64) -> Interval { Interval::point((1.0 - t).clamp(0.0, 1.0)) }
///     fn continuous_range(&self, _tail: f64) -> Option<(f64, f64)> { Some((0.0, 1.0)) }
/// }
/// let cfg = composition::pld::PldConfig::new(0.25, composition::pld::Bound::Upper).unwrap();
/// let p = composition::pld::PrivacyLoss::from_model(&Uniform, &cfg).unwrap();
/// assert_eq!(p.pmf(), &[0.25, 0.25, 0.25, 0.25]);
/// ```
pub trait LossModel {
    /// Finite atoms `(loss, P-mass)` of `L`.
    fn atoms(&self) -> Vec<(f64, f64)>;
    /// `P(L = +∞)` (bracket).
    fn inf_mass(&self) -> Interval;
    /// `P(L_c > t)` for the atomless part (a sub-probability measure; bracket), non-increasing
    /// in `t`; `t = −∞` gives the total mass of the atomless part.
    fn continuous_sf(&self, t: f64) -> Interval;
    /// An interval `[a, b]` of losses outside which the atomless part has P-mass at most
    /// `tail` (`None` when there is no atomless part). Only a hint for the grid range:
    /// the mass actually cut is evaluated with [`Self::continuous_sf`] and accounted for.
    fn continuous_range(&self, tail: f64) -> Option<(f64, f64)>;
    /// [`Self::continuous_sf`] at each of `ts` (ascending): a model may share work
    /// between neighbouring points (the discretisation asks for every grid edge).
    fn continuous_sf_many(&self, ts: &[f64]) -> Vec<Interval> {
        ts.iter().map(|&t| self.continuous_sf(t)).collect()
    }
}

/// Largest index magnitude accepted on the grid.
const MAX_INDEX: f64 = 4.0e15;

fn index_of(name: &'static str, x: f64) -> Result<f64> {
    if x.is_finite() && x.abs() < MAX_INDEX {
        Ok(x)
    } else {
        Err(out_of_range(
            name,
            x,
            "finite, |loss/step| < 4e15 (step too small for this loss?)",
        ))
    }
}

/// Tolerance under which a value is taken to be on the grid point (rounding of `i·Δ`);
/// the displacement is charged as slack.
fn snap_tol(l: f64, d: f64) -> f64 {
    16.0 * f64::EPSILON * l.abs().max(d)
}

/// Smallest `j` with `j·Δ ≥ ℓ` (as floats), or a grid point below `ℓ` by at most the snap
/// tolerance; returns `(j, snapped displacement ≥ 0)`.
pub(crate) fn up_index(l: f64, d: f64) -> Result<(i64, f64)> {
    let r = index_of("loss/step", (l / d).round())?;
    let mut j = r as i64;
    while (j as f64) * d < l {
        j += 1;
    }
    while ((j - 1) as f64) * d >= l {
        j -= 1;
    }
    let below = l - ((j - 1) as f64) * d;
    if below <= snap_tol(l, d) {
        return Ok((j - 1, below));
    }
    Ok((j, 0.0))
}

/// Largest `j` with `j·Δ ≤ ℓ`, or a grid point above by at most the snap tolerance.
pub(crate) fn down_index(l: f64, d: f64) -> Result<(i64, f64)> {
    let (j, s) = up_index(-l, d)?;
    // −(j·Δ) = (−j)·Δ exactly, so the mirror image is exact.
    Ok((-j, s))
}

/// Accumulates `(index, mass)` pairs into a dense vector.
struct Dense {
    entries: Vec<(i64, f64)>,
}

impl Dense {
    fn into_pmf(self, max_len: usize) -> Result<(i64, Vec<f64>)> {
        if self.entries.is_empty() {
            return Ok((0, vec![0.0]));
        }
        let lo = self.entries.iter().map(|e| e.0).min().unwrap_or(0);
        let hi = self.entries.iter().map(|e| e.0).max().unwrap_or(0);
        let len = (hi - lo + 1) as u64;
        if len > max_len as u64 {
            return Err(out_of_range(
                "loss range / step",
                len as f64,
                "at most max_len bins (increase step or tail, or max_len)",
            ));
        }
        let mut pmf = vec![0.0; len as usize];
        for (i, m) in self.entries {
            pmf[(i - lo) as usize] += m;
        }
        Ok((lo, pmf))
    }
}

fn check_mass(name: &'static str, m: f64) -> Result<f64> {
    if m.is_finite() && (0.0..=1.0 + 1e-9).contains(&m) {
        Ok(m.min(1.0))
    } else {
        Err(out_of_range(name, m, "[0, 1]"))
    }
}

/// Discretises `model` on the grid of `cfg` (see [`PrivacyLoss::from_model`]).
pub(crate) fn discretise(model: &dyn LossModel, cfg: &PldConfig) -> Result<PrivacyLoss> {
    let d = cfg.step;
    let bound = cfg.bound;
    let mut dense = Dense {
        entries: Vec::new(),
    };
    let mut shift: f64 = 0.0;
    let mut slack = 8.0 * U;
    let mut tail = 0.0;

    let inf = model.inf_mass();
    let inf_mass = check_mass(
        "inf_mass",
        match bound {
            Bound::Upper => inf.hi,
            Bound::Lower => inf.lo,
            Bound::Estimate => inf.mid(),
        },
    )?;

    for (l, m) in model.atoms() {
        let m = check_mass("atom mass", m)?;
        if m == 0.0 {
            continue;
        }
        if !l.is_finite() {
            return Err(out_of_range(
                "atom loss",
                l,
                "finite (use inf_mass for +inf)",
            ));
        }
        match bound {
            Bound::Upper => {
                let (j, snap) = up_index(l, d)?;
                dense.entries.push((j, m));
                shift = shift.max(j as f64 * d - l);
                slack += snap * m;
            }
            Bound::Lower => {
                let (j, snap) = down_index(l, d)?;
                dense.entries.push((j, m));
                shift = shift.max(l - j as f64 * d);
                slack += snap * m;
            }
            Bound::Estimate => {
                let j = index_of("loss/step", (l / d).floor())? as i64;
                let w = ((l - j as f64 * d) / d).clamp(0.0, 1.0);
                dense.entries.push((j, m * (1.0 - w)));
                if w > 0.0 {
                    dense.entries.push((j + 1, m * w));
                }
                shift = shift.max(d.min((l - j as f64 * d).abs()));
            }
        }
    }

    if let Some((a, b)) = model.continuous_range(cfg.tail) {
        if !(a.is_finite() && b.is_finite() && a <= b) {
            return Err(out_of_range(
                "continuous loss range",
                if a.is_finite() { b } else { a },
                "finite [a, b] (unbounded losses need tail > 0)",
            ));
        }
        let total = model.continuous_sf(f64::NEG_INFINITY);
        let nbins = ((b - a) / d).ceil() + 2.0;
        if nbins > cfg.max_len as f64 {
            return Err(out_of_range(
                "loss range / step",
                nbins,
                "at most max_len bins (increase step or tail, or max_len)",
            ));
        }
        match bound {
            Bound::Upper => {
                let ia = up_index(a, d)?.0;
                let ib = up_index(b, d)?.0.max(ia);
                let ts: Vec<f64> = (ia..=ib).map(|i| i as f64 * d).collect();
                let mut s: Vec<f64> = model.continuous_sf_many(&ts).iter().map(|v| v.hi).collect();
                for k in (0..s.len().saturating_sub(1)).rev() {
                    s[k] = s[k].max(s[k + 1]);
                }
                let tot = check_mass("continuous mass", total.hi)?.max(s[0]);
                dense.entries.push((ia, tot - s[0]));
                for k in 1..s.len() {
                    dense.entries.push((ia + k as i64, s[k - 1] - s[k]));
                }
                tail += s[s.len() - 1];
                shift = shift.max(d);
            }
            Bound::Lower => {
                let ia = down_index(a, d)?.0;
                let ib = down_index(b, d)?.0.max(ia);
                let ts: Vec<f64> = (ia..=ib).map(|i| i as f64 * d).collect();
                let mut s: Vec<f64> = model.continuous_sf_many(&ts).iter().map(|v| v.lo).collect();
                let tot = check_mass("continuous mass", total.lo)?;
                s[0] = s[0].min(tot);
                for k in 1..s.len() {
                    s[k] = s[k].min(s[k - 1]);
                }
                for k in 0..s.len() - 1 {
                    dense.entries.push((ia + k as i64, s[k] - s[k + 1]));
                }
                dense.entries.push((ib, s[s.len() - 1]));
                tail += tot - s[0];
                shift = shift.max(d);
            }
            Bound::Estimate => {
                let ia = index_of("loss/step", (a / d).round())? as i64;
                let ib = (index_of("loss/step", (b / d).round())? as i64).max(ia);
                // Edges (i + ½)Δ between bin i and i + 1.
                let ts: Vec<f64> = (ia..=ib).map(|i| (i as f64 + 0.5) * d).collect();
                let mut s: Vec<f64> = model
                    .continuous_sf_many(&ts)
                    .iter()
                    .map(|v| v.mid())
                    .collect();
                for k in (0..s.len().saturating_sub(1)).rev() {
                    s[k] = s[k].max(s[k + 1]);
                }
                let tot = check_mass("continuous mass", total.mid())?.max(s[0]);
                dense.entries.push((ia, tot - s[0]));
                for k in 1..s.len() {
                    dense.entries.push((ia + k as i64, s[k - 1] - s[k]));
                }
                tail += s[s.len() - 1];
                shift = shift.max(0.5 * d);
            }
        }
    }
    let (offset, pmf) = dense.into_pmf(cfg.max_len)?;
    Ok(PrivacyLoss::assemble(
        cfg,
        d,
        Parts {
            offset,
            pmf,
            inf_mass,
            tail_mass: tail,
            slack,
            shift,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_indices_round_the_right_way() {
        let d = 0.01;
        // 30·0.01 rounds above 0.3 in floating point; −30·0.01 below −0.3: both snap.
        assert_eq!(up_index(0.3, d).unwrap().0, 30);
        assert_eq!(up_index(-0.3, d).unwrap().0, -30);
        assert!(up_index(-0.3, d).unwrap().1 < 1e-16);
        assert_eq!(up_index(0.301, d).unwrap(), (31, 0.0));
        assert_eq!(down_index(0.309, d).unwrap(), (30, 0.0));
        assert_eq!(down_index(-0.301, d).unwrap(), (-31, 0.0));
        for &l in &[0.0, 1e-9, -1e-9, 123.456, -7.77] {
            let (j, s) = up_index(l, d).unwrap();
            assert!(j as f64 * d + s >= l && (j - 1) as f64 * d < l - snap_tol(l, d));
            let (j, s) = down_index(l, d).unwrap();
            assert!(j as f64 * d - s <= l && (j + 1) as f64 * d > l + snap_tol(l, d));
        }
    }
}
