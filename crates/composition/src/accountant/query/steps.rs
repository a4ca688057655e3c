//! The grid-step schedule shared by the two refinement loops of the accountant
//! (`δ(ε)` and `ε(δ)`, docs/accountant.md §6): a pilot step for very wide laws, a coarser
//! first step when the first one overflows the bin budget, a step between the last good
//! one and an overflowing one, and the next step from a bracket's width.

use crate::error::CompositionError;

/// Cells of the pilot step of a law with a very wide range.
pub(super) const PILOT_CELLS: f64 = 65536.0;

/// How many times a first step that overflows the bin budget is made 8× coarser.
const COARSER_TRIES: usize = 3;

/// How many times a first step that would pass the work budget is made 2× coarser.
const BUDGET_TRIES: usize = 4;

/// How many times a step that overflows after a good one is replaced by the geometric
/// middle of the two.
const NARROWER_TRIES: usize = 2;

/// How much finer a step must be than the last one for [`Steps::stalled`] to judge it.
const STALL_STEP: f64 = 3.0;

/// The fraction of the last width a bracket keeps when refinement has stalled.
const STALL_WIDTH: f64 = 0.9;

/// Where a refinement loop stands in its choice of grid steps.
#[derive(Debug, Clone, Copy)]
pub(super) struct Steps {
    /// The usual first step (from the smallest loss scale and the accuracy asked).
    d0: f64,
    /// The step of the next evaluation.
    pub d: f64,
    /// Whether `d` is a pilot step (coarser than `d0`, set by the law's range).
    pilot: bool,
    coarser: usize,
    narrower: usize,
    /// The last refined-from step and its bracket's width.
    last: Option<(f64, f64)>,
    /// Every refined-from step and its width, oldest first (`hist[..n_hist]`; a loop
    /// refines at most [`HISTORY`] times).
    hist: [(f64, f64); HISTORY],
    n_hist: usize,
}

/// Refined-from steps [`Steps::stalled`] remembers.
const HISTORY: usize = 32;

/// What a refinement loop does after a failed evaluation.
pub(super) enum AfterError {
    /// Evaluate again at the new step.
    Retry,
    /// Stop with the last answer.
    Stop,
    /// No answer can be given: return the error.
    Fail,
}

impl Steps {
    /// The first step: `d0`, or the pilot `range / PILOT_CELLS` when a law's range `wide`
    /// spans more than `2·PILOT_CELLS` first steps (bounded noise far in its tail). The
    /// pilot often meets the accuracy already (the bracket's width grows like the step
    /// squared, and the loss scale behind `d0` can be far below what δ needs), and
    /// otherwise its width says how fine the next step must be.
    pub fn start(d0: f64, wide: f64, align: impl Fn(f64) -> f64) -> Self {
        let p = wide / PILOT_CELLS;
        let pilot = p > 2.0 * d0;
        Self {
            d0,
            d: if pilot { align(p) } else { d0 },
            pilot,
            coarser: 0,
            narrower: 0,
            last: None,
            hist: [(0.0, 0.0); HISTORY],
            n_hist: 0,
        }
    }

    /// As [`Self::start`], but when no wide-range pilot applies, the first step is a pilot
    /// `factor` times coarser than `d0` (`factor > 1`; [`crate::accountant::laws::LossLaw::coarse_start`]).
    /// Its width then sets the next step as for any pilot.
    pub fn start_coarse(d0: f64, wide: f64, factor: f64, align: impl Fn(f64) -> f64) -> Self {
        let s = Self::start(d0, wide, &align);
        if s.pilot || factor <= 1.0 {
            return s;
        }
        Self {
            d: align(factor * d0),
            pilot: true,
            ..s
        }
    }

    /// After an evaluation at `d` failed with `e`; `last_step` is the step of the last
    /// good evaluation, if any.
    pub fn after_error(
        &mut self,
        e: &CompositionError,
        last_step: Option<f64>,
        align: impl Fn(f64) -> f64,
    ) -> AfterError {
        let overflow = matches!(e, CompositionError::OutOfRange { .. });
        // A cancelled computation ends: no retry, and no earlier bracket stands in for it.
        if matches!(e, CompositionError::Interrupted) {
            return AfterError::Fail;
        }
        // A step that would pass the work budget: the bracket before stands; with none
        // yet, a step 4× coarser (about a quarter of the work) is tried, up to four times.
        if matches!(e, CompositionError::WorkBudget) {
            return match last_step {
                Some(_) => AfterError::Stop,
                None if self.coarser < BUDGET_TRIES => {
                    self.coarser += 1;
                    self.pilot = false;
                    self.d = align(self.d * 4.0);
                    AfterError::Retry
                }
                None => AfterError::Fail,
            };
        }
        if self.pilot {
            self.pilot = false;
            self.d = self.d0;
            return AfterError::Retry;
        }
        match last_step {
            // A step between the last good one and this one may still fit the budget
            // and narrow the bracket.
            Some(good) if overflow && self.narrower < NARROWER_TRIES && self.d < 0.6 * good => {
                self.narrower += 1;
                self.d = align((self.d * good).sqrt());
                AfterError::Retry
            }
            Some(_) => AfterError::Stop,
            // The first step is too fine for the bin budget (a wide tilted law): start
            // coarser, refinement then follows the width.
            None if overflow && self.coarser < COARSER_TRIES => {
                self.coarser += 1;
                self.d = align(self.d * 8.0);
                AfterError::Retry
            }
            None => AfterError::Fail,
        }
    }

