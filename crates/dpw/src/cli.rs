//! Command-line interface: `dpw run`, `dpw check`, `dpw list`, `dpw calibrate`,
//! `dpw account`, `dpw solve`.

use crate::account::{self, AccountRequest};
use crate::calibrate::{calibrate, render, Format, Request};
use crate::check::{compare, largest_deviation};
use crate::error::DpwError;
use crate::manifest::{discover, load_all, load_all_with, Manifest};
use crate::output::{write_table, FigurePaths};
use crate::run::{compute, run_all};
use crate::solve::{self, SolveRequest};
use crate::table::Table;
use clap::{Parser, Subcommand};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Differential-privacy workbench: regenerates the figures of five DP papers from TOML
/// manifests and checks the numbers against the checked-in CSVs.
#[derive(Debug, Parser)]
#[command(name = "dpw", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compute figures: writes DIR/data/ID.csv, DIR/figures/ID.svg and .png.
    Run {
        /// Manifests (experiments/ID.toml).
        #[arg(required = true)]
        manifests: Vec<PathBuf>,
        /// Output directory (required with --set, so that the checked-in outputs stay).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override a manifest value: KEY=VALUE with the key path of error messages,
        /// e.g. `params.panels[0].epsilon=0.5` (repeatable; validated like the file).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Run-time budget of one figure in seconds (default 60): a manifest whose
        /// estimated run time exceeds it is refused before computing.
        #[arg(long, value_name = "SECONDS")]
        budget: Option<f64>,
    },
    /// Recompute figures and compare them with the checked-in data/ID.csv.
    Check {
        /// Manifests to check (default: every experiments/*.toml).
        manifests: Vec<PathBuf>,
        /// Override a manifest value (as for run); needs --against.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// The CSV to compare with instead of the checked-in one (one manifest only).
        #[arg(long, value_name = "CSV")]
        against: Option<PathBuf>,
        /// Run-time budget of one figure in seconds (default 60), as for run (the
        /// extended figures under experiments/extended/ need more).
        #[arg(long, value_name = "SECONDS")]
        budget: Option<f64>,
        /// Pass only if each recomputed CSV is byte-identical to the checked-in one (on
        /// the reference platform, where the data were generated: CI's `.ci/reproduce`).
        #[arg(long)]
        exact: bool,
    },
    /// Print the catalog of figures (id, paper, paper figure, title).
    List,
    /// The privacy-loss accountant: a certified bracket of ε(δ) (with --delta), δ(ε)
    /// (with --epsilon) or of the largest membership-attack TPR at a false-positive rate
    /// (with --at-fpr) for a composition of mechanisms.
    ///
    /// SPEC = KIND:key=value[,key=value...]: gaussian:sigma=S, laplace:scale=B,
    /// rr:epsilon=E, truncated-laplace:epsilon=E,delta=D,
    /// bounded:family=power,alpha=A,radius=R (or family=exp),
    /// subsampled-gaussian:sigma=S,q=Q, subsampled-laplace:scale=B,q=Q (Poisson sampling,
    /// add/remove neighbours, the worse direction), discrete-laplace:scale=B,
    /// discrete-gaussian:sigma=S (integer sensitivity), approx-dp:epsilon=E,delta=D (any
    /// (ε, δ)-DP black box), the selection mechanisms exponential:epsilon=E,
    /// permute-and-flip:epsilon=E and report-noisy-max:epsilon=E,noise=gumbel|exponential|laplace
    /// (a bracket from a dominating bound to a two-candidate instance),
    /// gaussian-mixture:sigma=S,shifts=0;1,probs=0.9;0.1 (a random sensitivity); every kind
    /// with a sensitivity takes sensitivity=S (default 1), and every kind count=K (default
    /// 1, up to 1e10). Pipelines: the subsampled kinds
    /// take neighbours=add-remove|replace-one, sampling=poisson|fixed with batch=B,n=N
    /// (fixed-size batches; for Poisson batch,n may replace q = B/N), and group=G
    /// (protect G examples together; also on gaussian, laplace, bounded);
    /// sampling=allocation,steps=T (balls-in-bins, count = epochs) a certified bracket;
    /// sampling=shuffle,batch=B,n=N (count = epochs) reports a certified lower bound only,
    /// beside what Poisson sampling would claim.
    Account {
        /// A mechanism (repeat the flag to compose several).
        #[arg(long = "mechanism", value_name = "SPEC")]
        mechanisms: Vec<String>,
        /// A schedule: a CSV with the header sigma,q,count and one segment of
        /// Poisson-subsampled Gaussian steps a row (noise multiplier, rate, steps),
        /// composed after the mechanisms. Many distinct (sigma, q) are rounded onto a fine
        /// lattice, each end on its safe side (docs/accountant.md §2.8).
        #[arg(long, value_name = "FILE")]
        schedule: Option<String>,
        /// A dp_accounting DpEvent tree as JSON (each node {"type": "GaussianDpEvent",
        /// "noise_multiplier": 1.0}, children under "event" or "events";
        /// docs/from_dp_accounting.md), composed with the mechanisms.
        #[arg(long, value_name = "FILE")]
        events: Option<String>,
        /// The neighbour relation the --events tree is accounted under: add-remove
        /// (ADD_OR_REMOVE_ONE, the default) or replace-one (REPLACE_ONE).
        #[arg(long, value_name = "RELATION")]
        neighbours: Option<String>,
        /// Report ε at this δ in (0, 1).
        #[arg(long, value_name = "D", allow_negative_numbers = true)]
        delta: Option<f64>,
        /// Report δ at this ε ≥ 0.
        #[arg(long, value_name = "E", allow_negative_numbers = true)]
        epsilon: Option<f64>,
        /// Report instead the largest true-positive rate of any membership test at this
        /// false-positive rate in (0, 1), from the certified trade-off function.
        #[arg(long, value_name = "A", allow_negative_numbers = true)]
        at_fpr: Option<f64>,
        /// Relative width of the bracket to reach (default 1e-4 for ε, 1e-3 for δ).
        #[arg(long, value_name = "REL", allow_negative_numbers = true)]
        accuracy: Option<f64>,
        /// Work budget in bins transformed (default 2e9, seconds to three minutes on 2
        /// cores; at most 1e13), never passed: a step whose work would pass it is not
        /// taken, and the bracket reached so far is reported, still certified. A count of
        /// work, not seconds: the same command gives the same numbers at any load.
        #[arg(long, value_name = "BINS", allow_negative_numbers = true)]
        max_work: Option<f64>,
        /// Output format: table (for people), csv (the header
        /// `quantity,lower,estimate,upper,seconds` and one row) or json (those fields,
        /// always numbers, `ln_lower`, `ln_estimate`, `ln_upper` (their natural logs),
        /// `step`, `accuracy_met`, `work`, `max_work` and the parsed request). A δ below
        /// a double's range is in the CSV and table from its log (`5.09e-1790`); in JSON
        /// its number is the nearest double on the safe side (below 5e-324: 0 for a
        /// lower end, 5e-324 for an upper end) and its `ln_*` field keeps the value. A δ
        /// or a rate is in [0, 1].
        #[arg(
            long,
            value_enum,
            default_value_t = Format::Table,
            hide_possible_values = true
        )]
        format: Format,
    },
    /// The inverse question: which value of the one parameter written `?` meets a
    /// privacy target, certified from both sides (`meets` is certified to meet it, `fails`
    /// certified not to, |meets/fails − 1| ≤ the accuracy; for count, fails = meets + 1).
    ///
    /// SPEC as for `dpw account`, with exactly one value `?` among sigma, scale, radius,
    /// epsilon (rr, truncated-laplace), q, count and sensitivity, e.g.
    /// `subsampled-gaussian:sigma=?,q=0.01,count=10000`. Targets: `--epsilon E --delta D`
    /// ((ε, δ)-DP) and/or `--max-tpr T --at-fpr A` (no membership test has power above T at
    /// false-positive rate A, on the certified trade-off function); all given must hold.
    Solve {
        /// A mechanism (repeat the flag to compose several); exactly one value is `?`.
        #[arg(long = "mechanism", value_name = "SPEC")]
        mechanisms: Vec<String>,
        /// Target ε ≥ 0 (with --delta).
        #[arg(long, value_name = "E", allow_negative_numbers = true)]
        epsilon: Option<f64>,
        /// Target δ in (0, 1) (with --epsilon).
        #[arg(long, value_name = "D", allow_negative_numbers = true)]
        delta: Option<f64>,
        /// Largest membership-attack power (TPR) allowed at --at-fpr, in (A, 1).
        #[arg(long, value_name = "T", allow_negative_numbers = true)]
        max_tpr: Option<f64>,
        /// The attack's false-positive rate A in (0, 1) (with --max-tpr).
        #[arg(long, value_name = "A", allow_negative_numbers = true)]
        at_fpr: Option<f64>,
        /// Relative accuracy |meets/fails − 1| to reach, in [1e-5, 0.5] (default 1e-4).
        #[arg(long, value_name = "REL", allow_negative_numbers = true)]
        accuracy: Option<f64>,
        /// Work budget of the whole search in bins transformed (default 6e9; at most
        /// 1e14). A count of work, not seconds: the same command gives the same numbers at
        /// any load.
        #[arg(long, value_name = "BINS", allow_negative_numbers = true)]
        max_work: Option<f64>,
        /// Output format: table (for people), csv (the header
        /// `parameter,meets,fails,target,seconds` and one row) or json (those fields,
        /// evaluations, accuracy_met, work and the parsed request).
        #[arg(
            long,
            value_enum,
            default_value_t = Format::Table,
            hide_possible_values = true
        )]
        format: Format,
    },
    /// Calibrate every mechanism to (ε, δ) for k queries of sensitivity Δ: noise scale,
    /// E|X|, E X² and the max-of-k error at confidence 1 − β.
    Calibrate {
        /// Privacy parameter ε > 0.
        #[arg(long, value_name = "E", allow_negative_numbers = true)]
        epsilon: f64,
        /// Privacy parameter δ in (0, 1).
        #[arg(long, value_name = "D", allow_negative_numbers = true)]
        delta: f64,
        /// Number of queries k (an integer ≥ 1; 1e6 is accepted).
        #[arg(
            long,
            value_name = "K",
            default_value_t = 1.0,
            allow_negative_numbers = true
        )]
        queries: f64,
        /// Sensitivity Δ > 0 of each query.
        #[arg(
            long,
            value_name = "S",
            default_value_t = 1.0,
            allow_negative_numbers = true
        )]
        sensitivity: f64,
        /// Failure probability β in (0, 1) of the max-of-k error bound.
        #[arg(
            long,
            value_name = "B",
            default_value_t = 0.05,
            allow_negative_numbers = true
        )]
        beta: f64,
        /// Bounded-noise density: power:ALPHA (∝ exp(−(1 − x²)^−ALPHA)) or exp.
        #[arg(long, value_name = "F", default_value = "power:2")]
        density: String,
        /// Skip the exact bounded row (its search by the certified accountant takes
        /// seconds, up to minutes for very many queries at tiny δ); every other row is
        /// unchanged.
        #[arg(long)]
        no_exact: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
}

