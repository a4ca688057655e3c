"""The certified accountant against closed forms: k-fold Gaussian (one Gaussian with
mu = sqrt(k)/sigma), heterogeneous Gaussians (mu^2 adds), k-fold randomized response
(the binomial law of the loss enumerated), and the SPEC and object APIs against each
other."""

import math

import pytest

import dpw
import reference as ref


@pytest.mark.parametrize("sigma,k", [(0.8, 1), (2.0, 1000), (50.0, 100000), (1000.0, 10**8)])
@pytest.mark.parametrize("delta", [1e-3, 1e-8])
def test_k_fold_gaussian_epsilon_contains_the_closed_form(sigma, k, delta):
    b = dpw.Mechanism.gaussian(sigma=sigma).compose(k).epsilon(delta=delta)
    mu = math.sqrt(k) / sigma
    exact = ref.gaussian_epsilon(delta, mu)
    assert b.quantity == "epsilon" and b.given == delta
    assert b.lower <= exact * (1 + 1e-12) and exact * (1 - 1e-12) <= b.upper
    assert b.upper / b.lower - 1 <= 1e-4 + 1e-12
    assert b.lower <= b.estimate <= b.upper
    # dpw's own closed form agrees (the accountant and the profile are separate code).
    assert b.lower <= dpw.gaussian_epsilon(delta, mu) <= b.upper * (1 + 1e-12)


def test_gaussian_delta_at_tiny_delta_in_log_space():
    # delta(40) of one Gaussian with mu = 1 is about e^-800: below a double.
    b = dpw.Mechanism.gaussian(sigma=1.0).delta(epsilon=40.0)
    exact_ln = ref.ln_gaussian_delta_tail(40.0, 1.0)
    assert exact_ln < -745
    assert b.ln_lower <= exact_ln + 1e-9 and exact_ln - 1e-9 <= b.ln_upper
    assert b.ln_upper - b.ln_lower < 1e-3
    # Underflows: the upper end is a few subnormal ulps rounded outward (never 0, which
    # would not bound a positive delta); the logarithms carry the value.
    assert 0.0 < b.upper <= 1e-322 and b.lower == 0.0


def test_heterogeneous_gaussians_compose_like_one():
    c = dpw.Mechanism.gaussian(sigma=3.0).compose(50) + dpw.Mechanism.gaussian(sigma=1.5, sensitivity=2.0)
    mu = math.sqrt(50 / 9 + (2.0 / 1.5) ** 2)
    b = c.epsilon(1e-6)
    exact = ref.gaussian_epsilon(1e-6, mu)
    assert b.lower <= exact <= b.upper
    d = c.delta(1.0)
    assert d.quantity == "delta"
    exact_d = ref.gaussian_delta(1.0, mu)
    assert d.lower <= exact_d * (1 + 1e-9) and exact_d * (1 - 1e-9) <= d.upper
    assert d.upper / d.lower - 1 <= 1e-3 + 1e-12


@pytest.mark.parametrize("eps0,k", [(0.1, 10), (0.5, 100), (1.0, 1000), (0.05, 4000)])
@pytest.mark.parametrize("eps_frac", [0.05, 0.3])
def test_k_fold_randomized_response_delta_contains_the_binomial_sum(eps0, k, eps_frac):
    eps = eps_frac * k * eps0
    exact = ref.rr_delta(eps, eps0, k)
    assert exact > 0
    b = dpw.Mechanism.randomized_response(eps0).compose(k).delta(eps)
    assert b.lower <= exact * (1 + 1e-9) and exact * (1 - 1e-9) <= b.upper


@pytest.mark.parametrize("eps0,k,delta", [(0.2, 100, 1e-5), (1.0, 50, 1e-9), (0.05, 2000, 1e-3)])
def test_k_fold_randomized_response_epsilon_brackets_the_exact_root(eps0, k, delta):
    b = dpw.account([f"rr:epsilon={eps0},count={k}"], delta=delta)
    # lower <= eps* <= upper  <=>  delta(lower) >= delta >= delta(upper).
    assert ref.rr_delta(b.upper, eps0, k) <= delta * (1 + 1e-9)
    assert ref.rr_delta(b.lower, eps0, k) >= delta * (1 - 1e-9)


