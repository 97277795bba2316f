"""Arrays reached from outside the arguments (closures, globals, attributes): read at every call,
passed as implicit arguments, written back when mutated, retraced when their shape or dtype changes."""
import numpy as np
import pytest

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches

WEIGHTS = np.ones((3, 3))
STATE = {"m": np.zeros(3), "scale": np.float64(2.0)}
TOTAL = np.zeros(3)


def test_a_global_is_read_at_every_call_and_rebinding_it_needs_no_retrace():
    global WEIGHTS
    f = xlac.compile(lambda x: x @ WEIGHTS)
    x = np.arange(3.0)
    assert_matches(f(x), x @ WEIGHTS)
    WEIGHTS[1] = 5.0                      # mutated in place
    assert_matches(f(x), x @ WEIGHTS)
    WEIGHTS = np.full((3, 3), 7.0)        # rebound, same signature
    assert_matches(f(x), x @ WEIGHTS)
    assert f.cache_info().traces == 1
    WEIGHTS = np.full((3, 2), 1.5, np.float32)   # new shape and dtype: traced again
    assert_matches(f(x), x @ WEIGHTS)
    assert f.cache_info().traces == 2
    WEIGHTS = np.ones((3, 3))


def test_a_large_outside_array_is_an_argument_of_the_program_not_a_constant():
    table = np.arange(4096.0).reshape(64, 64)
    f = xlac.compile(lambda x: x @ table)
    text = f.lower(np.ones(64)).as_text()
    assert "4.095" not in text and "4095" not in text
    assert f.trace(np.ones(64)).ir("final").input_names == ["x", "table"]


def test_arrays_made_with_numpy_inside_the_function_are_constants():
    f = xlac.compile(lambda x: x + np.arange(3.0))
    traced = f.trace(np.ones(3))
    assert len(traced.ir("final").inputs) == 1
    assert_matches(f(np.ones(3)), np.ones(3) + np.arange(3.0))


def test_a_view_of_an_array_made_inside_is_a_constant():
    k = 4
    for kernel in (lambda x: x[:, None] == np.arange(k)[None, :],
                   lambda x: x[:, None] + np.arange(k * 2.0).reshape(2, k)[1][None, ::-1]):
        f = xlac.compile(kernel)
        x = np.arange(6) % k
        assert f.trace(x).ir("final").input_names == ["x"]
        assert_matches(f(x), kernel(x))


@pytest.mark.parametrize("convert", [True, False])
def test_a_view_of_an_outside_array_taken_inside_is_read_per_call(convert):
    table = np.arange(8.0)
    f = xlac.compile(lambda x: x + table[None, 2:5], convert=convert)
    assert_matches(f(np.zeros((1, 3))), table[None, 2:5])
    table[2:5] = [7.0, 8.0, 9.0]
    assert_matches(f(np.zeros((1, 3))), np.array([[7.0, 8.0, 9.0]]))
    held = np.arange(6.0)
    g = xlac.compile(lambda x: x + held.reshape(2, 3)[1][None, :], convert=convert)   # a view of a view
    assert_matches(g(np.zeros((1, 3))), np.array([[3.0, 4.0, 5.0]]))
    held[3:] = -1.0
    assert_matches(g(np.zeros((1, 3))), np.full((1, 3), -1.0))


def test_closure_cells_dict_items_and_rebinding_inside_them():
    history = np.zeros(2)

    def make():
        return xlac.compile(lambda x: x * STATE["m"] + xnp.sum(history) * STATE["scale"])
    f = make()
    x = np.ones(3)
    assert_matches(f(x), x * STATE["m"])
    STATE["m"] = np.array([1.0, 2.0, 3.0])
    history[:] = 1.0
    assert_matches(f(x), x * STATE["m"] + 4.0)
    assert f.cache_info().traces == 1
    STATE["m"] = np.zeros(3)


@pytest.mark.parametrize("convert", [True, False])
def test_a_numpy_view_taken_inside_follows_its_base(convert):
    global WEIGHTS
    f = xlac.compile(lambda x: x + WEIGHTS[0], convert=convert)
    assert_matches(f(np.zeros(3)), WEIGHTS[0])
    WEIGHTS[0] = [1.0, 2.0, 3.0]
    assert_matches(f(np.zeros(3)), np.array([1.0, 2.0, 3.0]))
    old = WEIGHTS
    WEIGHTS = np.full((3, 3), 4.0)       # the view's base moved: trace again, read the new one
    assert_matches(f(np.zeros(3)), np.full(3, 4.0))
    # Converted, WEIGHTS itself is the implicit argument (read per call by its name); as written, its row
    # is, and the row of another array means tracing again.
    assert f.cache_info().traces == (1 if convert else 2)
    WEIGHTS = old
    WEIGHTS[:] = 1.0