fn usage(key: &str, message: &str) -> DpwError {
    DpwError::Input {
        file: "command line".into(),
        key: key.into(),
        message: message.into(),
    }
}

fn parse_sets(sets: &[String]) -> Result<Vec<(String, String)>, DpwError> {
    sets.iter()
        .map(|s| crate::manifest::parse_set(s).map_err(|m| usage("--set", &m)))
        .collect()
}

/// The directory the default manifest set lives in.
pub const EXPERIMENTS_DIR: &str = "experiments";

fn manifests_or_default(paths: Vec<PathBuf>) -> Result<Vec<PathBuf>, DpwError> {
    if paths.is_empty() {
        discover(Path::new(EXPERIMENTS_DIR))
    } else {
        Ok(paths)
    }
}

/// Runs a parsed command line; returns the exit status for outcomes that are not errors
/// (e.g. a failed check).
pub fn dispatch(cli: Cli) -> Result<ExitCode, DpwError> {
    match cli.command {
        Command::Run {
            manifests,
            out,
            sets,
            budget,
        } => {
            if let Some(b) = budget {
                crate::ranges::set_budget(b).map_err(|e| usage("--budget", &e))?;
            }
            let sets = parse_sets(&sets)?;
            let out = match out {
                Some(o) => o,
                None if sets.is_empty() => PathBuf::from("."),
                None => {
                    return Err(usage(
                        "--out",
                        "run --set needs --out DIR (the checked-in outputs are not overwritten by an override)",
                    ))
                }
            };
            let manifests = load_all_with(&manifests, &sets)?;
            run_all(&manifests, &out)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Check {
            manifests,
            sets,
            against,
            budget,
            exact,
        } => {
            if let Some(b) = budget {
                crate::ranges::set_budget(b).map_err(|e| usage("--budget", &e))?;
            }
            let sets = parse_sets(&sets)?;
            if !sets.is_empty() && against.is_none() {
                return Err(usage(
                    "--against",
                    "check --set needs --against CSV (the checked-in data was computed without the override)",
                ));
            }
            let manifests = load_all_with(&manifests_or_default(manifests)?, &sets)?;
            if against.is_some() && manifests.len() != 1 {
                return Err(usage(
                    "--against",
                    "compares one manifest; name exactly one",
                ));
            }
            if let Some(path) = &against {
                // Read before any figure is computed: a missing or malformed file is the
                // command line's mistake (exit 2), not a mismatch found after the work.
                if !path.is_file() {
                    return Err(usage(
                        "--against",
                        &format!("{} is not a readable CSV file", path.display()),
                    ));
                }
                Table::read_csv(path)
                    .map_err(|e| usage("--against", &format!("{}: {e}", path.display())))?;
            }
            check_with(&manifests, against.as_deref(), exact)
        }
        Command::Calibrate {
            epsilon,
            delta,
            queries,
            sensitivity,
            beta,
            density,
            no_exact,
            format,
        } => {
            let req = Request::new(epsilon, delta, queries, sensitivity, beta)
                .and_then(|r| r.with_density(&density))
                .map(|r| if no_exact { r.without_exact_row() } else { r })
                .map_err(|message| DpwError::Input {
                    file: "calibrate".into(),
                    key: message.split(':').next().unwrap_or("").to_string(),
                    message: message
                        .split_once(": ")
                        .map(|(_, m)| m.to_string())
                        .unwrap_or_default(),
                })?;
            let rows = with_progress("calibrate", || calibrate(&req));
            print!("{}", render(&req, &rows, format));
            Ok(ExitCode::SUCCESS)
        }
        Command::Account {
            mut mechanisms,
            schedule,
            events,
            neighbours,
            delta,
            epsilon,
            at_fpr,
            accuracy,
            max_work,
            format,
        } => {
            if events.is_none() && neighbours.is_some() {
                return Err(DpwError::Input {
                    file: "account".into(),
                    key: "--neighbours".into(),
                    message: "applies to an --events tree only (a SPEC takes neighbours=...)"
                        .into(),
                });
            }
            if let Some(path) = &events {
                let relation = neighbours.as_deref().unwrap_or("add-remove");
                let more = crate::account::read_event_specs(std::path::Path::new(path), relation)
                    .map_err(|message| {
                    let (key, message) = match message.strip_prefix("--neighbours: ") {
                        Some(m) => ("--neighbours".to_string(), m.to_string()),
                        None => ("--events".to_string(), message),
                    };
                    DpwError::Input {
                        file: "account".into(),
                        key,
                        message,
                    }
                })?;
                if more.is_empty() {
                    return Err(DpwError::Input {
                        file: "account".into(),
                        key: "--events".into(),
                        message: format!("'{path}' holds no private event (every part is a no-op)"),
                    });
                }
                mechanisms.extend(more);
            }
            let req = match (at_fpr, delta, epsilon) {
                (Some(a), None, None) => {
                    AccountRequest::at_fpr(&mechanisms, schedule.as_deref(), a, accuracy)
                }
                (Some(_), _, _) => Err((
                    "--at-fpr".to_string(),
                    "give one of --delta, --epsilon or --at-fpr".to_string(),
                )),
                _ => {
                    AccountRequest::new(&mechanisms, schedule.as_deref(), delta, epsilon, accuracy)
                }
            }
            .and_then(|r| r.with_max_work(max_work))
            .map_err(|(key, message)| DpwError::Input {
                file: "account".into(),
                key,
                message,
            })?;
            let result = with_progress("account", || req.run()).map_err(|message| {
                let (key, message) = match message.split_once(": ") {
                    Some((k, m)) if k.starts_with("--") => (k.to_string(), m.to_string()),
                    _ => ("composition".to_string(), message),
                };
                DpwError::Input {
                    file: "account".into(),
                    key,
                    message,
                }
            })?;
            print!(
                "{}",
                match format {
                    Format::Table => account::render_table(&req, &result),
                    Format::Csv => account::render_csv(&req, &result),
                    Format::Json => account::render_json(&req, &result),
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Solve {
            mechanisms,
            epsilon,
            delta,
            max_tpr,
            at_fpr,
            accuracy,
            max_work,
            format,
        } => {
            let input = |(key, message): (String, String)| DpwError::Input {
                file: "solve".into(),
                key,
                message,
            };
            let req = SolveRequest::new(&mechanisms, epsilon, delta, max_tpr, at_fpr, accuracy)
                .and_then(|r| r.with_max_work(max_work))
                .map_err(input)?;
            let result = with_progress("solve", || req.run()).map_err(input)?;
            print!(
                "{}",
                match format {
                    Format::Table => solve::render_table(&req, &result),
                    Format::Csv => solve::render_csv(&req, &result),
                    Format::Json => solve::render_json(&req, &result),
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::List => {
            let manifests = load_all(&discover(Path::new(EXPERIMENTS_DIR))?)?;
            print!("{}", catalog(&manifests));
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The catalog as aligned columns: id, paper, paper figure, title.
pub fn catalog(manifests: &[Manifest]) -> String {
    let header = ["ID", "PAPER", "FIGURE", "TITLE"];
    // Manifest text may carry the figures' sub/superscript markup (`f_{ε,δ}`): a terminal
    // gets it as plain Unicode text.
    let rows: Vec<[String; 4]> = manifests
        .iter()
        .map(|m| {
            [
                m.id.clone(),
                plotting::markup::text(&m.source.paper),
                plotting::markup::text(&m.source.figure),
                plotting::markup::text(&m.title),
            ]
        })
        .collect();
    let header = header.map(String::from);
    let mut widths = header.each_ref().map(|h| h.chars().count());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for r in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, cell) in r.iter().enumerate() {
            if i + 1 == r.len() {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Recomputes each manifest into a temporary directory and compares with the checked-in
/// CSV; prints every mismatch and returns exit status 1 if there is any.
pub fn check_all(manifests: &[Manifest]) -> Result<ExitCode, DpwError> {
    check_all_against(manifests, None)
}

/// As [`check_all`], comparing with `against` instead of the checked-in CSV when given.
pub fn check_all_against(
    manifests: &[Manifest],
    against: Option<&Path>,
) -> Result<ExitCode, DpwError> {
    check_with(manifests, against, false)
}

/// As [`check_all_against`]; with `exact`, a figure passes only if its recomputed CSV is
/// byte-identical to the one compared with.
pub fn check_with(
    manifests: &[Manifest],
    against: Option<&Path>,
    exact: bool,
) -> Result<ExitCode, DpwError> {
    let start = Instant::now();
    let tmp = tempfile::tempdir()
        .map_err(|e| DpwError::Failure(format!("cannot create a temporary directory: {e}")))?;
    let mut failed = 0usize;
    // Computed concurrently (as `dpw run` does), compared in order.
    let figures: Vec<_> = manifests
        .par_iter()
        .map(compute)
        .collect::<Result<_, _>>()?;
    for (m, (fig, _)) in manifests.iter().zip(figures) {
        let paths = FigurePaths::new(tmp.path(), &m.id);
        write_table(&paths.csv, &fig.table)
            .map_err(|e| DpwError::Failure(format!("{}: {e}", m.file)))?;
        let golden = against.map_or_else(|| m.golden_csv(), Path::to_path_buf);
        let result = Table::read_csv(&paths.csv).and_then(|got| {
            if golden.is_dir() {
                return Err(format!(
                    "checked-in data {} is a directory, not a CSV file",
                    golden.display()
                ));
            }
            if !golden.is_file() {
                return Err(format!("checked-in data {} is missing", golden.display()));
            }
            Table::read_csv(&golden).map(|expected| (expected, got))
        });
        match result {
            Err(e) => {
                println!("{}: {e}", m.id);
                failed += 1;
            }
            Ok((expected, got)) => {
                let mismatches = compare(m, &expected, &got);
                let identical = std::fs::read(&paths.csv).ok() == std::fs::read(&golden).ok();
                if exact && mismatches.is_empty() && !identical {
                    println!(
                        "{}: not byte-identical to {} (largest relative deviation {:.1e}, \
                         inside the tolerance)",
                        m.id,
                        golden.display(),
                        largest_deviation(m, &expected, &got)
                    );
                    failed += 1;
                    continue;
                }
                if mismatches.is_empty() {
                    let dev = largest_deviation(m, &expected, &got);
                    let how = if dev == 0.0 {
                        "identical".to_string()
                    } else {
                        format!("largest relative deviation {dev:.1e}")
                    };
                    println!("{}: ok ({} rows, {how})", m.id, expected.rows().len());
                } else {
                    for mm in &mismatches {
                        println!("{}", mm.line(&m.id));
                    }
                    println!(
                        "{}: FAILED ({} mismatches, {})",
                        m.id,
                        mismatches.len(),
                        golden.display()
                    );
                    failed += 1;
                }
            }
        }
    }
    println!(
        "check: {} of {} figures ok in {:.2} s",
        manifests.len() - failed,
        manifests.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Runs `work`; on a terminal, a computation that lasts over 2 s says every 5 s that it is
/// still running (the certified accountant can take seconds at tiny δ or huge counts) and
/// how long it took at the end. Nothing is printed off a terminal (scripts and tests read stderr).
fn with_progress<T: Send>(what: &str, work: impl FnOnce() -> T + Send) -> T {
    use std::io::IsTerminal;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};
    if !std::io::stderr().is_terminal() {
        return work();
    }
    let start = Instant::now();
    let (tx, rx) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        let watcher = s.spawn(move || {
            let mut wait = Duration::from_secs(2);
            let mut spoke = false;
            while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(wait) {
                eprintln!(
                    "{what}: still computing ({:.0} s)…",
                    start.elapsed().as_secs_f64()
                );
                spoke = true;
                wait = Duration::from_secs(5);
            }
            if spoke {
                eprintln!("{what}: done in {:.1} s", start.elapsed().as_secs_f64());
            }
        });
        let out = work();
        let _ = tx.send(());
        let _ = watcher.join();
        out
    })
}
