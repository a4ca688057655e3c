"""The certified solver (`dpw.solve`, `Mechanism.solve`, `Composition.solve`) against
references computed here from closed forms, sharing no code with dpw: the analytic
Gaussian sigma (Balle & Wang 2018, Theorem 8) by bisection on delta(sigma), the Gaussian's
attack risk (sigma = sensitivity/mu, mu = Phi^-1(TPR) - Phi^-1(FPR)), and the exact
delta of k-fold randomized response (Kairouz et al.) for count=?. Then agreement with
`dpw solve --format json` (DPW_BIN) and the errors."""

import json
import math
import os
import subprocess

import pytest

import dpw

# ---------------------------------------------------------------- references (plain Python)


def Phi(x):
    """Standard normal CDF through erfc (relative accuracy in both tails)."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def Phi_inv(p):
    """The x with Phi(x) = p, by bisection on erfc (to the last bits of x)."""
    lo, hi = -40.0, 40.0
    for _ in range(300):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if Phi(mid) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def gaussian_delta(sigma, eps, sens=1.0):
    """delta(eps) of the Gaussian mechanism (Balle & Wang, Theorem 8):
    Phi(sens/(2 sigma) - eps sigma/sens) - e^eps Phi(-sens/(2 sigma) - eps sigma/sens)."""
    a, b = sens / (2 * sigma), eps * sigma / sens
    return Phi(a - b) - math.exp(eps) * Phi(-a - b)


def bisect_log(decreasing, target, lo, hi):
    """The x in [lo, hi] where decreasing(x) crosses target, by bisection in log x."""
    assert decreasing(lo) > target >= decreasing(hi)
    for _ in range(300):
        mid = math.sqrt(lo * hi)
        if mid in (lo, hi):
            break
        if decreasing(mid) > target:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


def analytic_sigma(eps, delta, sens=1.0):
    """The least sigma with gaussian_delta(sigma, eps, sens) <= delta."""
    return bisect_log(lambda s: gaussian_delta(s, eps, sens), delta, 1e-6, 1e6)


def gaussian_mu(eps, delta):
    """The mu = sens/sigma of a Gaussian with delta(eps) = delta exactly."""
    return 1.0 / analytic_sigma(eps, delta)


def rr_delta(eps0, k, eps):
    """Exact delta(eps) of k-fold randomized response with parameter eps0 (Kairouz, Oh &
    Viswanath): with p = e^eps0/(1 + e^eps0) and i of the k answers flipped, the loss is
    L = (k - 2i) eps0 and delta(eps) = sum over L > eps of
    C(k, i) (p^(k-i) (1-p)^i - e^eps p^i (1-p)^(k-i)); each term written as
    C(k, i) p^(k-i) (1-p)^i (1 - e^(eps - L)) (the same number), in logs so that no
    binomial coefficient overflows."""
    lp = -math.log1p(math.exp(-eps0))  # ln p
    lq = -math.log1p(math.exp(eps0))  # ln (1 - p)
    terms = []
    for i in range(k + 1):
        loss = (k - 2 * i) * eps0
        if loss <= eps:
            break
        ln_c = math.lgamma(k + 1) - math.lgamma(i + 1) - math.lgamma(k - i + 1)
        terms.append(math.exp(ln_c + (k - i) * lp + i * lq) * -math.expm1(eps - loss))
    return math.fsum(terms)


def rr_count(eps0, eps, delta):
    """The largest k with rr_delta(eps0, k, eps) <= delta (delta grows with k)."""
    lo, hi = 1, 2
    assert rr_delta(eps0, lo, eps) <= delta
    while rr_delta(eps0, hi, eps) <= delta:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if rr_delta(eps0, mid, eps) <= delta:
            lo = mid
        else:
            hi = mid
    return lo


# A reference computed in doubles is good to ~1e-13 relative; the solver's pair is 1e-4
# apart, so this slack never hides a wrong side.
SLACK = 1e-9


def assert_brackets(s, exact, accuracy=1e-4, larger_is_safer=True):
    """`fails` certified to fail and `meets` certified to meet bracket the exact value."""
    assert s.fails is not None and s.accuracy_met
    if larger_is_safer:
        assert s.fails < exact * (1 + SLACK) and exact * (1 - SLACK) <= s.meets, (s, exact)
    else:
        assert s.meets <= exact * (1 + SLACK) and exact * (1 - SLACK) < s.fails, (s, exact)
    assert abs(s.meets / s.fails - 1) <= accuracy * (1 + 1e-9)


# ---------------------------------------------------------------- against the references


@pytest.mark.parametrize(
    "eps,delta,sens", [(1.0, 1e-5, 1.0), (0.5, 1e-8, 1.0), (3.0, 1e-3, 1.0), (1.0, 1e-6, 2.5)]
)
def test_gaussian_sigma_brackets_the_analytic_sigma(eps, delta, sens):
    spec = "gaussian:sigma=?" if sens == 1.0 else f"gaussian:sigma=?,sensitivity={sens!r}"
    s = dpw.solve(spec, epsilon=eps, delta=delta)
    assert s.parameter == "sigma" and isinstance(s.meets, float)
    assert_brackets(s, analytic_sigma(eps, delta, sens))
    assert s.evaluations >= 2 and s.mechanisms == [spec]
    # The SPECs at `meets`, through the accountant (another code path): epsilon holds.
    # Re-asked finer than the solver's gap (a 1e-4 bracket may straddle eps at `meets`).
    assert dpw.account(s.specs, delta=delta, accuracy=1e-6).upper <= eps


def test_accuracy_is_the_requested_one():
    exact = analytic_sigma(1.0, 1e-5)
    coarse = dpw.solve("gaussian:sigma=?", epsilon=1.0, delta=1e-5, accuracy=1e-2)
    # (1e-5, the finest the solver allows.)
    fine = dpw.solve("gaussian:sigma=?", epsilon=1.0, delta=1e-5, accuracy=1e-5)
    assert_brackets(coarse, exact, accuracy=1e-2)
    assert_brackets(fine, exact, accuracy=1e-5)
    assert fine.meets <= coarse.meets


def test_sensitivity_is_solved_in_the_leaking_direction():
    # A larger sensitivity leaks more: meets < fails, and sens* = sigma * mu*.
    s = dpw.solve("gaussian:sigma=2,sensitivity=?", epsilon=1.0, delta=1e-5)
    assert s.parameter == "sensitivity"
    assert_brackets(s, 2.0 * gaussian_mu(1.0, 1e-5), larger_is_safer=False)


@pytest.mark.parametrize("tpr,fpr,sens", [(0.05, 1e-3, 1.0), (0.5, 0.01, 1.0), (0.2, 1e-4, 3.0)])
def test_gaussian_attack_risk(tpr, fpr, sens):
    # Power of the best test at FPR a against mu-GDP: Phi(mu + Phi^-1(a)) <= TPR.
    mu = Phi_inv(tpr) - Phi_inv(fpr)
    spec = "gaussian:sigma=?" if sens == 1.0 else f"gaussian:sigma=?,sensitivity={sens!r}"
    s = dpw.solve(spec, max_tpr=tpr, at_fpr=fpr)
    assert_brackets(s, sens / mu)


def test_both_targets_the_binding_one_decides():
    privacy = analytic_sigma(1.0, 1e-5)  # 3.73
    risk = 1.0 / (Phi_inv(0.05) - Phi_inv(1e-3))  # 0.69
    s = dpw.solve("gaussian:sigma=?", epsilon=1.0, delta=1e-5, max_tpr=0.05, at_fpr=1e-3)
    assert_brackets(s, max(privacy, risk))
    s = dpw.solve("gaussian:sigma=?", epsilon=1.0, delta=1e-5, max_tpr=0.01, at_fpr=1e-9)
    assert_brackets(s, max(privacy, 1.0 / (Phi_inv(0.01) - Phi_inv(1e-9))))


@pytest.mark.parametrize(
    "eps0,eps,delta", [(0.1, 1.0, 1e-5), (0.05, 1.0, 1e-6), (0.01, 0.5, 1e-6), (0.02, 1.0, 1e-9)]
)
def test_randomized_response_count_is_exact(eps0, eps, delta):
    s = dpw.solve(f"rr:epsilon={eps0!r},count=?", epsilon=eps, delta=delta)
    n = s.meets
    assert s.parameter == "count" and isinstance(n, int) and s.fails == n + 1
    assert s.accuracy_met
    assert rr_delta(eps0, n, eps) <= delta < rr_delta(eps0, n + 1, eps)
    assert n == rr_count(eps0, eps, delta)
    # The object face: the count written into a Mechanism is replaced, not a start.
    m = dpw.Mechanism.randomized_response(eps0).compose(1000)
    assert m.solve("count", epsilon=eps, delta=delta).meets == n


def test_every_value_meets():
    # q = 1 (no subsampling) already meets: no value fails.
    s = dpw.solve("subsampled-gaussian:sigma=1,q=?", epsilon=100.0, delta=1e-5)
    assert s.parameter == "q" and s.meets == 1.0 and s.fails is None
    assert "fails=None" in repr(s)


# ---------------------------------------------------------------- the object API


def test_mechanism_solve_is_solve_on_its_spec():
    m = dpw.Mechanism.gaussian(sigma=100.0, sensitivity=2.0)
    a = m.solve("sigma", epsilon=1.0, delta=1e-6)
    b = dpw.solve("gaussian:sigma=?,sensitivity=2.0", epsilon=1.0, delta=1e-6)
    assert (a.meets, a.fails, a.evaluations) == (b.meets, b.fails, b.evaluations)
    assert_brackets(a, analytic_sigma(1.0, 1e-6, 2.0))
    assert a.mechanisms == ["gaussian:sigma=?,sensitivity=2.0"]


def test_composition_solve_against_the_gaussian_sum():
    # Gaussians compose as one with mu^2 = sum of (sens/sigma)^2: 3 uses at sigma 20 and
    # one at sigma s reach mu* when 3/400 + 1/s^2 = mu*^2.
    mu = gaussian_mu(1.0, 1e-5)
    exact = 1.0 / math.sqrt(mu * mu - 3 / 400)
    c = dpw.Mechanism.gaussian(20.0).compose(3) + dpw.Mechanism.gaussian(5.0)
    s = c.solve("sigma", index=1, epsilon=1.0, delta=1e-5)
    assert_brackets(s, exact)
    assert s.mechanisms == ["gaussian:sigma=20.0,count=3", "gaussian:sigma=?"]
    assert c.solve("sigma", index=-1, epsilon=1.0, delta=1e-5).meets == s.meets
    # A list mixing objects and a SPEC with the ?: the same search.
    t = dpw.solve([dpw.Mechanism.gaussian(20.0).compose(3), "gaussian:sigma=?"], epsilon=1.0, delta=1e-5)
    assert (t.meets, t.fails) == (s.meets, s.fails)
    # Without index: the only mechanism with the key.
    mixed = dpw.Mechanism.laplace(50.0) + dpw.Mechanism.gaussian(5.0)
    assert mixed.solve("sigma", epsilon=1.0, delta=1e-5).mechanisms == [
        "laplace:scale=50.0",
        "gaussian:sigma=?",
    ]


def test_solution_repr_and_attributes():
    s = dpw.solve("rr:epsilon=0.1,count=?", epsilon=1.0, delta=1e-5)
    assert repr(s) == (
        f"Solution(parameter='count', meets={s.meets}, fails={s.fails}, "
        f"evaluations={s.evaluations}, accuracy_met=True)"
    )
    assert s.specs == [f"rr:epsilon=0.1,count={s.meets}"]
    assert s.target == "epsilon<=1 delta=1e-5"
    assert s.seconds >= 0 and s.work > 0
    assert dpw.Solution.__doc__ and dpw.solve.__doc__ and dpw.Mechanism.solve.__doc__


# ---------------------------------------------------------------- agreement with the CLI

BIN = os.environ.get("DPW_BIN")

CLI = [
    (["gaussian:sigma=?"], {"epsilon": 1.0, "delta": 1e-5}),
    (["gaussian:sigma=?,sensitivity=2.5"], {"epsilon": 0.5, "delta": 1e-8, "accuracy": 1e-3}),
    (["gaussian:sigma=?"], {"max_tpr": 0.05, "at_fpr": 1e-3}),
    (["rr:epsilon=0.05,count=?"], {"epsilon": 1.0, "delta": 1e-6}),
    (["laplace:scale=?,count=20", "rr:epsilon=0.1,count=5"], {"epsilon": 2.0, "delta": 1e-6}),
    (["subsampled-gaussian:sigma=1,q=?"], {"epsilon": 100.0, "delta": 1e-5}),
    (["gaussian:sigma=?"], {"epsilon": 1.0, "delta": 1e-5, "max_tpr": 0.01, "at_fpr": 1e-9}),
]


@pytest.mark.skipif(not BIN, reason="set DPW_BIN to the dpw binary to compare with the CLI")
@pytest.mark.parametrize("specs,kw", CLI)
def test_solve_matches_the_cli(specs, kw):
    args = [BIN, "solve"]
    for s in specs:
        args += ["--mechanism", s]
    for k, v in kw.items():
        args += ["--" + k.replace("_", "-"), repr(v)]
    out = subprocess.run(args + ["--format", "json"], check=True, capture_output=True, text=True)
    cli = json.loads(out.stdout)
    py = dpw.solve(specs, **kw)
    assert cli["parameter"] == py.parameter
    assert cli["meets"] == py.meets and cli["fails"] == py.fails
    assert cli["evaluations"] == py.evaluations and cli["accuracy_met"] == py.accuracy_met
    assert cli["target"] == py.target and cli["request"]["mechanisms"] == py.mechanisms


# ---------------------------------------------------------------- errors

G = dpw.Mechanism.gaussian(1.0)
C = dpw.Mechanism.gaussian(1.0) + dpw.Mechanism.laplace(2.0)
T = {"epsilon": 1.0, "delta": 1e-5}

BAD = [
    ("no unknown", lambda: dpw.solve("gaussian:sigma=1", **T)),
    ("second unknown", lambda: dpw.solve("gaussian:sigma=?,sensitivity=?", **T)),
    ("second unknown", lambda: dpw.solve(["gaussian:sigma=?", "laplace:scale=?"], **T)),
    ("not a key of this kind", lambda: dpw.solve("gaussian:scale=?", **T)),
    ("cannot be solved for", lambda: dpw.solve("bounded:family=power,alpha=?,radius=3", **T)),
    ("unknown mechanism kind", lambda: dpw.solve("gauss:sigma=?", **T)),
    ("count", lambda: dpw.solve("gaussian:sigma=?,count=0", **T)),
    ("give a target", lambda: dpw.solve("gaussian:sigma=?")),
    ("delta", lambda: dpw.solve("gaussian:sigma=?", epsilon=1.0)),
    ("epsilon", lambda: dpw.solve("gaussian:sigma=?", delta=1e-5)),
    ("at_fpr", lambda: dpw.solve("gaussian:sigma=?", max_tpr=0.5)),
    ("max_tpr", lambda: dpw.solve("gaussian:sigma=?", at_fpr=0.5)),
    ("max_tpr", lambda: dpw.solve("gaussian:sigma=?", max_tpr=0.5, at_fpr=0.6)),
    ("at_fpr", lambda: dpw.solve("gaussian:sigma=?", max_tpr=0.5, at_fpr=0.0)),
    ("delta", lambda: dpw.solve("gaussian:sigma=?", epsilon=1.0, delta=1.0)),
    ("epsilon", lambda: dpw.solve("gaussian:sigma=?", epsilon=-1.0, delta=1e-5)),
    ("epsilon", lambda: dpw.solve("gaussian:sigma=?", epsilon="1", delta=1e-5)),
    ("accuracy", lambda: dpw.solve("gaussian:sigma=?", accuracy=0.9, **T)),
    ("accuracy", lambda: dpw.solve("gaussian:sigma=?", accuracy=1e-9, **T)),
    ("max_work", lambda: dpw.solve("gaussian:sigma=?", max_work=10.0, **T)),
    ("mechanisms", lambda: dpw.solve([], **T)),
    ("mechanisms", lambda: dpw.solve(3, **T)),
    ("mechanisms[1]", lambda: dpw.solve(["gaussian:sigma=?", 3.0], **T)),
    ("no sigma meets", lambda: dpw.solve("gaussian:sigma=?", epsilon=1e-9, delta=1e-300)),
    ("no count meets", lambda: dpw.solve("rr:epsilon=2,count=?", epsilon=1.0, delta=1e-9)),
    ("unknown", lambda: G.solve("scale", **T)),
    ("unknown", lambda: G.solve("alpha", **T)),
    ("unknown", lambda: G.solve(3, **T)),
    ("give a target", lambda: G.solve("sigma")),
    ("index", lambda: C.solve("count", **T)),
    ("unknown", lambda: C.solve("q", **T)),
    ("index", lambda: C.solve("sigma", index=2, **T)),
    ("index", lambda: C.solve("sigma", index=True, **T)),
    ("not a key of laplace", lambda: C.solve("sigma", index=1, **T)),
]


@pytest.mark.parametrize("name,call", BAD, ids=[f"{i}-{n}" for i, (n, _) in enumerate(BAD)])
def test_bad_input_is_a_one_line_value_error(name, call):
    with pytest.raises(ValueError) as e:
        call()
    msg = str(e.value)
    assert name in msg and "\n" not in msg, msg
    assert "--" not in msg, msg


def test_unmeetable_says_within_which_range():
    with pytest.raises(ValueError, match=r"no sigma meets .* within sigma <= "):
        dpw.solve("gaussian:sigma=?", epsilon=1e-9, delta=1e-300)
