//! A SPEC's privacy-loss laws: [`MechanismSpec::laws`] (the upper ends' pairs),
//! [`MechanismSpec::lower_laws`] (the dominated pairs where they differ) and the helpers
//! they share; the parsing they start from is the parent module's.

use super::*;

impl MechanismSpec {
    /// Whether this is bounded noise whose law [`Self::laws`] builds without error: its
    /// range at the shift `laws` gives it (the sensitivity times the group, rounded up).
    pub(super) fn bounded_in_range(&self) -> bool {
        let MechanismKind::Bounded { family, radius } = self.kind else {
            return false;
        };
        let s = mul_up(self.sensitivity, self.pipeline.group as f64);
        BoundedNoiseLaw::check(family, radius, s).is_ok()
    }

    /// The privacy-loss laws of one use of the mechanism: of the pair (P, Q), and of
    /// (Q, P) when it differs (subsampled mechanisms; the others are symmetric).
    pub fn laws(&self) -> Result<Laws, SpecError> {
        self.laws_sharing(&mut PartCache::default())
    }

    /// As [`Self::laws`], a revealed mixture's parts taken from `cache` (and put there):
    /// the mixtures of a schedule's list then share their lattice laws, each of whose
    /// cells is computed once for all the groups of a lattice cell ([`SharedPart`]).
    pub(crate) fn laws_sharing(&self, cache: &mut PartCache) -> Result<Laws, SpecError> {
        let kind = self.kind_name();
        let g = self.pipeline.group;
        // A group of g moves the output by at most g sensitivities (rounded up: a larger
        // shift leaks more, docs/accountant.md §5).
        let s = mul_up(self.sensitivity, g as f64);
        let wrap = |what: &str, range: &str, x: f64| {
            SpecError(format!(
                "{kind}: {what} = {x:e} is outside the supported range {range}"
            ))
        };
        let sub = |base: Base, scale: f64, q: f64| -> Result<Laws, SpecError> {
            let p = self.pipeline;
            let one = self.sensitivity;
            let err = |mu: f64| move |_| wrap("sensitivity/scale", "[1e-6, 50]", mu);
            let epochs = |mu: f64, t: u64| -> Result<Laws, SpecError> {
                let e = |_| wrap("sensitivity/sigma", "[1e-6, 50]", mu);
                Ok((
                    Box::new(MaxStatisticLaw::new(mu, t, Direction::Remove).map_err(e)?),
                    Some(Box::new(
                        MaxStatisticLaw::new(mu, t, Direction::Add).map_err(e)?,
                    )),
                ))
            };
            let pair = |mu: f64| -> Result<Laws, SpecError> {
                Ok((
                    Box::new(SubsampledLaw::new(base, mu, q, Direction::Remove).map_err(err(mu))?),
                    Some(Box::new(
                        SubsampledLaw::new(base, mu, q, Direction::Add).map_err(err(mu))?,
                    )),
                ))
            };
            match (p.sampling, p.neighbours, p.group) {
                // The maximum of an epoch's outputs: a lower bound only (§2.9).
                (Sampling::Shuffle { batch, n }, _, _) => {
                    epochs(div_up(one, scale), n.div_ceil(batch))
                }
                // Balls-in-bins: the upper laws of the epoch's pair (§2.10); its lower laws
                // are [`MechanismSpec::lower_laws`].
                (Sampling::Allocation { .. }, _, _) => {
                    let l = self.allocation_laws()?.expect("a balls-in-bins SPEC");
                    Ok((
                        Box::new(l.remove_upper.clone()),
                        Some(Box::new(l.add_upper.clone())),
                    ))
                }
                // A fixed-size batch under add/remove: Poisson's add/remove pair at
                // q = batch/n with twice the shift (docs/accountant.md §2.7); the larger
                // dataset's output is always the mixture, so each order composes alone.
                (Sampling::Fixed { .. }, Neighbours::AddRemove, _) => {
                    pair(div_up(2.0 * one, scale))
                }
                // Under replace-one the adversary picks each step's order: the
                // symmetrised pair, which dominates both (§2.7, "Adaptive order"); the
                // lower ends come from the orders composed alone (`lower_laws`).
                // A batch of all n: the unsampled pair with a replaced example's shift.
                (Sampling::Fixed { batch, n }, Neighbours::ReplaceOne, _) if batch == n => {
                    let mu = div_up(2.0 * one, scale);
                    let e = |_| wrap("sensitivity/scale", "[1e-8, 1e4]", mu);
                    Ok((
                        match base {
                            Base::Gaussian => Box::new(GaussianLaw::new(mu).map_err(e)?),
                            Base::Laplace => Box::new(ClippedLaplaceLaw::laplace(mu).map_err(e)?),
                        },
                        None,
                    ))
                }
                (Sampling::Fixed { .. }, Neighbours::ReplaceOne, _) => {
                    let mu = div_up(2.0 * one, scale);
                    Ok((Box::new(symmetrized(base, mu, q).map_err(err(mu))?), None))
                }
                (Sampling::Poisson, Neighbours::AddRemove, 1) => pair(div_up(one, scale)),
                (Sampling::Poisson, relation, group) => {
                    let mu = div_up(one, scale);
                    let (a, b) =
                        MixtureLaw::poisson_group(mu, q, group, relation == Neighbours::ReplaceOne)
                            .map_err(|_| {
                                wrap("sensitivity/scale × group", "[1e-6, 50]", mu * group as f64)
                            })?;
                    Ok((Box::new(a), b.map(|b| Box::new(b) as Box<dyn LossLaw>)))
                }
            }
        };
        if let MechanismKind::GaussianMixture {
            sigma,
            ref components,
        } = self.kind
        {
            // Probabilities normalised (they sum to 1 within 1e-9); shifts in units of σ,
            // each rounded up as the Gaussian's is.
            let total: f64 = components.iter().map(|c| c.0).sum();
            let up: Vec<(f64, f64)> = components
                .iter()
                .map(|&(p, c)| (p / total, div_up(mul_up(c, s), sigma)))
                .collect();
            let widest = up.iter().map(|c| c.1).fold(0.0, f64::max);
            let bad = |_| wrap("largest shift × sensitivity/sigma", "(0, 50]", widest);
            let base = [(1.0, 0.0)];
            let fwd = MixtureLaw::new(&up, &base).map_err(bad)?;
            let rev = MixtureLaw::new(&base, &up).map_err(bad)?;
            return Ok((Box::new(fwd), Some(Box::new(rev))));
        }
        let one: Box<dyn LossLaw> = match self.kind {
            MechanismKind::Gaussian { sigma } => {
                // Rounded up: the mechanism with the larger shift leaks more at every ε
                // (docs/accountant.md §5), so the upper end holds for the exact s/σ.
                let mu = div_up(s, sigma);
                Box::new(
                    GaussianLaw::new(mu)
                        .map_err(|_| wrap("sensitivity/sigma", "[1e-8, 1e4]", mu))?,
                )
            }
            MechanismKind::Laplace { scale } => {
                let e = div_up(s, scale);
                Box::new(
                    ClippedLaplaceLaw::laplace(e)
                        .map_err(|_| wrap("sensitivity/scale", "[1e-8, 1e4]", e))?,
                )
            }
            MechanismKind::RandomizedResponse { epsilon } => Box::new(
                DiscreteLaw::randomized_response(epsilon)
                    .map_err(|_| wrap("epsilon", "[1e-8, 700]", epsilon))?,
            ),
            MechanismKind::DiscreteLaplace { .. } => Box::new(self.discrete_laplace_law(true)?.0),
            MechanismKind::DiscreteGaussian { sigma } => {
                let s = self.sensitivity as u64 * g as u64;
                Box::new(
                    DiscreteGaussianLaw::new(sigma, s)
                        .map_err(|e| SpecError(format!("{kind}: {e}")))?,
                )
            }
            MechanismKind::BoundedRange { epsilon } => Box::new(
                BoundedRangeLaw::new(epsilon)
                    .map_err(|_| wrap("epsilon", "[1e-6, 50]", epsilon))?,
            ),
            MechanismKind::NoisyMax { epsilon, .. } => Box::new(
                // Every instance is ε-DP: randomized response at ε dominates it (§2.15).
                DiscreteLaw::randomized_response(epsilon)
                    .map_err(|_| wrap("epsilon", "[1e-6, 50]", epsilon))?,
            ),
            MechanismKind::ApproxDp { epsilon, delta } => Box::new(
                DiscreteLaw::approx_dp(epsilon, delta)
                    .map_err(|_| wrap("epsilon", "[1e-8, 700] with delta in [0, 1)", epsilon))?,
            ),
            MechanismKind::TruncatedLaplace { epsilon, delta } => Box::new(
                ClippedLaplaceLaw::truncated_laplace(epsilon, delta, s)
                    .map_err(|_| wrap("epsilon", "[1e-8, 700] with delta in (0, 1)", epsilon))?,
            ),
            MechanismKind::Bounded { family, radius } => {
                Box::new(BoundedNoiseLaw::new(family, radius, s).map_err(|_| {
                    wrap(
                        "sensitivity/radius",
                        "[1e-12, 0.5] (alpha in (0, 100])",
                        s / radius,
                    )
                })?)
            }
            MechanismKind::SubsampledGaussian { sigma, q } => return sub(Base::Gaussian, sigma, q),
            MechanismKind::SubsampledGaussianMix {
                sigma,
                sigma2,
                weight,
                q,
                side,
            } => {
                // Each direction's law is the mixture of the parts' laws in it (§2.8),
                // each part's pair that of its own SPEC.
                let mut part = |sigma: f64| -> Result<(SharedPart, SharedPart), SpecError> {
                    let key = (
                        sigma.to_bits(),
                        q.to_bits(),
                        self.sensitivity.to_bits(),
                        format!("{:?}", self.pipeline),
                    );
                    if let Some(p) = cache.get(&key) {
                        return Ok(p.clone());
                    }
                    let (r, a) = MechanismSpec {
                        kind: MechanismKind::SubsampledGaussian { sigma, q },
                        ..self.clone()
                    }
                    .laws()?;
                    let Some(a) = a else {
                        return Err(SpecError(format!(
                            "{kind}: a mixture of asymmetric pairs only"
                        )));
                    };
                    let p = (SharedPart::new(r), SharedPart::new(a));
                    cache.insert(key, p.clone());
                    Ok(p)
                };
                let ((r1, a1), (r2, a2)) = (part(sigma)?, part(sigma2)?);
                let mix = |a: SharedPart, b: SharedPart| -> Box<dyn LossLaw> {
                    Box::new(RevealedMixture::new(
                        vec![
                            (weight, Box::new(a) as Box<dyn LossLaw>),
                            (1.0 - weight, Box::new(b)),
                        ],
                        side,
                    ))
                };
                return Ok((mix(r1, r2), Some(mix(a1, a2))));
            }
            MechanismKind::SubsampledLaplace { scale, q } => return sub(Base::Laplace, scale, q),
            MechanismKind::GaussianMixture { .. } => unreachable!("its laws are returned above"),
        };
        Ok((one, None))
    }

