"""xlac.compile and the transforms take any callable, as JAX's jit does: functools.partial (bound
positional and keyword arguments), callable objects, bound methods, and a compiled ``__call__``."""
import functools
import logging
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, strategies as st, settings

import xlac
import xlac.numpy as xnp
from xlac.callables import callable_name, code_and_bound_values

from tests.tolerance import assert_matches


def affine(a, x, b=1.0):
    return a * x + b


class Scale:
    """A callable object holding its state as attributes."""

    def __init__(self, w):
        self.w = w
        self._fn = "an attribute the compiled wrapper must not take over"

    def __call__(self, x):
        return x * self.w

    def shifted(self, x, shift):
        return x * self.w + shift


class CompiledCall:
    def __init__(self, w):
        self.w = w

    @xlac.compile
    def __call__(self, x):
        return xnp.tanh(x @ self.w)


X = np.arange(6, dtype=np.float32).reshape(2, 3)


@settings(max_examples=12, deadline=None)
@given(a=st.floats(-4, 4, width=32), b=st.floats(-4, 4, width=32))
def test_partial_with_bound_positional_and_keyword_arguments_matches_numpy(a, b):
    positional = xlac.compile(functools.partial(affine, np.float32(a)))
    keyword = xlac.compile(functools.partial(affine, b=np.float32(b)))
    assert_matches(np.asarray(positional(X)), affine(np.float32(a), X))
    assert_matches(np.asarray(keyword(np.float32(a), X)), affine(np.float32(a), X, b=np.float32(b)))
    assert_matches(np.asarray(keyword(np.float32(a), X, b=np.float32(2))), affine(np.float32(a), X, 2))


def test_arguments_of_a_partial_are_named_by_its_own_signature():
    positional = xlac.compile(functools.partial(affine, 2.0))
    keyword = xlac.compile(functools.partial(affine, b=3.0))
    assert positional.trace(X, b=X).ir().input_names == ["x", "b"]
    assert keyword.trace(1.0, X).ir().input_names == ["a", "x"]
    with pytest.raises(TypeError, match="^argument x: xlac takes a builtins.set, which is not an array, as a static"):
        positional({"not an array"})


def test_static_argnums_and_argnames_of_a_partial_count_its_own_parameters():
    def power(scale, x, n):
        return scale * x ** n
    # The partial's parameters are (x, n): position 1 is n.
    by_position = xlac.compile(functools.partial(power, 2.0), static_argnums=1)
    by_name = xlac.compile(functools.partial(power, 2.0), static_argnames="n")
    assert_matches(np.asarray(by_position(X, 3)), power(2.0, X, 3))
    assert_matches(np.asarray(by_name(X, n=2)), power(2.0, X, 2))
    by_position(X, 3)
    by_position(X, 2)
    assert by_position.cache_info().traces == 2      # n is static: a new value traces again


def test_callable_object_compiles_and_reads_its_attributes_at_every_call():
    model = Scale(np.full(3, 2.0, np.float32))
    compiled = xlac.compile(model)
    assert_matches(np.asarray(compiled(X)), X * 2)
    model.w = np.full(3, 5.0, np.float32)          # same shape and dtype: passed, not frozen
    assert_matches(np.asarray(compiled(X)), X * 5)
    assert compiled.cache_info().traces == 1
    assert "self.w" in compiled.trace(X).ir().input_names


def test_callable_object_attributes_do_not_replace_the_wrappers_own():
    compiled = xlac.compile(Scale(np.float32(3)))
    assert compiled._fn.w == np.float32(3)
    assert compiled.__name__ == "Scale" and repr(compiled) == "<xlac.compile of Scale>"


def test_bound_method_object_compiles():
    model = Scale(np.full(3, 2.0, np.float32))
    compiled = xlac.compile(model.shifted)
    assert_matches(np.asarray(compiled(X, 1.5)), X * 2 + 1.5)
    model.w = np.full(3, -1.0, np.float32)
    assert_matches(np.asarray(compiled(X, 1.5)), X * -1 + 1.5)
    assert compiled.__name__ == "shifted"


