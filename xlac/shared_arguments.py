"""Arguments that share memory: the same array passed twice, or views of one array (``step(f, f)``,
``smooth(a[1:], a[:-1])``, an argument that is also an array the function reads from outside).

NumPy sees one memory through several names: a write through one name shows in every read through
another, in program order. A program compiled for separate arguments would not, so each call of a
program that writes to an argument first asks :func:`sharing_of` whether a written argument shares
memory with another (cheap: one look at each array's owner), and a call where one does runs a variant
of the program specialised for that pattern of sharing (:class:`Sharing`, part of the cache key):

- the same object twice (:class:`SameObject`): one input, seen under every name;
- overlapping NumPy views (:class:`Overlapping`): the memory they span is one flat input (padded at
  the end where a view's reshape needs whole rows), and each argument is a view of it taken inside the
  program (:func:`view_chain`: slices, reshapes, a transpose, reverses), so functionalization carries
  every write into that memory; after the call it is copied back.

A view that no slice of the flat memory expresses (strides that wrap around a row, an array that
overlaps itself and is written, different dtypes over the same bytes) is refused with a ValueError
naming the arguments.

>>> import numpy as np, xlac
>>> def smooth(inp, out):
...     out[1:-1] = 0.5 * (inp[:-2] + inp[2:])
>>> a = np.array([1.0, 0.0, 0.0, 5.0])
>>> xlac.compile(smooth)(a, a)        # one array under two names, as NumPy sees it
>>> a.tolist()
[1.0, 0.5, 2.5, 5.0]
>>> b = np.array([0.0, 4.0, 0.0, 8.0])
>>> xlac.compile(smooth)(b[1:], b[:-1])    # two views of one array
>>> b.tolist()
[0.0, 6.0, 0.0, 8.0]
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from xlac.array import Array
from xlac.ir import primitives as P
from xlac.ir.graph import Graph, Node, Value
from xlac.ir.types import TensorType


@dataclass(frozen=True)
class SameObject:
    """Arguments ``leaves`` (indices into the call's leaves) that are one object, or xlac.Arrays of one
    buffer: the program takes it once."""

    leaves: tuple[int, ...]


@dataclass(frozen=True)
class Member:
    """One NumPy argument of an :class:`Overlapping` group: leaf ``leaf``, ``offset`` elements after the
    group's first byte, with element ``strides``."""

    leaf: int
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]


@dataclass(frozen=True)
class Overlapping:
    """NumPy arguments whose memory overlaps: ``size`` elements of ``dtype`` from the lowest byte any of
    them reaches to the highest, and where each lies in it."""

    members: tuple[Member, ...]
    size: int
    dtype: np.dtype

    @property
    def leaves(self) -> tuple[int, ...]:
        return tuple(m.leaf for m in self.members)


@dataclass(frozen=True)
class Sharing:
    """How a call's arguments share memory, for those groups that hold an argument the program writes."""

    groups: tuple[SameObject | Overlapping, ...]


# ---------------------------------------------------------------- detecting it, per call


def sharing_of(leaves, written, paths) -> Sharing | None:
    """How the argument ``leaves`` share memory where one of them is ``written`` (a set of indices), or
    None where none does: the common case, decided from each array's owner alone.

    >>> a = np.zeros(4)
    >>> sharing_of([a, np.ones(4)], {0}, ["x", "y"]) is None
    True
    >>> sharing_of([a, a], {0}, ["x", "y"])
    Sharing(groups=(SameObject(leaves=(0, 1)),))
    """
    owners = {}
    exact = shared = False
    for i, leaf in enumerate(leaves):
        kind = type(leaf)
        if kind is np.ndarray:
            base = leaf.base
            if base is None:
                key = id(leaf)
            elif type(base) is np.ndarray and base.base is None:
                key = id(base)
            else:                     # memory NumPy does not own (a buffer, as_strided): compare addresses
                exact = True
                continue
        elif kind is Array:
            key = id(leaf._buffer)
        elif isinstance(leaf, np.ndarray):
            exact = True
            continue
        else:
            continue
        if owners.setdefault(key, i) != i:
            shared = True
    if not (shared or exact):
        return None
    groups = [g for g in _same_buffers(leaves) + _overlapping(leaves, paths) if not written.isdisjoint(g.leaves)]
    return Sharing(tuple(groups)) if groups else None


