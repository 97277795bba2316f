"""Regressions from the differential fuzzer (issue 13): arguments xlac must refuse or take strictly."""
import numpy as np
import pytest

import xlac


def _sum(x):
    return x.sum()


@pytest.mark.parametrize("subclass_value", [
    np.ma.masked_array([1, 2, 3], mask=[0, 1, 0]),
    np.matrix([[1.0, 2.0], [3.0, 4.0]]),
    np.char.chararray((2,)),
], ids=["masked", "matrix", "chararray"])
def test_ndarray_subclass_argument_is_refused_naming_argument_and_class(subclass_value):
    with pytest.raises(TypeError, match=r"argument x.*" + type(subclass_value).__qualname__):
        xlac.compile(_sum)(subclass_value)


def test_masked_array_refused_where_numpy_sum_differs():
    masked = np.ma.masked_array([1, 2, 3], mask=[0, 1, 0])
    assert masked.sum() == 4     # what a plain-array treatment would get wrong (6)
    with pytest.raises(TypeError, match="masked"):
        xlac.compile(_sum)(masked)


def test_memmap_is_taken_as_a_plain_array(tmp_path):
    mapped = np.memmap(tmp_path / "data.bin", dtype=np.float32, mode="w+", shape=(4,))
    mapped[:] = [1.0, 2.0, 3.0, 4.5]
    result = np.asarray(xlac.compile(_sum)(mapped))
    expected = np.asarray(mapped).sum()
    assert result.dtype == expected.dtype and result == expected


def test_aot_compiled_for_python_float_refuses_numpy_float64():
    def scale(x, s):
        return x * s
    x = np.ones(3, np.float32)
    compiled = xlac.compile(scale).lower(x, 2.0).compile()
    result = np.asarray(compiled(x, 3.0))
    assert result.dtype == (x * 3.0).dtype and np.array_equal(result, x * 3.0)
    with pytest.raises(TypeError, match=r"argument .*s.*Python scalar.*got f(loat)?64"):
        compiled(x, np.float64(2.0))
    # the jit path gives NumPy's promotion for the NumPy scalar
    jit_result = np.asarray(xlac.compile(scale)(x, np.float64(2.0)))
    assert jit_result.dtype == (x * np.float64(2.0)).dtype == np.float64


def test_subclass_refused_by_eager_calls_and_operators_with_the_users_line():
    import xlac.numpy as xnp
    masked = np.ma.masked_array([1, 2, 3], mask=[0, 1, 0])
    matrix = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match=r"xlac.numpy.sum: .*MaskedArray(.|\n)*test_fuzz_regressions_errors"):
        xnp.sum(masked)
    with pytest.raises(TypeError, match="matrix"):
        xnp.ones((2, 2), np.float64) * matrix
    with pytest.raises(TypeError, match="xlac.asarray: .*MaskedArray"):
        xlac.asarray(masked)


def test_subclass_captured_inside_a_trace_is_refused():
    import xlac.numpy as xnp
    masked = np.ma.masked_array([1, 2, 3], mask=[0, 1, 0])
    with pytest.raises(TypeError, match="MaskedArray"):
        xlac.compile(lambda a: (a * xnp.asarray(masked)).sum())(np.ones(3, np.int64))


@pytest.mark.parametrize("make", [
    lambda xp: xp.ones(2**62),
    lambda xp: xp.zeros((2**40, 2**40)),
    lambda xp: xp.empty((2**31, 2**31, 4), np.uint8),
], ids=["ones", "zeros-2d", "uint8-3d"])
def test_shape_whose_size_overflows_raises_numpys_value_error(make):
    import xlac.numpy as xnp
    with pytest.raises(ValueError, match="array is too big"):
        make(np)
    with pytest.raises(ValueError, match=r"array is too big(.|\n)*test_fuzz_regressions_errors"):
        make(xnp)


def test_overflowing_broadcast_in_a_trace_raises_value_error_at_trace_time():
    import xlac.numpy as xnp
    with pytest.raises(ValueError):
        np.broadcast_to(np.ones(1), (2**33, 2**33))    # NumPy refuses too ("iterator is too large")
    with pytest.raises(ValueError, match=r"array is too big(.|\n)*test_fuzz_regressions_errors"):
        xlac.compile(lambda x: xnp.broadcast_to(x, (2**33, 2**33)).sum())(np.ones(1))


def test_largest_representable_shape_is_still_only_a_type():
    from xlac.ir.types import TensorType
    assert TensorType((2**62,), np.dtype(np.uint8)).size == 2**62


class _BufferWhoseAllocationFailed:
    def block_until_ready(self):
        raise RuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 35184372088832 bytes.")

    def __array__(self, dtype=None, copy=None):
        raise AssertionError("read a buffer whose allocation failed (jaxlib aborts the process here)")


def test_reading_a_buffer_whose_allocation_failed_raises_memory_error():
    from xlac import runtime
    with pytest.raises(MemoryError, match="out of memory"):
        runtime.to_numpy(_BufferWhoseAllocationFailed(), np.dtype(np.uint8), (2**45,))


