"""jaxlib's C++ call path for NumPy arguments (xlac/runtime/dispatch.py, chosen by xlac/runners.py): values
and dtypes as NumPy's, 64-bit data never narrowed whatever JAX's x64 mode, checks raised, and the Python
path where the C++ one cannot take a call.

A signature's first call runs the general path and its second the Python path inside jaxlib's cache miss;
from the third on, jaxlib runs it in C++, so each test calls at least three times."""
import jax
import numpy as np
import pytest

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches
from xlac.runtime import dispatch
from xlac.runtime import executable as executable_module


def _count_python_runs(monkeypatch) -> list:
    """A list that grows by one each time a program compiled from now on runs through jaxlib's Python API
    (``Executable.execute``); the C++ path never adds to it."""
    runs = []
    make = executable_module._runner

    def counting_runner(*args):
        execute = make(*args)

        def counted(buffers):
            runs.append(1)
            return execute(buffers)
        return counted
    monkeypatch.setattr(executable_module, "_runner", counting_runner)
    return runs


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "complex128", "uint8"])
def test_numpy_arguments_run_in_cpp_with_numpys_values_and_dtypes(dtype, monkeypatch):
    runs = _count_python_runs(monkeypatch)
    f = xlac.compile(lambda x, y: x * y + x)
    rng = np.random.default_rng(0)
    calls = [(rng.integers(0, 9, (3, 4)).astype(dtype), rng.integers(0, 9, (3, 4)).astype(dtype)) for _ in range(4)]
    for x, y in calls[:2]:
        assert_matches(f(x, y), x * y + x)
    assert len(runs) == 2
    for x, y in calls[2:]:
        assert_matches(f(x, y), x * y + x)
    assert len(runs) == 2 and f.cache_info().compiles == 1


def test_64_bit_data_keeps_its_precision_and_jax_x64_mode_is_left_as_it_was():
    x64 = jax.config.jax_enable_x64
    f = xlac.compile(lambda x: x - 1.0)
    for k in range(4):
        x = np.full(3, 1.0 + (k + 1) * 1e-12)
        assert_matches(f(x), x - 1.0, rtol=0.0)
        assert jax.config.jax_enable_x64 == x64
    big = np.array([2 ** 40 + 1, -(2 ** 50) - 3], np.int64)
    g = xlac.compile(lambda i: i + 1)
    for _ in range(3):
        assert_matches(g(big), big + 1)


def test_jax_x64_mode_switched_between_calls():
    f = xlac.compile(lambda x, y: x * y)
    x32, x64 = np.arange(4, dtype=np.float32), np.arange(4.0) + 1e-12
    for mode in [False, True, False]:
        with jax.enable_x64(mode):
            for _ in range(3):
                assert_matches(f(x32, x32), x32 * x32)
                assert_matches(f(x64, x64), x64 * x64, rtol=0.0)


def test_xlac_arrays_with_numpy_arrays_views_and_pytrees(monkeypatch):
    runs = _count_python_runs(monkeypatch)
    f = xlac.compile(lambda a, p: a @ p["w"] + p["b"])
    rng = np.random.default_rng(1)
    w = xlac.asarray(rng.standard_normal((4, 3)))
    for k in range(5):
        a = rng.standard_normal((4, 2)).T          # a transposed view: not C-contiguous
        b = rng.standard_normal(6)[::2]            # a strided view
        assert_matches(f(a, {"w": w, "b": b}), a @ np.asarray(w) + b)
    assert len(runs) == 2 and f.cache_info().compiles == 1


def test_a_failing_check_raises_through_the_cpp_path():
    f = xlac.compile(lambda x, i: x[i])
    x = np.arange(4.0)
    for i in [1, 3, 2]:
        assert_matches(f(x, np.array(i)), x[i])
    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        f(x, np.array(4))
    assert_matches(f(x, np.array(0)), x[0])


def test_inside_jax_disable_jit_the_call_runs_in_python():
    f = xlac.compile(lambda x: xnp.tanh(x) * 2)
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    for _ in range(3):
        assert_matches(f(x), np.tanh(x) * 2)
    with jax.disable_jit():
        for _ in range(2):
            assert_matches(f(x + 1), np.tanh(x + 1) * 2)


def test_where_jaxlib_lacks_the_path_the_python_one_serves(monkeypatch):
    monkeypatch.setattr(dispatch, "_jaxlib_parts", lambda: None)
    runs = _count_python_runs(monkeypatch)
    f = xlac.compile(lambda x: x + 1)
    x = np.arange(3.0)
    for k in range(4):
        assert_matches(f(x + k), x + k + 1)
    assert len(runs) == 4
    assert dispatch.direct_caller(xlac.compile(lambda x: x).lower(x).compile().executable, []) is None


def test_direct_caller_runs_an_argument_of_another_shape_in_python_where_pjrt_refuses_it():
    compiled = xlac.compile(lambda x: x * 2).lower(np.zeros(3, np.float32)).compile()
    call = dispatch.direct_caller(compiled.executable, compiled.executable.output_types)
    for _ in range(3):
        assert np.asarray(call(np.arange(3, dtype=np.float32))[0]).tolist() == [0.0, 2.0, 4.0]
    with pytest.raises(Exception, match="(?i)size|shape"):
        call(np.arange(4, dtype=np.float32))


def test_results_do_not_share_memory_with_the_numpy_arguments():
    """jaxlib may read a NumPy argument in place; what the call returns is the program's own buffer."""
    f = xlac.compile(lambda x, y: (x, y + 0))
    for _ in range(4):
        x, y = np.arange(3.0), np.arange(3, dtype=np.float32)
        same, plus_zero = f(x, y)
        x[:], y[:] = -1, -1
        assert_matches(same, np.arange(3.0))
        assert_matches(plus_zero, np.arange(3, dtype=np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "complex64"])
def test_python_scalars_with_numpy_arrays_run_in_cpp_promoted_as_numpy_does(dtype, monkeypatch):
    runs = _count_python_runs(monkeypatch)
    f = xlac.compile(lambda x, a, k, flag: np.where(flag, x * a + k, x - k))
    x = np.arange(6, dtype=dtype).reshape(2, 3)
    for i in range(5):
        a, k, flag = 0.5 + i, 3 - i, i % 2 == 0
        assert_matches(f(x, a, k, flag), np.where(flag, x * a + k, x - k))
    assert len(runs) == 2 and f.cache_info().compiles == 1


def test_large_python_ints_keep_their_value():
    f = xlac.compile(lambda x, k: x + k)
    x = np.zeros(2, np.int64)
    for k in [2 ** 40, -(2 ** 62), 7]:
        assert_matches(f(x, k), x + k)
    with pytest.raises(OverflowError):          # as NumPy: out of bounds for int64
        f(x, 2 ** 63)
