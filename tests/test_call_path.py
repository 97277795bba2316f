"""The cached call path (xlac/runners.py: call_key, the runners made for leaves of the kinds a call passes):
hits, retraces, written arguments, NumPy against device inputs, pytrees, checks, the autocast state.

Each behaviour is checked on the second and third calls too: the first call of a signature runs the general
path and keeps the runner made for its leaves, which serves the calls after it."""
import threading

import numpy as np
import pytest

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches
from xlac.runners import call_key
from xlac.trace.state import autocast_state


def test_hits_serve_every_later_call_with_numpy_values():
    f = xlac.compile(lambda x, y: xnp.tanh(x * y + 1.0))
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    for k in range(4):
        assert_matches(f(x, x + k), np.tanh(x * (x + k) + 1.0))
    info = f.cache_info()
    assert (info.traces, info.compiles, info.hits) == (1, 1, 3)


@pytest.mark.parametrize("second", [
    lambda x: (np.ones(4, np.float32), 1.0),          # a new shape
    lambda x: (x.astype(np.float64), 1.0),            # a new dtype
    lambda x: (x, 1),                                 # a Python int instead of a float: a new weak dtype
    lambda x: ((x,), 1.0),                            # a new structure
])
def test_a_new_signature_traces_again_and_each_is_then_served(second):
    f = xlac.compile(lambda x, s: x * s if not isinstance(x, tuple) else x[0] * s)
    x = np.arange(3, dtype=np.float32)
    args = second(x)
    for _ in range(2):
        assert_matches(f(x, 2.0), x * 2.0)
        out = f(*args)
        expected = (args[0][0] if isinstance(args[0], tuple) else args[0]) * args[1]
        assert_matches(out, expected)
    info = f.cache_info()
    assert (info.traces, info.hits) == (2, 2)


def test_numpy_and_device_inputs_share_one_program_and_agree():
    f = xlac.compile(lambda x, y: x @ y + 1)
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    y = np.arange(12, dtype=np.float64).reshape(3, 4) / 7
    xd, yd = xlac.asarray(x), xlac.asarray(y)
    for _ in range(3):
        from_numpy, from_device, mixed = f(x, y), f(xd, yd), f(x, yd)
        assert from_numpy.dtype == np.float64
        assert_matches(from_numpy, x @ y + 1)
        np.testing.assert_array_equal(np.asarray(from_numpy), np.asarray(from_device))
        np.testing.assert_array_equal(np.asarray(from_numpy), np.asarray(mixed))
    assert f.cache_info().traces == 1 and f.cache_info().compiles == 1


def test_pytrees_in_and_out_on_later_calls():
    @xlac.compile
    def f(x, params):
        return {"y": x * params["a"] + params["b"][0], "rest": [params["b"][1], None]}
    x = np.arange(4, dtype=np.float32)
    for k in range(3):
        params = {"b": (np.full(4, k, np.float32), 2.0 + k), "a": xlac.asarray(np.ones(4, np.float32) * k)}
        out = f(x, params)
        assert set(out) == {"y", "rest"} and out["rest"][1] is None
        assert_matches(out["y"], x * k + k)
        assert_matches(out["rest"][0], np.asarray(2.0 + k))
    assert f.cache_info().traces == 1
    f(x, {"a": x, "b": (x, 1.0)})            # a NumPy array where an xlac.Array was: the same signature
    f(x, {"a": x, "b": [x, 1.0]})            # a list where a tuple was: another structure
    assert f.cache_info().traces == 2


@pytest.mark.parametrize("as_device", [False, True])
def test_a_written_argument_is_updated_on_every_call(as_device):
    @xlac.compile
    def accumulate(total, x):
        total += xnp.tanh(x)
    x = np.linspace(-1, 1, 5)
    total = np.zeros(5)
    held = xlac.asarray(total) if as_device else total
    for k in range(1, 4):
        assert accumulate(held, x) is None
        assert_matches(held, np.tanh(x) * k)
    assert accumulate.cache_info().traces == 1


def test_one_array_passed_twice_still_runs_its_variant_on_later_calls():
    @xlac.compile
    def f(a, b):
        a += b
    x = np.ones(3)
    for k in range(3):
        f(x, x)
        assert_matches(x, np.full(3, 2.0 ** (k + 1)))
    y, z = np.ones(3), np.full(3, 2.0)
    f(y, z)
    f(y, z)
    assert_matches(y, np.full(3, 5.0))


def test_a_failing_check_raises_on_later_calls():
    f = xlac.compile(lambda x, i: x[i])
    x = np.arange(4.0)
    assert float(f(x, 1)) == 1.0
    assert float(f(x, 3)) == 3.0
    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        f(x, 4)


