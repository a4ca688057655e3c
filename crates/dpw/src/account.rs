//! `dpw account`: the command-line face of the tilted privacy-loss accountant
//! ([`composition::accountant`]): a certified bracket of ε(δ) or δ(ε) for any list of
//! mechanisms in the SPEC language ([`composition::accountant::MechanismSpec`]).

use composition::accountant::input::schedule::{
    accounted_with_slack, parse_csv, Segment, DEFAULT_SLACK, MAX_EXACT_LAWS,
};
use composition::accountant::input::spec::Sampling;
use composition::accountant::{Answer, Composition, MechanismKind, MechanismSpec, Work};
use serde::Serialize;
use std::time::Instant;

/// What is asked: ε at a given δ, or δ at a given ε.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Query {
    /// Report ε(δ) for this δ ∈ (0, 1).
    Delta(f64),
    /// Report δ(ε) for this ε ≥ 0.
    Epsilon(f64),
    /// Report the largest power (TPR) of any membership test at this false-positive rate
    /// in (0, 1): `1 − f(A)` on the certified trade-off bracket (docs/accountant.md §9).
    AtFpr(f64),
}

/// A validated `dpw account` request.
#[derive(Debug, Clone)]
pub struct AccountRequest {
    /// The mechanisms, composed heterogeneously.
    pub mechanisms: Vec<MechanismSpec>,
    /// The question.
    pub query: Query,
    /// Requested relative width of the bracket (`None`: the accountant's default).
    pub accuracy: Option<f64>,
    /// Work budget in bins transformed (docs/accountant.md §6.1).
    pub max_work: f64,
    /// A schedule of subsampled-Gaussian segments composed with the mechanisms
    /// (`--schedule FILE`, docs/accountant.md §2.8).
    pub schedule: Option<ScheduleInput>,
}

/// A schedule file as read.
#[derive(Debug, Clone)]
pub struct ScheduleInput {
    /// The path given.
    pub path: String,
    /// Its segments.
    pub segments: Vec<Segment>,
}

/// How a schedule was accounted (for the output).
#[derive(Debug, Clone, Copy)]
pub struct ScheduleNote {
    /// Segments in the file.
    pub segments: usize,
    /// Total steps.
    pub steps: u64,
    /// Distinct (σ, q) pairs.
    pub distinct: usize,
    /// The lower end's lattice ratio ρ, when the schedule was rounded.
    pub ratio: Option<f64>,
    /// The upper end's lattice ratio, when the schedule was rounded.
    pub upper_ratio: Option<f64>,
    /// Whether the upper end bridges its lattice's cells by mixtures (else σ rounded down).
    pub mixtures: bool,
    /// Whether the lower end bridges its lattice's cells by mixtures (else σ rounded up).
    pub lower_mixtures: bool,
    /// The lower end's slack (docs/accountant.md §2.8), charged to its δ or power.
    pub lower_slack: f64,
    /// Whether q was rounded onto the lattices too.
    pub q_rounded: bool,
    /// Steps at q = 1 composed as one Gaussian (0: none).
    pub gaussian_steps: u64,
    /// The certified Rényi-DP upper end of the whole composition (ε, or δ at the ε
    /// asked), its order, and whether it was tighter than the accountant's and so taken
    /// (docs/accountant.md §8); `None` where it does not apply.
    pub rdp: Option<RdpNote>,
}

/// The Rényi-DP bound beside a schedule's answer.
#[derive(Debug, Clone, Copy)]
pub struct RdpNote {
    /// Its upper end (ε, or δ).
    pub upper: f64,
    /// The Rényi order attaining it.
    pub order: u32,
    /// Whether it is the answer's upper end (tighter than the accountant's).
    pub taken: bool,
}

/// The composition as Poisson-subsampled Gaussian segments `(σ, q, count)` for the
/// Rényi-DP bound: the schedule's distinct segments and every mechanism that is a plain
/// Gaussian or Poisson-subsampled Gaussian under add/remove (σ over the sensitivity,
/// rounded down); `None` if any mechanism is another kind or pipeline.
fn rdp_segments(
    mechanisms: &[MechanismSpec],
    schedule: &[Segment],
) -> Option<Vec<(f64, f64, u64)>> {
    let mut out: Vec<(f64, f64, u64)> = schedule.iter().map(|s| (s.sigma, s.q, s.count)).collect();
    for m in mechanisms {
        if m.pipeline != composition::accountant::input::spec::Pipeline::default() {
            return None;
        }
        let (sigma, q) = match m.kind {
            MechanismKind::Gaussian { sigma } => (sigma, 1.0),
            MechanismKind::SubsampledGaussian { sigma, q } => (sigma, q),
            _ => return None,
        };
        out.push((
            densities::outward::div_down(sigma, m.sensitivity),
            q,
            m.count,
        ));
    }
    Some(out)
}

/// The most bytes a schedule file may hold (16 MiB, about a million rows): a larger file,
/// or an endless one such as `/dev/zero`, is refused after reading that much, never read
/// whole into memory.
pub const MAX_SCHEDULE_BYTES: u64 = 16 << 20;

