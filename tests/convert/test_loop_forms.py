"""The forms converted loops take (xlac/convert/exits.py, xlac/convert/loops.py): break, continue and
return under traced tests, for over arrays' rows, enumerate and zip, the roll policy and its report,
gradients and vmap through converted loops. The oracle: the same Python on NumPy arrays, and JAX."""
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
from tests.numpy_kernels import greedy_decode
from xlac.inspection import explain, summarize


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def first_negative(x):
    k = -1
    for i in range(x.shape[0]):
        if x[i] < 0:
            k = i
            break
    return k


def sum_skipping_negatives(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        s += v
    return s


def index_of(x, t):
    for i, v in enumerate(x):
        if v == t:
            return i
    return -1


def first_above(m, t):
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i, j] > t:
                return i, j
    return -1, -1


def products_until(a, b, cap):
    acc = 0.0
    for u, v in zip(a, b):
        if acc > cap:
            break
        acc += u * v
    else:
        acc = -acc
    return acc


def halvings_below(x, limit):
    n = 0
    while n < 60:
        x = x / 2
        n += 1
        if x < limit:
            break
    else:
        n = -1
    return n, x


def row_norms(a, out):
    for i, row in enumerate(a):
        out[i] = np.sqrt((row * row).sum())
    return out


values = st.lists(st.sampled_from([-2.0, -1.0, 0.0, 1.0, 2.0, 3.5]), min_size=1, max_size=90)


