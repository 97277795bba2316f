"""Eager execution: an ``xlac.numpy`` call outside a compiled function runs on the device.

Its array arguments are dynamic, everything else is static, and one executable is
compiled per signature and cached. This module registers :func:`eager_call` with
``xlac.numpy``'s dispatcher (:func:`xlac.numpy._dispatch.set_eager_runner`), which
sits below the compiler and so cannot import it.

>>> import numpy as np, xlac, xlac.numpy as xnp
>>> a = xlac.asarray(np.arange(3.0))
>>> np.asarray(xnp.exp(a) > 1)
array([False,  True,  True])
"""
from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from xlac import runtime
from xlac.api import TraceInputs, trace_function
from xlac.argument_specs import refuse_array_subclass
from xlac.array import Array
from xlac.ir import dtypes
from xlac.ir.exact import exact_key
from xlac.ir.sharding import NamedSharding
from xlac.numpy._dispatch import set_eager_runner
from xlac.sharding import sharding_of
from xlac.trace import pytree
from xlac.trace.state import autocast_state


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
    placements = tuple(leaves[i]._device for i in dynamic_positions if isinstance(leaves[i], Array))
    device = placements[0] if placements else runtime.default_device()
    compiled = _compiled_for(fn, tree, leaves, dynamic_positions, specs, statics, device, placements)
    return compiled.run([leaves[i] for i in dynamic_positions])


def _compiled_for(fn, tree, leaves, dynamic_positions, specs, statics, device, placements=()):
    """``device``: the first array argument's device or sharding; ``placements``: every array argument's
    (which the key needs when arrays are split over devices)."""
    key = (fn, tree, tuple(specs), tuple(statics), device, placements, autocast_state())
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
    compiled = _compiled_for(fn, tree, leaves, positions, specs, statics, device,
                             tuple(args[i]._device for i in positions))
    if len(_positional_runners) >= _eager_cache.capacity:
        _positional_runners.clear()
    run = compiled.run
    if len(positions) == len(args):
        return lambda args: run(args)
    return lambda args: run([args[i] for i in positions])


def _compile_eager(fn, tree, leaves, dynamic_positions, specs, device):
    def rebuild(tracers):
        full = list(leaves)
        for i, t in zip(dynamic_positions, tracers):
            full[i] = t
        args, kwargs = pytree.unflatten(tree, full)
        return args, kwargs
    paths = [f"arg{i}" for i in range(len(dynamic_positions))]
    shardings = [sharding_of(leaves[i]) for i in dynamic_positions]
    if type(device) is NamedSharding:
        device = device.mesh.device_list[0]
    numpy_leaves = frozenset(k for k, i in enumerate(dynamic_positions) if type(leaves[i]) is np.ndarray)
    traced = trace_function(fn, fn.__name__, TraceInputs(tree, specs, paths, rebuild, shardings=shardings,
                                                         numpy_leaves=numpy_leaves), device)
    return traced.lower().compile()


set_eager_runner(eager_call)
