"""Argument signatures: what a compiled executable was built for, and the check that an argument fits.

A leaf's spec is ``(shape, dtype, weak)``: weak for Python scalars, which NumPy
promotes as weak values. The executable itself checks only byte sizes, so every
argument is checked against its spec here before it reaches the device.

>>> import numpy as np
>>> leaf_spec(np.ones((2, 3), np.float32), "x")
((2, 3), dtype('float32'), False)
>>> leaf_spec(2.0, "lr")
((), dtype('float64'), True)
"""
from __future__ import annotations

import functools
import types

import numpy as np

from xlac import runtime
from xlac.errors import located
from xlac.ir import dtypes
from xlac.ir.sharding import NamedSharding, as_sharding

_SCALAR_DTYPES = {bool: np.dtype("bool"), int: np.dtype("int64"), float: np.dtype("float64"),
                  complex: np.dtype("complex128")}


# np.memmap only changes where the data lives, so it is taken as a plain array.
_PLAIN_DATA_ARRAYS = (np.memmap,)


def is_plain_array(leaf) -> bool:
    """Whether ``leaf`` is a NumPy array without subclass behaviour xlac would lose.

    >>> is_plain_array(np.zeros(2)), is_plain_array(np.ma.masked_array([1, 2], mask=[0, 1]))
    (True, False)
    """
    return type(leaf) is np.ndarray or isinstance(leaf, _PLAIN_DATA_ARRAYS)


def refuse_array_subclass(value, what: str) -> None:
    """TypeError naming ``what`` and the class when ``value`` is a NumPy array subclass whose behaviour
    (a mask, matrix products) xlac would silently drop.

    >>> refuse_array_subclass(np.zeros(2), "argument x")     # a plain array passes
    """
    if isinstance(value, np.ndarray) and not is_plain_array(value):
        kind = type(value)
        raise TypeError(located(f"{what}: NumPy array subclass {kind.__module__}.{kind.__qualname__} is not supported "
                        f"(xlac would drop its behaviour, e.g. a mask or matrix product); pass a plain array, "
                        f"e.g. np.asarray(x), or x.filled(...) for a masked array"))


def format_spec(spec) -> str:
    shape, dtype, weak = spec
    text = f"{dtypes.short_name(dtype)}[{','.join(map(str, shape))}]"
    return f"{text} (a Python scalar)" if weak else text


def leaf_key(leaf):
    """A cheap hashable stand-in for ``leaf_spec(leaf)`` on the cached call path; None for a leaf xlac
    does not take. Equal keys mean equal specs.

    >>> leaf_key(np.ones(2, np.float32)), leaf_key(2.0)
    (((2,), dtype('float32')), <class 'float'>)
    """
    kind = type(leaf)
    if kind in _SCALAR_DTYPES:
        return kind
    xlac_type = getattr(leaf, "_xlac_type", None)
    if xlac_type is not None:
        if type(leaf._device) is NamedSharding:      # a sharded xlac.Array: compiled for its sharding
            return xlac_type.shape, xlac_type.dtype, leaf._device
        return xlac_type.shape, xlac_type.dtype
    if kind is np.ndarray and leaf.flags.writeable:
        return leaf.shape, leaf.dtype
    if runtime.is_split_buffer(leaf):     # a sharded jax Array
        return tuple(leaf.shape), leaf.dtype, "readonly", leaf.sharding
    if kind is np.ndarray or isinstance(leaf, np.generic) or runtime.is_device_buffer(leaf):
        return tuple(leaf.shape), leaf.dtype, leaf_mutability(leaf)
    return None


_CODE_AND_NAMESPACES = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                        functools.partial)
_ARRAY_PROTOCOLS = ("__array__", "__array_interface__", "__array_struct__", "__dlpack__")


def is_static_object(value) -> bool:
    """Whether an argument is an object xlac takes as a static argument without being told: a module (the
    Array API's ``xp``), a function (a lambda, a builtin, a bound method, a ``functools.partial``), a class, a
    string, any other object that is neither an array, a scalar, nor a tuple, list, dict or None of them.

    >>> is_static_object(np), is_static_object(len), is_static_object("valid")
    (True, True, True)
    >>> is_static_object(np.ones(2)), is_static_object(2.0), is_static_object((np.ones(2), 1)), is_static_object(None)
    (False, False, False, False)
    """
    if isinstance(value, _CODE_AND_NAMESPACES):
        return True
    if value is None or isinstance(value, (tuple, list, dict, np.ndarray)) or leaf_key(value) is not None:
        return False
    return not any(hasattr(value, protocol) for protocol in _ARRAY_PROTOCOLS)    # an array xlac refuses


