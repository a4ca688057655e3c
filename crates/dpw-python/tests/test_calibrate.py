"""dpw.calibrate against the closed forms of each row."""

import dataclasses
import math

import pytest

import dpw
import reference as ref


def test_rows_are_dataclasses_with_the_closed_forms():
    eps, delta, k, sens, beta = 0.5, 1e-6, 10, 2.0, 0.05
    rows = dpw.calibrate(eps, delta, queries=k, sensitivity=sens, beta=beta)
    assert [r.mechanism for r in rows][:4] == [
        "Laplace",
        "classical Gaussian",
        "analytic Gaussian",
        "truncated Laplacian",
    ]
    assert all(dataclasses.is_dataclass(r) for r in rows)
    lap = rows.row("Laplace")
    b = k * sens / eps
    assert lap.scale == pytest.approx(b, rel=1e-15) and lap.second_moment == pytest.approx(2 * b * b)
    # P(max of k |Laplace(b)| <= t) = (1 - e^{-t/b})^k = 1 - beta.
    assert (1 - math.exp(-lap.max_error / b)) ** k == pytest.approx(1 - beta, rel=1e-12)
    g = rows.row("analytic Gaussian")
    assert ref.gaussian_delta(eps, math.sqrt(k) * sens / g.scale) <= delta * (1 + 1e-9)
    assert g.mean_abs == pytest.approx(g.scale * math.sqrt(2 / math.pi), rel=1e-14)
    # P(max of k |N(0, s^2)| <= t) = (2 Phi(t/s) - 1)^k = 1 - beta.
    assert (2 * ref.Phi(g.max_error / g.scale) - 1) ** k == pytest.approx(1 - beta, rel=1e-9)
    c = rows.row("classical Gaussian")
    assert c.scale == pytest.approx(math.sqrt(k) * sens * math.sqrt(2 * math.log(1.25 / delta)) / eps)
    assert not rows.row("truncated Laplacian").applicable
    assert "k = 1" in rows.row("truncated Laplacian").note
    cert = rows.row("bounded noise power(2)")
    exact = rows.row("bounded power(2), exact R")
    assert cert.upper_bounds and exact.upper_bounds
    assert exact.scale < cert.scale and cert.max_error <= cert.scale
    assert cert.scale == pytest.approx(sens * dpw.certified_radius(k, eps, delta), rel=1e-12)
    # Two accountants (the fixed-grid FFT one behind calibrate, the tilted one behind
    # least_radius): the certified exact row is never below the certified-insufficient R.
    lr = dpw.least_radius(k, eps, delta, accuracy=1e-3)
    assert sens * lr.lower <= exact.scale <= cert.scale


def test_truncated_laplacian_row_for_one_query():
    rows = dpw.calibrate(1.0, 1e-4, sensitivity=3.0)
    t = rows.row("truncated Laplacian")
    assert t.scale == pytest.approx(3.0, rel=1e-15)
    assert t.mean_abs == pytest.approx(ref.truncated_laplace_mean_abs(1.0, 1e-4, 3.0), rel=1e-10)
    assert not rows.row("classical Gaussian").applicable  # eps = 1


def test_density_and_request():
    rows = dpw.calibrate(1.0, 1e-6, queries=5, density="exp")
    assert rows.request["density"] == "exp" and rows.request["queries"] == 5.0
    assert any(r.mechanism == "bounded noise exp" for r in rows)


def test_to_pandas():
    pd = pytest.importorskip("pandas")
    df = dpw.calibrate(1.0, 1e-6).to_pandas()
    assert isinstance(df, pd.DataFrame) and list(df["mechanism"])[0] == "Laplace"
