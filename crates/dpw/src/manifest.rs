//! Manifests: one TOML file per figure (`experiments/<id>.toml`).
//!
//! ```toml
//! id = "fig1"                       # must equal the file stem
//! title = "…"
//! kind = "bounded_vs_gaussian"      # a key of the registry
//! [source]
//! paper = "…"
//! figure = "Figure 1"
//! chosen = "which values are our choice"
//! [params]                          # kind-specific, validated by the experiment
//! [plot]                            # a plotting::PlotSpec
//! [check]
//! rel = 1e-6
//! abs = 1e-9
//! columns = { y = { rel = 1e-4 } } # optional per-column overrides
//! ```
//!
//! [`load`] reads, parses and validates everything, including the experiment's
//! parameters, and reports the first problem as `<file>: <key>: <what is allowed>`.

use crate::error::{one_line, DpwError, KeyError};
use crate::experiments::Job;
use crate::registry;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where a figure comes from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The paper (authors, year, title).
    pub paper: String,
    /// The paper's own figure number.
    pub figure: String,
    /// Which parameter values are our choice rather than the paper's.
    pub chosen: String,
}

/// A per-column tolerance override; a missing bound falls back to the manifest-wide one.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnTolerance {
    /// Relative tolerance.
    pub rel: Option<f64>,
    /// Absolute tolerance.
    pub abs: Option<f64>,
}

/// `[check]`: how close a recomputed value must be to the checked-in one.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// Relative tolerance: `|got − expected| ≤ abs + rel·|expected|`.
    pub rel: f64,
    /// Absolute tolerance.
    pub abs: f64,
    /// Per-column overrides.
    #[serde(default)]
    pub columns: BTreeMap<String, ColumnTolerance>,
}

/// A resolved tolerance for one column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Relative part.
    pub rel: f64,
    /// Absolute part.
    pub abs: f64,
}

impl Tolerance {
    /// Whether `got` is within tolerance of `expected`.
    pub fn accepts(&self, expected: f64, got: f64) -> bool {
        (got - expected).abs() <= self.abs + self.rel * expected.abs()
    }
}

impl CheckSpec {
    /// The tolerance for `column`.
    pub fn tolerance(&self, column: &str) -> Tolerance {
        let over = self.columns.get(column);
        Tolerance {
            rel: over.and_then(|c| c.rel).unwrap_or(self.rel),
            abs: over.and_then(|c| c.abs).unwrap_or(self.abs),
        }
    }
}

/// The manifest as written (before the experiment reads its parameters).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestDoc {
    id: String,
    title: String,
    kind: String,
    source: Source,
    #[allow(dead_code)] // read again, typed, by the experiment through `ParamsInput`
    params: toml::Table,
    plot: plotting::PlotSpec,
    check: CheckSpec,
}

/// A loaded, fully validated manifest with its prepared job.
pub struct Manifest {
    /// The path as given on the command line (used in messages).
    pub file: String,
    /// The path.
    pub path: PathBuf,
    /// Figure id (= file stem).
    pub id: String,
    /// Title.
    pub title: String,
    /// Registry kind.
    pub kind: String,
    /// Provenance.
    pub source: Source,
    /// Plot specification.
    pub plot: plotting::PlotSpec,
    /// Tolerances for `dpw check`.
    pub check: CheckSpec,
    /// The prepared experiment.
    pub job: Box<dyn Job>,
}

impl std::fmt::Debug for Manifest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manifest")
            .field("file", &self.file)
            .field("id", &self.id)
            .field("kind", &self.kind)
            .finish()
    }
}

impl Manifest {
    /// The checked-in CSV: `<manifest dir>/../data/<id>.csv`.
    pub fn golden_csv(&self) -> PathBuf {
        golden_path(&self.path, &self.id)
    }
}

/// `<dir of manifest>/../data/<id>.csv`, written without `..` where the directory is a
/// plain name (`experiments/fig1.toml` gives `data/fig1.csv`).
fn golden_path(manifest: &Path, id: &str) -> PathBuf {
    let file = format!("{id}.csv");
    let dir = manifest.parent().unwrap_or(Path::new(""));
    let plain_name = matches!(
        dir.components().next_back(),
        Some(std::path::Component::Normal(_))
    );
    match dir.parent() {
        Some(p) if plain_name => p.join("data").join(file),
        _ if dir.as_os_str().is_empty() => Path::new("..").join("data").join(file),
        _ => dir.join("..").join("data").join(file),
    }
}