def _same_buffers(leaves) -> list[SameObject]:
    by_buffer: dict[int, list[int]] = {}
    for i, leaf in enumerate(leaves):
        if type(leaf) is Array:
            by_buffer.setdefault(id(leaf._buffer), []).append(i)
    return [SameObject(tuple(group)) for group in by_buffer.values() if len(group) > 1]


def _overlapping(leaves, paths) -> list:
    """The groups of NumPy arrays whose bytes overlap (one object several times: a SameObject)."""
    spans = sorted((*_byte_bounds(leaf), i) for i, leaf in enumerate(leaves)
                   if isinstance(leaf, np.ndarray) and leaf.size)
    clusters, end = [], None
    for low, high, i in spans:
        if end is None or low >= end:
            clusters.append([])
            end = high
        clusters[-1].append((low, i))
        end = max(end, high)
    groups = []
    for cluster in clusters:
        if len(cluster) < 2:
            continue
        indices = tuple(i for _, i in cluster)
        if all(leaves[i] is leaves[indices[0]] for i in indices):
            groups.append(SameObject(tuple(sorted(indices))))
        else:
            groups.append(_overlapping_group(leaves, cluster, paths))
    return groups


def _byte_bounds(array: np.ndarray) -> tuple[int, int]:
    """The first byte ``array`` reaches and one past its last."""
    low = high = array.__array_interface__["data"][0]
    for n, stride in zip(array.shape, array.strides):
        if stride < 0:
            low += (n - 1) * stride
        else:
            high += (n - 1) * stride
    return low, high + array.itemsize


