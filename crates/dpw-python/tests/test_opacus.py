"""dpw.opacus against independent routes: an Opacus-shaped training loop (no torch) steps
the accountant through a changing schedule; its epsilon is `dpw.account` of the same
history written as a schedule CSV by hand, and `dpw account --schedule` of it when DPW_BIN
is set; one segment is the composed Mechanism's bracket; get_noise_multiplier's sigma meets
the target and a sigma 3 % smaller does not."""

import math
import os
import subprocess

import pytest

import dpw
from dpw.opacus import Accountant, get_noise_multiplier


class FakeOptimizer:
    """What Opacus's DP optimizer exposes to the accountant's hook."""

    def __init__(self, noise_multiplier, accumulated_iterations=1):
        self.noise_multiplier = noise_multiplier
        self.accumulated_iterations = accumulated_iterations


def train(acc, schedule, sample_rate):
    """Step the accountant through (noise_multiplier, steps) runs via the optimizer hook,
    as Opacus's privacy engine does after each optimizer step."""
    hook = acc.get_optimizer_hook_fn(sample_rate=sample_rate)
    for sigma, steps in schedule:
        opt = FakeOptimizer(sigma)
        for _ in range(steps):
            hook(opt)


def test_history_merges_runs_and_round_trips():
    acc = Accountant()
    train(acc, [(1.0, 30), (1.2, 20), (1.0, 5)], 0.01)
    assert acc.history == [(1.0, 0.01, 30), (1.2, 0.01, 20), (1.0, 0.01, 5)]
    assert len(acc) == 3 and Accountant.mechanism() == "dpw"
    other = Accountant()
    other.load_state_dict(acc.state_dict())
    assert other.history == acc.history
    with pytest.raises(ValueError, match="history"):
        other.load_state_dict({"history": [(1.0, 0.01)]})
    with pytest.raises(ValueError, match="sample_rate"):
        acc.step(noise_multiplier=1.0, sample_rate=1.5)


def test_epsilon_is_the_schedule_accountants(tmp_path):
    acc = Accountant()
    runs = [(1.1, 200), (0.9, 100), (1.3, 300)]
    train(acc, runs, 0.02)
    eps = acc.get_epsilon(1e-5)
    path = tmp_path / "sched.csv"
    path.write_text("sigma,q,count\n" + "".join(f"{s},0.02,{n}\n" for s, n in runs))
    b = dpw.account([], schedule=str(path), delta=1e-5)
    assert eps == b.upper and b.lower < eps
    # Composed by hand from Mechanism objects: the same bracket to its accuracy.
    c = dpw.compose(dpw.Mechanism.subsampled_gaussian(s, q=0.02).compose(n) for s, n in runs)
    h = c.epsilon(1e-5)
    assert h.lower <= eps * (1 + 1e-9) and b.lower <= h.upper * (1 + 1e-9)
    binary = os.environ.get("DPW_BIN")
    if binary:
        out = subprocess.run(
            [binary, "account", "--schedule", str(path), "--delta", "1e-5", "--format", "csv"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.splitlines()[1].split(",")
        assert float(out[3]) == eps


def test_one_segment_and_the_edges():
    acc = Accountant()
    for _ in range(500):
        acc.step(noise_multiplier=1.0, sample_rate=0.01)
    one = dpw.Mechanism.subsampled_gaussian(1.0, q=0.01).compose(500).epsilon(1e-6)
    e = acc.get_epsilon(1e-6)
    assert one.lower <= e * (1 + 1e-9) and e <= one.upper * (1 + 1e-4)
    assert Accountant().get_epsilon(1e-5) == 0.0
    acc.step(noise_multiplier=0.0, sample_rate=0.01)
    assert acc.get_epsilon(1e-5) == math.inf


def test_get_noise_multiplier_meets_its_target():
    q, steps, target = 0.01, 1000, 2.0
    sigma = get_noise_multiplier(target_epsilon=target, target_delta=1e-5, sample_rate=q, steps=steps)
    acc = Accountant()
    acc.history = [(sigma, q, steps)]
    assert acc.get_epsilon(1e-5) <= target
    acc.history = [(sigma * 0.97, q, steps)]
    assert acc.get_bracket(1e-5).lower > target
    # Epochs count as Opacus counts them: epochs / sample_rate steps.
    assert get_noise_multiplier(target_epsilon=target, target_delta=1e-5, sample_rate=q, epochs=10) == sigma
    with pytest.raises(ValueError, match="epochs or steps"):
        get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=q)