    /// The laws whose composition's *lower* ends hold, where they differ from
    /// [`Self::laws`] (whose upper ends hold): the dominated pair of a balls-in-bins epoch
    /// (§2.10). `None` for every other mechanism, whose two ends come from one law.
    pub fn lower_laws(&self) -> Result<Option<Laws>, SpecError> {
        if let Some(l) = self.fixed_replace_one_lower()? {
            return Ok(Some(l));
        }
        if let MechanismKind::BoundedRange { epsilon } = self.kind {
            // An attained instance: the exponential mechanism on two candidates whose
            // utilities swap between the neighbours, randomized response at ε/2 (§2.14).
            let rr = DiscreteLaw::randomized_response(0.5 * epsilon).map_err(|_| {
                SpecError(format!(
                    "exponential: epsilon = {epsilon} is outside the allowed range [1e-6, 50]"
                ))
            })?;
            return Ok(Some((Box::new(rr), None)));
        }
        if let MechanismKind::NoisyMax { noise, epsilon } = self.kind {
            let rr = DiscreteLaw::randomized_response(two_candidates_epsilon(noise, epsilon))
                .map_err(|_| {
                    SpecError(format!(
                        "{}: epsilon = {epsilon} is outside the allowed range [1e-6, 50]",
                        self.kind_name()
                    ))
                })?;
            return Ok(Some((Box::new(rr), None)));
        }
        if let MechanismKind::DiscreteLaplace { .. } = self.kind {
            // The rate rounded down: more noise, a dominated pair (§2.12); the same law
            // when 1/b has few enough bits to be the rate itself.
            let (_, up) = self.discrete_laplace_law(true)?;
            let (law, down) = self.discrete_laplace_law(false)?;
            return Ok((down != up).then(|| -> Laws { (Box::new(law), None) }));
        }
        Ok(self.allocation_laws()?.map(|l| -> Laws {
            (
                Box::new(l.remove_lower.clone()),
                Some(Box::new(l.add_lower.clone())),
            )
        }))
    }

