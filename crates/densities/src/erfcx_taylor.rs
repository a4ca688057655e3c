//! Fast `erfcx`, `−erfcx′` and `erfcx(x) − erfcx(x + k)` on `[−1/2, 8]` from a table of
//! Taylor coefficients, for the Gaussian privacy profile (`gaussian.rs`; Balle & Wang
//! 2018, Theorem 8). The profile and its inverses evaluate these a few times per call,
//! and the continued fraction of [`crate::normal::erfcx`] needs 20 to 120 sequential
//! divisions on that range; a Horner sum of 12 terms is an order of magnitude faster.
//!
//! # Coefficients
//!
//! `erfcx(c + s) = Σₙ Tₙ(c) (−s)ⁿ` with `Tₙ(c) = 2ⁿ e^{c²} iⁿerfc(c)`, the repeated
//! integrals of erfc (Abramowitz & Stegun 7.2.1–7.2.5): `T₀ = erfcx(c)`,
//! `T₁ = 2/√π − 2c·erfcx(c) = −erfcx′(c)`, and `n Tₙ = 2Tₙ₋₂ − 2c Tₙ₋₁` (A&S 7.2.5).
//! For `c ≥ 1/2` the `Tₙ` are the recurrence's minimal solution, so forward use of it
//! loses digits; there the ratios `ρₙ = Tₙ/Tₙ₋₁ = 2/(2c + (n + 1)ρₙ₊₁)` are run backward
//! from deep enough (Miller's principle; `ρ₁ = −erfcx′/erfcx` is Laplace's continued
//! fraction again, at a depth four times the one [`crate::normal::erfcx`] uses). Below
//! `c = 1/2` the forward recurrence is well conditioned and `T₁` has no cancellation.
//! The table is built once (about a millisecond).
//!
//! Centres are `c = −1/2 + j/16`, `j = 0..=136`; every `x ∈ [−17/32, 8 + 1/32]` is within
//! `1/32` of one, where 12 terms leave a truncation below `1e-19` relative.

use std::f64::consts::FRAC_2_SQRT_PI;
use std::sync::OnceLock;

use crate::normal::{erfcx as erfcx_cf, neg_erfcx_deriv};

/// Number of Taylor terms kept per centre.
const TERMS: usize = 12;
/// First centre.
const LO: f64 = -0.5;
/// Centres per unit.
const PER_UNIT: f64 = 16.0;
/// Number of centres (`LO + 136/16 = 8`).
const CENTRES: usize = 137;

type Row = [f64; TERMS];

/// `[T₀(c), …, T₁₁(c)]` (module documentation).
fn coefficients(c: f64) -> Row {
    let mut t = [0.0; TERMS];
    t[0] = erfcx_cf(c);
    if c < 0.5 {
        t[1] = FRAC_2_SQRT_PI - 2.0 * c * t[0];
        for n in 2..TERMS {
            t[n] = (2.0 * t[n - 2] - 2.0 * c * t[n - 1]) / n as f64;
        }
    } else {
        let depth = (4.0 * (240.0 / (c * c) + 10.0)) as usize;
        let mut ratios = [0.0; TERMS];
        let mut rho = 0.0;
        for n in (1..=depth).rev() {
            rho = 2.0 / (2.0 * c + (n + 1) as f64 * rho);
            if n < TERMS {
                ratios[n] = rho;
            }
        }
        for n in 1..TERMS {
            t[n] = t[n - 1] * ratios[n];
        }
    }
    t
}

/// The coefficient rows and, per centre, the drop of `erfcx` across its whole cell
/// `[c − 1/32, c + 1/32]`.
struct Table {
    rows: Vec<Row>,
    across: Vec<f64>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let rows: Vec<Row> = (0..CENTRES).map(|j| coefficients(centre(j))).collect();
        let across = rows
            .iter()
            .enumerate()
            .map(|(j, t)| drop_in_cell(centre(j), t, centre(j) - HALF_CELL, 2.0 * HALF_CELL))
            .collect();
        Table { rows, across }
    })
}

