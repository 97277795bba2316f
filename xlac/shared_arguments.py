"""Arguments that share memory: the same array passed twice, or views of one array (``step(f, f)``,
``smooth(a[1:], a[:-1])``, an argument that is also an array the function reads from outside).

NumPy sees one memory through several names: a write through one name shows in every read through
another, in program order. A program compiled for separate arguments would not, so the call path of a
program that writes to an argument asks :func:`sharing_of` whether a written argument shares memory with
another (cheap: one look at each array's owner). Where one does it raises :class:`ArgumentsShareMemory`,
and the compiled function runs a variant of the program for that pattern of sharing (:class:`Sharing`,
cached with the signature: ``(signature, sharing)``), traced with the arguments taken as views of fewer
inputs before the function runs (:class:`SharedInputs`), so that every write, in loops and branches
too, reaches the one memory the trace sees:

- one object passed several times (:class:`SameObject`): one input, seen under every name;
- overlapping NumPy views (:class:`Overlapping`): one input holding the flat memory they span (padded at
  the end where a view's reshape needs whole rows), each argument a view of it (:func:`view_chain`:
  slices, reshapes, a transpose, reverses), the memory copied back after the call;
- a group holding an array the function reads from outside its arguments: the arguments are views of
  that array's implicit argument.

A float array viewing the real or imaginary parts of complex memory (``z.real``) is a view of the
complex input's ``real``/``imag``. Sharing no such view reproduces (strides that wrap around a row, a
written array that repeats its elements, other dtypes over the same bytes, two outside arrays, a
program split over a mesh) is refused with a ValueError naming the arguments.

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

import math
from dataclasses import dataclass

import numpy as np

from xlac.array import Array
from xlac.trace import ops
from xlac.trace.state import current_trace
from xlac.trace.views import view_of


@dataclass(frozen=True)
class SameObject:
    """Arguments ``leaves`` (indices into the call's leaves) that are one object: the program takes it
    once."""

    leaves: tuple[int, ...]


@dataclass(frozen=True)
class Member:
    """One NumPy argument of an :class:`Overlapping` group: leaf ``leaf``, ``offset`` elements after the
    group's first byte, with element ``strides``; ``part``: "real" or "imag" for a view of the real or
    imaginary parts of complex memory (``offset`` and ``strides`` count its complex elements)."""

    leaf: int
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    part: str | None = None


@dataclass(frozen=True)
class Overlapping:
    """NumPy arguments whose memory overlaps: ``size`` elements of ``dtype`` from the lowest byte any of
    them reaches to the highest, and where each lies in it; ``written``: one the program writes to."""

    members: tuple[Member, ...]
    size: int
    dtype: np.dtype
    written: int

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
    None where none does: the common case, decided from each array's owner alone. ``paths`` name the
    leaves in the error for sharing no variant reproduces.

    >>> a = np.zeros(4)
    >>> sharing_of([a, np.ones(4)], {0}, ["x", "y"]) is None
    True
    >>> sharing_of([a, a], {0}, ["x", "y"])
    Sharing(groups=(SameObject(leaves=(0, 1)),))
    """
    owners = {}
    same = []                      # (first index, index) of one object met twice
    exact = False                  # two arrays on one memory, or memory whose owner NumPy does not know
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
        first = owners.setdefault(key, i)
        if first != i:
            if leaves[first] is leaf:
                same.append((first, i))
            else:
                exact = True
    if not (same or exact):
        return None
    bounds = {i: _byte_bounds(leaf) for i, leaf in enumerate(leaves) if exact and isinstance(leaf, np.ndarray)}
    clusters = _clusters(leaves, bounds) if exact else _same_objects(same)
    groups = [_group(leaves, cluster, written, paths, bounds) for cluster in clusters
              if not written.isdisjoint(cluster)]
    return Sharing(tuple(groups)) if groups else None


def _same_objects(pairs) -> list[list[int]]:
    """The indices of each object met more than once, from ``(first index, index)`` pairs."""
    clusters: dict[int, list[int]] = {}
    for first, i in pairs:
        clusters.setdefault(first, [first]).append(i)
    return list(clusters.values())


def _clusters(leaves, bounds: dict) -> list[list[int]]:
    """The leaves whose memory overlaps, in groups of two or more: NumPy arrays whose bytes overlap (by
    their ``bounds``), xlac.Arrays of one buffer."""
    spans = sorted((low, high, i) for i, (low, high, _) in bounds.items() if leaves[i].size)
    clusters, end = [], None
    for low, high, i in spans:
        if end is None or low >= end:
            clusters.append([])
            end = high
        else:
            end = max(end, high)
        clusters[-1].append(i)
    by_buffer: dict[int, list[int]] = {}
    for i, leaf in enumerate(leaves):
        if type(leaf) is Array:
            by_buffer.setdefault(id(leaf._buffer), []).append(i)
    return [sorted(c) for c in clusters + list(by_buffer.values()) if len(c) > 1]


def _byte_bounds(array: np.ndarray) -> tuple[int, int, int]:
    """The first byte ``array`` reaches, one past its last, and the address of its first element."""
    address = low = high = array.__array_interface__["data"][0]
    for n, stride in zip(array.shape, array.strides):
        if stride < 0:
            low += (n - 1) * stride
        else:
            high += (n - 1) * stride
    return low, high + array.itemsize, address


def _group(leaves, cluster: list[int], written, paths, bounds: dict) -> SameObject | Overlapping:
    first = leaves[cluster[0]]
    target = next(i for i in cluster if i in written)

    def refuse(i: int, why: str) -> ValueError:       # naming the written argument and ``i`` (or another)
        return _refusal(paths, target, i if i != target else next(k for k in cluster if k != target), why)
    if all(leaves[i] is first for i in cluster):
        return SameObject(tuple(cluster))
    if type(first) is Array:
        raise refuse(target, "they are different xlac.Array objects holding one buffer")
    # The memory's dtype: a complex one where some argument views its real or imaginary parts (``.real``).
    anchor = next((i for i in cluster if leaves[i].dtype.kind == "c"), cluster[0])
    dtype, itemsize = leaves[anchor].dtype, leaves[anchor].itemsize
    address = bounds[anchor][2]
    low, high = min(bounds[i][0] for i in cluster), max(bounds[i][1] for i in cluster)
    start = address - -(-(address - low) // itemsize) * itemsize        # whole elements of ``dtype``
    end = address + -(-(high - address) // itemsize) * itemsize
    if (start, end) != (low, high) and not _inside_owner(leaves[anchor], start, end):
        raise refuse(target, "their elements are not aligned with each other")
    members = []
    for i in cluster:
        leaf = leaves[i]
        if i in written and any(n > 1 and s == 0 for n, s in zip(leaf.shape, leaf.strides)):
            raise _refusal(paths, i, next(k for k in cluster if k != i),
                           f"{paths[i]} repeats its elements (a stride of 0), so the order of its writes decides")
        member = _member(leaf, i, bounds[i][2] - start, dtype)
        if member is None:
            raise refuse(i, f"they view it as different dtypes ({dtype} and {leaf.dtype})" if leaf.dtype not in
                         (dtype, np.empty(0, dtype).real.dtype) else "their elements are not aligned with each other")
        members.append(member)
    return Overlapping(tuple(members), (end - start) // itemsize, dtype, target)


def _member(leaf: np.ndarray, i: int, offset: int, dtype: np.dtype) -> Member | None:
    """Where argument ``i`` lies in memory of ``dtype`` it starts ``offset`` bytes into; None where its
    elements are not whole elements of that memory, nor their real or imaginary parts."""
    itemsize, part = dtype.itemsize, None
    strides = tuple(s if n > 1 else 0 for n, s in zip(leaf.shape, leaf.strides))    # (any, where n is 1)
    if leaf.dtype != dtype:
        is_part = dtype.kind == "c" and leaf.dtype == np.empty(0, dtype).real.dtype
        if not is_part or offset % itemsize not in (0, itemsize // 2):
            return None
        part = "imag" if offset % itemsize else "real"
        offset -= offset % itemsize
    if offset % itemsize or any(s % itemsize for s in strides):
        return None
    return Member(i, offset // itemsize, leaf.shape, tuple(s // itemsize for s in strides), part)


def _inside_owner(array: np.ndarray, start: int, end: int) -> bool:
    """Whether bytes ``start`` to ``end`` lie in the memory of the array that owns ``array``'s."""
    owner = array if array.base is None else array.base
    if not isinstance(owner, np.ndarray):
        return False
    low, high, _ = _byte_bounds(owner)
    return low <= start and end <= high


def _refusal(paths, written: int, other: int, why: str) -> ValueError:
    """The error for arguments that share memory in a way the compiled program cannot reproduce."""
    return ValueError(f"arguments {paths[written]} and {paths[other]} share memory and the compiled function "
                      f"writes to {paths[written]}, but {why}: xlac cannot reproduce NumPy's result; pass "
                      f"separate arrays (e.g. {paths[other]}.copy())")


class ArgumentsShareMemory(ValueError):
    """Raised by the call path of a program that writes to an argument sharing memory with another, as
    :func:`sharing_of` found: the compiled function runs the variant of the program for ``sharing``
    instead (``leaves``: the call's, its implicit arguments included; ``paths``: their names)."""

    def __init__(self, sharing: Sharing, leaves, paths):
        super().__init__()
        self.sharing, self.leaves, self.paths = sharing, leaves, paths

    def __str__(self) -> str:          # (made only when shown: the call path raises this on every such call)
        names = ", ".join(self.paths[i] for i in self.sharing.groups[0].leaves)
        return (f"arguments {names} share memory and the program writes to one of them: call the xlac.compile'd "
                "function, which compiles a variant of it for arguments that share memory")

    def variant_inputs(self, n_args: int, specs, mutabilities, rebuild, shardings) -> "SharedInputs":
        """How the variant for this sharing takes the ``n_args`` arguments of ``specs`` (see SharedInputs),
        kept as ``inputs``; a program split over a mesh (``shardings``) has no variant."""
        if any(s is not None for s in shardings):
            group = self.sharing.groups[0]
            raise _refusal(self.paths, group.leaves[0], group.leaves[1], "the program is split over a mesh")
        self.inputs = SharedInputs(self.sharing, self.leaves, self.paths, n_args, specs, mutabilities, rebuild)
        return self.inputs


# ---------------------------------------------------------------- the views, inside the program


@dataclass(frozen=True)
class ViewStep:
    """One view operation (an ``xlac.trace.ops`` function) with its attributes, applied to the previous
    step's result."""

    op: object
    attrs: dict


class NotASlice(ValueError):
    """A strided view that no chain of slices and reshapes of the flat memory gives."""


def view_chain(member: Member) -> tuple[int, list[ViewStep]]:
    """How to take ``member`` out of the flat memory it lies in: the length of flat memory the chain
    needs (at least the memory's size: the first slice cuts whole rows) and its view steps, each a view
    NumPy has too: reverse the axes with negative strides, order the others by stride, give each a unit
    (the gcd of its stride and the larger ones), reshape the flat memory into those units and slice
    each axis out of its own dimension with its step. (Steps that change nothing bind nothing.)

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
        starts.append(rest)
        limits.append(rest + 1)
        steps.append(1)
    needed = dims[0] * (units[0] if order else 1)
    chain = [ViewStep(ops.slice, {"start": (0,), "limit": (needed,), "strides": (1,)}),
             ViewStep(ops.reshape, {"shape": tuple(dims)}),
             ViewStep(ops.slice, {"start": tuple(starts), "limit": tuple(limits), "strides": tuple(steps)})]
    in_order = tuple(shape[axis] for axis in order)
    chain.append(ViewStep(ops.reshape, {"shape": in_order}))
    if order:
        chain.append(ViewStep(ops.transpose, {"permutation": tuple(order.index(axis) for axis in real)}))
        reversed_axes = tuple(real.index(axis) for axis in flipped)
        if reversed_axes:
            chain.append(ViewStep(ops.reverse, {"dimensions": reversed_axes}))
    kept = tuple(n if axis in real else 1 for axis, n in enumerate(shape))
    chain.append(ViewStep(ops.reshape, {"shape": kept}))
    if spread:
        chain.append(ViewStep(ops.broadcast_in_dim, {"shape": tuple(shape),
                                                   "broadcast_dimensions": tuple(range(len(shape)))}))
    return needed, chain


# ---------------------------------------------------------------- the variant's inputs


class SharedInputs:
    """How the variant of a program for one :class:`Sharing` takes its inputs: the arguments no group
    holds, then one input per group of arguments only (the object itself, or the flat memory their views
    span, padded). Each grouped argument is a view of its group's input, or of the array from outside the
    arguments that a group holds (an implicit argument the variant reads as usual), taken inside the
    program when :meth:`rebuild` runs in the trace.

    ``leaves`` and ``paths``: the call's, implicit arguments after the ``n_args`` arguments; ``specs``,
    ``mutabilities``: the arguments'; ``rebuild(argument tracers)``: their ``(args, kwargs)``."""

    def __init__(self, sharing: Sharing, leaves, paths, n_args: int, specs, mutabilities, rebuild):
        self._rebuild = rebuild
        self.n_args = n_args
        grouped = {i for group in sharing.groups for i in group.leaves}
        self.kept = [i for i in range(n_args) if i not in grouped]
        self.specs = [specs[i] for i in self.kept]
        self.paths = [paths[i] for i in self.kept]
        self.mutabilities = [mutabilities[i] for i in self.kept]
        self.plans = []
        for group in sharing.groups:
            plan = self._plan(group, leaves, paths, n_args, mutabilities)
            self.plans.append(plan)
            if type(plan) is _OneObject:
                self.specs.append(specs[plan.members[0]])
                self.mutabilities.append(mutabilities[plan.members[0]])
            elif type(plan) is _FlatMemory:
                self.specs.append(((plan.length,), group.dtype, False))
                self.mutabilities.append("mutable")
            else:
                continue
            self.paths.append(" & ".join(dict.fromkeys(paths[i] for i in group.leaves)))

    @staticmethod
    def _plan(group, leaves, paths, n_args, mutabilities):
        outside = list({id(leaves[i]): i for i in group.leaves if i >= n_args}.values())
        if len(outside) > 1:
            raise _refusal(paths, outside[0], outside[1], "both are arrays it reads from outside its arguments")
        arguments = [i for i in group.leaves if i < n_args]
        if type(group) is SameObject:
            if outside:
                return _OutsideArray(leaves[outside[0]], [(i, None, mutabilities[i], None) for i in arguments])
            return _OneObject(arguments)
        chains = {}
        for member in group.members:
            try:
                chains[member.leaf] = view_chain(member)
            except NotASlice as why:
                other = member.leaf if member.leaf != group.written else next(
                    m.leaf for m in group.members if m.leaf != group.written)
                raise _refusal(paths, group.written, other, f"{paths[member.leaf]}: {why}") from None
        parts = {m.leaf: m.part for m in group.members}
        views = [(i, chains[i][1], mutabilities[i], parts[i]) for i in arguments]
        if not outside:
            length = max([group.size] + [needed for needed, _ in chains.values()])
            return _FlatMemory(views, group, length)
        array = leaves[outside[0]]
        holder = next(m for m in group.members if m.leaf == outside[0])
        if (holder.offset or array.size != group.size or not array.flags.c_contiguous
                or any(chains[i][0] > array.size for i in arguments)):
            raise _refusal(paths, outside[0], arguments[0], f"{paths[arguments[0]]} reaches memory outside the "
                          f"array {paths[outside[0]]} it shares memory with, or that array is not contiguous")
        return _OutsideArray(array, views)

    def rebuild(self, inputs):
        """In the trace: the arguments' ``(args, kwargs)`` from the variant's input tracers."""
        tracers = [None] * self.n_args
        for i, tracer in zip(self.kept, inputs):
            tracers[i] = tracer
        sources = iter(inputs[len(self.kept):])
        for plan in self.plans:
            plan.trace(tracers, sources)
        return self._rebuild(tracers)

    def arguments(self, leaves):
        """Per call: the variant's input leaves, from the arguments' ``leaves``, and the flat memories to
        copy its new contents back into afterwards (see :meth:`copy_back`)."""
        inputs, memories = [leaves[i] for i in self.kept], []
        for plan in self.plans:
            if type(plan) is not _OutsideArray:
                given, memory = plan.argument(leaves)
                inputs.append(given)
                if memory is not None:
                    memories.append((given, memory))
        return inputs, memories

    @staticmethod
    def copy_back(memories) -> None:
        for padded, memory in memories:
            np.copyto(memory, padded[:memory.shape[0]])


class _OneObject:
    """Arguments that are one object: the variant's input is that object, every name its tracer."""

    def __init__(self, members: list[int]):
        self.members = members

    def argument(self, leaves):
        return leaves[self.members[0]], None

    def trace(self, tracers, sources) -> None:
        source = next(sources)
        for i in self.members:
            tracers[i] = source


class _FlatMemory:
    """Overlapping NumPy views: the variant's input is the flat memory they span, padded to ``length``."""

    def __init__(self, views, group: Overlapping, length: int):
        self.views, self.group, self.length = views, group, length

    def argument(self, leaves):
        member, dtype = self.group.members[0], self.group.dtype
        leaf = leaves[member.leaf]
        start = (leaf.__array_interface__["data"][0] - member.offset * dtype.itemsize
                 - (dtype.itemsize // 2 if member.part == "imag" else 0))
        interface = {"version": 3, "shape": (self.group.size,), "typestr": dtype.str, "descr": dtype.descr,
                     "strides": None, "data": (start, False)}
        memory = np.asarray(_Memory(interface, leaf))
        padded = np.empty(self.length, self.group.dtype)
        padded[:self.group.size] = memory
        return padded, memory

    def trace(self, tracers, sources) -> None:
        flat = _Parts(next(sources))
        for i, chain, mutability, part in self.views:
            tracers[i] = _view(flat[part], chain, mutability)


class _OutsideArray:
    """Arguments that share memory with an array the function reads from outside them: views of it (or,
    with no chain, that array itself)."""

    def __init__(self, array, views):
        self.array, self.views = array, views

    def trace(self, tracers, sources) -> None:
        source = current_trace().capture(self.array)
        flat = None
        for i, chain, mutability, part in self.views:
            if chain is None:
                tracers[i] = source
                continue
            if flat is None:
                flat = _Parts(view_of(source, lambda t: ops.reshape(t, (self.array.size,))))
            tracers[i] = _view(flat[part], chain, mutability)


class _Parts(dict):
    """A flat memory's traced value (key None) and the views of its real and imaginary parts, made on use."""

    def __init__(self, flat):
        super().__init__({None: flat})

    def __missing__(self, part: str):
        view = self[part] = view_of(self[None], ops.real if part == "real" else ops.imag)
        return view


def _view(source, chain: list[ViewStep], mutability: str):
    """``chain`` applied to ``source`` in the trace, as a view of it NumPy would make."""
    def make(t):
        for step in chain:
            t = step.op(t, **step.attrs)
        return t
    view = view_of(source, make, writable=mutability == "mutable")
    if view.value is not source.value and view.base is None:
        raise AssertionError("xlac internal error: a shared argument's chain of views made a copy")
    return view


class _Memory:
    """An ``__array_interface__`` over memory an argument lies in, keeping the argument alive."""

    def __init__(self, interface: dict, owner):
        self.__array_interface__ = interface
        self.owner = owner


class SharedVariant:
    """The program compiled for one :class:`Sharing`, called as the compiled function's own program is:
    ``run(argument leaves, statics)``. It has no outside state of its own to the compiled function's call
    path (its ``run`` gathers and writes back its own), so ``_run`` is ``run`` without statics, and so is the
    runner for leaves of any kind (``runner_for``)."""

    captures = rebound = None
    read_while_tracing = ()

    def __init__(self, compiled, inputs: SharedInputs):
        self.compiled, self.inputs = compiled, inputs

    def run(self, leaves, statics=()):
        arguments, memories = self.inputs.arguments(leaves)
        try:
            return self.compiled.run(arguments, statics)
        finally:
            self.inputs.copy_back(memories)

    def _run(self, leaves):
        return self.run(leaves)

    def runner_for(self, leaves):
        return self._run
