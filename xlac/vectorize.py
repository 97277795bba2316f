"""``xlac.vmap``: vectorize a function over a batch axis of its arguments, with JAX's semantics.

The function is traced once on one example's shapes; the batching transform
(:mod:`xlac.passes.batching`) then evaluates its graph on the whole batch, so the
result is one batched program, not a Python loop.

>>> import numpy as np, xlac.numpy as xnp
>>> f = vmap(lambda x, y: xnp.dot(x, y), in_axes=(0, None))
>>> out = f(np.ones((5, 3), np.float32), np.arange(3, dtype=np.float32))
>>> out.shape, np.asarray(out)[0]
((5,), np.float32(3.0))
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

import xlac.passes.rules  # noqa: F401  (registers the batching rules on the primitives)
from xlac.callables import callable_name
from xlac.errors import located
from xlac.ir.graph import Value
from xlac.passes.batching import batch_graph, move_batch_axis
from xlac.trace import pytree
from xlac.trace.state import current_trace
from xlac.function_graph import adopt_checks, leaf_type, trace_subgraph
from xlac.trace.tracer import Tracer
from xlac.api import compile as compile_function
from xlac.numpy._core import asarray

__all__ = ["vmap"]


def vmap(f, in_axes=0, out_axes=0, *, axis_size: int | None = None) -> "Vmapped":
    """Vectorize ``f`` over an axis of its arguments, like ``jax.vmap``.

    ``in_axes``: an int, None, or a tuple with one entry per positional argument, each an int, None or
    a pytree prefix of that argument (keyword arguments are always mapped over axis 0). ``out_axes``:
    an int, None or a pytree prefix of the output, where the batch axis of each output goes.
    Negative axes count from the end. ``axis_size`` gives the batch size when no argument is mapped.
    Usable eagerly, inside ``xlac.compile`` and nested (``vmap(vmap(f))``).

    >>> import numpy as np, xlac.numpy as xnp
    >>> add_rows = vmap(lambda row, v: row + v, in_axes=(1, None), out_axes=1)
    >>> np.asarray(add_rows(np.zeros((2, 3)), np.ones(2)))
    array([[1., 1., 1.],
           [1., 1., 1.]])
    """
    if not callable(f):
        raise TypeError(f"vmap expects a callable, got {type(f).__name__}")
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    return Vmapped(f, in_axes, out_axes, axis_size)


def _check_axes_spec(spec, name: str) -> None:
    leaves, _ = pytree.flatten(spec)
    for leaf in leaves:
        if not isinstance(leaf, (int, np.integer)) or isinstance(leaf, bool):
            raise TypeError(f"vmap {name} must be an int, None, or (nested) container with those types as "
                            f"leaves, but got {leaf!r}")


class Vmapped:
    """The vectorized function returned by :func:`vmap`."""

    def __init__(self, f, in_axes, out_axes, axis_size):
        functools.update_wrapper(self, f, updated=())
        self._f = f
        self._in_axes = in_axes
        self._out_axes = out_axes
        self._axis_size = axis_size
        self._compiled = None          # xlac.compile of the vectorized function, for eager calls

    def __call__(self, *args, **kwargs):
        if current_trace() is None:
            if self._compiled is None:
                self._compiled = compile_function(self._traced_call)
                self._compiled.__name__ = f"vmap({callable_name(self._f)})"
            return self._compiled(*args, **kwargs)
        return self._traced_call(*args, **kwargs)

    def _traced_call(self, *args, **kwargs):
        leaves, in_tree = pytree.flatten((args, kwargs))
        paths = _argument_paths(self._f, in_tree)
        axes = _leaf_in_axes(self._in_axes, args, kwargs)
        axes = [_normalize_in_axis(a, leaf, path) for a, leaf, path in zip(axes, leaves, paths)]
        size = _axis_size(leaves, axes, paths, self._axis_size)
        examples = [leaf if axis is None else _example(leaf, axis) for leaf, axis in zip(leaves, axes)]
        call_args, call_kwargs = pytree.unflatten(in_tree, examples)
        sub = trace_subgraph(self._f, call_args, call_kwargs)
        inputs = [asarray(leaf) for leaf in leaves] + list(sub.lifted)
        in_dims = axes + [None] * len(sub.lifted)
        outs, out_dims = batch_graph(sub.graph, inputs, in_dims)
        outs, out_dims = adopt_checks(sub, outs, out_dims), out_dims[:len(outs) - bool(sub.checks)]
        out_spec = _leaf_out_axes(self._out_axes, sub.out_tree)
        results = [_place_output(x, d, spec, size) for x, d, spec in zip(outs, out_dims, out_spec)]
        return pytree.unflatten(sub.out_tree, results)

    def __repr__(self) -> str:
        return f"<xlac.vmap of {callable_name(self._f)!r}>"


# ---------------------------------------------------------------- axes of the arguments


def _argument_paths(f, in_tree) -> list[str]:
    """A readable name per argument leaf: ``x``, ``params['w']``, ``args[2]``."""
    try:
        names = [p.name for p in inspect.signature(f).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    paths = []
    for path in pytree.leaf_paths(in_tree):
        if path.startswith("[0]["):
            end = path.index("]", 4)
            i = int(path[4:end])
            paths.append((names[i] if i < len(names) else f"args[{i}]") + path[end + 1:])
        else:
            end = path.index("]", 4)
            paths.append(path[5:end - 1] + path[end + 1:])
    return paths


def _leaf_in_axes(in_axes, args, kwargs) -> list:
    """One axis (or None) per argument leaf: ``in_axes`` broadcast over the positional arguments' trees;
    keyword arguments are mapped over axis 0."""
    if isinstance(in_axes, (int, np.integer)) or in_axes is None:
        spec = in_axes
    else:
        if not isinstance(in_axes, tuple) or len(in_axes) != len(args):
            raise ValueError(located(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
                f"arguments passed to the function, but got len(in_axes)={_length(in_axes)}, len(args)={len(args)}"))
        spec = in_axes
    return _broadcast_axes(spec, args, "in_axes") + _broadcast_axes(0, kwargs, "in_axes")


def _length(x):
    return len(x) if isinstance(x, (tuple, list, dict)) else type(x).__name__


def _broadcast_axes(spec, tree, name: str) -> list:
    """``spec``'s axis (an int or None) for each leaf of ``tree``; ``spec`` is a pytree prefix of ``tree``."""
    treedef = tree if isinstance(tree, pytree.TreeDef) else pytree.flatten(tree)[1]
    try:
        axes = pytree.broadcast_prefix(spec, treedef, lambda s: s is None or isinstance(s, (int, np.integer)))
    except pytree.PrefixMismatch as mismatch:
        raise ValueError(located(
            f"vmap {name} specification must be a tree prefix of the corresponding value, got specification "
            f"{mismatch.prefix!r} for value tree {mismatch.tree!r}")) from None
    return [None if a is None else int(a) for a in axes]


