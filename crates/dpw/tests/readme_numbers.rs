//! The README's numbers outside its example commands, read from the checked-in data.
//!
//! `readme_examples.rs` holds the README's `console` blocks to the program's output. The
//! other numbers the README states (the gallery's captions) are computed here from
//! `data/*.csv` and formatted as the README prints them; each test asserts that the README
//! contains the phrase built from the data, so a regenerated CSV that moves a number fails
//! here with the phrase to paste. The README is also held to a page (at most
//! `MAX_README_LINES` lines), without timing tables (docs/speed.md holds them), and to a
//! gallery row for every manifest.
//!
//! fig24's fixed-size replace-one series (`fixed_replace_one`) feeds the fig24 caption:
//! when its data is regenerated, the failure message prints the caption's new wording.
//! (`claims.rs`'s fig24 test holds the same caption's phrases, and docs/figures.md's, to the
//! data's certified ends.)

use dpw::table::{Row, Table};
use std::path::{Path, PathBuf};

const MAX_README_LINES: usize = 300;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn text(rel: &str) -> String {
    let path = repo_root().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `data/ID.csv`, or from the directory `DPW_README_DATA` names (to check the README against
/// another set, e.g. the committed CSVs while the working tree's are being regenerated).
fn data(id: &str) -> Table {
    let dir = std::env::var_os("DPW_README_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("data"));
    let path = dir.join(format!("{id}.csv"));
    Table::read_csv(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn series<'a>(t: &'a Table, panel: &str, series: &str) -> Vec<&'a Row> {
    let v: Vec<&Row> = t
        .rows()
        .iter()
        .filter(|r| r.panel == panel && r.series == series)
        .collect();
    assert!(!v.is_empty(), "no rows for {panel}/{series}");
    v
}

fn at(rows: &[&Row], x: f64) -> f64 {
    rows.iter()
        .find(|r| r.x == x)
        .map(|r| r.y)
        .unwrap_or_else(|| panic!("no row at x = {x}"))
}

/// Two significant digits, as the captions print ratios and percentages: 1.3, 7.5, 13, 52.
fn sig2(v: f64) -> String {
    assert!(v > 0.0 && v.is_finite(), "{v}");
    if format!("{v:.0}").len() >= 2 {
        format!("{v:.0}")
    } else if v >= 0.95 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `lo–hi` of the values, each to two significant digits.
fn range2(values: &[f64]) -> String {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{}–{}", sig2(lo), sig2(hi))
}

/// `lo–hi` of the values, each to whole units (percentages: 2–12).
fn range0(values: &[f64]) -> String {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{lo:.0}–{hi:.0}")
}

/// Superscript digits for `10ⁿ`.
fn power_of_ten(x: f64) -> String {
    let n = x.log10().round() as i32;
    assert!(
        (10f64.powi(n) / x - 1.0).abs() < 1e-9,
        "{x} is not a power of ten"
    );
    let sup = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let digits: String = n
        .to_string()
        .chars()
        .map(|c| sup[c.to_digit(10).unwrap() as usize])
        .collect();
    format!("10{digits}")
}

/// Fails with the phrase the data gives unless `file` contains it.
fn assert_states(file: &str, what: &str, phrase: &str) {
    let t = text(file);
    assert!(
        t.contains(phrase),
        "{file}: {what} should read (from the checked-in data):\n  {phrase}"
    );
}

/// fig24's series at the 7 numbers of epochs, by key.
struct Fig24 {
    poisson: Vec<f64>,
    replace_one: Vec<f64>,
    fixed_add_remove: Vec<f64>,
    fixed_replace_one_upper: Vec<f64>,
    balls_in_bins: Vec<f64>,
    shuffle: Vec<f64>,
}

fn fig24() -> Fig24 {
    let t = data("fig24");
    let y = |s: &str| -> Vec<f64> { series(&t, "main", s).iter().map(|r| r.y).collect() };
    let f = Fig24 {
        poisson: y("poisson_add_remove"),
        replace_one: y("poisson_replace_one"),
        fixed_add_remove: y("fixed_add_remove"),
        fixed_replace_one_upper: series(&t, "main", "fixed_replace_one")
            .iter()
            .map(|r| r.extra[1])
            .collect(),
        balls_in_bins: y("balls_in_bins"),
        shuffle: y("shuffle_lower_bound"),
    };
    for v in [
        &f.replace_one,
        &f.fixed_add_remove,
        &f.fixed_replace_one_upper,
        &f.balls_in_bins,
        &f.shuffle,
    ] {
        assert_eq!(v.len(), f.poisson.len());
    }
    f
}

fn ratios(num: &[f64], den: &[f64]) -> Vec<f64> {
    num.iter().zip(den).map(|(a, b)| a / b).collect()
}

#[test]
fn readme_is_at_most_a_page() {
    let n = text("README.md").lines().count();
    assert!(
        n <= MAX_README_LINES,
        "README.md has {n} lines, at most {MAX_README_LINES} allowed: move details to docs/"
    );
}

#[test]
fn readme_has_no_timing_tables() {
    // Speed tables live once, in docs/speed.md: no README table cell is a time.
    let readme = text("README.md");
    let timed: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with('|') && l.split('|').any(|c| c.trim().ends_with(" s")))
        .collect();
    assert!(
        timed.is_empty(),
        "README.md tables with times (docs/speed.md holds them):\n{}",
        timed.join("\n")
    );
}

#[test]
fn readme_gallery_shows_every_figure() {
    // Every manifest (experiments/ and extended/) has its gallery row, and no row names a
    // figure that has no manifest.
    let readme = text("README.md");
    let mut ids = Vec::new();
    for dir in ["experiments", "extended"] {
        for e in std::fs::read_dir(repo_root().join(dir)).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(id) = name.strip_suffix(".toml") {
                ids.push(id.to_string());
            }
        }
    }
    ids.sort();
    for id in &ids {
        let row = format!("<img src=\"figures/{id}.png\"");
        assert!(readme.contains(&row), "README.md's gallery lacks {id}");
        assert!(
            readme.contains(&format!("**{id}**")),
            "README.md's gallery lacks **{id}**"
        );
    }
    let rows = readme
        .lines()
        .filter(|l| l.contains("<img src=\"figures/"))
        .count();
    assert_eq!(rows, ids.len(), "gallery rows against manifests {ids:?}");
}

#[test]
fn readme_fig24_caption_from_the_data() {
    // The workload, as the manifest states it.
    let manifest = text("experiments/fig24.toml");
    for spec in ["sigma=1,batch=256,n=60000", "delta = 1e-5"] {
        assert!(manifest.contains(spec), "fig24.toml: {spec}");
    }
    let f = fig24();
    let fixed = range2(&ratios(&f.fixed_add_remove, &f.poisson));
    let fixed_ro_top = format!("{:.1}", f.fixed_replace_one_upper.last().unwrap());
    let ro = range2(&ratios(&f.replace_one, &f.poisson));
    let below: Vec<f64> = ratios(&f.balls_in_bins, &f.poisson)
        .iter()
        .map(|r| 100.0 * (1.0 - r))
        .collect();
    let shuffle: Vec<f64> = ratios(&f.shuffle, &f.poisson)
        .iter()
        .map(|r| 100.0 * r)
        .collect();
    let phrase = format!(
        "At n = 60000, B = 256, σ = 1, against Poisson sampling under add/remove: Poisson \
         with replace-one neighbours {ro}×; fixed-size batches cost {fixed}× Poisson's ε \
         (add/remove), and up to {fixed_ro_top} after 100 epochs under replace-one, where \
         the adversary can flip each step's pair; balls-in-bins batches get a certified bracket {} % below Poisson's ε; \
         shuffled epochs only a certified lower bound ({} % of Poisson's claim).",
        range0(&below),
        range0(&shuffle)
    );
    assert_states("README.md", "the fig24 caption", &phrase);
}

#[test]
fn readme_fig2_caption_from_the_data() {
    let t = data("fig2");
    let b = series(&t, "main", "bounded");
    let g = series(&t, "main", "gaussian");
    let ratio = |n: f64| at(&b, n) / at(&g, n);
    // The first n from which bounded noise answers more at every n plotted.
    let ns: Vec<f64> = b.iter().map(|r| r.x).collect();
    let from = ns
        .iter()
        .copied()
        .find(|&n| ns.iter().filter(|&&m| m >= n).all(|&m| ratio(m) > 1.0))
        .expect("bounded noise leads at the largest n");
    let largest = *ns.last().unwrap();
    let phrase = format!(
        "bounded noise answers more from n = {} on ({:.2}× as many at n = {}).",
        power_of_ten(from),
        ratio(largest),
        power_of_ten(largest)
    );
    assert_states("README.md", "the fig2 caption", &phrase);
}

#[test]
fn readme_fig3_caption_from_the_data() {
    let t = data("fig3");
    let c = series(&t, "main", "classical_delta_1e-2");
    let a = series(&t, "main", "analytic_delta_1e-2");
    let eps = c.iter().map(|r| r.x).fold(f64::INFINITY, f64::min);
    assert_eq!(eps, 1e-4, "fig3's smallest ε");
    let phrase = format!(
        "at ε = 1e-4 the analytic σ is {:.0}× smaller for δ = 1e-2.",
        at(&c, eps) / at(&a, eps)
    );
    assert_states("README.md", "the fig3 caption", &phrase);
}

#[test]
fn readme_fig14_caption_from_the_data() {
    let t = data("fig14");
    let most = t
        .rows()
        .iter()
        .map(|r| r.y)
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(t.rows().iter().all(|r| r.y >= 1.0 - 1e-12));
    let phrase = format!(
        "the order matters, by up to {:.1} % in δ.",
        100.0 * (most - 1.0)
    );
    assert_states("README.md", "the fig14 caption", &phrase);
}

#[test]
fn readme_fig23_caption_from_the_data() {
    let t = data("fig23");
    let mut gaps = Vec::new();
    for panel in ["eps_8", "eps_1"] {
        for q in ["0.001", "0.01", "0.1"] {
            let exact = series(&t, panel, &format!("q_{q}"));
            let rdp = series(&t, panel, &format!("rdp_q_{q}"));
            assert_eq!(exact.len(), rdp.len());
            for (e, r) in exact.iter().zip(&rdp) {
                assert_eq!(e.x, r.x);
                gaps.push(100.0 * (1.0 - e.y / r.y));
            }
        }
    }
    assert!(gaps.iter().all(|&g| g > 0.0), "a certified σ above RDP's");
    let phrase = format!(
        "the certified σ is {} % below RDP's at every point.",
        range2(&gaps)
    );
    assert_states("README.md", "the fig23 caption", &phrase);
}

#[test]
fn formatting_helpers() {
    assert_eq!(sig2(1.347), "1.3");
    assert_eq!(sig2(7.49), "7.5");
    assert_eq!(sig2(12.8), "13");
    assert_eq!(sig2(3.2), "3.2");
    assert_eq!(sig2(0.52), "0.52");
    assert_eq!(sig2(9.96), "10");
    assert_eq!(range0(&[1.897, 11.93, 5.0]), "2–12");
    assert_eq!(range2(&[12.8, 7.49, 9.0]), "7.5–13");
    assert_eq!(power_of_ten(1e5), "10⁵");
    assert_eq!(power_of_ten(1e8), "10⁸");
}
