//! Optimal δ of a fixed order of adaptively chosen DP and BR mechanisms (Cesar & Rogers,
//! Lemma 5.1, from Dong–Durfee–Rogers 2019; docs/maths.md §3.3), as a recursion over the
//! remaining budget `x`:
//!
//! - `D_∅(x) = (1 − e^x)_+`;
//! - ε-DP first: `D(x) = q·D_rest(x − ε) + (1 − q)·D_rest(x + ε)`, `q = e^ε/(1+e^ε)`;
//! - ε-BR first: `D(x) = max_{t∈[0,ε]} [p_t·D_rest(x − t) + (1 − p_t)·D_rest(x + ε − t)]`,
//!   `p_t = (e^ε − e^t)/(e^ε − 1)`;
//! - `δ(ε_g) = D(ε_g)`.
//!
//! The maximum sits *inside* each BR step, so the analyst's `t` may depend on the history.
//! Each mechanism has its own ε (heterogeneous sequences are allowed).
//!
//! # Computation
//! Consecutive DP mechanisms are merged into one discrete loss distribution (exact
//! convolution; atoms closer than 1e-12·Σε are merged), so a run of `r` DP mechanisms
//! costs `r + 1` calls, not `2^r`. For the last BR step (nothing or only DP mechanisms
//! after it) the maximum over `t` is exact: between the kinks `t = x − L`, `t = x + ε − L`
//! (`L` an atom of the rest) the objective is `α + βe^t + γe^{−t}` with `β, γ ≤ 0`, so each
//! piece has a closed-form maximiser (see `br_max_last`). For earlier BR steps the
//! objective contains the later maxima; there a uniform scan of 33 points seeds Brent
//! (argmin) around the two best local maxima. Two exact shortcuts: `D(x) = 0` when `x` is
//! at least the largest possible remaining loss, and `D(x) = 1 − e^x` when `x ≤ −Σε`
//! (every hinge active, and `E_P e^{−L} = 1` under any strategy). The cost is exponential
//! in the number of BR steps (about 100 objective evaluations per earlier BR level), so at
//! most [`MAX_ADAPTIVE_BR`] BR mechanisms are accepted.

use super::dp::rr_probs;
use super::invert::{at_or_below, invert_decreasing};
use super::optimize::{maximize_ln, uniform_seeds};
use super::worst_case::gen_rr_probs;
use crate::error::{check_delta, check_eps, check_eps_g, out_of_range, CompositionError, Result};

/// Largest number of BR mechanisms accepted by [`adaptive_delta`] (the recursion is
/// exponential in it).
pub const MAX_ADAPTIVE_BR: usize = 4;

/// Scan intervals on `[0, ε]` inside each BR step.
const SCAN: usize = 32;

/// One mechanism of an adaptive sequence, with its own privacy parameter.
///
/// ```
/// use composition::Mechanism;
/// let seq = [Mechanism::Br(0.5), Mechanism::Dp(0.5)];
/// assert_eq!(seq[0].epsilon(), 0.5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mechanism {
    /// An ε-DP mechanism (worst case: randomized response).
    Dp(f64),
    /// An ε-BR mechanism (worst case: generalized randomized response, `t` chosen by the
    /// analyst from the history).
    Br(f64),
}

impl Mechanism {
    /// Its ε.
    pub fn epsilon(&self) -> f64 {
        match *self {
            Mechanism::Dp(e) | Mechanism::Br(e) => e,
        }
    }
}

/// A compiled step: a merged run of DP mechanisms (atoms `(loss, P-probability)`), or one
/// BR mechanism.
enum Step {
    Dp(Vec<(f64, f64)>),
    Br(f64),
}

struct Program {
    steps: Vec<Step>,
    /// `sup_loss[s]`: the largest total loss of steps `s..` (BR contributes < ε).
    sup_loss: Vec<f64>,
    /// `total_eps[s]`: `Σ ε` over steps `s..`, so every loss of the suffix is `≥ −total_eps`.
    total_eps: Vec<f64>,
}

fn dp_run(eps_list: &[f64]) -> Vec<(f64, f64)> {
    let tol = 1e-12 * eps_list.iter().sum::<f64>();
    let mut atoms = vec![(0.0f64, 1.0f64)];
    for &e in eps_list {
        let (minus, plus) = rr_probs(e);
        let mut next = Vec::with_capacity(2 * atoms.len());
        for &(l, p) in &atoms {
            next.push((l + e, p * plus));
            next.push((l - e, p * minus));
        }
        next.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut merged: Vec<(f64, f64)> = Vec::with_capacity(next.len());
        for (l, p) in next {
            match merged.last_mut() {
                Some(last) if (l - last.0).abs() <= tol => last.1 += p,
                _ => merged.push((l, p)),
            }
        }
        atoms = merged;
    }
    atoms
}

