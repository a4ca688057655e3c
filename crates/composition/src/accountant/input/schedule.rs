//! Schedules: DP-SGD whose noise σ or sampling rate q changes between steps, as a list of
//! segments `(σ, q, count)` of the Poisson-subsampled Gaussian (docs/accountant.md §2.8).
//!
//! Each distinct `(σ, q)` is one law for the accountant, and a law costs a discretisation
//! and a transform however few steps use it. Past [`MAX_EXACT_LAWS`] distinct pairs the
//! schedule is accounted through two copies on geometric lattices `(1 + ρ)^k` of σ (q too
//! when it takes many values): for the lower end each σ rounded up (q down), which leaks
//! less; for the upper end each step between two lattice points replaced by a revealed
//! mixture of the two lattice laws that dominates it ([`upper_weight`]), a cell's steps
//! grouped into a few such mixtures ([`group_weight`]); for the lower end likewise by a
//! mixture that each step dominates up to a charged slack ([`lower_weight`],
//! [`lower_group_weight`], [`Accounted::lower_slack`]). Both ends stay certified, and
//! both roundings are second order in their lattice's ρ.

use crate::accountant::input::spec::{MechanismKind, MechanismSpec, SpecError};
use crate::accountant::sampling::revealed::Side;
use densities::outward;
use outward::to_lattice;

/// One segment of a schedule: `count` steps of the Poisson-subsampled Gaussian with
/// noise multiplier `sigma` (sensitivity 1) and rate `q`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// σ > 0.
    pub sigma: f64,
    /// q ∈ [1e-9, 1].
    pub q: f64,
    /// Steps, ≥ 1.
    pub count: u64,
}

/// Most segments a schedule may have.
pub const MAX_SEGMENTS: usize = 1_000_000;

/// Most distinct `(σ, q)` pairs accounted exactly; beyond, the lattice of the module doc.
pub const MAX_EXACT_LAWS: usize = 384;

/// A schedule file's error: the 1-based line, the key (column) and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleError {
    /// Line of the file (1 = the header).
    pub line: usize,
    /// The column (`sigma`, `q`, `count`) or `header`/`rows`.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// Parses a schedule CSV: a header `sigma,q,count` (in any order), then one segment a
/// row; blank lines and lines starting with `#` are skipped.
///
/// ```
/// use composition::accountant::input::schedule::parse_csv;
/// let s = parse_csv("sigma,q,count\n1.0,0.01,100\n0.9,0.01,50\n").unwrap();
/// assert_eq!(s.len(), 2);
/// assert_eq!(parse_csv("sigma,q,count\n1,2,3\n").unwrap_err().key, "q");
/// ```
pub fn parse_csv(text: &str) -> Result<Vec<Segment>, ScheduleError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let err = |line: usize, key: &str, message: String| ScheduleError {
        line,
        key: key.to_string(),
        message,
    };
    let Some((hline, header)) = lines.next() else {
        return Err(err(
            1,
            "header",
            "the file is empty: expected a header sigma,q,count".into(),
        ));
    };
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let find = |name: &str| cols.iter().position(|c| *c == name);
    let (Some(is), Some(iq), Some(ic)) = (find("sigma"), find("q"), find("count")) else {
        return Err(err(
            hline,
            "header",
            format!("expected the columns sigma,q,count, got '{header}'"),
        ));
    };
    if cols.len() != 3 {
        return Err(err(
            hline,
            "header",
            format!("expected exactly the columns sigma,q,count, got '{header}'"),
        ));
    }
    let mut out = Vec::new();
    let mut total: u64 = 0;
    for (line, row) in lines {
        let cells: Vec<&str> = row.split(',').map(str::trim).collect();
        if cells.len() != 3 {
            return Err(err(
                line,
                "row",
                format!("expected 3 values (sigma,q,count), got {}", cells.len()),
            ));
        }
        let num = |i: usize, key: &str| -> Result<f64, ScheduleError> {
            cells[i]
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| err(line, key, format!("'{}' is not a finite number", cells[i])))
        };
        let sigma = num(is, "sigma")?;
        if !(sigma > 0.0 && sigma <= 1e300) {
            return Err(err(
                line,
                "sigma",
                format!("{sigma} is outside the allowed range (0, 1e300]"),
            ));
        }
        let q = num(iq, "q")?;
        if !(1e-9..=1.0).contains(&q) {
            return Err(err(
                line,
                "q",
                format!("{q} is outside the allowed range [1e-9, 1]"),
            ));
        }
        let c = num(ic, "count")?;
        if !(c >= 1.0 && c <= crate::accountant::core::answer::MAX_COUNT as f64 && c.fract() == 0.0)
        {
            return Err(err(
                line,
                "count",
                format!(
                    "{} is outside the allowed range: an integer in [1, 1e10]",
                    cells[ic]
                ),
            ));
        }
        total = total.saturating_add(c as u64);
        if total > crate::accountant::core::answer::MAX_COUNT {
            return Err(err(
                line,
                "count",
                "the schedule's steps add up to more than 1e10".into(),
            ));
        }
        // The SPEC language's own checks (e.g. 1/σ in [1e-6, 50]), named by this line.
        let seg = Segment {
            sigma,
            q,
            count: c as u64,
        };
        if let Err(e) = spec_of(&seg) {
            return Err(err(line, "sigma", e.0));
        }
        if out.len() == MAX_SEGMENTS {
            return Err(err(
                line,
                "rows",
                format!("more than {MAX_SEGMENTS} segments"),
            ));
        }
        out.push(seg);
    }
    if out.is_empty() {
        return Err(err(hline, "rows", "no segments after the header".into()));
    }
    Ok(out)
}

