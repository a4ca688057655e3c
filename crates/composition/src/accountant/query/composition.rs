//! The two-sided [`Composition`] of a list of SPECs: both directions of the loss where a
//! mechanism is asymmetric, and a second composition for lower ends from other laws.

use crate::accountant::input::spec::{Laws, MechanismSpec, PartCache, SpecError};

/// A composition in both directions of the loss: the pairs (P, Q) and, when some
/// mechanism is asymmetric, (Q, P); each answer is the larger of the two. When some
/// mechanism's lower end comes from other laws than its upper end (a balls-in-bins epoch,
/// §2.10), a second composition of those laws gives the lower ends.
#[derive(Debug)]
pub struct Composition {
    forward: crate::accountant::query::accountant::Accountant,
    reverse: Option<crate::accountant::query::accountant::Accountant>,
    lower: Option<Box<Composition>>,
    accuracy: Option<f64>,
    /// The list's total zCDP ρ, rounded up, when every mechanism has one and some spec
    /// has dominated laws of its own: a second certified upper end (docs/accountant.md
    /// §2.14), the smaller of the two is reported.
    zcdp: Option<f64>,
}

impl Composition {
    /// Sets the requested relative accuracy of both directions (and of the composition
    /// of the lower laws, when some differ).
    pub fn with_accuracy(mut self, accuracy: f64) -> crate::error::Result<Self> {
        self.forward = self.forward.with_accuracy(accuracy)?;
        if let Some(r) = self.reverse.take() {
            self.reverse = Some(r.with_accuracy(accuracy)?);
        }
        if let Some(l) = self.lower.take() {
            self.lower = Some(Box::new(l.with_accuracy(accuracy)?));
        }
        self.accuracy = Some(accuracy);
        Ok(self)
    }

    /// Both directions charge `work` (docs/accountant.md §6): its budget stops their
    /// refinement, its cancellation their computation.
    pub fn with_work(mut self, work: crate::accountant::core::work::Work) -> Self {
        self.forward = self.forward.with_work(work.clone());
        if let Some(r) = self.reverse.take() {
            self.reverse = Some(r.with_work(work.clone()));
        }
        if let Some(l) = self.lower.take() {
            self.lower = Some(Box::new(l.with_work(work)));
        }
        self
    }

    /// Certified bracket of ε(δ): the larger over the two directions. The reverse
    /// direction is refined only while it may exceed the forward one's lower end; its
    /// first step's upper end is computed beside the forward refinement (on the core
    /// that refinement leaves idle between its windows), and where it is already at most
    /// the forward lower end the reverse direction is settled, as its refinement would
    /// find on that same first step (the answer is the same to the bit).
    pub fn epsilon(
        &self,
        delta: f64,
    ) -> crate::error::Result<crate::accountant::core::answer::Answer> {
        let up = match &self.reverse {
            None => self.forward.epsilon(delta)?,
            Some(r) => {
                let ln_delta = delta.ln();
                let first = r.first_step_until(ln_delta);
                let aside = r.work().aside();
                let held = r.work().hold_for_aside();
                let (a, early) = crate::accountant::core::pool::join(
                    || self.forward.epsilon(delta),
                    || {
                        crate::accountant::core::work::limited(held, || {
                            r.epsilon_side_at_step_on(&aside, ln_delta, first, true)
                        })
                    },
                );
                // Counted after the forward refinement, whose budget checks it must not
                // reach at a moment set by the threads (an eighth of the budget left was
                // held for it meanwhile).
                r.work().absorb_held(&aside, held);
                let a = a?;
                match early {
                    // What `max_answer` of `a` and the reverse direction's first step gives.
                    Ok(up) if up <= a.lower => crate::accountant::core::answer::Answer {
                        step: a.step.min(first),
                        ..a
                    },
                    _ => max_answer(a, r.epsilon_ln_until(ln_delta, a.lower)?),
                }
            }
        };
        match &self.lower {
            None => Ok(up),
            Some(l) => Ok(two_sided(
                l.epsilon(delta)?,
                self.zcdp_capped(up, |rho| crate::zcdp::epsilon_cks_up(rho, delta), false),
                self.accuracy.unwrap_or(1e-4),
                false,
            )),
        }
    }