impl Program {
    fn compile(seq: &[Mechanism]) -> Self {
        let mut steps = Vec::new();
        let mut run: Vec<f64> = Vec::new();
        for m in seq {
            match *m {
                Mechanism::Dp(e) => run.push(e),
                Mechanism::Br(e) => {
                    if !run.is_empty() {
                        steps.push(Step::Dp(dp_run(&run)));
                        run.clear();
                    }
                    steps.push(Step::Br(e));
                }
            }
        }
        if !run.is_empty() {
            steps.push(Step::Dp(dp_run(&run)));
        }
        let n = steps.len();
        let mut sup_loss = vec![0.0; n + 1];
        let mut total_eps = vec![0.0; n + 1];
        for s in (0..n).rev() {
            let (sup, tot) = match &steps[s] {
                Step::Dp(atoms) => {
                    let hi = atoms.last().map_or(0.0, |a| a.0);
                    let lo = atoms.first().map_or(0.0, |a| a.0);
                    (hi, -lo)
                }
                Step::Br(e) => (*e, *e),
            };
            sup_loss[s] = sup_loss[s + 1] + sup;
            total_eps[s] = total_eps[s + 1] + tot;
        }
        Self {
            steps,
            sup_loss,
            total_eps,
        }
    }

    /// `D_s(x)`: optimal δ of steps `s..` at remaining budget `x`.
    fn d(&self, s: usize, x: f64) -> f64 {
        if x >= self.sup_loss[s] {
            return 0.0;
        }
        if x <= -self.total_eps[s] || s == self.steps.len() {
            // Every hinge is active (or no step is left): 1 − e^x·E_P[e^{−L}] = 1 − e^x.
            return if x < 0.0 { -x.exp_m1() } else { 0.0 };
        }
        match &self.steps[s] {
            Step::Dp(atoms) => atoms.iter().map(|&(l, p)| p * self.d(s + 1, x - l)).sum(),
            Step::Br(eps) => self.br_max(s, *eps, x),
        }
    }

    /// `max_t [p_t D(x − t) + (1 − p_t) D(x + ε − t)]` for the BR step `s`.
    fn br_max(&self, s: usize, eps: f64, x: f64) -> f64 {
        match self.steps.get(s + 1) {
            None => br_max_last(eps, x, &[(0.0, 1.0)]),
            Some(Step::Dp(atoms)) if s + 2 == self.steps.len() => br_max_last(eps, x, atoms),
            _ => self.br_max_scan(s, eps, x),
        }
    }

    /// The BR maximum when later steps contain BR mechanisms: uniform scan of the part of
    /// `[0, ε]` where the objective can be positive, then Brent (argmin) around the two
    /// best local maxima.
    fn br_max_scan(&self, s: usize, eps: f64, x: f64) -> f64 {
        let g = |t: f64| {
            let (theta, p, _) = gen_rr_probs(eps, t);
            let mut v = 0.0;
            if p > 0.0 {
                v += p * self.d(s + 1, x - t);
            }
            if theta > 0.0 {
                v += theta * self.d(s + 1, x + eps - t);
            }
            v.ln()
        };
        // Both terms vanish for t ≤ x − sup(rest) (the rest's δ is 0 at or above its
        // largest loss): scan only where the objective can be positive. Near the total ε
        // that window is a sliver next to t = ε which a scan of all of [0, ε] steps over,
        // returning δ = 0 where δ > 0 (the unsafe direction).
        let t0 = (x - self.sup_loss[s + 1]).max(0.0);
        let seeds: Vec<f64> = uniform_seeds(eps - t0, SCAN)
            .into_iter()
            .map(|t| t0 + t)
            .collect();
        maximize_ln(&g, seeds, 2).1.exp()
    }
}

/// `g(t) = p_t Σ_j π_j (1 − e^{x−t−L_j})_+ + (1 − p_t) Σ_j π_j (1 − e^{x+ε−t−L_j})_+`: the
/// BR objective when the rest of the sequence is the DP atoms `(L_j, π_j)` (or nothing).
fn last_br_objective(eps: f64, x: f64, atoms: &[(f64, f64)], t: f64) -> f64 {
    let (theta, p, _) = gen_rr_probs(eps, t);
    let hinge = |y: f64| if y < 0.0 { -y.exp_m1() } else { 0.0 };
    atoms
        .iter()
        .map(|&(l, w)| w * (p * hinge(x - t - l) + theta * hinge(x + eps - t - l)))
        .sum()
}

