"""dp_accounting's DpEvent trees in, dpw's certified brackets out (docs/from_dp_accounting.md).

``dpw.dp_accounting.account(event, delta=1e-5)`` answers for a tree built with
dp_accounting's classes (``GaussianDpEvent``, ``PoissonSampledDpEvent``,
``SelfComposedDpEvent``, ...). Events are recognised by class name and fields, so
dp_accounting is not a dependency; ``specs(event)`` shows the SPECs a tree becomes. An
event dpw cannot certify is refused with a ``ValueError`` naming its path in the tree
(``events[2].event``) and why.
"""

from __future__ import annotations

import math
from typing import Any, List, Optional

from ._dpw import Bracket
from ._dpw import account as _account

__all__ = ["account", "specs"]

_RELATIONS = {
    "add-remove": "add-remove",
    "add_or_remove_one": "add-remove",
    "replace-one": "replace-one",
    "replace_one": "replace-one",
}


def _relation(neighbours: Any) -> str:
    # dp_accounting's NeighboringRelation enum, its name, or dpw's spelling.
    name = getattr(neighbours, "name", neighbours)
    key = str(name).lower()
    if key not in _RELATIONS:
        raise ValueError(
            f"neighbours = {neighbours!r} is not one of: add-remove (ADD_OR_REMOVE_ONE), "
            "replace-one (REPLACE_ONE)"
        )
    return _RELATIONS[key]


def _num(x: float) -> str:
    return repr(float(x))


def _field(event: Any, name: str, path: str) -> Any:
    if not hasattr(event, name):
        raise ValueError(f"{path}: {type(event).__name__} has no field '{name}'")
    return getattr(event, name)


def _count(x: Any, path: str) -> int:
    try:
        n = int(x)
    except (TypeError, ValueError):
        raise ValueError(f"{path}.count = {x!r} is not an integer") from None
    if n != x or n < 0:
        raise ValueError(f"{path}.count = {x!r} is not a non-negative integer")
    return n


def _refuse(path: str, name: str, why: str) -> ValueError:
    return ValueError(f"{path}: {name} is refused: {why}")