/// A schedule ready for the accountant: the specs whose composition bounds the true one
/// from above (`upper`) and from below (`lower`; the same as `upper` when no rounding was
/// needed), and the lattice ratios used (`None`: exact).
#[derive(Debug, Clone)]
pub struct Accounted {
    /// Specs whose certified upper end bounds the schedule's ε (or δ) from above: lattice
    /// laws, and revealed mixtures of two neighbouring ones
    /// ([`MechanismKind::SubsampledGaussianMix`]) of which only upper ends hold.
    pub upper: Vec<MechanismSpec>,
    /// Specs whose certified lower end bounds it from below once [`Self::lower_slack`] is
    /// charged: lattice laws, and revealed mixtures of two neighbouring ones of which only
    /// lower ends hold.
    pub lower: Vec<MechanismSpec>,
    /// An upper bound on how far the lower copy's δ(ε) may exceed the schedule's at any
    /// ε, in either direction, for one pass of the schedule (and on how far its power at a
    /// false-positive rate α(1 − slack) may exceed the schedule's at α, docs/accountant.md
    /// §2.8): 0 without lower mixtures. Use [`Self::lower_target`] and
    /// [`Self::lower_delta`].
    pub lower_slack: f64,
    /// Whether the lower end bridges its lattice's cells by mixtures (else σ is rounded up:
    /// a schedule too spread for its laws even at ρ = 1).
    pub lower_mixtures: bool,
    /// `ρ` of the lower end's lattice `(1 + ρ)^k`, or `None` when every distinct `(σ, q)`
    /// is its own law.
    pub ratio: Option<f64>,
    /// `ρ` of the upper end's lattice (`None` when exact): its cells are bridged by
    /// mixtures, so it costs far less width than the same `ρ` below.
    pub upper_ratio: Option<f64>,
    /// Whether q was rounded onto the lattices too (more than [`EXACT_Q`] distinct values).
    pub q_rounded: bool,
    /// Distinct `(σ, q)` pairs of the schedule as given.
    pub distinct: usize,
    /// Total steps.
    pub steps: u64,
    /// Steps at q = 1 composed as one Gaussian (0: none merged; [`gaussian_shift`]).
    pub gaussian_steps: u64,
    /// The schedule's distinct segments as given (merged, ordered by σ then q): for the
    /// Rényi-DP bound beside the answer ([`crate::rdp::schedule_bound`]).
    pub segments: Vec<Segment>,
}

impl Accounted {
    /// Whether the two ends come from two compositions (a rounded schedule's copies, or
    /// a Gaussian merged from steps at q = 1 with its shift rounded to each side); else
    /// `upper` gives both.
    pub fn two_copies(&self) -> bool {
        self.ratio.is_some() || self.upper != self.lower
    }

    /// The accuracy to ask the accountant for at each end, given the one `asked`, when the
    /// schedule was rounded (capped at 1e-2): with mixtures on both ends no finer than
    /// `65ρ²` of the lower lattice's ratio, with the lower end rounded up no finer than
    /// `2ρ`. Each is about what its rounding already costs (docs/accountant.md §2.8: on
    /// 1e4 distinct segments `65ρ²` = 1.6e-3 left each end's discretisation below the
    /// copies' gap, 80ρ² measured 0.095 % against 0.086 %; rounding up costs about ρ), and
    /// a finer accountant would mostly narrow what the rounding then widens again.
    ///
    /// Composed exactly past [`MAX_EXACT_LAWS`] laws (q taking many values), no finer than
    /// [`EXACT_MANY_ACCURACY`]: 1500 random (σ, q) at 1e-4 need 2.6e9 bins, past the work
    /// budget, and a first step refused for it left a bracket 7 % wide where 1e-3 takes
    /// 8 s (docs/accountant.md §2.8).
    pub fn end_accuracy(&self, asked: f64) -> f64 {
        match self.ratio {
            Some(rho) if self.lower_mixtures => asked.max((65.0 * rho * rho).min(0.01)),
            Some(rho) => asked.max((2.0 * rho).min(0.01)),
            None if self.upper.len() > MAX_EXACT_LAWS => asked.max(EXACT_MANY_ACCURACY),
            None => asked,
        }
    }

    /// The δ at which to ask the lower copy for the lower end of ε(δ), the schedule taken
    /// `times` times: `δ + times·slack`, rounded up (docs/accountant.md §2.8: the lower
    /// copy's δ exceeds the schedule's by at most that at every ε, so where it is above
    /// this δ the schedule's is above δ).
    pub fn lower_target(&self, delta: f64, times: u64) -> f64 {
        if self.lower_slack == 0.0 {
            return delta;
        }
        outward::up(delta + outward::mul_up(self.lower_slack, times as f64))
    }

