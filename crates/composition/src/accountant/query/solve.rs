//! The inverse question, certified: which value of one parameter of a composition meets a
//! privacy target (docs/accountant.md §10).
//!
//! A composition in the SPEC language ([`MechanismSpec`]) with exactly one value written
//! `?` (e.g. `subsampled-gaussian:sigma=?,q=0.01,count=10000`) is a family of
//! compositions, one per value of the unknown. Every key the solver accepts moves the
//! privacy loss one way: a larger `sigma`, `scale` or `radius` is post-processing of the
//! smaller one's output plus independent noise, so it leaks less at every ε; a larger
//! `epsilon` (rr, truncated Laplacian), `q`, `count` or `sensitivity` leaks more (§10.1).
//! With the accountant's certified bracket at each value, a value is certified to *meet*
//! the targets when every target holds on the bracket's unsafe end, and certified to
//! *fail* when some target is violated by the bracket's safe end. The solver returns one of
//! each, `|meets/fails − 1| ≤ accuracy` (for `count`, `fails = meets + 1` where the
//! bracket can separate them).
//!
//! The search works in `x = ln v`: Newton steps on the margin (the log of the binding
//! target's ratio, at the bracket's midpoint) with a slope learnt from the evaluations,
//! then, with both ends known, the end farther from the root estimate is moved to just
//! past it, evaluated at an accuracy matched to that distance (the radius search of §7,
//! generalised). `DPW_SOLVE_TRACE=1` prints each evaluation to stderr (a debugging aid;
//! no answer depends on it).

use crate::accountant::core::work::Work;
use crate::accountant::input::spec::{has_dominated_laws, MechanismSpec};
use crate::accountant::query::composition::Composition;
use crate::accountant::query::target::{SolveError, Target, Template};
use crate::error::CompositionError;
use densities::outward;

/// Default relative accuracy of a solution, `|meets/fails − 1|`.
pub const DEFAULT_ACCURACY: f64 = 1e-4;

/// Most accountant evaluations of one search.
const MAX_EVALUATIONS: usize = 60;

/// The finest accuracy asked of one accountant evaluation: below about 4e-7 its error
/// terms stop the bracket narrowing (a Gaussian at δ = 1e-5 spent 40 s at 1e-7 without
/// getting there).
const MIN_EVAL_ACCURACY: f64 = 1e-6;

/// The accuracy of the first, locating evaluations.
const COARSE_ACCURACY: f64 = 0.01;

/// A certified solution.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// The unknown's key.
    pub parameter: String,
    /// A value certified to meet every target (when no value in range is,
    /// [`Solver::solve`] returns an error instead).
    pub meets: f64,
    /// A value certified to fail some target; `None` when every value in the unknown's
    /// range meets them (e.g. `q = 1`).
    pub fails: Option<f64>,
    /// Accountant evaluations made.
    pub evaluations: usize,
    /// Whether `|meets/fails − 1| ≤ accuracy` (for count: `fails = meets + 1`).
    pub accuracy_met: bool,
    /// Whether the two values come from different pairs (a dominating one for `meets`, a
    /// dominated one for `fails`: balls-in-bins epochs, fixed-size batches under
    /// replace-one), whose own gap no finer grid closes.
    pub pairs_gap: bool,
}

/// The search for the value of one unknown that meets a list of targets.
#[derive(Debug, Clone)]
pub struct Solver {
    template: Template,
    targets: Vec<Target>,
    accuracy: f64,
    work: Work,
    start: Option<f64>,
    side: Side,
}

/// Which laws a search composes (docs/accountant.md §10.3): both ends of the mechanisms'
/// bracket, or, where some spec has dominated laws of its own, one search for the meeting
/// value on the dominating laws and one for the failing value on the dominated laws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Both,
    Dominating,
    Dominated,
}

/// Where one evaluation stands against the targets.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Status {
    Meets,
    Fails,
    Undecided,
}

/// One evaluation: status, the margin `m` (log of the binding target's ratio at the
/// bracket's midpoint; positive on the failing side) and its half-width.
#[derive(Debug, Clone, Copy)]
struct Eval {
    status: Status,
    margin: f64,
    half: f64,
    /// The accountant reached the accuracy it was asked for.
    met: bool,
    /// The grid step of the binding target's bracket (NaN where it has none).
    step: f64,
}

impl Solver {
    /// A search for `template`'s unknown under `targets` (at least one; all must hold).
    pub fn new(template: Template, targets: Vec<Target>) -> Result<Self, SolveError> {
        if targets.is_empty() {
            return Err(SolveError::Input(
                "no target: give epsilon and delta, or max-tpr and at-fpr".into(),
            ));
        }
        for t in &targets {
            t.check()?;
        }
        Ok(Self {
            template,
            targets,
            accuracy: DEFAULT_ACCURACY,
            work: Work::default(),
            start: None,
            side: Side::Both,
        })
    }

