//! Floating-point helpers of the whole accountant: sums in log space, the slack their
//! rounding costs, and bisection of monotone predicates.

/// The point where a monotone predicate turns: `left(m)` is true left of the root and
/// false right of it on `[lo, hi]`. Started from a guess `y0` (bracketed a hair around it,
/// widened by 16× until it brackets), the bisection ends on the same adjacent floats as
/// one from the whole range, in ~15 evaluations instead of ~70.
pub(crate) fn bracket_root(left: impl Fn(f64) -> bool, y0: f64, lo: f64, hi: f64) -> f64 {
    let (mut a, mut b) = (lo, hi);
    if y0.is_finite() && y0 > lo && y0 < hi {
        let mut h = 1e-12 * y0.abs().max(1.0);
        for _ in 0..40 {
            let (u, v) = ((y0 - h).max(lo), (y0 + h).min(hi));
            if (u == lo || left(u)) && (v == hi || !left(v)) {
                (a, b) = (u, v);
                break;
            }
            h *= 16.0;
        }
    }
    let (a, b) = bisect(left, a, b, 120);
    0.5 * (a + b)
}

/// `[a, b]` narrowed by at most `steps` halvings, keeping `left(a)` and `!left(b)` as
/// they were (`left` monotone), until the two ends are adjacent floats.
pub(crate) fn bisect(left: impl Fn(f64) -> bool, a: f64, b: f64, steps: usize) -> (f64, f64) {
    let (mut a, mut b) = (a, b);
    for _ in 0..steps {
        let m = 0.5 * (a + b);
        if m <= a || m >= b {
            break;
        }
        if left(m) {
            a = m;
        } else {
            b = m;
        }
    }
    (a, b)
}

/// Slack in the log for `ops` floating-point operations on logarithms of magnitude at most
/// `mag` (docs/accountant.md §5, "log-space rounding"): each rounds by at most `u·mag`,
/// an absolute error in the log and so a relative one in the mass; twice their sum, plus
/// one operation for adding the slack itself. Pessimistic masses are raised by it,
/// optimistic ones lowered: a mass near `e^{−700}` is only known to about `1.5e-13`
/// relative in its logarithm, far more than a fixed `8u`.
pub(crate) fn ln_round(ops: f64, mag: f64) -> f64 {
    let mag = if mag.is_finite() { mag.abs() } else { 0.0 };
    2.0 * (ops + 1.0) * (f64::EPSILON / 2.0) * (mag + 1.0)
}

/// Slack in the log for a value formed by a chain of sums and differences of logs (and
/// `exp`, `ln`, `ln_1p` of logs), given the magnitudes of the chain's inputs and of every
/// rounded intermediate result: each sum rounds by at most `u` times its own result,
/// each elementary function by about an ulp, and an error in an input's log is one in
/// the mass (list the final result twice: the slack's own addition rounds too). A
/// quarter more than their sum.
pub(crate) fn chain_rounding(values: &[f64]) -> f64 {
    let m: f64 = values
        .iter()
        .filter(|v| v.is_finite())
        .map(|v| v.abs())
        .sum();
    1.25 * (f64::EPSILON / 2.0) * (m + 2.0 * values.len() as f64 + 4.0)
}

/// Absolute error bound of a difference of two loss positions computed in floating
/// point, each at most `mag` in magnitude (`4u·mag`, twice the two roundings): the
/// split of an atom or cell between grid points uses `1 − e^{a − x}`, whose relative error
/// is this over `x − a`, so a step far below the losses' magnitude amplifies it.
pub(crate) fn position_round(mag: f64) -> f64 {
    let mag = if mag.is_finite() { mag.abs() } else { 0.0 };
    4.0 * f64::EPSILON * mag + f64::MIN_POSITIVE
}

/// `ln(e^a + e^b)` without overflow.
pub(crate) fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    if b == f64::NEG_INFINITY {
        return a;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}
