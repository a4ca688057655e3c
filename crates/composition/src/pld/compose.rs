//! Composition of privacy-loss laws: pairwise FFT convolution, heterogeneous lists, k-fold
//! powers in the Fourier domain (with a Chernoff-chosen window and one-sided accounting of
//! aliasing), repeated squaring with tail truncation and grid coarsening for huge k.

use super::fft::{self, Conv};
use super::{Bound, Parts, PrivacyLoss, U};
use crate::error::{out_of_range, CompositionError, Result};

/// Largest support kept for a partial result of repeated squaring before the grid is
/// coarsened. A law spread over this many bins is resolved to ~1e-4 of its width, so the
/// extra rounding is far below the initial discretisation's, and each squaring stays cheap.
const SQUARING_LEN: usize = 1 << 17;

/// Largest exponent taken by one Fourier transform in [`PrivacyLoss::self_compose`];
/// larger k are first reduced by repeated squaring. Raising a transform to the k-th power
/// multiplies the rounding error of each coefficient's phase by k, so the pmf error grows
/// like `k·u`: at k = 1e6 that moved the least radius of the bounded-noise mechanism by
/// 6e-4 relative at δ = 1e-10, while squaring (error ~`u` per level, log₂k levels) keeps
/// the result consistent to 1e-5 across k = 1e4…1e8.
const MAX_DIRECT_POWER: u64 = 1 << 14;

/// `1 − (1 − p)^k` without cancellation.
fn one_minus_pow(p: f64, k: f64) -> f64 {
    if p >= 1.0 {
        return 1.0;
    }
    -(k * (-p).ln_1p()).exp_m1()
}

impl PrivacyLoss {
    /// The law of the sum of the two losses (non-adaptive composition of the two pairs;
    /// also adaptive composition when each factor is a dominating pair, e.g. the worst-case
    /// pairs of Laplace, Gaussian and randomized response). Convolution by zero-padded FFT
    /// (`rustfft`) or, for a short factor, directly; then the tails are truncated within
    /// the `tail` budget (module docs of [`super`] for the accounting).
    ///
    /// The two laws must have the same [`Bound`], and steps equal or in a power-of-two
    /// ratio (the finer one is coarsened with its bound's rounding). If the result would
    /// exceed `max_len` bins, both are coarsened first. End bins below the FFT error bound
    /// are truncated too (they are indistinguishable from 0).
    ///
    /// Errors: different bounds, or steps not in a power-of-two ratio.
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(1e-3, Bound::Upper).unwrap();
    /// let a = PrivacyLoss::gaussian(0.3, &cfg).unwrap();
    /// let b = PrivacyLoss::gaussian(0.4, &cfg).unwrap();
    /// let ab = a.compose(&b).unwrap(); // μ = 0.5
    /// assert!(ab.delta(0.5).unwrap() >= densities::gaussian::gaussian_delta(0.5, 0.5));
    /// ```
    pub fn compose(&self, other: &PrivacyLoss) -> Result<PrivacyLoss> {
        self.compose_budget(other, self.tail_budget)
    }

    /// Composes a heterogeneous list left to right (all with the same [`Bound`]; steps
    /// equal or in power-of-two ratios).
    ///
    /// Errors: an empty list, mismatched bounds or steps.
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(1e-3, Bound::Lower).unwrap();
    /// let list: Vec<_> = [0.1, 0.2, 0.3]
    ///     .iter()
    ///     .map(|&m| PrivacyLoss::laplace(m, &cfg).unwrap())
    ///     .collect();
    /// let total = PrivacyLoss::compose_all(&list).unwrap();
    /// // Laplace is μ-DP, so the composition is (0.6, 0)-DP.
    /// assert_eq!(total.delta(0.6).unwrap(), 0.0);
    /// ```
    pub fn compose_all(list: &[PrivacyLoss]) -> Result<PrivacyLoss> {
        let (first, rest) = list.split_first().ok_or(CompositionError::Empty {
            name: "privacy loss list",
        })?;
        let mut acc = first.clone();
        for p in rest {
            acc = acc.compose(p)?;
        }
        Ok(acc)
    }