def test_execution_out_of_memory_raises_memory_error_and_other_errors_pass_through():
    from xlac.runtime.executable import _runner

    class FailingExecutable:
        def __init__(self, message):
            self.message = message

        def execute_sharded(self, buffers):
            raise RuntimeError(self.message)

    def failing(message):
        return _runner(FailingExecutable(message), None, None, ())
    with pytest.raises(MemoryError, match="RESOURCE_EXHAUSTED"):
        failing("RESOURCE_EXHAUSTED: Out of memory allocating 8 bytes.")([])
    with pytest.raises(RuntimeError, match="INTERNAL"):
        failing("INTERNAL: something else")([])


def test_real_allocation_that_cannot_fit_raises_memory_error(tmp_path):
    """32 TiB of ones under an 8 GB address-space limit: fails at once, in a child process."""
    import resource
    import subprocess
    import sys
    script = ("import numpy as np, xlac.numpy as xnp\n"
              "try:\n    print(np.asarray(xnp.ones(2**45, np.uint8))[:1])\n"
              "except MemoryError as e:\n    print('MemoryError', e)\n")
    limit = 8 * 2**30
    import os
    env = dict(os.environ, JAX_PLATFORMS="cpu")     # a GPU runtime reserves more address space than the limit
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env,
                           preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.startswith("MemoryError"), child.stdout + child.stderr[-2000:]


def _numpy_method_parameters(name):
    """Parameter names, in order, of ``np.ndarray.<name>`` from its docstring's first line
    ("a.var(axis=None, dtype=None, out=None, ...)"); NumPy's C methods carry no signature."""
    import re
    first_line = getattr(np.ndarray, name).__doc__.strip().splitlines()[0]
    match = re.match(rf"a\.{name}\((.*)\)", first_line)
    if match is None:
        return None
    parameters = [p.split("=")[0].strip() for p in match.group(1).split(",")]
    return [p for p in parameters if p not in ("*", "/", "") and not p.startswith("*")]


def _methods_numpy_documents():
    """The public methods of ``np.ndarray`` whose docstring gives their parameters, and which xlac has
    (view's "a.view([dtype][, type])" is not a parameter list; it has its own test below)."""
    from xlac.trace.tracer import Tracer
    names = [n for n in dir(np.ndarray) if not n.startswith("_") and callable(getattr(np.ndarray, n))]
    return [n for n in names if n != "view" and _numpy_method_parameters(n) is not None
            and callable(getattr(xlac.Array, n, None)) and callable(getattr(Tracer, n, None))]


def test_every_numpy_documented_method_is_compared():
    assert len(_methods_numpy_documents()) >= 40
    assert {"sum", "var", "take", "clip", "dot", "choose", "reshape"} <= set(_methods_numpy_documents())


@pytest.mark.parametrize("name", _methods_numpy_documents())
def test_array_method_parameters_follow_numpys_order(name):
    import inspect
    from xlac.trace.tracer import Tracer
    expected = _numpy_method_parameters(name)
    for array_type in (xlac.Array, Tracer):
        parameters = [p.name for p in list(inspect.signature(getattr(array_type, name)).parameters.values())[1:]
                      if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if name == "reshape":        # NumPy documents "shape"; xlac takes *shape as NumPy accepts
            parameters = [expected[0]] + parameters
        # NumPy's order; xlac may take more at the end (var's correction is not in NumPy 2.4's docstring)
        assert parameters[:len(expected)] == expected, (array_type.__name__, name, parameters, expected)


def test_var_positional_ddof_and_reductions_with_initial():
    x = np.arange(12.0).reshape(3, 4)
    for result, expected in [
        (xlac.asarray(x).var(1, None, None, 1), x.var(1, None, None, 1)),
        (xlac.compile(lambda a: a.std(0, None, None, 1))(x), x.std(0, None, None, 1)),
        (xlac.asarray(x).max(initial=100.0), x.max(initial=100.0)),
        (xlac.compile(lambda a: a.min(1, None, False, -1.0))(x), x.min(1, None, False, -1.0)),
        (xlac.compile(lambda a: a.sum(0, None, None, False, 5.0))(x), x.sum(0, None, None, False, 5.0)),
        (xlac.asarray(x).prod(1, np.float32, None, True, 2.0), x.prod(1, np.float32, None, True, 2.0)),
    ]:
        result = np.asarray(result)
        assert result.dtype == expected.dtype
        np.testing.assert_allclose(result, expected, rtol=1e-6)


@pytest.mark.parametrize("use", [lambda a: a.view(), lambda a: a.view(np.int64), lambda a: a.flat],
                         ids=["view", "view-dtype", "flat"])
def test_view_and_flat_raise_unsupported_error_naming_the_users_line(use):
    x = np.arange(4.0)
    use(x)                         # NumPy has them
    pattern = r"ndarray\.(view\(.*\)|flat) is not supported(.|\n)*test_fuzz_regressions_errors"
    with pytest.raises(xlac.UnsupportedError, match=pattern):
        use(xlac.asarray(x))
    with pytest.raises(xlac.UnsupportedError, match=pattern):
        xlac.compile(lambda a: use(a))(x)


# ---------------------------------------------------------------- x[mask] op= v, element updates, complex into real


def _masked_add(a):
    a[a < 0] += 10
    return a


def _masked_scale_rows(a, m):
    a[m] *= 2.0
    return a


def test_an_augmented_assignment_through_a_traced_mask_matches_numpy():
    a = np.array([-1, 2, -3])
    np.testing.assert_array_equal(np.asarray(xlac.compile(_masked_add)(a.copy())), _masked_add(a.copy()))
    b, m = np.arange(6.0).reshape(2, 3), np.array([True, False])
    np.testing.assert_array_equal(np.asarray(xlac.compile(_masked_scale_rows)(b.copy(), m)),
                                  _masked_scale_rows(b.copy(), m))


def test_a_traced_mask_selection_reduces_and_leaves_the_function_at_numpys_length():
    assert float(xlac.compile(lambda a: a[a > 0].sum())(np.arange(-2.0, 3.0))) == 3.0
    np.testing.assert_array_equal(xlac.compile(lambda a: a[a > 0])(np.arange(3.0)), np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="same_kind"):             # as NumPy: the selection is an int array
        def f(a):
            a[a < 0] += 1.5
        xlac.compile(f)(np.array([-1, 2]))


def test_an_element_update_casts_as_numpys_setitem_eagerly_and_compiled():
    def f(a):
        a[0] += 1.5
        return a
    np.testing.assert_array_equal(np.asarray(xlac.compile(f)(np.array([1, 2]))), f(np.array([1, 2])))
    x = xlac.asarray(np.array([1, 2]))
    x[0] += 1.5
    np.testing.assert_array_equal(np.asarray(x), [2, 2])
    x = xlac.asarray(np.array([1.0, 2.0]))
    t = x[1]
    t += 5                   # an element read is a scalar: rebinding t leaves x alone
    np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0])


