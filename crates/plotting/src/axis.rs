//! One coordinate type for linear and log axes, with our own tick placement and labels
//! (decades as powers of ten on log axes, 1–2–5 steps on linear ones), so that every
//! combination of scales shares one chart type.

use crate::spec::Scale;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use std::ops::Range;

/// An axis range `[lo, hi]` with its scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axis {
    /// Lower end (data units).
    pub lo: f64,
    /// Upper end (data units).
    pub hi: f64,
    /// Scale.
    pub scale: Scale,
}

impl Axis {
    /// The transformed coordinate (log10 on log axes) in which the axis is linear.
    pub fn t(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log => v.log10(),
        }
    }

    /// Whether a data value can be drawn on this axis at all.
    pub fn admits(&self, v: f64) -> bool {
        v.is_finite() && (self.scale == Scale::Linear || v > 0.0)
    }

    /// Tick positions, at most about `max` of them.
    pub fn ticks(&self, max: usize) -> Vec<f64> {
        let max = max.max(2);
        match self.scale {
            Scale::Linear => linear_ticks(self.lo, self.hi, max),
            Scale::Log => log_ticks(self.lo, self.hi, max),
        }
    }
}

/// The axis range for data `values`, honouring fixed ends and padding a little.
pub fn fit(scale: Scale, values: &[f64], min: Option<f64>, max: Option<f64>) -> Axis {
    let admitted: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0))
        .collect();
    let (dlo, dhi) = admitted
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let (dlo, dhi) = if dlo.is_finite() {
        (dlo, dhi)
    } else {
        match scale {
            Scale::Linear => (0.0, 1.0),
            Scale::Log => (1.0, 10.0),
        }
    };
    let (lo, hi) = match scale {
        Scale::Linear => {
            let span = if dhi > dlo {
                dhi - dlo
            } else {
                dlo.abs().max(1.0)
            };
            (dlo - 0.05 * span, dhi + 0.05 * span)
        }
        Scale::Log => {
            let (a, b) = (dlo.log10(), dhi.log10());
            let span = if b > a { b - a } else { 1.0 };
            (10f64.powf(a - 0.05 * span), 10f64.powf(b + 0.05 * span))
        }
    };
    let lo = min.unwrap_or(lo);
    let mut hi = max.unwrap_or(hi);
    if hi <= lo {
        hi = match scale {
            Scale::Linear => lo + 1.0,
            Scale::Log => lo * 10.0,
        };
    }
    Axis { lo, hi, scale }
}

fn linear_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    let raw = (hi - lo) / max as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| (hi - lo) / s <= max as f64)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

fn log_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    let (a, b) = (lo.log10(), hi.log10());
    let first = a.ceil() as i64;
    let last = b.floor() as i64;
    let decades = last - first + 1;
    if decades >= 3 {
        let every = ((decades as f64) / max as f64).ceil().max(1.0) as i64;
        return (first..=last)
            .filter(|e| e.rem_euclid(every) == 0)
            .map(|e| 10f64.powi(e as i32))
            .collect();
    }
    // Two decades or less: add 2 and 5 (then 3) mantissas so that at least three ticks
    // show which way and how fast the axis runs.
    if decades == 2 {
        for mantissas in [&[1.0, 3.0][..], &[1.0, 2.0, 5.0][..]] {
            let t = mantissa_ticks(lo, hi, first, last, mantissas);
            if t.len() >= 3 && t.len() <= max {
                return t;
            }
        }
        return (first..=last).map(|e| 10f64.powi(e as i32)).collect();
    }
    // Less than two decades: 1-2-5 mantissas, then plain linear ticks if still too few.
    let ticks = mantissa_ticks(lo, hi, first, last, &[1.0, 2.0, 5.0]);
    if ticks.len() >= 3 {
        ticks
    } else {
        linear_ticks(lo, hi, max.min(6))
            .into_iter()
            .filter(|v| *v > 0.0)
            .collect()
    }
}

/// `m·10^e` for the mantissas `m`, inside `[lo, hi]`, ascending.
fn mantissa_ticks(lo: f64, hi: f64, first: i64, last: i64, mantissas: &[f64]) -> Vec<f64> {
    let mut ticks = Vec::new();
    for e in (first - 1)..=(last + 1) {
        for m in mantissas {
            let v = m * 10f64.powi(e as i32);
            if v >= lo * (1.0 - 1e-12) && v <= hi * (1.0 + 1e-12) {
                ticks.push(v);
            }
        }
    }
    ticks
}

/// One label format for all the ticks of an axis. On a log axis, when any power of ten
/// among them would be written `10ⁿ`, every power of ten is (`10⁻³, 10⁻², 10⁻¹, 10⁰`
/// rather than `10⁻³, 0.01, 0.1, 1`). On a linear axis, every tick is a plain decimal with
/// the same number of decimals (`0.001, 0, -0.001, -0.002`), or, for very large or very
/// small steps, scientific notation with one mantissa precision.
pub fn axis_labels(scale: Scale, ticks: &[f64]) -> impl Fn(f64) -> String {
    let powers = scale == Scale::Log && ticks.iter().any(|&v| is_far_power(v));
    let largest = ticks.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let decimals = ticks.iter().map(|&v| decimals_needed(v)).max().unwrap_or(0);
    let scientific = largest >= 1e5 || decimals > 6;
    move |v| match scale {
        Scale::Log if powers && is_power(v) => power_label(v),
        Scale::Log => tick_label(v),
        Scale::Linear if v == 0.0 => "0".into(),
        Scale::Linear if scientific => format!("{v:.1e}"),
        Scale::Linear => format!("{v:.decimals$}"),
    }
}