    /// The schedule's lower end of δ(ε) (or of a power) from the lower copy's, `lower`,
    /// the schedule taken `times` times: `lower − times·slack`, rounded down, at least 0.
    pub fn lower_delta(&self, lower: f64, times: u64) -> f64 {
        if self.lower_slack == 0.0 {
            return lower;
        }
        outward::down(lower - outward::mul_up(self.lower_slack, times as f64)).max(0.0)
    }

    /// The false-positive rate at which to ask the lower copy for the lower end of the
    /// power at `alpha`: `alpha·(1 − times·slack)`, rounded down (the lower end is then
    /// [`Self::lower_delta`] of the lower copy's power there, docs/accountant.md §2.8).
    pub fn lower_fpr(&self, alpha: f64, times: u64) -> f64 {
        if self.lower_slack == 0.0 {
            return alpha;
        }
        let keep = outward::down(1.0 - outward::mul_up(self.lower_slack, times as f64));
        outward::mul_down(alpha, keep.max(0.0))
    }
}

/// Segments merged by equal `(σ, q)` (counts added), ordered by σ then q: a schedule's
/// rows permuted, split or merged give the same laws in the same order, and so the same
/// bracket to the bit.
fn merged(segments: &[Segment]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for s in segments {
        let key = (s.sigma.to_bits(), s.q.to_bits());
        match index.get(&key) {
            Some(&i) => {
                let m: &mut Segment = &mut out[i];
                m.count += s.count;
            }
            None => {
                index.insert(key, out.len());
                out.push(*s);
            }
        }
    }
    out.sort_by(|a, b| a.sigma.total_cmp(&b.sigma).then(a.q.total_cmp(&b.q)));
    out
}

fn spec_of(s: &Segment) -> Result<MechanismSpec, SpecError> {
    format!(
        "subsampled-gaussian:sigma={:?},q={:?},count={}",
        s.sigma, s.q, s.count
    )
    .parse()
}

/// Whether a `(σ, q)` is within the SPEC ranges, remembered: the lattice searches ask
/// for the same few hundred lattice points of every segment at each ratio tried.
#[derive(Default)]
struct Valid(std::cell::RefCell<std::collections::HashMap<(u64, u64), bool>>);

impl Valid {
    fn ok(&self, sigma: f64, q: f64) -> bool {
        *self
            .0
            .borrow_mut()
            .entry((sigma.to_bits(), q.to_bits()))
            .or_insert_with(|| spec_of(&Segment { sigma, q, count: 1 }).is_ok())
    }
}

fn specs(segments: &[Segment]) -> Result<Vec<MechanismSpec>, SpecError> {
    segments.iter().map(spec_of).collect()
}

/// Most distinct `q` values kept exact when a schedule is rounded (and at most a sixteenth
/// of the laws allowed): with no more, only σ goes onto the lattices (a q rounded by ρ
/// widens the bracket by about ρ).
pub const EXACT_Q: usize = 16;

/// The finest accuracy asked of a schedule composed exactly past [`MAX_EXACT_LAWS`] laws
/// ([`Accounted::end_accuracy`]).
pub const EXACT_MANY_ACCURACY: f64 = 1e-3;

/// How many times `max_laws` distinct pairs a schedule whose q would be rounded is still
/// composed exactly ([`accounted`]).
pub const EXACT_FACTOR_Q: usize = 4;

/// Boundaries of a lattice cell's upper mixture groups in `x = −ln(1 − α)` (the last group
/// open): α at 0.35, 0.65 and 0.88. A group's weight exceeds its steps' mean weight by
/// about `(1 − α)·Var(x)/2`; for weights spread evenly over a cell that averages 0.034
/// with two groups (split at x = 1), 0.0087 with these four (the best four, by a scan).
/// That cost is first order in the cell, the upper mixtures' own second order, so four
/// groups on a lattice twice as coarse beat two (1e4 segments: the upper end 1.2e-4
/// lower; six groups no better; docs/accountant.md §2.8).
const UPPER_GROUP_BOUNDS: [f64; 3] = [0.431, 1.050, 2.120];

/// Boundaries of a lattice cell's lower mixture groups in `y = −ln β`: β at 0.56 and 0.2
/// (the best three). The group's weight (the geometric mean) falls short of its steps'
/// mean by about `β·Var(y)/2`, 0.034 on average with two groups, 0.015 with these three.
/// The lower weight's own cost, about `z²ρ/8` of the weight, is first order too, so the
/// lower end keeps its lattice and takes a third group (384 laws a copy).
const LOWER_GROUP_BOUNDS: [f64; 2] = [0.579_818_495_252_942, 1.609_437_912_434_100_3];

