"""The source converter (xlac/convert/): NumPy programs as written, against NumPy running them."""
import functools
import inspect
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
from xlac.convert import converted, why_not_converted


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def check_both_ways(fn, *argument_sets):
    compiled = xlac.compile(fn)
    for args in argument_sets:
        expected = fn(*args)
        got = compiled(*args)
        for e, g in zip(np.atleast_1d(expected) if not isinstance(expected, tuple) else expected,
                        np.atleast_1d(got) if not isinstance(got, tuple) else got):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12)
            assert np.asarray(g).dtype == np.asarray(e).dtype
    return compiled


# ---------------------------------------------------------------- if statements


def clip_norm(x, limit):
    n = np.sqrt((x * x).sum())
    if n > limit:
        x = x * (limit / n)
    return x


def piecewise(x):
    s = x.sum()
    if s > 1.0:
        y = x * 2
        k = 1
    elif s < -1.0:
        y = -x
        k = 2
    else:
        y = x + 1
        k = 3
    return y * k


def early_return(x):
    if x[0] > 0:
        return x * 10
    x = x - 1
    if x[1] > 0:
        return x
    return -x


def test_if_elif_else_on_traced_values_match_numpy_with_one_trace():
    f = check_both_ways(piecewise, (np.array([1.0, 2.0]),), (np.array([-3.0, 0.5]),), (np.array([0.2, 0.1]),))
    assert f.cache_info().traces == 1
    g = check_both_ways(clip_norm, (np.array([3.0, 4.0]), 1.0), (np.array([0.3, 0.4]), 1.0))
    assert g.cache_info().traces == 1


def test_returns_from_branches_and_early_returns():
    check_both_ways(early_return, (np.array([1.0, 2.0]),), (np.array([-1.0, 2.0]),), (np.array([-1.0, 0.5]),))


def test_short_elementwise_branches_select_and_others_are_one_case_node():
    text = str(xlac.compile(piecewise).trace(np.zeros(2)).ir())
    assert "= case[" not in text and "select" in text          # both computed, then selected

    def heavy(x, w):
        if x.sum() > 0:
            y = x @ w
        else:
            y = x * 2
        return y
    text = str(xlac.compile(heavy).trace(np.ones(3), np.ones((3, 3))).ir())
    assert text.count("= case[") == 1
    check_both_ways(heavy, (np.ones(3), np.eye(3) * 2), (-np.ones(3), np.eye(3)))


def test_concrete_tests_stay_python_ifs_and_trace_one_branch():
    def f(x):
        if x.ndim == 2:               # known while tracing: only this branch is traced
            return x.T @ x
        return x * x
    check_both_ways(f, (np.ones((2, 3)),), (np.arange(3.0),))
    assert "case" not in str(xlac.compile(f).trace(np.ones((2, 3))).ir())


def test_a_python_number_in_one_branch_takes_the_arrays_dtype():
    def f(x):
        if x.sum() > 0:
            y = x
        else:
            y = 0.0
        return y
    f32 = np.array([1.0, 2.0], np.float32)
    got = xlac.compile(f)(np.array(1.5, np.float32))
    assert got.dtype == np.float32 and float(got) == 1.5
    assert xlac.compile(f)(-f32[0]).dtype == np.float32


def test_the_same_python_value_in_both_branches_stays_static():
    def f(x):
        if x.sum() > 0:
            y, n, tag = x * 2, 3, "a"
        else:
            y, n, tag = x, 3, "a"
        assert isinstance(n, int) and tag == "a"
        return y * n
    check_both_ways(f, (np.array([1.0]),), (np.array([-1.0]),))


def test_writes_into_arrays_inside_branches():
    def f(x, out):
        for i in range(x.shape[0]):
            if x[i] > 0:
                out[i] = x[i]
            else:
                out[i] = -2 * x[i]
        return out.sum()
    x = np.array([1.0, -2.0, 3.0])
    expected_out = np.zeros(3)
    expected = f(x, expected_out)
    out = xlac.asarray(np.zeros(3))
    assert float(xlac.compile(f)(x, out)) == expected
    np.testing.assert_array_equal(np.asarray(out), expected_out)