@pytest.mark.parametrize("eps0,delta0,k", [(0.3, 1e-7, 20), (0.05, 0.0, 500), (1.0, 1e-9, 5)])
def test_k_approx_dp_black_boxes_hold_the_optimal_composition(eps0, delta0, k):
    # Kairouz-Oh-Viswanath Thm 3.3: delta_k(eps) = 1 - (1 - delta0)^k (1 - rr_delta(eps)).
    eps = 0.4 * k * eps0
    exact = -math.expm1(k * math.log1p(-delta0) + math.log1p(-ref.rr_delta(eps, eps0, k)))
    m = dpw.Mechanism.approx_dp(eps0, delta0).compose(k)
    assert m.spec.startswith("approx-dp:epsilon=") and m.spec.endswith(f",count={k}")
    b = m.delta(eps)
    assert b.lower <= exact * (1 + 1e-9) and exact * (1 - 1e-9) <= b.upper


@pytest.mark.parametrize("scale,k", [(1.0, 50), (4.0, 400)])
def test_discrete_laplace_at_sensitivity_one_is_randomized_response(scale, k):
    # The loss of discrete Laplace noise at sensitivity 1 is +-1/scale, as randomized
    # response's with eps0 = 1/scale: the binomial sum is its exact delta.
    eps = 0.3 * k / scale
    exact = ref.rr_delta(eps, 1.0 / scale, k)
    b = dpw.Mechanism.discrete_laplace(scale).compose(k).delta(eps)
    assert b.lower <= exact * (1 + 1e-9) and exact * (1 - 1e-9) <= b.upper


def test_discrete_laplace_needs_an_integer_sensitivity():
    with pytest.raises(ValueError, match="sensitivity"):
        dpw.Mechanism.discrete_laplace(2.0, sensitivity=1.5)
    m = dpw.Mechanism.discrete_laplace(2.0, sensitivity=3)
    assert m.epsilon(1e-6).upper > 0


def test_discrete_gaussian_one_use_is_the_sum_over_the_integers():
    sigma, eps = 1.5, 0.4
    xs = range(-80, 81)
    w = [math.exp(-x * x / (2 * sigma * sigma)) for x in xs]
    z = math.fsum(w)
    loss = [(1 - 2 * x) / (2 * sigma * sigma) for x in xs]
    exact = math.fsum(p / z * max(0.0, 1 - math.exp(eps - l)) for p, l in zip(w, loss))
    b = dpw.Mechanism.discrete_gaussian(sigma).delta(eps)
    assert b.lower <= exact * (1 + 1e-9) and exact * (1 - 1e-9) <= b.upper


def test_exponential_mechanism_brackets_the_optimal_non_adaptive_composition():
    # Randomized response at eps/2 (attained) below, the class's dominating pair above.
    eps, k, x = 0.2, 50, 1.5
    b = dpw.Mechanism.exponential(eps).compose(k).delta(x)
    assert b.lower <= ref.rr_delta(x, eps / 2, k) * (1 + 1e-9)
    assert b.upper >= ref.rr_delta(x, eps / 2, k)


def test_permute_and_flip_two_candidates_are_its_lower_end():
    # On two candidates whose utilities swap, permute-and-flip outputs the better one
    # with probability 1 - exp(-eps/2)/2: randomized response at ln(2 exp(eps/2) - 1).
    eps, k, x = 0.5, 20, 1.0
    e2 = math.log(2 * math.exp(eps / 2) - 1)
    b = dpw.Mechanism.permute_and_flip(eps).compose(k).delta(x)
    assert b.lower <= ref.rr_delta(x, e2, k) * (1 + 1e-9) <= b.upper * (1 + 1e-9)
    assert b.upper >= ref.rr_delta(x, eps, k) * (1 - 1e-9)
    same = dpw.Mechanism.report_noisy_max(eps, "exponential").compose(k).delta(x)
    assert (same.lower, same.upper) == (b.lower, b.upper)
    with pytest.raises(ValueError, match="noise"):
        dpw.Mechanism.report_noisy_max(eps, "normal")


