"""The Gaussian calibrations and profile against the closed forms (reference.py)."""

import math

import pytest

import dpw
import reference as ref

GRID = [(e, d) for e in (0.05, 0.3, 1.0, 3.0, 8.0) for d in (1e-2, 1e-5, 1e-9)]


@pytest.mark.parametrize("eps,delta", GRID)
def test_analytic_sigma_is_the_least_sigma_by_the_closed_form(eps, delta):
    s = dpw.analytic_sigma(eps, delta)
    assert isinstance(s, float)
    # Certified: the profile at sigma meets delta (up to the reference's own rounding),
    # and a sigma 1e-6 smaller does not.
    assert ref.gaussian_delta(eps, 1 / s) <= delta * (1 + 1e-9)
    assert ref.gaussian_delta(eps, 1 / (s * (1 - 1e-6))) > delta


def test_analytic_sigma_scales_with_sensitivity_and_beats_classical():
    for eps, delta in [(0.1, 1e-5), (0.5, 1e-10), (0.9, 1e-3)]:
        s1 = dpw.analytic_sigma(eps, delta)
        assert dpw.analytic_sigma(eps, delta, 7.5) == pytest.approx(7.5 * s1, rel=1e-12)
        c = dpw.classical_sigma(eps, delta, sensitivity=2.0)
        assert c == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25 / delta)) / eps, rel=1e-14)
        assert s1 < c / 2.0


@pytest.mark.parametrize("eps", [-0.5, 0.0, 0.2, 1.0, 4.0])
@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_gaussian_delta_matches_the_closed_form(eps, mu):
    assert dpw.gaussian_delta(eps, mu) == pytest.approx(ref.gaussian_delta(eps, mu), rel=1e-9)


@pytest.mark.parametrize("delta", [1e-2, 1e-6, 1e-11])
@pytest.mark.parametrize("mu", [0.2, 1.0, 3.0])
def test_gaussian_epsilon_inverts_the_closed_form(delta, mu):
    e = dpw.gaussian_epsilon(delta, mu)
    assert e == pytest.approx(ref.gaussian_epsilon(delta, mu), rel=1e-8)
    assert ref.gaussian_delta(e, mu) <= delta * (1 + 1e-9)


def test_gaussian_epsilon_is_zero_when_delta_at_zero_is_met():
    tv = 2 * ref.Phi(0.05) - 1  # delta(0) for mu = 0.1
    assert dpw.gaussian_epsilon(tv * 1.01, 0.1) == 0.0
    assert dpw.gaussian_epsilon(tv * 0.99, 0.1) > 0.0


def test_ints_are_numbers():
    assert dpw.analytic_sigma(1, 1e-5, 1) == dpw.analytic_sigma(1.0, 1e-5, 1.0)
