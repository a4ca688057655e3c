"""Hostile-input property test of the Python binding (issue 33 §4): seeded random calls of
every public function with values drawn from a hostile pool (zeros, negatives, NaN, inf,
subnormals, huge and tiny numbers, huge ints, complex numbers, strings, None, bools, numpy
arrays and scalars) mixed with well-formed ones. Every call must return a finite result
of the documented type or raise a one-line ValueError; never another exception, never a
NaN or an infinity in a result, never a crash of the interpreter (which ends the run).
``DPW_PY_FUZZ_CASES`` (default 400) and ``DPW_PY_FUZZ_SEED`` (default 33) choose the sample.
"""

import math
import os
import random

import pytest

import dpw

np = pytest.importorskip("numpy")

HOSTILE = [
    0, -1, -0.0, 1e-320, 5e-324, 1e308, -1e308, float("nan"), float("inf"), -float("inf"),
    10**400, 2**63, True, None, "1", "", 1 + 1j, [], [1.0, float("nan")],
]


def good_or_bad(rng, good):
    return rng.choice(good) if rng.random() < 0.8 else rng.choice(HOSTILE)


def maybe_array(rng, x):
    if isinstance(x, (int, float)) and not isinstance(x, bool) and rng.random() < 0.2:
        return rng.choice([np.array([x, x]), np.float64(x) if isinstance(x, float) else x])
    return x


def spec(rng):
    num = lambda good: str(good_or_bad(rng, good))
    kinds = [
        lambda: f"gaussian:sigma={num([0.5, 1, 2, 10])}",
        lambda: f"laplace:scale={num([0.5, 1, 3])}",
        lambda: f"rr:epsilon={num([0.1, 1, 3])}",
        lambda: f"discrete-laplace:scale={num([0.5, 2, 10])},sensitivity={num([1, 3])}",
        lambda: f"approx-dp:epsilon={num([0.1, 1])},delta={num([0, 1e-6])}",
        lambda: f"discrete-gaussian:sigma={num([1, 5])},sensitivity={num([1, 2])}",
        lambda: f"exponential:epsilon={num([0.05, 1])}",
        lambda: f"permute-and-flip:epsilon={num([0.05, 1])}",
        lambda: f"gaussian-mixture:sigma={num([0.5, 2])},shifts={rng.choice(['0;1', '0;0.5;2', '0;-1'])},probs={rng.choice(['0.9;0.1', '0.5;0.3;0.2', '1'])}",
        lambda: f"report-noisy-max:epsilon={num([0.05, 1])},noise={rng.choice(['gumbel', 'exponential', 'laplace', 'normal'])}",
        lambda: f"truncated-laplace:epsilon={num([0.5, 1])},delta={num([1e-6, 1e-3])}",
        lambda: f"subsampled-gaussian:sigma={num([1, 2])},q={num([0.01, 0.1])}",
        lambda: f"bounded:family=power,alpha={num([2])},radius={num([50, 100])}",
        lambda: "nonsense:x=1",
    ]
    s = rng.choice(kinds)()
    if rng.random() < 0.5:
        s += f",count={num([1, 10, 100])}"
    return s


def case(rng):
    """(name, call) for one random call."""
    e = lambda: maybe_array(rng, good_or_bad(rng, [0.1, 0.5, 1.0, 3.0]))
    d = lambda: maybe_array(rng, good_or_bad(rng, [1e-10, 1e-6, 1e-3]))
    mu = lambda: maybe_array(rng, good_or_bad(rng, [0.5, 1.0, 4.0]))
    calls = [
        ("analytic_sigma", lambda: dpw.analytic_sigma(e(), d())),
        ("classical_sigma", lambda: dpw.classical_sigma(e(), d())),
        ("gaussian_delta", lambda: dpw.gaussian_delta(e(), mu())),
        ("gaussian_epsilon", lambda: dpw.gaussian_epsilon(d(), mu())),
        ("certified_radius", lambda: dpw.certified_radius(
            good_or_bad(rng, [1, 10, 1000]), good_or_bad(rng, [0.5, 1.0]), good_or_bad(rng, [1e-6, 1e-3]))),
        ("calibrate", lambda: dpw.calibrate(
            good_or_bad(rng, [0.5, 1.0, 2.0]), good_or_bad(rng, [1e-6, 1e-3]),
            queries=good_or_bad(rng, [1, 10]))),
        ("account", lambda: dpw.account(
            [spec(rng) for _ in range(rng.choice([1, 2]))],
            **{rng.choice(["delta", "epsilon"]): good_or_bad(rng, [1e-6, 1e-3, 1.0])},
            accuracy=rng.choice([None, 1e-2, 1e-3]),
            max_work=1e7)),
        ("mechanism", lambda: dpw.Mechanism(spec(rng)).compose(good_or_bad(rng, [1, 10])).epsilon(
            good_or_bad(rng, [1e-6, 1e-3]), accuracy=1e-2)),
    ]
    return rng.choice(calls)


def finite(x):
    if isinstance(x, float):
        return math.isfinite(x)
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        return bool(np.all(np.isfinite(x)))
    return True


def test_random_calls_return_finite_results_or_one_line_value_errors():
    cases = int(os.environ.get("DPW_PY_FUZZ_CASES", "400"))
    rng = random.Random(int(os.environ.get("DPW_PY_FUZZ_SEED", "33")))
    failures = []
    answered = refused = 0
    for i in range(cases):
        name, call = case(rng)
        try:
            out = call()
        except ValueError as err:
            msg = str(err)
            if "\n" in msg or not msg:
                failures.append(f"case {i} {name}: multi-line or empty message {msg!r}")
            refused += 1
            continue
        except Exception as err:  # noqa: BLE001 - any other exception is the failure
            failures.append(f"case {i} {name}: {type(err).__name__}: {err}")
            continue
        answered += 1
        values = []
        if isinstance(out, (float, np.ndarray, np.generic)):
            values = [out]
        elif hasattr(out, "lower"):
            values = [out.lower, out.upper]
        elif isinstance(out, dpw.Calibration):
            values = [v for r in out for v in (r.scale, r.mean_abs, r.max_error) if v is not None]
        for v in values:
            if not finite(v):
                failures.append(f"case {i} {name}: non-finite result {v!r}")
    print(f"python hostile: {cases} cases, {answered} answered, {refused} refused")
    assert not failures, "\n".join(failures[:20])