    /// Whether refinement has stopped paying: the bracket at the current step is still at
    /// least [`STALL_WIDTH`] of the width at the finest step refined from that is at
    /// least [`STALL_STEP`] times coarser (the last one, after a large refinement; else
    /// one further back: refinement by 0.6× a step, aiming at an accuracy below a floor,
    /// crept on for a dozen steps). Its width is then set by something a finer step does
    /// not touch (the mass beyond a law's cut range, charged to `+∞`: one use of bounded
    /// noise at ε ≈ 600, δ = 1e-6 kept [538, 715] from a step of 0.03 down to 5e-4, 20 s
    /// for nothing; fixed-size batches of 2 from 6 at ε = 0.05 and an accuracy of 1e-6
    /// kept a width of 2.2e-6 from a step of 1e-3 down to 2.6e-6, 15 s), and the next
    /// step would only cost more.
    pub fn stalled(&self, width: f64) -> bool {
        self.hist[..self.n_hist]
            .iter()
            .rev()
            .find(|&&(d1, _)| d1 >= STALL_STEP * self.d)
            .is_some_and(|&(_, w1)| width >= STALL_WIDTH * w1)
    }

    /// Whether the last refinement narrowed the bracket by less than half of what a width
    /// all of the discretisation's (going like the step squared) would have lost: most of
    /// it is then a floor the step does not touch, such as the rounding between a rounded
    /// schedule's two copies (docs/accountant.md §2.8), and a finer step would cost more
    /// for little.
    pub fn stalled_on_floor(&self, width: f64) -> bool {
        self.last.is_some_and(|(d1, w1)| {
            d1 > self.d && w1 - width < 0.5 * w1 * (1.0 - (self.d / d1).powi(2))
        })
    }

    /// The next step after a bracket of relative width `width` (accuracy `acc` asked),
    /// aiming at `0.8·acc`. The width goes like a power of the step: the square (the
    /// discretisation's second-order errors) unless the last two steps measured another
    /// exponent, which is then used (clamped to `[1.5, 4]`: a composition of many
    /// subsampled uses narrowed like `Δ^2.5` to `Δ^4` on the way in, and the square alone
    /// overshot the accuracy 15-fold). From a pilot straight to the step its width asks for
    /// when that width is informative (≤ 5 %, never finer than `d0/8`), else to `d0`;
    /// otherwise by a factor in `[0.1, 0.85]` (a near miss then costs a step a little
    /// finer, not one half as large).
    pub fn refine(&mut self, width: f64, acc: f64, align: impl Fn(f64) -> f64) {
        let mut power = 2.0;
        if let Some((d1, w1)) = self.last {
            let p = (w1 / width).ln() / (d1 / self.d).ln();
            if p.is_finite() && d1 > self.d && w1 > width {
                power = p.clamp(1.5, 4.0);
            }
        }
        self.last = Some((self.d, width));
        if self.n_hist < HISTORY {
            self.hist[self.n_hist] = (self.d, width);
            self.n_hist += 1;
        }
        let shrink = (0.8 * acc / width).powf(1.0 / power);
        self.d = if self.pilot {
            self.pilot = false;
            let next = if width <= 0.05 {
                (self.d * shrink).max(0.125 * self.d0)
            } else {
                self.d0
            };
            align(next.min(0.5 * self.d))
        } else {
            align(self.d * shrink.clamp(0.1, 0.85))
        };
    }
}

#[cfg(test)]
mod tests {
    use super::Steps;

    #[test]
    fn a_floor_stalls_refinement_and_a_width_that_goes_like_the_step_squared_does_not() {
        // A bracket of width K·d² + R refined from d to 0.85d: with R = 0 it narrows by
        // 28 %, all of what the model predicts (not stalled); with R four times the
        // discretisation's part it narrows by 5.6 %, under half of that (stalled).
        for (floor, stalled) in [(0.0, false), (4.0, true)] {
            let width = |d: f64| d * d + floor;
            let mut s = Steps::start(1.0, 0.0, |d| d);
            let w1 = width(s.d);
            s.refine(w1, w1, |d| d);
            assert!((s.d - 0.85).abs() < 1e-12, "{}", s.d);
            assert_eq!(s.stalled_on_floor(width(s.d)), stalled, "floor {floor}");
        }
    }

    /// A bracket of width `d² + F` asked for half its floor `F`, refined as the loops do
    /// (stop when stalled, else refine), against the same loop on a width without the
    /// floor: with the floor it stops once the step is 3× finer than where the width last
    /// fell by a tenth, within a handful of steps and not below a thirtieth of the step where
    /// the floor took over (`d² = F`); without it, it refines on to the accuracy. Judged
    /// against the last step only (refinements of 0.6× a step), it crept on to its 16th.
    #[test]
    fn refinement_below_a_floor_stops_within_a_few_steps() {
        let f = 1e-6;
        let run = |floor: f64, acc: f64| {
            let width = |d: f64| d * d + floor;
            let mut s = Steps::start(1e-2, 0.0, |d| d);
            for i in 0..16 {
                let w = width(s.d);
                if w <= acc || s.stalled(w) {
                    return (i, s.d);
                }
                s.refine(w, acc, |d| d);
            }
            (16, s.d)
        };
        let (steps, d) = run(f, 0.5 * f);
        assert!(
            steps <= 10,
            "stalled only after {steps} steps, at d = {d:e}"
        );
        assert!(d >= 0.03 * f.sqrt(), "refined down to {d:e}");
        let (steps, d) = run(0.0, 0.5 * f);
        assert!(
            d * d <= 0.5 * f && steps < 16,
            "no floor: {steps} steps, d = {d:e}"
        );
    }
}
