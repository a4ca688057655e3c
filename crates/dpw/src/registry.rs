//! The experiment registry: one table mapping a manifest's `kind` to the experiment that
//! prepares and runs it. Adding a kind is one module in `experiments/` and one line here.

use crate::error::KeyError;
use crate::experiments::{self, Job};
use crate::manifest::ParamsInput;

/// Validates a manifest's `[params]` and returns the job to run.
pub type PrepareFn = fn(&ParamsInput<'_>) -> Result<Box<dyn Job>, KeyError>;

/// One registered experiment kind.
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    /// The `kind` value in manifests.
    pub name: &'static str,
    /// One-line description.
    pub about: &'static str,
    /// Parameter validation and job preparation.
    pub prepare: PrepareFn,
}

/// Every experiment kind, by name.
pub const KINDS: &[Kind] = &[
    experiments::bounded_vs_gaussian::KIND,
    experiments::gaussian_calibration::KIND,
    experiments::noise_densities::KIND,
    experiments::noise_ratio::KIND,
    experiments::composition_bounds::KIND,
    experiments::adaptive_order::KIND,
    experiments::tradeoff_curves::KIND,
    experiments::clt_tradeoff::KIND,
    experiments::histogram_mechanisms::KIND,
    experiments::topk_counts::KIND,
    experiments::mean_estimation::KIND,
    experiments::heatmap_release::KIND,
    experiments::adaptive_queries::KIND,
    experiments::exact_bounded_radius::KIND,
    experiments::privacy_curve::KIND,
    experiments::tradeoff_curve::KIND,
    experiments::calibration_curve::KIND,
    experiments::solve_curve::KIND,
];

/// The kind registered under `name`.
pub fn find(name: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.name == name)
}

/// The registered kind names, quoted and comma-separated (for error messages).
pub fn names() -> String {
    KINDS
        .iter()
        .map(|k| format!("\"{}\"", k.name))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_unique_and_findable() {
        for (i, k) in KINDS.iter().enumerate() {
            assert!(
                KINDS[..i].iter().all(|o| o.name != k.name),
                "duplicate kind {}",
                k.name
            );
            assert_eq!(find(k.name).map(|f| f.name), Some(k.name));
        }
        assert!(find("nope").is_none());
    }
}