/// The text of a schedule file of at most [`MAX_SCHEDULE_BYTES`], its lines ended by LF,
/// CRLF or a CR alone (all read as line ends). An error is one line: the file, what is
/// wrong and what is allowed.
pub fn read_schedule_text(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    let shown = crate::error::excerpt(&path.display().to_string());
    let cannot = |e: std::io::Error| format!("cannot read '{shown}': {e}");
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(cannot)?
        .take(MAX_SCHEDULE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_SCHEDULE_BYTES {
        return Err(format!(
            "'{shown}' holds more than {} MiB, the most a schedule file may hold (about a \
             million rows); merge the rows of equal sigma and q",
            MAX_SCHEDULE_BYTES >> 20
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "'{shown}' is not UTF-8 text (byte {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok(if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text
    })
}

/// Default work budget of `dpw account` (bins transformed), held within each step
/// (docs/accountant.md §6.1): 2e9, about 15 s of transforms on the reference machine's
/// 2 cores (an exact schedule of 1500 distinct laws at 1e-3 takes 1.1e9), two minutes
/// where each cell is a quadrature (bounded noise; 5.7e8 bins took 45 s).
pub const DEFAULT_MAX_WORK: f64 = 2e9;

/// The answer: the certified bracket and the time it took.
#[derive(Debug, Clone, Copy)]
pub struct AccountResult {
    /// The bracket.
    pub answer: Answer,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Work done, in bins transformed.
    pub work: u64,
    /// Whether the work budget stopped the refinement.
    pub budget_hit: bool,
    /// How the schedule was accounted, if there was one.
    pub schedule: Option<ScheduleNote>,
    /// With a shuffled mechanism (only a lower bound is certified,
    /// docs/accountant.md §2.9): the upper end Poisson sampling at the same rate would
    /// claim, which is *not* a bound for those samplers.
    pub poisson_claim: Option<f64>,
}

impl AccountRequest {
    /// Validates the flags; errors are one line `key: what is allowed`. `schedule` is the
    /// path of a schedule CSV (`sigma,q,count` rows) composed after the mechanisms (then
    /// `specs` may be empty); a bad row is one line naming the file, the line and the
    /// column.
    pub fn new(
        specs: &[String],
        schedule: Option<&str>,
        delta: Option<f64>,
        epsilon: Option<f64>,
        accuracy: Option<f64>,
    ) -> Result<Self, (String, String)> {
        if specs.is_empty() && schedule.is_none() {
            return Err((
                "--mechanism".into(),
                "at least one --mechanism KIND:key=value,... (or a --schedule FILE) is required"
                    .into(),
            ));
        }
        let schedule = match schedule {
            None => None,
            Some(path) => {
                let text = read_schedule_text(std::path::Path::new(path))
                    .map_err(|e| ("--schedule".to_string(), e))?;
                let segments = parse_csv(&text).map_err(|e| {
                    (
                        format!("--schedule {path}: line {}: {}", e.line, e.key),
                        crate::error::shorten_quotes(&e.message),
                    )
                })?;
                Some(ScheduleInput {
                    path: path.to_string(),
                    segments,
                })
            }
        };
        let mut mechanisms = Vec::with_capacity(specs.len());
        for s in specs {
            mechanisms.push(
                s.parse::<MechanismSpec>()
                    .map_err(|e| ("--mechanism".to_string(), e.0))?,
            );
        }
        let query =
            match (delta, epsilon) {
                (Some(d), None) => {
                    if !(d > 0.0 && d < 1.0) {
                        return Err(("--delta".into(), format!("must be in (0, 1), got {d}")));
                    }
                    Query::Delta(d)
                }
                (None, Some(e)) => {
                    if !(e.is_finite() && (0.0..=1e12).contains(&e)) {
                        return Err(("--epsilon".into(), format!("must be in [0, 1e12], got {e}")));
                    }
                    Query::Epsilon(e)
                }
                _ => return Err((
                    "--delta/--epsilon".into(),
                    "give exactly one of --delta D (to get epsilon) or --epsilon E (to get delta)"
                        .into(),
                )),
            };
        if let Some(a) = accuracy {
            if !(1e-8..=0.5).contains(&a) {
                return Err((
                    "--accuracy".into(),
                    format!("must be in [1e-8, 0.5], got {a}"),
                ));
            }
        }
        Ok(Self {
            mechanisms,
            query,
            accuracy,
            max_work: DEFAULT_MAX_WORK,
            schedule,
        })
    }

    /// A request for the largest TPR at false-positive rate `at_fpr` (`--at-fpr`), with an
    /// optional schedule file as in [`Self::new`].
    pub fn at_fpr(
        specs: &[String],
        schedule: Option<&str>,
        at_fpr: f64,
        accuracy: Option<f64>,
    ) -> Result<Self, (String, String)> {
        // Validated as a δ question, then asked at the FPR instead.
        let mut r = Self::new(specs, schedule, Some(0.5), None, accuracy)?;
        if !(at_fpr > 0.0 && at_fpr < 1.0) {
            return Err((
                "--at-fpr".into(),
                format!("must be in (0, 1), got {at_fpr}"),
            ));
        }
        r.query = Query::AtFpr(at_fpr);
        Ok(r)
    }

    /// The same request with another work budget in `[1e6, 1e13]` bins transformed.
    pub fn with_max_work(mut self, max_work: Option<f64>) -> Result<Self, (String, String)> {
        if let Some(w) = max_work {
            if !(1e6..=1e13).contains(&w) {
                return Err((
                    "--max-work".into(),
                    format!("must be in [1e6, 1e13] bins transformed, got {w}"),
                ));
            }
            self.max_work = w;
        }
        Ok(self)
    }

    /// Runs the accountant; errors (e.g. an unreachable δ) are one line that starts with
    /// the flag it concerns (`--delta: …`, `--mechanism: …`).
    pub fn run(&self) -> Result<AccountResult, String> {
        self.run_on(&Work::new(Some(self.max_work as u64)))
    }

    /// As [`Self::run`], charging `work` (whose budget and cancellation then apply; a
    /// cancelled run is the error "interrupted").
    pub fn run_on(&self, work: &Work) -> Result<AccountResult, String> {
        let start = Instant::now();
        // Everything that can refuse the input is checked before anything is computed:
        // the schedule's laws, and the Poisson comparison of a lower-bound-only sampler
        // (§2.9), which a long computation must not end in refusing.
        let accounted_schedule = match &self.schedule {
            None => None,
            Some(sch) => Some(
                accounted_with_slack(
                    &sch.segments,
                    self.accuracy.unwrap_or(1e-4),
                    MAX_EXACT_LAWS,
                    // The lower mixtures' slack (§2.8): 1e-4 of the δ asked (the
                    // profile range it allows cuts more from the lower end than the
                    // slack's own ε costs, about 1e-4/λ; a millionth measured 3e-5 of
                    // ε wider on 1e4 segments), or the default for a δ or power asked.
                    match self.query {
                        Query::Delta(d) => 1e-4 * d,
                        _ => DEFAULT_SLACK,
                    },
                )
                .map_err(|e| format!("--schedule: {}", e.0))?,
            ),
        };
        let poisson: Option<Vec<MechanismSpec>> = if self.lower_bound_only() {
            // What Poisson sampling at the same rates would claim for the whole
            // composition: each sampler's Poisson equivalent, and the schedule (Poisson
            // already; its upper end's laws when it was rounded).
            let mut p: Vec<MechanismSpec> = self
                .mechanisms
                .iter()
                .map(poisson_equivalent)
                .collect::<Result<_, _>>()?;
            if let Some(acc) = &accounted_schedule {
                p.extend(acc.upper.iter().cloned());
            }
            Some(p)
        } else {
            None
        };
        let (answer, note) = match (&self.schedule, accounted_schedule) {
            (Some(sch), Some(acc)) => {
                let with = |extra: &[MechanismSpec]| -> Vec<MechanismSpec> {
                    self.mechanisms.iter().chain(extra).cloned().collect()
                };
                let note = ScheduleNote {
                    segments: sch.segments.len(),
                    steps: acc.steps,
                    distinct: acc.distinct,
                    ratio: acc.ratio,
                    upper_ratio: acc.upper_ratio,
                    mixtures: acc
                        .upper
                        .iter()
                        .any(|m| matches!(m.kind, MechanismKind::SubsampledGaussianMix { .. })),
                    lower_mixtures: acc.lower_mixtures,
                    lower_slack: acc.lower_slack,
                    q_rounded: acc.q_rounded,
                    gaussian_steps: acc.gaussian_steps,
                    rdp: None,
                };
                let answer = if acc.two_copies() {
                    // Each end from the rounded schedule on its side (§2.8): every
                    // quantity asked (ε, δ, TPR) grows as a step leaks more. The accountant
                    // is asked for no finer accuracy than the rounding already costs
                    // (`end_accuracy`).
                    let coarse = acc.end_accuracy(self.accuracy.unwrap_or(1e-4));
                    let (up, lo) = match self.query {
                        // ε(δ): both ends side by side, one copy's end on each thread.
                        Query::Delta(d) if !self.lower_bound_only() => {
                            let low = with(&acc.lower);
                            let target = Some((low.as_slice(), acc.lower_target(d, 1)));
                            let a = self.ask_query(
                                &with(&acc.upper),
                                work,
                                Some(coarse),
                                self.query,
                                target,
                            )?;
                            (a, a)
                        }
                        _ => (
                            self.ask_at(&with(&acc.upper), work, Some(coarse))?,
                            self.ask_lower(&with(&acc.lower), &acc, work, Some(coarse))?,
                        ),
                    };
                    let width = match self.query {
                        Query::Epsilon(_) => -(lo.ln_lower - up.ln_upper).exp_m1(),
                        _ if up.upper > 0.0 => (up.upper - lo.lower) / up.upper,
                        _ => 0.0,
                    };
                    let default = if matches!(self.query, Query::Delta(_)) {
                        1e-4
                    } else {
                        1e-3
                    };
                    Answer {
                        lower: lo.lower,
                        estimate: 0.5 * (lo.lower + up.upper),
                        upper: up.upper,
                        ln_lower: lo.ln_lower,
                        ln_upper: up.ln_upper,
                        step: up.step.min(lo.step),
                        accuracy_met: width <= self.accuracy.unwrap_or(default),
                    }
                } else if acc.end_accuracy(1e-4) > 1e-4 {
                    // Composed exactly past 384 laws: asked no finer than the schedule
                    // allows (`end_accuracy`), met or not against the accuracy asked.
                    let default = if matches!(self.query, Query::Delta(_)) {
                        1e-4
                    } else {
                        1e-3
                    };
                    let asked = self.accuracy.unwrap_or(default);
                    let a = self.ask_at(&with(&acc.upper), work, Some(acc.end_accuracy(asked)))?;
                    let width = match self.query {
                        Query::Epsilon(_) => -(a.ln_lower - a.ln_upper).exp_m1(),
                        _ if a.upper > 0.0 => (a.upper - a.lower) / a.upper,
                        _ => 0.0,
                    };
                    Answer {
                        accuracy_met: width <= asked,
                        ..a
                    }
                } else {
                    self.ask(&with(&acc.upper), work)?
                };
                let mut note = note;
                let (answer, rdp) = self.with_rdp(answer, &acc.segments);
                note.rdp = rdp;
                (answer, Some(note))
            }
            _ => (
                self.with_parts_below(self.ask(&self.mechanisms, work)?, work),
                None,
            ),
        };
        let (answer, poisson_claim) = if let Some(poisson) = poisson {
            // Only the lower end holds (§2.9): the upper end is none known (+∞, a true
            // bound), and beside it what Poisson accounting at the same rate would claim.
            let claim = self.ask(&poisson, work)?.upper;
            let a = Answer {
                estimate: answer.lower,
                upper: f64::INFINITY,
                ln_upper: f64::INFINITY,
                accuracy_met: true,
                ..answer
            };
            (a, Some(claim))
        } else {
            (answer, None)
        };
        // δ and a power are probabilities: every end into [0, 1] (a certified upper end
        // rounded outward past 1, e.g. 1.0000000000000004, is still certified at 1).
        let (answer, poisson_claim) = match self.query {
            Query::Delta(_) => (answer, poisson_claim),
            _ => (clamp_probability(answer), poisson_claim.map(|c| c.min(1.0))),
        };
        Ok(AccountResult {
            answer,
            seconds: start.elapsed().as_secs_f64(),
            work: work.done(),
            budget_hit: work.budget_hit(),
            schedule: note,
            poisson_claim,
        })
    }

    /// Whether the composition's mass at an infinite loss, if any, comes only from the
    /// discretisation of balls-in-bins epochs (§2.10): some mechanism is balls-in-bins and
    /// none has an infinite loss of its own (the truncated Laplacian and bounded noise do).
    fn discretised_infinity_only(&self) -> bool {
        self.mechanisms
            .iter()
            .any(|m| matches!(m.pipeline.sampling, Sampling::Allocation { .. }))
            && !self.mechanisms.iter().any(|m| {
                matches!(
                    m.kind,
                    MechanismKind::TruncatedLaplace { .. } | MechanismKind::Bounded { .. }
                )
            })
    }

    /// A composition's ε(δ) and δ(ε) are at least each of its mechanisms' alone (leaving
    /// one out is a post-processing): where the whole's bracket missed its accuracy, its
    /// lower end is raised to the largest of theirs. A fine law beside a wide one (a
    /// subsampled Gaussian's 2e-6 step beside 1e4 Laplace uses spanning ±5000 nats) left
    /// the whole at [0, 1] for δ(0.1) after 4 % of its budget, where the Laplace uses
    /// alone certify δ ≥ 0.99999999885 (issue 57).
    fn with_parts_below(&self, a: Answer, work: &Work) -> Answer {
        let acc = match self.query {
            Query::Delta(_) => self.accuracy.unwrap_or(1e-4),
            Query::Epsilon(_) => self.accuracy.unwrap_or(1e-3),
            Query::AtFpr(_) => return a,
        };
        if a.accuracy_met || self.mechanisms.len() < 2 || work.budget_hit() || work.cancelled() {
            return a;
        }
        let mut best = a;
        for m in &self.mechanisms {
            let Ok(p) = self.ask(std::slice::from_ref(m), work) else {
                continue;
            };
            if p.ln_lower > best.ln_lower && p.lower <= a.upper {
                best.lower = p.lower;
                best.ln_lower = p.ln_lower;
            }
        }
        if best.ln_lower == a.ln_lower {
            return a;
        }
        let width = match self.query {
            Query::Epsilon(_) => -(best.ln_lower - best.ln_upper).exp_m1(),
            _ if best.upper > 0.0 => (best.upper - best.lower) / best.upper,
            _ => 0.0,
        };
        Answer {
            estimate: 0.5 * (best.lower + best.upper),
            accuracy_met: width <= acc,
            ..best
        }
    }

    /// Whether some mechanism's only certified number is a lower bound (§2.9).
    pub fn lower_bound_only(&self) -> bool {
        self.mechanisms.iter().any(|m| m.lower_bound_only())
    }

    /// `answer` with its upper end replaced by the certified Rényi-DP bound of the
    /// composition where that is tighter (docs/accountant.md §8: the exact route can fall
    /// short of it on a schedule it must round), and that bound; none for a power, a
    /// lower-bound-only sampler, or mechanisms the bound does not cover.
    fn with_rdp(&self, answer: Answer, distinct: &[Segment]) -> (Answer, Option<RdpNote>) {
        use composition::rdp::schedule_bound;
        use densities::outward;
        if self.lower_bound_only() {
            return (answer, None);
        }
        let Some(segs) = rdp_segments(&self.mechanisms, distinct) else {
            return (answer, None);
        };
        let (upper, ln_upper, order) = match self.query {
            Query::Delta(d) => {
                let b = schedule_bound(&segs, false, d);
                (b.value, outward::up_by(b.value.ln(), 2), b.order)
            }
            Query::Epsilon(e) => {
                let b = schedule_bound(&segs, true, e);
                (outward::exp_up(b.value).min(1.0), b.value.min(0.0), b.order)
            }
            Query::AtFpr(_) => return (answer, None),
        };
        let taken = upper.is_finite() && upper < answer.upper;
        let note = RdpNote {
            upper,
            order,
            taken,
        };
        if !taken {
            return (answer, Some(note));
        }
        let (width, estimate) = match self.query {
            Query::Delta(_) => {
                let w = if upper > 0.0 {
                    (upper - answer.lower) / upper
                } else {
                    0.0
                };
                (w, 0.5 * (answer.lower + upper))
            }
            _ => (
                -(answer.ln_lower - ln_upper).exp_m1(),
                (0.5 * (answer.ln_lower + ln_upper)).exp(),
            ),
        };
        let default = if matches!(self.query, Query::Delta(_)) {
            1e-4
        } else {
            1e-3
        };
        let a = Answer {
            upper,
            ln_upper,
            estimate,
            accuracy_met: width <= self.accuracy.unwrap_or(default),
            ..answer
        };
        (a, Some(note))
    }

    /// The query on one composition.
    fn ask(&self, mechanisms: &[MechanismSpec], work: &Work) -> Result<Answer, String> {
        self.ask_at(mechanisms, work, self.accuracy)
    }

    /// The lower end of the query from a rounded schedule's lower copy (with the
    /// mechanisms), its slack charged (docs/accountant.md §2.8): ε asked at `δ + slack`, δ
    /// and the power lowered by the slack, the power asked at `α(1 − slack)`. Only the
    /// lower end (and `ln_lower`) of the answer holds.
    fn ask_lower(
        &self,
        mechanisms: &[MechanismSpec],
        acc: &composition::accountant::input::schedule::Accounted,
        work: &Work,
        accuracy: Option<f64>,
    ) -> Result<Answer, String> {
        let query = match self.query {
            Query::Delta(d) => Query::Delta(acc.lower_target(d, 1)),
            Query::AtFpr(a) => Query::AtFpr(acc.lower_fpr(a, 1)),
            q => q,
        };
        let a = self.ask_query(mechanisms, work, accuracy, query, None)?;
        Ok(match self.query {
            Query::Delta(_) => a,
            _ => {
                let lower = acc.lower_delta(a.lower, 1);
                Answer {
                    lower,
                    ln_lower: if lower == a.lower {
                        a.ln_lower
                    } else {
                        densities::outward::down(lower.ln())
                    },
                    ..a
                }
            }
        })
    }

    /// The query on one composition at accuracy `accuracy` (`None`: the default).
    fn ask_at(
        &self,
        mechanisms: &[MechanismSpec],
        work: &Work,
        accuracy: Option<f64>,
    ) -> Result<Answer, String> {
        self.ask_query(mechanisms, work, accuracy, self.query, None)
    }

    /// `query` on one composition at accuracy `accuracy` (`None`: the default).
    ///
    /// With `lower` (specs whose lower end bounds the same ε from below, and the δ to ask
    /// them at) an ε(δ) question takes its upper end from `mechanisms` and its lower end
    /// from `lower`, side by side on each grid step (a rounded schedule's copies, §2.8).
    fn ask_query(
        &self,
        mechanisms: &[MechanismSpec],
        work: &Work,
        accuracy: Option<f64>,
        query: Query,
        lower: Option<(&[MechanismSpec], f64)>,
    ) -> Result<Answer, String> {
        let build = |list: &[MechanismSpec]| -> Result<_, String> {
            let b = if self.lower_bound_only() {
                Composition::lower_bound
            } else {
                Composition::of
            };
            // The laws are built with the meter watching: a cancellation (Ctrl-C in
            // Python) stops a long construction (a balls-in-bins epoch's, seconds), which
            // counts no work.
            let acc = work
                .watching(|| b(list))
                .map_err(|e| {
                    if work.cancelled() {
                        "interrupted".to_string()
                    } else {
                        e.0
                    }
                })?
                .with_work(work.clone());
            match accuracy {
                Some(a) => acc.with_accuracy(a).map_err(|e| e.to_string()),
                None => Ok(acc),
            }
        };
        let acc = build(mechanisms)?;
        match query {
            Query::Delta(d) => match lower {
                Some((low, d_low)) => acc.epsilon_with_lower(d, &build(low)?, d_low),
                None => acc.epsilon(d),
            },
            Query::Epsilon(e) => acc.delta(e),
            Query::AtFpr(a) => acc.tradeoff(&[a]).map(|p| {
                // TPR = 1 − β: its ends from β's, rounded outward.
                let lower = densities::outward::sub_bounds(1.0, p[0].upper).0;
                let upper = densities::outward::sub_bounds(1.0, p[0].lower).1;
                let width = if upper > 0.0 {
                    (upper - lower) / upper
                } else {
                    0.0
                };
                Answer {
                    lower,
                    estimate: 0.5 * (lower + upper),
                    upper,
                    ln_lower: lower.ln(),
                    ln_upper: upper.ln(),
                    step: f64::NAN,
                    accuracy_met: width <= self.accuracy.unwrap_or(1e-3),
                }
            }),
        }
        .map_err(|e| match e {
            composition::CompositionError::Unreachable { floor, .. } => {
                let d = match query {
                    Query::Delta(d) => d,
                    _ => f64::NAN,
                };
                if self.discretised_infinity_only() {
                    // No mechanism here has an infinite loss: the mass is the balls-in-bins
                    // epochs' construction (§2.10), which sends the tail beyond its cap
                    // (an excess mean of about e^-32 a step) to +inf.
                    format!(
                        "--delta: delta = {d:e} is below what the balls-in-bins accounting \
                         certifies: its epoch laws send their tails beyond a cap (an excess \
                         mean of about e^-32 a step, docs/accountant.md §2.10) to an infinite \
                         loss, P(L = inf) = {floor:.6e} in all (the mechanism itself has none), \
                         and delta at every epsilon is at least that; ask for a delta above it"
                    )
                } else {
                    format!(
                        "--delta: delta = {d:e} is unreachable: the composition has P(L = inf) \
                         = {floor:.6e} (delta at every epsilon is at least that); ask for a \
                         delta above it"
                    )
                }
            }
            composition::CompositionError::Interrupted => "interrupted".to_string(),
            composition::CompositionError::WorkBudget => format!(
                "--max-work: {:e} bins transformed are too few for a first bracket of this \
                 composition (its coarsest grid steps need more); raise --max-work",
                self.max_work
            ),
            // The accountant's own limits (bin budget, root search) are the composition's:
            // named by the flag that gave it, with the internal quantity in parentheses.
            other => format!(
                "--mechanism: the accountant cannot resolve this composition within its bin \
                 budget ({other}); ask for a coarser --accuracy, or compose mechanisms of more \
                 similar scales"
            ),
        })
    }

    /// `epsilon`, `delta` or `tpr`: the quantity reported.
    pub fn quantity(&self) -> &'static str {
        match self.query {
            Query::Delta(_) => "epsilon",
            Query::Epsilon(_) => "delta",
            Query::AtFpr(_) => "tpr",
        }
    }
}

/// A bracket of a probability (δ or a power) with its ends in `[0, 1]` and the estimate
/// between them; their logarithms at most 0. An infinite upper end (none certified, §2.9)
/// stays infinite.
fn clamp_probability(a: Answer) -> Answer {
    let lower = a.lower.clamp(0.0, 1.0);
    let upper = if a.upper.is_finite() {
        a.upper.clamp(lower, 1.0)
    } else {
        a.upper
    };
    Answer {
        lower,
        upper,
        estimate: if a.upper.is_finite() {
            a.estimate.clamp(lower, upper)
        } else {
            a.estimate.clamp(0.0, 1.0)
        },
        ln_lower: a.ln_lower.min(0.0),
        ln_upper: if a.upper.is_finite() {
            a.ln_upper.min(0.0)
        } else {
            a.ln_upper
        },
        ..a
    }
}

/// The Poisson-sampled mechanism at the same rate and number of steps as a shuffled or
/// balls-in-bins one (an epoch of t steps at q = 1/t); any other mechanism as it is. Asked
/// only when some mechanism is shuffled (balls-in-bins has its own bracket, §2.10, but a
/// balls-in-bins mechanism beside a shuffled one is mapped too).
fn poisson_equivalent(m: &MechanismSpec) -> Result<MechanismSpec, String> {
    let t = match m.pipeline.sampling {
        Sampling::Shuffle { batch, n } => n.div_ceil(batch),
        Sampling::Allocation { steps } => steps,
        _ => return Ok(m.clone()),
    };
    let MechanismKind::SubsampledGaussian { sigma, q } = m.kind else {
        return Ok(m.clone());
    };
    let steps = m
        .count
        .checked_mul(t)
        .filter(|&s| s <= composition::accountant::MAX_COUNT)
        .ok_or_else(|| {
            format!(
                "--mechanism: {}: the Poisson comparison needs count × steps of an epoch at most 1e10",
                m.text
            )
        })?;
    format!(
        "subsampled-gaussian:sigma={sigma:?},q={q:?},count={steps},sensitivity={:?}",
        m.sensitivity
    )
    .parse()
    .map_err(|e: composition::accountant::input::spec::SpecError| format!("--mechanism: {}", e.0))
}

/// A number in shortest round-trip form; a δ below `f64`'s range is written from its
/// logarithm in scientific notation (`3.2e-400`) with 12 significant digits, rounded
/// outward for a certified end (`side`: `Some(true)` upper, `Some(false)` lower) and to
/// nearest for the estimate.
fn value(v: f64, ln: f64, side: Option<bool>) -> String {
    // A subnormal keeps too few digits (an upper end rounded outward from an underflow is
    // a few ulps of 5e-324): from the logarithm then.
    if v >= f64::MIN_POSITIVE && v.is_finite() || v == 0.0 && ln == f64::NEG_INFINITY {
        format!("{v:?}")
    } else if ln.is_finite() {
        let l10 = ln / std::f64::consts::LN_10;
        match side {
            // The division and powf err by a few ulps of l10: 4u(1 + |l10|) relative
            // in the mantissa covers them.
            Some(upper) => densities::outward::sci_from_log10(
                l10,
                4.0 * f64::EPSILON * (1.0 + l10.abs()),
                11,
                upper,
            ),
            None => {
                let e = l10.floor();
                let m = 10f64.powf(l10 - e);
                format!("{m:.11}e{e}")
            }
        }
    } else {
        format!("{v:?}")
    }
}

fn values(req: &AccountRequest, r: &AccountResult) -> [String; 3] {
    let a = &r.answer;
    if r.poisson_claim.is_some() {
        // Only the lower end is certified (§2.9): no estimate, no upper end; the CSV field
        // is left empty (never an infinity in a CSV).
        let lo = match req.query {
            Query::Epsilon(_) => value(a.lower, a.ln_lower, Some(false)),
            _ => format!("{:?}", a.lower),
        };
        return [lo, String::new(), String::new()];
    }
    match req.query {
        Query::Delta(_) | Query::AtFpr(_) => {
            [a.lower, a.estimate, a.upper].map(|v| format!("{v:?}"))
        }
        Query::Epsilon(_) => [
            value(a.lower, a.ln_lower, Some(false)),
            value(a.estimate, 0.5 * (a.ln_lower + a.ln_upper), None),
            value(a.upper, a.ln_upper, Some(true)),
        ],
    }
}

/// CSV: header `quantity,lower,estimate,upper,seconds` and one row.
pub fn render_csv(req: &AccountRequest, r: &AccountResult) -> String {
    let [lo, est, hi] = values(req, r);
    format!(
        "quantity,lower,estimate,upper,seconds\n{},{lo},{est},{hi},{:?}\n",
        req.quantity(),
        r.seconds
    )
}

#[derive(Serialize)]
struct JsonMechanism<'a> {
    spec: &'a str,
    kind: &'a str,
    #[serde(flatten)]
    params: serde_json::Value,
    sensitivity: f64,
    count: u64,
}