/// Half the spacing of the centres.
const HALF_CELL: f64 = 0.5 / PER_UNIT;

/// The `j`-th centre (exact).
fn centre(j: usize) -> f64 {
    LO + j as f64 / PER_UNIT
}

/// The index of the centre nearest `x`, if `x` is inside the table.
fn index(x: f64) -> Option<usize> {
    // Round to nearest by truncation of a non-negative value (`f64::round` is a library
    // call on the baseline x86-64 target).
    let v = (x - LO) * PER_UNIT + 0.5;
    (0.0..CENTRES as f64).contains(&v).then_some(v as usize)
}

/// The centre nearest `x` and its coefficients, if `x` is inside the table.
fn cell(x: f64) -> Option<(f64, &'static Row)> {
    index(x).map(|j| (centre(j), &table().rows[j]))
}

/// `erfcx(x)`: the Taylor sum inside the table, [`crate::normal::erfcx`] outside.
pub(crate) fn erfcx(x: f64) -> f64 {
    match cell(x) {
        Some((c, t)) => {
            let p = c - x;
            t.iter().rev().fold(0.0, |acc, &tn| acc * p + tn)
        }
        None => erfcx_cf(x),
    }
}

/// `−erfcx′(x) = Σₙ n Tₙ(c) (c − x)ⁿ⁻¹` inside the table, the continued fraction outside.
pub(crate) fn neg_deriv(x: f64) -> f64 {
    match cell(x) {
        Some((c, t)) => {
            let p = c - x;
            (1..TERMS)
                .rev()
                .fold(0.0, |acc, n| acc * p + n as f64 * t[n])
        }
        None => neg_erfcx_deriv(x),
    }
}

/// `erfcx(x) − erfcx(x + w)` for `x` and `x + w` both within reach of the centre `c`:
/// `Σₙ Tₙ (pⁿ − qⁿ)` with `p = c − x`, `q = p − w`, written as `w Σₙ Tₙ Sₙ`,
/// `Sₙ = Σⱼ pʲ qⁿ⁻¹⁻ʲ` (`S₁ = 1`, `Sₙ = p Sₙ₋₁ + qⁿ⁻¹`), so the exact length `w`
/// multiplies a sum dominated by `T₁ > 0` and nothing cancels.
fn drop_in_cell(c: f64, t: &Row, x: f64, w: f64) -> f64 {
    let p = c - x;
    let q = p - w;
    let (mut s, mut qn) = (1.0, 1.0);
    let mut sum = t[1];
    for &tn in &t[2..] {
        qn *= q;
        s = p * s + qn;
        sum += tn * s;
    }
    w * sum
}

/// `erfcx(x) − erfcx(x + k)` for `k > 0`, `x ≥ −1/2`, as a sum of positive parts (so it
/// keeps full relative accuracy): the Taylor difference from `x` to the edge of its
/// cell, the tabulated drops across the whole cells in between, and the Taylor
/// difference into the cell of `x + k`. `None` if `x + k` leaves the table.
pub(crate) fn drop(x: f64, k: f64) -> Option<f64> {
    let mut j = index(x)?;
    let tab = table();
    let c = centre(j);
    let edge = c + HALF_CELL;
    if x + k <= edge {
        return Some(drop_in_cell(c, &tab.rows[j], x, k));
    }
    let first = edge - x;
    let mut sum = drop_in_cell(c, &tab.rows[j], x, first);
    let mut done = first;
    loop {
        j += 1;
        if j >= CENTRES {
            return None;
        }
        let rest = k - done;
        if rest <= 2.0 * HALF_CELL {
            let c = centre(j);
            return Some(sum + drop_in_cell(c, &tab.rows[j], c - HALF_CELL, rest));
        }
        sum += tab.across[j];
        done += 2.0 * HALF_CELL;
    }
}
