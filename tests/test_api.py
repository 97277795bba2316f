"""xlac.compile: results, the cache, threads, pytrees, static arguments, stages and bad input."""
import re
import sys
import threading

import jax
import numpy as np
import pytest

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches


def this_line() -> int:
    return sys._getframe(1).f_lineno


def test_result_matches_numpy_with_weak_scalars():
    f = xlac.compile(lambda x, s: xnp.tanh(x * s + 1.0))
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    assert_matches(f(x, 0.5), np.tanh(x * 0.5 + 1.0))
    assert_matches(f(x, 2), np.tanh(x * 2 + 1.0))   # a Python int is weak too: stays float32


def test_64_bit_values_survive_without_x64():
    f = xlac.compile(lambda x, i: (x * 2, i + 1))
    x = np.array([1e300, 1.0 + 2.0 ** -50])
    i = np.array([2 ** 40, -(2 ** 62)], np.int64)
    out_x, out_i = f(x, i)
    assert_matches(out_x, x * 2)
    assert_matches(out_i, i + 1)
    assert not jax.config.jax_enable_x64


def test_cache_no_retrace_on_same_signature():
    f = xlac.compile(lambda x, y: x + y)
    x = np.ones(3, np.float32)
    for _ in range(3):
        f(x, x)
    info = f.cache_info()
    assert (info.traces, info.compiles, info.hits) == (1, 1, 2)


@pytest.mark.parametrize("second_call", [
    lambda f: f(np.ones(4, np.float32), 1),                     # new shape
    lambda f: f(np.ones(3, np.float64), 1),                     # new dtype
    lambda f: f(np.ones(3, np.float32), 2),                     # new static value
    lambda f: f((np.ones(3, np.float32),), 1),                  # new pytree structure
])
def test_cache_new_trace_on_changed_signature(second_call):
    f = xlac.compile(lambda x, n: x if n == 1 else x, static_argnums=1)
    f(np.ones(3, np.float32), 1)
    second_call(f)
    assert f.cache_info().traces == 2 and f.cache_info().compiles == 2


def test_static_argnames_and_argnums_select_python_values():
    @xlac.compile(static_argnames="mode")
    def f(x, mode):
        return x * 2 if mode == "double" else x - 1
    x = np.arange(3.0)
    assert_matches(f(x, mode="double"), x * 2)
    assert_matches(f(x, "minus"), x - 1)
    with pytest.raises(TypeError, match="hashable"):
        f(x, mode=["not", "hashable"])


def padded_tail_sum(x, n):
    return np.concatenate([np.zeros(n), x[n:]]).sum() * n      # n as a shape, as a slice bound, as a number


def test_a_python_int_argument_used_as_a_shape_is_taken_as_its_value_and_others_stay_traced():
    f = xlac.compile(padded_tail_sum)
    x = np.arange(5.0)
    for n in (1, 3, 1):
        assert float(f(x, n)) == padded_tail_sum(x, n)
    assert float(f(x, n=2)) == padded_tail_sum(x, 2)            # a keyword argument too
    info = f.cache_info()
    # 1: traced, stopped at np.zeros(n), traced again with n static; 3: a new value; the second 1: a hit;
    # n=2 by keyword: another signature, traced twice as the first
    assert (info.traces, info.compiles, info.hits) == (5, 3, 1)
    g = xlac.compile(lambda x, n: x[n:].sum() * n)                # n never needed as an int: one trace
    assert [float(g(x, n)) for n in (1, 3)] == [10.0, 21.0] and g.cache_info().traces == 1


def test_a_numpy_integer_or_an_int_inside_a_pytree_used_as_a_shape_still_raises():
    line = padded_tail_sum.__code__.co_firstlineno + 1
    with pytest.raises(xlac.TracerConversionError,
                       match=rf"(?s)Python index.*static argument.*\n  at .*test_api.py:{line} \(in padded_tail_sum\)"):
        xlac.compile(padded_tail_sum)(np.arange(5.0), np.int64(2))
    with pytest.raises(xlac.TracerConversionError, match="static argument"):
        xlac.compile(lambda x, sizes: padded_tail_sum(x, sizes["n"]))(np.arange(5.0), {"n": 2})