/// Exact maximum over `t` of [`last_br_objective`]. Between consecutive kinks
/// (`t = x − L_j` or `t = x + ε − L_j`) the active sets `A₂ ⊆ A₁` of the two branches are
/// fixed and, with `D = e^ε − 1`, `C_r = Σ_{A_r} π_j`, `E_r = Σ_{A_r} π_j e^{−L_j}`,
///
/// `D·g(t) = const + (C₂ − C₁) e^t + e^{x+ε}(E₂ − E₁) e^{−t}`,
///
/// a concave function (both coefficients ≤ 0) with its maximum at
/// `t* = ½ (x + ε + ln((E₁ − E₂)/(C₁ − C₂)))`. So the maximum is at a kink, an end, or a
/// clipped `t*` of some piece: all are evaluated.
fn br_max_last(eps: f64, x: f64, atoms: &[(f64, f64)]) -> f64 {
    let mut knots = vec![0.0, eps];
    for &(l, _) in atoms {
        for t in [x - l, x + eps - l] {
            if t > 0.0 && t < eps {
                knots.push(t);
            }
        }
    }
    knots.sort_by(f64::total_cmp);
    knots.dedup();
    let mut cands = knots.clone();
    for w in knots.windows(2) {
        let mid = 0.5 * (w[0] + w[1]);
        let (mut dc, mut de) = (0.0, 0.0);
        for &(l, pi) in atoms {
            // In A₁ but not in A₂: x − mid < l ≤ x + ε − mid.
            if l > x - mid && l <= x + eps - mid {
                dc += pi;
                de += pi * (-l).exp();
            }
        }
        if dc > 0.0 && de > 0.0 {
            let t = 0.5 * (x + eps + (de / dc).ln());
            cands.push(t.clamp(w[0], w[1]));
        }
    }
    cands
        .into_iter()
        .map(|t| last_br_objective(eps, x, atoms, t))
        .fold(0.0, f64::max)
}

fn validate(seq: &[Mechanism]) -> Result<()> {
    if seq.is_empty() {
        return Err(CompositionError::Empty {
            name: "mechanism sequence",
        });
    }
    for m in seq {
        check_eps("epsilon", m.epsilon())?;
    }
    let n_br = seq.iter().filter(|m| matches!(m, Mechanism::Br(_))).count();
    if n_br > MAX_ADAPTIVE_BR {
        return Err(out_of_range(
            "number of BR mechanisms",
            n_br as f64,
            "[0, 4] (the recursion is exponential in it)",
        ));
    }
    Ok(())
}

/// Optimal δ(ε_g) of the sequence `seq` of ε-DP and ε-BR mechanisms, each selected
/// adaptively, in this fixed order (first element first) (Cesar–Rogers Lemma 5.1;
/// docs/maths.md §3.3). All-DP sequences give docs/maths.md §3.1; a single BR mechanism in
/// any position gives Theorem 3 with `m = 1` (Cesar–Rogers Corollary 5.1).
///
/// ```
/// use composition::{adaptive_delta, mixed_delta, Mechanism::{Br, Dp}};
/// let a = adaptive_delta(&[Dp(0.5), Br(0.5), Dp(0.5)], 0.4).unwrap();
/// let b = mixed_delta(2, 1, 0.5, 0.4).unwrap();
/// assert!((a / b - 1.0).abs() < 1e-9);
/// ```
pub fn adaptive_delta(seq: &[Mechanism], eps_g: f64) -> Result<f64> {
    validate(seq)?;
    check_eps_g(eps_g)?;
    Ok(Program::compile(seq).d(0, eps_g))
}

/// Least `ε_g` with [`adaptive_delta`]`(seq, ε_g) ≤ δ` (Cesar–Rogers Lemma 5.1;
/// docs/maths.md §3.3); the upper end of the final bracket, so the result is on the safe side.
///
/// ```
/// use composition::{adaptive_delta, adaptive_epsilon, Mechanism::{Br, Dp}};
/// let seq = [Br(1.0), Dp(1.0), Br(1.0)];
/// let e = adaptive_epsilon(&seq, 1e-3).unwrap();
/// assert!(adaptive_delta(&seq, e).unwrap() <= 1e-3);
/// ```
pub fn adaptive_epsilon(seq: &[Mechanism], delta: f64) -> Result<f64> {
    validate(seq)?;
    check_delta("delta", delta)?;
    let program = Program::compile(seq);
    let f = |x: f64| program.d(0, x).ln();
    if at_or_below(f(0.0), delta) {
        return Ok(0.0);
    }
    let top = program.sup_loss[0];
    let min_eps = seq
        .iter()
        .map(|m| m.epsilon())
        .fold(f64::INFINITY, f64::min);
    Ok(invert_decreasing(f, delta, 0.0, top, 1e-16 * min_eps))
}