def by_identity(value) -> bool:
    """Whether a static object is told apart by identity (a module, a function, a class) rather than by its
    hash and ``==``."""
    return isinstance(value, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType))


def leaf_mutability(leaf) -> str:
    """What a compiled function may do to an argument, as NumPy would: "mutable" arrays (NumPy's writeable
    arrays, xlac.Arrays), "readonly" ones (read-only NumPy arrays, immutable jax Arrays), and "value"s
    (Python and NumPy scalars: augmented assignment rebinds the name).

    >>> leaf_mutability(np.zeros(2)), leaf_mutability(np.float32(1)), leaf_mutability(1.0)
    ('mutable', 'value', 'value')
    """
    if type(leaf) in _SCALAR_DTYPES or isinstance(leaf, np.generic):
        return "value"
    if isinstance(leaf, np.ndarray):
        return "mutable" if leaf.flags.writeable else "readonly"
    if getattr(leaf, "_xlac_type", None) is not None:
        return leaf.mutability               # an xlac.Array: "readonly" for the zeros of a real array's .imag
    return "readonly"


def leaf_spec(leaf, path: str):
    """The spec of one argument leaf; TypeError for a type xlac does not take."""
    kind = type(leaf)
    scalar = _SCALAR_DTYPES.get(kind)
    if scalar is not None:
        return (), scalar, True
    xlac_type = getattr(leaf, "_xlac_type", None)
    if xlac_type is not None:
        return xlac_type.shape, xlac_type.dtype, False
    refuse_array_subclass(leaf, f"argument {path}")
    if isinstance(leaf, (np.ndarray, np.generic)) or runtime.is_device_buffer(leaf):
        dtype = leaf.dtype
        if dtype not in dtypes.SUPPORTED:
            raise TypeError(f"argument {path}: dtype {dtype} is not supported; supported: "
                            + ", ".join(str(d) for d in dtypes.SUPPORTED))
        return tuple(leaf.shape), dtype, False
    raise TypeError(f"argument {path}: xlac takes NumPy arrays, xlac.Arrays, jax Arrays, Python and NumPy "
                    f"scalars, and tuples, lists, dicts and None of them; got {kind.__module__}.{kind.__qualname__}")


def check_leaf(leaf, spec, path: str) -> None:
    """TypeError unless ``leaf`` fits the compiled ``spec`` exactly: a NumPy scalar is not a Python scalar,
    as NumPy promotes the two differently (the jit cache keys them apart too)."""
    given = leaf_spec(leaf, path)
    if given != spec:
        raise TypeError(f"argument {path}: the compiled function expects {format_spec(spec)}, "
                        f"got {format_spec(given)}")


def to_buffer(leaf, spec, device, *, copy: bool = False):
    """A device buffer for one argument leaf; ``copy`` for one the executable will consume (donate).
    ``device``: a device, or the NamedSharding of an argument of a program split over a mesh."""
    if type(device) is NamedSharding:
        return _to_sharded_buffer(leaf, spec, device)
    buffer = getattr(leaf, "_buffer", None)
    if buffer is not None:
        return runtime.put_buffer(buffer, device)
    if isinstance(leaf, np.ndarray) and leaf.dtype == spec[1]:
        return runtime.to_device(leaf, device, copy=copy)
    if runtime.is_device_buffer(leaf):
        return runtime.put_buffer(leaf, device)
    return runtime.to_device(np.asarray(leaf, dtype=spec[1]), device)


def _to_sharded_buffer(leaf, spec, sharding):
    """A global buffer split as ``sharding`` says. An array already split over devices must be split so
    (a mis-sharded buffer must never reach the executable); anything else is copied there."""
    placed = getattr(leaf, "_device", None) if getattr(leaf, "_xlac_type", None) is not None else None
    if type(placed) is NamedSharding:
        if placed != sharding:
            raise ShardingMismatch(leaf, placed)
        return leaf._buffer
    if runtime.is_split_buffer(leaf):
        placed = as_sharding(leaf.sharding) if hasattr(leaf.sharding, "spec") else leaf.sharding
        if placed != sharding:
            raise ShardingMismatch(leaf, placed)
        return leaf
    return runtime.put_sharded(np.asarray(leaf, dtype=spec[1]), sharding)


class ShardingMismatch(ValueError):
    """An argument (``leaf``) split over devices otherwise (``placed``) than the compiled program expects."""

    def __init__(self, leaf, placed):
        super().__init__(placed)
        self.leaf, self.placed = leaf, placed