    /// `up` with its upper end lowered to the zCDP route's where that is smaller
    /// (docs/accountant.md §2.14): `cap` gives the certified ε or δ of a total ρ.
    fn zcdp_capped(
        &self,
        up: crate::accountant::core::answer::Answer,
        cap: impl Fn(f64) -> crate::error::Result<f64>,
        delta: bool,
    ) -> crate::accountant::core::answer::Answer {
        match self.zcdp.map(cap) {
            Some(Ok(c)) if c < up.upper => crate::accountant::core::answer::Answer {
                upper: c,
                // ln of a δ rounded up (an ε's ln is not used for bounds).
                ln_upper: if delta {
                    densities::outward::up(c.ln())
                } else {
                    c.ln()
                },
                ..up
            },
            _ => up,
        }
    }

    /// Certified bracket of ε(δ) whose upper end is this composition's at `delta` and
    /// whose lower end is `lower`'s at `delta_lower` (≥ δ): a rounded schedule's two
    /// copies (docs/accountant.md §2.8), whose other ends bound nothing. The forward
    /// directions' two ends are computed side by side on each grid step, one thread each,
    /// and refined on the width between them; this one's reverse direction beside them on
    /// its own first step, refined only if its upper end is not below the forward one's.
    /// The lower end is the forward direction's of `lower` (the larger of the two
    /// directions' ε is at least it).
    /// Compositions with dominated lower laws of their own (§2.10) take each end from a
    /// two-sided evaluation of its composition.
    pub fn epsilon_with_lower(
        &self,
        delta: f64,
        lower: &Composition,
        delta_lower: f64,
    ) -> crate::error::Result<crate::accountant::core::answer::Answer> {
        let in_range = |d: f64| d > 0.0 && d < 1.0;
        if self.lower.is_some()
            || lower.lower.is_some()
            || !in_range(delta)
            || !in_range(delta_lower)
        {
            return Ok(two_sided(
                lower.epsilon(delta_lower)?,
                self.epsilon(delta)?,
                self.accuracy.unwrap_or(1e-4),
                false,
            ));
        }
        let ln_delta = delta.ln();
        let split = || {
            self.forward
                .epsilon_split(ln_delta, &lower.forward, delta_lower.ln())
        };
        let Some(r) = &self.reverse else {
            return split();
        };
        // The reverse direction's upper end on the step its refinement takes first (4×
        // coarser than a forward one's, or the pilot over a wide law's range: it is
        // usually far below) beside the split; refined only if it is not below the
        // forward direction's upper end.
        let aside = r.work().aside();
        let held = r.work().hold_for_aside();
        let (a, early) = crate::accountant::core::pool::join(split, || {
            crate::accountant::core::work::limited(held, || {
                r.epsilon_side_at_step_on(&aside, ln_delta, r.first_step_until(ln_delta), true)
            })
        });
        // Counted after the split, whose budget checks it must not reach at a moment set
        // by the threads (an eighth of the budget left was held for it meanwhile).
        r.work().absorb_held(&aside, held);
        let a = a?;
        let (upper, ln_upper, step) = match early {
            Ok(up) if up <= a.upper => (a.upper, a.ln_upper, a.step),
            _ => {
                let b = r.epsilon_ln_until(ln_delta, a.upper)?;
                if b.upper > a.upper {
                    (b.upper, b.ln_upper, a.step.min(b.step))
                } else {
                    (a.upper, a.ln_upper, a.step.min(b.step))
                }
            }
        };
        let width = if upper > 0.0 {
            (upper - a.lower) / upper
        } else {
            0.0
        };
        Ok(crate::accountant::core::answer::Answer {
            estimate: 0.5 * (a.lower + upper),
            upper,
            ln_upper,
            step,
            accuracy_met: width <= self.accuracy.unwrap_or(1e-4),
            ..a
        })
    }

    /// Certified bracket of ε(δ), refined only until it settles whether ε is at most
    /// `threshold` (its upper end at most `threshold`) or above it (its lower end above),
    /// or else to the accuracy asked: the solver's question (docs/accountant.md §10). The
    /// ends are certified as [`Self::epsilon`]'s; only the refinement stops sooner.
    pub fn epsilon_settling(
        &self,
        delta: f64,
        threshold: f64,
    ) -> crate::error::Result<crate::accountant::core::answer::Answer> {
        // Out of range (the error is `epsilon`'s), or lower ends from dominated laws
        // (§2.10): the full two-sided bracket.
        if !(delta > 0.0 && delta < 1.0) || self.lower.is_some() {
            return self.epsilon(delta);
        }
        let ln_delta = delta.ln();
        let a = self
            .forward
            .epsilon_ln_between(ln_delta, threshold, threshold)?;
        match &self.reverse {
            None => Ok(a),
            Some(r) => {
                // The reverse direction matters only above the forward one's lower end;
                // when the forward one meets the threshold (so its lower end is below
                // it), the reverse one must meet it too.
                let below = if a.upper <= threshold {
                    threshold
                } else {
                    a.lower
                };
                Ok(max_answer(
                    a,
                    r.epsilon_ln_between(ln_delta, below, threshold)?,
                ))
            }
        }
    }

