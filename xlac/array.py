"""``xlac.Array``, an array on a device, and eager dispatch of ``xlac.numpy`` functions.

Outside a compiled function, an ``xlac.numpy`` call runs eagerly: its array
arguments are dynamic, everything else is static, and one executable is compiled
per signature and cached.

>>> import numpy as np, xlac, xlac.numpy as xnp
>>> a = xlac.asarray(np.arange(3.0))
>>> a
Array([0., 1., 2.], dtype=float64)
>>> np.asarray(xnp.exp(a) > 1)
array([False,  True,  True])
"""
from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from xlac import runtime
from xlac.ir import dtypes
from xlac.ir.exact import exact_key
from xlac.ir.types import TensorType
from xlac.operators import ArrayOperators
from xlac.protocols import array_function, array_ufunc
from xlac.argument_specs import refuse_array_subclass
from xlac.trace import pytree
from xlac.trace.state import autocast_state


class Array(ArrayOperators):
    """A handle to a buffer on a device, with NumPy's array interface.

    Made by compiled functions, by eager ``xlac.numpy`` calls and by :func:`asarray`.
    Passing it back into a compiled function reuses the device buffer.
    """

    # mutability: "mutable", or "readonly" (the zeros of a real array's .imag, read-only as in NumPy)
    __slots__ = ("_buffer", "_xlac_type", "_device", "mutability", "__weakref__")
    __array_ufunc__ = array_ufunc         # np.exp(x), np.add.reduce(x), ndarray + x: xlac.numpy
    __array_function__ = array_function   # np.sum(x), np.split(x, 3), np.linalg.norm(x): xlac.numpy
    __array_priority__ = 1000

    def __init__(self, *args, **kwargs):
        raise TypeError("xlac.Array is not constructed directly; use xlac.asarray(x)")

    @classmethod
    def _from_buffer(cls, buffer, type: TensorType, device) -> "Array":
        self = object.__new__(cls)
        self._buffer = buffer
        self._xlac_type = type
        self._device = device
        self.mutability = "mutable"
        return self

    @property
    def shape(self) -> tuple[int, ...]:
        return self._xlac_type.shape

    @property
    def dtype(self) -> np.dtype:
        return self._xlac_type.dtype

    @property
    def device(self):
        return self._device

    def __array__(self, dtype=None, copy=None):
        host = runtime.to_numpy(self._buffer, self.dtype, self.shape)
        if dtype is not None and np.dtype(dtype) != host.dtype:
            return host.astype(dtype)
        return np.array(host, copy=True) if copy else host

    def __xlac_array__(self) -> np.ndarray:
        return self.__array__()

    def __dlpack__(self, *args, **kwargs):
        return self._buffer.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._buffer.__dlpack_device__()

    def _store(self, new: "Array") -> None:
        """In-place update: this handle now refers to ``new``'s buffer (views of eager Arrays are copies).
        Inside a compiled function ``new`` is traced: the write goes to the implicit argument standing
        for this array, and lands in it when the call returns."""
        trace = getattr(new, "_trace", None)       # a traced value: this Array is read from outside
        if trace is not None:
            trace.capture(self)._store(new)
            return
        self._buffer, self._device = new._buffer, new._device

    def _store_retyped(self, new: "Array") -> None:
        """This handle now refers to ``new``'s buffer, taking its shape and dtype (``inplace_update``)."""
        self._buffer, self._device, self._xlac_type = new._buffer, new._device, new._xlac_type

    def block_until_ready(self) -> "Array":
        self._buffer.block_until_ready()
        return self

    def __repr__(self) -> str:
        body = np.array2string(self.__array__(), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype})"

    def __str__(self) -> str:
        return str(self.__array__())

    def _scalar(self, convert):
        if self.size != 1:
            raise TypeError(f"only arrays of size 1 can be converted to Python scalars, this one has shape {self.shape}")
        return convert(self.__array__().reshape(()))

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous. "
                             "Use a.any() or a.all()")
        return bool(self.__array__().reshape(()))

    def __int__(self) -> int:
        return self._scalar(int)

    def __float__(self) -> float:
        return self._scalar(float)

    def __complex__(self) -> complex:
        return self._scalar(complex)

    def __index__(self) -> int:
        if not dtypes.is_int(self.dtype):
            raise TypeError(f"only integer arrays can be used as an index, this one is {self.dtype}")
        return self._scalar(int)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def item(self):
        return self.__array__().item()

    def tolist(self):
        return self.__array__().tolist()


def asarray(x, dtype=None, device=None) -> Array:
    """An ``xlac.Array`` holding a copy of ``x`` (a NumPy array, scalar, nested list or Array) on ``device``.

    >>> asarray([1, 2], dtype="float32")
    Array([1., 2.], dtype=float32)
    """
    if isinstance(x, Array) and dtype is None and device is None:
        return x
    refuse_array_subclass(x, "xlac.asarray")
    target = runtime.get_device(device)
    host = np.asarray(x, dtype=dtypes.canonical(dtype) if dtype is not None else None)
    if host.dtype not in dtypes.SUPPORTED:
        raise TypeError(f"xlac.asarray: dtype {host.dtype} is not supported")
    buffer = runtime.to_device(host, target, copy=True)
    if buffer.dtype != host.dtype:         # 64-bit data travelled as bytes: retype it on the device
        return _retype(buffer, TensorType(host.shape, host.dtype), target)
    return Array._from_buffer(buffer, TensorType(host.shape, host.dtype), target)


