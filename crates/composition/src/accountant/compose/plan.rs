//! How a composition is computed: in one FFT window or in stages, each stage's
//! composition re-discretised on a coarser grid on its bound's side (docs/accountant.md §4).

use super::cumulants::{self};
use super::tilted::{self, Factor, TiltedSum};
use crate::accountant::core::numeric::log_add;
use crate::accountant::grid::lattice::Lattice;
use crate::error::Result;

/// Window size (bins) above which a composition is computed in stages.
pub(crate) const DIRECT_BINS: f64 = (1u64 << 20) as f64;
/// Window budget of one stage.
pub(crate) const STAGE_BINS: usize = 1 << 19;

/// A composition tilted at λ, with its `+∞` atom.
pub(crate) struct Composed {
    pub(crate) sum: TiltedSum,
    pub(crate) ln_inf: f64,
}

impl Composed {
    pub(crate) fn ln_delta(&self, eps: f64, upper: bool) -> f64 {
        let b = self.sum.ln_delta(eps);
        log_add(self.ln_inf, if upper { b.hi } else { b.lo })
    }
}

/// Composes `factors` tilted at `lam`. When the window on the factors' own grid would
/// exceed [`DIRECT_BINS`], in stages: each factor's `m`-fold composition (`m` as large as
/// a [`STAGE_BINS`] window allows) is computed on the fine grid, turned into a lattice on
/// the bound's side ([`TiltedSum::to_lattice`]) and re-discretised on a coarser grid
/// (connect the dots or pour), on which `⌊c/m⌋` copies of it and the remainder's own
/// composition are composed. The coarse step keeps every stage resolved 1.5× finer, in
/// units of its standard deviation, than the first discretisation resolves one loss
/// (and by at least 100 bins).
pub(crate) fn compose(
    factors: &[Factor],
    lam: f64,
    max_bins: usize,
    upper: bool,
    ln_tail: f64,
    plan: Plan,
) -> Result<Composed> {
    let d = factors[0].law.step;
    let vars: Vec<f64> = factors
        .iter()
        .map(|f| cumulants::cgf(f.law, lam).2)
        .collect();
    let alias = if plan == Plan::Cheapest {
        tilted::LN_ALIAS_SADDLE
    } else {
        tilted::LN_ALIAS
    };
    let plan = stage_plan(factors, lam, &vars, plan);
    let Some(ms) = plan else {
        let sum = TiltedSum::for_side(factors, lam, max_bins, f64::INFINITY, upper, alias)?;
        return Ok(Composed {
            sum,
            ln_inf: tilted::ln_inf_total(factors, upper),
        });
    };
    // Coarse step: every staged law keeps max(1.5·(its first resolution), 100) bins per
    // standard deviation.
    let r = factors
        .iter()
        .zip(&ms)
        .zip(&vars)
        .filter(|((f, &m), _)| m < f.count)
        .map(|((_, &m), &v)| coarse_ratio(v.sqrt().max(d) / d, m))
        .fold(f64::INFINITY, f64::min);
    let r = if r.is_finite() { r } else { 1.0 };
    let d2 = d * r;
    // A stage's window, with its tail reaching down to the truncation target, may be
    // wider than the stage size assumed above (a law far in its tail): allow up to half
    // the budget (about 300 MiB of work arrays a side at the default).
    let stage_cap = (max_bins / 2).max(4 * STAGE_BINS);
    let mut coarse: Vec<(Lattice, u64)> = Vec::new();
    let mut stage = |law: &Lattice, m: u64, q: u64| -> Result<()> {
        if m == 1 {
            // One use: the lattice itself, re-discretised.
            let lat = if upper {
                law.coarsen_pessimistic(d2, max_bins)?
            } else {
                law.coarsen_optimistic(d2, max_bins, q)?
            };
            coarse.push((lat, q));
            return Ok(());
        }
        let f = [Factor { law, count: m }];
        let (base0, _, _) = cumulants::total_cgf(&f, 0.0);
        // The mass above the stage's window goes to +∞, where q copies charge it to δ
        // directly: keep it below the laws' own truncation target over q copies.
        let s = TiltedSum::for_side(&f, lam, stage_cap, ln_tail - (q as f64).ln(), upper, alias)?;
        let (wl, _) = s.range();
        let ln_below = tilted::ln_chernoff(&f, 0.0, base0, wl, false);
        let lat = s.to_lattice(upper, tilted::ln_inf_total(&f, upper), ln_below);
        let lat = if r > 1.0 {
            if upper {
                lat.coarsen_pessimistic(d2, max_bins)?
            } else {
                lat.coarsen_optimistic(d2, max_bins, q)?
            }
        } else {
            lat
        };
        coarse.push((lat, q));
        Ok(())
    };
    for (f, &m) in factors.iter().zip(&ms) {
        let q = f.count / m;
        let rem = f.count - q * m;
        stage(f.law, m, q)?;
        if rem > 0 {
            stage(f.law, rem, 1)?;
        }
    }
    let cf: Vec<Factor> = coarse
        .iter()
        .map(|(l, c)| Factor { law: l, count: *c })
        .collect();
    let sum = TiltedSum::for_side(&cf, lam, max_bins, f64::INFINITY, upper, alias)?;
    Ok(Composed {
        sum,
        ln_inf: tilted::ln_inf_total(&cf, upper),
    })
}

