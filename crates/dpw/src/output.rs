//! Atomic output: every file is written to a temporary file in its destination directory
//! and renamed into place, so a reader never sees a half-written CSV, SVG or PNG.

use crate::table::Table;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

/// The three files of one figure, relative to the output directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FigurePaths {
    /// `data/<id>.csv`
    pub csv: PathBuf,
    /// `figures/<id>.svg`
    pub svg: PathBuf,
    /// `figures/<id>.png`
    pub png: PathBuf,
}

impl FigurePaths {
    /// The paths for figure `id` under `out`.
    pub fn new(out: &Path, id: &str) -> Self {
        let join = |rel: String| {
            if out == Path::new(".") {
                PathBuf::from(rel)
            } else {
                out.join(rel)
            }
        };
        Self {
            csv: join(format!("data/{id}.csv")),
            svg: join(format!("figures/{id}.svg")),
            png: join(format!("figures/{id}.png")),
        }
    }
}

/// Writes `contents` (produced by `write`) to `path` atomically, creating the directory.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> Result<(), String>,
) -> Result<(), String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("cannot create directory {}: {e}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".dpw-")
        .tempfile_in(&dir)
        .map_err(|e| format!("cannot create a temporary file in {}: {e}", dir.display()))?;
    write(tmp.as_file_mut()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    tmp.as_file_mut()
        .flush()
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    // Temporary files are created private (0600); the outputs are ordinary files.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(|e| format!("cannot set permissions on {}: {e}", path.display()))?;
    }
    tmp.persist(path)
        .map_err(|e| format!("cannot rename into {}: {}", path.display(), e.error))?;
    Ok(())
}

/// Writes raw bytes atomically.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_atomic(path, |f| f.write_all(bytes).map_err(|e| e.to_string()))
}

/// Writes a table as CSV atomically.
pub fn write_table(path: &Path, table: &Table) -> Result<(), String> {
    write_atomic(path, |f| table.write_csv(f).map_err(|e| e.to_string()))
}

/// A figure computed and rendered, ready to be written.
#[derive(Debug, Clone)]
pub struct RenderedFigure {
    /// The data.
    pub table: Table,
    /// SVG document text.
    pub svg: String,
    /// PNG file bytes.
    pub png: Vec<u8>,
}

/// Writes the three files of a figure atomically (CSV first, then SVG, then PNG).
pub fn write_figure(paths: &FigurePaths, fig: &RenderedFigure) -> Result<(), String> {
    write_table(&paths.csv, &fig.table)?;
    write_bytes(&paths.svg, fig.svg.as_bytes())?;
    write_bytes(&paths.png, &fig.png)
}

/// Staging directories being filled; the signal handler removes them. The write phase
/// holds the lock, so an interrupt waits for a set being written and moved in to be
/// complete.
static STAGING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Installs (once) a SIGINT/SIGTERM handler that removes every staging directory and
/// exits with status 130, so an interrupted run leaves neither temporary files nor a
/// partial output set.
pub fn install_interrupt_cleanup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            let dirs = STAGING.lock().unwrap_or_else(|e| e.into_inner());
            for d in dirs.iter() {
                let _ = std::fs::remove_dir_all(d);
            }
            eprintln!("error: interrupted; no partial output set or temporary file left behind");
            std::process::exit(130);
        });
    });
}

/// Why `out` cannot receive the figures `ids` (a file where a directory must be, or a
/// directory where a file must be), checked before anything is computed.
pub fn check_out_dir(out: &Path, ids: &[&str]) -> Result<(), String> {
    for dir in out.ancestors().filter(|d| !d.as_os_str().is_empty()) {
        if dir.exists() {
            if !dir.is_dir() {
                return Err(format!("{} is not a directory", dir.display()));
            }
            break;
        }
    }
    for sub in ["data", "figures"] {
        let d = out.join(sub);
        if d.exists() && !d.is_dir() {
            return Err(format!("{} is in the way (not a directory)", d.display()));
        }
    }
    for id in ids {
        let p = FigurePaths::new(out, id);
        for f in [&p.csv, &p.svg, &p.png] {
            if f.is_dir() {
                return Err(format!(
                    "{} is a directory in the way of the output file",
                    f.display()
                ));
            }
        }
    }
    Ok(())
}