def _overlapping_group(leaves, cluster, paths) -> Overlapping:
    first = leaves[cluster[0][1]]
    dtype, itemsize = first.dtype, first.itemsize
    start = min(low for low, _ in cluster)
    end = max(_byte_bounds(leaves[i])[1] for _, i in cluster)
    members = []
    for _, i in sorted(cluster, key=lambda c: c[1]):
        leaf = leaves[i]
        if leaf.dtype != dtype:
            raise refusal(paths, cluster[0][1], i, f"they view it as different dtypes ({dtype} and {leaf.dtype})")
        offset = leaf.__array_interface__["data"][0] - start
        if offset % itemsize or any(s % itemsize for s in leaf.strides):
            raise refusal(paths, cluster[0][1], i, "their elements are not aligned with each other")
        members.append(Member(i, offset // itemsize, leaf.shape, tuple(s // itemsize for s in leaf.strides)))
    return Overlapping(tuple(members), (end - start) // itemsize, dtype)


def refusal(paths, i: int, k: int, why: str) -> ValueError:
    """The error for arguments that share memory in a way the compiled program cannot reproduce."""
    return ValueError(f"arguments {paths[i]} and {paths[k]} share memory, and the compiled function writes to "
                      f"one of them, but {why}: NumPy's result depends on a memory layout xlac does not "
                      f"reproduce; pass separate arrays (e.g. {paths[k]}.copy())")


# ---------------------------------------------------------------- the views, inside the program


@dataclass(frozen=True)
class ViewStep:
    """One view primitive with its attributes, applied to the previous step's result."""

    primitive: object
    attrs: dict


class NotASlice(ValueError):
    """A strided view that no chain of slices and reshapes of the flat memory gives."""


def view_chain(member: Member) -> tuple[int, list[ViewStep]]:
    """How to take ``member`` out of the flat memory it lies in: the length of flat memory the chain
    needs (at least the memory's size: the first slice cuts whole rows) and its view steps, each a view
    NumPy has too: reverse the axes with negative strides, order the others by stride, give each a unit
    (the gcd of its stride and the larger ones), reshape the flat memory into those units and slice
    each axis out of its own dimension with its step. Steps that change nothing are left in (the
    program leaves them out: :func:`share_inputs`).

    >>> n, steps = view_chain(Member(0, 5, (2, 3), (4, 1)))        # a[1:, 1:] of a 3x4 array
    >>> n, steps[1].attrs, steps[2].attrs      # reshape the flat memory into rows, slice them
    (12, {'shape': (3, 4)}, {'start': (1, 1), 'limit': (3, 4), 'strides': (1, 1)})
    """
    offset, shape, strides = member.offset, member.shape, list(member.strides)
    flipped = []
    for axis, (n, stride) in enumerate(zip(shape, strides)):
        if n > 1 and stride < 0:
            offset += (n - 1) * stride
            strides[axis] = -stride
            flipped.append(axis)
    real = [axis for axis, n in enumerate(shape) if n > 1 and strides[axis] > 0]
    spread = [axis for axis, n in enumerate(shape) if n > 1 and strides[axis] == 0]
    order = sorted(real, key=lambda axis: -strides[axis])
    units = []
    for axis in order:
        units.append(math.gcd(units[-1], strides[axis]) if units else strides[axis])
    dims, starts, limits, steps = [], [], [], []
    rest = offset
    for j, axis in enumerate(order):
        n, step = shape[axis], strides[axis] // units[j]
        start, rest = divmod(rest, units[j])
        if j and start + (n - 1) * step >= units[j - 1] // units[j]:
            raise NotASlice(f"its strides {member.strides} wrap around a row of the memory they view")
        dims.append(units[j - 1] // units[j] if j else start + (n - 1) * step + 1)
        starts.append(start)
        limits.append(start + (n - 1) * step + 1)
        steps.append(step)
    if not order:                                  # one element, repeated or not
        dims, starts, limits, steps = [rest + 1], [rest], [rest + 1], [1]
    elif units[-1] > 1:                            # the element's place inside the smallest unit
        dims.append(units[-1])
        starts.append(rest), limits.append(rest + 1), steps.append(1)
    needed = dims[0] * (units[0] if order else 1)
    chain = [ViewStep(P.slice_, {"start": (0,), "limit": (needed,), "strides": (1,)}),
             ViewStep(P.reshape, {"shape": tuple(dims)}),
             ViewStep(P.slice_, {"start": tuple(starts), "limit": tuple(limits), "strides": tuple(steps)})]
    in_order = tuple(shape[axis] for axis in order)
    chain.append(ViewStep(P.reshape, {"shape": in_order}))
    if order:
        chain.append(ViewStep(P.transpose, {"permutation": tuple(order.index(axis) for axis in real)}))
        reversed_axes = tuple(real.index(axis) for axis in flipped)
        if reversed_axes:
            chain.append(ViewStep(P.reverse, {"dimensions": reversed_axes}))
    kept = tuple(n if axis in real else 1 for axis, n in enumerate(shape))
    chain.append(ViewStep(P.reshape, {"shape": kept}))
    if spread:
        chain.append(ViewStep(P.broadcast_in_dim, {"shape": tuple(shape),
                                                   "broadcast_dimensions": tuple(range(len(shape)))}))
    return needed, chain


def share_inputs(graph: Graph, sharing: Sharing, specs, paths):
    """``graph`` (as traced, one input per argument leaf) taking each group of ``sharing`` as one input:
    the leaves no group holds, then one input per group, each grouped argument a view of its group's
    input. Returns the graph, its inputs' specs and names, and per group the flat length its input has
    (None for a SameObject group, whose input is the argument itself)."""
    grouped = {i for group in sharing.groups for i in group.leaves}
    kept = [i for i in range(len(graph.inputs)) if i not in grouped]
    inputs = [graph.inputs[i] for i in kept]
    new_specs, new_paths = [specs[i] for i in kept], [paths[i] for i in kept]
    prefix, lengths = [], []
    for group in sharing.groups:
        names = " & ".join(dict.fromkeys(paths[i] for i in group.leaves))
        if type(group) is SameObject:
            base = graph.inputs[group.leaves[0]]
            for i in group.leaves[1:]:
                prefix.append(Node(P.reshape, (base,), {"shape": base.type.shape}, (graph.inputs[i],), view=True))
            inputs.append(base)
            new_specs.append(specs[group.leaves[0]])
            lengths.append(None)
        else:
            chains = []
            for member in group.members:
                try:
                    chains.append(view_chain(member))
                except NotASlice as why:
                    other = next(m.leaf for m in group.members if m.leaf != member.leaf)
                    raise refusal(paths, other, member.leaf, f"{paths[member.leaf]}: {why}") from None
            length = max([group.size] + [needed for needed, _ in chains])
            base = Value(TensorType((length,), group.dtype))
            for member, (_, chain) in zip(group.members, chains):
                prefix.extend(_view_nodes(base, chain, graph.inputs[member.leaf]))
            inputs.append(base)
            new_specs.append(((length,), group.dtype, False))
            lengths.append(length)
        new_paths.append(names)
    graph = dataclasses.replace(graph, inputs=inputs, input_names=list(new_paths), nodes=prefix + list(graph.nodes))
    return graph, tuple(new_specs), new_paths, lengths


def _view_nodes(base: Value, chain: list[ViewStep], target: Value) -> list[Node]:
    """View nodes applying ``chain`` to ``base``, the last one defining ``target`` (steps that change
    nothing are left out)."""
    nodes, value = [], base
    for step in chain:
        (result_type,) = step.primitive.infer_types(value.type, **step.attrs)
        if _changes_nothing(step, value.type):
            continue
        result = Value(result_type)
        nodes.append(Node(step.primitive, (value,), step.attrs, (result,), view=True))
        value = result
    if not nodes:
        return [Node(P.reshape, (base,), {"shape": target.type.shape}, (target,), view=True)]
    assert nodes[-1].results[0].type == target.type, (nodes[-1].results[0].type, target.type)
    nodes[-1] = dataclasses.replace(nodes[-1], results=(target,))
    return nodes


def _changes_nothing(step: ViewStep, operand: TensorType) -> bool:
    attrs = step.attrs
    if step.primitive is P.slice_:
        return (all(s == 0 for s in attrs["start"]) and tuple(attrs["limit"]) == operand.shape
                and all(s == 1 for s in attrs["strides"]))
    if step.primitive is P.reshape:
        return tuple(attrs["shape"]) == operand.shape
    if step.primitive is P.transpose:
        return tuple(attrs["permutation"]) == tuple(range(len(operand.shape)))
    return False


# ---------------------------------------------------------------- the call


def shared_runner(run, sharing: Sharing, n_leaves: int, lengths: list):
    """The call path of a program made by :func:`share_inputs`: ``run`` takes the leaves no group holds
    and one array per group; afterwards each Overlapping group's flat memory is copied back."""
    grouped = {i for group in sharing.groups for i in group.leaves}
    kept = [i for i in range(n_leaves) if i not in grouped]

    def call(leaves):
        memories = [_memory(leaves, group, length) for group, length in zip(sharing.groups, lengths)]
        try:
            return run([leaves[i] for i in kept] + [padded for padded, _ in memories])
        finally:
            for group, (padded, memory) in zip(sharing.groups, memories):
                if memory is not None:
                    np.copyto(memory, padded[:memory.shape[0]])
                else:
                    _share_new_buffer([leaves[i] for i in group.leaves])
    return call


def _memory(leaves, group, length):
    """The array a group's input is given (padded to ``length``) and the flat NumPy memory to copy it
    back into after the call (None for a SameObject group: the runner writes its argument itself)."""
    if type(group) is SameObject:
        return leaves[group.leaves[0]], None
    member = group.members[0]
    leaf = leaves[member.leaf]
    interface = dict(leaf.__array_interface__, shape=(group.size,), strides=None)
    interface["data"] = (interface["data"][0] - member.offset * leaf.itemsize, False)
    memory = np.asarray(_Memory(interface, leaf))
    padded = np.empty(length, group.dtype)
    padded[:group.size] = memory
    return padded, memory


def _share_new_buffer(arrays) -> None:
    """xlac.Arrays that shared a buffer share its replacement (the runner updated the first)."""
    first = arrays[0]
    for array in arrays[1:]:
        if type(array) is Array and array is not first:
            array._buffer, array._device = first._buffer, first._device


class _Memory:
    """An ``__array_interface__`` over memory an argument lies in, keeping the argument alive."""

    def __init__(self, interface: dict, owner):
        self.__array_interface__ = interface
        self.owner = owner
