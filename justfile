# Shortcuts for dpw (optional: `cargo install just`). Each recipe is one cargo command.

# Run the test suite (the README's test command).
test:
    cargo test --workspace --release

# Regenerate every figure from its manifest.
all:
    cargo run --release -- run experiments/*.toml

# Recompute every figure and compare with the checked-in CSVs.
check:
    cargo run --release -- check

# Benchmarks of the numerical kernels (criterion).
bench:
    cargo bench --workspace

# Print the figure catalog.
list:
    cargo run --release -- list

# Dagan–Kur Figure 1: bounded noise against the Gaussian mechanism.
fig1:
    cargo run --release -- run experiments/fig1.toml
