//! Schedules: DP-SGD whose noise σ or sampling rate q changes between steps, as a list of
//! segments `(σ, q, count)` of the Poisson-subsampled Gaussian (docs/accountant.md §2.8).
//!
//! Each distinct `(σ, q)` is one law for the accountant, and a law costs a discretisation
//! and a transform however few steps use it. Past [`MAX_EXACT_LAWS`] distinct pairs the
//! schedule is accounted through two rounded schedules on a geometric lattice of ratio
//! `1 + ρ`: σ rounded down and q rounded up for the upper end (each step then leaks at
//! least as much: a smaller σ is the larger one's output with less added noise, a larger
//! q samples a superset), σ up and q down for the lower end. Both ends stay certified;
//! the rounding widens the bracket by about ρ times the sensitivity of ε to σ.

use super::spec::{MechanismSpec, SpecError};

/// One segment of a schedule: `count` steps of the Poisson-subsampled Gaussian with
/// noise multiplier `sigma` (sensitivity 1) and rate `q`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// σ > 0.
    pub sigma: f64,
    /// q ∈ [1e-9, 1].
    pub q: f64,
    /// Steps, ≥ 1.
    pub count: u64,
}

/// Most segments a schedule may have.
pub const MAX_SEGMENTS: usize = 1_000_000;

/// Most distinct `(σ, q)` pairs accounted exactly; beyond, the lattice of the module doc.
pub const MAX_EXACT_LAWS: usize = 256;

/// A schedule file's error: the 1-based line, the key (column) and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleError {
    /// Line of the file (1 = the header).
    pub line: usize,
    /// The column (`sigma`, `q`, `count`) or `header`/`rows`.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// Parses a schedule CSV: a header `sigma,q,count` (in any order), then one segment a
/// row; blank lines and lines starting with `#` are skipped.
///
/// ```
/// use composition::accountant::schedule::parse_csv;
/// let s = parse_csv("sigma,q,count\n1.0,0.01,100\n0.9,0.01,50\n").unwrap();
/// assert_eq!(s.len(), 2);
/// assert_eq!(parse_csv("sigma,q,count\n1,2,3\n").unwrap_err().key, "q");
/// ```
pub fn parse_csv(text: &str) -> Result<Vec<Segment>, ScheduleError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let err = |line: usize, key: &str, message: String| ScheduleError {
        line,
        key: key.to_string(),
        message,
    };
    let Some((hline, header)) = lines.next() else {
        return Err(err(
            1,
            "header",
            "the file is empty: expected a header sigma,q,count".into(),
        ));
    };
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let find = |name: &str| cols.iter().position(|c| *c == name);
    let (Some(is), Some(iq), Some(ic)) = (find("sigma"), find("q"), find("count")) else {
        return Err(err(
            hline,
            "header",
            format!("expected the columns sigma,q,count, got '{header}'"),
        ));
    };
    if cols.len() != 3 {
        return Err(err(
            hline,
            "header",
            format!("expected exactly the columns sigma,q,count, got '{header}'"),
        ));
    }
    let mut out = Vec::new();
    let mut total: u64 = 0;
    for (line, row) in lines {
        let cells: Vec<&str> = row.split(',').map(str::trim).collect();
        if cells.len() != 3 {
            return Err(err(
                line,
                "row",
                format!("expected 3 values (sigma,q,count), got {}", cells.len()),
            ));
        }
        let num = |i: usize, key: &str| -> Result<f64, ScheduleError> {
            cells[i]
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| err(line, key, format!("'{}' is not a finite number", cells[i])))
        };
        let sigma = num(is, "sigma")?;
        if !(sigma > 0.0 && sigma <= 1e300) {
            return Err(err(
                line,
                "sigma",
                format!("{sigma} is outside the allowed range (0, 1e300]"),
            ));
        }
        let q = num(iq, "q")?;
        if !(1e-9..=1.0).contains(&q) {
            return Err(err(
                line,
                "q",
                format!("{q} is outside the allowed range [1e-9, 1]"),
            ));
        }
        let c = num(ic, "count")?;
        if !(c >= 1.0 && c <= super::MAX_COUNT as f64 && c.fract() == 0.0) {
            return Err(err(
                line,
                "count",
                format!(
                    "{} is outside the allowed range: an integer in [1, 1e10]",
                    cells[ic]
                ),
            ));
        }
        total = total.saturating_add(c as u64);
        if total > super::MAX_COUNT {
            return Err(err(
                line,
                "count",
                "the schedule's steps add up to more than 1e10".into(),
            ));
        }
        // The SPEC language's own checks (e.g. 1/σ in [1e-6, 50]), named by this line.
        let seg = Segment {
            sigma,
            q,
            count: c as u64,
        };
        if let Err(e) = spec_of(&seg) {
            return Err(err(line, "sigma", e.0));
        }
        if out.len() == MAX_SEGMENTS {
            return Err(err(
                line,
                "rows",
                format!("more than {MAX_SEGMENTS} segments"),
            ));
        }
        out.push(seg);
    }
    if out.is_empty() {
        return Err(err(hline, "rows", "no segments after the header".into()));
    }
    Ok(out)
}