    /// The same search with relative accuracy `|meets/fails − 1| ≤ accuracy`, in
    /// `[1e-5, 0.5]` (the accountant resolves ε to about 1e-6 relative at best — its error
    /// terms' floor — and a parameter to 1e-5 needs ε to a few 1e-6).
    pub fn with_accuracy(mut self, accuracy: f64) -> Result<Self, SolveError> {
        if !(1e-5..=0.5).contains(&accuracy) {
            return Err(SolveError::Input(format!(
                "accuracy = {accuracy} is outside the allowed range [1e-5, 0.5]"
            )));
        }
        self.accuracy = accuracy;
        Ok(self)
    }

    /// The same search charging every evaluation to `work` (its budget ends the search,
    /// its cancellation interrupts it).
    pub fn with_work(mut self, work: Work) -> Self {
        self.work = work;
        self
    }

    /// The same search started at `v` (a guess of the answer, e.g. a closed-form or
    /// certified bound; clamped into the unknown's range). Without it the search starts at
    /// a value typical of the key (σ = 1, q = 0.01, count = 100, radius = 100, …).
    pub fn with_start(mut self, v: f64) -> Self {
        self.start = (v.is_finite() && v > 0.0).then_some(v);
        self
    }

    /// The template.
    pub fn template(&self) -> &Template {
        &self.template
    }

    /// The targets.
    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    /// One certified evaluation at `v` with the accountant's accuracy `acc`; with `settle`,
    /// refined only until it settles the targets (or to `acc`).
    fn evaluate(&self, v: f64, acc: f64, settle: bool) -> Result<Eval, SolveError> {
        let specs = self.template.instantiate(v)?;
        self.evaluate_specs(&specs, acc, v, settle)
    }

    /// The composition of `specs`, charging the search's work, at accuracy `acc`.
    fn composition(&self, specs: &[MechanismSpec], acc: f64) -> Result<Composition, SolveError> {
        // Built with the meter watching (as `dpw account` builds its own): a cancellation
        // stops a long construction (a balls-in-bins epoch's laws, seconds), which counts
        // no work.
        self.work
            .watching(|| match self.side {
                Side::Both => Composition::of(specs),
                Side::Dominating => Composition::dominating(specs),
                Side::Dominated => Composition::dominated(specs),
            })
            .map_err(|e| {
                if self.work.cancelled() {
                    SolveError::Interrupted
                } else {
                    SolveError::Input(e.0)
                }
            })?
            .with_work(self.work.clone())
            .with_accuracy(acc)
            .map_err(|e| SolveError::Input(e.to_string()))
    }