def test_a_numpy_complex_scalar_into_a_real_array_warns_and_keeps_the_real_part():
    x = xlac.asarray(np.array([1.0, 2.0]))
    with pytest.warns(np.exceptions.ComplexWarning):
        x[0] = np.complex64(3 + 1j)
    np.testing.assert_array_equal(np.asarray(x), [3.0, 2.0])


def test_methods_take_out_in_numpys_position():
    x = np.array([[1.0, -2.0], [3.5, 4.0]])
    for method, args in [("clip", (0.0, 2.0)), ("dot", (np.eye(2),)), ("take", ([1, 0], 0)),
                         ("compress", ([True, False], 0))]:
        expected_out = np.zeros_like(getattr(x, method)(*args))
        expected = getattr(x, method)(*args, expected_out)

        def f(a, out):
            getattr(a, method)(*args, out)
            return out
        out = np.zeros_like(expected_out)
        np.testing.assert_array_equal(xlac.compile(f)(x, out), expected)
        np.testing.assert_array_equal(out, expected_out)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'clip' output from dtype\\('float64'\\)"):
        xlac.compile(lambda a, out: a.clip(0.5, 2, out))(np.arange(3), np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="dot: output array is not acceptable"):
        xlac.compile(lambda a, out: a.dot(a, out))(x, np.zeros((2, 2), np.float32))


def test_choose_checks_traced_indices_in_raise_mode():
    choices = [np.array([1, 2, 3]), 10]
    f = xlac.compile(lambda a: np.choose(a, choices))
    np.testing.assert_array_equal(f(np.array([0, 1, 1])), np.choose(np.array([0, 1, 1]), choices))
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        np.choose(np.array([0, 2, 1]), choices)
    with pytest.raises(ValueError, match="invalid entry in choice array(.|\n)*test_fuzz_regressions_errors"):
        f(np.array([0, 2, 1]))
    unchecked = xlac.compile(lambda a: np.choose(a, choices), check_bounds=False)
    np.testing.assert_array_equal(unchecked(np.array([0, 2, 1])), [1, 10, 10])


@pytest.mark.parametrize("value", [np.array([False]), np.array([[2]]), [3], [], np.array(0), np.array([1, 2])],
                         ids=["size1-false", "size1-2d", "list", "empty-list", "0d", "size2"])
def test_one_element_of_a_bool_array_takes_the_truth_value_as_numpy(value):
    def f(a):
        a[0, 0] = value

    def outcome(run, a):
        try:
            run(a)
            return a
        except ValueError as e:
            return str(e).splitlines()[0]
    expected = outcome(f, np.ones((3, 1), bool))
    eager = xlac.asarray(np.ones((3, 1), bool))
    for got in (outcome(xlac.compile(f), np.ones((3, 1), bool)), outcome(f, eager)):
        if isinstance(expected, str):
            assert got == expected
        else:
            np.testing.assert_array_equal(np.asarray(got), expected)