/// The weight `α` on the leakier law (shift `hi`) of a revealed mixture with the law at
/// shift `lo` that dominates the Poisson-subsampled Gaussian at shift `mu ∈ [lo, hi]`, all
/// at the same q, add/remove, in both directions (docs/accountant.md §2.8).
///
/// Each direction's hockey-stick divergence at any `γ` is `a(γ) + b(γ)·δ_μ(e(γ))` with
/// `b ≥ 0` and `a, b, e` free of μ, `δ_μ` the Gaussian's profile, and
/// `∂δ_μ(ε)/∂μ = φ(μ/2 − ε/μ) =: g(μ)`, whose logarithmic derivative
/// `μ(ε²/μ⁴ − 1/4)` is at least `−μ/4 ≥ −L`, `L = hi/4`, for every ε. Hence
/// `g(t) ≤ g(μ)e^{L(μ−t)}` below μ and `g(t) ≥ g(μ)e^{−L(t−μ)}` above it, and
/// `(δ_μ − δ_lo)/(δ_hi − δ_lo) ≤ A/(A + B)` with `A = (e^{L(μ−lo)} − 1)`,
/// `B = (1 − e^{−L(hi−μ)})`: that ratio is the weight. It exceeds the linear
/// interpolation `(μ − lo)/(hi − lo)` by about `L(hi − lo)/2` times `θ(1 − θ)`, second
/// order in the cell. Rounded up (every rounding of the inputs, the `expm1`s, the sum and
/// the quotient, with room to spare).
///
/// ```
/// use composition::accountant::input::schedule::upper_weight;
/// let w = upper_weight(1.05, 1.0, 1.1);
/// assert!(w > 0.5 && w < 0.5 + 0.01);
/// assert_eq!((upper_weight(1.0, 1.0, 1.1), upper_weight(1.1, 1.0, 1.1)), (0.0, 1.0));
/// ```
pub fn upper_weight(mu: f64, lo: f64, hi: f64) -> f64 {
    if mu >= hi {
        return 1.0;
    }
    if mu <= lo {
        return 0.0;
    }
    let l = 0.25 * hi;
    let n = (l * (mu - lo)).exp_m1();
    let d = -(-l * (hi - mu)).exp_m1();
    let w = n / (n + d);
    (w * (1.0 + (32.0 + 8.0 * l * (hi - lo)) * f64::EPSILON)).min(1.0)
}

/// The weight `α* = 1 − (Π (1 − α_i)^{c_i})^{1/n}` of one mixture that, used `n = Σ c_i`
/// times, dominates `c_i` uses of the mixture at `α_i` for every i (docs/accountant.md
/// §2.8), from `sum_ln = Σ c_i ln(1 − α_i)` over `terms` segments.
///
/// The steps' choices are revealed, so the composition is the mixture over how many steps
/// chose the leakier law, `m`, of compositions that leak more as `m` grows; it is
/// dominated once the count of `Binomial(n, α*)` is stochastically larger than the
/// Poisson-binomial count. `P(S ≥ k)` is Schur-concave in `x_i = −ln(1 − α_i)` (with two
/// steps singled out it is `A + B(1 − e^{−(x_1+x_2)}) + C(1 − e^{−x_1})(1 − e^{−x_2})`,
/// `A, B, C ≥ 0`, largest for a given sum at `x_1 = x_2`), so equal `x_i` at their mean
/// maximise every tail. Rounded up.
///
/// ```
/// use composition::accountant::input::schedule::group_weight;
/// // Two steps at 0 and 0.5: 1 − √0.5 ≈ 0.293 (their mean is 0.25).
/// let w = group_weight(0.5f64.ln(), 2, 2);
/// assert!(w >= 1.0 - 0.5f64.sqrt() && w < 0.2929);
/// ```
pub fn group_weight(sum_ln: f64, n: u64, terms: usize) -> f64 {
    let w = -(sum_ln / n as f64).exp_m1();
    (w * (1.0 + (2.0 * terms as f64 + 16.0) * f64::EPSILON)).min(1.0)
}

/// The weight `β` on the leakier law (shift `hi`) of a revealed mixture with the law at
/// shift `lo` that the Poisson-subsampled Gaussian at shift `mu ∈ [lo, hi]` (same q,
/// add/remove) dominates in both directions at every γ whose Gaussian-profile argument
/// `e(γ)` (as in [`upper_weight`]) lies in `[0, e_max]` (docs/accountant.md §2.8).
///
/// The hockey-stick divergences at γ ≥ 1 of both directions are `b(γ)·δ_μ(e(γ))` with
/// `b ≥ 0` and `e ≥ 0`, and those at γ < 1 follow from the other direction's at 1/γ.
/// With `g(t) = φ(t/2 − ε/t)` (so `δ_μ − δ_lo = ∫_lo^μ g`), `(ln g)′(t) = ε²/t³ − t/4`
/// is at most `U = e_max²/lo³ − lo/4` for `ε ∈ [0, e_max]`, `t ∈ [lo, hi]`; hence
/// `g(t) ≥ g(μ)e^{−U(μ−t)}` below μ and `g(t) ≤ g(μ)e^{U(t−μ)}` above it, and
/// `(δ_μ − δ_lo)/(δ_hi − δ_lo) ≥ A/(A + B)` with `A = 1 − e^{−U(μ−lo)}`,
/// `B = e^{U(hi−μ)} − 1`: that ratio is the weight (for `U > 0`; the linear interpolation
/// where `U ≤ 0`). Beyond `e_max` the mixture may leak more, by at most
/// `q·δ_hi(e_max)`: the slack [`lower_slack_per_use`] charges. Rounded down.
///
/// ```
/// use composition::accountant::input::schedule::lower_weight;
/// let w = lower_weight(1.05, 1.0, 1.1, 1.0);
/// assert!(w < 0.5 && w > 0.5 - 0.01);
/// assert_eq!((lower_weight(1.0, 1.0, 1.1, 9.0), lower_weight(1.1, 1.0, 1.1, 9.0)), (0.0, 1.0));
/// ```
pub fn lower_weight(mu: f64, lo: f64, hi: f64, e_max: f64) -> f64 {
    if mu >= hi {
        return 1.0;
    }
    if mu <= lo {
        return 0.0;
    }
    // U rounded up (the weight falls as U grows): e_max² and the division up, lo³ down.
    let lo3 = outward::mul_down(outward::mul_down(lo, lo), lo);
    let u = outward::down(
        outward::div_up(outward::mul_up(e_max, e_max), lo3) - outward::mul_down(0.25, lo),
    );
    let u = outward::up(u);
    let (a, b) = (mu - lo, hi - mu);
    let w = if u * (hi - lo) < 1e-300 {
        a / (a + b)
    } else {
        let n = -(-u * a).exp_m1();
        let d = (u * b).exp_m1();
        n / (n + d)
    };
    (w * (1.0 - (32.0 + 8.0 * u.abs() * (hi - lo)) * f64::EPSILON)).max(0.0)
}

