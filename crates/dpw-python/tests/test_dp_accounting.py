"""dpw.dp_accounting: DpEvent trees recognised by class name. Without dp_accounting, trees of
stand-in classes of the same names and fields; with it (installed in CI's test virtualenv),
trees built with its own classes give the same bracket as the same pipeline written in
SPECs, and its own PLD and RDP answers sit where they should relative to dpw's certified
ends (an RDP epsilon is an upper bound: never below dpw's certified lower end)."""

import math
from pathlib import Path

import pytest

import dpw


def event(name, **fields):
    """A stand-in for a dp_accounting event class: the class name and fields only."""
    return type(name, (), {})() if not fields else type(name, (), dict(fields))()


def test_trees_become_specs():
    g = event("GaussianDpEvent", noise_multiplier=2.0)
    tree = event(
        "ComposedDpEvent",
        events=[
            event("SelfComposedDpEvent", event=g, count=30),
            event("NoOpDpEvent"),
            event(
                "SelfComposedDpEvent",
                event=event("PoissonSampledDpEvent", sampling_probability=0.01, event=event("GaussianDpEvent", noise_multiplier=1.1)),
                count=1000,
            ),
            g,
            event("LaplaceDpEvent", noise_multiplier=3.0),
            event("DiscreteLaplaceDpEvent", noise_parameter=0.5, sensitivity=2),
            event("RandomizedResponseDpEvent", noise_parameter=0.5, num_buckets=2),
            event("MixtureOfGaussiansDpEvent", standard_deviation=1.5, sensitivities=[0, 1], sampling_probs=[0.9, 0.1]),
        ],
    )
    got = dpw.dp_accounting.specs(tree)
    assert got == [
        "gaussian:sigma=2,count=31",
        "subsampled-gaussian:sigma=1.1,q=0.01,neighbours=add-remove,count=1000",
        "laplace:scale=3,count=1",
        "discrete-laplace:scale=2,sensitivity=2,count=1",
        f"rr:epsilon={math.log(3.0)!r},count=1",
        "gaussian-mixture:sigma=1.5,shifts=0;1,probs=0.9;0.1,count=1",
    ]
    # The JSON form is what `dpw account --events` reads.
    assert dpw.dp_accounting.to_json(g) == {"type": "GaussianDpEvent", "noise_multiplier": 2.0}
    b = dpw.dp_accounting.account(tree, delta=1e-6)
    c = dpw.account(got, delta=1e-6)
    assert (b.lower, b.upper) == (c.lower, c.upper)


def test_refusals_name_the_node():
    g = event("GaussianDpEvent", noise_multiplier=1.0)
    cases = [
        (event("ComposedDpEvent", events=[g, event("NonPrivateDpEvent")]), "event.events[1]: NonPrivateDpEvent"),
        (event("SelfComposedDpEvent", event=event("ZCDpEvent", rho=0.1, xi=0), count=3), "event.event: ZCDpEvent"),
        (event("PoissonSampledDpEvent", sampling_probability=0.1, event=event("RandomizedResponseDpEvent", noise_parameter=0.5, num_buckets=2)), "event.event: RandomizedResponseDpEvent"),
        (event("RandomizedResponseDpEvent", noise_parameter=0.5, num_buckets=3), "num_buckets = 3"),
        (event("SomethingDpEvent"), "SomethingDpEvent is not a dp_accounting event"),
        (event("TruncatedSubsampledGaussianDpEvent", dataset_size=10, sampling_probability=0.1, truncated_batch_size=2, noise_multiplier=1.0), "capped"),
    ]
    for tree, text in cases:
        with pytest.raises(ValueError, match=text.replace("[", r"\[").replace("]", r"\]")):
            dpw.dp_accounting.account(tree, delta=1e-6)
    mix = event("MixtureOfGaussiansDpEvent", standard_deviation=1.0, sensitivities=[0, 1], sampling_probs=[0.5, 0.5])
    with pytest.raises(ValueError, match="add/remove"):
        dpw.dp_accounting.specs(mix, neighbours="replace-one")
    with pytest.raises(ValueError, match="neighbours"):
        dpw.dp_accounting.specs(g, neighbours="swap")