#[derive(Serialize)]
struct JsonRequest<'a> {
    mechanisms: Vec<JsonMechanism<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    epsilon: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    at_fpr: Option<f64>,
    accuracy: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schedule: Option<serde_json::Value>,
}

fn params(m: &MechanismSpec) -> serde_json::Value {
    let mut v = kind_params(m);
    // The pipeline keys where they differ from the defaults (docs/accountant.md §2.7).
    use composition::accountant::input::spec::{Neighbours, Sampling};
    let p = m.pipeline;
    match p.sampling {
        Sampling::Poisson => {}
        Sampling::Fixed { batch, n } | Sampling::Shuffle { batch, n } => {
            let name = if matches!(p.sampling, Sampling::Fixed { .. }) {
                "fixed"
            } else {
                "shuffle"
            };
            v["sampling"] = name.into();
            v["batch"] = batch.into();
            v["n"] = n.into();
        }
        Sampling::Allocation { steps } => {
            v["sampling"] = "allocation".into();
            v["steps"] = steps.into();
        }
    }
    if p.neighbours == Neighbours::ReplaceOne {
        v["neighbours"] = "replace-one".into();
    }
    if p.group > 1 {
        v["group"] = p.group.into();
    }
    v
}

fn kind_params(m: &MechanismSpec) -> serde_json::Value {
    use serde_json::json;
    match &m.kind {
        MechanismKind::Gaussian { sigma } => json!({ "sigma": sigma }),
        MechanismKind::Laplace { scale } => json!({ "scale": scale }),
        MechanismKind::RandomizedResponse { epsilon } => json!({ "epsilon": epsilon }),
        MechanismKind::TruncatedLaplace { epsilon, delta } => {
            json!({ "epsilon": epsilon, "delta": delta })
        }
        MechanismKind::Bounded { family, radius } => match family {
            densities::bounded::BoundedFamily::Power { alpha } => {
                json!({ "family": "power", "alpha": alpha, "radius": radius })
            }
            densities::bounded::BoundedFamily::Exp => json!({ "family": "exp", "radius": radius }),
        },
        MechanismKind::SubsampledGaussian { sigma, q } => json!({ "sigma": sigma, "q": q }),
        MechanismKind::SubsampledLaplace { scale, q } => json!({ "scale": scale, "q": q }),
        MechanismKind::SubsampledGaussianMix {
            sigma,
            sigma2,
            weight,
            q,
            side,
        } => json!({
            "sigma": sigma,
            "sigma2": sigma2,
            "weight": weight,
            "q": q,
            "end": match side {
                composition::accountant::sampling::revealed::Side::Upper => "upper",
                composition::accountant::sampling::revealed::Side::Lower => "lower",
            },
        }),
    }
}

