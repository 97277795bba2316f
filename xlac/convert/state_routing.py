"""The NumPy-state routing: every read, call and store that may reach a NumPy array becomes a call into
:mod:`xlac.convert.runtime`, which leaves concrete Python alone and routes arrays into the trace.

- reads of the function's own names: ``runtime.current(x)`` (an array the call made that a traced value
  was written into reads as that traced value); ``b += v`` reads ``b`` so first;
- reads of globals, closed-over names and attributes: ``runtime.outside(...)`` (a NumPy array there is
  the implicit argument standing for it, see :mod:`xlac.outside_state`);
- calls: ``runtime.call(f, ...)``, which converts user functions and routes builtins and NumPy's creation
  functions; a call whose result the function later writes into (``out = np.zeros(n)`` then
  ``out[i] = ...``, from :attr:`xlac.convert.analysis.FunctionFacts.array_writes`) is
  ``runtime.call_allocation``;
- subscripts: ``runtime.getitem``, ``setitem``, ``aug_setitem``;
- an operator's result bound by an assignment (``t = b * 2``): ``runtime.operator_result(...)``, a new array.

Before and after, where ``x`` is a parameter and ``np`` a global:

    out = np.zeros(3)               out = RUNTIME.call_allocation(RUNTIME.outside(np).zeros, 3)
    out[0] = x.sum()                RUNTIME.setitem(RUNTIME.current(out), 0, RUNTIME.call(RUNTIME.current(x).sum))

>>> import ast
>>> from xlac.convert.analysis import analyze
>>> fn = ast.parse("def f(x):\\n    out = np.zeros(3)\\n    out[0] = x.sum()").body[0]
>>> route_state(fn, {fn: analyze(fn)}, {"x", "out"})
>>> print(ast.unparse(fn).replace("__xlac_runtime__", "RUNTIME"))
def f(x):
    out = RUNTIME.call_allocation(RUNTIME.outside(np).zeros, 3)
    RUNTIME.setitem(RUNTIME.current(out), 0, RUNTIME.call(RUNTIME.current(x).sum))
"""
from __future__ import annotations

import ast

from xlac.convert.syntax import (FunctionRewrite, index_expression, is_runtime_attribute, place_of, placed_at,
                                 runtime_attribute, runtime_call)

__all__ = ["route_state"]

# Calls left as they are: they read the caller's frame or scope.
_FRAME_READERS = {"super", "locals", "globals", "vars", "eval", "exec", "__import__"}


def route_state(fn: ast.FunctionDef, facts: dict, bound_names: set[str], leave: frozenset = frozenset()) -> None:
    """Route ``fn``'s reads, calls and stores (nested functions included, not classes), in place. ``facts``:
    :func:`xlac.convert.analysis.analyze`'s result per user function (a function not there, one an earlier
    pass generated, is part of the one around it); ``bound_names``: the names ``fn``'s scopes bind (the others
    are outside state); ``leave``: syntax to leave as it is (see
    :attr:`xlac.convert.control_statements.ControlFlow.passing`)."""
    _StateRouting(facts, bound_names, leave).visit(fn)


class _StateRouting(FunctionRewrite):
    def __init__(self, facts: dict, bound_names: set[str], leave: frozenset):
        self.facts, self.bound_names, self.leave = facts, bound_names, leave
        self.filled: list[set[str]] = []       # per function: the places it writes into (see visit_Assign)

    def visit(self, node):
        return node if node in self.leave else super().visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef):
        facts = self.facts.get(node)
        if facts is None:                        # a branch or loop body: the function around it
            return self.generic_visit(node)
        self.filled.append({access.place for access in facts.array_writes if not access.assumed})
        node = self.generic_visit(node)
        self.filled.pop()
        return node

    def visit_Call(self, node: ast.Call):
        callee = node.func
        if isinstance(callee, ast.Attribute):                   # a method: its object may be outside state
            callee.value = self.visit(callee.value)
        elif not isinstance(callee, ast.Name):
            node.func = self.visit(callee)
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        func = node.func
        if isinstance(func, ast.Name) and (func.id in _FRAME_READERS or func.id.startswith("__xlac")) or \
                is_runtime_attribute(func):
            return node
        return placed_at(ast.Call(runtime_attribute("call"), [func, *node.args], node.keywords), node)

    def visit_Name(self, node: ast.Name):
        if not isinstance(node.ctx, ast.Load) or node.id.startswith("__xlac"):
            return node
        read = "current" if node.id in self.bound_names else "outside"
        return placed_at(runtime_call(read, [node]), node)

    def visit_Attribute(self, node: ast.Attribute):
        node = self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and not is_runtime_attribute(node):
            return placed_at(runtime_call("outside", [node]), node)
        return node

    def visit_Subscript(self, node: ast.Subscript):
        node = self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            return placed_at(runtime_call("getitem", [node.value, index_expression(node.slice)]), node)
        return node

    def visit_AugAssign(self, node: ast.AugAssign):
        node = self.generic_visit(node)
        target = node.target
        if isinstance(target, ast.Name) and target.id in self.bound_names:
            # `b += v` reads b as Python does, unseen: read it as any other read of a local name first
            read = ast.Assign([ast.Name(target.id, ast.Store())],
                              runtime_call("current", [ast.Name(target.id, ast.Load())]))
            return [placed_at(read, node), node]
        if not isinstance(target, ast.Subscript):
            return node
        symbol = _AUGMENTED_SYMBOLS[type(node.op)]
        return placed_at(ast.Expr(runtime_call("aug_setitem", [target.value, index_expression(target.slice),
                                                              ast.Constant(symbol), node.value])), node)

    def visit_Assign(self, node: ast.Assign):
        node = self.generic_visit(node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            target = node.targets[0]
            return placed_at(ast.Expr(runtime_call("setitem", [target.value, index_expression(target.slice),
                                                              node.value])), node)
        value = node.value
        if isinstance(value, (ast.BinOp, ast.UnaryOp)):      # `t = b * 2`: NumPy's operators make new arrays
            node.value = placed_at(runtime_call("operator_result", [value]), value)
            return node
        filled = any(place_of(t) in self.filled[-1] for t in node.targets)
        if filled and isinstance(value, ast.Call) and is_runtime_attribute(value.func) and value.func.attr == "call":
            value.func.attr = "call_allocation"       # a NumPy array the function fills: an xlac one
        return node


_AUGMENTED_SYMBOLS = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.Div: "/=", ast.FloorDiv: "//=",
                      ast.Mod: "%=", ast.Pow: "**=", ast.MatMult: "@=", ast.BitAnd: "&=", ast.BitOr: "|=",
                      ast.BitXor: "^=", ast.LShift: "<<=", ast.RShift: ">>="}
