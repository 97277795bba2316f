"""A namespace or a function passed as an argument (xlac/api.py ``_split``, xlac/argument_specs.py
``is_static_object``): static without ``static_argnums``, keyed by identity or hash, against NumPy."""
import functools

import numpy as np
import pytest

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches

X = np.linspace(-1.0, 2.0, 5)


def build_system(x, y, powers, xp):
    """A least-squares design matrix written against the Array API's ``xp``."""
    columns = xp.stack([x ** p for p in powers], axis=1)
    return columns.T @ columns, columns.T @ y + xp.zeros(len(powers))


@pytest.mark.parametrize("xp", [np, xnp], ids=["numpy", "xlac.numpy"])
def test_a_namespace_argument_is_static_and_computes_as_numpy(xp):
    f = xlac.compile(build_system)
    got = f(X, X * 3.0, (0, 1, 2), xp)
    for g, w in zip(got, build_system(X, X * 3.0, (0, 1, 2), np)):
        assert_matches(g, w)
    by_keyword = f(X, X * 3.0, (0, 1, 2), xp=xp)
    for g, w in zip(by_keyword, build_system(X, X * 3.0, (0, 1, 2), np)):
        assert_matches(g, w)


def test_each_namespace_compiles_once():
    f = xlac.compile(lambda x, xp: xp.sin(x) + xp.ones(x.shape))
    for xp in (np, xnp, np, xnp):
        assert_matches(f(X, xp), np.sin(X) + 1.0)
    assert f.cache_info().compiles == 2 and f.cache_info().hits == 2


def newton(f, x0, steps=4):
    x = x0
    for _ in range(steps):
        x = x - f(x) / 2.0
    return x


def square_minus_two(v):
    return v * v - 2.0


class Scaled:
    """A callable object, hashed by identity."""

    def __init__(self, k):
        self.k = k

    def __call__(self, v):
        return v * self.k

    def apply(self, v):
        return v + self.k


CALLABLES = {"lambda": lambda v: v * v - 2.0, "function": square_minus_two, "numpy ufunc": np.cos,
             "partial": functools.partial(np.power, 2.0), "builtin": abs, "callable object": Scaled(3.0),
             "bound method": Scaled(0.5).apply, "class": np.float32}


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_a_callable_argument_is_static_and_computes_as_numpy(name):
    fn = CALLABLES[name]
    got = xlac.compile(newton)(fn, X)
    assert_matches(got, newton(fn, X))


def test_two_functions_compile_twice_and_the_same_function_once():
    f = xlac.compile(newton)
    f(square_minus_two, X)
    f(np.cos, X)
    assert f.cache_info().compiles == 2
    f(square_minus_two, X)
    f(np.cos, X)
    assert f.cache_info().compiles == 2 and f.cache_info().hits == 2


def test_a_bound_method_is_keyed_by_its_object_and_function():
    f, scaled = xlac.compile(newton), Scaled(0.5)
    f(scaled.apply, X)
    f(scaled.apply, X)                 # a new bound method object, equal to the first
    assert f.cache_info().compiles == 1
    f(Scaled(0.5).apply, X)            # another object
    assert f.cache_info().compiles == 2


class Settings:
    """A hashable value object: equal settings share a compile."""

    def __init__(self, scale):
        self.scale = scale

    def __eq__(self, other):
        return isinstance(other, Settings) and other.scale == self.scale

    def __hash__(self):
        return hash(self.scale)


def test_other_hashable_objects_are_keyed_by_hash_and_equality():
    f = xlac.compile(lambda x, settings, mode: x * settings.scale if mode == "scale" else x + settings.scale)
    assert_matches(f(X, Settings(2.0), "scale"), X * 2.0)
    assert_matches(f(X, Settings(2.0), "scale"), X * 2.0)
    assert f.cache_info().compiles == 1
    assert_matches(f(X, Settings(3.0), "shift"), X + 3.0)
    assert f.cache_info().compiles == 2


def test_an_unhashable_object_names_the_argument():
    class Unhashable:
        __hash__ = None
    f = xlac.compile(lambda x, options: x)
    with pytest.raises(TypeError, match=r"^argument options: xlac takes a builtins\.set, which is not an array, "
                                        r"as a static argument .* must be hashable"):
        f(X, {"a", "b"})
    with pytest.raises(TypeError, match=r"^argument options: xlac takes a .*Unhashable"):
        f(X, options=Unhashable())


def test_array_likes_are_not_taken_as_static():
    class ArrayLike:
        def __array__(self, dtype=None, copy=None):
            return np.ones(2)
    with pytest.raises(TypeError, match=r"^argument a: xlac takes NumPy arrays"):
        xlac.compile(lambda x, a: x)(X, ArrayLike())
    with pytest.raises(TypeError, match=r"NumPy array subclass .*MaskedArray"):
        xlac.compile(lambda x, a: x)(X, np.ma.masked_array([1.0, 2.0]))


def test_arrays_after_a_static_object_keep_their_names():
    f = xlac.compile(lambda fn, x, y: fn(x) + y)
    assert f.trace(np.sin, X, X).ir().input_names == ["x", "y"]
    assert_matches(f(np.sin, X, X), np.sin(X) + X)


def fill_doubled(x, xp):
    out = xp.zeros(3)
    for i in range(3):
        out[i] = x[i] * 2.0
    return out


@pytest.mark.parametrize("xp", [np, xnp], ids=["numpy", "xlac.numpy"])
def test_an_array_the_namespace_allocates_takes_traced_writes(xp):
    assert_matches(xlac.compile(fill_doubled)(X, xp), fill_doubled(X, np))