# ---------------------------------------------------------------- expressions and builtins


def test_ternaries_boolean_operators_and_chained_comparisons():
    def f(x, y):
        a = x if x > y else y
        b = (x > 0 and y > 0) or not (x < -5)
        c = 0 < x < 3
        d = x and y
        e = x or 2.5
        return a, b, c, d, e
    check_both_ways(f, (1.0, 2.0), (2.0, -1.0), (-7.0, 1.0), (4.0, 4.0), (0.0, 3.0))


def test_an_and_whose_type_would_depend_on_the_value_is_refused():
    def f(x):
        return x > 0 and 2.0
    with pytest.raises(TypeError, match=r"`and` of a traced bool value and a float64 one") as info:
        xlac.compile(f)(1.0)
    assert f"test_convert.py:{line_of(f, 'return x > 0 and')}" in str(info.value)


def test_builtins_on_traced_scalars():
    def f(a, b):
        return (max(a, b), min(a, b), max([a, b, 0.5]), abs(a - b), sum([a, b, 1.0]), round(a * 3.7),
                divmod(a * 10, 3.0), pow(a, 2))
    check_both_ways(f, (1.25, -2.5), (-1.0, 3.0), (2.0, 2.0))


def test_max_of_a_traced_vector_is_its_largest_element():
    v = np.array([3.0, -1.0, 7.0])
    assert float(xlac.compile(lambda x: max(x))(v)) == 7.0


# ---------------------------------------------------------------- NumPy allocation


def columns(a):
    n, m = a.shape
    out = np.zeros((n, m))
    for i in range(m):
        out[:, i] = a[:, i] * i
    return out


def gram_schmidt(A):
    m, n = A.shape
    Q = np.zeros((m, n))
    R = np.zeros((n, n))
    for k in range(n):
        v = A[:, k].copy()
        for j in range(k):
            R[j, k] = Q[:, j] @ A[:, k]
            v -= R[j, k] * Q[:, j]
        nrm = v @ v
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = v / R[k, k]
    return Q, R


def test_numpy_allocations_filled_with_traced_values():
    check_both_ways(columns, (np.arange(12.0).reshape(3, 4),))
    a = np.random.default_rng(0).normal(size=(5, 3))
    Q, R = xlac.compile(gram_schmidt)(a)
    Q0, R0 = gram_schmidt(a)
    np.testing.assert_allclose(np.asarray(Q), Q0, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(R), R0, rtol=1e-10, atol=1e-12)
    assert np.asarray(R).dtype == R0.dtype == np.float64


def test_arrays_built_from_traced_scalars():
    def f(x):
        a, b = x[0], x[1] * 2
        return np.array([a, b]), np.asarray([[a, b], [b, a]], dtype=np.float32), np.full(3, a)
    check_both_ways(f, (np.array([1.5, 2.0]),))


def test_allocations_only_read_stay_numpy_constants():
    def f(x):
        idx = np.arange(3)
        n = int(idx.sum())          # a NumPy value: concrete while tracing
        return x * n
    check_both_ways(f, (np.arange(3.0),))


# ---------------------------------------------------------------- recursion into the user's code


def sign_of(v):
    if v > 0:
        return 1.0
    return -1.0


class Gate:
    def __init__(self, threshold):
        self.threshold = threshold

    def __call__(self, x):
        return self.open(x) * x

    def open(self, x):
        if x.sum() > self.threshold:
            return 1.0
        return 0.0


def test_helpers_and_methods_are_converted_recursively():
    def f(x):
        return sign_of(x[0]) * x + Gate(0.5)(x)
    check_both_ways(f, (np.array([1.0, 2.0]),), (np.array([-1.0, 0.2]),))
    gate = Gate(0.0)
    check_both_ways(gate, (np.array([1.0, 2.0]),), (np.array([-1.0, 0.2]),))
    check_both_ways(gate.open, (np.array([1.0, 2.0]),), (np.array([-1.0, 0.2]),))


