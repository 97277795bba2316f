"""NumPy's functions that write into an existing array: ``copyto``, ``put``, ``place``, ``putmask``,
``fill_diagonal``.

Each writes through ``dst[...] = ...``, so inside a compiled function it becomes a store that the
functionalization pass makes pure (and XLA does in place), and on an ``xlac.Array`` the handle is updated.

>>> import numpy as np, xlac, xlac.numpy as xnp
>>> a = xlac.asarray(np.zeros(4))
>>> xnp.put(a, [0, 2], [5.0, 7.0]); a
Array([5., 0., 7., 0.], dtype=float64)
"""
from __future__ import annotations

import numpy as np

from xlac.errors import UnsupportedError, located
from xlac.ir import dtypes
from xlac.numpy import creation, index_write, indexing, shapes, ufuncs
from xlac.numpy._core import is_python_scalar, writable
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer
from xlac.array import asarray as device_array

__all__ = ["copyto", "put", "place", "fill_diagonal", "putmask"]


def _target(dst, op: str):
    """The array to write into: inside a compiled function the traced array :func:`writable` gives (for an
    xlac.Array or NumPy array reached from outside, the implicit argument standing for it); outside, an
    xlac.Array, or a NumPy array (written by NumPy itself through a compiled copy)."""
    if current_trace() is not None:
        return writable(dst, op)
    if hasattr(dst, "_store") or isinstance(dst, np.ndarray):
        return dst
    raise TypeError(located(f"{op}: the destination must be an array (NumPy, xlac.Array or traced), got "
                            f"{type(dst).__name__}"))


def copyto(dst, src, casting="same_kind", where=True):
    """Copy ``src`` into ``dst`` (broadcast), where ``where`` holds, refusing casts ``casting`` forbids.

    >>> a = xlac.asarray(np.zeros(3, np.float32)); xnp.copyto(a, np.arange(3)); a
    Array([0., 1., 2.], dtype=float32)
    """
    dst = _target(dst, "copyto")
    source_dtype = dtypes.result_type(src) if is_python_scalar(src) else np.dtype(getattr(src, "dtype", None)
                                                                                  or np.asarray(src).dtype)
    if is_python_scalar(src):
        # NEP 50: a Python scalar casts as the smallest dtype of its kind would
        smallest = {bool: np.bool_, float: np.float16, complex: np.complex64}.get(
            type(src), np.uint8 if type(src) is int and src >= 0 else np.int8)
        if not np.can_cast(smallest, dst.dtype, casting):
            raise TypeError(located(f"Cannot cast scalar from {source_dtype!r} to {dst.dtype!r} according to "
                                    f"the rule {casting!r}"))
    elif not np.can_cast(source_dtype, dst.dtype, casting):
        raise TypeError(located(f"Cannot cast array data from {source_dtype!r} to {dst.dtype!r} according to "
                                f"the rule {casting!r}"))
    if where is True:
        dst[...] = src
    else:
        dst[...] = ufuncs.where(where, src, dst)


def put(a, ind, v, mode="raise"):
    """``a.flat[ind] = v``, with ``v`` repeated as needed, as NumPy's ``put``.

    >>> a = xlac.asarray(np.zeros(3)); xnp.put(a, -1, 4.0); a
    Array([0., 0., 4.], dtype=float64)
    """
    a = _target(a, "put")
    indices = shapes.reshape(ind, (-1,)) if _is_device_value(ind) else np.asarray(ind).reshape(-1)
    count = indices.size
    values = shapes.reshape(v, (-1,)) if _is_device_value(v) else np.resize(np.asarray(v), count)
    if mode == "wrap":
        indices = np.mod(indices, a.size)
    elif mode == "clip":
        indices = np.clip(indices, 0, a.size - 1)
    elif mode != "raise":
        raise ValueError(located(f"put: mode must be 'raise', 'wrap' or 'clip', got {mode!r}"))
    flat = index_write.index_update(shapes.reshape(a, (-1,)), indices, values)
    a[...] = shapes.reshape(flat, a.shape)