    /// One certified evaluation of `specs` (the unknown at `v`, for messages).
    fn evaluate_specs(
        &self,
        specs: &[MechanismSpec],
        acc: f64,
        v: f64,
        settle: bool,
    ) -> Result<Eval, SolveError> {
        if self.work.cancelled() {
            return Err(SolveError::Interrupted);
        }
        let comp = self.composition(specs, acc.clamp(MIN_EVAL_ACCURACY, 0.5))?;
        let mut all = Eval {
            status: Status::Meets,
            margin: f64::NEG_INFINITY,
            half: 0.0,
            met: true,
            step: f64::NAN,
        };
        for t in &self.targets {
            let e = match *t {
                // ε = 0: the margin is δ(0) against δ (ε's ratio to 0 has no log).
                Target::Privacy {
                    epsilon: 0.0,
                    delta,
                } => match comp.delta(0.0) {
                    Ok(a) => {
                        let status = if a.upper <= delta {
                            Status::Meets
                        } else if a.lower > delta {
                            Status::Fails
                        } else {
                            Status::Undecided
                        };
                        let (ml, mu) = (a.ln_lower - delta.ln(), a.ln_upper - delta.ln());
                        Eval {
                            status,
                            margin: 0.5 * (ml + mu),
                            half: 0.5 * (mu - ml),
                            met: a.accuracy_met,
                            step: a.step,
                        }
                    }
                    Err(e) => return Err(self.accountant_error(e, v)),
                },
                Target::Privacy { epsilon, delta } => match if settle {
                    comp.epsilon_settling(delta, epsilon)
                } else {
                    comp.epsilon(delta)
                } {
                    Ok(a) => {
                        let status = if a.upper <= epsilon {
                            Status::Meets
                        } else if a.lower > epsilon {
                            Status::Fails
                        } else {
                            Status::Undecided
                        };
                        let (ml, mu) = ((a.lower / epsilon).ln(), (a.upper / epsilon).ln());
                        Eval {
                            status,
                            margin: 0.5 * (ml + mu),
                            half: 0.5 * (mu - ml),
                            met: a.accuracy_met,
                            step: a.step,
                        }
                    }
                    // δ below the mass of the infinite loss: ε = ∞ at this value.
                    Err(CompositionError::Unreachable { .. }) => Eval {
                        status: Status::Fails,
                        margin: f64::INFINITY,
                        half: 0.0,
                        met: true,
                        step: f64::NAN,
                    },
                    Err(e) => return Err(self.accountant_error(e, v)),
                },
                Target::AttackRisk { max_tpr, at_fpr } => {
                    let p = comp
                        .tradeoff(&[at_fpr])
                        .map_err(|e| self.accountant_error(e, v))?[0];
                    // Meets: β ≥ 1 − TPR on the lower end, with 1 − TPR rounded up.
                    let (need_lo, need_hi) = outward::sub_bounds(1.0, max_tpr);
                    let status = if p.lower >= need_hi {
                        Status::Meets
                    } else if p.upper < need_lo {
                        Status::Fails
                    } else {
                        Status::Undecided
                    };
                    // Margin on the power above the trivial test's: ln((1 − β − α)/(TPR − α)).
                    let ex = |beta: f64| ((1.0 - beta - at_fpr).max(0.0) / (max_tpr - at_fpr)).ln();
                    let (ml, mu) = (ex(p.upper), ex(p.lower));
                    Eval {
                        status,
                        margin: 0.5 * (ml + mu),
                        half: 0.5 * (mu - ml),
                        met: p.upper - p.lower <= acc * (1.0 - p.lower).max(1e-300),
                        step: f64::NAN,
                    }
                }
            };
            all.status = match (all.status, e.status) {
                (Status::Fails, _) | (_, Status::Fails) => Status::Fails,
                (Status::Undecided, _) | (_, Status::Undecided) => Status::Undecided,
                _ => Status::Meets,
            };
            if e.margin > all.margin || (e.margin.is_nan() && !all.margin.is_nan()) {
                all.margin = e.margin;
                all.half = e.half;
                all.step = e.step;
            }
            all.met &= e.met;
        }
        Ok(all)
    }

    /// The closing pair (docs/accountant.md §10.3): the upper end of ε(δ) at `vm` and the
    /// lower end at `vf`, each on the grid step `step`, side by side on two threads (one
    /// end each: together about the cost of one two-sided evaluation). Whether each is
    /// certified on its side of `epsilon` (`vm` meets, `vf` fails; a value not given is
    /// not); `None` where one end cannot tell (the caller goes on with two-sided
    /// evaluations).
    fn pair(
        &self,
        vm: Option<f64>,
        vf: Option<f64>,
        step: f64,
        epsilon: f64,
        delta: f64,
    ) -> Result<Option<(bool, bool)>, SolveError> {
        if self.work.cancelled() {
            return Err(SolveError::Interrupted);
        }
        let end = |v: Option<f64>, upper: bool| -> Result<Option<bool>, SolveError> {
            let Some(v) = v else {
                return Ok(Some(false));
            };
            let comp = self.composition(&self.template.instantiate(v)?, MIN_EVAL_ACCURACY)?;
            match comp.settles_at_step(delta, epsilon, step, upper) {
                Ok(r) => Ok(r),
                Err(CompositionError::Interrupted) => Err(SolveError::Interrupted),
                // Not evaluable on this step: the two-sided route will say why.
                Err(_) => Ok(None),
            }
        };
        let (m, f) = crate::accountant::core::pool::join(|| end(vm, true), || end(vf, false));
        Ok(match (m?, f?) {
            (Some(a), Some(b)) => Some((a, b)),
            _ => None,
        })
    }

    fn accountant_error(&self, e: CompositionError, v: f64) -> SolveError {
        match e {
            CompositionError::Interrupted => SolveError::Interrupted,
            other => SolveError::Unresolved(format!(
                "the accountant could not evaluate {} = {} ({other})",
                self.template.key,
                self.template.text(v)
            )),
        }
    }