def test_compiled_dunder_call_on_a_class():
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    layer = CompiledCall(w)
    np.testing.assert_allclose(np.asarray(layer(X)), np.tanh(X @ w), rtol=1e-6, atol=1e-6)
    layer.w = w * 2
    np.testing.assert_allclose(np.asarray(layer(X)), np.tanh(X @ (w * 2)), rtol=1e-6, atol=1e-6)


def test_partial_over_a_callable_object_and_an_outside_array_reads_them_per_call():
    state = np.zeros(3, np.float32)
    compiled = xlac.compile(functools.partial(lambda s, x: x + s, state))
    assert_matches(np.asarray(compiled(X)), X)
    state[:] = 4
    assert_matches(np.asarray(compiled(X)), X + 4)


def test_names_in_the_compile_log_and_the_dump_folder(caplog, tmp_path):
    compiled = xlac.compile(functools.partial(affine, 2.0), dump_dir=str(tmp_path))
    with _log_compiles():
        with caplog.at_level(logging.WARNING, logger="xlac"):
            compiled(X)
    assert any("compiled partial(affine)(" in r.getMessage() for r in caplog.records)
    (folder,) = os.listdir(tmp_path)
    assert folder.startswith("partial_affine-")


class _log_compiles:
    def __enter__(self):
        self.old = xlac.config.log_compiles
        xlac.config.update("log_compiles", True)

    def __exit__(self, *exc):
        xlac.config.update("log_compiles", self.old)


def test_an_error_inside_a_callable_object_names_the_users_line():
    class Branchy:
        def __call__(self, x):
            if x.sum() > 0:          # the line the error must name
                return x
            return -x
    line = Branchy.__call__.__code__.co_firstlineno + 1
    with pytest.raises(xlac.TracerConversionError) as info:
        xlac.compile(Branchy(), convert=False)(X)
    assert f"{__file__}:{line}" in str(info.value)


def test_compile_of_a_non_callable_is_a_type_error():
    with pytest.raises(TypeError, match="expects a callable, got int"):
        xlac.compile(3)


def test_grad_of_a_partial_matches_jax():
    def loss(a, x):
        return (a * x ** 3).sum()
    x = np.linspace(-1, 1, 5).astype(np.float32)
    expected = jax.grad(functools.partial(loss, 2.0))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(xlac.grad(functools.partial(loss, 2.0))(x)), expected, rtol=1e-6)
    compiled = xlac.compile(xlac.grad(functools.partial(loss, 2.0)))
    np.testing.assert_allclose(np.asarray(compiled(x)), expected, rtol=1e-6)


def test_vmap_of_a_callable_object_and_a_partial_matches_jax():
    w = np.linspace(0, 1, 4, dtype=np.float32).reshape(2, 2)
    rows = np.arange(6, dtype=np.float32).reshape(3, 2)

    class Project:
        def __call__(self, row):
            return row @ w
    expected = jax.vmap(lambda r: r @ w)(jnp.asarray(rows))
    np.testing.assert_allclose(np.asarray(xlac.vmap(Project())(rows)), expected, rtol=1e-6)
    partial = functools.partial(affine, np.float32(3))
    np.testing.assert_allclose(np.asarray(xlac.vmap(partial)(rows)),
                               jax.vmap(functools.partial(affine, np.float32(3)))(jnp.asarray(rows)), rtol=1e-6)
    assert repr(xlac.vmap(Project())) == "<xlac.vmap of 'Project'>"


def test_callable_name_and_bound_values():
    model = Scale(1.0)
    # functools.partial flattens a partial of a partial
    assert callable_name(functools.partial(functools.partial(affine, 1.0), 2.0)) == "partial(affine)"
    code, bound = code_and_bound_values(functools.partial(model.shifted, shift=3.0))
    assert code is Scale.shifted and bound == [("self", model), ("shift", 3.0)]
    code, bound = code_and_bound_values(functools.partial(affine, 1.0, 2.0))
    assert code is affine and bound == [("a", 1.0), ("x", 2.0)]