    /// The discrete Laplace mechanism's law at the rate `t` bounding `1/scale` on the side
    /// asked ([`discrete_laplace_rate`]), its shift the sensitivity times the group, and
    /// that rate; the law's own error (naming `1/scale` or `sensitivity/scale`) else.
    fn discrete_laplace_law(&self, up: bool) -> Result<(DiscreteLaw, f64), SpecError> {
        let MechanismKind::DiscreteLaplace { scale } = self.kind else {
            return Err(SpecError(format!("{}: not a discrete Laplace", self.text)));
        };
        let s = self.sensitivity as u64 * self.pipeline.group as u64;
        let err = |e: crate::error::CompositionError| SpecError(format!("discrete-laplace: {e}"));
        let t = discrete_laplace_rate(scale, s, up).ok_or_else(|| {
            err(crate::error::out_of_range(
                "1/scale",
                1.0 / scale,
                "[1e-9, 700]",
            ))
        })?;
        Ok((DiscreteLaw::discrete_laplace(t, s).map_err(err)?, t))
    }

    /// A fixed-size batch under replace-one (§2.7, "Adaptive order"): its two orders,
    /// each composed alone, at the shift and rate rounded down. An adversary who keeps
    /// one order at every step attains that order's composition, so the larger of the
    /// two is a lower bound on the mechanism's ε; the symmetrised pair of
    /// [`Self::laws`] bounds it above, against any choice of orders.
    fn fixed_replace_one_lower(&self) -> Result<Option<Laws>, SpecError> {
        let (Sampling::Fixed { batch, n }, Neighbours::ReplaceOne) =
            (self.pipeline.sampling, self.pipeline.neighbours)
        else {
            return Ok(None);
        };
        let (base, scale) = match self.kind {
            MechanismKind::SubsampledGaussian { sigma, .. } => (Base::Gaussian, sigma),
            MechanismKind::SubsampledLaplace { scale, .. } => (Base::Laplace, scale),
            _ => return Ok(None),
        };
        let mu = div_down(2.0 * self.sensitivity, scale);
        let q = div_down(batch as f64, n as f64);
        if batch == n {
            // Every example in every batch: the unsampled pair, symmetric (`laws`).
            return Ok(None);
        }
        let law = |dir: Direction| {
            SubsampledLaw::new(base, mu, q, dir)
                .map_err(|e| SpecError(format!("{}: {e}", self.kind_name())))
        };
        Ok(Some((
            Box::new(law(Direction::Remove)?),
            Some(Box::new(law(Direction::Add)?)),
        )))
    }