def test_real_dp_accounting_trees_match_their_specs():
    dpa = pytest.importorskip("dp_accounting")
    de = dpa.dp_event
    rel = dpa.NeighboringRelation
    cases = [
        (de.SelfComposedDpEvent(de.GaussianDpEvent(2.0), 100), rel.ADD_OR_REMOVE_ONE, ["gaussian:sigma=2,count=100"]),
        (
            de.SelfComposedDpEvent(de.PoissonSampledDpEvent(0.01, de.GaussianDpEvent(1.0)), 1000),
            rel.ADD_OR_REMOVE_ONE,
            ["subsampled-gaussian:sigma=1,q=0.01,count=1000"],
        ),
        (
            de.SelfComposedDpEvent(de.SampledWithoutReplacementDpEvent(60000, 256, de.GaussianDpEvent(1.0)), 235),
            rel.REPLACE_ONE,
            # dp_accounting's noise multiplier is relative to the replace-one distance
            # (twice dpw's sensitivity): sigma = 2 at sensitivity 1.
            ["subsampled-gaussian:sigma=2,sampling=fixed,batch=256,n=60000,neighbours=replace-one,count=235"],
        ),
        (
            de.ComposedDpEvent([de.LaplaceDpEvent(3.0), de.MixtureOfGaussiansDpEvent(1.5, [0, 1], [0.9, 0.1])]),
            rel.ADD_OR_REMOVE_ONE,
            ["laplace:scale=3", "gaussian-mixture:sigma=1.5,shifts=0;1,probs=0.9;0.1"],
        ),
        (
            de.SelfComposedDpEvent(de.ComposedDpEvent([de.DiscreteLaplaceDpEvent(0.5, 2), de.RandomizedResponseDpEvent(0.5, 2)]), 20),
            rel.REPLACE_ONE,
            ["discrete-laplace:scale=2,sensitivity=2,count=20", f"rr:epsilon={math.log(3.0)!r},count=20"],
        ),
    ]
    doc = (Path(__file__).parents[3] / "docs" / "from_dp_accounting.md").read_text()
    for tree, relation, by_hand in cases:
        b = dpw.dp_accounting.account(tree, delta=1e-5, neighbours=relation)
        # The side-by-side table of docs/from_dp_accounting.md prints this bracket.
        assert f"[{b.lower:.5g}, {b.upper:.5g}]" in doc, (tree, b)
        c = dpw.account(by_hand, delta=1e-5)
        assert b.lower <= c.upper and c.lower <= b.upper, (tree, b, c)
        # dp_accounting's own answers: RDP is an upper bound, never below dpw's lower end;
        # its PLD (pessimistic by default) likewise, to its discretisation.
        rdp = dpa.rdp.RdpAccountant(neighboring_relation=relation)
        if rdp.supports(tree):
            e = rdp.compose(tree).get_epsilon(1e-5)
            assert e >= b.lower * (1 - 1e-9), f"RDP {e} below dpw's certified lower end {b.lower}: {tree}"
        # Its JSON form, as `dpw account --events` reads it, gives the same SPECs.
        assert dpw.dp_accounting.specs(tree, neighbours=relation) == dpw.dp_accounting.specs(
            json_tree(dpw.dp_accounting.to_json(tree)), neighbours=relation
        )
        pld = dpa.pld.PLDAccountant(neighboring_relation=relation)
        if pld.supports(tree):
            e = pld.compose(tree).get_epsilon(1e-5)
            assert e >= b.lower * (1 - 1e-3), f"PLD {e} below dpw's certified lower end {b.lower}: {tree}"


def json_tree(node):
    """Stand-in events rebuilt from a JSON node (the form's round trip)."""
    fields = {}
    for k, v in node.items():
        if k == "type":
            continue
        if k == "event":
            v = json_tree(v)
        elif k == "events":
            v = [json_tree(e) for e in v]
        fields[k] = v
    return event(node["type"], **fields)


