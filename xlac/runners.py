"""The cached call path: running a compiled program on argument leaves, writing the arguments it updates,
wrapping its outputs as ``xlac.Array``s, raising what its checks found. Each runner is one closure over
everything it needs, built once per executable: it runs on every call.

>>> import numpy as np, xlac
>>> f = xlac.compile(lambda x: x + 1)
>>> np.asarray(f(np.zeros(2))).tolist()
[1.0, 1.0]
"""
from __future__ import annotations

import functools
import operator
from dataclasses import dataclass

import numpy as np

from xlac import runtime
from xlac.argument_specs import ShardingMismatch, to_buffer
from xlac.array import Array
from xlac.ir.exact import exact_key
from xlac.ir.sharding import NamedSharding
from xlac.ir.types import TensorType
from xlac.shared_arguments import ArgumentsShareMemory, sharing_of
from xlac.trace import pytree
from xlac.trace.checks import INDEX_DTYPE, raise_if_failed
from xlac.trace.state import autocast_state, tracing_here


class OutsideArrayChanged(Exception):
    """An array a compiled function reads from outside its arguments changed shape or dtype, or one NumPy
    read while tracing changed contents: trace again."""


@dataclass
class Places:
    """Where each argument and output of an executable lives: a device each, or on a mesh a NamedSharding
    each (``paths``: the arguments' names, for errors)."""

    inputs: list
    outputs: list
    paths: list

    def raise_mismatch(self, leaves, mismatch: ShardingMismatch):
        """ValueError naming the argument split otherwise than the executable expects."""
        i = next(i for i, leaf in enumerate(leaves) if leaf is mismatch.leaf)
        raise ValueError(f"argument {self.paths[i]}: the compiled function expects it split as "
                         f"{self.inputs[i]!r}, got an array split as {mismatch.placed!r}; pass in_shardings "
                         f"that match it, or move it with xlac.device_put") from None


def call_key(args, kwargs=None, static_positions=frozenset(), static_names=frozenset()):
    """``(key, leaves)`` for a call whose arguments (positional ``args``, keyword ``kwargs``) are
    xlac.Arrays, writeable NumPy arrays and Python scalars, in tuples, lists, dicts and None, and hashable
    values at ``static_positions`` and ``static_names`` (static arguments, keyed by their exact value), made
    outside any trace; None for any other call (it takes the general path, which inlines a call made while
    tracing). The leaves, static arguments left out, are in ``pytree.flatten((args, kwargs))``'s order.
    Calls with equal keys have the same signature (structure, shapes, dtypes, static values, autocast state)
    and leaves of the same kinds: an xlac.Array's place, a NumPy array (see :func:`transfers_for`). The
    cached call path computes it on every call, in one walk.

    >>> key, leaves = call_key((np.zeros(2), {"b": 1.0, "a": None}))
    >>> key == call_key((np.ones(2), {"a": None, "b": 2.0}))[0], leaves[1]
    (True, 1.0)
    >>> call_key((np.zeros(2), "valid")) is None
    True
    >>> call_key((np.zeros(2),), {"n": 3}, static_names={"n"})[0] == call_key((np.zeros(2),), {"n": 3.0},
    ...                                                                   static_names={"n"})[0]
    False
    """
    if tracing_here():          # called inside a trace: inlined there (CompiledFunction._call)
        return None
    key = [autocast_state(), len(args)]
    leaves = []
    items = _dynamic(enumerate(args), static_positions, key) if static_positions else args
    if kwargs and items is not None:
        names = sorted(kwargs)
        key.append(tuple(names))
        named = _dynamic(((name, kwargs[name]) for name in names), static_names, key)
        items = None if named is None else [*items, *named]
    return (tuple(key), leaves) if items is not None and _walk(items, key, leaves) else None


def _dynamic(arguments, statics, key: list) -> list | None:
    """The values of ``arguments`` (pairs of position or name and value) not in ``statics``; each static
    one's exact value appended to ``key``. None where a static one is unhashable (the general path says so)."""
    dynamic = []
    for where, item in arguments:
        if where not in statics:
            dynamic.append(item)
            continue
        try:
            hash(item)
            key.append(exact_key(item))
        except TypeError:
            return None
    return dynamic