/// How [`compose`] composes `factors` tilted at `lam` (each one's tilted variance per use
/// `vars`): `None` in one window, else each factor's stage size. Single uses gain nothing
/// from stages (a heavy-tailed law can have a large variance on its own grid). A list of
/// laws is composed in one window when 21 tilted standard deviations fit [`DIRECT_BINS`],
/// else in the largest stages a [`STAGE_BINS`] window allows.
///
/// One law used many times takes the plan of least estimated cost in bins (each window's
/// span between its Chernoff levels, [`tilted::window_span`], over its step): one window
/// on the fine grid, or stages of `m` uses on it plus the copies' window on the coarse
/// step, for `m` from the largest down by fourths. The fine grid resolves one use, and a
/// composition of many is `√T` times wider: stages of about `√T` uses keep both windows
/// short (DP-SGD at q = 1e-3, σ = 2, T = 1e5: 472k bins in one window, about 60k in
/// stages). Stages are taken where they cost under two thirds of the one window (their
/// re-discretisation widens the bracket a little, docs/accountant.md §6).
pub(crate) fn stage_plan(
    factors: &[Factor],
    lam: f64,
    vars: &[f64],
    plan: Plan,
) -> Option<Vec<u64>> {
    if plan == Plan::OneWindow || factors.iter().all(|f| f.count == 1) {
        return None;
    }
    let d = factors[0].law.step;
    let fits = fits_directly(factors, vars);
    let largest: Vec<u64> = factors
        .iter()
        .zip(vars)
        .map(|(f, v)| {
            let bins_per_sd = v.sqrt().max(d) / d;
            let r = STAGE_BINS as f64 / (24.0 * bins_per_sd);
            let m_max = ((r * r).floor() as u64).clamp(1, f.count);
            stage_size(f.count, m_max)
        })
        .collect();
    if factors.len() > 1 || plan == Plan::Largest {
        return (!fits).then_some(largest);
    }
    let f = &factors[0];
    let cum = cumulants::Cumulants::new(factors);
    let span = |m: u64| {
        let one = [Factor {
            law: f.law,
            count: m,
        }];
        tilted::window_span(&cum.for_counts(&one), lam, tilted::LN_ALIAS_SADDLE)
    };
    let total = span(f.count);
    let per_sd = vars[0].sqrt().max(d) / d;
    let mut best: Option<(f64, u64)> = None;
    // From the largest stage a window allows (a quarter of the count when that is all
    // of it) down by fourths.
    let mut m_c = if largest[0] < f.count {
        largest[0]
    } else {
        f.count / 4
    };
    while m_c >= MIN_STAGE {
        let m = stage_size(f.count, m_c);
        let rem = f.count % m;
        let r = coarse_ratio(per_sd, m);
        let mut cost = span(m) / d + total / (d * r);
        if rem > 1 {
            cost += span(rem) / d;
        }
        if best.is_none_or(|b| cost < b.0) {
            best = Some((cost, m));
        }
        m_c /= 4;
    }
    match best {
        Some((cost, m)) if !fits || 1.5 * cost < total / d => Some(vec![m]),
        _ if fits => None,
        _ => Some(largest),
    }
}

/// Which stages [`compose`] may use ([`stage_plan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plan {
    /// One window whatever its size (a window tilted less than the saddle point: its gap
    /// shows its round-off only when no stage carries any into a lattice, §4).
    OneWindow,
    /// One window when it fits [`DIRECT_BINS`], else the largest stages.
    Largest,
    /// The least estimated cost (a single law's ε(δ) search).
    Cheapest,
}

/// Whether 21 tilted standard deviations of the composition (each factor's tilted
/// variance per use `vars`) fit [`DIRECT_BINS`] bins: one window then needs no stages.
pub(crate) fn fits_directly(factors: &[Factor], vars: &[f64]) -> bool {
    let d = factors[0].law.step;
    let var_s: f64 = factors
        .iter()
        .zip(vars)
        .map(|(f, v)| f.count as f64 * v)
        .sum();
    21.0 * var_s.sqrt() / d <= DIRECT_BINS
}

/// The least number of uses in a stage a plan considers (smaller stages are dominated by
/// their copies' window).
pub(crate) const MIN_STAGE: u64 = 16;

/// The coarse step of a staged composition over the fine one, for a law resolved by
/// `per_sd` bins per standard deviation of one use in stages of `m` uses: each stage
/// keeps `max(1.5·per_sd, 100)` bins per standard deviation, and a whole number of fine
/// steps.
pub(crate) fn coarse_ratio(per_sd: f64, m: u64) -> f64 {
    (per_sd * (m as f64).sqrt() / (1.5 * per_sd).max(100.0))
        .floor()
        .max(1.0)
}

