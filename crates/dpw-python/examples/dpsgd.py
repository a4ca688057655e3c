"""Privacy of DP-SGD: epsilon after T steps of the Poisson-subsampled Gaussian mechanism
(noise multiplier sigma, sampling rate q), by dpw's certified accountant.

    python dpsgd.py --sigma 1.0 --q 0.01 --steps 10000 --delta 1e-5
"""

import argparse

import dpw


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sigma", type=float, default=1.0, help="noise multiplier (default 1.0)")
    p.add_argument("--q", type=float, default=0.01, help="sampling rate (default 0.01)")
    p.add_argument("--steps", type=int, default=10_000, help="training steps T (default 1e4)")
    p.add_argument("--delta", type=float, default=1e-5, help="target delta (default 1e-5)")
    a = p.parse_args()
    try:
        step = dpw.Mechanism.subsampled_gaussian(sigma=a.sigma, q=a.q)
        b = step.compose(a.steps).epsilon(delta=a.delta)
    except ValueError as e:
        p.exit(2, f"dpsgd.py: {e}\n")
    print(f"DP-SGD: sigma = {a.sigma}, q = {a.q}, T = {a.steps} steps, delta = {a.delta:g}")
    print(f"  SPEC: {step.compose(a.steps).spec}")
    print(f"  epsilon <= {b.upper:.6f}  (certified; bracket [{b.lower:.6f}, {b.upper:.6f}], {b.seconds:.2f} s)")


if __name__ == "__main__":
    main()