    /// Whether the mechanisms without the unknown already fail a target: composing more
    /// cannot lower δ(ε) (nor raise the trade-off curve), so then no value meets it.
    fn others_fail(&self) -> Result<bool, SolveError> {
        let specs = self.template.specs();
        if specs.len() < 2 || self.work.cancelled() {
            return Ok(false);
        }
        let others: Vec<MechanismSpec> = specs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != self.template.index)
            .map(|(_, t)| t.parse::<MechanismSpec>())
            .collect::<Result<_, _>>()
            .map_err(|e| SolveError::Input(e.0))?;
        let fixed = Self {
            template: self.template.clone(),
            targets: self.targets.clone(),
            accuracy: self.accuracy,
            work: self.work.clone(),
            start: None,
            side: self.side,
        };
        match fixed.evaluate_specs(&others, COARSE_ACCURACY, 1.0, true) {
            Ok(e) => Ok(e.status == Status::Fails),
            Err(SolveError::Interrupted) => Err(SolveError::Interrupted),
            // Not evaluable alone: the search will say what it finds.
            Err(_) => Ok(false),
        }
    }

    /// Where and on which grid step the closing pair asks (docs/accountant.md §10.3):
    /// `(meets candidate, fails candidate, step)` in ln of the unknown, each candidate
    /// `0.49·tol` from the root estimate `r` (uncertainty `u`, slope `k`, `d` the meeting
    /// side's sign); a candidate is left out when the end already found there is nearer
    /// the root. The step is the last evaluation's, scaled by the square root of the
    /// margin each end must resolve over the width it reached when that is finer (the
    /// bracket narrows like the step squared), linearly and at most 2× when coarser,
    /// with a fifth to spare. `None` when the root is not known well enough for both
    /// ends to be decided.
    #[allow(clippy::too_many_arguments)]
    fn pair_plan(
        &self,
        r: f64,
        u: f64,
        k: f64,
        d: f64,
        tol: f64,
        last: Eval,
        x_m: Option<f64>,
        x_f: Option<f64>,
        snap: &dyn Fn(f64, bool) -> f64,
    ) -> Option<(Option<f64>, Option<f64>, f64)> {
        if !(u <= 0.3 * tol && last.step.is_finite() && last.step > 0.0 && last.half > 0.0) {
            return None;
        }
        let half_tol = 0.49 * tol;
        // An end already within reach of the root stays; the other goes 0.98·tol from it.
        let (cm, cf) = match (x_m, x_f) {
            (Some(m), _) if d * (m - r) > 0.0 && d * (m - r) <= half_tol => {
                (None, Some(snap(m - d * 0.98 * tol, d < 0.0)))
            }
            (_, Some(f)) if d * (r - f) > 0.0 && d * (r - f) <= half_tol => {
                (Some(snap(f + d * 0.98 * tol, d > 0.0)), None)
            }
            _ => (
                Some(snap(r + d * half_tol, d > 0.0)),
                Some(snap(r - d * half_tol, d < 0.0)),
            ),
        };
        // The margin each end must resolve, in ln ε.
        let need = |c: Option<f64>, side: f64| -> f64 {
            c.map_or(f64::INFINITY, |c| k.abs() * (side * d * (c - r) - u))
        };
        let e = need(cm, 1.0).min(need(cf, -1.0));
        if !(e > 0.0 && e.is_finite()) {
            return None;
        }
        // Finer: the bracket narrows like the step squared. Coarser: only like the step
        // itself is assumed (a few uses narrow less regularly), and at most 2×.
        let ratio = 0.8 * e / (2.0 * last.half);
        let scale = if ratio >= 1.0 {
            ratio.min(2.0)
        } else {
            ratio.sqrt().max(0.25)
        };
        Some((cm, cf, last.step * scale))
    }

    /// The certified pair (docs/accountant.md §10), found within the work budget: the
    /// work done never passes it (an evaluation predicted not to fit is not begun, and
    /// one that went past its prediction makes the search an error that says so).
    pub fn solve(&self) -> Result<Solution, SolveError> {
        let s = self.search_sides()?;
        match self.work.budget() {
            Some(b) if self.work.done() > b => Err(SolveError::Unsettled(format!(
                "the search used {:.3e} bins transformed, past the work budget of {:.3e} \
                 (an evaluation once begun is finished, its bracket being certified only \
                 whole); raise the budget to at least {:.1e}",
                self.work.done() as f64,
                b as f64,
                self.work.done() as f64
            ))),
            _ => Ok(s),
        }
    }

    /// [`Self::search`], once on each side where some spec has dominated laws of its own
    /// (docs/accountant.md §10.3): the two pairs' gap (fixed-size batches under
    /// replace-one: up to a fifth of ε) would leave every value near the root undecided,
    /// and a search over both ends asked ever finer brackets there (60 evaluations, two
    /// minutes, for a σ that two one-sided searches find in a second). The meeting value
    /// is the dominating laws' search's, certified by their upper ends; the failing value
    /// the dominated laws', certified by their lower ends; each search's other end bounds
    /// only its own laws and is dropped.
    fn search_sides(&self) -> Result<Solution, SolveError> {
        // The pipeline decides, whatever the unknown's value: any value in range that
        // instantiates will tell.
        let (lo, hi) = self.template.domain()?;
        let two = [lo, (lo * hi).sqrt(), hi]
            .iter()
            .find_map(|&v| self.template.instantiate(v).ok())
            .is_some_and(|specs| has_dominated_laws(&specs));
        if self.side != Side::Both || !two {
            return self.search();
        }
        let on = |side: Side| Self {
            side,
            ..self.clone()
        };
        let up = on(Side::Dominating).search()?;
        let down = on(Side::Dominated).search()?;
        let fails = down.fails;
        let accuracy_met = match fails {
            None => true,
            Some(f) if self.template.integer() => (up.meets - f).abs() <= 1.0,
            Some(f) => (up.meets / f - 1.0).abs() <= self.accuracy,
        };
        Ok(Solution {
            parameter: up.parameter,
            meets: up.meets,
            fails,
            evaluations: up.evaluations + down.evaluations,
            accuracy_met,
            pairs_gap: true,
        })
    }

    /// [`Self::solve`]'s search.
    fn search(&self) -> Result<Solution, SolveError> {
        let (lo, hi) = self.template.domain()?;
        if self.others_fail()? {
            return Err(SolveError::Unmeetable(format!(
                "no {} meets {}: the other mechanisms alone already fail it (certified)",
                self.template.key,
                self.describe_targets()
            )));
        }
        let integer = self.template.integer();
        // d = +1: the meeting side is the larger x.
        let d = if self.template.larger_is_safer() {
            1.0
        } else {
            -1.0
        };
        let (x_lo, x_hi) = (lo.ln(), hi.ln());
        let snap = |x: f64, up: bool| -> f64 {
            let x = x.clamp(x_lo, x_hi);
            if integer {
                let n = x.exp();
                let n = if up { n.ceil() } else { n.floor() };
                n.clamp(lo, hi).ln()
            } else {
                x
            }
        };
        let value = |x: f64| -> f64 {
            if integer {
                x.exp().round()
            } else {
                x.exp().clamp(lo, hi)
            }
        };
        // Slope of the margin in x: ε ∝ σ^{-1}, ∝ count^{1/2}, ∝ q, ... to start.
        let mut k = -d * if integer { 0.5 } else { 1.0 };
        let tol = self.accuracy.ln_1p();
        let start: f64 = self.start.unwrap_or(match self.template.key.as_str() {
            "count" => 100.0,
            "q" => 0.01,
            "radius" => 100.0,
            _ => 1.0,
        });
        let mut x = snap(start.clamp(lo, hi).ln(), false);
        let mut acc = COARSE_ACCURACY.max(self.accuracy.min(0.5));
        // Best certified ends so far (in x), and the evaluations with their accuracies.
        let (mut x_m, mut x_f): (Option<f64>, Option<f64>) = (None, None);
        let mut pts: Vec<(f64, Eval)> = Vec::new();
        // The root estimate with the smallest uncertainty, (root, uncertainty).
        let mut best: Option<(f64, f64)> = None;
        let mut evaluations = 0;
        let mut failures = 0;
        // Whether the next evaluation is one that closes the gap if it lands on its
        // expected side: it then only needs to settle the targets.
        let mut settle = false;
        let gap_done = |m: f64, f: f64| -> bool {
            if integer {
                (value(m) - value(f)).abs() <= 1.0
            } else {
                (m - f).abs() <= tol
            }
        };
        // The closing pair needs one (ε, δ) target with ε > 0 and a real unknown; it is
        // tried once the root is known to a third of the tolerance, after each two-sided
        // evaluation, twice at most.
        let pair_target = match self.targets.as_slice() {
            [Target::Privacy { epsilon, delta }] if *epsilon > 0.0 && !integer => {
                Some((*epsilon, *delta))
            }
            _ => None,
        };
        let mut pair_tries = 0;
        let mut fresh = false;
        // The budget is never passed (issue 57): an evaluation once begun is finished (its
        // bracket is certified only whole), so one is begun only when its predicted work
        // fits in what is left. Predicted from the last two-sided evaluation's work and
        // accuracy: a grid narrows its bracket like the step squared, so the work grows
        // like 1/√accuracy (and like 1/step for the closing pair's two ends), twice that
        // to spare. `(work, accuracy)` of the last evaluation.
        let mut last_cost: Option<(f64, f64)> = None;
        let fits = |predicted: f64| -> bool {
            self.work
                .budget()
                .is_none_or(|b| self.work.done() as f64 + predicted <= b as f64)
        };
        loop {
            if let (Some(m), Some(f)) = (x_m, x_f) {
                if gap_done(m, f) {
                    break;
                }
            }
            if evaluations >= MAX_EVALUATIONS || self.work.exhausted() {
                break;
            }
            if let (Some((eps_t, delta_t)), Some((r, u)), Some(&(_, last)), true) =
                (pair_target, best, pts.last(), fresh && pair_tries < 2)
            {
                fresh = false;
                if let Some((vm, vf, step)) = self.pair_plan(r, u, k, d, tol, last, x_m, x_f, &snap)
                {
                    if let Some((cost, _)) = last_cost {
                        let ends = usize::from(vm.is_some()) + usize::from(vf.is_some());
                        if !fits(2.0 * ends as f64 * cost * (last.step / step).max(1.0)) {
                            break;
                        }
                    }
                    pair_tries += 1;
                    let t0 = std::time::Instant::now();
                    let got = self.pair(vm.map(value), vf.map(value), step, eps_t, delta_t)?;
                    evaluations += usize::from(vm.is_some()) + usize::from(vf.is_some());
                    if std::env::var_os("DPW_SOLVE_TRACE").is_some() {
                        eprintln!(
                            "solve: pair {:?} / {:?} at step {step:.3e}: {got:?} {:.3} s, work {}",
                            vm.map(value),
                            vf.map(value),
                            t0.elapsed().as_secs_f64(),
                            self.work.done()
                        );
                    }
                    if let Some((ok_m, ok_f)) = got {
                        if let (true, Some(v)) = (ok_m, vm) {
                            x_m = Some(x_m.map_or(v, |m| if d * (v - m) < 0.0 { v } else { m }));
                        }
                        if let (true, Some(v)) = (ok_f, vf) {
                            x_f = Some(x_f.map_or(v, |f| if d * (v - f) > 0.0 { v } else { f }));
                        }
                        // An end that did not settle: ask it two-sided next, only
                        // which side it is on.
                        let open = match (ok_m, ok_f) {
                            (false, _) if vm.is_some() => vm,
                            (_, false) if vf.is_some() => vf,
                            _ => None,
                        };
                        if let Some(o) = open {
                            x = o;
                            settle = true;
                            acc = acc.min(0.5 * k.abs() * tol).max(MIN_EVAL_ACCURACY);
                        }
                    } else {
                        pair_tries = 2;
                    }
                    continue;
                }
            }
            let v = value(x);
            let used = acc;
            if let Some((cost, at)) = last_cost {
                if !fits(2.0 * cost * (at / acc).sqrt().max(1.0)) {
                    break;
                }
            }
            evaluations += 1;
            let t0 = std::time::Instant::now();
            let before = self.work.done();
            let e = match self.evaluate(v, acc, settle) {
                Ok(e) => {
                    last_cost = Some(((self.work.done() - before) as f64, acc));
                    e
                }
                // An evaluation that would pass the work budget (docs/accountant.md §6.1)
                // stops the search: what stands stands, as when the budget is used up
                // between evaluations.
                Err(SolveError::Unresolved(_)) if self.work.budget_hit() => break,
                // The accountant could not resolve this value (e.g. ε in the hundreds
                // after a long Newton step): back off halfway to the last evaluated value
                // (or towards the safe side), a few times at most.
                Err(SolveError::Unresolved(m)) if failures < 3 => {
                    failures += 1;
                    if std::env::var_os("DPW_SOLVE_TRACE").is_some() {
                        eprintln!("solve: {} = {v:e}: {m}", self.template.key);
                    }
                    let back = match pts.last() {
                        Some(&(xp, _)) => 0.5 * (x + xp),
                        None => x + d * 2f64.ln(),
                    };
                    let nx = snap(back, d > 0.0);
                    if nx == x {
                        return Err(SolveError::Unresolved(m));
                    }
                    x = nx;
                    continue;
                }
                Err(e) => return Err(e),
            };
            if std::env::var_os("DPW_SOLVE_TRACE").is_some() {
                eprintln!(
                    "solve: {} = {v:e} acc {acc:.1e}{}: {:?} margin {:.3e} ± {:.1e} (slope {k:.3}) {:.3} s, work {}",
                    self.template.key, if settle {" settle"} else {""}, e.status, e.margin, e.half, t0.elapsed().as_secs_f64(), self.work.done()
                );
            }
            match e.status {
                Status::Meets => {
                    x_m = Some(x_m.map_or(x, |m: f64| if d * (x - m) < 0.0 { x } else { m }))
                }
                Status::Fails => {
                    x_f = Some(x_f.map_or(x, |f: f64| if d * (x - f) > 0.0 { x } else { f }))
                }
                Status::Undecided => {}
            }
            // Slope from an earlier point far enough apart for the brackets not to blur it.
            if e.margin.is_finite() {
                for &(xp, ep) in pts.iter().rev() {
                    if !ep.margin.is_finite() {
                        continue;
                    }
                    let dx = x - xp;
                    if dx.abs() * k.abs() > 4.0 * (e.half + ep.half) && dx.abs() > 1e-12 {
                        let s = (e.margin - ep.margin) / dx;
                        if s * k > 0.0 {
                            k = s.signum() * s.abs().clamp(0.02, 50.0);
                        }
                        break;
                    }
                }
                // The latest evaluation's root: the nearest to the root, where the
                // linear model errs least.
                // Its uncertainty: the bracket's, plus the curvature the linear model
                // ignores (second order in the distance; the slope of ln ε in ln σ moves
                // by about 1 over a factor e).
                let r = x - e.margin / k;
                best = Some((r, e.half / k.abs() + 0.5 * (x - r).powi(2)));
            }
            pts.push((x, e));
            fresh = true;
            if let (Some(m), Some(f)) = (x_m, x_f) {
                if gap_done(m, f) {
                    break;
                }
            }
            // The root estimate (inside the certified interval when both ends are known).
            let (mut r, u) = match best {
                Some(b) => b,
                None => {
                    // Margin infinite: ε = ∞ or 0 here; move by a factor of 16 (to the
                    // safe side when failing).
                    (x + d * e.margin.signum() * 16f64.ln(), f64::INFINITY)
                }
            };
            if let (Some(m), Some(f)) = (x_m, x_f) {
                let (a, b) = (m.min(f), m.max(f));
                if !(r > a && r < b) {
                    r = 0.5 * (a + b);
                }
            }
            let mut next;
            settle = false;
            match (x_m, x_f) {
                (Some(m), Some(f)) => {
                    // Move the end farther from the root to just past it.
                    let least = if integer {
                        0.45 * (1.0 / value(r)).ln_1p()
                    } else {
                        0.45 * tol
                    };
                    let mut off = least.max(1.5 * u.min((m - f).abs()));
                    if !off.is_finite() {
                        off = 0.25 * (m - f).abs();
                    }
                    let moving_meets = (m - r).abs() >= (f - r).abs();
                    // When the end that stays is near enough, the offset that closes the
                    // gap in this one evaluation (the farthest that does: the cheapest to
                    // decide), if the root's uncertainty allows it: one evaluation fewer
                    // than a candidate at 0.45 of the tolerance that leaves the gap open.
                    if !integer {
                        let stays = if moving_meets { f } else { m };
                        let closing = 0.98 * tol - (stays - r).abs();
                        if closing >= 1.5 * u && closing.is_finite() {
                            off = closing;
                        }
                    }
                    let (cand, other) = if moving_meets {
                        (snap(r + d * off, d > 0.0), m)
                    } else {
                        (snap(r - d * off, d < 0.0), f)
                    };
                    let (a, b) = (m.min(f), m.max(f));
                    next = if cand > a && cand < b && (cand - other).abs() > 0.0 {
                        cand
                    } else {
                        // The prediction falls on or outside an end: bisect.
                        let mid = 0.5 * (a + b);
                        let s = snap(mid, d > 0.0);
                        if s > a && s < b {
                            s
                        } else {
                            snap(mid, d < 0.0)
                        }
                    };
                    // Resolve the margin at this distance from the root.
                    // (For count, off ≥ 0.45/n keeps it coarse enough to part n and n + 1
                    // without asking more.)
                    // With the closing pair ahead, the root needs only a sixth of the
                    // tolerance (the pair then needs it within 0.3): no finer than
                    // `0.3·|slope|·tol`.
                    let reach = if pair_target.is_some() && pair_tries < 2 {
                        off.max(tol)
                    } else {
                        off
                    };
                    acc = (0.3 * k.abs() * reach).clamp(MIN_EVAL_ACCURACY, COARSE_ACCURACY);
                    // An evaluation that closes the gap if it lands on its expected side
                    // is only asked which side it is on: refined until that is settled
                    // (or to `acc`), not to `acc` (§10.3).
                    settle = if moving_meets {
                        gap_done(next, f)
                    } else {
                        gap_done(m, next)
                    };
                }
                (None, _) => {
                    // Aim just inside the meeting side of the root, and move at least
                    // a little that way.
                    let off = if u.is_finite() {
                        1.5 * u + 0.5 * tol
                    } else {
                        0.0
                    };
                    let aim = if d * (r + d * off - x) > 0.0 {
                        r + d * off
                    } else {
                        x + d * (4.0 * tol).max(1.5 * u.min(1.0))
                    };
                    next = snap(aim, d > 0.0);
                    // The first value fails by far (the linear root more than e^9 away):
                    // ask the safe end of the range at once, which either settles that no
                    // value meets the target or brackets the search (a target no value
                    // meets otherwise costs one evaluation a factor e^3 on the way; the
                    // safe end itself can be costly, hence only this far).
                    let safe_edge = if d > 0.0 { x_hi } else { x_lo };
                    if evaluations == 1 && d * (r - x) > 9.0 && x != safe_edge {
                        x = safe_edge;
                        continue;
                    }
                    if next == x {
                        // At the safe end of the range and not met: refine while the
                        // bracket straddles the target, else no value meets it.
                        if e.status == Status::Fails || acc <= MIN_EVAL_ACCURACY {
                            return Err(self.unmeetable(hi, lo, d, &e));
                        }
                    }
                }
                (Some(_), None) => {
                    let off = if u.is_finite() {
                        1.5 * u + 0.5 * tol
                    } else {
                        0.0
                    };
                    let aim = if d * (r - d * off - x) < 0.0 {
                        r - d * off
                    } else {
                        x - d * (4.0 * tol).max(1.5 * u.min(1.0))
                    };
                    next = snap(aim, d < 0.0);
                    if next == x && e.status == Status::Meets {
                        // The unsafe end of the range meets the targets: every value does.
                        return Ok(Solution {
                            parameter: self.template.key.clone(),
                            meets: value(x),
                            fails: None,
                            evaluations,
                            accuracy_met: true,
                            pairs_gap: false,
                        });
                    }
                }
            }
            // Undecided: the root is within the bracket here; ask finer next time. A
            // bracket too wide to give a margin at all (a coarse trade-off curve): ask
            // again here, ten times finer.
            if e.status == Status::Undecided {
                if !(e.margin.is_finite() && e.half.is_finite()) && used > MIN_EVAL_ACCURACY {
                    next = x;
                    acc = (used * 0.1).max(MIN_EVAL_ACCURACY);
                } else {
                    acc = acc.min(used * 0.25).max(MIN_EVAL_ACCURACY);
                }
            }
            // Newton steps are at most a factor e^3 towards the safe side while an end is
            // missing, and e towards the unsafe one (where ε grows fast, and evaluations
            // of ε in the hundreds are costly).
            x = if x_m.is_none() || x_f.is_none() {
                // Half of that for a real unknown: the margin of σ (or a scale) turns
                // convex on the unsafe side (ε grows like e^{1/(2σ²)} at small σ), where
                // a step of e past the root costs a slow evaluation (DP-SGD at ε = 8:
                // σ = 0.37 for a root at 0.58, 0.3 s of a 3 s search).
                let un = if integer { 1.0 } else { 0.5 };
                let (lo_st, hi_st) = if d > 0.0 { (-un, 3.0) } else { (-3.0, un) };
                let st = (next - x).clamp(lo_st, hi_st);
                snap(x + st, st * d > 0.0)
            } else {
                next
            };
        }
        match (x_m, x_f) {
            (Some(m), Some(f)) => Ok(Solution {
                parameter: self.template.key.clone(),
                meets: value(m),
                fails: Some(value(f)),
                evaluations,
                accuracy_met: gap_done(m, f),
                pairs_gap: false,
            }),
            (None, _) => Err(SolveError::Unsettled(format!(
                "no {} was certified to meet {} within the work budget ({} evaluations)",
                self.template.key,
                self.describe_targets(),
                evaluations
            ))),
            (Some(m), None) => Err(SolveError::Unsettled(format!(
                "{} = {} meets {}, but no value was certified to fail it within the work \
                 budget ({} evaluations)",
                self.template.key,
                self.template.text(value(m)),
                self.describe_targets(),
                evaluations
            ))),
        }
    }

    fn describe_targets(&self) -> String {
        self.targets
            .iter()
            .map(Target::describe)
            .collect::<Vec<_>>()
            .join(" and ")
    }

    fn unmeetable(&self, hi: f64, lo: f64, d: f64, e: &Eval) -> SolveError {
        let key = &self.template.key;
        let bound = if d > 0.0 {
            format!("{key} <= {}", self.template.text(hi))
        } else {
            format!("{key} >= {}", self.template.text(lo))
        };
        let why = match e.status {
            Status::Fails => "certified to fail there",
            _ => "not certified either way there",
        };
        SolveError::Unmeetable(format!(
            "no {key} meets {} within {bound} (the composition is {why})",
            self.describe_targets()
        ))
    }
}
