#!/usr/bin/env python3
"""Schedules side by side: `dpw account --schedule` against dp_accounting (docs/speed.md).

Each workload is a seeded random schedule (σ and q drawn uniformly per segment, equal
counts), written to a temporary CSV. For each, in one run and one after the other:
`dpw account --schedule` (a subprocess: wall time, peak memory, its certified bracket,
which route gave the upper end, and the certified Rényi-DP bound it prints beside it),
then dp_accounting's RDP accountant and its PLD accountant on the same schedule (a
composition of `PoissonSampledDpEvent(q, GaussianDpEvent(σ))` self-composed `count`
times per segment), each in a subprocess with a time limit.

dp_accounting is not a dependency of dpw: install it in a virtualenv outside the
repository and run this script with that interpreter, e.g.

    python3 -m venv /tmp/dpa && /tmp/dpa/bin/pip install dp-accounting==0.6.0
    /tmp/dpa/bin/python scripts/compare_schedules.py --dpw target/release/dpw
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

# (name, segments, σ range, q range, total steps, δ, accuracy asked of dpw)
WORKLOADS = [
    ("100 random (σ, q)", 100, (0.7, 1.5), (1e-3, 1e-2), 100_000, 1e-5, 1e-4),
    ("400 random (σ, q)", 400, (0.7, 1.5), (1e-3, 1e-2), 100_000, 1e-5, 1e-3),
    ("1000 random (σ, q)", 1000, (0.7, 1.5), (1e-3, 1e-2), 1_000_000, 1e-5, 1e-3),
    ("1500 random (σ, q)", 1500, (0.8, 1.2), (1e-3, 5e-3), 1_000_000, 1e-6, 1e-3),
    ("1e4 random (σ, q)", 10_000, (0.8, 1.2), (1e-3, 5e-3), 1_000_000, 1e-6, 1e-3),
    ("1e4 random σ, q = 1e-3", 10_000, (0.8, 1.2), (1e-3, 1e-3), 1_000_000, 1e-6, 1e-3),
    ("2000 random σ at q = 1", 2000, (3.0, 15.0), (1.0, 1.0), 2000, 1e-5, 1e-4),
]

DPA_CODE = r"""
import json, sys, time
import dp_accounting
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant
method, path, delta = sys.argv[1], sys.argv[2], float(sys.argv[3])
rows = [l.split(",") for l in open(path).read().split()[1:]]
events = [
    dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(float(q), dp_accounting.GaussianDpEvent(float(s))),
        int(c),
    )
    for s, q, c in rows
]
t0 = time.perf_counter()
acc = (pld_privacy_accountant.PLDAccountant() if method == "pld"
       else rdp_privacy_accountant.RdpAccountant())
acc.compose(dp_accounting.ComposedDpEvent(events))
eps = acc.get_epsilon(delta)
print(json.dumps({"eps": eps, "seconds": time.perf_counter() - t0}))
"""


def write_schedule(path, n, sig, qs, total, seed):
    r = random.Random(seed)
    per = total // n
    with open(path, "w") as f:
        f.write("sigma,q,count\n")
        for _ in range(n):
            f.write(f"{r.uniform(*sig)!r},{r.uniform(*qs)!r},{per}\n")


def run_dpw(dpw, path, delta, accuracy):
    args = [dpw, "account", "--schedule", path, "--delta", str(delta), "--accuracy",
            str(accuracy), "--format", "json"]
    timer = ["/usr/bin/time", "-f", "maxrss_kb=%M"] if os.path.exists("/usr/bin/time") else []
    t0 = time.perf_counter()
    proc = subprocess.run(timer + args, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    mem = float("nan")
    for line in proc.stderr.splitlines():
        if line.startswith("maxrss_kb="):
            mem = int(line.split("=")[1]) / 1024
    if proc.returncode != 0:
        sys.exit(f"dpw failed: {proc.stderr}")
    return json.loads(proc.stdout), wall, mem


def run_dpa(method, path, delta, timeout):
    try:
        proc = subprocess.run([sys.executable, "-c", DPA_CODE, method, path, str(delta)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, None
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1]
    out = json.loads(proc.stdout)
    return out["eps"], out["seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dpw", default="target/release/dpw")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="seconds allowed to each dp_accounting call")
    ap.add_argument("--only", type=int, nargs="*", help="indices of WORKLOADS to run")
    a = ap.parse_args()
    print("| schedule | T | δ | asked | dpw bracket | width | upper from | dpw time | memory "
          "| dpw's certified RDP | dp_accounting RDP | its time | dp_accounting PLD | its time |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for i, (name, n, sig, qs, total, delta, acc) in enumerate(WORKLOADS):
            if a.only is not None and i not in a.only:
                continue
            path = os.path.join(d, f"w{i}.csv")
            write_schedule(path, n, sig, qs, total, 1000 + i)
            out, wall, mem = run_dpw(a.dpw, path, delta, acc)
            sch = out["request"]["schedule"]
            lo, hi = out["lower"], out["upper"]
            width = (hi - lo) / hi if hi > 0 else 0.0
            rdp_eps, rdp_t = run_dpa("rdp", path, delta, a.timeout)
            pld_eps, pld_t = run_dpa("pld", path, delta, a.timeout)

            def cell(e, t):
                if e is None and t is None:
                    return f"> {a.timeout:.0f} s", "—"
                if e is None:
                    return f"failed: {t}", "—"
                return f"{e:.6g}", f"{t:.2f} s"

            r, rt = cell(rdp_eps, rdp_t)
            p, pt = cell(pld_eps, pld_t)
            print(f"| {name} | {total:.0e} | {delta:g} | {acc:g} | [{lo:.6f}, {hi:.6f}] "
                  f"| {width:.2e} | {sch['upper_from']} | {wall:.2f} s | {mem:.0f} MiB "
                  f"| {sch['rdp_upper']:.6g} | {r} | {rt} | {p} | {pt} |", flush=True)


if __name__ == "__main__":
    main()