/// The manifest text, handed to an experiment so that it can deserialise `[params]`
/// into its own struct with errors that carry the full key path.
pub struct ParamsInput<'a> {
    text: &'a str,
    dir: &'a Path,
}

impl ParamsInput<'_> {
    /// The directory of the manifest file: relative input paths resolve against it.
    pub fn dir(&self) -> &Path {
        self.dir
    }

    /// Deserialises `[params]` into `T` (which should use `deny_unknown_fields`).
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, KeyError> {
        #[derive(Deserialize)]
        struct OnlyParams<T> {
            params: T,
        }
        from_toml::<OnlyParams<T>>(self.text).map(|p| p.params)
    }
}

/// Deserialises a manifest's text into `T`; a failure becomes a one-line key error whose
/// key is the path `serde_path_to_error` tracked down to the failing key or value.
fn from_toml<T: DeserializeOwned>(text: &str) -> Result<T, KeyError> {
    serde_path_to_error::deserialize(toml::Deserializer::new(text))
        .map_err(|e| toml_error(&key_path(e.path()), e.inner()))
}

/// The dotted key path of the error messages: `params.panels[0].epsilon` (empty at the
/// top level).
fn key_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            // A key that is not a string: TOML has none.
            Segment::Unknown => {}
        }
    }
    out
}

/// Turns a `toml` deserialisation error at key `path` into a one-line key error.
fn toml_error(path: &str, e: &toml::de::Error) -> KeyError {
    let path = path.to_string();
    // serde names Rust integer types; say what range a user may write instead.
    let message = one_line(e.message())
        .replace("expected u64", "expected a whole number in [0, 1.8e19]")
        .replace("expected usize", "expected a whole number in [0, 1.8e19]")
        .replace("expected u32", "expected a whole number in [0, 4294967295]");
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|m| m.strip_suffix('`'))
    {
        let key = if path.is_empty() {
            field.to_string()
        } else {
            format!("{path}.{field}")
        };
        return KeyError::new(key, "missing (required)");
    }
    let key = if path.is_empty() {
        "(top level)".to_string()
    } else {
        path
    };
    KeyError::new(key, message)
}

/// Line and column (1-based) of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Reads, parses and validates the manifest at `path`.
pub fn load(path: &Path) -> Result<Manifest, DpwError> {
    load_with(path, &[])
}

/// Splits `KEY=VALUE` of a `--set` flag.
pub fn parse_set(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!(
            "--set expects KEY=VALUE (e.g. params.delta=1e-8), got \"{s}\""
        )),
    }
}

/// One step of a key path: a table key or an array index.
enum Step {
    Key(String),
    Index(usize),
}

/// `params.panels[0].epsilon` → steps; `None` if malformed.
fn key_steps(path: &str) -> Option<Vec<Step>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if name.is_empty() {
            return None;
        }
        out.push(Step::Key(name.to_string()));
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            out.push(Step::Index(r[..end].parse().ok()?));
            rest = &r[end + 1..];
        }
        if !rest.is_empty() {
            return None;
        }
    }
    Some(out)
}