def test_pytrees_in_and_out():
    @xlac.compile
    def f(params, batch):
        return {"y": batch[0] @ params["w"] + params["b"], "none": None, "pair": (batch[1], params["b"])}
    params = {"w": np.eye(3, dtype=np.float32), "b": np.ones(3, np.float32)}
    batch = [np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros(2, np.float32)]
    out = f(params, batch)
    assert set(out) == {"y", "none", "pair"} and out["none"] is None
    assert_matches(out["y"], batch[0] @ params["w"] + params["b"])
    assert_matches(out["pair"][0], batch[1])


def test_threads_share_one_compile():
    f = xlac.compile(lambda x: xnp.exp(x) * 2)
    inputs = [np.full(5, i, np.float32) for i in range(8)]
    results = [None] * 8
    barrier = threading.Barrier(8)

    def worker(i):
        barrier.wait()
        results[i] = np.asarray(f(inputs[i]))
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert f.cache_info().compiles == 1
    for x, r in zip(inputs, results):
        assert_matches(r, np.exp(x) * 2)


def test_stages_trace_lower_compile():
    def f(x, w):
        return xnp.tanh(x @ w)
    x, w = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    g = xlac.compile(f)
    text = str(g.trace(x, w))
    assert "dot_general" in text and "tanh" in text and "test_api.py" in text
    lowered = g.lower(x, w)
    assert "stablehlo.dot_general" in lowered.as_text()
    compiled = lowered.compile()
    assert "ENTRY" in compiled.as_text()
    assert compiled.cost_analysis()["flops"] > 0
    assert compiled.memory_analysis()["output_size_in_bytes"] == 2 * 4 * 4
    assert_matches(compiled(x, w), np.tanh(x @ w))


def test_compiled_stage_checks_arguments():
    compiled = xlac.compile(lambda x, y: x + y).lower(np.ones(4, np.float32), np.ones(4, np.float32)).compile()
    with pytest.raises(TypeError, match=r"argument y: .*expects f32\[4\], got i32\[4\]"):
        compiled(np.ones(4, np.float32), np.ones(4, np.int32))
    with pytest.raises(TypeError, match=r"argument x: .*expects f32\[4\], got f32\[2,2\]"):
        compiled(np.ones((2, 2), np.float32), np.ones(4, np.float32))
    with pytest.raises(TypeError, match="structured"):
        compiled(np.ones(4, np.float32))


def test_source_line_reaches_ir_stablehlo_and_optimized_hlo():
    def f(x):
        y = xnp.exp(x); line = this_line()  # noqa: E702
        return y * 2, line
    x = np.ones(3, np.float32)
    line = f(x)[1]
    g = xlac.compile(lambda x: f(x)[0])
    assert f"test_api.py:{line}" in str(g.trace(x))
    assert re.search(rf'loc\("exp/exp"\(".*test_api.py":{line}:0\)\)', g.lower(x).as_text())
    hlo = g.lower(x).compile().as_text()
    frame = re.search(r"exponential\(.*stack_frame_id=(\d+)", hlo).group(1)
    location = re.search(rf"^{frame} {{file_location_id=(\d+)", hlo, re.M).group(1)
    assert re.search(rf"^{location} {{file_name_id=\d+ function_name_id=\d+ line={line} ", hlo, re.M)


# ---------------------------------------------------------------- bad input


def test_unsupported_argument_type_names_the_argument():
    f = xlac.compile(lambda x, opts: x)
    with pytest.raises(TypeError, match=r"argument opts\['k'\]: .*got builtins.str"):
        f(np.ones(2), {"k": "text"})


def test_wrong_number_of_arguments():
    f = xlac.compile(lambda x, y: x + y)
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        f(np.ones(2))


def test_shape_error_names_op_shapes_and_line():
    f = xlac.compile(lambda x, y: x + y)
    with pytest.raises(ValueError, match=r"add: operands could not be broadcast together with shapes \(3,\) \(4,\)"
                       r"(.|\n)*test_api.py"):
        f(np.ones(3), np.ones(4))


