"""numpy broadcasting of the four array functions: every element equals the scalar call."""

import pytest

import dpw

np = pytest.importorskip("numpy")


def test_broadcast_shapes_and_values():
    eps = np.array([[0.1], [1.0], [5.0]])  # (3, 1)
    delta = np.array([1e-3, 1e-6, 1e-9, 1e-12])  # (4,)
    s = dpw.analytic_sigma(eps, delta, 2.0)
    assert isinstance(s, np.ndarray) and s.shape == (3, 4) and s.dtype == np.float64
    for i in range(3):
        for j in range(4):
            assert s[i, j] == dpw.analytic_sigma(float(eps[i, 0]), float(delta[j]), 2.0)


@pytest.mark.parametrize(
    "f,args",
    [
        (dpw.classical_sigma, ([0.1, 0.5, 0.9], 1e-5)),
        (dpw.gaussian_delta, ([0.0, 1.0, 2.0], [[0.5], [1.5]])),
        (dpw.gaussian_epsilon, (1e-6, np.linspace(0.1, 3, 7))),
    ],
)
def test_lists_and_arrays_broadcast(f, args):
    out = f(*args)
    b = np.broadcast_arrays(*[np.asarray(a, dtype=float) for a in args])
    assert out.shape == b[0].shape
    for idx in np.ndindex(out.shape):
        assert out[idx] == f(*[float(x[idx]) for x in b])


def test_zero_dimensional_and_numpy_scalars():
    a = dpw.analytic_sigma(np.array(1.0), 1e-5)
    assert np.ndim(a) == 0 and float(a) == dpw.analytic_sigma(1.0, 1e-5)
    assert dpw.analytic_sigma(np.float64(1.0), 1e-5) == dpw.analytic_sigma(1.0, 1e-5)
    assert dpw.gaussian_delta(np.int64(1), np.float32(0.5)) == pytest.approx(
        dpw.gaussian_delta(1.0, 0.5), rel=1e-7
    )


def test_one_bad_element_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match=r"delta = 2 .*element 2"):
        dpw.analytic_sigma(1.0, [1e-5, 1e-6, 2.0])
    with pytest.raises(ValueError, match="do not broadcast"):
        dpw.gaussian_delta([1.0, 2.0], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="epsilon"):
        dpw.gaussian_delta([1.0, np.nan], 1.0)
    with pytest.raises(ValueError, match="mu"):
        dpw.gaussian_epsilon(1e-5, np.array([1.0, np.inf]))
    with pytest.raises(ValueError, match="epsilon"):
        dpw.analytic_sigma(np.array(["a", "b"]), 1e-5)


def test_numpy_scalars_are_numbers_everywhere():
    # Issue 57 §5 (8): np.int64 and np.float32 were refused ("expected a number, got
    # float32") by the accountant, the solver and the radii; anything with __index__ or
    # __float__ is a number, a bool or a complex number is not.
    b = dpw.account(["gaussian:sigma=1"], delta=np.float32(1e-5))
    assert b.upper == dpw.account(["gaussian:sigma=1"], delta=float(np.float32(1e-5))).upper
    m = dpw.Mechanism.gaussian(np.float32(2.0)).compose(np.int64(10))
    assert m.spec == "gaussian:sigma=2.0,count=10"
    assert dpw.Mechanism.subsampled_gaussian(np.float64(1.0), np.float32(0.5), steps=None).kind
    assert m.epsilon(np.float32(1e-5)).upper == m.epsilon(float(np.float32(1e-5))).upper
    r = dpw.least_radius(np.int64(100), np.float32(1.0), 1e-6)
    assert r.lower <= r.upper
    s = dpw.solve("gaussian:sigma=?", epsilon=np.int64(1), delta=np.float32(1e-5))
    assert s.meets == dpw.solve("gaussian:sigma=?", epsilon=1, delta=float(np.float32(1e-5))).meets
    for bad in [np.bool_(True), True, np.complex64(1 + 1j), "1e-5"]:
        with pytest.raises(ValueError, match="delta: expected a number"):
            dpw.account(["gaussian:sigma=1"], delta=bad)
    with pytest.raises(ValueError, match="count"):
        dpw.Mechanism.gaussian(1.0).compose(np.int64(0))
