"""Every bad argument is a ValueError with a one-line message naming the argument."""

import pytest

import dpw

G = dpw.Mechanism.gaussian(1.0)

BAD = [
    ("epsilon", lambda: dpw.analytic_sigma(0.0, 1e-5)),
    ("epsilon", lambda: dpw.analytic_sigma(float("nan"), 1e-5)),
    ("epsilon", lambda: dpw.analytic_sigma(float("inf"), 1e-5)),
    ("delta", lambda: dpw.analytic_sigma(1.0, 1.0)),
    ("delta", lambda: dpw.analytic_sigma(1.0, 0.0)),
    ("sensitivity", lambda: dpw.analytic_sigma(1.0, 1e-5, -1.0)),
    ("epsilon", lambda: dpw.analytic_sigma("1", 1e-5)),
    ("epsilon", lambda: dpw.analytic_sigma(None, 1e-5)),
    ("epsilon", lambda: dpw.classical_sigma(1.0, 1e-5)),
    ("epsilon", lambda: dpw.gaussian_delta(float("nan"), 1.0)),
    ("mu", lambda: dpw.gaussian_delta(1.0, -1.0)),
    ("delta", lambda: dpw.gaussian_epsilon(0.0, 1.0)),
    ("delta", lambda: dpw.gaussian_epsilon(1.5, 1.0)),
    ("mu", lambda: dpw.gaussian_epsilon(1e-5, float("inf"))),
    ("epsilon", lambda: dpw.calibrate(-1.0, 1e-5)),
    ("delta", lambda: dpw.calibrate(1.0, 2.0)),
    ("queries", lambda: dpw.calibrate(1.0, 1e-5, queries=2.5)),
    ("queries", lambda: dpw.calibrate(1.0, 1e-5, queries=0)),
    ("sensitivity", lambda: dpw.calibrate(1.0, 1e-5, sensitivity=0)),
    ("beta", lambda: dpw.calibrate(1.0, 1e-5, beta=1.0)),
    ("density", lambda: dpw.calibrate(1.0, 1e-5, density="gauss")),
    ("epsilon", lambda: dpw.calibrate("x", 1e-5)),
    ("sigma", lambda: dpw.Mechanism.gaussian(-1.0)),
    ("sigma", lambda: dpw.Mechanism.gaussian(float("inf"))),
    ("sensitivity/sigma", lambda: dpw.Mechanism.gaussian(1e-9)),
    ("sensitivity", lambda: dpw.Mechanism.gaussian(1.0, sensitivity=0)),
    ("scale", lambda: dpw.Mechanism.laplace("3")),
    ("epsilon", lambda: dpw.Mechanism.randomized_response(800)),
    ("delta", lambda: dpw.Mechanism.truncated_laplace(1.0, 1.0)),
    ("q", lambda: dpw.Mechanism.subsampled_gaussian(1.0, 1.5)),
    ("q", lambda: dpw.Mechanism.subsampled_laplace(1.0, 0.0)),
    ("family", lambda: dpw.Mechanism.bounded(10.0, family="cubic")),
    ("alpha", lambda: dpw.Mechanism.bounded(10.0, family="exp", alpha=2.0)),
    ("alpha", lambda: dpw.Mechanism.bounded(10.0, alpha=-1.0)),
    ("radius", lambda: dpw.Mechanism.bounded(1.0)),
    ("spec", lambda: dpw.Mechanism(3)),
    ("unknown mechanism kind", lambda: dpw.Mechanism("gauss:sigma=1")),
    ("missing key", lambda: dpw.Mechanism("gaussian:sensitivity=2")),
    ("count", lambda: G.compose(0)),
    ("count", lambda: G.compose(2.5)),
    ("count", lambda: G.compose(True)),
    ("count", lambda: G.compose(10**10).compose(2)),
    ("count", lambda: dpw.compose([G.compose(10**6)]).compose(10**5)),
    ("delta", lambda: G.epsilon(0.0)),
    ("delta", lambda: G.epsilon(1.0)),
    ("delta", lambda: G.epsilon(None)),
    ("epsilon", lambda: G.delta(-1.0)),
    ("accuracy", lambda: G.epsilon(1e-5, accuracy=0.9)),
    ("unreachable", lambda: dpw.Mechanism.truncated_laplace(1.0, 1e-3).compose(10).epsilon(1e-6)),
    ("delta/epsilon", lambda: dpw.account(["gaussian:sigma=1"])),
    ("delta/epsilon", lambda: dpw.account(["gaussian:sigma=1"], delta=1e-5, epsilon=1.0)),
    ("mechanisms", lambda: dpw.account([], delta=1e-5)),
    ("mechanisms", lambda: dpw.account("gaussian:sigma=1", delta=1e-5)),
    ("mechanisms[1]", lambda: dpw.account(["gaussian:sigma=1", "laplace:b=2"], delta=1e-5)),
    ("mechanisms[0]", lambda: dpw.account([3.0], delta=1e-5)),
    ("mechanisms", lambda: dpw.compose(5)),
    ("expected a Mechanism", lambda: G + 1),
    ("k", lambda: dpw.certified_radius(0.5, 1.0, 1e-6)),
    ("epsilon", lambda: dpw.certified_radius(1, 0.0, 1e-6)),
    ("delta", lambda: dpw.certified_radius(1, 1.0, 1.0)),
    ("family", lambda: dpw.certified_radius(1, 1.0, 1e-6, family="gauss")),
    ("k", lambda: dpw.least_radius(1.5, 1.0, 1e-6)),
    ("k", lambda: dpw.least_radius(10**11, 1.0, 1e-6)),
    ("accuracy", lambda: dpw.least_radius(1, 1.0, 1e-6, accuracy=0.0)),
    # Issue 33 §4: δ below the CLI's 1e-300 aborted the interpreter (an 8 GiB allocation).
    ("delta", lambda: dpw.certified_radius(100, 1.0, 1e-320)),
    ("delta", lambda: dpw.least_radius(100, 1.0, 1e-320)),
    # Integers beyond the doubles: an OverflowError that named no argument.
    ("epsilon", lambda: dpw.calibrate(10**400, 1e-5)),
    ("queries", lambda: dpw.calibrate(1.0, 1e-5, queries=10**400)),
    ("epsilon", lambda: dpw.analytic_sigma(10**400, 1e-5)),
]

