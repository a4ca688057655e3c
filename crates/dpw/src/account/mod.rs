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

pub mod events;
mod render;
pub use render::{render_csv, render_json, render_table};

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

/// The SPECs of a dp_accounting event tree in a JSON file of at most
/// [`MAX_SCHEDULE_BYTES`] (docs/from_dp_accounting.md), under `relation`. An error is one
/// line: the file, then what is wrong where in the tree.
pub fn read_event_specs(path: &std::path::Path, relation: &str) -> Result<Vec<String>, String> {
    let shown = crate::error::excerpt(&path.display().to_string());
    let text = read_bounded_text(path, "an event file may hold")?;
    events::specs_from_json(&text, relation).map_err(|e| match e.strip_prefix("neighbours: ") {
        Some(m) => format!("--neighbours: {m}"),
        None => format!("'{shown}': {e}"),
    })
}

/// The UTF-8 text of a file of at most [`MAX_SCHEDULE_BYTES`] (`most` says what holds it
/// in the error), or a one-line error naming the file.
fn read_bounded_text(path: &std::path::Path, most: &str) -> Result<String, String> {
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
            "'{shown}' holds more than {} MiB, the most {most}",
            MAX_SCHEDULE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "'{shown}' is not UTF-8 text (byte {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The text of a schedule file of at most [`MAX_SCHEDULE_BYTES`], its lines ended by LF,
/// CRLF or a CR alone (all read as line ends). An error is one line: the file, what is
/// wrong and what is allowed.
pub fn read_schedule_text(path: &std::path::Path) -> Result<String, String> {
    let text = read_bounded_text(
        path,
        "a schedule file may hold (about a million rows); merge the rows of equal sigma and q",
    )?;
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