/// The weight `β* = (Π β_i^{c_i})^{1/n}` of one mixture that, used `n = Σ c_i` times, is
/// dominated by `c_i` uses of the mixture at `β_i` for every i (docs/accountant.md §2.8),
/// from `sum_ln = Σ c_i ln β_i` over `terms` segments.
///
/// The composition is the mixture over how many steps chose the leakier law, `m`, of
/// compositions that leak more as `m` grows; it is dominated once the count of
/// `Binomial(n, β*)` is stochastically smaller than the Poisson-binomial count.
/// `P(S ≥ k)` is Schur-convex in `y_i = −ln β_i` (with two steps singled out it is
/// `A + B(1 − (1 − p_1)(1 − p_2)) + C·p_1p_2`, `A, B, C ≥ 0`; for a given `y_1 + y_2` the
/// product is fixed and `p_1 + p_2` least at `p_1 = p_2`), so equal `y_i` at their mean
/// minimise every tail. Rounded down.
///
/// ```
/// use composition::accountant::input::schedule::lower_group_weight;
/// // Two steps at 0.25 and 1: their geometric mean 0.5 (their mean is 0.625).
/// let w = lower_group_weight(0.25f64.ln(), 2, 2);
/// assert!(w <= 0.5 && w > 0.4999);
/// ```
pub fn lower_group_weight(sum_ln: f64, n: u64, terms: usize) -> f64 {
    let w = (sum_ln / n as f64).exp();
    (w * (1.0 - (2.0 * terms as f64 + 16.0) * f64::EPSILON)).min(outward::down(1.0))
}

/// The range `e_max = hi·(z + hi/2)`, rounded up, of Gaussian-profile arguments on which a
/// lower mixture with leakier shift `hi` is dominated: there `δ_hi(e_max) ≤ Φ(−z)`.
pub fn lower_profile_range(hi: f64, z: f64) -> f64 {
    outward::mul_up(hi, outward::up(z + 0.5 * hi))
}

/// An upper bound on the slack one use of a lower mixture at rate `q` charges,
/// `2q·Φ(−z)` (docs/accountant.md §2.8): beyond its profile range
/// ([`lower_profile_range`]) the mixture's divergence exceeds the step's by at most
/// `q·δ_hi(e_max) ≤ qΦ(−z)`, where the step's own is at most `qΦ(−z) ≤ 1/2`, so the mixture
/// is dominated by the step revealed with probability `2qΦ(−z)`. `Φ(−z) ≤ φ(z)/z`, each
/// operation rounded up.
pub fn lower_slack_per_use(q: f64, z: f64) -> f64 {
    let t = 0.5 * outward::mul_down(z, z);
    let phi = outward::div_up(outward::exp_up(-t), outward::mul_down(z, 2.506_628_274_631));
    outward::mul_up(2.0 * q, phi)
}

/// The `z` of [`lower_profile_range`] whose slack over `uses_q = Σ c_i q_i` (all the
/// schedule's steps) is at most `target`, in [4, 38]: the least whole hundredth above the
/// bisection's root.
fn slack_z(uses_q: f64, target: f64) -> f64 {
    let fits = |z: f64| outward::mul_up(lower_slack_per_use(1.0, z), uses_q) <= target;
    if fits(4.0) {
        return 4.0;
    }
    let (mut lo, mut hi) = (4.0, 38.0);
    for _ in 0..60 {
        let m = 0.5 * (lo + hi);
        if fits(m) {
            hi = m;
        } else {
            lo = m;
        }
    }
    ((hi * 100.0).ceil() / 100.0).min(38.0)
}