/// The stage size for `count` uses when a stage may hold at most `m_max`: `count/q` for
/// the least `q` in `[⌈count/m_max⌉, 2⌈count/m_max⌉]` that divides `count`, so that no
/// remainder needs a stage of its own (a remainder's window is as wide as a full stage's
/// for a heavy-tailed law, and cost as much: DP-SGD at q = 1e-4, T = 1e6 spent a third of
/// its time on 190 leftover uses); else even stages, `⌊count/q⌋` with `q = ⌈count/m_max⌉`,
/// whose remainder (< q) is composed apart.
pub(crate) fn stage_size(count: u64, m_max: u64) -> u64 {
    let q0 = count.div_ceil(m_max.max(1));
    (q0..=q0.saturating_mul(2).min(count))
        .find(|q| count.is_multiple_of(*q))
        .map_or(count / q0, |q| count / q)
}

#[cfg(test)]
mod stage_tests {
    use crate::accountant::compose::plan::stage_size;

    /// Against a scan of every stage count: the size never exceeds `m_max`; where some
    /// count in `[⌈c/m_max⌉, 2⌈c/m_max⌉]` divides c the stages are whole (no remainder)
    /// and as large as any such; otherwise the even split of before.
    #[test]
    fn stage_size_is_the_largest_whole_split_within_the_bound() {
        for count in 1..=3000u64 {
            for m_max in [1u64, 2, 3, 7, 50, 97, 1000, 5000] {
                let m = stage_size(count, m_max);
                assert!(
                    m >= 1 && m <= m_max.min(count),
                    "c {count} m_max {m_max}: {m}"
                );
                let q0 = count.div_ceil(m_max);
                let whole: Vec<u64> = (1..=count)
                    .filter(|&q| count.is_multiple_of(q) && q >= q0 && q <= 2 * q0)
                    .map(|q| count / q)
                    .collect();
                match whole.iter().max() {
                    Some(&best) => assert_eq!(m, best, "c {count} m_max {m_max}"),
                    None => assert_eq!(m, count / q0, "c {count} m_max {m_max}"),
                }
            }
        }
    }
}

#[cfg(test)]
mod plan_tests {
    use super::*;
    use crate::accountant::core::work::Work;
    use crate::accountant::laws::GaussianLaw;
    use densities::normal::cdf;

    /// δ(ε) of the Gaussian mechanism whose loss is N(m²/2, m²) (Balle & Wang 2018,
    /// Thm 8; docs/accountant.md §2.1): the closed form a composition of Gaussians meets.
    fn gaussian_delta(m: f64, eps: f64) -> f64 {
        cdf(-eps / m + 0.5 * m) - eps.exp() * cdf(-eps / m - 0.5 * m)
    }

    /// A single law used 1e5 times, whose one window fits: the cheapest plan composes it
    /// in stages (the fixed plan in one window), and on each side the staged and the
    /// one-window δ hold the closed form of the composed Gaussian at five ε around the
    /// saddle's, agree with each other to 1e-3 in ln δ, and the stages cost under half
    /// the bins. Fails if a plan's stages lose their side (a bound across the truth), if
    /// the plan picks one window here, or if its stages cost more than the window.
    #[test]
    fn the_cheapest_plan_stages_a_long_composition_and_holds_the_closed_form() {
        let (mu, k) = (0.01, 100_000u64);
        let m = mu * (k as f64).sqrt();
        let law = GaussianLaw::new(mu).unwrap();
        let d = 1.4e-4;
        let up = Lattice::pessimistic(&law, d, -60.0, 1 << 23).unwrap();
        let lo = Lattice::optimistic(&law, d, -60.0, 1 << 23).unwrap();
        let eps_mid = 15.0;
        for (lat, upper) in [(&up, true), (&lo, false)] {
            let f = [Factor { law: lat, count: k }];
            let lam = cumulants::saddle(&f, eps_mid).unwrap();
            let vars = [cumulants::cgf(lat, lam).2];
            assert!(stage_plan(&f, lam, &vars, Plan::Cheapest).is_some());
            assert!(stage_plan(&f, lam, &vars, Plan::Largest).is_none());
            let composed = |plan: Plan| {
                let w = Work::default();
                let c = w
                    .metered(|| compose(&f, lam, 1 << 23, upper, -60.0, plan))
                    .unwrap();
                (c, w.done())
            };
            let ((staged, w_staged), (one, w_one)) =
                (composed(Plan::Cheapest), composed(Plan::Largest));
            for eps in [14.0, 14.5, 15.0, 15.5, 16.0] {
                let truth = gaussian_delta(m, eps).ln();
                let (s, o) = (staged.ln_delta(eps, upper), one.ln_delta(eps, upper));
                for v in [s, o] {
                    assert!(
                        if upper { v >= truth } else { v <= truth },
                        "upper {upper}, ε {eps}: {v} against the closed form {truth}"
                    );
                }
                assert!((s - o).abs() <= 1e-3, "ε {eps}: staged {s}, one window {o}");
            }
            assert!(
                2 * w_staged < w_one,
                "{w_staged} bins in stages, {w_one} in one window"
            );
        }
    }
}
