//! `dpw solve`: the inverse question on the command line — which value of the one
//! parameter written `?` meets a privacy target, certified from both sides
//! ([`composition::accountant::query::solve`], docs/accountant.md §10).

use composition::accountant::{Solution, SolveError, Solver, Target, Template, Work};
use serde::Serialize;
use std::time::Instant;

/// Default work budget of `dpw solve` (bins transformed): ten times `dpw account`'s, for
/// the ten or so evaluations of a search.
pub const DEFAULT_MAX_WORK: f64 = 6e9;

/// A validated `dpw solve` request.
#[derive(Debug, Clone)]
pub struct SolveRequest {
    /// The search (template, targets, accuracy).
    pub solver: Solver,
    /// Requested accuracy `|meets/fails − 1|` (`None`: the default 1e-4).
    pub accuracy: Option<f64>,
    /// Work budget in bins transformed.
    pub max_work: f64,
}

/// The answer and what it cost.
#[derive(Debug, Clone)]
pub struct SolveResult {
    /// The certified pair.
    pub solution: Solution,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Work done, in bins transformed.
    pub work: u64,
}

type FlagError = (String, String);

impl SolveRequest {
    /// Validates the flags; errors are (flag, one line saying what is allowed).
    pub fn new(
        specs: &[String],
        epsilon: Option<f64>,
        delta: Option<f64>,
        max_tpr: Option<f64>,
        at_fpr: Option<f64>,
        accuracy: Option<f64>,
    ) -> Result<Self, FlagError> {
        if specs.is_empty() {
            return Err((
                "--mechanism".into(),
                "at least one --mechanism KIND:key=value,... with one value written ? is required"
                    .into(),
            ));
        }
        let template = Template::parse(specs).map_err(|e| ("--mechanism".into(), e.to_string()))?;
        let mut targets = Vec::new();
        match (epsilon, delta) {
            (Some(e), Some(d)) => targets.push(Target::Privacy {
                epsilon: e,
                delta: d,
            }),
            (None, None) => {}
            (Some(_), None) => {
                return Err((
                    "--delta".into(),
                    "--epsilon needs --delta D in (0, 1)".into(),
                ))
            }
            (None, Some(_)) => {
                return Err(("--epsilon".into(), "--delta needs --epsilon E >= 0".into()))
            }
        }
        match (max_tpr, at_fpr) {
            (Some(t), Some(a)) => targets.push(Target::AttackRisk {
                max_tpr: t,
                at_fpr: a,
            }),
            (None, None) => {}
            (Some(_), None) => {
                return Err((
                    "--at-fpr".into(),
                    "--max-tpr needs --at-fpr A in (0, 1)".into(),
                ))
            }
            (None, Some(_)) => {
                return Err((
                    "--max-tpr".into(),
                    "--at-fpr needs --max-tpr T in (A, 1)".into(),
                ))
            }
        }
        if targets.is_empty() {
            return Err((
                "--epsilon/--delta".into(),
                "give a target: --epsilon E --delta D, or --max-tpr T --at-fpr A (or both)".into(),
            ));
        }
        let mut solver = Solver::new(template, targets).map_err(|e| {
            let m = e.to_string();
            let flag = if m.starts_with("epsilon") {
                "--epsilon"
            } else if m.starts_with("delta") {
                "--delta"
            } else if m.starts_with("at-fpr") {
                "--at-fpr"
            } else {
                "--max-tpr"
            };
            (flag.to_string(), m)
        })?;
        if let Some(a) = accuracy {
            solver = solver.with_accuracy(a).map_err(|_| {
                (
                    "--accuracy".into(),
                    format!("must be in [1e-5, 0.5], got {a}"),
                )
            })?;
        }
        // The other values must form a valid composition somewhere in the unknown's range.
        solver
            .template()
            .domain()
            .map_err(|e| ("--mechanism".to_string(), e.to_string()))?;
        Ok(Self {
            solver,
            accuracy,
            max_work: DEFAULT_MAX_WORK,
        })
    }

    /// The same request with another work budget in `[1e6, 1e14]` bins transformed.
    pub fn with_max_work(mut self, max_work: Option<f64>) -> Result<Self, FlagError> {
        if let Some(w) = max_work {
            if !(1e6..=1e14).contains(&w) {
                return Err((
                    "--max-work".into(),
                    format!("must be in [1e6, 1e14] bins transformed, got {w}"),
                ));
            }
            self.max_work = w;
        }
        Ok(self)
    }

    /// Runs the search; an error is one line (`key: message` with the flag it concerns).
    pub fn run(&self) -> Result<SolveResult, FlagError> {
        self.run_on(&Work::new(Some(self.max_work as u64)))
    }

    /// As [`Self::run`], charging `work`.
    pub fn run_on(&self, work: &Work) -> Result<SolveResult, FlagError> {
        let start = Instant::now();
        let solution = self
            .solver
            .clone()
            .with_work(work.clone())
            .solve()
            .map_err(|e| match e {
                SolveError::Input(m) => ("--mechanism".to_string(), m),
                SolveError::Unmeetable(m) => ("target".to_string(), m),
                SolveError::Unsettled(m) => ("--max-work".to_string(), m),
                SolveError::Unresolved(m) => ("--mechanism".to_string(), m),
                SolveError::Interrupted => ("solve".to_string(), "interrupted".to_string()),
            })?;
        Ok(SolveResult {
            solution,
            seconds: start.elapsed().as_secs_f64(),
            work: work.done(),
        })
    }

