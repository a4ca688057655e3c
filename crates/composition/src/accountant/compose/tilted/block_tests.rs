//! Tests of the parent module: the blocks of the tilted sum.

use super::*;
use crate::accountant::laws::{ClippedLaplaceLaw, GaussianLaw, LossLaw};

/// The block evaluation of `ln δ` against two exponentials per bin, on Gaussian and
/// Laplace compositions tilted from λ = 0 to far into the tail, at ε below, inside
/// and above the window: the two agree to 1e-11 (the block's margin is ~1e-13), and
/// the block's upper bound is never below the per-bin one by more than rounding.
#[test]
fn block_weights_agree_with_per_bin_exponentials() {
    let laws: Vec<(Box<dyn LossLaw>, f64, u64)> = vec![
        (Box::new(GaussianLaw::new(0.3).unwrap()), 0.3 / 200.0, 50),
        (
            Box::new(ClippedLaplaceLaw::laplace(0.5).unwrap()),
            0.5 / 300.0,
            400,
        ),
    ];
    let mut checked = 0;
    for (law, d, count) in &laws {
        let lat = Lattice::pessimistic(law.as_ref(), *d, -200.0, 1 << 22).unwrap();
        let f = [Factor {
            law: &lat,
            count: *count,
        }];
        for &lam in &[0.0, 0.7, 3.0, 12.0] {
            let sum = TiltedSum::new(&f, lam, 1 << 22).unwrap();
            let (lo, hi) = sum.range();
            for s in 0..40 {
                let eps = lo - 1.0 + (hi - lo + 2.0) * s as f64 / 39.0;
                if eps < 0.0 {
                    continue;
                }
                let (b, r) = (sum.ln_delta(eps), sum.ln_delta_per_bin(eps));
                if r.hi.is_finite() {
                    assert!(
                        (b.hi - r.hi).abs() <= 1e-11 * r.hi.abs().max(1.0),
                        "λ {lam} ε {eps}: upper {} vs {}",
                        b.hi,
                        r.hi
                    );
                    assert!(b.hi >= r.hi - 1e-14 * r.hi.abs().max(1.0));
                    checked += 1;
                }
                if r.lo.is_finite() && b.lo.is_finite() {
                    assert!((b.lo - r.lo).abs() <= 1e-11 * r.lo.abs().max(1.0));
                    assert!(b.lo <= r.lo + 1e-14 * r.lo.abs().max(1.0));
                }
            }
        }
    }
    assert!(checked > 200, "only {checked} points compared");
}