def test_real_refusals_name_their_event():
    dpa = pytest.importorskip("dp_accounting")
    de = dpa.dp_event
    for tree, text in [
        (de.ComposedDpEvent([de.GaussianDpEvent(1.0), de.NonPrivateDpEvent()]), "NonPrivateDpEvent"),
        (de.ZCDpEvent(0.5, 0.0), "ZCDpEvent"),
        (de.SampledWithReplacementDpEvent(1000, 10, de.GaussianDpEvent(1.0)), "SampledWithReplacementDpEvent"),
        (de.TruncatedSubsampledGaussianDpEvent(1000, 0.1, 200, 1.0), "TruncatedSubsampledGaussianDpEvent"),
        (de.SingleEpochTreeAggregationDpEvent(1.0, 10), "SingleEpochTreeAggregationDpEvent"),
        (de.RepeatAndSelectDpEvent(de.GaussianDpEvent(1.0), 10.0, 1.0), "RepeatAndSelectDpEvent"),
        (de.UnsupportedDpEvent(), "UnsupportedDpEvent"),
        (de.RandomizedResponseDpEvent(0.5, 4), "num_buckets = 4"),
    ]:
        with pytest.raises(ValueError, match=text):
            dpw.account(tree, delta=1e-6)


def test_the_cli_reads_the_same_tree_as_json(tmp_path):
    import json
    import os
    import subprocess

    binary = os.environ.get("DPW_BIN")
    if not binary:
        pytest.skip("set DPW_BIN to compare with the CLI")
    tree = event(
        "SelfComposedDpEvent",
        event=event("PoissonSampledDpEvent", sampling_probability=0.02, event=event("GaussianDpEvent", noise_multiplier=1.3)),
        count=500,
    )
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(dpw.dp_accounting.to_json(tree)))
    row = subprocess.run(
        [binary, "account", "--events", str(path), "--delta", "1e-6", "--format", "csv"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()[1].split(",")
    b = dpw.dp_accounting.account(tree, delta=1e-6)
    assert (float(row[1]), float(row[3])) == (b.lower, b.upper)


def test_account_and_solve_take_trees_directly():
    def dpsgd(nm):
        poisson = event("PoissonSampledDpEvent", sampling_probability=0.01, event=event("GaussianDpEvent", noise_multiplier=nm))
        return event("SelfComposedDpEvent", event=poisson, count=1000)

    a = dpw.account(dpsgd(1.0), delta=1e-5)
    b = dpw.dp_accounting.account(dpsgd(1.0), delta=1e-5)
    assert (a.lower, a.upper) == (b.lower, b.upper)
    s = dpw.solve(dpsgd, epsilon=2.0, delta=1e-5)
    t = dpw.solve("subsampled-gaussian:sigma=?,q=0.01,count=1000", epsilon=2.0, delta=1e-5)
    assert (s.meets, s.fails) == (t.meets, t.fails)
    twice = lambda nm: event("ComposedDpEvent", events=[dpsgd(nm), event("GaussianDpEvent", noise_multiplier=nm)])
    with pytest.raises(ValueError, match="exactly one SPEC value"):
        dpw.solve(twice, epsilon=2.0, delta=1e-5)


def test_events_newer_than_0_6():
    tree = event(
        "ComposedDpEvent",
        events=[
            event("ExponentialMechanismDpEvent", epsilon=0.5),
            event("PermuteAndFlipDpEvent", epsilon=0.25),
            event("EpsilonDeltaDpEvent", epsilon=1.0, delta=1e-6),
            event("DiscreteGaussianDpEvent", sigma=10.0, sensitivity=2.0, dimension=1),
            event(
                "RandomAllocationDpEvent",
                event=event("GaussianDpEvent", noise_multiplier=2.0),
                num_selected=1,
                num_steps=100,
            ),
        ],
    )
    assert dpw.dp_accounting.specs(tree) == [
        "exponential:epsilon=0.5,count=1",
        "permute-and-flip:epsilon=0.25,count=1",
        "approx-dp:epsilon=1,delta=0.000001,count=1",
        "discrete-gaussian:sigma=10,sensitivity=2,count=1",
        "subsampled-gaussian:sigma=2,sampling=allocation,steps=100,count=1",
    ]
    b = dpw.account(tree, delta=1e-5)
    assert b.lower < b.upper