def _retype(buffer, type: TensorType, device) -> Array:
    """Copy ``buffer`` through a cached identity executable, which gives 64-bit data its real type."""
    key = (device, type)
    compiled = _identities.get(key)
    if compiled is None:
        from xlac.api import trace_function
        spec = (type.shape, type.dtype, False)
        traced = trace_function(lambda x: x, "asarray", pytree.LEAF, [spec], ["x"], lambda t: (t, {}), device)
        compiled = _identities[key] = traced.lower().compile()
    return Array._from_buffer(compiled.executable.execute([buffer])[0], type, device)


_identities: dict = {}


class _EagerCache:
    """Compiled executables for eager calls, least recently used dropped past ``capacity``."""

    def __init__(self, capacity: int = 4096):
        self.capacity = capacity
        self.entries: OrderedDict = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key):
        entry = self.entries.get(key)
        if entry is not None:
            self.entries.move_to_end(key)
        return entry

    def put(self, key, value):
        with self.lock:
            self.entries[key] = value
            if len(self.entries) > self.capacity:
                self.entries.popitem(last=False)


_eager_cache = _EagerCache()


def _is_array_leaf(leaf) -> bool:
    """Arrays are the dynamic arguments of an eager call; scalars, NumPy's included, are static."""
    return isinstance(leaf, (Array, np.ndarray)) or runtime.is_device_buffer(leaf)


def _freeze(leaf):
    """A static argument as a cache key: by type and bits (see ``exact_key``)."""
    if isinstance(leaf, slice):
        return ("slice", exact_key(leaf.start), exact_key(leaf.stop), exact_key(leaf.step))
    return exact_key(leaf)


_SCALAR_TYPES = (int, float, bool)
_STATIC_KEYWORD_TYPES = (type(None), int, float, bool, str, np.dtype, type)
# Calls whose positional arguments are xlac.Arrays or Python scalars and whose keywords are simple constants
# (``a + b``, ``xnp.exp(a)``, ``a.sum(axis=0)``): (fn, autocast state, argument types, keywords) -> the
# cached executable's runner, found without flattening the arguments.
_positional_runners: dict = {}


def _positional_key(fn, args, kwargs):
    key = [fn, autocast_state()]
    for arg in args:
        kind = type(arg)
        if kind is Array:
            t = arg._xlac_type
            key.append((t.shape, t.dtype, arg._device))
        elif kind in _SCALAR_TYPES:
            key.append(exact_key(arg))
        else:
            return None
    if kwargs:
        for name, value in kwargs.items():
            if type(value) not in _STATIC_KEYWORD_TYPES:
                return None
            key.append((name, exact_key(value)))
    return tuple(key)


def eager_call(fn, args, kwargs):
    """Run the xlac.numpy function ``fn`` on concrete arguments: compile once per signature, execute."""
    key = _positional_key(fn, args, kwargs)
    if key is not None:
        run = _positional_runners.get(key)
        if run is None:
            run = _positional_runners[key] = _positional_runner(fn, args, kwargs)
        return run(args)
    leaves, tree = pytree.flatten((args, kwargs))
    dynamic_positions, specs, statics = [], [], []
    for i, leaf in enumerate(leaves):
        if _is_array_leaf(leaf):
            refuse_array_subclass(leaf, f"xlac.numpy.{fn.__name__}")
            if isinstance(leaf, Array):
                t = leaf._xlac_type
                specs.append((t.shape, t.dtype, False))
            else:
                specs.append((tuple(leaf.shape), dtypes.canonical(leaf.dtype), False))
            dynamic_positions.append(i)
        else:
            try:
                statics.append((i, type(leaf), _freeze(leaf)))
            except TypeError:
                raise TypeError(f"xlac.numpy.{fn.__name__}: argument {leaf!r} of type {type(leaf).__name__} "
                                "is neither an array nor a hashable constant") from None
    device = runtime.default_device()
    for i in dynamic_positions:
        if isinstance(leaves[i], Array):
            device = leaves[i].device
            break
    compiled = _compiled_for(fn, tree, leaves, dynamic_positions, specs, statics, device)
    return compiled.run([leaves[i] for i in dynamic_positions])


def _compiled_for(fn, tree, leaves, dynamic_positions, specs, statics, device):
    key = (fn, tree, tuple(specs), tuple(statics), device, autocast_state())
    compiled = _eager_cache.get(key)
    if compiled is None:
        compiled = _compile_eager(fn, tree, leaves, dynamic_positions, specs, device)
        _eager_cache.put(key, compiled)
    return compiled


def _positional_runner(fn, args, kwargs):
    """The runner for a call signature of :func:`_positional_key`: compiled (or found) through the general
    path once. Array arguments are the leading leaves, positional arguments coming first."""
    leaves, tree = pytree.flatten((args, kwargs))
    positions = [i for i, arg in enumerate(args) if type(arg) is Array]
    specs = [(args[i].shape, args[i].dtype, False) for i in positions]
    statics = [(i, type(leaf), _freeze(leaf)) for i, leaf in enumerate(leaves) if type(leaf) is not Array]
    device = args[positions[0]].device if positions else runtime.default_device()
    compiled = _compiled_for(fn, tree, leaves, positions, specs, statics, device)
    if len(_positional_runners) >= _eager_cache.capacity:
        _positional_runners.clear()
    run = compiled.run
    if len(positions) == len(args):
        return lambda args: run(args)
    return lambda args: run([args[i] for i in positions])


def _compile_eager(fn, tree, leaves, dynamic_positions, specs, device):
    from xlac.api import trace_function

    def rebuild(tracers):
        full = list(leaves)
        for i, t in zip(dynamic_positions, tracers):
            full[i] = t
        args, kwargs = pytree.unflatten(tree, full)
        return args, kwargs
    paths = [f"arg{i}" for i in range(len(dynamic_positions))]
    traced = trace_function(fn, fn.__name__, tree, specs, paths, rebuild, device)
    return traced.lower().compile()