def test_closures_and_defaults_keep_their_cells():
    scale = [2.0]

    def make(offset):
        def f(x, k=3.0):
            y = x * scale[0] if x.sum() > offset else x
            return y + k
        return f
    f = make(0.0)
    check_both_ways(f, (np.array([1.0]),), (np.array([-1.0]),))
    scale[0] = 5.0
    np.testing.assert_array_equal(np.asarray(xlac.compile(make(0.0))(np.array([1.0]))), [8.0])
    assert converted(f).__defaults__ == (3.0,)


def test_library_functions_and_sourceless_code_run_as_written():
    assert converted(np.linalg.norm) is np.linalg.norm
    assert why_not_converted(len) is not None
    namespace = {}
    exec("def f(x):\n    return x + 1 if x > 0 else x\n", namespace)
    assert why_not_converted(namespace["f"]) == "its source is not available"
    assert why_not_converted(clip_norm) is None


# ---------------------------------------------------------------- transforms


def test_grad_and_vmap_through_a_converted_if_match_jax(x64):
    def f(x):
        if x.sum() > 0:
            y = np.sin(x) * x
        else:
            y = x ** 3
        return y.sum()

    def f_jax(x):
        return jax.lax.cond(x.sum() > 0, lambda v: (jnp.sin(v) * v).sum(), lambda v: (v ** 3).sum(), x)
    for x in (np.array([0.5, 1.5]), np.array([-0.5, -1.5])):
        np.testing.assert_allclose(np.asarray(xlac.grad(f)(x)), np.asarray(jax.grad(f_jax)(x)), rtol=1e-12)
    xs = np.array([[0.5, 1.5], [-0.5, -1.5], [2.0, -3.0]])
    np.testing.assert_allclose(np.asarray(xlac.vmap(f)(xs)), np.asarray(jax.vmap(f_jax)(xs)), rtol=1e-12)


# ---------------------------------------------------------------- errors


def test_a_variable_bound_in_one_branch_only_and_read_after_is_refused():
    def f(x):
        if x.sum() > 0:
            y = x
        return y
    with pytest.raises(TypeError, match=r"variable 'y' is bound only in the if branch") as info:
        xlac.compile(f)(np.ones(2))
    assert f"test_convert.py:{line_of(f, 'if x.sum() > 0')}" in str(info.value)


def test_a_variable_bound_in_one_branch_and_not_read_after_is_dropped():
    def f(x):
        if x.sum() > 0:
            scratch = x * 2
            x = scratch + 1
        return x
    check_both_ways(f, (np.ones(2),), (-np.ones(2),))


def test_branches_disagreeing_on_a_variables_type_are_refused_at_the_if():
    def f(x):
        if x.sum() > 0:
            y = x
        else:
            y = x[:1]
        return y
    with pytest.raises(TypeError, match=r"variable 'y' is f64\[2\] in the if branch and f64\[1\] in the else") as info:
        xlac.compile(f)(np.ones(2))
    assert f"test_convert.py:{line_of(f, 'if x.sum() > 0')}" in str(info.value)

    def g(x):
        if x.sum() > 0:
            mode = "up"
        else:
            mode = "down"
        return x, mode
    with pytest.raises(TypeError, match="variable 'mode' is 'up' in the if branch and 'down' in the else branch"):
        xlac.compile(g)(np.ones(2))


def test_an_if_that_cannot_be_a_conditional_says_why_at_its_line():
    def f(x):
        total = 0.0
        for i in range(3):
            try:
                if x[i] > 0:
                    break          # inside try: the loop stays a Python loop
            finally:
                total = total + x[i]
        return total
    with pytest.raises(xlac.TracerConversionError, match="break or continue") as info:
        xlac.compile(f)(np.ones(3))
    assert f"test_convert.py:{line_of(f, 'if x[i] > 0')}" in str(info.value)


def test_errors_inside_converted_code_point_at_the_users_lines():
    def f(x):
        y = x if x.sum() > 0 else x
        return y @ np.ones(5)
    with pytest.raises(Exception) as info:
        xlac.compile(f)(np.ones(3))
    assert f"test_convert.py:{line_of(f, 'return y @')}" in str(info.value)