/// One end's schedule on the lattice of ratio `rho`: each segment whose σ lies strictly
/// between two lattice points becomes its cell's revealed mixture of the two (weight
/// [`upper_weight`] for the upper end, [`lower_weight`] at profile range `z` for the
/// lower), the segments of a cell grouped by weight and each group one mixture
/// ([`group_weight`], [`lower_group_weight`]); segments on a lattice point, and those
/// whose lattice points fall outside the SPEC ranges, are plain laws. q is rounded up for
/// the upper end, down for the lower, when `round_q`. Returns the specs and the slack of
/// their lower mixtures (0 for the upper end).
fn mixture_specs(
    exact: &[Segment],
    rho: f64,
    round_q: bool,
    valid: &Valid,
    side: Side,
    z: f64,
) -> Result<(Vec<MechanismSpec>, f64), SpecError> {
    use std::collections::BTreeMap;
    let upper = side == Side::Upper;
    let mut plain: Vec<Segment> = Vec::new();
    // (σ_lo, σ_hi, q as bits, group) → (Σ c ln(weight or its complement), n, terms).
    type Key = (u64, u64, u64, usize);
    let mut groups: BTreeMap<Key, (f64, u64, usize)> = BTreeMap::new();
    for s in exact {
        let q = if round_q {
            to_lattice(s.q, rho, upper).min(1.0)
        } else {
            s.q
        };
        let (lo, hi) = (
            to_lattice(s.sigma, rho, false),
            to_lattice(s.sigma, rho, true),
        );
        let seg = |sigma: f64| Segment {
            sigma,
            q,
            count: s.count,
        };
        if !valid.ok(lo, q) || !valid.ok(hi, q) {
            plain.push(*s);
            continue;
        }
        // Shifts as the laws use them (1/σ rounded up); the segment's own toward the
        // side (the weight grows with μ).
        let mu = |sigma: f64| outward::div_up(1.0, sigma);
        let w = if upper {
            upper_weight(mu(s.sigma), mu(hi), mu(lo))
        } else {
            let own = outward::down(1.0 / s.sigma);
            lower_weight(own, mu(hi), mu(lo), lower_profile_range(mu(lo), z))
        };
        if lo == hi || w >= 1.0 {
            plain.push(seg(lo));
        } else if w <= 0.0 {
            plain.push(seg(hi));
        } else {
            // The group coordinate: x = −ln(1 − α) above, y = −ln β below.
            let ln = if upper { (-w).ln_1p() } else { w.ln() };
            let bounds: &[f64] = if upper {
                &UPPER_GROUP_BOUNDS
            } else {
                &LOWER_GROUP_BOUNDS
            };
            let g = bounds.iter().filter(|&&b| -ln >= b).count();
            let e = groups
                .entry((lo.to_bits(), hi.to_bits(), q.to_bits(), g))
                .or_insert((0.0, 0, 0));
            e.0 += s.count as f64 * ln;
            e.1 += s.count;
            e.2 += 1;
        }
    }
    let mut out = specs(&merged(&plain))?;
    let mut slack = 0.0;
    for ((lo, hi, q, _), (sum_ln, n, terms)) in groups {
        let (lo, hi, q) = (f64::from_bits(lo), f64::from_bits(hi), f64::from_bits(q));
        let w = if upper {
            group_weight(sum_ln, n, terms)
        } else {
            lower_group_weight(sum_ln, n, terms)
        };
        // Upper: a weight of 1, or one that underflowed to 0 (defence only: each α_i is
        // at least about 1e-18 for shifts up to 50), is the leakier lattice law alone (σ
        // rounded down). Lower: a weight that underflowed is the other law alone (σ
        // rounded up); below 1 by its rounding.
        if w <= 0.0 || w >= 1.0 {
            out.push(spec_of(&Segment {
                sigma: if upper { lo } else { hi },
                q,
                count: n,
            })?);
            continue;
        }
        if !upper {
            slack = outward::up(slack + outward::mul_up(lower_slack_per_use(q, z), n as f64));
        }
        let spec = MechanismSpec {
            kind: MechanismKind::SubsampledGaussianMix {
                sigma: lo,
                sigma2: hi,
                weight: w,
                q,
                side,
            },
            sensitivity: 1.0,
            count: n,
            pipeline: Default::default(),
            text: format!(
                "subsampled-gaussian:sigma={lo:?} (weight {w:?}) or {hi:?},q={q:?},count={n}{}",
                if upper { "" } else { " (lower end)" }
            ),
        };
        // Its two parts' laws are those of two lattice points checked by `valid` above.
        out.push(spec);
    }
    Ok((out, slack))
}

