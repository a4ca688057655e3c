# Shortcuts for dpw (optional: `cargo install just`). Each recipe is one cargo command.

# Run the test suite (the README's test command; a few minutes once built, docs/speed.md has the measured time).
test:
    cargo test --workspace --release

# Every test with its heavier variants (DPW_LONG=1) and 2000 hostile cases: CI's long step.
test-all:
    DPW_LONG=1 DPW_FUZZ_CASES=2000 cargo test --workspace --release -- --include-ignored

# Regenerate every figure from its manifest.
all:
    cargo run --release -- run experiments/*.toml

# Recompute every figure and compare with the checked-in CSVs.
check:
    cargo run --release -- check

# Regenerate the extended figures (extended/*.toml: fig19b, its time in docs/speed.md).
extended:
    cargo run --release -- run --budget 600 extended/*.toml

# Benchmarks of the numerical kernels (criterion).
bench:
    cargo bench --workspace

# Run the benches, then print a markdown table of kernels and times (docs/speed.md).
# Pass cargo arguments to run fewer, e.g. `just bench-table -p densities -p composition`.
bench-table +ARGS="--workspace":
    mkdir -p target/criterion && touch target/criterion/.bench-table-start
    cargo bench {{ARGS}}
    python3 scripts/bench_table.py --since target/criterion/.bench-table-start

# Print the figure catalog.
list:
    cargo run --release -- list





# Bounded noise vs Gaussian: normalised noise for k queries.
fig1:
    cargo run --release -- run experiments/fig1.toml

# Adaptive data analysis: queries answerable from n samples, bounded noise vs Gaussian.
fig2:
    cargo run --release -- run experiments/fig2.toml

# Classical vs analytic Gaussian mechanism: σ against ε.
fig3:
    cargo run --release -- run experiments/fig3.toml

# Variance ratio of classical to analytic Gaussian calibration.
fig4:
    cargo run --release -- run experiments/fig4.toml

# Private mean estimation: Gaussian mechanisms, denoising and Laplace against d.
fig5:
    cargo run --release -- run experiments/fig5.toml

# Heat-map release with the analytic Gaussian mechanism, raw and denoised.
fig6:
    cargo run --release -- run experiments/fig6.toml

# Truncated Laplacian, Laplace and analytic Gaussian noise densities.
fig7:
    cargo run --release -- run experiments/fig7.toml

# Truncated Laplacian vs analytic Gaussian: ratio of noise amplitude E|X|.
fig8:
    cargo run --release -- run experiments/fig8.toml

# Truncated Laplacian vs analytic Gaussian: ratio of noise power E X².
fig9:
    cargo run --release -- run experiments/fig9.toml

# Trade-off functions in one dimension: Laplace, analytic Gaussian, truncated Laplacian vs f_{ε,δ}.
fig10:
    cargo run --release -- run experiments/fig10.toml

# High-dimensional CLT: trade-off curves of exp(−‖x‖_p^a) noise against G_1.
fig11:
    cargo run --release -- run experiments/fig11.toml

# Concentration bound for mixes of DP and BR mechanisms vs optimal DP composition.
fig12:
    cargo run --release -- run experiments/fig12.toml

# Optimal composition of mixes of DP and BR mechanisms.
fig13:
    cargo run --release -- run experiments/fig13.toml

# Order matters in adaptive composition: δ(DP, BR, BR) / δ(BR, BR, DP).
fig14:
    cargo run --release -- run experiments/fig14.toml

# Laplace vs Gaussian noise on histograms: overall ε against ℓ0 sensitivity.
fig15:
    cargo run --release -- run experiments/fig15.toml

# Laplace vs Gaussian under composition: overall ε against the number of releases.
fig16:
    cargo run --release -- run experiments/fig16.toml

# Top-20 counts: Laplace vs Gaussian with ordered least squares.
fig17:
    cargo run --release -- run experiments/fig17.toml

# Laplace vs Gaussian on histograms with exact accounting.
fig18:
    cargo run --release -- run experiments/fig18.toml

# Bounded noise: exact least radius (FFT accountant) vs the certified bound.
fig19:
    cargo run --release -- run experiments/fig19.toml

# The composition CLT: k-fold trade-off curves of three noises against their G_mu.
fig20:
    cargo run --release -- run experiments/fig20.toml

# Which noise for k queries: every mechanism calibrated by exact accounting.
fig21:
    cargo run --release -- run experiments/fig21.toml

# DP-SGD: epsilon after T steps of the subsampled Gaussian, exact, beside the RDP bound.
fig22:
    cargo run --release -- run experiments/fig22.toml

# DP-SGD: the noise multiplier needed after T steps, certified, beside the RDP accountant's.
fig23:
    cargo run --release -- run experiments/fig23.toml

# Which sampler? DP-SGD's ε by sampler and neighbour relation.
fig24:
    cargo run --release -- run experiments/fig24.toml

# k selections composed: the exponential mechanism and permute-and-flip, certified, against the usual routes.
fig25:
    cargo run --release -- run experiments/fig25.toml

# Hostile-input property test, long run (the test command runs 150 cases, CI's long step 2000;
# DPW_FUZZ_SEED picks another sample).
fuzz cases="2000":
    DPW_FUZZ_CASES={{cases}} cargo test --release -p dpw --test hostile -- --nocapture