    /// The targets in one line (no commas: a CSV field).
    pub fn target_text(&self) -> String {
        self.solver
            .targets()
            .iter()
            .map(|t| match *t {
                Target::Privacy { epsilon, delta } => format!("epsilon<={epsilon} delta={delta:e}"),
                Target::AttackRisk { max_tpr, at_fpr } => {
                    format!("tpr<={max_tpr} at fpr={at_fpr}")
                }
            })
            .collect::<Vec<_>>()
            .join(" and ")
    }
}

fn num(v: f64, integer: bool) -> String {
    if integer {
        format!("{}", v as u64)
    } else {
        format!("{v:?}")
    }
}

/// CSV: header `parameter,meets,fails,target,seconds` and one row (`fails` empty when
/// every value in range meets the target).
pub fn render_csv(req: &SolveRequest, r: &SolveResult) -> String {
    let s = &r.solution;
    let int = req.solver.template().integer();
    format!(
        "parameter,meets,fails,target,seconds\n{},{},{},{},{:?}\n",
        s.parameter,
        num(s.meets, int),
        s.fails.map(|f| num(f, int)).unwrap_or_default(),
        req.target_text(),
        r.seconds
    )
}

#[derive(Serialize)]
struct JsonTarget {
    #[serde(skip_serializing_if = "Option::is_none")]
    epsilon: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tpr: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    at_fpr: Option<f64>,
}

/// JSON: the CSV's fields, evaluations, whether the accuracy was met, work, and the
/// parsed request (mechanisms with the `?`, unknown, targets, accuracy).
pub fn render_json(req: &SolveRequest, r: &SolveResult) -> String {
    let s = &r.solution;
    let t = req.solver.template();
    let targets: Vec<JsonTarget> = req
        .solver
        .targets()
        .iter()
        .map(|t| match *t {
            Target::Privacy { epsilon, delta } => JsonTarget {
                epsilon: Some(epsilon),
                delta: Some(delta),
                max_tpr: None,
                at_fpr: None,
            },
            Target::AttackRisk { max_tpr, at_fpr } => JsonTarget {
                epsilon: None,
                delta: None,
                max_tpr: Some(max_tpr),
                at_fpr: Some(at_fpr),
            },
        })
        .collect();
    let v = serde_json::json!({
        "parameter": s.parameter,
        "meets": s.meets,
        "fails": s.fails,
        "target": req.target_text(),
        "seconds": r.seconds,
        "evaluations": s.evaluations,
        "accuracy_met": s.accuracy_met,
        "work": r.work,
        "max_work": req.max_work,
        "request": {
            "mechanisms": t.specs(),
            "unknown": {"kind": t.kind(), "key": t.key()},
            "targets": targets,
            "accuracy": req.accuracy,
        },
    });
    let mut out = serde_json::to_string_pretty(&v).unwrap_or_default();
    out.push('\n');
    out
}

/// For people: which value to use and why.
pub fn render_table(req: &SolveRequest, r: &SolveResult) -> String {
    let s = &r.solution;
    let t = req.solver.template();
    let int = t.integer();
    let key = &s.parameter;
    let mut out = String::new();
    out.push_str("composition of\n");
    for m in t.specs() {
        out.push_str(&format!("  {m}\n"));
    }
    let targets: Vec<String> = req.solver.targets().iter().map(|t| t.describe()).collect();
    out.push_str(&format!("target: {}\n", targets.join(" and ")));
    let meets = num(s.meets, int);
    out.push_str(&format!("use {key} = {meets}\n"));
    let verb = if t.larger_is_safer() {
        "or larger"
    } else {
        "or smaller"
    };
    out.push_str(&format!(
        "  {key} = {meets} ({verb}) is certified to meet the target: the accountant's \
         certified upper bound holds it\n"
    ));
    match s.fails {
        Some(f) => {
            let f = num(f, int);
            out.push_str(&format!(
                "  {key} = {f} is certified to fail it: the certified lower bound breaks it\n"
            ));
            let gap = if int && s.accuracy_met {
                "exact: no integer lies between them".to_string()
            } else {
                format!(
                    "the exact threshold lies between them (relative gap {:.1e})",
                    (s.meets / s.fails.unwrap_or(s.meets) - 1.0).abs()
                )
            };
            out.push_str(&format!("  {gap}\n"));
        }
        None => out.push_str(&format!(
            "  every {key} in the range the mechanism accepts meets the target\n"
        )),
    }
    if !s.accuracy_met && s.pairs_gap {
        out.push_str(
            "  (the gap holds that between the composition of a dominating pair, which \
             certifies the first value, and of a dominated one, which certifies the second: \
             no finer grid closes it; docs/accountant.md §2.7, §2.10, §2.14, §2.15)\n",
        );
    } else if !s.accuracy_met {
        out.push_str(
            "  (the accuracy asked was not reached within the work budget, --max-work, or the \
             evaluation limit: both values above are still certified)\n",
        );
    }
    out.push_str(&format!(
        "  {} accountant evaluations; {:.3} s\n",
        s.evaluations, r.seconds
    ));
    out
}
