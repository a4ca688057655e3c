"""Independent reference computations for the tests: closed forms written from the
formulas (docs/accountant.md §2.1, §2.4; Balle & Wang 2018, Theorem 8) in plain Python,
sharing no code with dpw."""

from __future__ import annotations

import math


def Phi(x: float) -> float:
    """Standard normal CDF through erfc (relative accuracy in both tails)."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def gaussian_delta(eps: float, mu: float) -> float:
    """delta(eps) of N(0,1) against N(mu,1): Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)."""
    return Phi(mu / 2 - eps / mu) - math.exp(eps) * Phi(-mu / 2 - eps / mu)


def gaussian_epsilon(delta: float, mu: float) -> float:
    """The eps with gaussian_delta(eps, mu) = delta, by bisection (delta < delta(0))."""
    lo, hi = 0.0, 1.0
    while gaussian_delta(hi, mu) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if gaussian_delta(mid, mu) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return 0.5 * (lo + hi)


def ln_mills(x: float) -> float:
    """ln R(x), R(x) = Phi(-x)/phi(x), by its asymptotic series (x >= 30: error < 1e-16)."""
    s, term = 1.0, 1.0
    for n in range(1, 8):
        term *= -(2 * n - 1) / (x * x)
        s += term
    return math.log(s / x)


def ln_gaussian_delta_tail(eps: float, mu: float) -> float:
    """ln delta(eps) for a = eps/mu - mu/2 >= 30 (far below double range):
    delta = phi(a) (R(a) - R(a + mu)), because e^eps phi(a + mu) = phi(a)."""
    a = eps / mu - mu / 2
    b = a + mu
    ln_phi_a = -0.5 * a * a - 0.5 * math.log(2 * math.pi)
    ra, rb = ln_mills(a), ln_mills(b)
    return ln_phi_a + ra + math.log(-math.expm1(rb - ra))


def rr_delta(eps: float, eps0: float, k: int) -> float:
    """Exact delta(eps) of k-fold randomized response with parameter eps0, by enumerating
    the binomial law of the loss: with i outcomes of loss -eps0, L = (k - 2i) eps0 and
    P(L) = C(k, i) e^{(k-i) eps0} / (1 + e^{eps0})^k; delta = sum over L > eps of
    P(L) (1 - e^{eps - L}). Summed in log space relative to the largest term."""
    ln_norm = k * math.log1p(math.exp(eps0)) if eps0 < 30 else k * (eps0 + math.log1p(math.exp(-eps0)))
    logs = []
    for i in range(k + 1):
        loss = (k - 2 * i) * eps0
        if loss <= eps:
            break
        ln_p = math.log(math.comb(k, i)) + (k - i) * eps0 - ln_norm
        logs.append(ln_p + math.log(-math.expm1(eps - loss)))
    if not logs:
        return 0.0
    m = max(logs)
    return math.exp(m) * math.fsum(math.exp(v - m) for v in logs)


def truncated_laplace_mean_abs(eps: float, delta: float, sens: float) -> float:
    """E|X| of the truncated Laplacian of Geng et al.: Laplace(lambda) on [-A, A],
    lambda = sens/eps, A = lambda ln(1 + (e^eps - 1)/(2 delta)); by integrating
    x e^{-x/lambda} on [0, A] over the mass of e^{-x/lambda} on [0, A]."""
    lam = sens / eps
    a = lam * math.log1p(math.expm1(eps) / (2 * delta))
    e = math.exp(-a / lam)
    return lam - a * e / (1 - e)