def test_gaussian_mixture_at_zero_one_is_poisson_subsampling():
    # shifts [0, 1] at probabilities [1 - q, q]: the Poisson-subsampled Gaussian's pair.
    m = dpw.Mechanism.gaussian_mixture(1.5, [0, 1], [0.9, 0.1]).compose(50).epsilon(1e-5)
    s = dpw.Mechanism("subsampled-gaussian:sigma=1.5,q=0.1,count=50").epsilon(1e-5)
    assert m.lower <= s.upper and s.lower <= m.upper
    with pytest.raises(ValueError, match="probs"):
        dpw.Mechanism.gaussian_mixture(1.0, [0, 1], [0.5, 0.6])


def test_approx_dp_takes_no_sensitivity():
    with pytest.raises(ValueError, match="sensitivity does not apply"):
        dpw.Mechanism("approx-dp:epsilon=1,delta=1e-6,sensitivity=2")
    with pytest.raises(TypeError):
        dpw.Mechanism.approx_dp(1.0, 1e-6, sensitivity=2.0)


def test_subsampled_gaussian_at_rate_one_is_the_gaussian():
    a = dpw.Mechanism.subsampled_gaussian(sigma=1.2, q=1.0).compose(20).epsilon(1e-6)
    exact = ref.gaussian_epsilon(1e-6, math.sqrt(20) / 1.2)
    assert a.lower <= exact <= a.upper


def test_subsampling_amplifies():
    full = dpw.Mechanism.gaussian(sigma=1.0).compose(100).epsilon(1e-5)
    sub = dpw.Mechanism.subsampled_gaussian(sigma=1.0, q=0.01).compose(100).epsilon(1e-5)
    assert sub.upper < 0.2 * full.lower


def test_spec_strings_and_objects_are_one_vocabulary():
    m = dpw.Mechanism.gaussian(sigma=2).compose(1000)
    assert m == dpw.Mechanism("gaussian:sigma=2,count=1000")
    assert m.spec == "gaussian:sigma=2.0,count=1000"
    assert (m.kind, m.count, m.sensitivity) == ("gaussian", 1000, 1.0)
    assert dpw.Mechanism(m.spec) == m
    # Every constructor writes a SPEC the parser reads back as the same mechanism.
    built = [
        dpw.Mechanism.laplace(3.5, sensitivity=2),
        dpw.Mechanism.randomized_response(0.7),
        dpw.Mechanism.truncated_laplace(1.0, 1e-6),
        dpw.Mechanism.bounded(40.0),
        dpw.Mechanism.bounded(40.0, family="exp"),
        dpw.Mechanism.bounded(40.0, family="power", alpha=3.0),
        dpw.Mechanism.subsampled_gaussian(1.0, 0.01),
        dpw.Mechanism.subsampled_laplace(2.0, 0.1).compose(7),
    ]
    for b in built:
        assert dpw.Mechanism(b.spec) == b
    c = dpw.compose(built[:2] + ["gaussian:sigma=5"])
    assert len(c) == 3 and c.specs[2] == "gaussian:sigma=5"
    assert c == built[0] + built[1] + "gaussian:sigma=5.0"
    assert c.compose(3).mechanisms[1].count == 3
    assert m.compose(2) == dpw.Mechanism.gaussian(2).compose(2000)


