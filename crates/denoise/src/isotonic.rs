//! Ordered least squares for released top-k counts (Cesar & Rogers 2021, Algorithm 1;
//! docs/maths.md §3.4): `argmin_z ‖z − y‖²` subject to `z₁ ≥ z₂ ≥ … ≥ z_k ≥ 0`.
//!
//! Pool-adjacent-violators solves the non-increasing problem exactly: scan left to right,
//! keep blocks with their means, and merge the last two blocks while their means violate
//! the order. Adding `z ≥ 0` only clips the solution at 0: the clipped vector is feasible,
//! and for every block the KKT conditions of the bound-constrained problem hold (a block
//! with negative mean gains nothing by leaving 0, and the blocks above are unchanged).
//! Post-processing, so privacy is unchanged.

/// The non-increasing, non-negative least-squares fit to `y` (pool-adjacent-violators,
/// O(k)). Already ordered, non-negative input comes back unchanged.
///
/// ```
/// let z = denoise::isotonic::ordered_nonnegative(&[5.0, 7.0, 3.0, -1.0]);
/// assert_eq!(z, vec![6.0, 6.0, 3.0, 0.0]);
/// ```
pub fn ordered_nonnegative(y: &[f64]) -> Vec<f64> {
    // Blocks as (sum, count); the mean is sum / count.
    let mut blocks: Vec<(f64, usize)> = Vec::with_capacity(y.len());
    for &v in y {
        blocks.push((v, 1));
        while blocks.len() >= 2 {
            let (s2, n2) = blocks[blocks.len() - 1];
            let (s1, n1) = blocks[blocks.len() - 2];
            // Violation of non-increasing order: mean₁ < mean₂.
            if s1 * (n2 as f64) < s2 * (n1 as f64) {
                blocks.pop();
                let last = blocks.len() - 1;
                blocks[last] = (s1 + s2, n1 + n2);
            } else {
                break;
            }
        }
    }
    let mut z = Vec::with_capacity(y.len());
    for (s, n) in blocks {
        let m = (s / n as f64).max(0.0);
        z.extend(std::iter::repeat_n(m, n));
    }
    z
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn sse(z: &[f64], y: &[f64]) -> f64 {
        z.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum()
    }

    /// Brute force: every split of 0..k into contiguous blocks, each block at
    /// max(mean, 0); keep feasible (non-increasing) candidates, return the least SSE.
    fn brute_force(y: &[f64]) -> (Vec<f64>, f64) {
        let k = y.len();
        let mut best = (Vec::new(), f64::INFINITY);
        for mask in 0u32..(1 << (k - 1)) {
            let mut z = Vec::with_capacity(k);
            let mut start = 0;
            for i in 0..k {
                let cut = i == k - 1 || mask & (1 << i) != 0;
                if cut {
                    let block = &y[start..=i];
                    let m = (block.iter().sum::<f64>() / block.len() as f64).max(0.0);
                    z.extend(std::iter::repeat_n(m, block.len()));
                    start = i + 1;
                }
            }
            if z.windows(2).all(|w| w[0] >= w[1]) {
                let e = sse(&z, y);
                if e < best.1 {
                    best = (z, e);
                }
            }
        }
        best
    }

    #[test]
    fn matches_brute_force_on_random_inputs() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        for _ in 0..300 {
            let k = rng.gen_range(1..=9);
            let y: Vec<f64> = (0..k).map(|_| rng.gen_range(-3.0..10.0)).collect();
            let z = ordered_nonnegative(&y);
            let (_, e) = brute_force(&y);
            assert!(z.windows(2).all(|w| w[0] >= w[1]) && z.iter().all(|&v| v >= 0.0));
            assert!((sse(&z, &y) - e).abs() <= 1e-9 * e.max(1.0), "{y:?}");
        }
    }

    #[test]
    fn no_random_feasible_point_does_better() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
        let y: Vec<f64> = (0..20)
            .map(|i| 40.0 / (i + 1) as f64 + rng.gen_range(-8.0..8.0))
            .collect();
        let z = ordered_nonnegative(&y);
        let e = sse(&z, &y);
        for _ in 0..2000 {
            // A random feasible point near z: perturb, sort descending, clip at 0.
            let mut w: Vec<f64> = z.iter().map(|v| v + rng.gen_range(-1.0..1.0)).collect();
            w.sort_by(|a, b| b.total_cmp(a));
            w.iter_mut().for_each(|v| *v = v.max(0.0));
            assert!(sse(&w, &y) >= e - 1e-9);
        }
    }

    #[test]
    fn ordered_input_is_unchanged() {
        let y = [9.0, 7.5, 7.5, 2.0, 0.0];
        assert_eq!(ordered_nonnegative(&y), y.to_vec());
        assert!(ordered_nonnegative(&[]).is_empty());
    }
}