COMPLEX = [
    ("epsilon", lambda np: dpw.analytic_sigma(np.array([1 + 1j]), 1e-5)),
    ("delta", lambda np: dpw.analytic_sigma(1.0, np.array([1e-5 + 0j, 1e-6]))),
    ("epsilon", lambda np: dpw.analytic_sigma(1 + 1j, 1e-5)),
]


@pytest.mark.parametrize("name,call", BAD, ids=[f"{i}-{n}" for i, (n, _) in enumerate(BAD)])
def test_bad_argument_is_a_one_line_value_error(name, call):
    with pytest.raises(ValueError) as e:
        call()
    msg = str(e.value)
    assert name in msg and "\n" not in msg, msg
    assert not msg.startswith("--")


@pytest.mark.parametrize("name,call", COMPLEX, ids=[f"{i}-{n}" for i, (n, _) in enumerate(COMPLEX)])
def test_complex_arguments_are_refused_not_truncated(name, call):
    # numpy's asarray(..., float64) drops the imaginary part with only a warning; even
    # an imaginary part of 0 is refused (the type is wrong, whatever the value).
    np = pytest.importorskip("numpy")
    with pytest.raises(ValueError) as e:
        call(np)
    msg = str(e.value)
    assert name in msg and "\n" not in msg, msg


def test_every_public_item_is_documented():
    for name in dpw.__all__:
        assert getattr(dpw, name).__doc__, name
    for meth in ["gaussian", "laplace", "compose", "epsilon", "delta", "spec"]:
        assert getattr(dpw.Mechanism, meth).__doc__, meth