/// A schedule ready for the accountant: the specs whose composition bounds the true one
/// from above (`upper`) and from below (`lower`; the same as `upper` when no rounding was
/// needed), and the lattice ratio used (`None`: exact).
#[derive(Debug, Clone)]
pub struct Accounted {
    /// Specs whose certified upper end bounds the schedule's ε (or δ) from above.
    pub upper: Vec<MechanismSpec>,
    /// Specs whose certified lower end bounds it from below.
    pub lower: Vec<MechanismSpec>,
    /// `ρ` of the lattice `(1 + ρ)^k`, or `None` when every distinct `(σ, q)` is its own law.
    pub ratio: Option<f64>,
    /// Distinct `(σ, q)` pairs of the schedule as given.
    pub distinct: usize,
    /// Total steps.
    pub steps: u64,
}

impl Accounted {
    /// The accuracy to ask the accountant for at each end, given the one `asked`: no finer
    /// than the lattice ratio ρ (capped at 1e-2) when the schedule was rounded, since the
    /// rounding already costs about ρ of width (docs/accountant.md §2.8).
    pub fn end_accuracy(&self, asked: f64) -> f64 {
        match self.ratio {
            Some(rho) => asked.max(rho.min(0.01)),
            None => asked,
        }
    }
}

/// Segments merged by equal `(σ, q)` (counts added), in order of first appearance.
fn merged(segments: &[Segment]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for s in segments {
        let key = (s.sigma.to_bits(), s.q.to_bits());
        match index.get(&key) {
            Some(&i) => {
                let m: &mut Segment = &mut out[i];
                m.count += s.count;
            }
            None => {
                index.insert(key, out.len());
                out.push(*s);
            }
        }
    }
    out
}

/// `x` rounded onto the lattice `(1 + ρ)^k`: down (`up = false`) or up, exactly (the
/// lattice point computed, then moved a step if floating point put it on the wrong side).
fn to_lattice(x: f64, rho: f64, up: bool) -> f64 {
    let b = (1.0 + rho).ln();
    let k = (x.ln() / b).floor() as i32;
    let at = |k: i32| (k as f64 * b).exp();
    if up {
        let mut k = k;
        while at(k) < x {
            k += 1;
        }
        at(k)
    } else {
        let mut k = k + 1;
        while at(k) > x {
            k -= 1;
        }
        at(k)
    }
}

fn spec_of(s: &Segment) -> Result<MechanismSpec, SpecError> {
    format!(
        "subsampled-gaussian:sigma={:?},q={:?},count={}",
        s.sigma, s.q, s.count
    )
    .parse()
}

fn specs(segments: &[Segment]) -> Result<Vec<MechanismSpec>, SpecError> {
    segments.iter().map(spec_of).collect()
}

/// The schedule as compositions for the accountant: exact up to `max_laws` distinct
/// `(σ, q)` (default [`MAX_EXACT_LAWS`]), otherwise rounded onto the finest lattice
/// `ρ = accuracy/8 · 2^i` that leaves at most `max_laws` laws on each side.
///
/// ```
/// use composition::accountant::schedule::{accounted, Segment};
/// let s: Vec<Segment> = (0..100)
///     .map(|i| Segment { sigma: 1.0 + i as f64 / 100.0, q: 0.01, count: 10 })
///     .collect();
/// let a = accounted(&s, 1e-3, 16).unwrap();
/// assert!(a.ratio.is_some() && a.upper.len() <= 16 && a.steps == 1000);
/// ```
pub fn accounted(
    segments: &[Segment],
    accuracy: f64,
    max_laws: usize,
) -> Result<Accounted, SpecError> {
    let exact = merged(segments);
    let steps = segments.iter().map(|s| s.count).sum();
    let distinct = exact.len();
    if distinct <= max_laws.max(1) {
        let s = specs(&exact)?;
        return Ok(Accounted {
            upper: s.clone(),
            lower: s,
            ratio: None,
            distinct,
            steps,
        });
    }
    let round = |rho: f64, up_side: bool| -> Vec<Segment> {
        merged(
            &exact
                .iter()
                .map(|s| {
                    // Upper end: σ down, q up (each step leaks at least as much).
                    let r = Segment {
                        sigma: to_lattice(s.sigma, rho, !up_side),
                        q: to_lattice(s.q, rho, up_side).min(1.0),
                        count: s.count,
                    };
                    // A lattice point outside the SPEC ranges (q below 1e-9, σ past the
                    // shift limit): that segment stays as given, exact on both sides.
                    if spec_of(&r).is_ok() {
                        r
                    } else {
                        *s
                    }
                })
                .collect::<Vec<_>>(),
        )
    };
    let mut rho = (accuracy / 8.0).max(1e-9);
    loop {
        let (u, l) = (round(rho, true), round(rho, false));
        if (u.len() <= max_laws && l.len() <= max_laws) || rho >= 1.0 {
            return Ok(Accounted {
                upper: specs(&u)?,
                lower: specs(&l)?,
                ratio: Some(rho),
                distinct,
                steps,
            });
        }
        rho *= 2.0;
    }
}
