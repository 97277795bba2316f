"""Which traced arrays are views of which, as NumPy decides it, and the copies NumPy would make.

NumPy's basic indexing, ``reshape``, ``transpose`` and friends return views that
share memory with their base; a write through a view shows in the base and in
every other view of it. xlac records such results as *view nodes* (``node.view``)
whose result aliases operand 0, and keeps per traced array its element strides
relative to its base, so that ``reshape`` of a non-contiguous view becomes a copy
exactly when NumPy's would. Which primitives make views, and their strides, are
the table in :mod:`xlac.ir.view_rules`, which functionalization reads too.
"""
from __future__ import annotations

from xlac.ir import primitives as P
from xlac.ir.view_rules import contiguous_strides
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

VIEW_KINDS = ("writable", "readonly", "alias", "marked")


def strides_of(x: Tracer) -> tuple[int, ...]:
    return x.strides if x.strides is not None else contiguous_strides(x.shape)


def is_contiguous(x: Tracer) -> bool:
    """Whether ``x`` is C-contiguous as NumPy's flag says (axes of length 1 do not count): views made by
    slicing with steps, transposing or ``.real`` are not, and ``ravel`` copies them.

    >>> import numpy as np, xlac
    >>> found = []
    >>> _ = xlac.compile(lambda x: found.extend([is_contiguous(x[0]), is_contiguous(x.T)]))(np.zeros((2, 3)))
    >>> found
    [True, False]
    """
    return all(s == c for d, s, c in zip(x.shape, strides_of(x), contiguous_strides(x.shape)) if d != 1)


class Itself:
    """Returned by an xlac.numpy function body that returns one of its arguments itself, as NumPy's
    ``np.add(a, b, out=a) is a``: :func:`finish_result` hands that argument back uncopied, so later reads
    and writes through the returned array reach the same memory."""

    __slots__ = ("array",)

    def __init__(self, array: Tracer):
        self.array = array


def finish_result(trace, args, result, first_node: int, view: str | None):
    """Post-process what an xlac.numpy function returned: mark views of its first argument (``view`` is
    "writable" or "readonly"), or make sure a result that is one of its inputs is a copy, as NumPy's is.
    ``view="alias"`` (the argument itself) and ``"marked"`` (the body marked its views with
    :func:`mark_view`) leave the result as it is; an :class:`Itself`, also inside a tuple, is unwrapped."""
    if isinstance(result, Itself):
        return result.array
    if type(result) is tuple and any(isinstance(r, Itself) for r in result):     # divmod(a, b, out=(a, None))
        return tuple(finish_result(trace, args, r, first_node, view) for r in result)
    if view in ("alias", "marked"):
        return result
    source = here(args[0]) if args and isinstance(args[0], Tracer) else None
    if view is not None and source is not None:
        return _map_results(result, lambda r: _mark_view(trace, source, r, first_node, view == "writable"))
    inputs = {a.value.id for a in _tracers_in(args)}
    return _map_results(result, lambda r: copy(r) if r.value.id in inputs else r)


def here(x: Tracer) -> Tracer:
    """``x`` as a value of the current trace: a value of an enclosing trace (an array a loop body closes over)
    comes in through its stand-in, so the views made of it here are views of that stand-in."""
    trace = current_trace()
    return x if x._trace is trace else trace.lift(x)


def copy(x: Tracer) -> Tracer:
    """A new array holding ``x``'s values (a ``copy`` node: free once functionalized)."""
    return current_trace().bind(P.copy, (x,), weak=x.weak)


def element(x: Tracer) -> Tracer:
    """``x`` (a 0-d read such as ``a[0, 1]``) as NumPy's element read gives it: a scalar, a copy of the
    value that no later write to ``a`` reaches, and whose augmented assignment (``acc += 1``) rebinds
    the name instead of writing to memory."""
    scalar = copy(x)
    scalar.mutability = "value"
    return scalar


