#!/usr/bin/env python3
"""DP-SGD accounting side by side: `dpw account` against Google's dp_accounting.

For each workload (Poisson-subsampled Gaussian, add/remove neighbours: rate q, noise
multiplier σ, T steps, δ) this runs, in the same process and one after the other,
`dpw account` (a subprocess: its wall time, its certified bracket and its peak memory)
and dp_accounting's PLD accountant at its default discretisation interval (1e-4; its
wall time and its ε). It prints a markdown table (docs/speed.md, README).

dp_accounting is not a dependency of dpw: install it in a virtualenv outside the
repository and run this script with that interpreter, e.g.

    python3 -m venv /tmp/dpa && /tmp/dpa/bin/pip install dp-accounting==0.6.0
    /tmp/dpa/bin/python scripts/compare_dpsgd.py --dpw target/release/dpw [--grid]

Each tool runs `--repeat` times per workload (default 3), alternating, and the median
time is reported. "faster" compares the `dpw account` process (start-up included) with
dp_accounting's call; where dpw's Python package is installed in the same virtualenv
(`pip install ./crates/dpw-python`), the same question asked of it in this process is
timed too ("dpw library call", the footing dp_accounting is timed on). `--grid` adds the 36 workloads (q, σ, T) ∈ {1e-4, 1e-3, 1e-2} × {0.6, 0.8, 1, 2} ×
{1e3, 1e5, 1e6} at δ = 1e-6 to the five of issue 34's table.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

TABLE = [
    (0.01, 1.0, 10_000, 1e-5),
    (0.001, 0.8, 100_000, 1e-6),
    (0.004, 1.1, 250_000, 1e-6),
    (0.1, 2.0, 1_000, 1e-5),
    (1e-4, 0.6, 1_000_000, 1e-6),
]


def run_dpw(dpw, q, sigma, steps, delta):
    """(answer JSON, wall seconds, peak resident memory in MiB) of one `dpw account`."""
    args = [
        dpw,
        "account",
        "--mechanism",
        f"subsampled-gaussian:sigma={sigma},q={q},count={steps}",
        "--delta",
        str(delta),
        "--format",
        "json",
    ]
    # The peak memory comes from GNU time, whose child is forked from a small process: a
    # child forked from this interpreter would count the pages dp_accounting left here.
    timer = ["/usr/bin/time", "-f", "maxrss_kb=%M"] if os.path.exists("/usr/bin/time") else []
    t0 = time.perf_counter()
    proc = subprocess.run(timer + args, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    mem = float("nan")
    for line in proc.stderr.splitlines():
        if line.startswith("maxrss_kb="):
            mem = float(line.split("=")[1]) / 1024.0
    if proc.returncode != 0:
        return None, wall, mem
    return json.loads(proc.stdout), wall, mem


def run_dpw_library(q, sigma, steps, delta):
    """Wall seconds of the same question asked of dpw's Python package in this process
    (timed as dp_accounting is: no process to start), or None without the package
    (`pip install ./crates/dpw-python` into the same virtualenv)."""
    try:
        import dpw
    except ImportError:
        return None
    t0 = time.perf_counter()
    dpw.account([f"subsampled-gaussian:sigma={sigma},q={q},count={steps}"], delta=delta)
    return time.perf_counter() - t0


def run_dp_accounting(q, sigma, steps, delta):
    """(ε, wall seconds) of dp_accounting's PLD accountant at its default interval."""
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    t0 = time.perf_counter()
    acc = pld_privacy_accountant.PLDAccountant()
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps
    )
    acc.compose(event)
    eps = acc.get_epsilon(delta)
    return eps, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dpw", default="target/release/dpw")
    ap.add_argument("--grid", action="store_true")
    ap.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of each tool per workload, alternating; the median time is reported",
    )
    a = ap.parse_args()
    work = list(TABLE)
    if a.grid:
        work += [
            (q, s, t, 1e-6)
            for q in (1e-4, 1e-3, 1e-2)
            for s in (0.6, 0.8, 1.0, 2.0)
            for t in (1_000, 100_000, 1_000_000)
        ]
    print(f"load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    print(
        "| q | σ | T | δ | dpw ε bracket | dpw time | dpw library call | dpw peak memory "
        "| dp_accounting ε | dp_accounting time | faster |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for q, sigma, steps, delta in work:
        t_dpws, t_libs, t_refs = [], [], []
        for _ in range(max(1, a.repeat)):
            ans, t, mem = run_dpw(a.dpw, q, sigma, steps, delta)
            t_dpws.append(t)
            t = run_dpw_library(q, sigma, steps, delta)
            if t is not None:
                t_libs.append(t)
            eps_ref, t = run_dp_accounting(q, sigma, steps, delta)
            t_refs.append(t)
        t_dpw, t_ref = statistics.median(t_dpws), statistics.median(t_refs)
        lib = f"{statistics.median(t_libs):.3g} s" if t_libs else "n/a"
        if ans is None:
            bracket = "refused"
        else:
            met = "" if ans["accuracy_met"] else " (accuracy not met)"
            bracket = f"[{ans['lower']:.6g}, {ans['upper']:.6g}]{met}"
        print(
            f"| {q:g} | {sigma:g} | {steps:g} | {delta:g} | {bracket} | {t_dpw:.3g} s | {lib} "
            f"| {mem:.0f} MiB | {eps_ref:.6g} | {t_ref:.3g} s "
            f"| {'dpw' if t_dpw <= t_ref else 'dp_accounting'} |",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
