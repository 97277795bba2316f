"""The cached call path: running a compiled program on argument leaves, writing the arguments it updates,
wrapping its outputs as ``xlac.Array``s, raising what its checks found. Each runner is one closure over
everything it needs, built once per executable: it runs on every call.

>>> import numpy as np, xlac
>>> f = xlac.compile(lambda x: x + 1)
>>> np.asarray(f(np.zeros(2))).tolist()
[1.0, 1.0]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlac import runtime
from xlac.argument_specs import ShardingMismatch, to_buffer
from xlac.array import Array
from xlac.ir.sharding import NamedSharding
from xlac.ir.types import TensorType
from xlac.shared_arguments import ArgumentsShareMemory, sharing_of
from xlac.trace import pytree
from xlac.trace.checks import INDEX_DTYPE, raise_if_failed


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


def make_runner(executable: runtime.Executable, places: Places, in_specs, out_types, out_tree, checks):
    """The cached call path as one closure over everything it needs: it runs on every call."""
    execute = executable.execute
    wrap = Array._from_buffer
    single_output = out_tree is pytree.LEAF
    out_type = out_types[0] if single_output else None
    in_places, out_places = places.inputs, places.outputs
    n_results = len(out_types) - (1 if checks else 0)

    def run(leaves):
        try:
            buffers = [leaf._buffer if type(leaf) is Array and leaf._device is place else to_buffer(leaf, spec, place)
                       for leaf, spec, place in zip(leaves, in_specs, in_places)]
        except ShardingMismatch as mismatch:
            places.raise_mismatch(leaves, mismatch)
        outputs = execute(buffers)
        if checks:
            _raise_if_check_failed(outputs, n_results, checks, out_places[n_results])
        if single_output:
            return wrap(outputs[0], out_type, out_places[0])
        return pytree.unflatten(out_tree, [wrap(b, t, p) for b, t, p in zip(outputs, out_types, out_places)])
    return run


def make_updating_runner(executable, places: Places, in_specs, out_types, out_tree, input_updates, in_paths, checks,
                          returned_arguments: dict):
    """The call path of a program that writes to some of its arguments: afterwards each such argument
    holds its new value. An xlac.Array's buffer is donated and replaced by the output that reuses it;
    a NumPy array is copied into. A call that fails a check writes what the program wrote before the
    failing check, as NumPy would have, then raises. A result that is an updated argument
    (``returned_arguments``) is that xlac.Array itself (for a NumPy array, an xlac.Array of its new value).
    A call where a written argument shares memory with another raises ``ArgumentsShareMemory``: the
    compiled function runs the variant of the program for that sharing (see ``xlac.shared_arguments``)."""
    execute = executable.execute
    wrap = Array._from_buffer
    n_results = len(out_types) - len(input_updates) - (1 if checks else 0)
    donated = {i for i, _ in input_updates}
    update_output = dict(input_updates)
    returned = sorted(returned_arguments.items())

    in_places, out_places = places.inputs, places.outputs

    def run(leaves):
        sharing = sharing_of(leaves, donated, in_paths)
        if sharing is not None:
            raise ArgumentsShareMemory(sharing, leaves, in_paths)
        try:
            buffers = [leaf._buffer if type(leaf) is Array and leaf._device is place
                       else to_buffer(leaf, spec, place, copy=i in donated)
                       for i, (leaf, spec, place) in enumerate(zip(leaves, in_specs, in_places))]
        except ShardingMismatch as mismatch:
            places.raise_mismatch(leaves, mismatch)
        outputs = execute(buffers)
        for i, j in input_updates:
            leaf = leaves[i]
            if type(leaf) is Array:
                leaf._buffer, leaf._device = outputs[j], out_places[j]
            else:
                np.copyto(leaf, _host_value(outputs[j], out_types[j], out_places[j]))
        if checks:
            _raise_if_check_failed(outputs, n_results, checks, out_places[n_results])
        results = [wrap(b, t, p) for b, t, p in zip(outputs[:n_results], out_types, out_places)]
        for k, i in returned:
            leaf, j = leaves[i], update_output[i]
            results.insert(k, leaf if type(leaf) is Array else wrap(outputs[j], out_types[j], out_places[j]))
        return results[0] if out_tree is pytree.LEAF else pytree.unflatten(out_tree, results)
    return run


def _host_value(buffer, t: TensorType, place) -> np.ndarray:
    if type(place) is NamedSharding:
        return runtime.to_numpy_global(buffer, t.dtype, t.shape)
    return runtime.to_numpy(buffer, t.dtype, t.shape)


def _raise_if_check_failed(outputs, at: int, checks, place) -> None:
    """Read the checks' output (status and payload, at ``at``); raise the failed check's error."""
    status, payload = _host_value(outputs[at], TensorType((2,), INDEX_DTYPE), place).tolist()
    raise_if_failed(status, payload, checks)