def test_pipeline_keys_survive_the_object_api_and_match_the_cli_vocabulary():
    # docs/accountant.md §2.7: a fixed-size batch, replace-one neighbours and a group.
    for spec in [
        "subsampled-gaussian:sigma=1,batch=256,n=60000,sampling=fixed,count=10",
        "subsampled-gaussian:sigma=1,q=0.01,neighbours=replace-one,count=10",
        "subsampled-gaussian:sigma=1,q=0.01,group=3,count=10",
    ]:
        m = dpw.Mechanism(spec)
        assert dpw.Mechanism(m.spec) == m
        # Composing keeps the pipeline: 2 x 10 uses is the SPEC with count=20.
        assert m.compose(2) == dpw.Mechanism(spec.replace("count=10", "count=20"))
        a = dpw.account([spec], delta=1e-5)
        b = m.epsilon(delta=1e-5)
        assert (a.lower, a.upper) == (b.lower, b.upper)
    # Each pipeline is a different mechanism from the plain Poisson one, and leaks more.
    plain = dpw.Mechanism("subsampled-gaussian:sigma=1,q=0.01,count=10").epsilon(delta=1e-5)
    ro = dpw.Mechanism("subsampled-gaussian:sigma=1,q=0.01,neighbours=replace-one,count=10")
    assert ro.epsilon(delta=1e-5).lower > plain.upper
    with pytest.raises(ValueError, match="neighbours"):
        dpw.Mechanism("subsampled-gaussian:sigma=1,q=0.01,neighbours=swap")


def test_account_equals_the_object_api():
    a = dpw.account(["gaussian:sigma=2,count=1000", "laplace:scale=5"], delta=1e-8)
    b = (dpw.Mechanism.gaussian(2).compose(1000) + dpw.Mechanism.laplace(5)).epsilon(delta=1e-8)
    assert (a.lower, a.upper) == (b.lower, b.upper)
    # Mechanism objects are accepted by account too.
    c = dpw.account([dpw.Mechanism.gaussian(2).compose(1000), "laplace:scale=5"], delta=1e-8)
    assert (c.lower, c.upper) == (a.lower, a.upper)


def test_accuracy_narrows_the_bracket():
    m = dpw.Mechanism.laplace(10).compose(100)
    coarse = m.epsilon(1e-6, accuracy=1e-2)
    fine = m.epsilon(1e-6, accuracy=1e-6)
    assert fine.upper - fine.lower < coarse.upper - coarse.lower
    assert coarse.lower <= fine.lower and fine.upper <= coarse.upper * (1 + 1e-12)
    assert fine.accuracy_met and fine.seconds >= 0 and fine.step > 0


def test_schedule_file_equals_its_segments_written_out(tmp_path):
    path = tmp_path / "sched.csv"
    path.write_text("sigma,q,count\n1.2,0.01,300\n0.9,0.02,200\n")
    a = dpw.account([], schedule=str(path), delta=1e-6)
    b = dpw.account(
        [
            "subsampled-gaussian:sigma=1.2,q=0.01,count=300",
            "subsampled-gaussian:sigma=0.9,q=0.02,count=200",
        ],
        delta=1e-6,
    )
    assert (a.lower, a.upper) == (b.lower, b.upper)
    bad = tmp_path / "bad.csv"
    bad.write_text("sigma,q,count\n1.2,0.01,300\n0.9,7,200\n")
    with pytest.raises(ValueError, match="line 3: q"):
        dpw.account([], schedule=str(bad), delta=1e-6)


def test_shuffled_epochs_give_a_certified_lower_bound_only():
    # docs/accountant.md §2.9: only the lower end is certified; the upper end is inf.
    spec = "subsampled-gaussian:sigma=0.7,sampling=shuffle,batch=600,n=60000"
    b = dpw.account([spec], delta=1e-5)
    assert b.quantity == "epsilon" and b.lower > 0
    assert math.isinf(b.upper) and b.estimate == b.lower
    poisson = dpw.account(["subsampled-gaussian:sigma=0.7,q=0.01,count=100"], delta=1e-5)
    assert math.isfinite(poisson.upper)
    # The solver needs an upper bound.
    with pytest.raises(ValueError, match="no certified upper bound"):
        dpw.solve(spec.replace("sigma=0.7", "sigma=?"), epsilon=1, delta=1e-5)


def test_balls_in_bins_epochs_get_a_certified_bracket_below_poissons():
    # docs/accountant.md §2.10: both ends certified; at σ = 1 with 20 steps an epoch the
    # bracket lies below what Poisson sampling at q = 1/20 claims for the same steps.
    b = dpw.account(["subsampled-gaussian:sigma=1,sampling=allocation,steps=20,count=3"], delta=1e-5)
    assert 0 < b.lower < b.upper < math.inf and b.upper / b.lower - 1 < 1e-3
    poisson = dpw.account(["subsampled-gaussian:sigma=1,q=0.05,count=60"], delta=1e-5)
    assert b.upper < poisson.lower