    /// A balls-in-bins SPEC's shift `μ = s/σ` (range-checked) and steps an epoch; `None`
    /// for every other SPEC (the parser takes `sampling=allocation` only on the
    /// subsampled Gaussian).
    pub(super) fn allocation_shift(&self) -> Result<Option<(f64, u64)>, SpecError> {
        let (Sampling::Allocation { steps }, MechanismKind::SubsampledGaussian { sigma, .. }) =
            (self.pipeline.sampling, &self.kind)
        else {
            return Ok(None);
        };
        let mu = div_up(self.sensitivity, *sigma);
        if !(1e-6..=crate::accountant::sampling::allocation::MAX_SHIFT).contains(&mu) {
            return Err(SpecError(format!(
                "{kind}: sensitivity/sigma = {mu:e} is outside the range [1e-6, {max}] of \
                 balls-in-bins epochs (sigma at least sensitivity/{max}: beyond, an \
                 epoch's likelihood ratio is too wide for its laws' grid)",
                kind = self.kind_name(),
                max = crate::accountant::sampling::allocation::MAX_SHIFT
            )));
        }
        Ok(Some((mu, steps)))
    }

    /// A balls-in-bins SPEC's epoch laws (built once per process, §2.10).
    fn allocation_laws(&self) -> Result<Option<Arc<EpochLaws>>, SpecError> {
        let Some((mu, t)) = self.allocation_shift()? else {
            return Ok(None);
        };
        epoch_laws(mu, t, EpochGrid::default())
            .map(Some)
            .map_err(|e| SpecError(format!("{}: {e}", self.kind_name())))
    }
}