def _walk(items, key: list, leaves: list) -> bool:
    """Append each item's part of the key, and its leaves; False at anything ``call_key`` does not take.
    Each part starts with what tells its kind: a shape (then dtype, and place or ``np.ndarray``), a scalar
    type, a container type (then its length or its keys), or None."""
    for item in items:
        kind = type(item)
        if kind is Array:
            t = item._xlac_type
            key += (t.shape, t.dtype, item._device)
            leaves.append(item)
        elif kind is np.ndarray:
            if not item.flags.writeable:      # read-only: traced otherwise (see leaf_mutability)
                return False
            key += (item.shape, item.dtype, kind)
            leaves.append(item)
        elif kind is float or kind is int or kind is bool:
            key.append(kind)
            leaves.append(item)
        elif kind is tuple or kind is list:
            key += (kind, len(item))
            if not _walk(item, key, leaves):
                return False
        elif kind is dict:
            try:
                names = sorted(item)
            except TypeError:
                return False
            key += (kind, tuple(names))
            if not _walk([item[name] for name in names], key, leaves):
                return False
        elif item is None:
            key.append(None)
        else:
            return False
    return True


def make_runner(executable: runtime.Executable, places: Places, in_specs, out_types, out_tree, checks):
    """The cached call path as one closure over everything it needs, ``run(leaves)``: it runs on every call.
    ``for_leaves(leaves)``: the same made for leaves of these kinds (see :func:`transfers_for`); where they
    are NumPy arrays, Python scalars and xlac.Arrays already in place, through jaxlib's C++ call path
    (``runtime.direct_caller``), which puts the NumPy arrays and scalars without Python arrays between."""
    execute = executable.execute
    wrap = Array._from_buffer
    single_output = out_tree is pytree.LEAF
    out_type = out_types[0] if single_output else None
    out_places = places.outputs
    n_results = len(out_types) - (1 if checks else 0)
    direct_call = functools.cache(lambda: runtime.direct_caller(executable, [TensorType(s[0], s[1]) for s in in_specs]))

    def results(outputs):
        if checks:
            _raise_if_check_failed(outputs, n_results, checks, out_places[n_results])
        if single_output:
            return wrap(outputs[0], out_type, out_places[0])
        return pytree.unflatten(out_tree, [wrap(b, t, p) for b, t, p in zip(outputs, out_types, out_places)])

    def runner(transfers):
        resident = all(transfer is _buffer_of for transfer in transfers)

        def run(leaves):
            try:
                buffers = [leaf._buffer for leaf in leaves] if resident else list(map(operator.call, transfers, leaves))
            except ShardingMismatch as mismatch:
                places.raise_mismatch(leaves, mismatch)
            return results(execute(buffers))
        return run

    def direct_runner(leaves):
        """``run`` through the C++ call path for leaves of these kinds, or None where it cannot take them."""
        call = direct_call() if _direct_kinds(leaves, in_specs, places.inputs) else None
        if call is None:
            return None
        if all(type(leaf) is not Array for leaf in leaves):
            return lambda leaves: results(call(*leaves))
        picks = [_buffer_of if type(leaf) is Array else _itself for leaf in leaves]
        return lambda leaves: results(call(*map(operator.call, picks, leaves)))

    def for_leaves(leaves):
        return direct_runner(leaves) or runner(transfers_for(leaves, in_specs, places.inputs))
    return runner(any_transfers(in_specs, places.inputs)), for_leaves


def make_updating_runner(executable, places: Places, in_specs, out_types, out_tree, input_updates, in_paths, checks,
                          returned_arguments: dict, windows):
    """The call path of a program that writes to some of its arguments: afterwards each such argument
    holds its new value. An xlac.Array's buffer is donated and replaced by the output that reuses it;
    a NumPy array is copied into, or written the windows the program updated (``windows``: a
    ``xlac.window_writes.WindowWriters``). A call that fails a check writes what the program wrote before the
    failing check, as NumPy would have, then raises. A result that is an updated argument
    (``returned_arguments``) is that argument itself, as in NumPy: the xlac.Array or the NumPy array, each
    holding its new value (a leaf of another kind, such as a jax Array, gives an xlac.Array of it).
    A call where a written argument shares memory with another raises ``ArgumentsShareMemory``: the
    compiled function runs the variant of the program for that sharing (see ``xlac.shared_arguments``).
    Returns ``run`` and ``for_leaves`` as :func:`make_runner`."""
    execute = executable.execute
    wrap = Array._from_buffer
    n_results = len(out_types) - len(input_updates) - (1 if checks else 0) - windows.n_outputs
    write_windows = windows.writers
    donated = {i for i, _ in input_updates}
    update_output = dict(input_updates)
    returned = sorted(returned_arguments.items())
    out_places = places.outputs

    def runner(transfers):
        def run(leaves):
            sharing = sharing_of(leaves, donated, in_paths)
            if sharing is not None:
                raise ArgumentsShareMemory(sharing, leaves, in_paths)
            try:
                buffers = list(map(operator.call, transfers, leaves))
            except ShardingMismatch as mismatch:
                places.raise_mismatch(leaves, mismatch)
            outputs = execute(buffers)
            for i, j in input_updates:
                leaf = leaves[i]
                if type(leaf) is Array:
                    leaf._buffer, leaf._device = outputs[j], out_places[j]
                elif i in write_windows:
                    write_windows[i](leaf, outputs)
                else:
                    np.copyto(leaf, _host_value(outputs[j], out_types[j], out_places[j]))
            if checks:
                _raise_if_check_failed(outputs, n_results, checks, out_places[n_results])
            results = [wrap(b, t, p) for b, t, p in zip(outputs[:n_results], out_types, out_places)]
            for k, i in returned:
                leaf, j = leaves[i], update_output[i]
                itself = type(leaf) is Array or type(leaf) is np.ndarray
                results.insert(k, leaf if itself else wrap(outputs[j], out_types[j], out_places[j]))
            return results[0] if out_tree is pytree.LEAF else pytree.unflatten(out_tree, results)
        return run
    return runner(any_transfers(in_specs, places.inputs, donated)), \
        lambda leaves: runner(transfers_for(leaves, in_specs, places.inputs, donated))