/// About the finest ratio in `[first, 1]` at which `fits` holds (1 if it never does): the
/// first power-of-two multiple of `first` that fits, then 12 bisections in the logarithm
/// (the law count falls with ρ, though not strictly: the end kept always fits).
fn finest(first: f64, fits: impl Fn(f64) -> bool) -> f64 {
    let mut hi = first;
    while !fits(hi) {
        if hi >= 1.0 {
            return 1.0;
        }
        hi = (2.0 * hi).min(1.0);
    }
    if hi == first {
        return hi;
    }
    let mut lo = 0.5 * hi;
    for _ in 0..12 {
        let mid = (lo * hi).sqrt();
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The schedule as compositions for the accountant: exact up to `max_laws` distinct
/// `(σ, q)` (default [`MAX_EXACT_LAWS`]), otherwise rounded: each end onto the finest
/// lattice (from `ρ = accuracy/8`) that leaves it at most `max_laws` laws (and at most
/// half the distinct ones), its cells
/// bridged by mixtures (`mixture_specs`; σ rounded to its side where mixtures do not fit
/// even at ρ = 1). q is rounded too only when it takes more than [`EXACT_Q`] values. The
/// lower mixtures' slack is at most [`DEFAULT_SLACK`].
///
/// ```
/// use composition::accountant::input::schedule::{accounted, Segment};
/// let s: Vec<Segment> = (0..100)
///     .map(|i| Segment { sigma: 1.0 + i as f64 / 100.0, q: 0.01, count: 10 })
///     .collect();
/// let a = accounted(&s, 1e-3, 64).unwrap();
/// assert!(a.ratio.is_some() && a.upper.len() <= 64 && a.lower.len() <= 64 && a.steps == 1000);
/// use composition::accountant::MechanismKind::SubsampledGaussianMix;
/// assert!(a.upper.iter().any(|m| matches!(m.kind, SubsampledGaussianMix { .. })));
/// assert!(a.lower_mixtures && a.lower_slack > 0.0 && a.lower_slack <= 1e-16);
/// ```
pub fn accounted(
    segments: &[Segment],
    accuracy: f64,
    max_laws: usize,
) -> Result<Accounted, SpecError> {
    accounted_with_slack(segments, accuracy, max_laws, DEFAULT_SLACK)
}

/// The lower end's slack [`accounted`] allows (an ε question at δ may allow more:
/// [`accounted_with_slack`]): a δ(ε) lower end of 1e-10 loses a millionth of itself.
pub const DEFAULT_SLACK: f64 = 1e-16;

/// As [`accounted`], the lower mixtures' profile range chosen so that their slack
/// ([`Accounted::lower_slack`]) is at most `slack_target` (for ε at δ, a millionth of δ
/// moves the lower end by far less than its accuracy).
pub fn accounted_with_slack(
    segments: &[Segment],
    accuracy: f64,
    max_laws: usize,
    slack_target: f64,
) -> Result<Accounted, SpecError> {
    let steps = segments.iter().map(|s| s.count).sum();
    let all = merged(segments);
    let distinct = all.len();
    // Steps at q = 1 are Gaussian mechanisms, whose composition is one Gaussian (the
    // other segments, possibly none, accounted as usual beside it).
    let (gaussian, segments) = match gaussian_steps(segments)? {
        Some((g, rest)) => (Some(g), rest),
        None => (None, segments.to_vec()),
    };
    let mut a = accounted_by_laws(&segments, accuracy, max_laws, slack_target)?;
    if let Some((up, lo)) = gaussian {
        a.upper.push(up);
        a.lower.push(lo);
        a.gaussian_steps = steps - a.steps;
    }
    a.distinct = distinct;
    a.steps = steps;
    a.segments = all;
    Ok(a)
}

/// The steps at q = 1 of a schedule with at least two distinct σ there, as one Gaussian
/// mechanism: their composition is the Gaussian pair at `μ = √(Σ c_i/σ_i²)` exactly
/// (docs/accountant.md §2.8), as two specs, the first with μ rounded up (for the upper
/// end), the second down; and the other segments. `None`: fewer than two distinct σ at
/// q = 1, or a composed shift past the Gaussian's range (then each stays its own law).
#[allow(clippy::type_complexity)]
fn gaussian_steps(
    segments: &[Segment],
) -> Result<Option<((MechanismSpec, MechanismSpec), Vec<Segment>)>, SpecError> {
    let (at_one, rest): (Vec<Segment>, Vec<Segment>) = segments.iter().partition(|s| s.q == 1.0);
    if merged(&at_one).len() < 2 {
        return Ok(None);
    }
    let (mu_hi, mu_lo) = gaussian_shift(&at_one);
    let spec = |sigma: f64| -> Result<MechanismSpec, SpecError> {
        format!("gaussian:sigma={sigma:?}").parse()
    };
    // The Gaussian law shifts by 1/σ rounded up: σ = 1/μ_hi rounded down gives a shift of
    // at least μ_hi; σ = 1/μ_lo rounded up gives one of at most μ_lo (both exact-directed).
    match (
        spec(outward::div_down(1.0, mu_hi)),
        spec(outward::div_up(1.0, mu_lo)),
    ) {
        (Ok(up), Ok(lo)) => {
            let mut up = up;
            let mut lo = lo;
            let n = at_one.len();
            up.text = format!("the {n} steps at q = 1: gaussian, shift {mu_hi:?} (rounded up)");
            lo.text = format!("the {n} steps at q = 1: gaussian, shift {mu_lo:?} (rounded down)");
            Ok(Some(((up, lo), rest)))
        }
        _ => Ok(None),
    }
}

/// `√(Σ c_i/σ_i²)` of `segments`, rounded up and down (each operation exact-directed).
pub fn gaussian_shift(segments: &[Segment]) -> (f64, f64) {
    let (mut hi, mut lo) = (0.0f64, 0.0f64);
    for s in segments {
        let (u, d) = (
            outward::div_up(1.0, s.sigma),
            outward::div_down(1.0, s.sigma),
        );
        let c = s.count as f64;
        hi = outward::up(hi + outward::mul_up(c, outward::mul_up(u, u)));
        lo = outward::down(lo + outward::mul_down(c, outward::mul_down(d, d)));
    }
    // sqrt is correctly rounded: a step outward bounds it.
    (outward::up(hi.sqrt()), outward::down(lo.sqrt()).max(0.0))
}

/// [`accounted_with_slack`] of segments none of which is merged into a Gaussian.
fn accounted_by_laws(
    segments: &[Segment],
    accuracy: f64,
    max_laws: usize,
    slack_target: f64,
) -> Result<Accounted, SpecError> {
    // A lattice that must round q as well costs about its ratio in width (first order):
    // on random schedules of 1000–1500 distinct (σ, q) it left brackets 20–30 % wide,
    // where composing every law exactly took 6 s for 1e-3 (docs/accountant.md §2.8). Such
    // schedules are composed exactly up to four times the laws.
    let max_laws = if q_rounded(&merged(segments), max_laws) {
        max_laws.saturating_mul(EXACT_FACTOR_Q)
    } else {
        max_laws
    };
    rounded_copies(segments, accuracy, max_laws, slack_target)
}

/// Whether a schedule of these distinct segments rounded onto `max_laws` laws rounds q
/// as well (more than [`EXACT_Q`] distinct q, or a sixteenth of the laws).
fn q_rounded(exact: &[Segment], max_laws: usize) -> bool {
    let mut qs: Vec<u64> = exact.iter().map(|s| s.q.to_bits()).collect();
    qs.sort_unstable();
    qs.dedup();
    qs.len() > (max_laws / 16).min(EXACT_Q)
}

/// The schedule's laws, exact up to `max_laws` distinct `(σ, q)`, else rounded onto the
/// lattices of the module doc (no step merged into a Gaussian, no exact composition past
/// `max_laws`: [`accounted_with_slack`] without its shortcuts, for tests of the lattices
/// against the Gaussian closed form at q = 1).
pub fn rounded_copies(
    segments: &[Segment],
    accuracy: f64,
    max_laws: usize,
    slack_target: f64,
) -> Result<Accounted, SpecError> {
    let exact = merged(segments);
    let steps = segments.iter().map(|s| s.count).sum();
    let distinct = exact.len();
    let round_q = q_rounded(&exact, max_laws);
    if distinct <= max_laws.max(1) {
        let s = specs(&exact)?;
        return Ok(Accounted {
            upper: s.clone(),
            lower: s,
            lower_slack: 0.0,
            lower_mixtures: false,
            ratio: None,
            upper_ratio: None,
            q_rounded: false,
            distinct,
            steps,
            gaussian_steps: 0,
            segments: exact,
        });
    }
    let valid = Valid::default();
    // One end's schedule on the lattice of ratio ρ, each segment rounded so that it leaks
    // more (`up`: σ down, q up) or less (σ up, q down): the fallback where mixtures do
    // not fit even at ρ = 1.
    let rounded_at = |rho: f64, up: bool| -> Vec<Segment> {
        merged(
            &exact
                .iter()
                .map(|s| {
                    let r = Segment {
                        sigma: to_lattice(s.sigma, rho, !up),
                        q: if round_q {
                            to_lattice(s.q, rho, up).min(1.0)
                        } else {
                            s.q
                        },
                        count: s.count,
                    };
                    // A lattice point outside the SPEC ranges (q below 1e-9, σ past the
                    // shift limit): that segment stays as given, exact on both sides.
                    if valid.ok(r.sigma, r.q) {
                        r
                    } else {
                        *s
                    }
                })
                .collect::<Vec<_>>(),
        )
    };
    let first = (accuracy / 8.0).max(1e-9);
    let uses_q: f64 = exact.iter().map(|s| s.count as f64 * s.q).sum();
    let z = slack_z(uses_q, slack_target.max(f64::MIN_POSITIVE));
    // Each end: mixtures on the finest lattice that leaves them within their share of the
    // laws, or else (a schedule too spread for so few laws even at ρ = 1) σ rounded to
    // its side on the finest lattice that fits.
    let end = |side: Side, most: usize| -> Result<(Vec<MechanismSpec>, f64, f64), SpecError> {
        let mixed = |rho: f64| mixture_specs(&exact, rho, round_q, &valid, side, z);
        let rho = finest(first, |rho| mixed(rho).is_ok_and(|(m, _)| m.len() <= most));
        match mixed(rho)? {
            (m, slack) if m.len() <= most => Ok((m, slack, rho)),
            _ => {
                let up = side == Side::Upper;
                let rho = finest(first, |rho| rounded_at(rho, up).len() <= most);
                Ok((specs(&rounded_at(rho, up))?, 0.0, rho))
            }
        }
    };
    // Each copy at most half the distinct laws too: two copies of mixtures (whose cells
    // integrate two laws) cost more than the exact composition otherwise (300 distinct
    // segments: 9.4 s rounded onto 256 laws a copy, 6.7 s exactly, before shared parts).
    let per_end = max_laws.min(distinct / 2).max(1);
    let (lower, lower_slack, rho) = end(Side::Lower, per_end)?;
    let (upper, _, rho_up) = end(Side::Upper, per_end)?;
    let lower_mixtures = lower
        .iter()
        .any(|m| matches!(m.kind, MechanismKind::SubsampledGaussianMix { .. }));
    Ok(Accounted {
        upper,
        lower,
        lower_slack,
        lower_mixtures,
        ratio: Some(rho),
        upper_ratio: Some(rho_up),
        q_rounded: round_q,
        distinct,
        steps,
        gaussian_steps: 0,
        segments: exact,
    })
}

#[cfg(test)]
mod weight_tests;
