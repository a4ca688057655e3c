//! Runs the full fig5 grid and the fig6 release, prints every number and the wall-clock
//! time: `cargo run -p denoise --release --example fig56`.

use denoise::city::{heatmap_release, synthetic_city, CITY_SIDE, CITY_TRIPS};
use denoise::mean_estimation::{mean_estimation, Method};
use std::time::Instant;

fn main() {
    let start = Instant::now();
    let ds = [10, 20, 50, 100, 200, 500, 1000, 2000];
    for eps in [0.01, 1.0] {
        println!("epsilon = {eps}");
        print!("{:>6}", "d");
        for m in Method::ALL {
            print!(" {:>22}", m.label());
        }
        println!();
        for &d in &ds {
            let r = mean_estimation(d, 500, eps, 1e-4, 100, 2018).expect("valid");
            print!("{d:>6}");
            for m in Method::ALL {
                match r.get(m) {
                    Some(s) => print!(" {:>12.5e} ±{:>9.2e}", s.mean, s.sd),
                    None => print!(" {:>22}", "n/a"),
                }
            }
            println!();
        }
    }
    let t5 = start.elapsed();
    let t = Instant::now();
    let truth = synthetic_city(CITY_SIDE, CITY_TRIPS, 2018).expect("valid");
    let r = heatmap_release(truth.view(), 1.0, 1e-6, 5.0, 2018).expect("valid");
    let t6 = t.elapsed();
    let max = truth.iter().cloned().fold(0.0, f64::max);
    let zeros = truth.iter().filter(|&&v| v == 0.0).count();
    println!(
        "fig6: sigma = {:.4}, zero-estimate RMSE {:.4}, truth total {}, max {max}, zero cells {zeros}",
        r.sigma,
        r.zero_rmse,
        truth.iter().sum::<f64>()
    );
    for p in r.panels() {
        println!("  {:>10}: RMSE {:.4}", p.label, p.rmse);
    }
    println!(
        "fig5 {:.3} s, fig6 {:.3} s",
        t5.as_secs_f64(),
        t6.as_secs_f64()
    );
}