def _walk(event: Any, path: str, relation: str) -> List[tuple]:
    """The tree below `event` as (spec without count, count) pairs."""
    name = type(event).__name__
    if name == "NoOpDpEvent":
        return []
    if name == "ComposedDpEvent":
        out: List[tuple] = []
        for i, e in enumerate(_field(event, "events", path)):
            out.extend(_walk(e, f"{path}.events[{i}]", relation))
        return out
    if name == "SelfComposedDpEvent":
        n = _count(_field(event, "count", path), path)
        inner = _walk(_field(event, "event", path), f"{path}.event", relation)
        return [(s, c * n) for s, c in inner if c * n > 0]
    if name == "GaussianDpEvent":
        return [(f"gaussian:sigma={_num(_field(event, 'noise_multiplier', path))}", 1)]
    if name == "LaplaceDpEvent":
        return [(f"laplace:scale={_num(_field(event, 'noise_multiplier', path))}", 1)]
    if name == "DiscreteLaplaceDpEvent":
        t = float(_field(event, "noise_parameter", path))
        s = _field(event, "sensitivity", path)
        if not (math.isfinite(t) and t > 0):
            raise ValueError(f"{path}.noise_parameter = {t!r} is not positive")
        return [(f"discrete-laplace:scale={_num(1.0 / t)},sensitivity={s}", 1)]
    if name == "RandomizedResponseDpEvent":
        p = float(_field(event, "noise_parameter", path))
        k = _field(event, "num_buckets", path)
        if k != 2:
            raise _refuse(
                path,
                name,
                f"num_buckets = {k}: only two buckets (binary randomized response) have a "
                "law in dpw yet",
            )
        if not (0 < p <= 1):
            raise ValueError(f"{path}.noise_parameter = {p!r} is outside (0, 1]")
        if p == 1:
            return []
        # With probability p a uniform bucket, else the truth: log-odds ln((1 − p/2)/(p/2)).
        return [(f"rr:epsilon={_num(math.log((2 - p) / p))}", 1)]
    if name == "MixtureOfGaussiansDpEvent":
        if relation != "add-remove":
            raise _refuse(path, name, "dpw has its pair under add/remove neighbours only")
        sigma = _field(event, "standard_deviation", path)
        shifts = ";".join(_num(c) for c in _field(event, "sensitivities", path))
        probs = ";".join(_num(p) for p in _field(event, "sampling_probs", path))
        return [(f"gaussian-mixture:sigma={_num(sigma)},shifts={shifts},probs={probs}", 1)]
    if name in ("PoissonSampledDpEvent", "SampledWithoutReplacementDpEvent"):
        inner = _field(event, "event", path)
        kind = {"GaussianDpEvent": "subsampled-gaussian:sigma=", "LaplaceDpEvent": "subsampled-laplace:scale="}
        iname = type(inner).__name__
        if iname not in kind:
            raise _refuse(
                f"{path}.event",
                iname,
                f"dpw samples Gaussian and Laplace events only (inside {name})",
            )
        noise = _num(_field(inner, "noise_multiplier", f"{path}.event"))
        if name == "PoissonSampledDpEvent":
            q = _num(_field(event, "sampling_probability", path))
            sampler = f"q={q}"
        else:
            n = _field(event, "source_dataset_size", path)
            b = _field(event, "sample_size", path)
            sampler = f"sampling=fixed,batch={b},n={n}"
        # dp_accounting's noise multiplier is relative to the relation's own sensitivity:
        # under replace-one that is the distance between the two examples' contributions
        # (twice the clipping norm), which dpw's subsampled kinds write as 2 × sensitivity.
        half = ",sensitivity=0.5" if relation == "replace-one" else ""
        return [(f"{kind[iname]}{noise},{sampler},neighbours={relation}{half}", 1)]
    why = {
        "NonPrivateDpEvent": "a non-private event has no finite epsilon",
        "UnsupportedDpEvent": "dp_accounting marks it unsupported",
        "ZCDpEvent": "a rho-zCDP guarantee alone has no tight pair (its conversion is an upper bound only)",
        "SampledWithReplacementDpEvent": "sampling with replacement has no law in dpw yet",
        "TruncatedSubsampledGaussianDpEvent": "capped Poisson batches have no law in dpw yet",
        "SingleEpochTreeAggregationDpEvent": "tree aggregation has no law in dpw yet",
        "RepeatAndSelectDpEvent": "repeat-and-select has no tight law (not built yet)",
    }
    if name in why:
        raise _refuse(path, name, why[name])
    raise ValueError(f"{path}: {name} is not a dp_accounting event dpw knows")


def specs(event: Any, *, neighbours: Any = "add-remove") -> List[str]:
    """The SPECs (``dpw account``'s language) a DpEvent tree becomes, equal ones merged."""
    relation = _relation(neighbours)
    merged: dict = {}
    for spec, count in _walk(event, "event", relation):
        merged[spec] = merged.get(spec, 0) + count
    return [f"{s},count={c}" for s, c in merged.items() if c > 0]


def account(
    event: Any,
    *,
    delta: Optional[float] = None,
    epsilon: Optional[float] = None,
    neighbours: Any = "add-remove",
    accuracy: Optional[float] = None,
) -> Bracket:
    """The certified bracket of epsilon at ``delta`` (or of delta at ``epsilon``) for a
    DpEvent tree, as ``dpw.account(specs(event), ...)``."""
    lst = specs(event, neighbours=neighbours)
    if not lst:
        raise ValueError("event: the tree holds no private event (every part is a no-op)")
    return _account(lst, delta=delta, epsilon=epsilon, accuracy=accuracy)