/// The fewest decimals (up to 7) that write `v` to 1e-9 relative.
fn decimals_needed(v: f64) -> usize {
    (0..=6)
        .find(|&prec| {
            format!("{v:.prec$}")
                .parse::<f64>()
                .is_ok_and(|back| (back - v).abs() <= 1e-9 * v.abs().max(1e-300))
        })
        .unwrap_or(7)
}

fn is_power(v: f64) -> bool {
    v != 0.0 && {
        let e = v.abs().log10().round();
        (v.abs() / 10f64.powf(e) - 1.0).abs() < 1e-9
    }
}

fn is_far_power(v: f64) -> bool {
    is_power(v) && !(-2.0..=3.0).contains(&v.abs().log10().round())
}

fn power_label(v: f64) -> String {
    let e = v.abs().log10().round();
    let digits: String = format!("{}", e.abs() as i64)
        .chars()
        .map(|c| SUPERSCRIPT[c.to_digit(10).unwrap_or(0) as usize])
        .collect();
    let sign = if v < 0.0 { "−" } else { "" };
    let minus = if e < 0.0 { "⁻" } else { "" };
    format!("{sign}10{minus}{digits}")
}

const SUPERSCRIPT: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];

/// A short tick label: powers of ten far from 1 as `10ⁿ`, other values with as few
/// digits as show the value.
pub fn tick_label(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if is_far_power(v) {
        return power_label(v);
    }
    if v.abs() >= 1e5 || v.abs() < 1e-3 {
        return format!("{v:.1e}");
    }
    // Shortest of a few fixed precisions that reproduces the value to 1e-9.
    for prec in 0..=6 {
        let s = format!("{v:.prec$}");
        if let Ok(back) = s.parse::<f64>() {
            if (back - v).abs() <= 1e-9 * v.abs().max(1e-300) {
                return s;
            }
        }
    }
    format!("{v}")
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let (a, b) = (self.t(self.lo), self.t(self.hi));
        let f = (self.t(*value) - a) / (b - a);
        let px = limit.0 as f64 + f * (limit.1 - limit.0) as f64;
        // Clamp far-out values so that clipped lines still point the right way.
        px.clamp(-1e6, 1e6).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        self.ticks(hint.max_num_points().clamp(2, 10))
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_are_decades_inside_the_range() {
        let a = Axis {
            lo: 50.0,
            hi: 2e10,
            scale: Scale::Log,
        };
        let t = a.ticks(10);
        assert_eq!(t.first().copied(), Some(100.0));
        assert!(t.iter().all(|v| *v >= 50.0 && *v <= 2e10));
        assert!(t.len() <= 10 && t.len() >= 4, "{t:?}");
    }

    #[test]
    fn narrow_log_range_still_gets_ticks() {
        let a = Axis {
            lo: 1.5,
            hi: 9.0,
            scale: Scale::Log,
        };
        assert!(a.ticks(6).len() >= 2);
    }

    #[test]
    fn linear_ticks_use_nice_steps() {
        let t = linear_ticks(0.0, 4.8, 6);
        assert_eq!(t, vec![0.0, 1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn log_axes_get_three_ticks_and_one_label_format() {
        for (lo, hi) in [
            (0.05, 20.0),
            (1.5, 9.0),
            (3.0, 250.0),
            (0.9, 110.0),
            (2e-4, 1.2),
        ] {
            let a = Axis {
                lo,
                hi,
                scale: Scale::Log,
            };
            let t = a.ticks(8);
            assert!(t.len() >= 3, "[{lo}, {hi}]: {t:?}");
            assert!(t.windows(2).all(|w| w[1] > w[0]), "{t:?}");
            assert!(t.iter().all(|v| *v >= lo && *v <= hi));
        }
        let f = axis_labels(Scale::Log, &[1e-3, 1e-2, 0.1, 1.0]);
        assert_eq!(
            [1e-3, 1e-2, 0.1, 1.0].map(&f),
            ["10⁻³", "10⁻²", "10⁻¹", "10⁰"].map(String::from)
        );
        let g = axis_labels(Scale::Log, &[100.0, 1e3, 1e4]);
        assert_eq!(g(100.0), "10²");
        let h = axis_labels(Scale::Log, &[0.1, 1.0, 10.0]);
        assert_eq!(
            (h(0.1), h(1.0), h(10.0)),
            ("0.1".into(), "1".into(), "10".into())
        );
        let t = [-0.002, -0.001, 0.0, 0.001];
        let l = axis_labels(Scale::Linear, &t);
        assert_eq!(
            t.map(&l),
            ["-0.002", "-0.001", "0", "0.001"].map(String::from)
        );
        let t = [0.0, 0.5, 1.0, 1.5];
        let l = axis_labels(Scale::Linear, &t);
        assert_eq!(t.map(&l), ["0", "0.5", "1.0", "1.5"].map(String::from));
    }

    #[test]
    fn labels() {
        assert_eq!(tick_label(1e-7), "10⁻⁷");
        assert_eq!(tick_label(1e10), "10¹⁰");
        assert_eq!(tick_label(100.0), "100");
        assert_eq!(tick_label(0.5), "0.5");
        assert_eq!(tick_label(2.5), "2.5");
    }

    #[test]
    fn fit_respects_fixed_ends_and_log_positivity() {
        let a = fit(Scale::Log, &[-1.0, 10.0, 1000.0], None, None);
        assert!(a.lo > 0.0 && a.lo < 10.0 && a.hi > 1000.0);
        let b = fit(Scale::Linear, &[1.0, 5.0], Some(0.0), None);
        assert_eq!(b.lo, 0.0);
        assert!(b.hi > 5.0);
    }
}