    /// Checks bounds and brings both laws to the same step.
    fn aligned(&self, other: &PrivacyLoss) -> Result<(PrivacyLoss, PrivacyLoss)> {
        if self.bound != other.bound {
            return Err(out_of_range(
                "bound",
                0.0,
                "the same Bound (Upper/Lower/Estimate) for both laws",
            ));
        }
        let (fine, coarse) = if self.step <= other.step {
            (self, other)
        } else {
            (other, self)
        };
        let ratio = coarse.step / fine.step;
        let j = ratio.log2().round();
        if !(0.0..=60.0).contains(&j) || fine.step * 2f64.powi(j as i32) != coarse.step {
            return Err(out_of_range(
                "step ratio",
                ratio,
                "equal steps or a power-of-two ratio",
            ));
        }
        let mut f = fine.clone();
        for _ in 0..j as i32 {
            f = f.coarsened();
        }
        Ok(if self.step <= other.step {
            (f, other.clone())
        } else {
            (self.clone(), f)
        })
    }

    /// [`Self::compose`] with a given truncation budget for the result.
    pub(crate) fn compose_budget(&self, other: &PrivacyLoss, budget: f64) -> Result<PrivacyLoss> {
        let (mut a, mut b) = self.aligned(other)?;
        while a.pmf.len() + b.pmf.len() - 1 > a.max_len {
            a = a.coarsened();
            b = b.coarsened();
        }
        let conv = fft::convolve(&a.pmf, &b.pmf);
        let (ma, mb) = (a.mass(), b.mass());
        let parts = Parts {
            offset: a.offset + b.offset,
            pmf: conv.pmf,
            inf_mass: a.inf_mass + b.inf_mass - a.inf_mass * b.inf_mass,
            tail_mass: a.tail_mass * (1.0 - b.inf_mass) + b.tail_mass * (1.0 - a.inf_mass)
                - a.tail_mass * b.tail_mass,
            slack: a.slack * mb + b.slack * ma + a.slack * b.slack + conv.err,
            shift: a.shift + b.shift,
        };
        let mut out = PrivacyLoss::assemble(&a.config(), a.step, parts);
        // Bins at the ends below the FFT noise floor are indistinguishable from 0: cut
        // at least that much (else the support doubles with every squaring).
        out.truncate(budget.max(conv.err));
        Ok(out)
    }

    /// The law of the sum of `k` independent copies (k-fold composition; docs/maths.md §1.4
    /// "Exact δ", §3.4). Raises the discrete Fourier transform to the k-th power on a
    /// window chosen by Chernoff bounds (aliased mass accounted one-sidedly); if even the
    /// window exceeds `max_len`, uses binary exponentiation with tail truncation (budget
    /// scaled by each partial result's remaining multiplicity) and grid coarsening by 2
    /// (module docs of [`super`]). The total truncated mass stays within the `tail` budget
    /// plus the floating-point noise floor (end bins below the FFT error bound are cut too).
    ///
    /// Errors: `k = 0`.
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(0.01, Bound::Upper).unwrap();
    /// let rr = PrivacyLoss::randomized_response(0.1, &cfg).unwrap();
    /// let d = rr.self_compose(100).unwrap().delta(1.0).unwrap();
    /// let exact = composition::dp_delta(100, 0.1, 1.0).unwrap();
    /// assert!(d >= exact && d - exact < 1e-10);
    /// ```
    pub fn self_compose(&self, k: u64) -> Result<PrivacyLoss> {
        if k == 0 {
            return Err(out_of_range("k", 0.0, "[1, 2^63)"));
        }
        if k == 1 {
            return Ok(self.clone());
        }
        let levels = (64 - k.leading_zeros()) as f64;
        let budget = self.tail_budget / (2.0 * levels + 2.0);
        let mut base = self.clone();
        let mut rem = k;
        let mut acc: Option<PrivacyLoss> = None;
        loop {
            if rem > MAX_DIRECT_POWER {
                // Square first: one transform raised to a huge power loses accuracy.
            } else if let Some(p) = base.try_power(rem, budget)? {
                acc = Some(match acc {
                    None => p,
                    Some(a) => a.compose_budget(&p, budget)?,
                });
                break;
            }
            if rem & 1 == 1 {
                acc = Some(match acc {
                    None => base.clone(),
                    Some(a) => a.compose_budget(&base, budget)?,
                });
            }
            rem >>= 1;
            while base.pmf.len() > (base.max_len / 2).min(SQUARING_LEN) {
                base = base.coarsened();
            }
            base = base.compose_budget(&base, budget / rem as f64)?;
        }
        acc.ok_or(CompositionError::Empty {
            name: "composition",
        })
    }

