//! Prints the certified normalised radius over fig1's panel-a grid with timings.
use densities::bounded::BoundedFamily;
use mgf::{certified_radius, BoundedNoise};
use std::time::Instant;

fn main() {
    let noise = BoundedNoise::new(BoundedFamily::power(2.0).unwrap()).unwrap();
    let (eps, delta) = (0.1, 1e-10);
    for i in 0..8 {
        let k = 10f64.powf(2.0 + 8.0 * i as f64 / 7.0);
        let t = Instant::now();
        let r = certified_radius(&noise, k, eps, delta).unwrap();
        let norm = (k * (1.0 / delta as f64).ln()).sqrt() / eps;
        println!("k={k:.3e} R/norm={:.5} L={:.5} lnI={:.4} ({:.1} ms)", r.radius / norm, r.truncation, r.log_delta_bound, t.elapsed().as_secs_f64() * 1e3);
    }
}
