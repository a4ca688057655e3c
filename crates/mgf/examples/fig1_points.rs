//! Prints the certified normalised radius over fig1's three panels with timings
//! (`cargo run --release -p mgf --example fig1_points`).
use densities::bounded::BoundedFamily;
use mgf::{certified_radius, BoundedNoise};
use std::time::Instant;

fn main() {
    let noise = BoundedNoise::new(BoundedFamily::power(2.0).unwrap()).unwrap();
    let geom = |lo: f64, hi: f64, i: usize| lo * (hi / lo).powf(i as f64 / 7.0);
    let start = Instant::now();
    for panel in ["a", "b", "c"] {
        for i in 0..8 {
            let (k, eps, delta) = match panel {
                "a" => (geom(1e2, 1e10, i), 0.1, 1e-10),
                "b" => (1e6, 0.1, 10f64.powf(-geom(2.0, 250.0, i))),
                _ => (1e6, geom(1e-7, 1.0, i), 1e-10),
            };
            let t = Instant::now();
            let r = certified_radius(&noise, k, eps, delta).unwrap();
            let norm = (k * -delta.ln()).sqrt() / eps;
            println!(
                "{panel}: k={k:.3e} ε={eps:.3e} δ={delta:.3e} R/norm={:.5} L={:.5} ({:.1} ms)",
                r.radius / norm,
                r.truncation,
                t.elapsed().as_secs_f64() * 1e3
            );
        }
    }
    println!("total {:.2} s", start.elapsed().as_secs_f64());
}