    /// The k-th power by one Fourier transform, if its support (or a Chernoff window)
    /// fits in `max_len`; `None` otherwise.
    fn try_power(&self, k: u64, budget: f64) -> Result<Option<PrivacyLoss>> {
        if k == 1 {
            return Ok(Some(self.clone()));
        }
        let len = self.pmf.len();
        let full = k as u128 * (len as u128 - 1) + 1;
        let kf = k as f64;
        let full_len = if full <= self.max_len as u128 {
            Some(fft::fast_len(full as usize)).filter(|&n| n <= self.max_len)
        } else {
            None
        };
        // The Chernoff window (all but a provably tiny mass of the sum): used when the full
        // support does not fit, or when the window is less than half of it (a heavy but
        // light-massed tail, e.g. the bounded noise's loss near the support's edge, would
        // otherwise make the transform far longer than the mass needs).
        let window = if full_len.is_none() || full > 1 << 16 {
            let ln_tau = (0.5 * budget).max(1e-300).ln();
            let hi = fft::upper_extent(&self.pmf, k, ln_tau).ceil();
            let lo = fft::lower_extent(&self.pmf, k, ln_tau).floor();
            let need = hi - lo + 1.0;
            if need.is_finite() && need <= self.max_len as f64 {
                Some((lo.max(0.0) as u64, fft::fast_len(need as usize)))
                    .filter(|&(_, n)| n <= self.max_len)
            } else {
                None
            }
        } else {
            None
        };
        let (w_lo, n, aliased) = match (full_len, window) {
            (Some(nf), Some((lo, nw))) if 2 * nw < nf => (lo, nw, true),
            (Some(nf), _) => (0u64, nf, false),
            (None, Some((lo, nw))) => (lo, nw, true),
            (None, None) => return Ok(None),
        };
        let Conv { pmf: circ, err } = fft::power_circular(&self.pmf, k, n);
        let (pmf, upper_alias, lower_alias) = if aliased {
            let mut out = vec![0.0; n];
            for (j, v) in out.iter_mut().enumerate() {
                let jj = w_lo + j as u64;
                *v = circ[(jj % n as u64) as usize];
            }
            let up = fft::ln_upper_tail(&self.pmf, k, (w_lo + n as u64) as f64).exp();
            let low = if w_lo == 0 {
                0.0
            } else {
                fft::ln_lower_tail(&self.pmf, k, (w_lo - 1) as f64).exp()
            };
            (out, up, low)
        } else {
            let mut c = circ;
            c.truncate(full as usize);
            (c, 0.0, 0.0)
        };
        let m = self.mass();
        let keep = (1.0 - self.inf_mass).max(0.0);
        let inf_mass = one_minus_pow(self.inf_mass, kf);
        let tail_mass = if keep > 0.0 {
            (kf * (-self.inf_mass).ln_1p()).exp() * one_minus_pow(self.tail_mass / keep, kf)
        } else {
            0.0
        };
        let propagated = if self.slack == 0.0 || m == 0.0 {
            0.0
        } else {
            (kf * m.ln()).exp() * (kf * (self.slack / m).ln_1p()).exp_m1()
        };
        let mut slack = propagated + err;
        let mut tail_mass = tail_mass;
        match self.bound {
            Bound::Upper => tail_mass += upper_alias,
            Bound::Lower => slack += upper_alias + lower_alias,
            Bound::Estimate => {}
        }
        let offset = (self.offset as i128 * k as i128 + w_lo as i128)
            .try_into()
            .map_err(|_| out_of_range("k * offset", kf, "grid index within i64"))?;
        Ok(Some(PrivacyLoss::assemble(
            &self.config(),
            self.step,
            Parts {
                offset,
                pmf,
                inf_mass,
                tail_mass,
                slack: slack.min(2.0),
                shift: kf * self.shift,
            },
        )))
    }

