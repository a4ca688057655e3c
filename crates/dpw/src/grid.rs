//! `Grid`: an ordered set of parameter values, written in a manifest as an explicit list
//! `[1, 2, 3]`, as `{ logspace = [lo, hi], n = N }` (geometric, endpoints included; this
//! is numpy's `geomspace`, not its `logspace` of exponents) or as
//! `{ linspace = [lo, hi], n = N }`. Either table form may add `integer = true` to round
//! every point to the nearest integer (e.g. numbers of queries).
//!
//! Every grid is validated while it is read: non-empty, finite, strictly increasing;
//! `n ≥ 1`, and `n = 1` only when `lo == hi`. Errors carry the grid's key path.

use crate::ranges::show;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Largest number of points a generated grid may have: ten times the largest checked-in
/// grid; beyond it the slower kinds run for hours and the plot writers need gigabytes
/// (issue 15: `n = 1e6` ran out of memory in the SVG writer).
pub const MAX_POINTS: usize = 10_000;

/// A validated, strictly increasing, non-empty list of finite values.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    values: Vec<f64>,
}

impl Grid {
    /// Validates an explicit list of values.
    pub fn from_values(values: Vec<f64>) -> Result<Self, String> {
        if values.is_empty() {
            return Err("must not be empty (give at least one value)".into());
        }
        if values.len() > MAX_POINTS {
            return Err(format!(
                "must have at most {MAX_POINTS} values (the run-time and memory budget), got {}",
                values.len()
            ));
        }
        for (i, v) in values.iter().enumerate() {
            if !v.is_finite() {
                return Err(format!(
                    "values must be finite, got {} at index {i}",
                    show(*v)
                ));
            }
        }
        for (i, w) in values.windows(2).enumerate() {
            if w[1] <= w[0] {
                return Err(format!(
                    "must be strictly increasing, got {} at index {} after {} at index {}",
                    show(w[1]),
                    i + 1,
                    show(w[0]),
                    i
                ));
            }
        }
        Ok(Self { values })
    }

    /// `n` geometrically spaced points from `lo` to `hi` inclusive (`0 < lo ≤ hi`).
    pub fn logspace(lo: f64, hi: f64, n: usize) -> Result<Self, String> {
        check_range(lo, hi, n)?;
        if lo <= 0.0 {
            return Err(format!(
                "logspace endpoints must be > 0, got [{}, {}]",
                show(lo),
                show(hi)
            ));
        }
        // Interpolating base-10 exponents keeps decade grids exact (1e-7 … 1 gives 1e-6).
        let (a, b) = (lo.log10(), hi.log10());
        Self::from_values(spaced(lo, hi, n, |i, m| {
            10f64.powf(interpolate(a, b, i, m))
        }))
    }

    /// `n` evenly spaced points from `lo` to `hi` inclusive (`lo ≤ hi`).
    pub fn linspace(lo: f64, hi: f64, n: usize) -> Result<Self, String> {
        check_range(lo, hi, n)?;
        Self::from_values(spaced(lo, hi, n, |i, m| interpolate(lo, hi, i, m)))
    }

    /// The points, in increasing order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Always false: a grid has at least one point.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Rounds every point to the nearest integer; the result must stay strictly increasing.
    pub fn rounded(self) -> Result<Self, String> {
        let values = self.values.iter().map(|v| v.round()).collect();
        Self::from_values(values).map_err(|e| format!("after rounding to integers: {e}"))
    }
}