def _tracers_in(args):
    for a in args:
        if isinstance(a, Tracer):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from _tracers_in(a)


def _map_results(result, fn):
    if isinstance(result, Tracer):
        return fn(result)
    if isinstance(result, (list, tuple)) and any(isinstance(r, Tracer) for r in result):
        values = [fn(r) if isinstance(r, Tracer) else r for r in result]
        return type(result)(*values) if hasattr(type(result), "_fields") else type(result)(values)
    return result


def mark_view(source: Tracer, result: Tracer, first_node: int, strides: tuple[int, ...]) -> Tracer:
    """Mark ``result``, made from ``source`` by the view primitives bound since node ``first_node``, as a
    read-only view of ``source`` with element ``strides`` (relative to ``source``'s memory).

    For views NumPy always makes whatever the strides, such as ``diagonal``'s, which no chain of view
    primitives expresses stride by stride (its reshape would be a copy in NumPy): every node of the chain
    is marked, so reads re-read the base after writes to it. Being read-only, the view is never written
    through, so its nodes need no inverse."""
    source = here(source)
    producers = {node.results[0].id: node for node in source._trace.graph.nodes[first_node:]
                 if len(node.results) == 1}
    value = result.value
    while value is not source.value:
        node = producers[value.id]
        if node.primitive.view_rule is None:
            raise AssertionError(f"xlac internal error: {node.primitive.name} cannot be part of a view")
        node.view = True
        value = node.operands[0]
    result.base = source
    result.strides = tuple(strides)
    result.mutability = "readonly"
    return result


def view_of(source, make, writable: bool = True):
    """``make(source)`` marked as a view of ``source``, for functions whose results view several
    arguments (``atleast_1d(a, b)``, ``broadcast_arrays``), where ``view="writable"`` would take the first
    for the base of all. ``make`` binds view primitives only; a ``source`` that is not a traced array
    (a Python scalar, a NumPy constant) gives a new array, as NumPy's ``atleast_1d(3.0)`` does.

    >>> import numpy as np, xlac
    >>> from xlac.trace import ops
    >>> def f(x):
    ...     row = view_of(x, lambda t: ops.reshape(t, (1, 2)))
    ...     x[0] = 5.0
    ...     return row
    >>> np.asarray(xlac.compile(f)(np.zeros(2))).tolist()
    [[5.0, 0.0]]
    """
    if not isinstance(source, Tracer):
        return make(source)
    source = here(source)
    trace = source._trace
    first_node = len(trace.graph.nodes)
    return _mark_view(trace, source, make(source), first_node, writable)


def _mark_view(trace, source: Tracer, result: Tracer, first_node: int, writable: bool) -> Tracer:
    if source.mutability == "value":
        # A NumPy scalar has no memory to share: NumPy's ``s[...]`` and ``s.reshape(1)`` are new arrays.
        return copy(result) if result.value is source.value else result
    if result.value is source.value:
        if writable or source.mutability == "readonly":
            return result
        # A read-only view with the base's shape (broadcast_to(x, x.shape)): another tracer of the same
        # value, which reads whatever the base holds but refuses writes.
        alias = Tracer(source.value, trace, source.weak, "readonly")
        alias.base, alias.strides = source, strides_of(source)
        return alias
    producers = {node.results[0].id: node for node in trace.graph.nodes[first_node:] if len(node.results) == 1}
    chain = []
    value = result.value
    while value is not source.value:
        node = producers.get(value.id)
        if node is None or node.primitive.view_rule is None:
            return result                       # not a chain of view operations: a new array
        chain.append(node)
        value = node.operands[0]
    strides = strides_of(source)
    for node in reversed(chain):
        strides = node.primitive.view_rule.strides(node, strides)
        if strides is None:
            return result                       # a reshape NumPy would copy
    for node in chain:
        node.view = True
    result.base = source
    result.strides = strides
    result.mutability = "mutable" if writable and source.mutability == "mutable" else "readonly"
    return result
