//! Links the `dpw` executable position-dependent (`-no-pie`) on Linux: a position-
//! independent `dpw` carries about 66 000 relative relocations (its tables, plotters' and
//! polars' vtables), which the dynamic loader applied at every start, 2 ms of a 4 ms
//! start-up, a good part of a short `dpw account` call (docs/speed.md). The libraries,
//! heap and stack are still placed at random; only the executable's own image is not.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo:rustc-link-arg-bin=dpw=-no-pie");
    }
}
