"""The methods of xlac.numpy's ufuncs, as NumPy's: ``reduce``, ``accumulate``, ``reduceat``, ``outer`` and ``at``.

They are installed on every ufunc of :mod:`xlac.numpy.ufuncs` (``xnp.add.reduce``); NumPy's own methods
called on traced values (``np.add.at(x, i, v)``) reach the same ones through ``__array_ufunc__``
(:mod:`xlac.numpy.protocols`). Where NumPy has a reduction for the operation (``add``: ``sum``, ``maximum``:
``max``, ...), the method is that reduction; other binary ufuncs fold: reorderable ones (an identity, or
``maximum``/``minimum``/``fmax``/``fmin``, as NumPy says) pairwise in log2(n) steps, the others (``subtract``,
``divide``, ``power``, ...) one element after another along the axis, as NumPy does, which unrolls the axis
(at most :data:`UNROLL_LIMIT` steps). The loop dtype is NumPy's: the dtype the ufunc gives for two elements
of the array, where the array casts to it safely (``divide`` of integers: float64; ``add`` and ``multiply``
widen small integers, as ``sum`` does). NumPy's errors come where NumPy raises them.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.subtract.reduce(np.array([10, 1, 2]))), np.asarray(xnp.gcd.reduce(np.array([12, 18, 8])))
(array(7), array(2))
>>> np.asarray(xnp.maximum.accumulate(np.array([1, 3, 2]))).tolist(), xnp.add.outer([1, 2], [10, 20]).tolist()
([1, 3, 3], [[11, 21], [12, 22]])
>>> np.asarray(xnp.add.reduceat(np.arange(8), [0, 4, 1, 5])).tolist()
[6, 4, 10, 18]
>>> a = np.zeros(3); xnp.add.at(a, [0, 0, 2], 1.0); a.tolist()
[2.0, 0.0, 1.0]
"""
from __future__ import annotations

import functools

import numpy as np

from xlac.ir.dtypes import BOOL, INT64
from xlac.errors import UnsupportedError, located
from xlac.ir import dtypes
from xlac.numpy import _out, reductions, ufuncs
from xlac.numpy._core import asarray, is_python_scalar, writable
from xlac.numpy._dispatch import numpy_function
from xlac.numpy.dtypes import can_cast
from xlac.numpy.index_write import index_update
from xlac.numpy.reductions import _reduce_into, _sum_dtype, normalize_axes, normalize_axis
from xlac.trace import ops, pytree
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer
from xlac.array import Array

__all__ = ["install_ufunc_methods"]

UNROLL_LIMIT = 1024      # steps of a fold that runs one element after another (non-reorderable, or ``at``)

# The xlac.numpy reduction and running reduction that compute ufunc.reduce / ufunc.accumulate, where one does.
_REDUCTIONS = {"add": reductions.sum, "multiply": reductions.prod, "maximum": reductions.max,
               "minimum": reductions.min, "fmax": reductions.nanmax, "fmin": reductions.nanmin,
               "logical_and": reductions.all, "logical_or": reductions.any}
_ACCUMULATIONS = {"add": reductions.cumsum, "multiply": reductions.cumprod,
                  "maximum": reductions.maximum_accumulate, "minimum": reductions.minimum_accumulate}
_REORDERABLE_WITHOUT_IDENTITY = {"maximum", "minimum", "fmax", "fmin"}
_LOGICAL = {"logical_and", "logical_or", "logical_xor"}      # their loops take booleans: inputs cast to bool
_SCATTER_MODES = {"add": "add", "subtract": "add", "multiply": "multiply", "maximum": "maximum",
                  "minimum": "minimum"}
_NO_VALUE = object()


def install_ufunc_methods() -> None:
    """Give every ufunc of :mod:`xlac.numpy.ufuncs` NumPy's methods."""
    for alias in ufuncs.__all__:
        function = getattr(ufuncs, alias)
        if not hasattr(function, "nin"):
            continue
        for method in (reduce, accumulate, reduceat, outer):
            setattr(function, method.__name__, _public(functools.partial(method, function), function, method))
        updated = _public(functools.partial(_at_updated, function), function, at)
        function.at = functools.update_wrapper(functools.partial(at, function, updated), at)


def _public(bound, function, method):
    """``bound`` as the public xlac.numpy function ``function.method`` (traced, or run eagerly), whose
    dynamic-extent rule is registered under ``(function, method name)``."""
    def body(*args, **kwargs):
        return bound(*args, **kwargs)
    body.__name__ = body.__qualname__ = f"{function.__name__}.{method.__name__}"
    body.__doc__ = method.__doc__
    return numpy_function(body, rule_key=(function, method.__name__))


