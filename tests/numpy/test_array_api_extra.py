"""Libraries written on the Array API standard run on xlac: every public function of ``array-api-extra`` through
the same code with NumPy arrays (the oracle), with ``xlac.Array``s (eager) and inside ``xlac.compile``, and
``array-api-compat``'s ``array_namespace`` of xlac arrays."""
import numpy as np
import pytest

array_api_extra = pytest.importorskip("array_api_extra")
array_api_compat = pytest.importorskip("array_api_compat")

import xlac
import xlac.numpy as xnp

xpx = array_api_extra
pytestmark = pytest.mark.filterwarnings("ignore:`xpx.*` is deprecated:DeprecationWarning")

RNG = np.random.default_rng(35)
MATRIX = RNG.standard_normal((3, 4))
VECTOR = np.array([0.0, 0.5, -1.25, 3.0, 2.0])
WITH_NANS = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, -2.0]])
INTEGERS = np.array([3, 1, 4, 1, 5, 9, 2, 6])
COMPLEX = np.array([1 + 1j, -2 + 0.5j, 0 - 3j])


def namespace(*arrays):
    return array_api_compat.array_namespace(*arrays)


def at_set(x):
    return xpx.at(x)[1:3].set(7.0)


def at_add(x):
    return xpx.at(x)[0].add(2.5)


def apply_where(x):
    return xpx.apply_where(x > 0, x, lambda v: namespace(v).sqrt(v), fill_value=-1.0)


def one_hot(x):
    return xpx.one_hot(x, 10)


def indices(builder):
    def call(x):
        return builder(4, xp=namespace(x))
    return call


def partition_sorted_at_kth(x):
    """The kth element of a partition is the one of the sorted array; the rest is in any order."""
    return xpx.partition(x, 3)[3]


def argpartition_value_at_kth(x):
    return x[xpx.argpartition(x, 3)[3]]


# name -> (function of arrays, the NumPy arguments)
CASES = {
    "angle": (xpx.angle, (COMPLEX,)),
    "tril_indices": (indices(xpx.tril_indices), (INTEGERS,)),
    "triu_indices": (indices(xpx.triu_indices), (INTEGERS,)),
    "apply_where": (apply_where, (VECTOR,)),
    "argpartition": (argpartition_value_at_kth, (VECTOR,)),
    "at.set": (at_set, (VECTOR,)),
    "at.add": (at_add, (VECTOR,)),
    "atleast_nd": (lambda x: xpx.atleast_nd(x, ndim=3), (VECTOR,)),
    "cov": (xpx.cov, (MATRIX,)),
    "create_diagonal": (xpx.create_diagonal, (VECTOR,)),
    "deg2rad": (xpx.deg2rad, (VECTOR,)),
    "diag_indices": (lambda x: tuple(i + x[0] for i in xpx.diag_indices(4, xp=namespace(x))), (INTEGERS,)),
    "expand_dims": (lambda x: xpx.expand_dims(x, axis=(0, 2)), (MATRIX,)),
    "isclose": (xpx.isclose, (VECTOR, VECTOR + 1e-9)),
    "isin": (xpx.isin, (INTEGERS, np.array([1, 9, 7]))),
    "kron": (xpx.kron, (MATRIX[:2, :2], MATRIX[1:, 2:])),
    "nan_to_num": (xpx.nan_to_num, (WITH_NANS,)),
    "nanmean": (lambda x: xpx.nanmean(x, axis=1), (WITH_NANS,)),
    "nansum": (xpx.nansum, (WITH_NANS,)),
    "nunique": (xpx.nunique, (INTEGERS,)),
    "one_hot": (one_hot, (INTEGERS,)),
    "pad": (lambda x: xpx.pad(x, 2, constant_values=-1.0), (MATRIX,)),
    "partition": (partition_sorted_at_kth, (VECTOR,)),
    "rad2deg": (xpx.rad2deg, (VECTOR,)),
    "searchsorted": (xpx.searchsorted, (np.sort(VECTOR), np.array([0.1, 2.5, -4.0]))),
    "sinc": (xpx.sinc, (VECTOR,)),
    "unravel_index": (lambda i: xpx.unravel_index(i, (3, 4)), (np.array([0, 5, 11]),)),
}