/// Applies `--set` overrides to a manifest's text: each key path must lead through
/// existing tables and arrays (the last key may be new); the value is read as TOML (a
/// number, array, inline table, `true`…) or else taken as a string.
fn apply_sets(text: &str, sets: &[(String, String)]) -> Result<String, KeyError> {
    let mut doc: toml::Table = toml::from_str(text).map_err(|e| {
        KeyError::new(
            "syntax",
            format!("TOML syntax error: {}", one_line(e.message())),
        )
    })?;
    for (key, value) in sets {
        let steps = key_steps(key).ok_or_else(|| {
            KeyError::new(
                key.clone(),
                "--set: not a key path like params.panels[0].epsilon",
            )
        })?;
        let v: toml::Value = toml::from_str::<toml::Table>(&format!("v = {value}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.clone()));
        let missing = || KeyError::new(key.clone(), "--set: no such key in the manifest");
        let mut cur: &mut toml::Value = doc
            .get_mut(match &steps[0] {
                Step::Key(k) => k.as_str(),
                Step::Index(_) => return Err(missing()),
            })
            .ok_or_else(missing)?;
        if steps.len() == 1 {
            *cur = v;
            continue;
        }
        for (i, st) in steps[1..].iter().enumerate() {
            let last = i + 2 == steps.len();
            match st {
                Step::Key(k) => {
                    let t = cur.as_table_mut().ok_or_else(missing)?;
                    if last {
                        t.insert(k.clone(), v.clone());
                        break;
                    }
                    cur = t.get_mut(k).ok_or_else(missing)?;
                }
                Step::Index(n) => {
                    let a = cur.as_array_mut().ok_or_else(missing)?;
                    let slot = a.get_mut(*n).ok_or_else(missing)?;
                    if last {
                        *slot = v.clone();
                        break;
                    }
                    cur = slot;
                }
            }
        }
    }
    toml::to_string(&doc).map_err(|e| KeyError::new("file", format!("--set: {e}")))
}

/// As [`load`], with `--set KEY=VALUE` overrides applied to the text before validation
/// (so a bad value is refused exactly as in the file).
pub fn load_with(path: &Path, sets: &[(String, String)]) -> Result<Manifest, DpwError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| KeyError::new("file", format!("cannot read manifest ({e})")).in_file(&file))?;
    let text = if sets.is_empty() {
        text
    } else {
        apply_sets(&text, sets).map_err(|e| e.in_file(&file))?
    };
    // Syntax first, so that a syntax error is reported at its line and column.
    toml::from_str::<toml::Table>(&text).map_err(|e| {
        let at = e.span().map(|s| line_col(&text, s.start));
        let key = at.map_or("syntax".to_string(), |(l, c)| {
            format!("line {l}, column {c}")
        });
        KeyError::new(key, format!("TOML syntax error: {}", one_line(e.message()))).in_file(&file)
    })?;
    let doc: ManifestDoc = from_toml(&text).map_err(|e| e.in_file(&file))?;
    let err = |key: &str, message: String| KeyError::new(key, message).in_file(&file);

    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    if doc.id != stem {
        return Err(err(
            "id",
            format!(
                "must equal the file name stem \"{stem}\", got \"{}\"",
                doc.id
            ),
        ));
    }
    if doc.title.trim().is_empty() {
        return Err(err("title", "must not be empty".into()));
    }
    let kind = registry::find(&doc.kind).ok_or_else(|| {
        err(
            "kind",
            format!(
                "unknown kind \"{}\", expected one of {}",
                doc.kind,
                registry::names()
            ),
        )
    })?;
    plotting::validate(&doc.plot).map_err(|e| err("plot", one_line(&e.to_string())))?;
    check_tolerance("check.rel", doc.check.rel).map_err(|e| e.in_file(&file))?;
    check_tolerance("check.abs", doc.check.abs).map_err(|e| e.in_file(&file))?;

    let job = (kind.prepare)(&ParamsInput {
        text: &text,
        dir: path.parent().unwrap_or(Path::new("")),
    })
    .map_err(|e| e.in_file(&file))?;

    let numeric: Vec<String> = ["x".to_string(), "y".to_string()]
        .into_iter()
        .chain(job.extra_columns())
        .collect();
    for (column, tol) in &doc.check.columns {
        if !numeric.contains(column) {
            return Err(err(
                &format!("check.columns.{column}"),
                format!("unknown column, expected one of {}", numeric.join(", ")),
            ));
        }
        for (name, v) in [("rel", tol.rel), ("abs", tol.abs)] {
            if let Some(v) = v {
                check_tolerance(&format!("check.columns.{column}.{name}"), v)
                    .map_err(|e| e.in_file(&file))?;
            }
        }
    }
    let plot_panels: Vec<&str> = doc.plot.panels.iter().map(|p| p.key.as_str()).collect();
    for key in job.panel_keys() {
        if !plot_panels.contains(&key.as_str()) {
            return Err(err(
                "plot.panels",
                format!(
                    "no panel with key \"{key}\" (the experiment produces it); have {}",
                    quoted(&plot_panels)
                ),
            ));
        }
    }
    let plot_series: Vec<&str> = doc.plot.series.iter().map(|s| s.key.as_str()).collect();
    for key in job.series_keys() {
        if !plot_series.contains(&key.as_str()) {
            return Err(err(
                "plot.series",
                format!(
                    "no series with key \"{key}\" (the experiment produces it); have {}",
                    quoted(&plot_series)
                ),
            ));
        }
    }

    Ok(Manifest {
        file,
        path: path.to_path_buf(),
        id: doc.id,
        title: doc.title,
        kind: doc.kind,
        source: doc.source,
        plot: doc.plot,
        check: doc.check,
        job,
    })
}