/// JSON: an object with the CSV's fields as numbers (never strings), `ln_lower`,
/// `ln_estimate` and `ln_upper` (their natural logarithms, which keep a δ below `f64`'s
/// range: the numbers then hold the nearest double on the safe side, 0 for a lower end
/// and at least the least subnormal 5e-324 for an upper end), the grid step, whether the
/// requested accuracy was met, and the parsed request.
pub fn render_json(req: &AccountRequest, r: &AccountResult) -> String {
    let fin = |v: f64| -> serde_json::Value {
        if v.is_finite() {
            v.into()
        } else {
            serde_json::Value::Null
        }
    };
    let a = &r.answer;
    // No estimate and no upper end when only the lower end is certified (§2.9).
    let only_lower = r.poisson_claim.is_some();
    let upper = if a.upper == 0.0 && a.ln_upper.is_finite() {
        // Below the least subnormal: that is an upper end on the safe side.
        f64::from_bits(1)
    } else {
        a.upper
    };
    let ln_estimate = if a.estimate >= f64::MIN_POSITIVE {
        a.estimate.ln()
    } else {
        // The estimate is the geometric midpoint (for δ): from the logarithms.
        0.5 * (a.ln_lower + a.ln_upper)
    };
    let (estimate, upper, ln_estimate, ln_upper) = if only_lower {
        (
            serde_json::Value::Null,
            serde_json::Value::Null,
            serde_json::Value::Null,
            serde_json::Value::Null,
        )
    } else {
        (
            fin(a.estimate),
            fin(upper),
            fin(ln_estimate),
            fin(a.ln_upper),
        )
    };
    let request = JsonRequest {
        mechanisms: req
            .mechanisms
            .iter()
            .map(|m| JsonMechanism {
                spec: &m.text,
                kind: m.kind_name(),
                params: params(m),
                sensitivity: m.sensitivity,
                count: m.count,
            })
            .collect(),
        delta: match req.query {
            Query::Delta(d) => Some(d),
            _ => None,
        },
        epsilon: match req.query {
            Query::Epsilon(e) => Some(e),
            _ => None,
        },
        at_fpr: match req.query {
            Query::AtFpr(a) => Some(a),
            _ => None,
        },
        accuracy: req.accuracy,
        schedule: match (&req.schedule, &r.schedule) {
            (Some(s), Some(n)) => Some(serde_json::json!({
                "path": s.path,
                "segments": n.segments,
                "steps": n.steps,
                "distinct": n.distinct,
                "lattice_ratio": n.ratio,
                "upper_lattice_ratio": n.upper_ratio,
                "upper_mixtures": n.mixtures,
                "lower_mixtures": n.lower_mixtures,
                "lower_slack": n.lower_slack,
                "q_rounded": n.q_rounded,
                "gaussian_steps": n.gaussian_steps,
                "rdp_upper": n.rdp.map(|b| b.upper),
                "rdp_order": n.rdp.map(|b| b.order),
                "upper_from": if n.rdp.is_some_and(|b| b.taken) { "rdp" } else { "pld" },
            })),
            _ => None,
        },
    };
    let v = serde_json::json!({
        "quantity": req.quantity(),
        "lower": fin(a.lower),
        "estimate": estimate,
        "upper": upper,
        "seconds": r.seconds,
        "ln_lower": fin(a.ln_lower),
        "ln_estimate": ln_estimate,
        "ln_upper": ln_upper,
        "step": fin(r.answer.step),
        "accuracy_met": r.answer.accuracy_met,
        "work": r.work,
        "max_work": req.max_work,
        "lower_bound_only": r.poisson_claim.is_some(),
        "poisson_claim": r.poisson_claim,
        "request": request,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// An aligned summary for people.
///
/// By hand rather than through `comfy-table` (which lays out `dpw calibrate`'s table):
/// this is a labelled list, not a table: one bracket of three fixed labels whose widths
/// are constant, around free-text lines that no column layout would help.
pub fn render_table(req: &AccountRequest, r: &AccountResult) -> String {
    let [lo, est, hi] = values(req, r);
    let mut out = String::new();
    out.push_str("composition of\n");
    for m in &req.mechanisms {
        out.push_str(&format!("  {}\n", m.text));
    }
    if let (Some(sch), Some(n)) = (&req.schedule, &r.schedule) {
        out.push_str(&format!(
            "  schedule {}: {} segments, {} steps, {} distinct (sigma, q)\n",
            sch.path, n.segments, n.steps, n.distinct
        ));
        if let Some(b) = n.rdp {
            let what = if matches!(req.query, Query::Delta(_)) {
                "epsilon"
            } else {
                "delta"
            };
            out.push_str(&format!(
                "    certified Renyi-DP bound of the composition: {what} <= {:e} (order {}){}\n",
                b.upper,
                b.order,
                if b.taken {
                    ": tighter than the accountant's upper end, so it is the upper end below (docs/accountant.md §8)"
                } else {
                    ""
                }
            ));
        }
        if n.gaussian_steps > 0 {
            out.push_str(&format!(
                "    its {} steps at q = 1 composed as one Gaussian, shift sqrt(sum count/sigma^2) rounded to each side (docs/accountant.md §2.8)\n",
                n.gaussian_steps
            ));
        }
        if let (Some(rho), Some(rho_up)) = (n.ratio, n.upper_ratio) {
            let (qu, ql) = if n.q_rounded {
                (" and q up", " and q down")
            } else {
                ("", "")
            };
            let up = if n.mixtures {
                format!("sigma between the points of (1 + {rho_up:.3e})^k as a revealed mixture of the two{qu}")
            } else {
                format!("sigma down onto (1 + {rho_up:.3e})^k{qu}")
            };
            let low = if n.lower_mixtures {
                format!(
                    "sigma between the points of (1 + {rho:.3e})^k as a dominated mixture of the two{ql} (slack {:.1e} charged)",
                    n.lower_slack
                )
            } else {
                format!("sigma up onto (1 + {rho:.3e})^k{ql}")
            };
            out.push_str(&format!(
                "    rounded (docs/accountant.md §2.8): upper end {up}; lower end {low}\n"
            ));
        }
    }
    let (given, asked) = match req.query {
        Query::Delta(d) => (format!("delta = {d:e}"), "epsilon"),
        Query::Epsilon(e) => (format!("epsilon = {e}"), "delta"),
        Query::AtFpr(a) => (
            format!("false-positive rate {a}"),
            "largest true-positive rate of any membership test",
        ),
    };
    out.push_str(&format!("at {given}, certified {asked}:\n"));
    if r.poisson_claim.is_some() {
        out.push_str(&format!(
            "  lower     {lo}\n  upper     none certified (no tight upper bound is known for \
             shuffled batches)\n"
        ));
    } else {
        out.push_str(&format!(
            "  lower     {lo}\n  estimate  {est}\n  upper     {hi}\n"
        ));
    }
    let a = &r.answer;
    if let Some(claim) = r.poisson_claim {
        out.push_str(&format!(
            "  Poisson sampling at the same rate would claim at most {claim:?} (a bound for \
             Poisson sampling only); {:.3} s\n",
            r.seconds
        ));
        return out;
    }
    let width = match req.query {
        Query::Delta(_) | Query::AtFpr(_) if a.upper > 0.0 => (a.upper - a.lower) / a.upper,
        Query::Epsilon(_) => -(a.ln_lower - a.ln_upper).exp_m1(),
        _ => 0.0,
    };
    let why = if a.accuracy_met {
        ""
    } else if r.budget_hit {
        " (the requested accuracy was not reached within the work budget, --max-work: the bracket is still certified)"
    } else if r
        .schedule
        .is_some_and(|n| n.ratio.is_none() && n.distinct > MAX_EXACT_LAWS)
    {
        " (the requested accuracy was not reached: a schedule composed exactly past 384 distinct laws is asked for no finer than 1e-3, docs/accountant.md §2.8; the bracket is still certified)"
    } else if r.schedule.is_some_and(|n| n.ratio.is_some()) {
        " (the requested accuracy was not reached: the schedule's rounding onto its lattices sets the width, docs/accountant.md §2.8; the bracket is still certified)"
    } else if composition::accountant::input::spec::has_dominated_laws(&req.mechanisms) {
        " (the requested accuracy was not reached: the width holds the gap between the dominating pair that certifies the upper end and the dominated one that certifies the lower, which no finer grid closes; fixed-size batches under replace-one: docs/accountant.md §2.7, Adaptive order; balls-in-bins: §2.10)"
    } else {
        " (the requested accuracy was not reached: a finer grid no longer narrowed the bracket, or would exceed the bin budget; the bracket is still certified)"
    };
    let step = if a.step.is_finite() {
        format!("; grid step {:.3e}", a.step)
    } else {
        String::new()
    };
    out.push_str(&format!(
        "  relative width {width:.2e}{why}{step}; {:.3} s\n",
        r.seconds
    ));
    out
}