def place(arr, mask, vals):
    """``arr[mask] = vals`` with ``vals`` repeated to the number of True elements, as NumPy's ``place``;
    the mask must be known when tracing.

    >>> a = xlac.asarray(np.zeros(4)); xnp.place(a, np.array([1, 0, 1, 1], bool), [1.0, 2.0]); a
    Array([1., 0., 2., 1.], dtype=float64)
    """
    arr = _target(arr, "place")
    if _is_device_value(mask):
        raise TypeError(located("place: the mask must be a NumPy array (known when tracing); for a traced "
                                "mask use arr[...] = xnp.where(mask, value, arr)"))
    mask = np.asarray(mask, bool)
    count = int(mask.sum())
    if count == 0:
        return
    if _is_device_value(vals):
        values = indexing.getitem(shapes.reshape(vals, (-1,)), np.arange(count) % vals.size)
    else:
        values = np.asarray(vals)
        if values.size == 0:
            raise ValueError(located("place: Cannot insert from an empty array!"))
        values = np.resize(values, count)
    arr[mask.reshape(arr.shape)] = values


def fill_diagonal(a, val, wrap=False):
    """Write ``val`` on the main diagonal of ``a`` (2-D, or N-D with equal sides), as NumPy's ``fill_diagonal``.

    >>> a = xlac.asarray(np.zeros((2, 3))); xnp.fill_diagonal(a, 1.0); a
    Array([[1., 0., 0.],
           [0., 1., 0.]], dtype=float64)
    """
    a = _target(a, "fill_diagonal")
    if a.ndim < 2:
        raise ValueError(located("fill_diagonal: array must be at least 2-d"))
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError(located("fill_diagonal: all dimensions of input must be of equal length"))
    if a.ndim == 2:                     # NumPy's walk over the flat array
        step, end = a.shape[1] + 1, (a.size if wrap else a.shape[1] * a.shape[1])
    else:
        step, end = 1 + int(np.sum(np.cumprod(a.shape[:-1]))), a.size
    positions = np.arange(0, min(end, a.size), step)
    if _is_device_value(val):
        values = indexing.getitem(shapes.reshape(val, (-1,)), np.arange(positions.size) % val.size)
    else:
        values = np.resize(np.asarray(val), positions.size)
    flat = index_write.index_update(shapes.reshape(a, (-1,)), positions, values)
    a[...] = shapes.reshape(flat, a.shape)


def _is_device_value(x) -> bool:
    """A traced array or an xlac.Array: data that is not on the host when tracing."""
    return isinstance(x, Tracer) or hasattr(x, "_xlac_type")


def inplace_update(x, val, *, keep_input_dtype: bool = False):
    """Make ``x`` hold ``val``'s values, in place, with Ivy's semantics: ``x`` takes ``val``'s dtype too,
    unless ``keep_input_dtype=True`` (then ``val`` is cast to ``x``'s dtype). Returns ``x``.

    Inside a compiled function ``x`` is a traced array whose dtype is fixed by its signature, so there a
    ``val`` of another dtype needs ``keep_input_dtype=True``.

    >>> a = xlac.asarray(np.zeros(2, np.float32))
    >>> xlac.inplace_update(a, np.array([1, 2]))
    Array([1, 2], dtype=int64)
    """
    if not _is_device_value(x):
        raise TypeError(located(f"inplace_update: x must be an xlac.Array or a traced array, got {type(x).__name__}"))
    source_dtype = dtypes.result_type(val) if is_python_scalar(val) else np.dtype(
        val.dtype if hasattr(val, "dtype") else np.asarray(val).dtype)
    if keep_input_dtype or source_dtype == x.dtype:
        x[...] = val
        return x
    if isinstance(x, Tracer) or current_trace() is not None:
        raise UnsupportedError(located(
            f"inplace_update: a traced array keeps its dtype {x.dtype}; got a value of dtype {source_dtype}. "
            "Pass keep_input_dtype=True to cast the value, or update the array outside the compiled function."))
    new = device_array(np.array(val) if not _is_device_value(val) else val)
    x._store_retyped(new)
    return x


def putmask(a, mask, values):
    """``a[mask] = values`` with ``values`` repeated cyclically over the flat positions, in place.

    >>> a = np.arange(4.0); x = __import__("xlac").asarray(a)
    >>> putmask(x, a > 1, [10.0, 20.0]); np.asarray(x)
    array([ 0.,  1., 10., 20.])
    """
    target = writable(a, "putmask") if current_trace() is not None else a
    if is_python_scalar(values) or isinstance(values, (np.ndarray, np.generic)):
        # NumPy converts constant values to the array's dtype first (a Python int out of its range raises)
        values = np.asarray(values, dtype=np.result_type(target))
    values = creation.asarray(values)
    if values.size == 0:
        return None
    flat_values = indexing.getitem(shapes.ravel(values), np.arange(target.size) % values.size)   # cyclic
    new = ufuncs.where(creation.asarray(mask), shapes.reshape(flat_values, target.shape), target)
    target[...] = new
    return None