fn quoted(keys: &[&str]) -> String {
    if keys.is_empty() {
        "none".to_string()
    } else {
        keys.iter()
            .map(|k| format!("\"{k}\""))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn check_tolerance(key: &str, v: f64) -> Result<(), KeyError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(KeyError::new(
            key,
            format!("must be a finite number >= 0, got {v}"),
        ))
    }
}

/// Loads every manifest, failing on the first bad one (nothing is computed before all
/// of them have been validated).
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Manifest>, DpwError> {
    load_all_with(paths, &[])
}

/// As [`load_all`], with `--set` overrides applied to every manifest.
pub fn load_all_with(
    paths: &[PathBuf],
    sets: &[(String, String)],
) -> Result<Vec<Manifest>, DpwError> {
    let manifests = paths
        .iter()
        .map(|p| load_with(p, sets))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, m) in manifests.iter().enumerate() {
        if let Some(other) = manifests[..i].iter().find(|o| o.id == m.id) {
            return Err(KeyError::new(
                "id",
                format!("figure \"{}\" is also given by {}", m.id, other.file),
            )
            .in_file(&m.file));
        }
    }
    Ok(manifests)
}

/// Every `*.toml` in `dir`, sorted by path.
pub fn discover(dir: &Path) -> Result<Vec<PathBuf>, DpwError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        KeyError::new(
            "file",
            format!("cannot list manifests in this directory ({e})"),
        )
        .in_file(dir.display().to_string())
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
        .collect();
    paths.sort_by_key(|p| natural_key(&p.to_string_lossy()));
    Ok(paths)
}

/// Sort key that orders embedded numbers by value (`fig2` before `fig10`).
fn natural_key(s: &str) -> Vec<(String, u64)> {
    let mut key = Vec::new();
    let mut text = String::new();
    let mut digits = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            if !digits.is_empty() {
                key.push((
                    std::mem::take(&mut text),
                    digits.parse().unwrap_or(u64::MAX),
                ));
                digits.clear();
            }
            text.push(c);
        }
    }
    key.push((text, digits.parse().unwrap_or(0)));
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_path_is_next_to_the_experiments_dir() {
        let g = |m: &str| golden_path(Path::new(m), "f").display().to_string();
        assert_eq!(g("experiments/f.toml"), "data/f.csv");
        assert_eq!(g("/r/experiments/f.toml"), "/r/data/f.csv");
        assert_eq!(g("f.toml"), "../data/f.csv");
        assert_eq!(g("./f.toml"), "./../data/f.csv");
        assert_eq!(g("../f.toml"), "../../data/f.csv");
    }

    #[test]
    fn manifests_sort_by_number() {
        let mut v = vec!["e/fig10.toml", "e/fig2.toml", "e/fig1.toml", "e/a.toml"];
        v.sort_by_key(|s| natural_key(s));
        assert_eq!(
            v,
            ["e/a.toml", "e/fig1.toml", "e/fig2.toml", "e/fig10.toml"]
        );
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("ab", 0), (1, 1));
    }

    #[test]
    fn tolerance_accepts_within_bounds() {
        let t = Tolerance {
            rel: 1e-6,
            abs: 1e-9,
        };
        assert!(t.accepts(1.0, 1.0 + 5e-7));
        assert!(!t.accepts(1.0, 1.0 + 2e-6));
        assert!(t.accepts(0.0, 5e-10));
        assert!(!t.accepts(0.0, 2e-9));
    }
}
