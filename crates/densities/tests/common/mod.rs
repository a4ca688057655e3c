//! Quadrature shared by the tests: composite Gauss–Legendre with its own nodes (Newton on
//! the Legendre recurrence), written here so that the references do not use the crate's
//! quadrature.
#![allow(dead_code)]

use std::f64::consts::PI;

/// Gauss–Legendre nodes and weights on [−1, 1].
pub fn gauss_legendre(n: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut z = (PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut dp = 1.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, z);
            for k in 2..=n {
                let p2 = ((2 * k - 1) as f64 * z * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            dp = n as f64 * (z * p1 - p0) / (z * z - 1.0);
            let dz = p1 / dp;
            z -= dz;
            if dz.abs() < 1e-16 {
                break;
            }
        }
        out.push((z, 2.0 / ((1.0 - z * z) * dp * dp)));
    }
    out
}

/// Composite 20-point Gauss–Legendre on [a, b] with `panels` equal panels.
pub fn integrate(f: impl Fn(f64) -> f64, a: f64, b: f64, panels: usize) -> f64 {
    let gl = gauss_legendre(20);
    let w = (b - a) / panels as f64;
    (0..panels)
        .map(|k| {
            let mid = a + (k as f64 + 0.5) * w;
            gl.iter()
                .map(|&(t, wt)| wt * f(mid + 0.5 * w * t))
                .sum::<f64>()
                * 0.5
                * w
        })
        .sum()
}