    /// Whether one end of the bracket of ε(δ), on the grid step `step`, settles the
    /// solver's question at `threshold`: with `upper`, that ε ≤ `threshold` (the forward
    /// direction's upper end at `step` at most it, and the reverse one's, refined until
    /// it is or its accuracy is met); else that ε > `threshold` (the forward direction's
    /// lower end at `step` above it). `Ok(false)` means only "not settled by this end".
    /// `None` where one end is not enough to tell (dominated lower laws, §2.10) or δ is
    /// out of range: the caller asks [`Self::epsilon_settling`] instead. The forward
    /// direction's end is computed on the calling thread (docs/accountant.md §10.3).
    pub fn settles_at_step(
        &self,
        delta: f64,
        threshold: f64,
        step: f64,
        upper: bool,
    ) -> crate::error::Result<Option<bool>> {
        if !(delta > 0.0 && delta < 1.0) || self.lower.is_some() || step.is_nan() || step <= 0.0 {
            return Ok(None);
        }
        let ln_delta = delta.ln();
        let (Some(r), true) = (&self.reverse, upper) else {
            let end = self.forward.epsilon_side_at_step(ln_delta, step, upper)?;
            return Ok(Some(if upper {
                end <= threshold
            } else {
                end > threshold
            }));
        };
        // Both directions' upper ends on the same step, side by side; the reverse one is
        // refined further only when that step does not settle it.
        let (f, b) = crate::accountant::core::pool::join(
            || self.forward.epsilon_side_at_step(ln_delta, step, true),
            || r.epsilon_side_at_step(ln_delta, step, true),
        );
        if f? > threshold {
            return Ok(Some(false));
        }
        if b? <= threshold {
            return Ok(Some(true));
        }
        Ok(Some(
            r.epsilon_ln_until(ln_delta, threshold)?.upper <= threshold,
        ))
    }

    /// Certified bracket of δ(ε): the larger over the two directions (the reverse one
    /// refined only while it may exceed the forward one).
    pub fn delta(&self, eps: f64) -> crate::error::Result<crate::accountant::core::answer::Answer> {
        let a = self.forward.delta(eps)?;
        let up = match &self.reverse {
            None => a,
            Some(r) => max_answer(a, r.delta_until(eps, a.ln_lower)?),
        };
        match &self.lower {
            None => Ok(up),
            Some(l) => Ok(two_sided(
                l.delta(eps)?,
                self.zcdp_capped(up, |rho| crate::zcdp::delta_cks_up(rho, eps), true),
                self.accuracy.unwrap_or(1e-3),
                true,
            )),
        }
    }
}

impl Composition {
    /// Certified brackets of the trade-off function at each α ∈ [0, 1]: for an asymmetric
    /// composition the pointwise minimum over the two directions (docs/accountant.md §9).
    pub fn tradeoff(
        &self,
        alphas: &[f64],
    ) -> crate::error::Result<Vec<crate::accountant::query::tradeoff::TradeoffPoint>> {
        let a = self.forward.tradeoff(alphas)?;
        let up = match &self.reverse {
            None => a,
            Some(r) => crate::accountant::query::tradeoff::min_brackets(&a, &r.tradeoff(alphas)?),
        };
        match &self.lower {
            None => Ok(up),
            // The dominating laws' f is the smaller: its lower ends hold; the dominated
            // laws' upper ends hold.
            Some(l) => Ok(up
                .iter()
                .zip(l.tradeoff(alphas)?)
                .map(|(u, d)| crate::accountant::query::tradeoff::TradeoffPoint {
                    alpha: u.alpha,
                    lower: u.lower,
                    upper: d.upper,
                })
                .collect()),
        }
    }

