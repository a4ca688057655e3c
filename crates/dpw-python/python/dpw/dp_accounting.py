"""dp_accounting's DpEvent trees in, dpw's certified brackets out (docs/from_dp_accounting.md).

``dpw.dp_accounting.account(event, delta=1e-5)`` answers for a tree built with
dp_accounting's classes (``GaussianDpEvent``, ``PoissonSampledDpEvent``,
``SelfComposedDpEvent``, ...). Events are recognised by class name and fields, so
dp_accounting is not a dependency; ``specs(event)`` shows the SPECs a tree becomes. An
event dpw cannot certify is refused with a ``ValueError`` naming its path in the tree
(``events[2].event``) and why.
"""

from __future__ import annotations

import json
from typing import Any, List, Optional

from ._dpw import Bracket
from ._dpw import account as _account
from ._dpw import event_specs as _event_specs
from ._dpw import solve as _solve

__all__ = ["account", "solve", "specs", "to_json"]

# The fields of each dp_accounting 0.6.0 event that the translation reads; the
# translation itself (which event becomes which SPEC, what is refused and why) is the
# one `dpw account --events` uses, in Rust.
_FIELDS = {
    "GaussianDpEvent": ("noise_multiplier",),
    "LaplaceDpEvent": ("noise_multiplier",),
    "DiscreteLaplaceDpEvent": ("noise_parameter", "sensitivity"),
    "RandomizedResponseDpEvent": ("noise_parameter", "num_buckets"),
    "MixtureOfGaussiansDpEvent": ("standard_deviation", "sensitivities", "sampling_probs"),
    "PoissonSampledDpEvent": ("sampling_probability", "event"),
    "SampledWithoutReplacementDpEvent": ("source_dataset_size", "sample_size", "event"),
    "SampledWithReplacementDpEvent": ("source_dataset_size", "sample_size", "event"),
    "SelfComposedDpEvent": ("event", "count"),
    "ComposedDpEvent": ("events",),
    "ZCDpEvent": ("rho", "xi"),
    "TruncatedSubsampledGaussianDpEvent": (
        "dataset_size",
        "sampling_probability",
        "truncated_batch_size",
        "noise_multiplier",
    ),
    "SingleEpochTreeAggregationDpEvent": ("noise_multiplier", "step_counts"),
    "RepeatAndSelectDpEvent": ("event", "mean", "shape"),
    # dp_accounting's main branch after 0.6.0.
    "EpsilonDeltaDpEvent": ("epsilon", "delta"),
    "ExponentialMechanismDpEvent": ("epsilon",),
    "PermuteAndFlipDpEvent": ("epsilon",),
    "DiscreteGaussianDpEvent": ("sigma", "sensitivity", "dimension"),
    "RandomAllocationDpEvent": ("event", "num_selected", "num_steps"),
}


def _plain(x: Any) -> Any:
    # numpy scalars and the like as JSON numbers; lists element by element.
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (bool, int, float, str)) or x is None:
        return x
    try:
        return float(x)
    except (TypeError, ValueError):
        return str(x)


def to_json(event: Any) -> dict:
    """A DpEvent tree as the JSON form ``dpw account --events`` reads: each node
    ``{"type": class name, field: value, ...}``, children under ``event``/``events``."""
    name = type(event).__name__
    node: dict = {"type": name}
    for f in _FIELDS.get(name, ()):
        if not hasattr(event, f):
            continue  # the translation names the missing field with the node's path
        v = getattr(event, f)
        if f == "event":
            node[f] = to_json(v)
        elif f == "events":
            node[f] = [to_json(e) for e in v]
        else:
            node[f] = _plain(v)
    return node


def _relation(neighbours: Any) -> str:
    # dp_accounting's NeighboringRelation enum, its name, or dpw's spelling.
    return str(getattr(neighbours, "name", neighbours))


def specs(event: Any, *, neighbours: Any = "add-remove") -> List[str]:
    """The SPECs (``dpw account``'s language) a DpEvent tree becomes, equal ones merged."""
    return _event_specs(json.dumps(to_json(event)), _relation(neighbours))


def account(event: Any, *, neighbours: Any = "add-remove", **kwargs: Any) -> Bracket:
    """The certified bracket for a DpEvent tree, as ``dpw.account(specs(event), ...)``:
    ``delta=`` (epsilon at delta), ``epsilon=`` (delta at epsilon) or ``at_fpr=``, and
    ``accuracy=``, ``max_work=`` as there."""
    lst = specs(event, neighbours=neighbours)
    if not lst:
        raise ValueError("event: the tree holds no private event (every part is a no-op)")
    return _account(lst, **kwargs)


# A value no pipeline sets by chance: the parameter's place in the SPECs is where it lands.
_SENTINEL = 0.123456789012345


def solve(make_event: Any, *, neighbours: Any = "add-remove", **kwargs: Any) -> Any:
    """The value of one parameter of a tree certified to meet a target, as ``dpw.solve``:
    ``make_event(x)`` builds the tree with the parameter ``x`` (a noise multiplier, a
    sampling probability, an epsilon), which must land unchanged in exactly one SPEC value
    (dp_accounting's calibration takes the same kind of function). Targets as
    ``dpw.solve``: ``epsilon=``, ``delta=``, ``max_tpr=``, ``at_fpr=``, ``accuracy=``."""
    lst = specs(make_event(_SENTINEL), neighbours=neighbours)
    mark = "=" + repr(_SENTINEL)
    places = [(i, s) for i, s in enumerate(lst) for part in s.split(",") if part.endswith(mark)]
    if len(places) != 1:
        raise ValueError(
            "make_event(x): x must reach exactly one SPEC value unchanged (found "
            f"{len(places)} in {lst}); solve on the SPECs instead"
        )
    i, s = places[0]
    parts = [p[: -len(mark)] + "=?" if p.endswith(mark) else p for p in s.split(",")]
    lst[i] = ",".join(parts)
    return _solve(lst, **kwargs)
