"""Agreement with the Rust CLI (`dpw account` and `dpw calibrate`, CSV output): run only
when DPW_BIN names the dpw binary (.ci/run sets it); skipped otherwise, so that pytest
needs no cargo."""

import csv
import io
import os
import subprocess

import pytest

import dpw

BIN = os.environ.get("DPW_BIN")
pytestmark = pytest.mark.skipif(not BIN, reason="set DPW_BIN to the dpw binary to compare with the CLI")


def cli_csv(*args):
    out = subprocess.run([BIN, *args, "--format", "csv"], check=True, capture_output=True, text=True)
    return list(csv.DictReader(io.StringIO(out.stdout)))


ACCOUNT = [
    (["gaussian:sigma=2,count=1000"], "--delta", 1e-12),
    (["laplace:scale=7.07,count=100", "rr:epsilon=0.3,count=20"], "--delta", 1e-6),
    (["subsampled-laplace:scale=1,q=0.05,count=100"], "--epsilon", 0.5),
    (["bounded:family=power,alpha=2,radius=100,count=10"], "--delta", 1e-8),
]


@pytest.mark.parametrize("specs,flag,value", ACCOUNT)
def test_account_matches_the_cli(specs, flag, value):
    args = ["account"]
    for s in specs:
        args += ["--mechanism", s]
    (row,) = cli_csv(*args, flag, repr(value))
    kw = {"delta": value} if flag == "--delta" else {"epsilon": value}
    b = dpw.account(specs, **kw)
    assert row["quantity"] == b.quantity
    for key in ("lower", "estimate", "upper"):
        assert float(row[key]) == pytest.approx(getattr(b, key), rel=1e-12, abs=0.0), key


@pytest.mark.parametrize(
    "eps,delta,k,sens,exact",
    [
        (1.0, 1e-6, 10, 1.0, True),
        (0.5, 1e-5, 1, 2.0, True),
        (2.0, 1e-9, 1000, 0.5, True),
        (1.0, 1e-6, 10, 1.0, False),
    ],
)
def test_calibrate_matches_the_cli(eps, delta, k, sens, exact):
    rows = cli_csv(
        "calibrate", "--epsilon", repr(eps), "--delta", repr(delta), "--queries", str(k),
        "--sensitivity", repr(sens), *([] if exact else ["--no-exact"]),
    )
    py = dpw.calibrate(eps, delta, queries=k, sensitivity=sens, exact=exact)
    assert py[-1].applicable == exact
    assert [r["mechanism"] for r in rows] == [r.mechanism for r in py]
    for c, p in zip(rows, py):
        if c["scale"] == "":
            assert not p.applicable and c["note"] == p.note
            continue
        for key in ("scale", "mean_abs", "second_moment", "max_error"):
            assert float(c[key]) == getattr(p, key), (p.mechanism, key)
        assert c["upper_bounds"] == str(p.upper_bounds).lower()
