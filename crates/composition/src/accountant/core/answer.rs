//! What every question returns, and the limits every composition keeps.

/// Largest count of one mechanism.
pub const MAX_COUNT: u64 = 10_000_000_000;

/// Default bin budget of one FFT window (2²³ bins, about 0.8 GiB of work arrays; the
/// two sides of a bracket run at once, but never both in a window of 2²² bins or more,
/// `pages::large_window`).
pub const DEFAULT_MAX_BINS: usize = 1 << 23;

/// The grids of all the laws of a composition together hold at most this many times the
/// bin budget (memory: about 90 bytes a bin between cells, both sides' lattices and the
/// transforms' work arrays; the error message says "three times"; a rounded schedule's
/// 384 laws a copy at the step its accuracy asks fill about 80 % of it).
pub const TOTAL_BINS_FACTOR: u64 = 3;

/// A certified bracket of ε or δ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Answer {
    /// Certified lower bound.
    pub lower: f64,
    /// Midpoint of the bracket (geometric for δ); its error is at most half the width.
    pub estimate: f64,
    /// Certified upper bound.
    pub upper: f64,
    /// `ln` of the lower bound (useful when δ underflows `f64`).
    pub ln_lower: f64,
    /// `ln` of the upper bound.
    pub ln_upper: f64,
    /// Grid step of the final discretisation.
    pub step: f64,
    /// Whether the requested relative accuracy was reached within the bin budget (and
    /// the work budget, [`crate::accountant::Accountant::with_work`]).
    pub accuracy_met: bool,
}