def test_subsampled_gaussian_takes_the_pipeline_keys_as_keywords():
    M = dpw.Mechanism
    assert M.subsampled_gaussian(1.0, batch=256, n=60000, sampling="fixed", neighbours="replace-one") == M(
        "subsampled-gaussian:sigma=1,sampling=fixed,batch=256,n=60000,neighbours=replace-one"
    )
    assert M.subsampled_gaussian(1.0, 0.01, group=3) == M("subsampled-gaussian:sigma=1,q=0.01,group=3")
    assert M.subsampled_gaussian(1.0, sampling="allocation", steps=100) == M(
        "subsampled-gaussian:sigma=1,sampling=allocation,steps=100"
    )
    # Poisson at q = batch/n is the same mechanism as at that q.
    a = M.subsampled_gaussian(1.0, batch=1, n=4).compose(10).epsilon(delta=1e-5)
    b = M.subsampled_gaussian(1.0, 0.25).compose(10).epsilon(delta=1e-5)
    assert (a.lower, a.upper) == (b.lower, b.upper)
    with pytest.raises(ValueError, match="neighbours"):
        M.subsampled_gaussian(1.0, 0.01, neighbours="swap")
    with pytest.raises(ValueError, match="batch"):
        M.subsampled_gaussian(1.0, batch=70, n=60, sampling="fixed")


def test_account_takes_at_fpr_and_keeps_probabilities_in_0_1():
    # Issue 57 §5 (9): account had no at_fpr (the CLI's --at-fpr); (3): a delta's upper
    # end rounded outward had been 1.0000000000000004.
    from statistics import NormalDist

    n = NormalDist()
    b = dpw.account(["gaussian:sigma=1"], at_fpr=0.01)
    exact = n.cdf(n.inv_cdf(0.01) + 1.0)
    assert b.quantity == "tpr" and b.given == 0.01
    assert b.lower <= exact <= b.upper and b.upper - b.lower <= 1e-3 * b.upper
    with pytest.raises(ValueError, match="at_fpr"):
        dpw.account(["gaussian:sigma=1"], at_fpr=1.5)
    with pytest.raises(ValueError, match="exactly one of"):
        dpw.account(["gaussian:sigma=1"], delta=1e-5, at_fpr=0.01)
    for spec in ["rr:epsilon=50", "gaussian:sigma=0.1,count=100"]:
        d = dpw.account([spec], epsilon=0.0)
        assert 0.0 <= d.lower <= d.estimate <= d.upper <= 1.0 and d.ln_upper <= 0.0, d


def test_the_python_doc_says_what_each_sampler_certifies():
    # Issue 57 §5 (12): docs/python.md said balls-in-bins had a lower bound only and that
    # solve refused it; it has a certified bracket and solves. Shuffled epochs are the
    # lower-bound-only ones.
    import os
    import re

    doc = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "python.md")
    if not os.path.exists(doc):
        pytest.skip("docs/python.md is not beside the package")
    text = " ".join(open(doc, encoding="utf-8").read().split())
    for sentence in re.split(r"(?<=\.) ", text):
        if "lower bound only" in sentence:
            assert "allocation" not in sentence and "balls-in-bins" not in sentence.lower(), sentence
    assert "Balls-in-bins epochs (`sampling=allocation,steps=T`) have a certified bracket" in text
    s = dpw.solve("subsampled-gaussian:sigma=?,sampling=allocation,steps=20", epsilon=2, delta=1e-5, accuracy=1e-2)
    assert s.fails < s.meets
    b = dpw.account([f"subsampled-gaussian:sigma={s.meets!r},sampling=allocation,steps=20"], delta=1e-5)
    assert b.upper <= 2
    with pytest.raises(ValueError, match="lower bound"):
        dpw.solve("subsampled-gaussian:sigma=?,sampling=shuffle,batch=10,n=1000", epsilon=4, delta=1e-8)
