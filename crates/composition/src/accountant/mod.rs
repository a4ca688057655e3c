//! An accountant that is exact at any δ, count and noise scale: certified brackets of
//! `δ(ε)` and `ε(δ)` for heterogeneous compositions (docs/accountant.md).
//!
//! # Method
//! 1. Each mechanism's privacy-loss law ([`LossLaw`]) is discretised twice on a common grid
//!    `jΔ`: a dominating law by connect-the-dots and a dominated law by merging
//!    ([`grid::lattice`]). Neither error grows like `kΔ`: both are second order in Δ.
//! 2. The laws are composed by FFT after exponential tilting at the saddle point of the
//!    requested ε ([`compose::tilted`]), so δ keeps its relative accuracy down to `e^{−700}` and
//!    below (reported as `ln δ`), for counts up to 1e10.
//! 3. Every error term (aliasing, FFT round-off, normalisation, quadrature, truncated
//!    tails) is bounded and charged on the safe side of each bound: `lower ≤ exact ≤ upper`.
//! 4. The grid step is not a parameter: it starts at a fraction of the smallest loss scale
//!    and is refined until the bracket is as narrow as the requested relative accuracy
//!    (default 1e-4 for ε, 1e-3 for δ), within a bin budget (2²³ bins a window by default, under 2 GiB in all).
//!    When the budget stops the refinement the bracket is still certified, only wider,
//!    and [`Answer::accuracy_met`] says so.
//!
//! # Layout: seven rooms, imports pointing down only
//! Each room is a folder; a file imports from its own room and the rooms listed before
//! it, never after (docs/architecture.md draws it; `tests/layers.rs` fails on an upward
//! import). Adding a mechanism is one file in [`laws`] (or [`sampling`]) and one arm in
//! [`input::spec`].
//! 1. [`core`]: what every layer uses: the [`Answer`], the limits, the work budget
//!    ([`Work`]), the thread pool, memory pages, FFT plans and round-off constants, and
//!    log-space arithmetic.
//! 2. [`laws`]: the [`LossLaw`] trait and one file per mechanism family (Gaussian,
//!    clipped Laplace and randomized response, finite discrete laws, the discrete
//!    Gaussian, the bounded-range class, bounded noise).
//! 3. [`sampling`]: laws made from other laws: subsampled (Poisson and fixed-size
//!    batches), symmetrized, mixtures (replace-one, groups), revealed mixtures, a
//!    balls-in-bins epoch's laws, the max statistic.
//! 4. [`grid`]: discretisation on both sides of the truth ([`Lattice`], [`GridCells`]),
//!    and the graded cells a question focuses.
//! 5. [`compose`]: the composition of discretised laws: tilted FFT windows and their error
//!    terms, the one-jump split for heavy tails, staged plans, ε and δ at one grid step.
//! 6. [`input`]: the SPEC language and schedules: text in, laws out.
//! 7. [`query`]: the questions: [`Accountant`] (ε(δ), δ(ε), the refinement of the step),
//!    the two-sided [`Composition`] of SPECs, the trade-off function, the solver for one
//!    unknown, bounded noise's least radius.
//!
//! The items most users need are re-exported here.
//!
//! ```
//! use composition::accountant::{Accountant, GaussianLaw};
//! // 1000 Gaussian mechanisms with σ = 2 are one Gaussian with μ = √1000/2.
//! let acc = Accountant::new(vec![(Box::new(GaussianLaw::new(0.5).unwrap()), 1000)]).unwrap();
//! let a = acc.epsilon(1e-12).unwrap();
//! let exact = 235.3982; // closed form in 80-digit arithmetic (README's table)
//! assert!(a.lower <= exact && exact <= a.upper && a.upper / a.lower - 1.0 < 1e-4);
//! ```

pub mod compose;
pub mod core;
pub mod grid;
pub mod input;
pub mod laws;
pub mod query;
pub mod sampling;

pub use self::core::answer::{Answer, DEFAULT_MAX_BINS, MAX_COUNT, TOTAL_BINS_FACTOR};
pub use self::core::pages::keep_freed_memory;
pub use self::core::work::Work;
pub use compose::tilted::{Factor, TiltedSum};
pub use grid::lattice::{GridCells, Lattice};
pub use input::spec::{MechanismKind, MechanismSpec, NoisyMaxNoise, SpecError};
pub use laws::{
    BoundedNoiseLaw, ClippedLaplaceLaw, ContinuousRange, DiscreteLaw, GaussianLaw, LossLaw,
};
pub use query::accountant::Accountant;
pub use query::composition::Composition;
pub use query::radius::{
    least_radius_bracket, least_radius_bracket_until, RadiusBracket, BEYOND_NAME, BUDGET_NAME,
};
pub use query::solve::{Solution, Solver};
pub use query::target::{SolveError, Target, Template};
pub use query::tradeoff::TradeoffPoint;
