#!/usr/bin/env python3
"""The noise multiplier of DP-SGD (Poisson-subsampled Gaussian, add/remove) that Google's
dp_accounting (PLD accountant, pessimistic estimate, discretisation interval 1e-4) asks for
a target (epsilon, delta), bisected to 2e-5 relative on its epsilon(sigma).

Produces the reference table of crates/composition/tests/solve.rs
(subsampled_gaussian_sigma_agrees_with_dp_accounting). dp_accounting is never a dependency
of dpw: install it in a virtualenv outside the repository:

    python3 -m venv /tmp/dpa && /tmp/dpa/bin/pip install dp-accounting==0.6.0
    /tmp/dpa/bin/python scripts/dpa_sigma.py
"""
import time

from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

SETTINGS = [  # (q, T, epsilon, delta)
    (0.01, 1000, 1.0, 1e-5),
    (0.01, 10000, 8.0, 1e-5),
    (0.1, 100, 2.0, 1e-5),
    (0.001, 10000, 1.0, 1e-6),
]


def epsilon(q, steps, sigma, delta, interval=1e-4):
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=interval)
    acc.compose(
        dp_event.SelfComposedDpEvent(
            dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps
        )
    )
    return acc.get_epsilon(delta)


def sigma(q, steps, eps, delta):
    lo, hi = 0.3, 50.0
    while hi / lo - 1 > 2e-5:
        mid = (lo * hi) ** 0.5
        if epsilon(q, steps, mid, delta) <= eps:
            hi = mid
        else:
            lo = mid
    return lo, hi


if __name__ == "__main__":
    for q, steps, eps, delta in SETTINGS:
        t = time.time()
        lo, hi = sigma(q, steps, eps, delta)
        print(
            f"q={q} T={steps} eps={eps} delta={delta}: sigma in [{lo:.6f}, {hi:.6f}]"
            f" ({time.time() - t:.1f} s)",
            flush=True,
        )
