//! The claims of `figures.md`, asserted on the checked-in data (which `dpw check`, run in
//! CI, shows to be what the code computes).

use dpw::table::{Row, Table};
use std::path::PathBuf;

fn data(id: &str) -> Table {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data")
        .join(format!("{id}.csv"));
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
    rows.iter().find(|r| r.x == x).map(|r| r.y).unwrap()
}

#[test]
fn fig1_bounded_noise_flattens_and_wins_at_large_k() {
    let t = data("fig1");
    let bounded = series(&t, "a", "bounded");
    let p95 = series(&t, "a", "bounded_beta_0.05");
    let g95 = series(&t, "a", "gauss_beta_0.05");
    let g6 = series(&t, "a", "gauss_beta_0.000001");
    // Approaches a constant in k: flat within 1 % for k ≥ 1e4, near the paper's 4.8.
    let large: Vec<f64> = bounded.iter().filter(|r| r.x >= 1e4).map(|r| r.y).collect();
    assert!(large.len() >= 4);
    let (lo, hi) = large
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    assert!(hi / lo < 1.01 && lo > 4.5 && hi < 4.9, "{large:?}");
    // The 0.95 bound starts above the Gaussian 0.95 bound and crosses below it.
    let kmin = p95.iter().map(|r| r.x).fold(f64::MAX, f64::min);
    let kmax = p95.iter().map(|r| r.x).fold(f64::MIN, f64::max);
    assert!(at(&p95, kmin) > at(&g95, kmin));
    assert!(at(&p95, kmax) < at(&g95, kmax));
    // The absolute bound beats the high-confidence Gaussian bound at large k.
    assert!(at(&bounded, kmax) < at(&g6, kmax));
}