def test_python_control_flow_on_tracer():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    with pytest.raises(xlac.TracerConversionError, match=r"(?s)Python control flow.*xnp.where.*test_api.py"):
        xlac.compile(f, convert=False)(np.ones(3))         # converted, it is a conditional: tests/convert/test_convert.py
    for to_concrete in (int, float, np.asarray):
        with pytest.raises(xlac.TracerConversionError, match="test_api.py"):
            xlac.compile(lambda x: to_concrete(x), convert=False)(np.ones(()))
    for to_python in (int, float):          # converted, a Python number of a traced value: tests/numpy/test_python_scalars.py
        assert xlac.compile(lambda x: to_python(x))(np.ones(())) == 1
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d traced array"):
        xlac.compile(lambda x: len(x))(np.ones(()))


# ---------------------------------------------------------------- xlac.Array


def test_array_interface_and_buffer_reuse(monkeypatch):
    a = xlac.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert (a.shape, a.dtype, a.ndim, a.size) == ((2, 3), np.float32, 2, 6)
    assert repr(a) == "Array([[0., 1., 2.],\n       [3., 4., 5.]], dtype=float32)"
    assert_matches(np.from_dlpack(a), np.arange(6, dtype=np.float32).reshape(2, 3))
    f = xlac.compile(lambda x: x * 2)
    out = f(a)
    import xlac.runtime.transfer as transfer

    def no_transfer(*args, **kwargs):
        raise AssertionError("an xlac.Array argument was copied to the device again")
    monkeypatch.setattr(transfer, "to_device", no_transfer)
    monkeypatch.setattr(xlac.runtime, "to_device", no_transfer)
    assert_matches(f(out), np.arange(6, dtype=np.float32).reshape(2, 3) * 4)


def test_array_operators_run_eagerly_like_numpy():
    x = np.arange(1, 5, dtype=np.int32)
    a = xlac.asarray(x)
    assert_matches(a + 1, x + 1)
    assert_matches(2.5 * a, 2.5 * x)
    assert_matches(a / 2, x / 2)
    assert_matches(a // 3, x // 3)
    assert_matches(-a, -x)
    assert_matches(a > 2, x > 2)
    assert_matches(x - a, x - x)          # ndarray on the left defers to xlac.Array
    assert float(xlac.asarray(np.float32(3.5))) == 3.5


def test_jax_array_argument():
    f = xlac.compile(lambda x: x + 1)
    assert_matches(f(jax.numpy.arange(3.0)), np.arange(3.0, dtype=np.float32) + 1)


def test_device_argument():
    f = xlac.compile(lambda x: x + 1, device="cpu:0")
    out = f(np.ones(2, np.float32))
    assert out.device.platform == "cpu"
    assert_matches(out, np.full(2, 2, np.float32))
    with pytest.raises(ValueError, match="no 'nosuchplatform' backend"):
        xlac.compile(lambda x: x, device="nosuchplatform")
    with pytest.raises(ValueError, match="does not exist"):
        xlac.compile(lambda x: x, device="cpu:99")


def test_a_compiled_function_called_inside_another_is_inlined():
    inner = xlac.compile(lambda x: xnp.sin(x) * 2)
    outer = xlac.compile(lambda x: inner(x) + inner(x * 3))
    x = np.linspace(0, 1, 5)
    assert_matches(outer(x), np.sin(x) * 2 + np.sin(x * 3) * 2)
    assert inner.cache_info().compiles == 0


def test_named_tuples_are_pytrees_in_and_out():
    import collections
    Pair = collections.namedtuple("Pair", "first second")
    from xlac.trace import pytree
    leaves, tree = pytree.flatten(Pair(1, (2, 3)))
    assert leaves == [1, 2, 3] and repr(tree) == "Pair(*, (*, *))"
    assert pytree.unflatten(tree, [4, 5, 6]) == Pair(4, (5, 6))
    out = xlac.compile(lambda p: Pair(p.second * 2, p.first))(Pair(np.ones(2), np.zeros(3)))
    assert type(out) is Pair
    np.testing.assert_array_equal(np.asarray(out.first), np.zeros(3))
    np.testing.assert_array_equal(np.asarray(out.second), np.ones(2))
    result = xlac.compile(lambda a: xnp.linalg.eigh(a))(np.diag([2.0, 1.0]))
    np.testing.assert_allclose(np.asarray(result.eigenvalues), [1.0, 2.0])
