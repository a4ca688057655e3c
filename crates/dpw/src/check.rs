//! `dpw check`: recompute each figure into a temporary directory and compare its CSV
//! with the checked-in `data/<id>.csv`, within the manifest's tolerances.

use crate::manifest::Manifest;
use crate::table::Table;
use std::fmt::Write;

/// One difference between the checked-in and the recomputed table.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// 1-based data row (the header is row 0), or `None` for whole-table differences.
    pub row: Option<usize>,
    /// The column (or `rows` / `columns` for shape differences).
    pub column: String,
    /// Expected (checked-in) value, as text.
    pub expected: String,
    /// Recomputed value, as text.
    pub got: String,
    /// The tolerance applied, as text (empty for exact comparisons).
    pub tolerance: String,
    /// Context: the row's panel, series and x.
    pub context: String,
}

impl Mismatch {
    /// The mismatch as one line prefixed by the figure id.
    pub fn line(&self, id: &str) -> String {
        let mut s = format!("{id}: ");
        if let Some(r) = self.row {
            let _ = write!(s, "row {r}{}, ", self.context);
        }
        let _ = write!(
            s,
            "column {}: expected {}, got {}",
            self.column, self.expected, self.got
        );
        if !self.tolerance.is_empty() {
            let _ = write!(s, ", tolerance {}", self.tolerance);
        }
        s
    }
}

/// Compares `got` with `expected` using the manifest's tolerances; returns every mismatch.
pub fn compare(m: &Manifest, expected: &Table, got: &Table) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let shape = |column: &str, e: String, g: String| Mismatch {
        row: None,
        column: column.to_string(),
        expected: e,
        got: g,
        tolerance: String::new(),
        context: String::new(),
    };
    if expected.column_names() != got.column_names() {
        out.push(shape(
            "names",
            expected.column_names().join(","),
            got.column_names().join(","),
        ));
        return out;
    }
    if expected.rows().len() != got.rows().len() {
        out.push(shape(
            "rows",
            format!("{} rows", expected.rows().len()),
            format!("{} rows", got.rows().len()),
        ));
    }
    let numeric = expected.numeric_columns();
    for (i, (e, g)) in expected.rows().iter().zip(got.rows()).enumerate() {
        let row = Some(i + 1);
        let context = format!(" (panel {}, series {}, x {})", e.panel, e.series, e.x);
        for (column, ev, gv) in [
            ("panel", &e.panel, &g.panel),
            ("series", &e.series, &g.series),
        ] {
            if ev != gv {
                out.push(Mismatch {
                    row,
                    column: column.into(),
                    expected: format!("\"{ev}\""),
                    got: format!("\"{gv}\""),
                    tolerance: "exact".into(),
                    context: context.clone(),
                });
            }
        }
        for ((column, ev), gv) in numeric
            .iter()
            .zip(Table::numeric_values(e))
            .zip(Table::numeric_values(g))
        {
            let tol = m.check.tolerance(column);
            if !tol.accepts(ev, gv) {
                out.push(Mismatch {
                    row,
                    column: column.clone(),
                    expected: format!("{ev:e}"),
                    got: format!("{gv:e}"),
                    tolerance: format!("rel {:e}, abs {:e}", tol.rel, tol.abs),
                    context: context.clone(),
                });
            }
        }
    }
    out
}

/// The largest deviation of `got` from `expected` over the numeric cells, relative to
/// `max(|expected|, abs)` with the column's absolute tolerance `abs` (so values near 0
/// count by their absolute deviation against it): 0 when every cell is reproduced to the
/// bit. Printed by `dpw check` so that drift inside the tolerance stays visible.
pub fn largest_deviation(m: &Manifest, expected: &Table, got: &Table) -> f64 {
    let numeric = expected.numeric_columns();
    let mut worst = 0.0f64;
    for (e, g) in expected.rows().iter().zip(got.rows()) {
        for ((column, ev), gv) in numeric
            .iter()
            .zip(Table::numeric_values(e))
            .zip(Table::numeric_values(g))
        {
            if ev == gv || (ev.is_nan() && gv.is_nan()) {
                continue;
            }
            let tol = m.check.tolerance(column);
            let scale = ev.abs().max(tol.abs).max(f64::MIN_POSITIVE);
            worst = worst.max((gv - ev).abs() / scale);
        }
    }
    worst
}