def test_read_only_arrays_and_other_leaves_take_the_general_path():
    readonly = np.arange(3.0)
    readonly.setflags(write=False)
    assert call_key((readonly,)) is None
    assert call_key((np.float32(1),)) is None and call_key(("static",)) is None
    f = xlac.compile(lambda x: x * 2)
    for _ in range(2):
        assert_matches(f(readonly), readonly * 2)
        assert_matches(f(np.float32(3)), np.float32(6))


def test_static_arguments_are_served_by_their_exact_value():
    scale = np.ones(3)                       # read from outside: the general runner, given the static values

    @xlac.compile(static_argnums=(1, 2))
    def f(x, n, c):
        for _ in range(n):
            x = x * c + scale
        return x, np.copysign(scale, c)
    x = np.arange(3.0)
    calls = [(2, 2.0), (3, 2.0), (2, -0.0), (2, 0.0), (2, 2)]       # 2 and 2.0, 0.0 and -0.0 compile apart
    for _ in range(3):
        for n, c in calls:
            for got, expected in zip(f(x, n, c), f.__wrapped__(x, n, c)):
                np.testing.assert_array_equal(np.asarray(got), expected)
    info = f.cache_info()
    assert (info.compiles, info.hits) == (len(calls), 2 * len(calls))
    scale[:] = 2.0
    np.testing.assert_array_equal(np.asarray(f(x, 2, 2.0)[0]), f.__wrapped__(x, 2, 2.0)[0])
    with pytest.raises(TypeError, match="hashable"):
        f(x, [2], 2.0)
    assert call_key((x, 2), None, {1})[0] != call_key((x, 2.0), None, {1})[0]
    assert call_key((x, [2]), None, {1}) is None       # unhashable: the general path names it


def test_keyword_arguments_static_or_not_are_served_too():
    @xlac.compile(static_argnames="mode")
    def f(x, y, mode):
        return x * y if mode == "product" else x + y
    x = np.arange(3.0)
    for _ in range(3):
        for mode in ("product", "sum"):
            assert_matches(f(x, y=x + 1.0, mode=mode), f.__wrapped__(x, x + 1.0, mode))
            assert_matches(f(x, x, mode=mode), f.__wrapped__(x, x, mode))
    info = f.cache_info()
    assert (info.compiles, info.hits) == (4, 8)
    with pytest.raises(TypeError, match="hashable"):
        f(x, x, mode=["product"])
    y = x + 1.0
    _, leaves = call_key((x,), {"y": y, "mode": "sum"}, static_names={"mode"})
    assert len(leaves) == 2 and leaves[0] is x and leaves[1] is y      # the static mode is in the key only


def test_call_key_tells_apart_what_changes_the_program():
    x = np.zeros(2, np.float32)
    key = call_key((x, {"a": 1.0}))[0]
    assert call_key((np.ones(2, np.float32), {"a": 3.0}))[0] == key
    different = [(x.astype(np.float64), {"a": 1.0}), (x, {"a": 1}), (x, {"b": 1.0}), (x, [1.0]), (x, (1.0,)),
                 (xlac.asarray(x), {"a": 1.0}), (x, {"a": 1.0}, None), (x, {"a": None})]
    assert all(call_key(args)[0] != key for args in different)
    _, leaves = call_key(({"b": 2.0, "a": x}, [None, 3]))
    assert leaves[0] is x and leaves[1:] == [2.0, 3]       # pytree.flatten's order: dicts by sorted key


def test_the_autocast_state_is_part_of_the_key():
    f = xlac.compile(lambda a, b: a @ b)
    a = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    exact = np.asarray(f(a, a))
    with xlac.autocast(dtype="bfloat16"):
        assert autocast_state() is not None
        low = np.asarray(f(a, a))
        assert np.asarray(f(a, a)).dtype == low.dtype
    np.testing.assert_array_equal(np.asarray(f(a, a)), exact)
    assert not np.array_equal(low.astype(np.float32), exact)
    assert f.cache_info().traces == 2


def test_an_autocast_scope_in_one_thread_leaves_others_off():
    entered, done = threading.Event(), threading.Event()
    seen = []

    def other():
        entered.wait()
        seen.append(autocast_state())
        done.set()
    thread = threading.Thread(target=other)
    thread.start()
    with xlac.autocast(dtype="bfloat16"):
        entered.set()
        done.wait()
        inside = autocast_state()
    thread.join()
    assert seen == [None] and inside is not None and autocast_state() is None


def test_a_served_signature_is_still_inlined_when_called_while_tracing():
    weights = {"w": np.ones(3)}
    inner = xlac.compile(lambda params: params["w"] * 2)
    assert_matches(inner(weights), np.full(3, 2.0))
    assert_matches(inner(weights), np.full(3, 2.0))        # served by the fast path from now on
    outer = xlac.compile(lambda x: x + inner(weights))      # inside outer's trace: inlined, weights read per call
    x = np.zeros(3)
    assert_matches(outer(x), np.full(3, 2.0))
    weights["w"][:] = 5.0
    assert_matches(outer(x), np.full(3, 10.0))
    assert inner.cache_info().compiles == 1