    /// Cuts at most `budget/2` of P-mass from each end of the grid: `Upper` moves the top
    /// to `+∞` (charged) and the bottom up to the lowest kept bin; `Lower` moves the top
    /// down to the highest kept bin and drops the bottom; `Estimate` moves both to the
    /// nearest kept bin.
    pub(crate) fn truncate(&mut self, budget: f64) {
        let half = 0.5 * budget;
        if half <= 0.0 || self.pmf.len() < 3 {
            return;
        }
        let mut acc = 0.0;
        let mut cut = self.pmf.len();
        while cut > 2 && acc + self.pmf[cut - 1] <= half {
            acc += self.pmf[cut - 1];
            cut -= 1;
        }
        if cut < self.pmf.len() {
            self.pmf.truncate(cut);
            match self.bound {
                Bound::Upper => self.tail_mass += acc,
                Bound::Lower | Bound::Estimate => self.pmf[cut - 1] += acc,
            }
        }
        let mut acc = 0.0;
        let mut first = 0;
        while first + 2 < self.pmf.len() && acc + self.pmf[first] <= half {
            acc += self.pmf[first];
            first += 1;
        }
        if first > 0 {
            self.pmf.drain(..first);
            self.offset += first as i64;
            match self.bound {
                Bound::Upper | Bound::Estimate => self.pmf[0] += acc,
                Bound::Lower => self.tail_mass += acc,
            }
        }
    }

    /// The same law on the grid of step `2Δ`, with this law's rounding: `Upper` rounds
    /// every grid loss up (`i ↦ ⌈i/2⌉`), `Lower` down (`⌊i/2⌋`), `Estimate` splits odd
    /// indices half and half between the neighbours (mean kept). Adds Δ to
    /// [`Self::max_shift`].
    ///
    /// ```
    /// use composition::pld::{Bound, PldConfig, PrivacyLoss};
    /// let cfg = PldConfig::new(0.25, Bound::Upper).unwrap();
    /// let rr = PrivacyLoss::randomized_response(0.25, &cfg).unwrap();
    /// let c = rr.coarsened();
    /// assert_eq!(c.step(), 0.5);
    /// assert_eq!((c.offset(), c.pmf().len()), (0, 2)); // −0.25 ↦ 0, 0.25 ↦ 0.5
    /// ```
    pub fn coarsened(&self) -> PrivacyLoss {
        let lo = self.offset;
        let hi = self.offset + self.pmf.len() as i64 - 1;
        let map_lo = lo.div_euclid(2);
        let map_hi = (hi + 1).div_euclid(2);
        let mut pmf = vec![0.0; (map_hi - map_lo + 1) as usize];
        for (j, &p) in self.pmf.iter().enumerate() {
            if p == 0.0 {
                continue;
            }
            let g = lo + j as i64;
            match self.bound {
                Bound::Upper => pmf[((g + 1).div_euclid(2) - map_lo) as usize] += p,
                Bound::Lower => pmf[(g.div_euclid(2) - map_lo) as usize] += p,
                Bound::Estimate => {
                    if g.rem_euclid(2) == 0 {
                        pmf[(g / 2 - map_lo) as usize] += p;
                    } else {
                        pmf[(g.div_euclid(2) - map_lo) as usize] += 0.5 * p;
                        pmf[((g + 1).div_euclid(2) - map_lo) as usize] += 0.5 * p;
                    }
                }
            }
        }
        let m = self.mass();
        PrivacyLoss::assemble(
            &self.config(),
            2.0 * self.step,
            Parts {
                offset: map_lo,
                pmf,
                inf_mass: self.inf_mass,
                tail_mass: self.tail_mass,
                slack: self.slack + 2.0 * U * m,
                shift: self.shift + self.step,
            },
        )
    }
}
