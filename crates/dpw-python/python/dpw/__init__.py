"""dpw: certified differential-privacy accounting and noise calibration.

Functions
---------
analytic_sigma, classical_sigma
    Gaussian noise for (epsilon, delta)-DP (analytic: exact and certified).
gaussian_delta, gaussian_epsilon
    The Gaussian mechanism's privacy profile and its inverse (mu = sensitivity/sigma).
calibrate
    The noise every mechanism needs for k queries at (epsilon, delta), as ``dpw calibrate``.
account, compose, Mechanism, Composition
    The certified privacy-loss accountant, as ``dpw account``.
solve, Solution
    The certified solver, as ``dpw solve``: the value of the one parameter written ``?``
    (or ``Mechanism.solve("sigma", ...)``) that meets an (epsilon, delta) or attack-risk
    target.
certified_radius, least_radius
    The radius of bounded noise: certified (Chernoff) and exact (accountant bracket).
dp_accounting
    ``dpw.dp_accounting.account(event, delta=...)``: a dp_accounting DpEvent tree's
    certified bracket (recognised by class name; dp_accounting is not a dependency).
opacus
    ``dpw.opacus.Accountant``, an Opacus accountant whose epsilon is certified, and
    ``dpw.opacus.get_noise_multiplier``.

Every bad argument raises ``ValueError`` with a one-line message naming it.
The array functions broadcast numpy arrays (numpy is needed only for arrays).
"""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional

from ._dpw import (
    Bracket,
    Composition,
    Mechanism,
    RadiusBracket,
    Solution,
    analytic_sigma,
    certified_radius,
    classical_sigma,
    compose,
    gaussian_delta,
    gaussian_epsilon,
    least_radius,
)
from ._dpw import account as _account
from ._dpw import solve as _solve
from ._dpw import calibrate_rows as _calibrate_rows
from . import dp_accounting, opacus


def _is_event(x: Any) -> bool:
    return type(x).__name__.endswith("DpEvent")


def account(mechanisms: Any, **kwargs: Any) -> Bracket:
    """The certified accountant, as ``dpw account``: a list of mechanisms (SPECs,
    ``Mechanism`` or ``Composition`` objects), or a dp_accounting DpEvent tree (with
    ``neighbours=``; :mod:`dpw.dp_accounting`). ``delta=`` gives epsilon, ``epsilon=``
    delta, ``at_fpr=`` the largest attack TPR; ``accuracy=``, ``max_work=``,
    ``schedule=`` (a sigma,q,count CSV) as the CLI's flags."""
    if _is_event(mechanisms):
        return dp_accounting.account(mechanisms, **kwargs)
    return _account(mechanisms, **kwargs)


def solve(mechanisms: Any, **kwargs: Any) -> Solution:
    """The certified solver, as ``dpw solve``: SPECs with one value written ``?``, or a
    function building a dp_accounting DpEvent tree from the unknown
    (:func:`dpw.dp_accounting.solve`)."""
    if callable(mechanisms) and not isinstance(mechanisms, (str, Mechanism, Composition)):
        return dp_accounting.solve(mechanisms, **kwargs)
    return _solve(mechanisms, **kwargs)

__all__ = [
    "Bracket",
    "CalibrationRow",
    "Calibration",
    "Composition",
    "Mechanism",
    "RadiusBracket",
    "Solution",
    "account",
    "analytic_sigma",
    "calibrate",
    "certified_radius",
    "classical_sigma",
    "compose",
    "gaussian_delta",
    "gaussian_epsilon",
    "dp_accounting",
    "least_radius",
    "opacus",
    "solve",
]


