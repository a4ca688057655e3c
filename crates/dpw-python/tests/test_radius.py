"""Bounded-noise radii: the certified radius bounds the exact one from above; the exact
least radius (k = 1) against an independent quadrature of the hockey-stick divergence."""

import math

import pytest

import dpw


def test_certified_is_above_the_exact_bracket():
    for k, eps, delta in [(1, 1.0, 1e-6), (100, 1.0, 1e-8)]:
        c = dpw.certified_radius(k, eps, delta)
        b = dpw.least_radius(k, eps, delta, accuracy=1e-3)
        assert b.lower < b.upper <= c
        assert b.certified == c
        assert b.upper / b.lower - 1 < 5e-3


def test_exp_family_and_alpha():
    a2 = dpw.certified_radius(10, 1.0, 1e-6)
    assert dpw.certified_radius(10, 1.0, 1e-6, family="power", alpha=2.0) == a2
    assert dpw.certified_radius(10, 1.0, 1e-6, alpha=4.0) != a2
    assert dpw.certified_radius(10, 1.0, 1e-6, family="exp") > 0


def test_one_query_least_radius_against_quadrature():
    np = pytest.importorskip("numpy")
    eps, delta = 1.0, 1e-6
    b = dpw.least_radius(1, eps, delta, accuracy=1e-3)

    # Density of X on (-1, 1): exp(-(1 - x^2)^-2) / Z, by the midpoint rule.
    n = 2_000_000
    x = -1 + (np.arange(n) + 0.5) * (2.0 / n)
    w = np.exp(-((1 - x * x) ** -2.0))
    z = w.sum() * (2.0 / n)

    def delta_at(r):
        # P = R X, Q = 1 + R X: delta = int (p - e^eps q)_+ dy, midpoint in y.
        y = -r + (np.arange(n) + 0.5) * (2.0 * r / n)
        def dens(t):
            u = t / r
            out = np.zeros_like(u)
            inside = np.abs(u) < 1
            out[inside] = np.exp(-((1 - u[inside] ** 2) ** -2.0)) / (z * r)
            return out
        return np.clip(dens(y) - math.exp(eps) * dens(y - 1.0), 0, None).sum() * (2.0 * r / n)

    assert delta_at(b.upper) <= delta * (1 + 1e-3)
    assert delta_at(b.lower) >= delta * (1 - 1e-3)
    # and the bracket is not vacuous: 1 % more or less noise moves delta well beyond it.
    assert delta_at(b.upper * 1.01) < delta * 0.97 and delta_at(b.lower * 0.99) > delta * 1.03
