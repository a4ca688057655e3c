//! `dpw run`: compute every figure, render it, then write all outputs.
//!
//! All manifests are validated before this runs; all figures are computed and rendered
//! before the first file is written, so a failure anywhere leaves no output behind.

use crate::error::DpwError;
use crate::manifest::Manifest;
use crate::output::{check_out_dir, write_set, FigurePaths, RenderedFigure};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Instant;

/// Computes and renders one figure, printing `<id>: computing N points…` on stdout and
/// showing a progress bar on stderr when it is a terminal.
pub fn compute(m: &Manifest) -> Result<(RenderedFigure, f64), DpwError> {
    let start = Instant::now();
    let n = m.job.work_items();
    println!("{}: computing {n} points…", m.id);
    let bar = bars().add(ProgressBar::new(n as u64));
    if let Ok(style) = ProgressStyle::with_template("{prefix}: [{bar:30}] {pos}/{len} {elapsed}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(m.id.clone());
    let fail = |what: String| DpwError::Failure(format!("{}: {what}", m.file));
    // An experiment that finds, only while computing, that a parameter leaves what it can
    // resolve names the key first (`params.…: message`): that is bad input (exit 2).
    let table = m
        .job
        .run(&|| bar.inc(1))
        .map_err(|e| match e.split_once(": ") {
            Some((key, message)) if key.starts_with("params.") && !key.contains(' ') => {
                DpwError::Input {
                    file: m.file.clone(),
                    key: key.into(),
                    message: message.into(),
                }
            }
            _ => fail(e),
        })?;
    bar.finish_and_clear();
    bars().remove(&bar);
    if table.rows().is_empty() {
        // Accepted values that leave nothing computable (e.g. the classical Gaussian's
        // ε < 1 on a grid of ε ≥ 1): refused like bad input, nothing written.
        return Err(DpwError::Input {
            file: m.file.clone(),
            key: "params".into(),
            message: "no point of the grids can be computed with these values, so there is \
                      nothing to draw (see the kind's documented ranges)"
                .into(),
        });
    }
    // A value the kind's ranges let through but that leaves double precision: refused
    // like bad input (a backstop; the ranges in `crate::ranges` are the first line).
    table.check_finite().map_err(|what| DpwError::Input {
        file: m.file.clone(),
        key: "params".into(),
        message: format!(
            "these values leave double precision ({what}); use values nearer the \
             checked-in ones"
        ),
    })?;
    let points = table.to_points();
    let plot = titled(&m.plot, &table);
    let svg =
        plotting::render_svg(&plot, &points).map_err(|e| fail(format!("rendering SVG: {e}")))?;
    let png =
        plotting::render_png(&plot, &points).map_err(|e| fail(format!("rendering PNG: {e}")))?;
    Ok((
        RenderedFigure { table, svg, png },
        start.elapsed().as_secs_f64(),
    ))
}

/// The progress bars of the figures being computed (several at once), drawn on stderr
/// when it is a terminal.
fn bars() -> &'static MultiProgress {
    static BARS: OnceLock<MultiProgress> = OnceLock::new();
    BARS.get_or_init(|| {
        MultiProgress::with_draw_target(if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        })
    })
}

/// Four significant digits, without trailing zeros.
fn significant(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The plot spec with each panel title's `{column}` placeholders replaced by that
/// column's value in the panel's first row (e.g. an RMSE in a heatmap's title).
pub fn titled(spec: &plotting::PlotSpec, table: &crate::table::Table) -> plotting::PlotSpec {
    let mut spec = spec.clone();
    let names = table.extra_columns().to_vec();
    for panel in &mut spec.panels {
        let Some(row) = table.rows().iter().find(|r| r.panel == panel.key) else {
            continue;
        };
        for (name, v) in names.iter().zip(&row.extra) {
            panel.title = panel
                .title
                .replace(&format!("{{{name}}}"), &significant(*v));
        }
    }
    spec
}

/// Computes every manifest, then writes each figure under `out`, printing a line per
/// figure and a total. Returns the figures' output paths.
pub fn run_all(manifests: &[Manifest], out: &Path) -> Result<Vec<FigurePaths>, DpwError> {
    let start = Instant::now();
    let ids: Vec<&str> = manifests.iter().map(|m| m.id.as_str()).collect();
    check_out_dir(out, &ids).map_err(|message| DpwError::Input {
        file: "command line".into(),
        key: "--out".into(),
        message,
    })?;
    // Figures are computed concurrently (each also splits its own points across the
    // cores): a figure's serial stretches leave a core that the next figure fills. Each
    // figure's time is its own wall time, so overlapping figures' times add up to more
    // than the total.
    let done: Vec<(RenderedFigure, f64)> = manifests
        .par_iter()
        .map(compute)
        .collect::<Result<_, _>>()?;
    let write_start = Instant::now();
    let figures: Vec<(&str, &RenderedFigure)> = ids
        .iter()
        .copied()
        .zip(done.iter().map(|(f, _)| f))
        .collect();
    let written = write_set(out, &figures).map_err(DpwError::Failure)?;
    let write_seconds = write_start.elapsed().as_secs_f64();
    for ((m, (_, seconds)), paths) in manifests.iter().zip(&done).zip(&written) {
        println!(
            "{}: done in {:.2} s ({}, {}, {})",
            m.id,
            seconds + write_seconds,
            paths.csv.display(),
            paths.svg.display(),
            paths.png.display()
        );
    }
    let n = manifests.len();
    println!(
        "total: {n} figure{} in {:.2} s",
        if n == 1 { "" } else { "s" },
        start.elapsed().as_secs_f64()
    );
    Ok(written)
}
