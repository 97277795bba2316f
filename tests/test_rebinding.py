"""State rebound inside a compiled function (``self.k = f(self.k)``, a global, a closed-over object's
attribute): written back after every call as NumPy would leave it, or refused with an error naming the
place and the line. After every case no Tracer is left in any user object (``no_tracers_left``)."""
import functools
import inspect
import sys

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches
from xlac.trace.tracer import Tracer

COUNTER = np.zeros(3)
OPTIMIZER_STATE = {"m": np.zeros(2), "steps": np.zeros((), np.int64)}


def tracers_in(obj, path="", depth=0, seen=None) -> list[str]:
    """The paths of every Tracer reachable from ``obj`` through attributes, items and closure cells."""
    seen = set() if seen is None else seen
    if isinstance(obj, Tracer):
        return [path]
    if depth > 6 or id(obj) in seen or isinstance(obj, (np.ndarray, xlac.Array, str, bytes, type(sys))):
        return []
    seen.add(id(obj))
    if isinstance(obj, dict):
        entries = [(f"[{k!r}]", v) for k, v in obj.items()]
    elif isinstance(obj, (list, tuple, set)):
        entries = [(f"[{i}]", v) for i, v in enumerate(obj)]
    elif inspect.isfunction(obj):
        entries = [(f".<cell {i}>", c.cell_contents) for i, c in enumerate(obj.__closure__ or ())]
    elif hasattr(obj, "__dict__") and (not isinstance(obj, type) or obj.__module__ == __name__):
        entries = [(f".{k}", v) for k, v in vars(obj).items()]      # instances, and this module's classes
    else:
        return []
    return [p for step, value in entries for p in tracers_in(value, path + step, depth + 1, seen)]


@pytest.fixture(autouse=True)
def no_tracers_left():
    """After every case: no Tracer in this module's globals or in what the case registered."""
    watched = []
    yield watched
    assert tracers_in({k: v for k, v in globals().items() if not k.startswith("__")}) == []
    assert tracers_in(watched) == []


