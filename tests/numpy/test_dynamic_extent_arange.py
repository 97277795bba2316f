"""``np.arange`` with a traced bound whose range tracing knows (``np.arange(v.size)``, a rolled loop's index),
and ``reshape`` into the shape of a value of dynamic length: NumPy's values, its errors after the call."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xlac
from tests.numpy.test_dynamic_extent_rules import line_of


def numbered_selection(a):
    """The shape of the fuzz program (issue 31, helper_fills_temporary) xlac refused: a temporary filled
    from the length of a selection."""
    t = a[np.where(a)] * 2
    r = np.arange(t.size).reshape(t.shape)
    odd = np.arange(1, t.size + 1, 2)
    down = np.arange(t.size, 0, -3, dtype=np.float32)
    return t + r, r.sum(), odd.sum(), odd.size, down.sum(), down.dtype.itemsize


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float64, st.integers(0, 12), elements=st.sampled_from([0.0, -1.5, 2.0, 3.25])))
def test_arange_of_a_selections_length_matches_numpy(a):
    got, expected = xlac.compile(numbered_selection)(a), numbered_selection(a)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(g), e)
        assert np.asarray(g).dtype == np.asarray(e).dtype


def rows_weighted_by_distance(x):
    out = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        before = np.arange(i)
        out[i] = (x[before] * (i - before)).sum() + np.arange(i, x.shape[0], 2).sum()
    return out


def test_arange_of_a_loop_index_keeps_the_loop_rolled():
    x = np.random.default_rng(0).normal(size=40)
    compiled = xlac.compile(rows_weighted_by_distance)
    np.testing.assert_allclose(np.asarray(compiled(x)), rows_weighted_by_distance(x), rtol=1e-12)
    (decision,) = compiled.trace(x).loop_decisions
    assert decision.decision == "rolled", decision


def test_reshape_into_the_shape_of_a_value_with_other_length_raises_numpys_error():
    def f(a):
        t = a[a > 0]
        return np.arange(1, t.size).reshape(t.shape)
    a = np.array([1.0, -2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="cannot reshape"):
        f(a)
    with pytest.raises(ValueError, match="cannot reshape an array of size 2 into the shape of another value") \
            as error:
        xlac.compile(f)(a)
    assert f"{__file__}:{line_of(f, '.reshape(')}" in str(error.value)


def test_a_python_int_bound_becomes_static_and_an_unbounded_traced_one_is_refused():
    def f(a, n):
        return np.arange(n).sum() + a.sum()
    compiled = xlac.compile(f)
    assert float(compiled(np.ones(3), 5)) == f(np.ones(3), 5)
    assert float(compiled(np.ones(3), 7)) == f(np.ones(3), 7)
    with pytest.raises(xlac.TracerConversionError, match="np.arange with a traced start or stop") as error:
        compiled(np.ones(3), np.int64(5))          # an int64 array: a value, whose range nothing bounds
    assert f"{__file__}:{line_of(f, 'np.arange(n)')}" in str(error.value)

    def mixed(a):
        return np.arange(0.5, a[a > 0].size).sum()
    with pytest.raises(xlac.UnsupportedError, match="arange with a traced bound and a float one"):
        xlac.compile(mixed)(np.ones(3))
