"""A converted ``if`` (statement, returning statement or conditional expression) on a traced test: both
branches traced into one ``case`` node, their variables matched by name.

Each branch runs as a function of the variables the ``if`` binds and returns their values; two short
branches of elementwise math are both computed and selected, others become a ``case`` node. Per variable:
arrays and Python numbers are the conditional's results (a Python number in one branch takes the dtype of
the array in the other, as a weak value does); anything else (``None``, a string, an object, a function)
must be the same object or an equal value in both branches, and passes through; the same Python number in
both branches stays that number. A variable that one branch leaves unbound is dropped, or raises a
TypeError when the function reads it after the ``if``.

>>> import numpy as np, xlac
>>> @xlac.compile
... def relu_sum(x):
...     s = x.sum()
...     if s > 0:
...         y = s
...     else:
...         y = 0.0
...     return y
>>> float(relu_sum(np.array([1.0, 2.0]))), float(relu_sum(np.array([-1.0, -2.0])))
(3.0, 0.0)
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from xlac.array import Array
from xlac.control_flow import bind_case, branch_index, trace_branches, with_outputs
from xlac.errors import located
from xlac.numpy._core import is_python_scalar
from xlac.trace import ops, pytree
from xlac.trace.inline import inline
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer


class Undefined:
    """The value of a variable that no code has bound yet (``RUNTIME.UNDEFINED``)."""

    def __repr__(self) -> str:
        return "UNDEFINED"


UNDEFINED = Undefined()
BRANCH_NAMES = ("else", "if")          # branch 0 runs when the test is false


@dataclass(frozen=True)
class Variables:
    """The variables a converted ``if`` or loop binds, as the converter describes them: ``names``, in the
    order of the values passed in and out of its branch or body functions; ``live``: those read after it;
    ``returned``: those holding the value of a ``return`` inside a loop (see :mod:`xlac.convert.exits`)."""

    names: tuple
    live: tuple = ()
    returned: tuple = ()


def traced_if(test, branches, values: tuple, variables: Variables, what: str) -> tuple:
    """``branches[bool(test)](*values)`` for a traced ``test``: a tuple with one value per name of
    ``variables.names``. ``what`` names the construct in errors."""
    names, live, returned = variables.names, variables.live, variables.returned
    index = branch_index(what, test)
    outcomes: list[list] = [None, None]
    fills: dict[int, object] = {}          # per name: makes its value where a branch leaves it unbound

    def traced(k, fn):
        def run():
            per_name = [pytree.flatten(fills[j]() if v is UNDEFINED and j in fills else v)
                        for j, v in enumerate(_raising_when_taken(fn, branches[1 - k], values))]
            # what is known of each leaf once traced (no tracer stays past the trace): an array, or its value
            outcomes[k] = [([_ARRAY if _is_array(leaf) else leaf for leaf in leaves], tree)
                           for leaves, tree in per_name]
            return [leaf for leaves, _ in per_name for leaf in leaves if is_array_like(leaf)]
        return run
    regions = trace_branches(what, [traced(k, fn) for k, fn in enumerate(branches)], [], [None, None])
    fills.update(_return_value_fills(names, returned, outcomes, regions))
    if fills:
        regions = trace_branches(what, [traced(k, fn) for k, fn in enumerate(branches)], [], [None, None])
    results: list = []
    keep: list[list[int]] = [[], []]
    dtypes: list = []
    position = [0, 0]                      # the next array result of each branch
    for j, name in enumerate(names):
        (leaves0, tree0), (leaves1, tree1) = outcomes[0][j], outcomes[1][j]
        unbound = [leaves0 == [UNDEFINED], leaves1 == [UNDEFINED]]
        if any(unbound):
            if not all(unbound) and name in live:
                bound = BRANCH_NAMES[unbound.index(False)]
                raise TypeError(located(
                    f"{_named(name)} is bound only in the {bound} branch of an `{what}` whose test is traced, and "
                    "read after it: both branches run as one conditional, so both must bind it"))
            for k, leaves in enumerate((leaves0, leaves1)):
                position[k] += sum(is_array_like(leaf) for leaf in leaves)
            results.append(UNDEFINED)
            continue
        if tree0 != tree1 or len(leaves0) != len(leaves1):
            raise _mismatch(name, what, _describe_tree(tree0), _describe_tree(tree1))
        var_leaves = []
        for a, b in zip(leaves0, leaves1):
            if is_array_like(a) != is_array_like(b):
                raise _mismatch(name, what, _describe(a), _describe(b))
            if not is_array_like(a):
                if not same_value(a, b):
                    raise _mismatch(name, what, repr(a), repr(b))
                var_leaves.append(a)
                continue
            at = (position[0], position[1])
            position[0] += 1
            position[1] += 1
            if is_python_scalar(a) and is_python_scalar(b) and type(a) is type(b) and same_value(a, b):
                var_leaves.append(a)           # the same number either way: stays static
                continue
            types = [regions[k].out_types[at[k]] for k in (0, 1)]
            weak = [regions[k].out_weak[at[k]] for k in (0, 1)]
            dtypes.append(_common_dtype(name, what, types, weak))
            keep[0].append(at[0])
            keep[1].append(at[1])
            var_leaves.append(_ResultIndex(len(dtypes) - 1))
        results.append((tree0, var_leaves))
    regions = [with_outputs(region, keep[k], dtypes) for k, region in enumerate(regions)]
    traced_results = _selected(index, regions) if _cheap(regions) else bind_case(index, regions, [])
    return variables_from_leaves(results, lambda leaf: isinstance(leaf, _ResultIndex),
                                 lambda leaf: traced_results[leaf])


def _raising_when_taken(fn, other, values: tuple) -> tuple:
    """``fn(*values)``, traced into a branch's region. Where it raises an error that Python raises only when
    the branch runs (a constant index out of bounds, an assert), the branch raises it after the call when it
    is taken, and takes its values from ``other`` branch (never used; its writes are not made)."""
    try:
        return fn(*values)
    except Exception as error:
        checks = current_trace().checks
        if not checks.defers(error):
            raise
        checks.fail(error)
        return other(*values)


def _return_value_fills(names: tuple, returned: tuple, outcomes: list, regions) -> dict:
    """For each value stored by a ``return`` inside a loop (``returned``) that one branch leaves unbound:
    zeros of the other branch's type, never read (the returned flag says so)."""
    fills = {}
    for j, name in enumerate(names):
        bound = [outcomes[k][j][0] != [UNDEFINED] for k in (0, 1)]
        if name not in returned or all(bound) or not any(bound):
            continue
        k = bound.index(True)
        leaves, tree = outcomes[k][j]
        position = sum(is_array_like(leaf) for leaves_before, _ in outcomes[k][:j] for leaf in leaves_before)
        types = []
        for leaf in leaves:
            types.append(regions[k].out_types[position] if leaf is _ARRAY else None)
            position += is_array_like(leaf)
        fills[j] = partial(_zeros_like_leaves, tree, leaves, types)
    return fills


