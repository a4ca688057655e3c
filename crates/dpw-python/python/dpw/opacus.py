"""dpw's certified accountant behind Opacus's accountant interface (docs/from_opacus.md).

``privacy_engine.accountant = dpw.opacus.Accountant()`` makes an Opacus training run report
dpw's certified epsilon: the accountant records ``(noise_multiplier, sample_rate, steps)``
as Opacus's own accountants do (consecutive steps with the same pair make one entry), and
``get_epsilon(delta)`` is the certified upper end of ``dpw account --schedule`` of that
history (Poisson-subsampled Gaussian steps, add/remove neighbours, the worse direction;
docs/accountant.md §2.8). Opacus is not a dependency: the class has the methods Opacus
calls, nothing is imported from it.

``get_noise_multiplier`` answers Opacus's calibration question with the certified ``meets``
value of ``dpw.solve``: a noise multiplier certified to meet the target.
"""

from __future__ import annotations

import math
import os
import tempfile
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._dpw import Bracket, account, solve

__all__ = ["Accountant", "get_noise_multiplier"]


def _positive(name: str, x: Any, *, upper: Optional[float] = None) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} = {x!r} is not a number") from None
    if not (math.isfinite(v) and v >= 0.0 and (upper is None or v <= upper)):
        where = f"[0, {upper}]" if upper is not None else "[0, inf)"
        raise ValueError(f"{name} = {v} is outside the allowed range {where}")
    return v


class Accountant:
    """An Opacus-compatible accountant whose epsilon is dpw's certified upper end.

    ``history`` lists ``(noise_multiplier, sample_rate, steps)``, one entry per run of
    consecutive steps with the same pair, as Opacus's accountants keep it.
    """

    def __init__(self) -> None:
        self.history: List[Tuple[float, float, int]] = []

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one step of DP-SGD (a Poisson sample at ``sample_rate``, Gaussian noise
        of ``noise_multiplier`` times the clipping norm)."""
        sigma = _positive("noise_multiplier", noise_multiplier)
        q = _positive("sample_rate", sample_rate, upper=1.0)
        if self.history and self.history[-1][:2] == (sigma, q):
            self.history[-1] = (sigma, q, self.history[-1][2] + 1)
        else:
            self.history.append((sigma, q, 1))

    def _schedule(self) -> List[Tuple[float, float, int]]:
        # Steps with nothing sampled leak nothing; a zero noise multiplier leaks all.
        return [h for h in self.history if h[1] > 0.0]

    def get_bracket(self, delta: float, *, accuracy: Optional[float] = None) -> Bracket:
        """The certified bracket of epsilon at ``delta`` for the recorded history."""
        rows = self._schedule()
        if not rows:
            raise ValueError("the accountant has recorded no step with a positive sample_rate")
        if any(sigma == 0.0 for sigma, _, _ in rows):
            raise ValueError("a step with noise_multiplier = 0 has no finite epsilon")
        # The schedule CSV `dpw account --schedule` reads (repr keeps every float exact).
        fd, path = tempfile.mkstemp(suffix=".csv", prefix="dpw-opacus-")
        try:
            with os.fdopen(fd, "w") as f:
                f.write("sigma,q,count\n")
                for sigma, q, n in rows:
                    f.write(f"{sigma!r},{q!r},{n}\n")
            return account([], schedule=path, delta=delta, accuracy=accuracy)
        finally:
            os.remove(path)

    def get_epsilon(self, delta: float, **kwargs: Any) -> float:
        """Certified epsilon at ``delta`` (the bracket's upper end); ``inf`` when some step
        had no noise. Keyword arguments Opacus passes to other accountants (``eps_error``,
        ``alphas``, ...) are accepted and ignored, except ``accuracy``."""
        rows = self._schedule()
        if not rows:
            return 0.0
        if any(sigma == 0.0 for sigma, _, _ in rows):
            return math.inf
        return self.get_bracket(delta, accuracy=kwargs.get("accuracy")).upper

    def __len__(self) -> int:
        return len(self.history)

    @classmethod
    def mechanism(cls) -> str:
        """The accountant's name, as Opacus's ``mechanism()`` gives it."""
        return "dpw"

    def state_dict(self, destination: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """The history and the mechanism's name, as Opacus checkpoints them."""
        out = destination if destination is not None else {}
        out["history"] = list(self.history)
        out["mechanism"] = self.mechanism()
        return out

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Restore a history saved by :meth:`state_dict` (or by another Opacus
        accountant that keeps ``(noise_multiplier, sample_rate, steps)`` triples)."""
        if "history" not in state_dict:
            raise ValueError("state_dict has no 'history'")
        history = []
        for i, entry in enumerate(state_dict["history"]):
            try:
                sigma, q, n = entry
            except (TypeError, ValueError):
                raise ValueError(
                    f"state_dict['history'][{i}] = {entry!r} is not a "
                    "(noise_multiplier, sample_rate, steps) triple"
                ) from None
            steps = int(n)
            if steps != n or steps < 1:
                raise ValueError(f"state_dict['history'][{i}]: steps = {n!r} is not a positive integer")
            history.append(
                (
                    _positive("noise_multiplier", sigma),
                    _positive("sample_rate", q, upper=1.0),
                    steps,
                )
            )
        self.history = history

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """The hook Opacus's privacy engine attaches to its DP optimizer: one
        :meth:`step` per optimizer step, at the optimizer's noise multiplier and the
        sample rate times its accumulated iterations (when it has them)."""

        def hook(optimizer: Any) -> None:
            times = getattr(optimizer, "accumulated_iterations", 1)
            self.step(
                noise_multiplier=optimizer.noise_multiplier,
                sample_rate=sample_rate * times,
            )

        return hook


def get_noise_multiplier(
    *,
    target_epsilon: float,
    target_delta: float,
    sample_rate: float,
    epochs: Optional[float] = None,
    steps: Optional[int] = None,
    accountant: str = "dpw",
    epsilon_tolerance: float = 0.01,
    **kwargs: Any,
) -> float:
    """The noise multiplier certified to meet ``(target_epsilon, target_delta)`` after
    ``steps`` Poisson-subsampled Gaussian steps (or ``epochs / sample_rate`` of them, rounded
    down, as Opacus counts them): ``dpw.solve``'s ``meets``, within ``epsilon_tolerance``
    of the exact threshold (relative). ``accountant`` is accepted for Opacus's signature
    and ignored: dpw's certified accountant answers."""
    del accountant, kwargs
    if (epochs is None) == (steps is None):
        raise ValueError("give exactly one of epochs or steps")
    q = _positive("sample_rate", sample_rate, upper=1.0)
    if q == 0.0:
        raise ValueError("sample_rate = 0 samples nothing")
    if steps is None:
        steps = int(_positive("epochs", epochs) / q)
    if int(steps) != steps or steps < 1:
        raise ValueError(f"steps = {steps!r} is not a positive integer")
    tol = _positive("epsilon_tolerance", epsilon_tolerance, upper=0.5)
    s = solve(
        f"subsampled-gaussian:sigma=?,q={q!r},count={int(steps)}",
        epsilon=target_epsilon,
        delta=target_delta,
        accuracy=max(tol, 1e-6),
    )
    return float(s.meets)