/// Part laws of revealed mixtures by `(σ, q, sensitivity, pipeline)`: each direction's,
/// shared by the mixtures of one composition ([`MechanismSpec::laws_sharing`]).
pub(crate) type PartCache =
    std::collections::HashMap<(u64, u64, u64, String), (SharedPart, SharedPart)>;

/// The randomized response an instance of report-noisy-max on two candidates is, whose
/// utilities (1, 0) and (0, 1) swap between the neighbours (docs/accountant.md §2.15):
/// with exponential noise (permute-and-flip) `P(first) = 1 − e^{−ε/2}/2`, log-odds
/// `ln(2e^{ε/2} − 1)`; with Laplace noise of scale `b = 2/ε` the difference of the two
/// noises exceeds `x ≥ 0` with probability `e^{−x/b}(2 + x/b)/4`, so `Q(first) =
/// T = e^{−ε/2}(2 + ε/2)/4` and the log-odds are `ln((1 − T)/T)`. Lowered by 64 ulps
/// (relative) against the few roundings of each formula: a lower end's pair may only
/// be weaker than the instance.
pub fn two_candidates_epsilon(noise: NoisyMaxNoise, eps: f64) -> f64 {
    let e = match noise {
        NoisyMaxNoise::Exponential => (2.0 * (0.5 * eps).exp_m1()).ln_1p(),
        NoisyMaxNoise::Laplace => {
            let t = (-0.5 * eps).exp() * (2.0 + 0.5 * eps) / 4.0;
            // 1 − 2T without cancelling its leading terms.
            let gap = -(-0.5 * eps).exp_m1() - (-0.5 * eps).exp() * 0.25 * eps;
            (gap / t).ln_1p()
        }
    };
    e * (1.0 - 64.0 * f64::EPSILON)
}

/// Whether some spec's lower ends come from dominated laws of their own (a two-sided
/// bracket whose width includes the gap between two pairs: balls-in-bins epochs,
/// fixed-size batches under replace-one).
/// It depends on the pipeline only, not on the values of the keys.
pub fn has_dominated_laws(specs: &[MechanismSpec]) -> bool {
    specs.iter().any(|s| {
        let subsampled = matches!(
            s.kind,
            MechanismKind::SubsampledGaussian { .. } | MechanismKind::SubsampledLaplace { .. }
        );
        if matches!(
            s.kind,
            MechanismKind::BoundedRange { .. } | MechanismKind::NoisyMax { .. }
        ) {
            return true;
        }
        match (s.pipeline.sampling, s.pipeline.neighbours) {
            (Sampling::Allocation { .. }, _) => true,
            (Sampling::Fixed { batch, n }, Neighbours::ReplaceOne) => subsampled && batch < n,
            _ => false,
        }
    })
}