_buffer_of = operator.attrgetter("_buffer")


_PYTHON_SCALARS = (bool, int, float)     # those call_key takes


def _itself(leaf):
    return leaf


def _direct_kinds(leaves, in_specs, in_places) -> bool:
    """Whether jaxlib's C++ call path serves leaves of these kinds better than :func:`transfers_for`'s: some
    NumPy arrays (each of its parameter's dtype) or Python scalars, the other leaves xlac.Arrays already in
    place (a program on a mesh takes the Python path)."""
    puts = 0
    for leaf, spec, place in zip(leaves, in_specs, in_places):
        kind = type(leaf)
        if type(place) is NamedSharding:
            return False
        if kind is np.ndarray and leaf.dtype == spec[1] and not spec[2] or kind in _PYTHON_SCALARS and spec[2]:
            puts += 1
        elif kind is not Array or leaf._device != place:
            return False
    return puts > 0


def any_transfers(in_specs, in_places, donated=frozenset()) -> list:
    """Per argument, ``transfer(leaf) -> buffer`` for a leaf of any kind the compiled program takes
    (``donated``: the positions whose buffer the program consumes, so a NumPy array there is copied)."""
    return [functools.partial(_to_buffer, spec=spec, place=place, copy=i in donated)
            for i, (spec, place) in enumerate(zip(in_specs, in_places))]


def transfers_for(leaves, in_specs, in_places, donated=frozenset()) -> list:
    """As :func:`any_transfers`, for leaves of these kinds: an xlac.Array already where the program wants it
    gives its buffer, a NumPy array is put through a transfer made for its shape and dtype. The cached call
    path keys calls by these kinds (an xlac.Array's type and place, a NumPy array's shape and dtype), so
    these serve every call with the same key.

    >>> import xlac
    >>> x = xlac.asarray(np.zeros(2))
    >>> transfers_for([x], [((2,), x.dtype, False)], [x.device])[0](x) is x._buffer
    True
    """
    transfers = []
    for i, (leaf, spec, place) in enumerate(zip(leaves, in_specs, in_places)):
        if type(leaf) is Array and leaf._device == place:
            transfers.append(_buffer_of)
        elif type(leaf) is np.ndarray and type(place) is not NamedSharding and leaf.dtype == spec[1]:
            transfers.append(runtime.host_putter(spec[0], spec[1], place, copy=i in donated))
        else:
            transfers.append(functools.partial(_to_buffer, spec=spec, place=place, copy=i in donated))
    return transfers


def _to_buffer(leaf, spec, place, copy: bool):
    if type(leaf) is Array and leaf._device is place:
        return leaf._buffer
    return to_buffer(leaf, spec, place, copy=copy)


def _host_value(buffer, t: TensorType, place) -> np.ndarray:
    if type(place) is NamedSharding:
        return runtime.to_numpy_global(buffer, t.dtype, t.shape)
    return runtime.to_numpy(buffer, t.dtype, t.shape)


def _raise_if_check_failed(outputs, at: int, checks, place) -> None:
    """Read the checks' output (status and payload, at ``at``); raise the failed check's error."""
    status, payload = _host_value(outputs[at], TensorType((2,), INDEX_DTYPE), place).tolist()
    raise_if_failed(status, payload, checks)