def test_writes_to_an_outside_numpy_array_are_written_back():
    @xlac.compile
    def accumulate(x):
        xnp.copyto(TOTAL, TOTAL + x)
        return xnp.multiply(TOTAL, 2)     # (TOTAL * 2 would run in NumPy, at trace time)

    for k in range(3):
        out = accumulate(np.full(3, 1.0))
        assert_matches(out, np.full(3, 2.0 * (k + 1)))
    assert_matches(TOTAL, np.full(3, 3.0))
    TOTAL[:] = 0


class KVCache:
    """A model holding its cache as an attribute, updated one row per call."""

    def __init__(self, rows, width):
        self.cache = xlac.asarray(np.zeros((rows, width), np.float32))
        self.scale = np.float32(0.5)

    @xlac.compile
    def append(self, position, row):
        self.cache[position] = row
        return (self.cache * self.scale).sum(axis=0)


def test_a_kv_cache_on_self_is_updated_in_place_one_row_per_call():
    model = KVCache(16, 8)
    expected = np.zeros((16, 8), np.float32)
    rng = np.random.default_rng(0)
    handle = model.cache
    traces = model.append.cache_info().traces
    for position in [0, 3, 3, 15, -1]:
        row = rng.standard_normal(8).astype(np.float32)
        expected[position] = row
        out = model.append(position, row)
        assert_matches(out, (expected * np.float32(0.5)).sum(axis=0))
    assert model.cache is handle
    assert_matches(model.cache, expected)
    assert model.append.cache_info().traces == traces + 1
    other = KVCache(16, 8)                        # another instance: its own cache, its own trace
    other.append(1, np.ones(8, np.float32))
    assert_matches(other.cache[1], np.ones(8, np.float32))
    assert_matches(model.cache, expected)


@pytest.mark.usefixtures("xla_defaults")
def test_the_cache_write_aliases_the_buffer_instead_of_copying_it():
    model = KVCache(1024, 256)
    lowered = model.append.lower(0, np.ones(256, np.float32))
    compiled = lowered.compile()
    assert "tf.aliasing_output" in lowered.as_text()
    assert compiled.memory_analysis()["alias_size_in_bytes"] >= 1024 * 256 * 4
    report = compiled.inplace_report()
    assert report and all(write.in_place for write in report)


def test_a_cache_replaced_by_one_of_another_shape_is_traced_again():
    model = KVCache(4, 2)
    model.append(0, np.ones(2, np.float32))
    traces = model.append.cache_info().traces
    model.cache = xlac.asarray(np.zeros((6, 2), np.float32))
    model.append(5, np.ones(2, np.float32))
    assert_matches(model.cache[5], np.ones(2, np.float32))
    assert model.append.cache_info().traces == traces + 1


def test_an_outside_array_written_while_also_passed_as_argument_is_one_array():
    @xlac.compile
    def f(x):
        xnp.copyto(TOTAL, x + 1)
        return x

    TOTAL[:] = 0.0
    assert_matches(f(TOTAL), np.ones(3))       # x is TOTAL, as in NumPy
    assert_matches(TOTAL, np.ones(3))
    TOTAL[:] = 0.0


def test_the_ahead_of_time_executable_reads_outside_arrays_too():
    scale = np.array([2.0, 3.0])
    compiled = xlac.compile(lambda x: x * scale).lower(np.ones(2)).compile()
    assert_matches(compiled(np.ones(2)), np.array([2.0, 3.0]))
    scale[0] = 5.0
    assert_matches(compiled(np.ones(2)), np.array([5.0, 3.0]))


def test_numpy_indexing_of_an_outside_array_with_a_traced_index_says_what_to_do():
    table = np.zeros(4)
    f = xlac.compile(lambda i: table[i], convert=False)
    with pytest.raises(xlac.TracerConversionError, match="xlac.asarray"):
        f(1)


def test_converted_an_outside_numpy_array_indexed_with_a_traced_index_is_read_per_call():
    table = np.arange(4)                  # integers: read per call once a traced index reaches it
    f = xlac.compile(lambda i: table[i] * 2)
    assert int(f(1)) == 2
    table[1] = 10
    assert int(f(1)) == 20 and f.cache_info().traces == 1



def test_out_into_an_outside_numpy_array_is_written_back():
    running = np.zeros(3, np.float32)

    @xlac.compile
    def step(x):
        xnp.add(running, x, out=running)       # NumPy's spelling of running += x
        return xnp.max(running)

    for k in range(1, 4):
        assert float(step(np.arange(3, dtype=np.float32))) == 2.0 * k
    assert_matches(running, np.arange(3, dtype=np.float32) * 3)


def test_a_transform_inside_a_compiled_function_reads_an_outside_array_per_call():
    weights = xlac.asarray(np.ones(3))

    @xlac.compile
    def f(x):
        return xlac.grad(lambda y: (y * weights).sum())(x)
    np.testing.assert_array_equal(np.asarray(f(np.ones(3))), np.ones(3))
    weights[...] = np.full(3, 5.0)
    np.testing.assert_array_equal(np.asarray(f(np.ones(3))), np.full(3, 5.0))