def _zeros_like_leaves(tree, leaves: list, types: list):
    return pytree.unflatten(tree, [ops.full(t.shape, 0, t.dtype) if t is not None else leaf
                                   for leaf, t in zip(leaves, types)])


def variables_from_leaves(entries, is_placeholder, value_of) -> tuple:
    """Each variable's value from its ``(tree, leaves)`` entry (UNDEFINED stays UNDEFINED), each placeholder
    leaf replaced by ``value_of(leaf)`` (in leaf order)."""
    out = []
    for entry in entries:
        if entry is UNDEFINED:
            out.append(UNDEFINED)
            continue
        tree, leaves = entry
        out.append(pytree.unflatten(tree, [value_of(leaf) if is_placeholder(leaf) else leaf for leaf in leaves]))
    return tuple(out)


# Branches made of these only (elementwise math, selects, shape changes), and few of them, are computed
# both and selected: cheaper than a conditional, in a loop above all; each branch's checks (an index out
# of bounds) fail only where it is taken. Others are a `case` node.
_CHEAP_CATEGORIES = {"unary", "binary", "compare", "convert", "select", "creation", "identity", "shape"}
_CHEAP_NODES = 64


def _cheap(regions) -> bool:
    return all(not region.written and len(region.graph.nodes) <= _CHEAP_NODES and
               all(node.primitive.category in _CHEAP_CATEGORIES and not node.subgraphs
                   for node in region.graph.nodes) for region in regions)


def _selected(index, regions) -> list:
    """Both branches computed, each result selected by ``index`` (1: the second branch's); the checks of
    each fail only where it is the branch taken."""
    taken = ops.compare(index, ops.full_like(index, 0), "NE")
    false_out, true_out = _evaluated(regions[0], lambda: ops.not_(taken)), _evaluated(regions[1], lambda: taken)
    results = []
    for k, (a, b) in enumerate(zip(false_out, true_out)):
        result = ops.select(ops.broadcast_in_dim(taken, a.shape, ()), b, a)
        result.weak = regions[0].out_weak[k] and regions[1].out_weak[k]
        results.append(result)
    return results


def _evaluated(region, taken) -> list:
    """``region``'s results evaluated into the current trace; its checks fail only where ``taken()`` holds."""
    outputs = inline(region.graph, list(region.lifted))
    n_results = len(region.out_weak)
    if region.checks:
        checks = current_trace().checks
        with checks.evaluated_when(taken()):
            checks.adopt_status(outputs[n_results], region.checks)
    return outputs[:n_results]


class _ResultIndex(int):
    """Where a variable's leaf is a result of the conditional: that result's index (not a number the
    branches returned)."""


class _Array:
    def __repr__(self) -> str:
        return "an array"


_ARRAY = _Array()


def _is_array(x) -> bool:
    return isinstance(x, (Tracer, Array, np.ndarray, np.generic))


def is_array_like(x) -> bool:
    return x is _ARRAY or _is_array(x) or is_python_scalar(x)


def same_value(a, b) -> bool:
    if a is b:
        return True
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:          # an object whose == is not a truth value: not the same
        return False


def _named(name: str) -> str:
    return name if name.startswith("the ") else f"variable '{name}'"


def _mismatch(name: str, what: str, a: str, b: str) -> TypeError:
    return TypeError(located(
        f"{_named(name)} is {b} in the if branch and {a} in the else branch of an `{what}` whose test is traced: "
        "both branches run as one conditional, so it must have one type, shape and dtype either way"))


def _describe(x) -> str:
    if x is _ARRAY:
        return "an array"
    if is_python_scalar(x):
        return f"a Python {type(x).__name__}"
    return repr(x)


def _describe_tree(tree) -> str:
    return "an array or number" if tree.kind == "leaf" else f"a {tree.kind} {tree}"


def _common_dtype(name: str, what: str, types, weak) -> np.dtype:
    """The dtype of a variable both branches compute: a weak (Python number) side takes the other's."""
    a, b = types
    if a == b:
        return a.dtype
    strong = {t.dtype for t, w in zip(types, weak) if not w}
    if a.shape != b.shape or len(strong) > 1:
        raise _mismatch(name, what, str(a), str(b))
    return strong.pop() if strong else np.promote_types(a.dtype, b.dtype)