def test_convert_false_traces_as_written():
    def f(a):
        if a[0] > 0:
            return a
        return -a
    with pytest.raises(xlac.TracerConversionError):
        xlac.compile(f, convert=False)(np.arange(3.0))
    check_both_ways(f, (np.arange(3.0),), (-np.arange(1.0, 4.0),))


def test_side_effects_in_branches_happen_once_per_trace_for_both_branches(capsys):
    seen = []

    def f(x):
        if x.sum() > 0:
            seen.append("if")
            print("in the if branch")
            y = x
        else:
            seen.append("else")
            y = -x
        return y
    g = xlac.compile(f)
    g(np.ones(2))
    g(-np.ones(2))
    assert sorted(seen) == ["else", "if"]
    assert capsys.readouterr().out == "in the if branch\n"


def test_converting_in_two_threads_at_once_gives_one_conversion_and_right_results():
    def f(x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x * 3
        return y
    results, errors = {}, []

    def run(k):
        try:
            results[k] = np.asarray(xlac.compile(f)(np.array([float(k) - 3.5])))
        except Exception as exc:      # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert {k: float(v[0]) for k, v in results.items()} == {k: float(f(np.array([k - 3.5]))[0]) for k in range(8)}
    assert f.__code__ is f.__code__ and converted(f).__wrapped__ is f


# ---------------------------------------------------------------- generated programs

VARIABLES = ("a", "b", "s")
TESTS = ("s > 0", "a.sum() > b.sum()", "a[0] < 0.5 and s > -1", "not (b[1] > 0)", "0 < s < 2", "a[1] > b[0] or s < 0")
ASSIGNMENTS = ("a = a * 2 - 1", "b = a + b", "s = s + 1.5", "s = s * -1", "a = np.sin(b)", "b = b[::-1].copy()",
               "s = a.sum() - s", "b[0] = s", "a = np.where(a > 0, a, b)", "s = max(s, a[1])",
               "s = s if s > 1 else -s")


@st.composite
def programs(draw, depth=2):
    def block(level, indent):
        lines = []
        for _ in range(draw(st.integers(1, 3))):
            if level > 0 and draw(st.booleans()):
                lines.append(f"{indent}if {draw(st.sampled_from(TESTS))}:")
                lines += block(level - 1, indent + "    ")
                if draw(st.booleans()):
                    lines.append(f"{indent}elif {draw(st.sampled_from(TESTS))}:")
                    lines += block(level - 1, indent + "    ")
                if draw(st.booleans()):
                    lines.append(f"{indent}else:")
                    lines += block(level - 1, indent + "    ")
            else:
                lines.append(indent + draw(st.sampled_from(ASSIGNMENTS)))
        return lines
    return "\n".join(["def program(a, b, s):", "    a = a.copy()", "    b = b.copy()"] + block(depth, "    ")
                     + ["    return a, b, s"])


@settings(max_examples=20, deadline=None)
@given(source=programs(), values=st.lists(st.floats(-3, 3, allow_subnormal=False), min_size=5, max_size=5))
def test_generated_programs_with_branches_match_numpy(tmp_path_factory, source, values):
    path = tmp_path_factory.mktemp("programs") / "program.py"
    path.write_text(source + "\n")
    namespace = {"np": np}
    exec(compile(source + "\n", str(path), "exec"), namespace)
    program = namespace["program"]
    a, b, s = np.array(values[:2]), np.array(values[2:4]), values[4]
    expected = program(a, b, s)
    got = xlac.compile(program)(a, b, s)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- NumPy state outside the function

WEIGHT = np.array([1.0, 2.0, 3.0])
COUNTS = np.zeros(4, np.int64)


def test_every_read_of_an_outside_numpy_array_is_per_call():
    def f(x):
        return WEIGHT.sum() + np.exp(WEIGHT) * 0 + WEIGHT * 2 + x
    g = xlac.compile(f)
    np.testing.assert_allclose(np.asarray(g(np.zeros(3))), f(np.zeros(3)))
    WEIGHT[0] = 10.0                            # a NumPy write between calls is seen
    np.testing.assert_allclose(np.asarray(g(np.zeros(3))), f(np.zeros(3)))
    assert g.cache_info().traces == 1
    WEIGHT[0] = 1.0


def test_outside_numpy_arrays_indexed_and_written_with_traced_values_are_written_back():
    class Buffer:
        def __init__(self):
            self.rows = np.zeros((4, 2))

        def put(self, i, row):
            self.rows[i] = row
            self.rows[i, 0] += 1.0
            COUNTS[i] += 1
            return self.rows[i].sum()

    expected, got = Buffer(), Buffer()
    put = xlac.compile(got.put)
    COUNTS[:] = 0
    for i, row in [(1, np.array([1.0, 2.0])), (3, np.array([5.0, -1.0])), (1, np.array([0.5, 0.5]))]:
        assert float(put(i, row)) == expected.put(i, row)
    np.testing.assert_array_equal(got.rows, expected.rows)
    assert type(got.rows) is np.ndarray
    np.testing.assert_array_equal(COUNTS, [0, 4, 0, 2])        # both buffers' calls counted
    assert put.cache_info().traces == 1


def test_a_llama_decoder_written_with_numpy_compiles_unmodified_and_matches_numpy_token_for_token():
    import copy
    from tests.numpy_llama import Llama, greedy_decode
    prompt = np.array([[1, 5, 7, 2], [3, 3, 9, 0]])
    reference = Llama(seed=0)
    compiled_model, device_model = copy.deepcopy(reference), xlac.to_device(copy.deepcopy(reference))
    expected = greedy_decode(reference, prompt, n_new=4)
    for model in (compiled_model, device_model):
        step = xlac.compile(model, static_argnums=1)           # the start position is static
        np.testing.assert_array_equal(greedy_decode(step, prompt, n_new=4), expected)
        for mine, theirs in zip(model.layers, reference.layers):
            for cache in ("cache_k", "cache_v"):
                np.testing.assert_allclose(np.asarray(getattr(mine.attention, cache)),
                                           getattr(theirs.attention, cache), rtol=1e-9, atol=1e-12)
    assert type(compiled_model.layers[0].attention.cache_k) is np.ndarray
    assert type(device_model.layers[0].attention.cache_k) is xlac.Array
    # A later NumPy write to a weight is seen by the compiled model.
    step = xlac.compile(compiled_model, static_argnums=1)
    before = np.asarray(step(prompt, 0))
    compiled_model.output *= 2.0
    np.testing.assert_allclose(np.asarray(step(prompt, 0)), 2.0 * before, rtol=1e-12)


def test_to_device_keeps_shared_arrays_shared_and_refuses_views():
    class Model:
        pass
    m = Model()
    m.a = np.ones(3)
    m.items = [m.a, {"b": np.zeros(2)}]
    xlac.to_device(m)
    assert m.items[0] is m.a and isinstance(m.a, xlac.Array) and isinstance(m.items[1]["b"], xlac.Array)
    v = Model()
    v.base = np.ones(4)
    v.half = v.base[:2]
    with pytest.raises(ValueError, match=r"obj.half is a view of obj.base"):
        xlac.to_device(v)
    assert type(v.base) is np.ndarray                      # nothing moved


# ---------------------------------------------------------------- NumPy random numbers


def test_numpy_random_functions_draw_fresh_numbers_at_every_call():
    def dropout(x):
        keep = np.random.rand(*x.shape) > 0.5
        return np.where(keep, x * 2.0, 0.0), np.random.normal(1.0, 2.0, size=x.shape), np.random.randn(2)
    f = xlac.compile(dropout)
    (m1, n1, r1), (m2, n2, _) = f(np.ones(1000)), f(np.ones(1000))
    assert np.asarray(n1).dtype == np.float64 and np.asarray(r1).shape == (2,)
    assert not np.array_equal(np.asarray(m1), np.asarray(m2)) and not np.array_equal(np.asarray(n1), np.asarray(n2))
    assert set(np.unique(np.asarray(m1))) <= {0.0, 2.0}
    # loose bounds, many standard errors wide: the mean of 1000 draws of N(1, 2^2) has standard error 0.063
    assert abs(float(np.asarray(n1).mean()) - 1.0) < 0.5
    assert f.cache_info().traces == 1


def test_generator_methods_draw_fresh_numbers_at_every_call():
    rng = np.random.default_rng(0)

    def sample(x):
        return x + rng.normal(size=x.shape), rng.integers(0, 10, size=50), rng.random(3)
    f = xlac.compile(sample)
    (a1, i1, u1), (a2, _, _) = f(np.zeros(4)), f(np.zeros(4))
    assert not np.array_equal(np.asarray(a1), np.asarray(a2))
    ints = np.asarray(i1)
    assert ints.dtype == np.int64 and ints.min() >= 0 and ints.max() < 10
    assert ((np.asarray(u1) >= 0) & (np.asarray(u1) < 1)).all()


def test_a_numpy_random_function_without_a_counterpart_is_refused_not_frozen():
    def f(x):
        return x + np.random.binomial(10, 0.5, size=x.shape)
    with pytest.raises(xlac.UnsupportedError, match=r"np.random.binomial inside a compiled function") as info:
        xlac.compile(f)(np.zeros(3))
    assert f"test_convert.py:{line_of(f, 'np.random.binomial')}" in str(info.value)


LENGTHS = np.array([2, 3])


def test_an_integer_array_numpy_reads_while_tracing_traces_again_when_it_changes():
    def f(x):
        n = int(LENGTHS.sum())              # NumPy's own code on an outside integer array: a static length
        return x[:n] * 2
    g = xlac.compile(f)
    np.testing.assert_array_equal(np.asarray(g(np.arange(8.0))), f(np.arange(8.0)))
    np.testing.assert_array_equal(np.asarray(g(np.arange(8.0))), f(np.arange(8.0)))
    assert g.cache_info().traces == 1
    LENGTHS[0] = 4                          # the program held 5: it traces again, as a static argument would
    np.testing.assert_array_equal(np.asarray(g(np.arange(8.0))), f(np.arange(8.0)))
    assert g.cache_info().traces == 2
    LENGTHS[0] = 2


# ---------------------------------------------------------------- Python's features, converted


class Base:
    def scaled(self, x):
        return x * 2


class Derived(Base):
    def scaled(self, x):
        y = super().scaled(x)              # zero-argument super() keeps its class cell
        if y.sum() > 0:
            y = y + 1
        return y

    @staticmethod
    def flip(x, *, k=2.0):
        return x * k if x.sum() > 0 else -x

    @classmethod
    def flip3(cls, x):
        return cls.flip(x, k=3.0)


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@logged
def accumulate(x, *rest, scale=1.0, **extra):
    total = x
    for r in rest:
        total = total + r
    if (s := total.sum()) > 0:
        total = total * scale + s * 0
    return total + extra.get("bias", 0.0)


def doubling(n, x):
    return x if n == 0 else doubling(n - 1, x) * 2


def counted(x):
    count = 0

    def bump():
        nonlocal count
        count += 1
    bump()
    bump()
    try:
        if x.sum() > 0:
            z = x / 1
        else:
            z = x
    except ZeroDivisionError:
        z = x
    return z * count, doubling(3, x), [v * 2 if v is not None else 0 for v in [x, None]][0]


def test_methods_decorators_recursion_closures_and_comprehensions_convert():
    d = Derived()
    for fn in (d.scaled, Derived.flip, Derived.flip3, counted,
               lambda x: accumulate(x, x, scale=3.0, bias=1.0)):
        check_both_ways(fn, (np.array([1.0, 2.0]),), (np.array([-1.0, -2.0]),))


TRACE_LOG = []


def _logging_helper(x):
    TRACE_LOG.append(x)
    return x


def test_a_helper_that_leaves_a_traced_value_in_a_global_list_is_refused_and_the_list_restored():
    def f(x):
        return _logging_helper(x) * 2
    with pytest.raises(xlac.RebindingError, match=r"traced array f64\[\] in TRACE_LOG\[0\]"):
        xlac.compile(f)(1.0)
    assert TRACE_LOG == []