fn check_range(lo: f64, hi: f64, n: usize) -> Result<(), String> {
    if !lo.is_finite() || !hi.is_finite() {
        return Err(format!(
            "endpoints must be finite, got [{}, {}]",
            show(lo),
            show(hi)
        ));
    }
    if lo > hi {
        return Err(format!(
            "endpoints must satisfy lo <= hi, got [{}, {}]",
            show(lo),
            show(hi)
        ));
    }
    if n == 0 {
        return Err("n must be >= 1, got 0".into());
    }
    if n > MAX_POINTS {
        return Err(format!(
            "n must be in [1, {MAX_POINTS}] (the run-time and memory budget), got {n}"
        ));
    }
    if n == 1 && lo != hi {
        return Err(format!(
            "n = 1 needs lo == hi, got [{}, {}]",
            show(lo),
            show(hi)
        ));
    }
    if n > 1 && lo == hi {
        return Err(format!(
            "n = {n} needs lo < hi, got [{}, {}]",
            show(lo),
            show(hi)
        ));
    }
    Ok(())
}

/// `a + (b − a)·i/m`, computed as `(a·(m − i) + b·i)/m` so that integer data stay exact.
fn interpolate(a: f64, b: f64, i: usize, m: usize) -> f64 {
    (a * (m - i) as f64 + b * i as f64) / m as f64
}

/// Points `point(i, n − 1)` for `i = 0..n`, with both endpoints exactly `lo` and `hi`.
fn spaced(lo: f64, hi: f64, n: usize, point: impl Fn(usize, usize) -> f64) -> Vec<f64> {
    if n == 1 {
        return vec![lo];
    }
    (0..n)
        .map(|i| match i {
            0 => lo,
            _ if i == n - 1 => hi,
            _ => point(i, n - 1),
        })
        .collect()
}

impl<'de> Deserialize<'de> for Grid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(GridVisitor)
    }
}

struct GridVisitor;

const GRID_FORMS: &str =
    "a list of increasing numbers, { logspace = [lo, hi], n = N } or { linspace = [lo, hi], n = N }";

