#!/usr/bin/env python3
"""Markdown table of criterion results (issue 16 item 4; run by `just bench-table`).

Reads every target/criterion/<group>/<bench>/new/{benchmark,estimates}.json and prints
one row per benchmark: its id, the mean time per iteration with the 95 % confidence
interval, and, when the bench declares a throughput of N elements, the time per element
(e.g. per call of a kernel benchmarked over a grid of N points).

    scripts/bench_table.py [--criterion DIR] [--since FILE]

--since FILE keeps only results written after FILE was touched (the recipe touches it
before running the benches, so stale results of benches not run are left out).
Standard library only.
"""

import argparse
import json
import pathlib
import sys


def fmt_ns(ns: float) -> str:
    """A duration in ns with a unit that keeps 3 significant digits."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def rows(root: pathlib.Path, since: float):
    for bench in sorted(root.glob("**/new/benchmark.json")):
        est_path = bench.with_name("estimates.json")
        if not est_path.exists() or est_path.stat().st_mtime < since:
            continue
        meta = json.loads(bench.read_text())
        mean = json.loads(est_path.read_text())["mean"]
        ci = mean["confidence_interval"]
        per = ""
        thr = meta.get("throughput") or {}
        n = thr.get("Elements") or thr.get("ElementsAndBytes", {}).get("elements")
        if n:
            per = f"{fmt_ns(mean['point_estimate'] / n)} ({n} per iteration)"
        yield (
            meta["full_id"],
            fmt_ns(mean["point_estimate"]),
            f"{fmt_ns(ci['lower_bound'])} – {fmt_ns(ci['upper_bound'])}",
            per,
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--criterion", default="target/criterion", type=pathlib.Path)
    ap.add_argument("--since", type=pathlib.Path)
    args = ap.parse_args()
    if not args.criterion.is_dir():
        print(f"bench_table: --criterion {args.criterion}: no such directory", file=sys.stderr)
        return 2
    since = args.since.stat().st_mtime if args.since and args.since.exists() else 0.0
    table = list(rows(args.criterion, since))
    if not table:
        print(f"bench_table: no criterion results under {args.criterion}", file=sys.stderr)
        return 2
    print("| benchmark | mean per iteration | 95 % interval | per element |")
    print("|---|---|---|---|")
    for r in table:
        print("| " + " | ".join(r) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