/// Writes every figure's files into a staging directory `out/.dpw-XXXXXX` and moves them
/// into `out/data` and `out/figures` only when all of them are written: a failure or an
/// interrupt leaves the previous outputs and no partial set (issue 15).
pub fn write_set(
    out: &Path,
    figures: &[(&str, &RenderedFigure)],
) -> Result<Vec<FigurePaths>, String> {
    install_interrupt_cleanup();
    std::fs::create_dir_all(out)
        .map_err(|e| format!("cannot create directory {}: {e}", out.display()))?;
    // The whole write phase holds the lock the signal handler takes: an interrupt waits
    // until the set is moved in (or the stage removed on failure). Removing the stage
    // while a writer is still creating files in it would let those files reappear.
    let mut staging = STAGING.lock().unwrap_or_else(|e| e.into_inner());
    let stage = tempfile::Builder::new()
        .prefix(".dpw-")
        .tempdir_in(out)
        .map_err(|e| {
            format!(
                "cannot create a staging directory in {}: {e}",
                out.display()
            )
        })?;
    staging.push(stage.path().to_path_buf());
    let result = (|| {
        for (id, fig) in figures {
            write_figure(&FigurePaths::new(stage.path(), id), fig)?;
        }
        // Nothing may stop a rename half-way through the set (e.g. a directory created
        // in the way while the figures were computed).
        let ids: Vec<&str> = figures.iter().map(|(id, _)| *id).collect();
        check_out_dir(out, &ids)?;
        for sub in ["data", "figures"] {
            let d = out.join(sub);
            std::fs::create_dir_all(&d)
                .map_err(|e| format!("cannot create directory {}: {e}", d.display()))?;
        }
        let mut done = Vec::new();
        for (id, _) in figures {
            let from = FigurePaths::new(stage.path(), id);
            let to = FigurePaths::new(out, id);
            for (a, b) in [
                (&from.csv, &to.csv),
                (&from.svg, &to.svg),
                (&from.png, &to.png),
            ] {
                std::fs::rename(a, b)
                    .map_err(|e| format!("cannot move {} into place: {e}", b.display()))?;
            }
            done.push(to);
        }
        Ok(done)
    })();
    staging.retain(|d| d != stage.path());
    // The stage (empty, or a failed set's files) goes before the lock is released.
    drop(stage);
    drop(staging);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/dir/file.txt");
        write_bytes(&path, b"one").unwrap();
        write_bytes(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let leftovers = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary files left behind");
    }

    #[test]
    fn failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        assert!(write_atomic(&path, |_| Err("boom".into())).is_err());
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    fn figure() -> RenderedFigure {
        let mut table = Table::new(Vec::new());
        table.push(crate::table::Row {
            panel: "a".into(),
            series: "s".into(),
            x: 1.0,
            y: 2.0,
            extra: Vec::new(),
        });
        RenderedFigure {
            table,
            svg: "<svg/>".into(),
            png: vec![1, 2, 3],
        }
    }

    #[test]
    fn a_set_is_moved_in_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let fig = figure();
        // A directory in the way of the second figure's PNG: nothing of the first moves in.
        std::fs::create_dir_all(dir.path().join("figures/f2.png")).unwrap();
        assert!(write_set(dir.path(), &[("f1", &fig), ("f2", &fig)]).is_err());
        assert!(!dir.path().join("data/f1.csv").exists());
        std::fs::remove_dir(dir.path().join("figures/f2.png")).unwrap();
        let paths = write_set(dir.path(), &[("f1", &fig), ("f2", &fig)]).unwrap();
        assert_eq!(std::fs::read(&paths[1].png).unwrap(), vec![1, 2, 3]);
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.starts_with(".dpw-")), "{names:?}");
    }

    #[test]
    fn paths_are_relative_for_dot() {
        let p = FigurePaths::new(Path::new("."), "fig1");
        assert_eq!(p.csv, PathBuf::from("data/fig1.csv"));
        assert_eq!(
            FigurePaths::new(Path::new("/o"), "f").png,
            PathBuf::from("/o/figures/f.png")
        );
    }
}