# ---------------------------------------------------------------- the loop dtype


def _check_binary(function, method: str) -> None:
    if function.signature is not None:
        raise RuntimeError(located("Reduction not defined on ufunc with signature"))
    if function.nin != 2:
        raise ValueError(located(f"{method} only supported for binary functions"))
    if function.nout != 1:
        raise ValueError(located(f"{method} only supported for functions returning a single value"))


def _probe(function, dtype: np.dtype) -> np.dtype:
    """The dtype ``function`` gives for two elements of ``dtype`` (nodes left for dead code elimination)."""
    zero = ops.full((), 0, dtype)
    return function(zero, zero).dtype


def _loop_dtype(function, x_dtype: np.dtype, dtype) -> np.dtype:
    """The dtype a reduction of ``function`` over an array of ``x_dtype`` runs in (``dtype=``: that one)."""
    name = function.__name__
    if dtype is not None:
        target = dtypes.canonical(dtype)
    elif name in _LOGICAL:
        return BOOL
    elif name in ("add", "multiply"):
        return _sum_dtype(x_dtype)
    else:
        target = _probe(function, x_dtype)
        if target != x_dtype and not can_cast(x_dtype, target, "safe"):
            target = None
    if target is None or _probe(function, target) != target:
        raise TypeError(located(f"No loop matching the specified signature and casting was found for ufunc {name}"))
    return target


def _identity(function, dtype: np.dtype):
    identity = function.identity
    return None if identity is None else np.array(identity).astype(dtype)


def _reorderable(function) -> bool:
    return function.identity is not None or function.__name__ in _REORDERABLE_WITHOUT_IDENTITY


# ---------------------------------------------------------------- reduce