    /// The central-limit μ of the composition (the larger over the two directions, whose
    /// `G_μ` is the smaller trade-off function; docs/accountant.md §9).
    pub fn clt_mu(&self) -> crate::error::Result<f64> {
        let a = self.forward.clt_mu()?;
        match &self.reverse {
            None => Ok(a),
            Some(r) => Ok(a.max(r.clt_mu()?)),
        }
    }
}

/// The bracket whose lower end is `lo`'s (the dominated laws') and whose upper end is
/// `up`'s (the dominating laws'); its accuracy is met when both were and its own relative
/// width is within `acc`.
fn two_sided(
    lo: crate::accountant::core::answer::Answer,
    up: crate::accountant::core::answer::Answer,
    acc: f64,
    delta: bool,
) -> crate::accountant::core::answer::Answer {
    let (estimate, width) = if delta {
        (
            (0.5 * (lo.ln_lower + up.ln_upper)).exp(),
            -(lo.ln_lower - up.ln_upper).exp_m1(),
        )
    } else {
        (
            0.5 * (lo.lower + up.upper),
            if up.upper > 0.0 {
                (up.upper - lo.lower) / up.upper
            } else {
                0.0
            },
        )
    };
    crate::accountant::core::answer::Answer {
        lower: lo.lower,
        estimate,
        upper: up.upper,
        ln_lower: lo.ln_lower,
        ln_upper: up.ln_upper,
        step: lo.step.min(up.step),
        accuracy_met: lo.accuracy_met && up.accuracy_met && width <= acc,
    }
}

/// The bracket of `max(x, y)` from brackets of x and y. Its accuracy is met when each
/// side either met it or lies wholly below the other (then it does not move the max).
fn max_answer(
    a: crate::accountant::core::answer::Answer,
    b: crate::accountant::core::answer::Answer,
) -> crate::accountant::core::answer::Answer {
    let a_ok = a.accuracy_met || a.ln_upper <= b.ln_lower;
    let b_ok = b.accuracy_met || b.ln_upper <= a.ln_lower;
    crate::accountant::core::answer::Answer {
        lower: a.lower.max(b.lower),
        estimate: a.estimate.max(b.estimate),
        upper: a.upper.max(b.upper),
        ln_lower: a.ln_lower.max(b.ln_lower),
        ln_upper: a.ln_upper.max(b.ln_upper),
        step: a.step.min(b.step),
        accuracy_met: a_ok && b_ok,
    }
}

/// Constructors from SPECs.
impl Composition {
    /// The composition of a list of specs (both directions when needed). A SPEC whose only
    /// certified number is a lower bound (§2.9) is refused: [`Self::lower_bound`] takes it.
    pub fn of(specs: &[MechanismSpec]) -> Result<Self, SpecError> {
        if let Some(s) = specs.iter().find(|s| s.lower_bound_only()) {
            return Err(SpecError(format!(
                "{}: no certified upper bound is known for this sampler (only a certified lower \
                 bound, which `dpw account` reports)",
                s.text
            )));
        }
        Self::lower_bound(specs)
    }

    /// The composition of a list of specs, lower-bound-only ones allowed: only the lower end
    /// of its brackets holds for the mechanisms when some spec is
    /// [`MechanismSpec::lower_bound_only`].
    pub fn lower_bound(specs: &[MechanismSpec]) -> Result<Self, SpecError> {
        let mut lowers = Vec::with_capacity(specs.len());
        for s in specs {
            lowers.push(s.lower_laws()?);
        }
        let lower = if lowers.iter().any(Option::is_some) {
            let mut laws = Vec::with_capacity(specs.len());
            for (s, l) in specs.iter().zip(lowers) {
                laws.push((
                    match l {
                        Some(l) => l,
                        None => s.laws()?,
                    },
                    s,
                ));
            }
            Some(Box::new(compose(laws)?))
        } else {
            None
        };
        // One cache for the list: its mixtures share their parts.
        let mut cache = PartCache::default();
        let mut laws = Vec::with_capacity(specs.len());
        for s in specs {
            laws.push((s.laws_sharing(&mut cache)?, s));
        }
        drop(cache);
        let mut c = compose(laws)?;
        if lower.is_some() {
            c.zcdp = zcdp_total(specs);
        }
        c.lower = lower;
        Ok(c)
    }