def line_of(fn, text: str) -> int:
    """The line number of the line of ``fn``'s source holding ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


# ---------------------------------------------------------------- supported: written back


class Concatenating:
    def __init__(self):
        self.k = np.ones((1, 4), np.float32)

    @xlac.compile
    def step(self, x):
        self.k = np.concatenate([self.k, x[None]])
        return self.k.sum(0)

    def step_numpy(self, x):
        self.k = np.concatenate([self.k, x[None]])
        return self.k.sum(0)


def test_the_issue_example_rebinds_a_numpy_attribute_and_each_new_shape_traces_again(no_tracers_left):
    c, reference = Concatenating(), Concatenating()
    no_tracers_left.append(c)
    sums = [c.step(np.full(4, i + 1, np.float32)) for i in range(3)]
    assert [float(s[0]) for s in sums] == [2.0, 4.0, 7.0]
    for i in range(3):
        reference.step_numpy(np.full(4, i + 1, np.float32))
    assert type(c.k) is np.ndarray
    assert_matches(c.k, reference.k)
    assert Concatenating.step.cache_info().traces >= 3      # (1, 4), (2, 4), (3, 4): one trace per shape


class Momentum:
    """An optimizer updating its state: the shape is constant, so one trace serves every call."""

    def __init__(self, m):
        self.m = m

    def update(self, g, beta):
        self.m = beta * self.m + g
        return -0.1 * self.m


@settings(max_examples=12, deadline=None)
@given(st.lists(st.floats(-4, 4, width=32), min_size=1, max_size=6), st.floats(0, 1), st.booleans())
def test_a_rebound_state_of_constant_shape_matches_numpy_with_one_trace(gradients, beta, as_xlac_array):
    start = np.arange(3, dtype=np.float32)
    compiled = Momentum(xlac.asarray(start) if as_xlac_array else start.copy())
    reference = Momentum(start.copy())
    update = xlac.compile(Momentum.update, static_argnums=0)     # the object, by identity
    for g in gradients:
        grad = np.full(3, g, np.float32)
        assert_matches(update(compiled, grad, beta), reference.update(grad, beta))
    assert type(compiled.m) is (xlac.Array if as_xlac_array else np.ndarray)
    assert_matches(compiled.m, reference.m)
    assert update.cache_info().traces == 1
    assert tracers_in(compiled) == []


def test_a_global_rebound_with_the_global_statement():
    global COUNTER
    COUNTER = np.zeros(3)

    @xlac.compile
    def count(x):
        global COUNTER
        COUNTER = COUNTER + x
        return COUNTER * 2

    for i in range(4):
        out = count(np.full(3, float(i)))
    assert type(COUNTER) is np.ndarray
    assert_matches(COUNTER, np.full(3, 6.0))
    assert_matches(out, np.full(3, 12.0))
    assert count.cache_info().traces == 1


@pytest.mark.parametrize("convert", [True, False])
def test_a_dict_item_of_a_global_is_rebound(convert):
    OPTIMIZER_STATE.update(m=np.zeros(2), steps=np.zeros((), np.int64))

    @xlac.compile(convert=convert)
    def step(g):
        OPTIMIZER_STATE["m"] = 0.5 * OPTIMIZER_STATE["m"] + g       # 0.5 * m: NumPy's, when traced
        OPTIMIZER_STATE["steps"] = xnp.add(OPTIMIZER_STATE["steps"], 1)
        return OPTIMIZER_STATE["m"]

    for _ in range(4):
        step(np.ones(2))
    assert_matches(OPTIMIZER_STATE["m"], np.full(2, 1.875))
    assert_matches(OPTIMIZER_STATE["steps"], np.array(4))
    assert type(OPTIMIZER_STATE["steps"]) is np.ndarray
    if convert:
        # m, a floating-point array from outside, is an implicit argument from the start: read per call,
        # and still a NumPy array after the calls, as NumPy leaves it.
        assert type(OPTIMIZER_STATE["m"]) is np.ndarray
        assert step.cache_info().traces == 1
    else:
        # NumPy's own code read m when traced (a constant there): the next call traces again, with m an
        # xlac.Array from then on, whose operators are traced.
        assert type(OPTIMIZER_STATE["m"]) is xlac.Array
        assert step.cache_info().traces == 2


def test_an_array_rebound_to_what_numpy_computed_at_trace_time_is_refused():
    OPTIMIZER_STATE.update(m=np.zeros(2), steps=np.zeros((), np.int64))
    steps = OPTIMIZER_STATE["steps"]

    @xlac.compile
    def step(g):
        OPTIMIZER_STATE["steps"] = OPTIMIZER_STATE["steps"] + 1    # NumPy's +: would run once, not per call
        return g

    with pytest.raises(xlac.RebindingError, match=r"OPTIMIZER_STATE\['steps'\] to a NumPy int64 scalar") as error:
        step(np.ones(2))
    assert "xnp.add" in str(error.value)
    assert OPTIMIZER_STATE["steps"] is steps


def test_an_attribute_of_a_closed_over_object_and_a_nonlocal_name_are_rebound(no_tracers_left):
    class State:
        pass
    state = State()
    state.k = xlac.asarray(np.ones(2))
    total = np.zeros(2)

    @xlac.compile
    def step(x):
        nonlocal total
        state.k = state.k * x
        total = total + state.k
        return total

    no_tracers_left.extend([state, step])
    for _ in range(3):
        step(np.full(2, 2.0))
    assert type(state.k) is xlac.Array and type(total) is np.ndarray
    assert_matches(state.k, np.full(2, 8.0))
    assert_matches(total, np.full(2, 14.0))
    assert step.cache_info().traces == 1


class Accumulator:
    def __init__(self):
        self.total = 0.0               # a Python float, then an array: NumPy leaves np.float64 there

    @xlac.compile
    def add(self, x):
        self.total = self.total + xnp.sum(x)
        self.last = x * 2              # an attribute the object did not have
        return self.total


def test_a_place_that_held_no_array_gets_an_xlac_array_and_is_read_from_the_next_call_on(no_tracers_left):
    a = Accumulator()
    no_tracers_left.append(a)
    traces = Accumulator.add.cache_info().traces
    for i in range(4):
        out = a.add(np.full(2, float(i)))
    assert_matches(out, np.float64(12.0))
    assert_matches(a.total, np.float64(12.0))
    assert type(a.total) is xlac.Array and type(a.last) is xlac.Array
    assert_matches(a.last, np.full(2, 6.0))
    # The first trace read total as the constant 0.0; the next call sees an array there and traces again.
    assert Accumulator.add.cache_info().traces == traces + 2


class Remembering:
    def __init__(self):
        self.seen = np.zeros(2)

    @xlac.compile
    def look(self, x):
        x += 1.0
        self.seen = x                  # NumPy: self.seen *is* x afterwards
        return x.sum()


def test_a_place_assigned_an_argument_holds_that_very_object_as_in_numpy(no_tracers_left):
    r = Remembering()
    no_tracers_left.append(r)
    x = np.zeros(2)
    r.look(x)
    assert r.seen is x
    assert_matches(x, np.ones(2))


def test_a_write_then_a_rebinding_updates_the_old_object_and_rebinds_the_place():
    class Cache:
        def __init__(self, k):
            self.k = k

        def step(self, v):
            self.k[0] = v
            self.k = self.k * 2
            return self.k

    old = xlac.asarray(np.ones(3))
    model, reference = Cache(old), Cache(np.ones(3))
    reference_old = reference.k
    step = xlac.compile(Cache.step, static_argnums=0)
    assert_matches(step(model, 5.0), reference.step(5.0))
    assert_matches(old, reference_old)           # [5, 1, 1]: written in place before the rebinding
    assert_matches(model.k, reference.k)
    assert model.k is not old


def test_a_compiled_method_called_inside_another_compiled_function_is_written_back():
    c = Concatenating()

    @xlac.compile
    def outer(x):
        return c.step(x) * 2

    assert_matches(outer(np.ones(4, np.float32)), np.full(4, 4.0, np.float32))
    assert_matches(outer(np.ones(4, np.float32)), np.full(4, 6.0, np.float32))
    assert type(c.k) is np.ndarray and c.k.shape == (3, 4)
    assert tracers_in(c) == []


def test_the_ahead_of_time_executable_writes_back_too():
    global COUNTER
    COUNTER = np.zeros(3)

    def count(x):
        global COUNTER
        COUNTER = COUNTER + x
        return x

    compiled = xlac.compile(count).lower(np.ones(3)).compile()
    compiled(np.ones(3))
    compiled(np.ones(3))
    assert_matches(COUNTER, np.full(3, 2.0))


def test_rebinding_in_eager_code_is_plain_python():
    class State:
        k = None
    state = State()
    state.k = xlac.asarray(np.ones(2))
    state.k = xnp.exp(state.k) + 1
    assert type(state.k) is xlac.Array
    assert_matches(state.k, np.exp(np.ones(2)) + 1)


# ---------------------------------------------------------------- refused: an error, and everything restored


class Logging:
    def __init__(self):
        self.history = [np.zeros(2)]
        self.k = np.ones(2)

    @xlac.compile
    def append_step(self, x):
        self.k = self.k + x
        self.history.append(self.k)
        return self.k

    @xlac.compile
    def pair_step(self, x):
        self.k = (x, x + 1)
        return x


def test_a_traced_value_appended_to_a_list_is_refused_naming_the_place_and_the_line(no_tracers_left):
    log = Logging()
    no_tracers_left.append(log)
    history, k = list(log.history), log.k
    with pytest.raises(xlac.RebindingError) as error:
        log.append_step(np.ones(2))
    message = str(error.value)
    assert "self.history[1]" in message and "f64[2]" in message
    assert f"test_rebinding.py:{line_of(Logging.append_step.__wrapped__, 'self.k = self.k + x')}" in message
    assert log.history == history and log.k is k          # restored: the list and the attribute


def test_a_container_of_traced_values_is_refused(no_tracers_left):
    log = Logging()
    no_tracers_left.append(log)
    k = log.k
    with pytest.raises(xlac.RebindingError, match=r"self\.k\[0\]"):
        log.pair_step(np.ones(2))
    assert log.k is k


class Failing:
    def __init__(self):
        self.k = np.ones(2)
        self.state = {"m": np.zeros(2)}

    @xlac.compile
    def step(self, x):
        global COUNTER
        self.k = self.k + x
        self.state["m"] = self.state["m"] - x
        self.state["new"] = x
        COUNTER = x * 2
        return xnp.reshape(x, (3,))              # raises: 2 elements into 3


def test_a_trace_that_raises_midway_leaves_everything_as_it_found_it(no_tracers_left):
    f = Failing()
    no_tracers_left.append(f)
    k, m, counter = f.k, f.state["m"], COUNTER
    with pytest.raises(ValueError, match="reshape"):
        f.step(np.ones(2))
    assert f.k is k and f.state == {"m": m} and COUNTER is counter


def test_grad_and_vmap_of_a_function_that_rebinds_state_refuse_and_restore(no_tracers_left):
    m = Momentum(np.zeros(3))
    no_tracers_left.append(m)
    before = m.m
    with pytest.raises(xlac.RebindingError, match=r"m\.m.*transform"):
        xlac.grad(lambda g: xnp.sum(m.update(g, 0.9)))(np.ones(3))
    assert m.m is before
    with pytest.raises(xlac.RebindingError, match=r"self\.m"):
        xlac.vmap(m.update, in_axes=(0, None))(np.ones((2, 3)), 0.9)
    assert m.m is before

    @xlac.compile
    def train(g):
        return xlac.grad(lambda g: xnp.sum(m.update(g, 0.9)))(g)
    with pytest.raises(xlac.RebindingError):
        train(np.ones(3))
    assert m.m is before


def test_a_compiled_method_under_vmap_refuses(no_tracers_left):
    c = Concatenating()
    no_tracers_left.append(c)
    k = c.k
    with pytest.raises(xlac.RebindingError, match=r"self\.k"):
        xlac.vmap(c.step)(np.ones((2, 4), np.float32))
    assert c.k is k


def test_an_attribute_shadowing_a_class_default_is_written_back_once_it_exists():
    class Layer:
        cached = None                 # a class default: the instance has no attribute of its own yet

        @xlac.compile
        def forward(self, x):
            self.cached = x * 3
            return x

    layer = Layer()
    for i in range(3):
        layer.forward(np.full(2, float(i)))
    assert "cached" in vars(layer) and Layer.cached is None
    assert_matches(layer.cached, np.full(2, 6.0))
    assert tracers_in(layer) == [] and Layer.forward.cache_info().traces == 2


def test_compiling_a_bound_method_directly_writes_back_to_its_object():
    model = Momentum(np.zeros(2))
    update = xlac.compile(model.update)
    for _ in range(3):
        update(np.ones(2), 0.5)
    assert_matches(model.m, np.full(2, 1.75))
    assert type(model.m) is np.ndarray and update.cache_info().traces == 1
    assert tracers_in(model) == []


def test_a_callable_object_or_a_partial_under_a_transform_is_watched_through_its_object():
    class Model:
        def __init__(self):
            self.state = np.zeros(3)

        def __call__(self, x, scale=1.0):
            self.state = self.state + x * scale
            return xnp.sum(self.state)

    model = Model()
    state = model.state
    with pytest.raises(xlac.RebindingError, match=r"self\.state"):
        xlac.grad(model)(np.ones(3))
    with pytest.raises(xlac.RebindingError, match=r"self\.state"):
        xlac.vmap(functools.partial(Model.__call__, model, scale=2.0))(np.ones((2, 3)))
    assert model.state is state and tracers_in(model) == []


def test_a_python_number_made_from_a_traced_value_is_written_back(no_tracers_left):
    class Counter:
        def __init__(self):
            self.k = np.ones(2)
            self.n = 0

        @xlac.compile
        def step(self, x):
            self.k = self.k + x
            self.n = int(xnp.sum(x))
            return x

    counter = Counter()
    no_tracers_left.append(counter)
    counter.step(np.ones(2))
    counter.step(np.full(2, 3.0))                    # int() of a traced value: a weak int64 (tests/numpy/test_python_scalars.py)
    np.testing.assert_array_equal(counter.k, [5.0, 5.0])
    assert int(counter.n) == 6 and np.asarray(counter.n).dtype == np.int64


def test_an_existing_list_item_and_a_new_dict_key_are_written_back(no_tracers_left):
    class Stack:
        def __init__(self):
            self.layers = [np.ones(2), np.ones(2)]
            self.outputs = {}

        @xlac.compile
        def step(self, x):
            self.layers[1] = self.layers[1] * x
            self.outputs["last"] = self.layers[1] + 1
            return x

    stack = Stack()
    no_tracers_left.append(stack)
    for _ in range(3):
        stack.step(np.full(2, 2.0))
    assert len(stack.layers) == 2 and type(stack.layers[1]) is np.ndarray
    assert_matches(stack.layers[1], np.full(2, 8.0))
    assert_matches(stack.outputs["last"], np.full(2, 9.0))
    assert type(stack.outputs["last"]) is xlac.Array