def _leaf_shape(leaf) -> tuple[int, ...]:
    return leaf_type(leaf)[0].shape


def _normalize_in_axis(axis, leaf, path: str):
    if axis is None:
        return None
    shape = _leaf_shape(leaf)
    if not -len(shape) <= axis < len(shape):
        raise ValueError(located(
            f"vmap was requested to map its argument along axis {axis}, which implies that its rank should be "
            f"at least {axis + 1 if axis >= 0 else -axis}, but is only {len(shape)} (its shape is {shape}); "
            f"argument {path}"))
    return axis % len(shape)


def _axis_size(leaves, axes, paths, axis_size) -> int:
    mapped = [(path, axis, _leaf_shape(leaf)) for leaf, axis, path in zip(leaves, axes, paths) if axis is not None]
    if not mapped:
        if axis_size is None:
            raise ValueError(located("vmap must have at least one non-None value in in_axes"))
        return axis_size
    sizes = {shape[axis] for _, axis, shape in mapped}
    if axis_size is not None:
        sizes.add(axis_size)
    if len(sizes) > 1:
        lines = "\n".join(f"  * axis {axis} of argument {path} of shape {shape} had size {shape[axis]}"
                          for path, axis, shape in mapped)
        given = f"\n  * axis_size was {axis_size}" if axis_size is not None else ""
        raise ValueError(located(f"vmap got inconsistent sizes for array axes to be mapped:\n{lines}{given}"))
    return sizes.pop()


def _example(leaf, axis: int) -> Tracer:
    """An abstract stand-in for one example of ``leaf`` (its type without the mapped axis)."""
    type_, weak = leaf_type(leaf)
    shape = type_.shape[:axis] + type_.shape[axis + 1:]
    return Tracer(Value(type_.with_shape(shape)), None, weak)


# ---------------------------------------------------------------- outputs


def _leaf_out_axes(out_axes, out_tree) -> list:
    return _broadcast_axes(out_axes, out_tree, "out_axes")


def _place_output(x: Tracer, dim, out_axis, size: int) -> Tracer:
    if out_axis is None:
        if dim is not None:
            raise ValueError(located("vmap has mapped output but out_axes is None"))
        return x
    rank = x.ndim + (1 if dim is None else 0)
    if not -rank <= out_axis < rank:
        raise ValueError(located(f"vmap out_axes {out_axis} is out of bounds for an output of rank {rank} "
                                 f"(shape {x.shape if dim is not None else (size,) + x.shape})"))
    return move_batch_axis(x, dim, out_axis % rank, size)