    /// The composition of the specs' dominating laws alone ([`MechanismSpec::laws`]): its
    /// upper ends hold for the mechanisms; where some spec has dominated laws of its own
    /// ([`MechanismSpec::lower_laws`]) its lower ends bound only the dominating pair's
    /// composition. The solver searches each side of such a bracket on its own
    /// (docs/accountant.md §10.3).
    pub fn dominating(specs: &[MechanismSpec]) -> Result<Self, SpecError> {
        let mut plain = Self::of(specs)?;
        plain.lower = None;
        Ok(plain)
    }

    /// The composition of the specs' dominated laws ([`MechanismSpec::lower_laws`], each
    /// spec's own laws where it has none): its lower ends hold for the mechanisms, its upper
    /// ends only for those laws.
    pub fn dominated(specs: &[MechanismSpec]) -> Result<Self, SpecError> {
        let mut laws = Vec::with_capacity(specs.len());
        for s in specs {
            laws.push((
                match s.lower_laws()? {
                    Some(l) => l,
                    None => s.laws()?,
                },
                s,
            ));
        }
        compose(laws)
    }
}

/// The total zCDP ρ of a list, rounded up, if every mechanism has a zCDP guarantee
/// (docs/accountant.md §2.14): the ε-bounded-range kind ε²/8 (Cesar & Rogers, Lemma 3.2),
/// the Gaussian `(gs/σ)²/2`, pure ε₀-DP kinds ε₀²/2 (Bun & Steinke, Prop. 1.4). Each
/// term and the sum moved up an ulp per rounding.
fn zcdp_total(specs: &[MechanismSpec]) -> Option<f64> {
    use crate::accountant::input::spec::MechanismKind as K;
    use densities::outward::up;
    let mut total = 0.0f64;
    for s in specs {
        let g = s.pipeline.group as f64;
        let one = match s.kind {
            K::BoundedRange { epsilon } => up(up(epsilon * epsilon) / 8.0),
            K::Gaussian { sigma } => {
                let r = up(up(s.sensitivity * g) / sigma);
                up(up(r * r) / 2.0)
            }
            K::Laplace { scale } => {
                let r = up(up(s.sensitivity * g) / scale);
                up(up(r * r) / 2.0)
            }
            K::RandomizedResponse { epsilon } | K::NoisyMax { epsilon, .. } => {
                up(up(epsilon * epsilon) / 2.0)
            }
            K::ApproxDp {
                epsilon,
                delta: 0.0,
            } => up(up(epsilon * epsilon) / 2.0),
            _ => return None,
        };
        total = up(total + up(one * s.count as f64));
    }
    (total.is_finite() && total > 0.0).then_some(total)
}

