//! The RDP bound drawn beside the exact ε (fig22, docs/accountant.md §8) with the
//! conversion of Balle et al. (2020, Thm 21), against another implementation and against
//! the certified accountant.

use composition::accountant::Composition;
use composition::rdp::{subsampled_gaussian_epsilon, subsampled_gaussian_epsilon_classical};

/// Google's dp_accounting 0.6 (pip, in a virtualenv outside the repository), the same
/// integer orders 2..=256, computed by
/// `acc = dp_accounting.rdp.RdpAccountant(orders=list(range(2, 257)));
///  acc.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(σ)), T);
///  acc.get_epsilon(1e-5)`. Its RDP of the subsampled Gaussian is computed by another
/// formula (a series in log space), so agreement to 1e-9 checks both the RDP and the
/// conversion; the classical conversion (ln(1/δ)/(α − 1)) gives 7.47 at σ = 1, T = 1e4 and
/// fails it.
#[test]
fn matches_dp_accounting_and_lies_between_the_exact_epsilon_and_the_classical_conversion() {
    for (sigma, t, reference) in [
        (1.0, 10_000u64, 6.7194021179393335),
        (0.8, 300, 2.69448190214816),
        (2.0, 100_000, 8.803442366006058),
    ] {
        let e = subsampled_gaussian_epsilon(0.01, sigma, t, 1e-5).unwrap();
        assert!(
            (e / reference - 1.0).abs() < 1e-9,
            "σ = {sigma}, T = {t}: {e} vs dp_accounting's {reference}"
        );
        let classical = subsampled_gaussian_epsilon_classical(0.01, sigma, t, 1e-5).unwrap();
        assert!(e < classical, "σ = {sigma}, T = {t}: {e} vs {classical}");
        // A valid upper bound: never below the certified lower end of the exact ε.
        let exact =
            Composition::of(&[
                format!("subsampled-gaussian:sigma={sigma},q=0.01,count={t}")
                    .parse()
                    .unwrap(),
            ])
            .unwrap()
            .with_accuracy(1e-3)
            .unwrap()
            .epsilon(1e-5)
            .unwrap();
        assert!(
            exact.lower < e,
            "σ = {sigma}, T = {t}: exact {exact:?} vs RDP {e}"
        );
    }
}