impl<'de> Visitor<'de> for GridVisitor {
    type Value = Grid;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(GRID_FORMS)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Grid, A::Error> {
        let mut values = Vec::new();
        while let Some(v) = seq.next_element::<f64>()? {
            values.push(v);
        }
        Grid::from_values(values).map_err(de::Error::custom)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Grid, A::Error> {
        let mut range: Option<(&'static str, [f64; 2])> = None;
        let mut n: Option<i64> = None;
        let mut integer = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "logspace" | "linspace" => {
                    let form = if key == "logspace" {
                        "logspace"
                    } else {
                        "linspace"
                    };
                    if let Some((other, _)) = range {
                        return Err(de::Error::custom(format!(
                            "give only one of logspace and linspace, got {other} and {form}"
                        )));
                    }
                    let ends: Vec<f64> = map.next_value()?;
                    let ends: [f64; 2] = ends.try_into().map_err(|v: Vec<f64>| {
                        de::Error::custom(format!(
                            "{form} must be [lo, hi] (two numbers), got {} numbers",
                            v.len()
                        ))
                    })?;
                    range = Some((form, ends));
                }
                "n" => n = Some(map.next_value()?),
                "integer" => integer = map.next_value()?,
                other => {
                    return Err(de::Error::custom(format!(
                    "unknown grid key `{other}`, expected `logspace`, `linspace`, `n` or `integer`"
                )))
                }
            }
        }
        let Some((form, [lo, hi])) = range else {
            return Err(de::Error::custom(format!(
                "a grid table needs logspace or linspace; a grid is {GRID_FORMS}"
            )));
        };
        let n = n.ok_or_else(|| {
            de::Error::custom(format!("{form} grid needs n (number of points >= 1)"))
        })?;
        let n = usize::try_from(n)
            .map_err(|_| de::Error::custom(format!("n must be >= 1, got {n}")))?;
        let grid = if form == "logspace" {
            Grid::logspace(lo, hi, n)
        } else {
            Grid::linspace(lo, hi, n)
        };
        let grid = grid.map_err(de::Error::custom)?;
        if integer {
            grid.rounded().map_err(de::Error::custom)
        } else {
            Ok(grid)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Holder {
        grid: Grid,
    }

    fn parse(src: &str) -> Result<Grid, String> {
        toml::from_str::<Holder>(&format!("grid = {src}\n"))
            .map(|h| h.grid)
            .map_err(|e| e.message().to_string())
    }

    #[test]
    fn explicit_list_keeps_order_and_accepts_integers() {
        assert_eq!(parse("[1, 2.5, 3]").unwrap().values(), &[1.0, 2.5, 3.0]);
    }

    #[test]
    fn logspace_is_geometric_with_exact_endpoints() {
        let g = parse("{ logspace = [1e2, 1e10], n = 8 }").unwrap();
        assert_eq!(g.len(), 8);
        assert_eq!(g.values()[0], 1e2);
        assert_eq!(g.values()[7], 1e10);
        let ratio = (1e8f64).powf(1.0 / 7.0);
        for w in g.values().windows(2) {
            assert!((w[1] / w[0] / ratio - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn decade_logspace_hits_powers_of_ten() {
        let g = parse("{ logspace = [1e-7, 1], n = 8 }").unwrap();
        let want: Vec<f64> = (0..8)
            .map(|i| [1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0][i])
            .collect();
        assert_eq!(g.values(), want.as_slice());
    }

    #[test]
    fn linspace_is_even_with_exact_endpoints() {
        let g = parse("{ linspace = [0, 1], n = 5 }").unwrap();
        assert_eq!(g.values(), &[0.0, 0.25, 0.5, 0.75, 1.0]);
    }

    #[test]
    fn single_point_only_when_endpoints_equal() {
        assert_eq!(
            parse("{ linspace = [2, 2], n = 1 }").unwrap().values(),
            &[2.0]
        );
        assert!(parse("{ linspace = [1, 2], n = 1 }")
            .unwrap_err()
            .contains("n = 1"));
        assert!(parse("{ linspace = [2, 2], n = 3 }").is_err());
    }

    #[test]
    fn integer_rounds_and_stays_increasing() {
        let g = parse("{ logspace = [1e2, 1e10], n = 8, integer = true }").unwrap();
        assert!(g.values().iter().all(|v| v.fract() == 0.0));
        assert_eq!(g.values()[1], 1389.0);
        assert!(parse("{ linspace = [1, 2], n = 5, integer = true }")
            .unwrap_err()
            .contains("rounding"));
    }

    #[test]
    fn rejects_bad_grids() {
        assert!(parse("[]").unwrap_err().contains("empty"));
        assert!(parse("[1, 3, 2]")
            .unwrap_err()
            .contains("strictly increasing"));
        assert!(parse("[1, 1]").unwrap_err().contains("strictly increasing"));
        assert!(parse("[1, nan]").unwrap_err().contains("finite"));
        assert!(parse("[1, inf]").unwrap_err().contains("finite"));
        assert!(parse("{ logspace = [0, 1], n = 3 }")
            .unwrap_err()
            .contains("> 0"));
        assert!(parse("{ logspace = [2, 1], n = 3 }")
            .unwrap_err()
            .contains("lo <= hi"));
        assert!(parse("{ linspace = [1, 2], n = 0 }")
            .unwrap_err()
            .contains(">= 1"));
        assert!(parse("{ linspace = [1, 2], n = -3 }")
            .unwrap_err()
            .contains(">= 1"));
        assert!(parse("{ linspace = [1, 2, 3], n = 3 }")
            .unwrap_err()
            .contains("two numbers"));
        assert!(parse("{ linspace = [1, 2] }")
            .unwrap_err()
            .contains("needs n"));
        assert!(parse("{ n = 3 }")
            .unwrap_err()
            .contains("logspace or linspace"));
        assert!(parse("{ linspace = [1, 2], n = 3, step = 1 }")
            .unwrap_err()
            .contains("unknown grid key"));
        assert!(parse("{ linspace = [1, 2], logspace = [1, 2], n = 3 }")
            .unwrap_err()
            .contains("only one"));
        assert!(parse("\"abc\"").is_err());
    }
}