/// The composition of each spec's laws (both directions when some law is asymmetric).
fn compose(laws: Vec<(Laws, &MechanismSpec)>) -> Result<Composition, SpecError> {
    let mut fwd = Vec::with_capacity(laws.len());
    let mut rev = Vec::with_capacity(laws.len());
    // The reverse direction is composed only when some law is asymmetric: a symmetric
    // law is built again for it only then (a bounded-noise law's quadratures, 3 % of a
    // radius search, were otherwise built and dropped at every evaluation).
    let asym = laws.iter().any(|((_, b), _)| b.is_some());
    for ((a, b), s) in laws {
        match b {
            Some(b) => {
                fwd.push((a, s.count));
                rev.push((b, s.count));
            }
            None => {
                // Symmetric: the same law in both directions.
                fwd.push((a, s.count));
                if asym {
                    rev.push((s.laws()?.0, s.count));
                }
            }
        }
    }
    let err = |e: crate::error::CompositionError| SpecError(e.to_string());
    Ok(Composition {
        forward: crate::accountant::query::accountant::Accountant::new(fwd).map_err(err)?,
        reverse: if asym {
            Some(crate::accountant::query::accountant::Accountant::new(rev).map_err(err)?)
        } else {
            None
        },
        lower: None,
        accuracy: None,
        zcdp: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ε(δ) with the reverse direction's first step beside the forward refinement is the
    /// answer of the two one after the other (`max_answer` of the forward refinement and
    /// the reverse one refined until below the forward lower end), to the bit, and costs
    /// no more work than that by more than one side of the reverse's first step: DP-SGD
    /// at one tenth of an expected use (settled by that step), and bounded noise beside a
    /// subsampled Gaussian at δ = 1e-126, whose reverse refinement starts at a pilot step
    /// over bounded noise's wide range (the beside step once took the step below it,
    /// 1.4e7 bins where the sequential answer took 2.4e6). The same for a rounded
    /// schedule's ends (`epsilon_with_lower`), whose beside step had always taken it.
    /// A symmetric law is composed in the reverse direction too when another law of the
    /// list is asymmetric (in its place in the list, with its count), and no reverse
    /// direction is formed when all are symmetric.
    #[test]
    fn reverse_direction_holds_the_symmetric_laws_only_beside_an_asymmetric_one() {
        let parse =
            |v: &[&str]| -> Vec<MechanismSpec> { v.iter().map(|s| s.parse().unwrap()).collect() };
        let sym = parse(&["gaussian:sigma=2,count=3", "laplace:scale=1,count=5"]);
        assert!(Composition::of(&sym).unwrap().reverse.is_none());
        let mixed = parse(&[
            "gaussian:sigma=2,count=3",
            "subsampled-gaussian:sigma=2,q=1e-2,count=7",
            "laplace:scale=1,count=5",
        ]);
        let c = Composition::of(&mixed).unwrap();
        let counts = |a: &crate::accountant::query::accountant::Accountant| -> Vec<u64> {
            a.parts.iter().map(|p| p.1).collect()
        };
        assert_eq!(counts(&c.forward), vec![3, 7, 5]);
        let r = c.reverse.as_ref().expect("an asymmetric composition");
        assert_eq!(counts(r), vec![3, 7, 5]);
        let scales = |a: &crate::accountant::query::accountant::Accountant| -> Vec<u64> {
            a.parts.iter().map(|p| p.0.loss_scale().to_bits()).collect()
        };
        let (f, b) = (scales(&c.forward), scales(r));
        assert_eq!(
            (f[0], f[2]),
            (b[0], b[2]),
            "the symmetric laws are the same both ways"
        );
    }

    #[test]
    fn the_reverse_step_beside_gives_the_sequential_answer() {
        let cases: [(&[&str], f64); 2] = [
            (&["subsampled-gaussian:sigma=2,q=1e-4,count=1000"], 1e-6),
            (
                &[
                    "bounded:family=exp,radius=300",
                    "subsampled-gaussian:sigma=5,q=3.83e-09,group=3,count=10",
                ],
                1e-126,
            ),
        ];
        for (specs, delta) in cases {
            let specs: Vec<MechanismSpec> = specs.iter().map(|s| s.parse().unwrap()).collect();
            let (w_beside, w_seq) = (
                crate::accountant::core::work::Work::default(),
                crate::accountant::core::work::Work::default(),
            );
            let beside = Composition::of(&specs).unwrap().with_work(w_beside.clone());
            let got = beside.epsilon(delta).unwrap();
            let seq = Composition::of(&specs).unwrap().with_work(w_seq.clone());
            let a = seq.forward.epsilon(delta).unwrap();
            let r = seq.reverse.as_ref().expect("an asymmetric composition");
            let want = max_answer(a, r.epsilon_ln_until(delta.ln(), a.lower).unwrap());
            let bits = |x: &crate::accountant::core::answer::Answer| {
                [x.lower, x.estimate, x.upper, x.ln_lower, x.ln_upper, x.step].map(f64::to_bits)
            };
            assert_eq!(bits(&got), bits(&want), "{specs:?}: {got:?} vs {want:?}");
            assert_eq!(got.accuracy_met, want.accuracy_met);
            assert!(
                w_beside.done() as f64 <= 1.5 * w_seq.done() as f64,
                "{specs:?}: work {} beside against {} one after the other",
                w_beside.done(),
                w_seq.done()
            );
            // A rounded schedule's ends (`epsilon_with_lower`, here with the composition
            // as its own lower copy) take the reverse step beside their split on the
            // same first step: a bracket overlapping the plain one (both hold ε), for
            // about the same work (the step below the pilot cost 5.6x at δ = 1e-126).
            let w_lower = crate::accountant::core::work::Work::default();
            let twin = Composition::of(&specs).unwrap();
            let e = Composition::of(&specs)
                .unwrap()
                .with_work(w_lower.clone())
                .epsilon_with_lower(delta, &twin, delta)
                .unwrap();
            assert!(
                e.lower <= want.upper && want.lower <= e.upper,
                "{e:?} vs {want:?}"
            );
            assert!(
                w_lower.done() as f64 <= 2.0 * w_seq.done() as f64,
                "{specs:?}: work {} with the lower copy against {}",
                w_lower.done(),
                w_seq.done()
            );
        }
    }
}
