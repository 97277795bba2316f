"""The registry of dynamic-extent rules (xlac/numpy/_dispatch.py: dynamic_extent_rule, dynamic_call): rules keyed
by the xlac.numpy function object (or ufunc and method), reached from xlac.numpy's functions, NumPy's protocols
and the values' methods alike; values against NumPy."""
import inspect
import operator

import numpy as np
import pytest

import xlac
import xlac.numpy as xnp
from xlac.numpy import _dispatch


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_rules_are_keyed_by_function_objects_not_names():
    keys = list(_dispatch._DYNAMIC_EXTENT_RULES)
    assert not any(isinstance(key, str) or isinstance(key, tuple) and not callable(key[0]) for key in keys)
    assert _dispatch._rule_key(xnp.amax) is _dispatch._rule_key(xnp.max)        # one function, one rule
    assert (_dispatch._rule_key(xnp.add), "at") in _dispatch._DYNAMIC_EXTENT_RULES
    assert _dispatch._rule_key(operator.setitem) in _dispatch._DYNAMIC_EXTENT_RULES


def test_every_numpy_ufunc_xlac_has_takes_a_dynamic_value():
    missing = [name for name, ufunc in vars(np).items()
               if isinstance(ufunc, np.ufunc) and ufunc.signature is None and hasattr(xnp, name)
               and _dispatch._rule_key(getattr(xnp, name)) not in _dispatch._DYNAMIC_EXTENT_RULES]
    assert missing == []


def test_a_second_rule_for_a_function_is_refused():
    with pytest.raises(ValueError, match="sum already has a dynamic-extent rule"):
        _dispatch.dynamic_extent_rule(xnp.sum)(lambda *args: None)
    with pytest.raises(ValueError, match=r"add\.at already has a dynamic-extent rule"):
        _dispatch.dynamic_extent_rule((xnp.add, "at"))(lambda *args: None)


def reduce_methods(x, i):
    s = x[i:]
    return (np.add.reduce(s), np.multiply.reduce(s), np.maximum.reduce(s, initial=-1.0),
            np.minimum.reduce(s, initial=9.0), np.logical_or.reduce(s > 2), np.logical_and.reduce(s > 2),
            xnp.add.reduce(s, dtype=np.float32))


@pytest.mark.parametrize("i", [0, 2, 5, -2])
def test_ufunc_reduce_of_a_dynamic_value_matches_numpy(i):
    x = np.array([3.0, 1.0, 4.0, 1.0, 5.0])
    got = xlac.compile(reduce_methods)(x, np.int64(i))
    expected = reduce_methods(x, i)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), e)
        assert np.asarray(g).dtype == np.asarray(e).dtype


def flips_and_squares(x, i):
    s = x[i:]
    return np.fliplr(s).sum(axis=0), np.flipud(s)[0], np.square(s, dtype=np.float32).sum(), np.copy(s).max()


@pytest.mark.parametrize("i", [0, 1, 2])
def test_functions_reach_their_rules_by_object_through_numpys_protocols(i):
    x = np.arange(12.0).reshape(3, 4) - 5.0
    got = xlac.compile(flips_and_squares)(x, np.int64(i))
    expected = flips_and_squares(x, i)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), e)
        assert np.asarray(g).dtype == np.asarray(e).dtype


def test_a_function_without_a_rule_names_itself_and_the_line():
    def median_of_tail(x, i):
        return np.median(x[i:])

    with pytest.raises(xlac.UnsupportedError, match="median of a value whose length is known only") as error:
        xlac.compile(median_of_tail)(np.arange(4.0), np.int64(1))
    assert f"{__file__}:{line_of(median_of_tail, 'np.median')} (in median_of_tail)" in str(error.value)


def test_a_ufunc_reduce_with_where_is_refused_by_name():
    def masked_sum(x, i):
        return np.add.reduce(x[i:], where=x[i:] > 0)

    with pytest.raises(xlac.UnsupportedError, match=r"np\.add\.reduce of a value .* with out= or where="):
        xlac.compile(masked_sum)(np.arange(4.0), np.int64(1))


def test_only_the_rules_registered_as_taking_a_shape_take_a_dynamic_values_shape():
    taking = {_dispatch._rule_key(f) for f in (xnp.zeros, xnp.ones, xnp.empty, xnp.full, xnp.zeros_like,
                                               xnp.ones_like, xnp.empty_like, xnp.full_like, xnp.reshape)}
    assert _dispatch._TAKES_DYNAMIC_SHAPE == taking

    def filled(x, m):
        return np.full(x[m].shape, 2.0).sum(), np.ones_like(x, shape=x[m].shape).sum()
    x, m = np.arange(6.0), np.array([1, 0, 1, 1, 0, 0], bool)
    for got, expected in zip(xlac.compile(filled)(x, m), filled(x, m), strict=True):
        assert float(got) == expected

    def summed_shape(x, m):
        return xnp.sum(x[m].shape)
    with pytest.raises(xlac.UnsupportedError, match="sum of the shape of a value whose length is known only") \
            as error:
        xlac.compile(summed_shape)(x, m)
    assert f"{__file__}:{line_of(summed_shape, 'xnp.sum')} (in summed_shape)" in str(error.value)