def reduce(function, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
    """``ufunc.reduce``: ``function`` applied along ``axis`` (default 0; None: every axis; a tuple only for
    reorderable ufuncs), starting from ``initial`` (default: the first element, or the identity for an
    empty axis), over the elements where ``where`` holds (which needs an identity or ``initial``).

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.divide.reduce(np.array([[8, 2], [3, 4]]), axis=1)).tolist()
    [4.0, 0.75]
    """
    _check_binary(function, "reduce")
    name = function.__name__
    x = asarray(array)
    if x.ndim == 0 and axis in (0, -1):
        axis = None
    axes = normalize_axes(axis, x.ndim, f"{name}.reduce")
    if len(axes) > 1 and not _reorderable(function):
        raise ValueError(located(f"reduction operation '{name}' is not reorderable, so at most one axis may be "
                                 "specified"))
    mask = None if where is True else _out.bool_mask(where, f"{name}.reduce")
    has_initial = initial is not _NO_VALUE and initial is not None
    if mask is not None and function.identity is None and not has_initial:
        raise ValueError(located(f"reduction operation '{name}' does not have an identity, so to use a where mask "
                                 "one has to specify 'initial'"))
    empty = any(x.shape[a] == 0 for a in axes)
    if empty and function.identity is None and not has_initial:
        raise ValueError(located(f"zero-size array to reduction operation {name} which has no identity"))
    fast = _REDUCTIONS.get(name)
    if fast is not None and (dtype is None or name in ("add", "multiply")) and \
            (not has_initial or name not in ("logical_and", "logical_or")):
        kwargs = {"dtype": dtype} if name in ("add", "multiply") else {}
        if has_initial:
            kwargs["initial"] = initial
        if mask is not None:
            kwargs["where"] = mask
        return fast(x, axis=axis, out=_single(out), keepdims=keepdims, **kwargs)
    dst = _out.output_operand(out, f"{name}.reduce", ufunc=True)
    loop = _loop_dtype(function, x.dtype, dtype)
    result = _folded(function, _out.cast(x, loop), axes, mask, initial if has_initial else None)
    if keepdims:
        result = ops.reshape(result, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return _reduce_into(dst, result, name, f"{name}.reduce")


def _last_axis(x: Tracer, axes: tuple) -> Tracer:
    """``x`` with ``axes`` moved last and merged into one axis."""
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = ops.transpose(x, (*kept, *axes))
    return ops.reshape(moved, tuple(x.shape[i] for i in kept) + (int(np.prod([x.shape[a] for a in axes])),))


def _folded(function, x: Tracer, axes: tuple, mask, initial) -> Tracer:
    """``function`` folded over ``axes`` of ``x`` (in the loop dtype), from ``initial`` where given."""
    y = _last_axis(x, axes)
    if mask is not None:
        mask = _last_axis(ops.broadcast_to(mask, x.shape), axes)
    start = None if initial is None else ops.full(y.shape[:-1], np.array(initial).astype(x.dtype), x.dtype)
    if _reorderable(function):
        identity = _identity(function, x.dtype)
        if identity is not None:
            if mask is not None:
                y = ops.select(mask, y, ops.full(y.shape, identity, x.dtype))
            if y.shape[-1] == 0:
                return start if start is not None else ops.full(y.shape[:-1], identity, x.dtype)
        elif mask is not None:      # maximum and friends with initial: masked elements are the start
            y = ops.select(mask, y, ops.broadcast_in_dim(start, y.shape, tuple(range(y.ndim - 1))))
        if y.shape[-1] == 0:
            return start
        pairwise = _pairwise(function, y)
        return pairwise if start is None else _as(function(start, pairwise), x.dtype)
    running = _sequential(function, y, mask, start)
    return running[-1] if running else start


def _single(out):
    """A ufunc's ``out``, as the reductions take it: an array, not a 1-tuple (NumPy's protocol passes one)."""
    return out[0] if isinstance(out, tuple) and len(out) == 1 else out


def _as(x, dtype):
    return x if x.dtype == dtype else ops.convert(x, dtype)


def _element(y: Tracer, k: int) -> Tracer:
    return ops.reshape(ops.slice(y, (0,) * (y.ndim - 1) + (k,), y.shape[:-1] + (k + 1,), (1,) * y.ndim), y.shape[:-1])


def _pairwise(function, y: Tracer) -> Tracer:
    """``function`` over the last axis of ``y`` (not empty), neighbours combined first: log2(n) steps."""
    dtype = y.dtype
    while y.shape[-1] > 1:
        n = y.shape[-1]
        pairs, rest = n // 2 * 2, y.shape[:-1]
        left = ops.slice(y, (0,) * y.ndim, rest + (pairs,), (1,) * (y.ndim - 1) + (2,))
        right = ops.slice(y, (0,) * (y.ndim - 1) + (1,), rest + (pairs,), (1,) * (y.ndim - 1) + (2,))
        combined = _as(asarray(function(left, right)), dtype)
        if n % 2:
            combined = ops.concatenate([combined, ops.slice(y, (0,) * (y.ndim - 1) + (n - 1,), y.shape,
                                                            (1,) * y.ndim)], y.ndim - 1)
        y = combined
    return ops.reshape(y, y.shape[:-1])


def _sequential(function, y: Tracer, mask, start) -> list[Tracer]:
    """The running values of ``function`` along the last axis of ``y``, one element after another (as NumPy
    does for a ufunc that is not reorderable), from ``start`` (None: the first element)."""
    n = y.shape[-1]
    if n > UNROLL_LIMIT:
        raise UnsupportedError(located(
            f"{function.__name__}: reducing or accumulating an axis of {n} elements with a ufunc that is not "
            f"reorderable runs one element after another, unrolled, and xlac unrolls at most {UNROLL_LIMIT}"))
    values, acc = [], start
    for k in range(n):
        element = _element(y, k)
        new = element if acc is None else _as(asarray(function(acc, element)), y.dtype)
        acc = new if mask is None or acc is None else ops.select(_element(mask, k), new, acc)
        values.append(acc)
    return values


# ---------------------------------------------------------------- accumulate


def accumulate(function, array, axis=0, dtype=None, out=None):
    """``ufunc.accumulate``: the running ``function`` along ``axis``, in the loop dtype of ``reduce``.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.subtract.accumulate(np.array([10, 1, 2]))).tolist()
    [10, 9, 7]
    """
    _check_binary(function, "accumulate")
    name = function.__name__
    x = asarray(array)
    if x.ndim == 0:
        raise TypeError(located("cannot accumulate on a scalar"))
    if axis is None:
        if x.ndim > 1:
            raise ValueError(located("accumulate does not allow multiple axes"))
        axis = 0
    axis = normalize_axis(axis, x.ndim, f"{name}.accumulate")
    fast = _ACCUMULATIONS.get(name)
    if fast is not None and (dtype is None or name in ("add", "multiply")):
        return fast(x, axis=axis, dtype=dtype, out=_single(out))
    dst = _out.output_operand(out, f"{name}.accumulate", ufunc=True)
    if dst is not None and dst.shape != x.shape:
        raise ValueError(located(f"{name}.accumulate: provided out is the wrong size for the accumulation."))
    loop = _loop_dtype(function, x.dtype, dtype)
    y = _last_axis(_out.cast(x, loop), (axis,))
    if x.shape[axis] == 0:
        running = y
    elif _reorderable(function):
        running = _prefix_scan(function, y)
    else:
        running = ops.concatenate([ops.reshape(v, v.shape + (1,)) for v in _sequential(function, y, None, None)],
                                  y.ndim - 1)
    moved = list(range(x.ndim - 1))
    moved.insert(axis, x.ndim - 1)
    return _reduce_into(dst, ops.transpose(running, tuple(moved)), name, f"{name}.accumulate")


def _prefix_scan(function, y: Tracer) -> Tracer:
    """The running ``function`` (associative) along the last axis of ``y``, in log2(n) steps."""
    n, last = y.shape[-1], y.ndim - 1
    shift = 1
    while shift < n:
        head = ops.slice(y, (0,) * y.ndim, y.shape[:-1] + (shift,), (1,) * y.ndim)
        earlier = ops.slice(y, (0,) * y.ndim, y.shape[:-1] + (n - shift,), (1,) * y.ndim)
        later = ops.slice(y, (0,) * last + (shift,), y.shape, (1,) * y.ndim)
        y = ops.concatenate([head, _as(asarray(function(earlier, later)), y.dtype)], last)
        shift *= 2
    return y


# ---------------------------------------------------------------- reduceat


def reduceat(function, array, indices, axis=0, dtype=None, out=None):
    """``ufunc.reduceat``: ``reduce`` over ``array[indices[i]:indices[i + 1]]`` along ``axis`` for each ``i``
    (to the end for the last), or ``array[indices[i]]`` where ``indices[i] >= indices[i + 1]``. The indices
    must be known when tracing (constants), as they give the pieces' sizes.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.multiply.reduceat(np.arange(1, 7), [0, 3, 2])).tolist()
    [6, 4, 360]
    """
    _check_binary(function, "reduceat")
    name = function.__name__
    leaves, _ = pytree.flatten(indices)
    if any(isinstance(leaf, (Tracer, Array)) for leaf in leaves):
        raise UnsupportedError(located(f"{name}.reduceat: traced indices; the indices give the sizes of the "
                                       "pieces, so xlac needs them when tracing (a list or a NumPy array)"))
    starts = np.asarray(indices)
    if starts.ndim != 1 or (starts.size and starts.dtype.kind not in "iu"):
        raise TypeError(located(f"{name}.reduceat: indices must be a one-dimensional array of integers"))
    x = asarray(array)
    axis = normalize_axis(axis, x.ndim, f"{name}.reduceat")
    n = x.shape[axis]
    for index in starts:
        if not 0 <= index < n:
            raise IndexError(located(f"index {index} out-of-bounds in {name}.reduceat [0, {n})"))
    dst = _out.output_operand(out, f"{name}.reduceat", ufunc=True)
    pieces = []
    for i, start in enumerate(starts.tolist()):
        stop = starts[i + 1] if i + 1 < len(starts) else n
        stop = stop if stop > start else start + 1
        piece = ops.slice(x, tuple(start if a == axis else 0 for a in range(x.ndim)),
                          tuple(stop if a == axis else d for a, d in enumerate(x.shape)), (1,) * x.ndim)
        pieces.append(asarray(reduce(function, piece, axis, dtype, None, True)))
    if not pieces:
        raise ValueError(located(f"{name}.reduceat: indices must not be empty"))
    result = ops.concatenate(pieces, axis)
    return _reduce_into(dst, result, name, f"{name}.reduceat")


# ---------------------------------------------------------------- outer


def outer(function, a, b, /, **kwargs):
    """``ufunc.outer``: ``function(a[..., None, ...], b)``, one result axis per axis of ``a`` and of ``b``.

    >>> import numpy as np, xlac.numpy as xnp
    >>> xnp.multiply.outer(np.array([1, 2]), np.array([[1, 10]])).shape
    (2, 1, 2)
    """
    if function.signature is not None:
        raise TypeError(located("method outer is not allowed in ufunc with non-trivial signature"))
    if function.nin != 2:
        raise ValueError(located("outer product only supported for binary functions"))
    a, b = asarray(a), asarray(b)
    return function(ops.reshape(a, a.shape + (1,) * b.ndim), b, **kwargs)


# ---------------------------------------------------------------- at


def at(function, updated, array, indices, values=None, /):
    """``ufunc.at``: ``function`` applied in place at ``array[indices]`` (with ``values`` for a binary ufunc),
    unbuffered: an index given twice applies twice. ``add``, ``subtract``, ``multiply``, ``maximum`` and
    ``minimum`` combine into the array as one scatter; other ufuncs gather, compute and write back where the
    indices are distinct constants, else apply one element after another (at most :data:`UNROLL_LIMIT`).
    Values of a wider float dtype than the array's are applied in the array's dtype (NumPy rounds through the
    wider one: the last bit can differ). ``updated``: the new value of the array, as an xlac.numpy function.

    >>> import numpy as np, xlac.numpy as xnp
    >>> a = np.array([1.0, 2.0, 3.0]); xnp.negative.at(a, [0, 0, 1]); a.tolist()
    [1.0, -2.0, 3.0]
    """
    if function.nout != 1 or function.signature is not None:
        raise ValueError(located("Only single output ufuncs supported at this time"))
    if function.nin == 2 and values is None:
        raise ValueError(located("second operand needed for ufunc"))
    if function.nin == 1 and values is not None:
        raise ValueError(located("second operand provided when ufunc is unary"))
    if is_python_scalar(values):
        values = np.asarray(values)          # ufunc.at takes values as NumPy arrays: a Python int is int64
    if current_trace() is None:
        new = updated(array, indices, values)
        array[...] = np.asarray(new) if isinstance(array, np.ndarray) else new
        return
    target = writable(array, f"numpy.{function.__name__}.at")
    target[...] = updated(target, indices, values)


def _at_updated(function, array, indices, values):
    """``array`` after ``function.at(array, indices, values)``, as a new value."""
    name = function.__name__
    dtype = np.result_type(array)
    operands = (values,) if function.nin == 2 else ()
    combined = function(asarray(array)[indices], *operands)
    mode = _SCATTER_MODES.get(name)
    if mode is not None:
        wraps = name != "maximum" and name != "minimum" and dtype.kind in "iu" and combined.dtype.kind in "iu"
        if combined.dtype == dtype or wraps or dtype.kind == combined.dtype.kind and dtype.kind in "fc":
            # Integers: wrapping arithmetic, so casting after each step equals computing in the array's dtype.
            # Floats: computed in the array's float dtype (NumPy rounds twice, through the wider dtype).
            values = asarray(values).astype(dtype)
            if name == "subtract":
                values = ufuncs.negative(values)
            return index_update(array, indices, values, mode=mode)
    if _distinct_constant_positions(np.shape(array), indices):
        return index_update(array, indices, combined)       # one gather, the ufunc, one write (unsafe cast)
    return _at_one_by_one(function, array, indices, values)


def _distinct_constant_positions(shape, indices) -> bool:
    """Whether ``indices`` are constants (no traced or device values) that select no element twice."""
    leaves, _ = pytree.flatten(indices)
    if any(isinstance(leaf, (Tracer, Array)) for leaf in leaves):
        return False
    hits = np.zeros(shape, np.int64)
    np.add.at(hits, indices, 1)
    return hits.max(initial=0) <= 1


def _at_one_by_one(function, array, indices, values):
    """``function.at`` one selected element after another, in the order NumPy visits them."""
    x = asarray(array)
    flat_positions = _flat_positions(x.shape)
    chosen = asarray(flat_positions)[indices]
    count = int(np.prod(chosen.shape))
    if count > UNROLL_LIMIT:
        raise UnsupportedError(located(
            f"numpy.{function.__name__}.at: {count} elements with repeated or traced indices are applied one after "
            f"another, unrolled, and xlac unrolls at most {UNROLL_LIMIT}; use distinct constant indices"))
    chosen = ops.reshape(chosen, (count,))
    operand = None
    if values is not None:
        operand = ops.reshape(ops.broadcast_to(asarray(values), asarray(flat_positions)[indices].shape), (count,))
    flat = ops.reshape(x, (x.size,))
    for k in range(count):
        position = _element(chosen, k)
        current = flat[position]
        new = function(current, _element(operand, k)) if operand is not None else function(current)
        flat = index_update(flat, position, new)
    return ops.reshape(flat, x.shape)


def _flat_positions(shape) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=INT64).reshape(shape)

