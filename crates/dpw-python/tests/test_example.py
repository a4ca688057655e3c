"""The DP-SGD example script runs and prints the bracket the API gives."""

import os
import subprocess
import sys

import dpw

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "examples", "dpsgd.py")


def test_dpsgd_example_prints_the_certified_epsilon():
    out = subprocess.run(
        [sys.executable, SCRIPT, "--sigma", "1.0", "--q", "0.01", "--steps", "300", "--delta", "1e-5"],
        check=True, capture_output=True, text=True,
    ).stdout
    b = dpw.Mechanism.subsampled_gaussian(sigma=1.0, q=0.01).compose(300).epsilon(delta=1e-5)
    assert f"{b.upper:.6f}" in out