@dataclasses.dataclass(frozen=True)
class CalibrationRow:
    """One mechanism of :func:`calibrate`.

    ``scale`` is the noise parameter named by ``parameter`` (``b``, ``sigma``,
    ``lambda`` or ``R*sensitivity``); ``mean_abs`` is E|X| and ``second_moment`` E X^2
    per coordinate; ``max_error`` bounds the largest of the k errors with probability
    1 - beta. ``upper_bounds`` says the three error numbers are upper bounds (bounded
    noise) rather than exact values. Where the mechanism does not apply, ``applicable``
    is False, the numbers are None and ``note`` says why.
    """

    mechanism: str
    parameter: str
    scale: Optional[float]
    mean_abs: Optional[float]
    second_moment: Optional[float]
    max_error: Optional[float]
    upper_bounds: Optional[bool]
    note: str

    @property
    def applicable(self) -> bool:
        """Whether the mechanism applies at this request (its numbers are given)."""
        return self.scale is not None


class Calibration(List[CalibrationRow]):
    """The rows of :func:`calibrate` (a list), with the request they answer."""

    def __init__(self, rows: List[CalibrationRow], request: dict) -> None:
        super().__init__(rows)
        #: The arguments of the request (epsilon, delta, queries, sensitivity, beta, density).
        self.request = request

    def row(self, mechanism: str) -> CalibrationRow:
        """The row of ``mechanism`` (e.g. ``"analytic Gaussian"``); KeyError if absent."""
        for r in self:
            if r.mechanism == mechanism:
                return r
        raise KeyError(mechanism)

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame (needs pandas)."""
        try:
            import pandas
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("Calibration.to_pandas() needs pandas, which is not installed") from e
        return pandas.DataFrame(
            [dataclasses.asdict(r) for r in self],
            columns=[f.name for f in dataclasses.fields(CalibrationRow)],
        )


def _number(name: str, x: Any) -> float:
    # bool is an int in Python, but never a meaningful epsilon or count.
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        # numpy scalars are accepted through float(); anything else is refused.
        try:
            import numpy

            if isinstance(x, numpy.generic) and numpy.ndim(x) == 0:
                return float(x)
        except ImportError:
            pass
        raise ValueError(f"{name}: expected a number, got {type(x).__name__}")
    try:
        return float(x)
    except OverflowError:
        # An int beyond the doubles: say which argument, as every other refusal does.
        raise ValueError(f"{name}: {x} is too large for a double (at most 1.8e308)") from None


def calibrate(
    epsilon: float,
    delta: float,
    queries: int = 1,
    sensitivity: float = 1.0,
    beta: float = 0.05,
    density: str = "power:2",
    exact: bool = True,
) -> Calibration:
    """The noise every mechanism needs for ``queries`` queries of sensitivity
    ``sensitivity`` at (epsilon, delta), and what it costs, as ``dpw calibrate``.

    Rows: Laplace, classical Gaussian, analytic Gaussian, truncated Laplacian, bounded
    noise with the certified radius, and bounded noise with the least radius of the
    certified FFT accountant. ``density`` is the bounded noise's, ``"power:ALPHA"`` or
    ``"exp"``. epsilon > 0, 0 < delta < 1, queries an integer >= 1, sensitivity > 0,
    0 < beta < 1. ``exact=False`` skips the last row's search (``dpw calibrate
    --no-exact``), which takes seconds, up to minutes for very many queries at tiny delta.

    >>> rows = calibrate(1.0, 1e-6, queries=10)
    >>> rows.row("analytic Gaussian").scale > 0
    True
    """
    args = {
        "epsilon": _number("epsilon", epsilon),
        "delta": _number("delta", delta),
        "queries": _number("queries", queries),
        "sensitivity": _number("sensitivity", sensitivity),
        "beta": _number("beta", beta),
    }
    if not isinstance(density, str):
        raise ValueError(f"density: expected 'power:ALPHA' or 'exp', got {type(density).__name__}")
    if not isinstance(exact, bool):
        raise ValueError(f"exact: expected True or False, got {type(exact).__name__}")
    rows = _calibrate_rows(
        args["epsilon"],
        args["delta"],
        args["queries"],
        args["sensitivity"],
        args["beta"],
        density,
        exact,
    )
    return Calibration([CalibrationRow(*r) for r in rows], dict(args, density=density))
