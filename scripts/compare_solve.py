#!/usr/bin/env python3
"""`dpw solve` beside dp_accounting's calibration (issue 30), one workload after the other in
one run: the noise multiplier of DP-SGD (Poisson-subsampled Gaussian) for a target
(epsilon, delta), and the number of steps for a given sigma. dp_accounting 0.6.0's
`calibrate_dp_mechanism` runs with its PLD accountant (default discretisation 1e-4) and with
its RDP accountant; each of its answers is then checked with `dpw account` (certified): is
that sigma (or count) actually within the budget?

dp_accounting is never a dependency of dpw; install it in a virtualenv outside the repo:

    python3 -m venv /tmp/dpa && /tmp/dpa/bin/pip install dp-accounting==0.6.0
    /tmp/dpa/bin/python scripts/compare_solve.py --dpw target/release/dpw
"""
import argparse
import json
import multiprocessing
import resource
import subprocess
import time

import dp_accounting
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

SIGMA = [  # (q, T, epsilon, delta): sigma unknown
    (1e-3, 100000, 0.01, 1e-6),
    (1e-3, 100000, 1.0, 1e-6),
    (1e-3, 100000, 8.0, 1e-6),
    (1e-2, 10000, 8.0, 1e-5),
]
COUNT = [(1.0, 1e-2, 8.0, 1e-5)]  # (sigma, q, epsilon, delta): count unknown


def event(q, sigma, steps):
    return dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps
    )


def dpw_json(dpw, args):
    t = time.time()
    out = subprocess.run([dpw, *args, "--format", "json"], capture_output=True, text=True)
    wall = time.time() - t
    if out.returncode != 0:
        return None, wall, out.stderr.strip()
    return json.loads(out.stdout), wall, ""


def peak_mb(dpw, args):
    out = subprocess.run(
        ["/usr/bin/time", "-f", "%M", dpw, *args, "--format", "csv"],
        capture_output=True,
        text=True,
    )
    return int(out.stderr.strip().splitlines()[-1]) / 1024


def check(dpw, spec, eps, delta):
    """dpw's certified verdict on a composition against (eps, delta)."""
    r, _, err = dpw_json(dpw, ["account", "--mechanism", spec, "--delta", str(delta)])
    if r is None:
        return f"not evaluated ({err})"
    lo, up = float(r["lower"]), float(r["upper"])
    if up <= eps:
        return f"within budget (certified epsilon <= {up:.6g})"
    if lo > eps:
        return f"OVER budget (certified epsilon >= {lo:.6g})"
    return f"undecided ([{lo:.6g}, {up:.6g}])"


def _calibrate(kind, q, steps, eps, delta, out):
    make = (
        (lambda: pld_privacy_accountant.PLDAccountant())
        if kind == "pld"
        else (lambda: rdp_privacy_accountant.RdpAccountant())
    )
    try:
        s = dp_accounting.calibrate_dp_mechanism(
            make,
            lambda s: event(q, s, steps),
            eps,
            delta,
            dp_accounting.LowerEndpointAndGuess(0.05, 1.0),
        )
        out.put((s, ""))
    except Exception as e:  # noqa: BLE001 (report whatever it raises)
        out.put((None, f"{type(e).__name__}: {e}"))


def dpa_sigma(kind, q, steps, eps, delta, timeout):
    """dp_accounting's calibration in a child process, stopped after `timeout` seconds."""
    out = multiprocessing.Queue()
    p = multiprocessing.Process(target=_calibrate, args=(kind, q, steps, eps, delta, out))
    t = time.time()
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()
        return None, time.time() - t, f"not finished after {timeout:.0f} s (stopped)"
    s, err = out.get()
    return s, time.time() - t, err


def dpa_count(kind, sigma, q, eps, delta):
    make = (
        (lambda: pld_privacy_accountant.PLDAccountant())
        if kind == "pld"
        else (lambda: rdp_privacy_accountant.RdpAccountant())
    )
    t = time.time()
    # The largest count within budget: calibrate on -count is not offered, so bisect with
    # the accountant itself (what a user does).
    lo, hi = 1, 1
    def ok(n):
        a = make()
        a.compose(event(q, sigma, n))
        return a.get_epsilon(delta) <= eps
    while ok(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo, time.time() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dpw", default="target/release/dpw")
    ap.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        help="seconds after which a dp_accounting calibration is stopped",
    )
    a = ap.parse_args()
    print("| question | dpw solve (certified) | dpw time, peak memory | dp_accounting PLD | its time | by dpw | dp_accounting RDP | its time | by dpw |")
    print("|---|---|---|---|---|---|---|---|---|")
    for q, steps, eps, delta in SIGMA:
        spec = f"subsampled-gaussian:sigma=?,q={q},count={steps}"
        args = ["solve", "--mechanism", spec, "--epsilon", str(eps), "--delta", str(delta)]
        r, wall, err = dpw_json(a.dpw, args)
        mem = peak_mb(a.dpw, args)
        ours = f"[{r['fails']:.6g}, {r['meets']:.6g}]" if r else err
        cells = [f"sigma for q={q}, T={steps:g}, eps={eps}, delta={delta:g}", ours, f"{wall:.2f} s, {mem:.0f} MB"]
        for kind in ("pld", "rdp"):
            s, t, e = dpa_sigma(kind, q, steps, eps, delta, a.timeout)
            if s is None:
                cells += [e, f"{t:.2f} s", ""]
            else:
                cells += [f"{s:.6g}", f"{t:.2f} s", check(a.dpw, spec.replace("?", repr(s)), eps, delta)]
        print("| " + " | ".join(cells) + " |", flush=True)
    for sigma, q, eps, delta in COUNT:
        spec = f"subsampled-gaussian:sigma={sigma},q={q},count=?"
        args = ["solve", "--mechanism", spec, "--epsilon", str(eps), "--delta", str(delta)]
        r, wall, err = dpw_json(a.dpw, args)
        mem = peak_mb(a.dpw, args)
        ours = f"{int(r['meets'])} (fails at {int(r['fails'])})" if r else err
        cells = [f"count for sigma={sigma}, q={q}, eps={eps}, delta={delta:g}", ours, f"{wall:.2f} s, {mem:.0f} MB"]
        for kind in ("pld", "rdp"):
            n, t = dpa_count(kind, sigma, q, eps, delta)
            cells += [str(n), f"{t:.2f} s", check(a.dpw, spec.replace("?", str(n)), eps, delta)]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