@settings(max_examples=6, deadline=None)
@given(values, st.sampled_from([-1.0, 0.0, 2.0, 7.0]))
def test_break_continue_and_return_on_traced_tests_give_pythons_answer(xs, t):
    x = np.array(xs)
    assert int(xlac.compile(first_negative)(x)) == first_negative(x)
    assert float(xlac.compile(sum_skipping_negatives)(x)) == sum_skipping_negatives(x)
    assert int(xlac.compile(index_of)(x, t)) == index_of(x, t)
    assert float(xlac.compile(products_until)(x, x[::-1].copy(), t)) == products_until(x, x[::-1], t)
    m = x[:len(x) // 3 * 3].reshape(3, -1) if len(x) >= 3 else x.reshape(1, -1)
    assert tuple(int(v) for v in xlac.compile(first_above)(m, t)) == first_above(m, t)


@settings(max_examples=10, deadline=None)
@given(st.floats(1e-3, 1e9), st.floats(1e-3, 10.0))
def test_a_while_with_break_and_else_gives_pythons_value_and_count(x, limit):
    n, y = xlac.compile(halvings_below)(x, limit)
    assert (int(n), float(y)) == halvings_below(x, limit)


def test_loops_with_exits_roll_and_say_so():
    x = np.linspace(-1.0, 1.0, 100)[::-1].copy()
    traced = xlac.compile(first_negative).trace(x)
    assert "while" in str(traced.ir()) and "case" not in str(traced.ir()).split("while")[0]
    decision, = traced.loop_decisions
    assert (decision.kind, decision.trips, decision.decision) == ("for", 100, "rolled")
    assert decision.location.endswith(f"test_loop_forms.py:{line_of(first_negative, 'for i in')}")


@pytest.mark.usefixtures("xla_defaults")
def test_rows_of_an_array_roll_and_write_the_argument_in_place():
    a = np.arange(600.0).reshape(200, 3)
    out = np.zeros(200)
    f = xlac.compile(row_norms)
    result = f(a, out)
    np.testing.assert_allclose(np.asarray(result), np.sqrt((a * a).sum(1)), rtol=1e-15)
    np.testing.assert_allclose(out, np.sqrt((a * a).sum(1)), rtol=1e-15)         # written, as NumPy does
    traced = f.trace(a, np.zeros(200))
    assert [d.decision for d in traced.loop_decisions] == ["rolled"]
    assert str(traced.ir()).count("while") == 1
    assert any(w.in_place for w in traced.inplace_report())


def test_zip_and_enumerate_of_traced_arrays_give_numpys_values():
    def f(x, w):
        total = 0.0
        for i, (row, weight) in enumerate(zip(x, w), 1):
            total += i * weight * row.sum()
        return total
    x, w = np.arange(300.0).reshape(100, 3), np.linspace(0.0, 1.0, 120)
    assert float(xlac.compile(f)(x, w)) == pytest.approx(f(x, w), rel=1e-13)


def test_a_greedy_decode_loop_that_breaks_at_the_end_token_gives_numpys_tokens():
    rng = np.random.default_rng(0)
    embed, w_out, h = rng.normal(size=(64, 16)) * 0.5, rng.normal(size=(16, 64)), np.zeros(16)
    f = xlac.compile(greedy_decode, static_argnums=(3, 4))
    never = greedy_decode(embed, w_out, h, 100, -1)
    for eos in (-1, int(never[0]), int(never[40]), int(never[99])):
        expected = greedy_decode(embed, w_out, h, 100, eos)
        np.testing.assert_array_equal(np.asarray(f(embed, w_out, h, 100, eos)), expected)
    assert [d.decision for d in f.trace(embed, w_out, h, 100, int(never[40])).loop_decisions] == ["rolled"]


def test_iterating_a_python_list_or_a_numpy_index_table_stays_a_python_loop():
    table = np.array([3, 0, 2])

    def f(x):
        parts = []
        for k in table:                          # integer NumPy state: read while tracing
            parts.append(x[k])
        for scale in [1.0, 2.0]:
            parts.append(x.sum() * scale)
        return parts
    np.testing.assert_array_equal(np.array([float(v) for v in xlac.compile(f)(np.arange(4.0))]), f(np.arange(4.0)))


def test_iterating_a_traced_scalar_raises_numpys_error():
    def f(x):
        total = 0.0
        for v in x:
            total += v
        return total
    with pytest.raises(TypeError, match="iteration over a 0-d array") as info:
        xlac.compile(f)(np.float64(2.0))
    assert f"test_loop_forms.py:{line_of(f, 'for v in x')}" in str(info.value)


def test_a_return_inside_a_loop_with_a_traced_trip_count_is_refused_clearly():
    def f(x, n):
        for i in range(n):
            if x[i] < 0:
                return x[i]
        return 0.0
    with pytest.raises(xlac.UnsupportedError, match="`return` inside a `for` loop whose trip count is traced") as info:
        xlac.compile(f)(np.array([1.0, -2.0]), 2)
    assert f"test_loop_forms.py:{line_of(f, 'for i in range(n)')}" in str(info.value)


# ---------------------------------------------------------------- when to roll, and the report


def running_sum(x, n):
    acc = 0.0
    for i in range(n):
        acc = acc + x[i]
    return acc


def test_auto_unrolls_short_cheap_loops_and_rolls_long_ones(monkeypatch):
    monkeypatch.setattr(xlac.config, "vectorize_loops", "never")     # an accumulator: else vectorized
    x = np.arange(1000.0)
    for n, decision in [(8, "unrolled"), (600, "rolled")]:
        f = xlac.compile(running_sum, static_argnums=1)
        traced = f.trace(x, n)
        d, = traced.loop_decisions
        assert d.decision == decision, d
        assert ("while" in str(traced.ir())) == (decision == "rolled")
        assert float(f(x, n)) == running_sum(x, n)
    short = xlac.compile(running_sum, static_argnums=1).trace(x, 8).loop_decisions[0]
    assert "8 iterations of" in short.reason and "few" in short.reason
    rolled = xlac.compile(running_sum, static_argnums=1, loops="roll").trace(x, 8)
    assert rolled.loop_decisions[0].decision == "rolled" and "while" in str(rolled.ir())


def test_explain_and_the_dump_summary_list_each_loop_with_its_line():
    x = np.linspace(-1.0, 1.0, 100)
    f = xlac.compile(products_until)
    traced = f.trace(x, x, 3.0)
    text = explain(traced.stages, traced.inplace_report(), traced.loop_decisions)
    line = line_of(products_until, "for u, v in zip")
    assert f"test_loop_forms.py:{line}: `for` (100 trips) rolled" in text.splitlines()[1]
    compiled = f.lower(x, x, 3.0).compile()
    summary = summarize("products_until", "x", "first call", compiled, {"trace": 0.0})
    assert summary["loops"] == [d.as_dict() for d in traced.loop_decisions]


# ---------------------------------------------------------------- transforms through converted loops


def tanh_sum(w, x):
    acc = 0.0
    for i in range(x.shape[0]):
        acc = acc + np.tanh(w * x[i]) * x[i]
    return acc


def test_grad_through_a_rolled_loop_matches_jax(x64, monkeypatch):
    monkeypatch.setattr(xlac.config, "vectorize_loops", "never")     # an accumulator: else vectorized
    x = np.linspace(-1.0, 1.0, 100)

    def tanh_sum_jax(w, x):
        return jax.lax.fori_loop(0, x.shape[0], lambda i, acc: acc + jnp.tanh(w * x[i]) * x[i], 0.0)
    expected = jax.grad(tanh_sum_jax)(0.3, jnp.asarray(x))
    assert xlac.compile(tanh_sum).trace(0.3, x).loop_decisions[0].decision == "rolled"
    assert float(xlac.grad(tanh_sum)(0.3, x)) == pytest.approx(float(expected), rel=1e-12)


def test_vmap_through_a_loop_that_continues_matches_each_row():
    rows = np.array([[1.0, -2.0, 3.0] * 30, [-1.0, 2.0, 0.5] * 30])
    got = np.asarray(xlac.vmap(sum_skipping_negatives)(rows))
    np.testing.assert_array_equal(got, [sum_skipping_negatives(r) for r in rows])


def test_reverse_mode_through_a_loop_that_breaks_on_a_traced_test_is_refused_clearly():
    def f(w, x):
        acc = 0.0
        for v in x:
            if acc > 10.0:
                break
            acc = acc + w * v
        return acc
    x = np.linspace(0.0, 1.0, 100)
    value, tangent = xlac.jvp(lambda w: f(w, x), (2.0,), (1.0,))
    assert (float(value), float(tangent)) == pytest.approx((f(2.0, x), f(2.0, x) / 2.0), rel=1e-12)
    with pytest.raises(xlac.UnsupportedError, match="loop that breaks or returns on one"):
        xlac.grad(f)(2.0, x)


def clipped_codes(x, codes):
    for i in range(x.shape[0]):
        if x[i] > 0:
            codes[i] = 1.5                 # cast into the integer array, as NumPy's store casts
        elif x[i] < -1:
            codes[i] = x[i] * 2
        else:
            codes[i] = 7
    return codes


def test_branches_storing_into_one_place_select_the_value_instead_of_a_conditional():
    x = np.linspace(-3.0, 3.0, 100)
    f = xlac.compile(clipped_codes)
    np.testing.assert_array_equal(np.asarray(f(x, np.zeros(100, np.int64))), clipped_codes(x, np.zeros(100, np.int64)))
    ir = str(f.trace(x, np.zeros(100, np.int64)).ir())
    assert "while" in ir and "case" not in ir