# Eager only: inside compile they raise the error matched here. An output size that depends on the values
# names the function and its static size= alternative; nanmin and nanmax branch in Python on a value
# (`if xp.any(mask)`, array-api-extra's code for namespaces it does not know), which a trace cannot do.
EAGER_ONLY_CASES = {
    "nanmax": (lambda x: xpx.nanmax(x, axis=0), (WITH_NANS[:, [0, 2]],), r"(?s)concrete value.*in nanmax"),
    "nanmin": (lambda x: xpx.nanmin(x, axis=0), (WITH_NANS[:, [0, 2]],), r"(?s)concrete value.*in nanmin"),
    "setdiff1d": (xpx.setdiff1d, (INTEGERS, np.array([1, 9])), r"(?s)unique_values.*size=.*in setdiff1d"),
    "union1d": (xpx.union1d, (INTEGERS, np.array([1, 7])), r"(?s)unique_values.*size=.*in union1d"),
}

NOT_ARRAY_FUNCTIONS = {"__version__", "testing", "lazy_apply", "broadcast_shapes", "default_dtype"}


def assert_same(got, want, mode):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), mode
        for g, w in zip(got, want):
            assert_same(g, w, mode)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (mode, got.dtype, want.dtype)
    assert got.shape == want.shape, (mode, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=mode)


def test_every_public_function_has_a_case():
    covered = {name.split(".")[0] for name in [*CASES, *EAGER_ONLY_CASES]} | NOT_ARRAY_FUNCTIONS
    assert set(xpx.__all__) <= covered, set(xpx.__all__) - covered


@pytest.mark.parametrize("name", sorted(CASES))
def test_function_eager_and_compiled(name):
    function, numpy_args = CASES[name]
    want = function(*[a.copy() for a in numpy_args])     # at(x) may write into a NumPy x
    assert_same(function(*map(xlac.asarray, numpy_args)), want, "eager")
    assert_same(xlac.compile(function)(*numpy_args), want, "compiled")


@pytest.mark.parametrize("name", sorted(EAGER_ONLY_CASES))
def test_eager_only_function(name):
    function, numpy_args, compiled_error = EAGER_ONLY_CASES[name]
    assert_same(function(*map(xlac.asarray, numpy_args)), function(*numpy_args), "eager")
    with pytest.raises((TypeError, ValueError), match=compiled_error):
        xlac.compile(function)(*numpy_args)


def test_broadcast_shapes_and_default_dtype():
    assert xpx.broadcast_shapes((3, 1), (1, 4)) == (3, 4)
    assert xpx.default_dtype(xnp) == xnp.float64
    assert xpx.default_dtype(xnp, "indexing") == xnp.int64


def test_lazy_apply_runs_a_numpy_function_on_concrete_arrays():
    got = xpx.lazy_apply(np.cumsum, xlac.asarray(VECTOR), shape=VECTOR.shape, dtype=xnp.float64)
    assert_same(got, np.cumsum(VECTOR), "eager")


def test_array_namespace_of_xlac_arrays_is_xlac_numpy():
    assert array_api_compat.array_namespace(xlac.asarray(VECTOR)) is xnp
    assert array_api_compat.array_namespace(xlac.asarray(VECTOR), xlac.asarray(MATRIX)) is xnp

    def check(x):
        assert array_api_compat.array_namespace(x) is xnp
        return x + 1
    assert_same(xlac.compile(check)(VECTOR), VECTOR + 1, "compiled")


def test_array_namespace_refuses_mixed_libraries():
    with pytest.raises(TypeError, match="Multiple namespaces"):
        array_api_compat.array_namespace(xlac.asarray(VECTOR), VECTOR)
