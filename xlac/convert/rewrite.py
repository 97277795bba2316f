"""The source rewrite: a function's syntax tree in, the tree of its converted form out, as a pipeline of
passes over the tree, each with one job, that talk through data (not through attributes on nodes):

1. :func:`xlac.convert.exits.normalize_exits`: ``break``/``continue``/``return`` inside loops as flags,
   returns from branches as ``else`` blocks (:class:`~xlac.convert.exits.Exits`);
2. :func:`xlac.convert.analysis.analyze`, per function: liveness, reaching definitions, what each loop
   carries, which arrays each statement writes (:class:`~xlac.convert.analysis.FunctionFacts`);
3. :func:`xlac.convert.control_statements.rewrite_control_flow`: ``if``/``while``/``for``/``assert`` as
   runtime calls over branch and loop functions (:class:`~xlac.convert.control_statements.ControlFlow`: the
   syntax that passes variables in and out, which the next pass leaves);
4. :func:`xlac.convert.state_routing.route_state`: reads, calls and stores that may reach NumPy arrays;
5. :func:`xlac.convert.expressions.rewrite_expressions`: ``and``/``or``/``not``, conditional expressions
   and chained comparisons.

Every construct that Python evaluates with ``bool()`` or that reaches past xlac becomes a call into
:mod:`xlac.convert.runtime` (bound to the name ``RUNTIME`` in the converted code), which keeps Python's
behaviour for concrete values and routes traced ones into xlac. Generated nodes carry the line of the code
they replace, so tracebacks and xlac's ``file:line`` point at the user's source.

>>> import ast
>>> tree = ast.parse("def f(x):\\n    y = 1 if x > 0 else 2\\n    return y")
>>> print(ast.unparse(convert_function(tree.body[0])).splitlines()[1])
    y = __xlac_runtime__.if_expr(__xlac_runtime__.current(x) > 0, lambda: 1, lambda: 2)
"""
from __future__ import annotations

import ast
import sys
from typing import Callable

from xlac.convert.analysis import analyze
from xlac.convert.control_statements import rewrite_control_flow
from xlac.convert.exits import normalize_exits
from xlac.convert.expressions import rewrite_expressions
from xlac.convert.state_routing import route_state
from xlac.convert.syntax import RUNTIME, contains

__all__ = ["RUNTIME", "convert_function"]

ASSERTS_RUN = not sys.flags.optimize         # `python -O` compiles no assert


def convert_function(fn: ast.FunctionDef, resolve: Callable | None = None) -> ast.FunctionDef:
    """``fn`` (a ``def`` without decorators) converted, nested functions included. ``resolve(name)``: what
    a global or free name holds (see :func:`xlac.convert.analysis.analyze`)."""
    if contains(fn, (ast.Yield, ast.YieldFrom)):
        return fn                                        # a generator: traced as written
    exits = normalize_exits(fn)
    bound_names = _bound_names(fn)
    facts = {function: analyze(function, resolve) for function in _converted_functions(fn)}
    control_flow = rewrite_control_flow(fn, facts, exits, bound_names, keep_asserts=ASSERTS_RUN)
    route_state(fn, facts, bound_names, leave=control_flow.passing)
    rewrite_expressions(fn)
    return ast.fix_missing_locations(fn)


def _bound_names(fn: ast.FunctionDef) -> set[str]:
    """Every name some scope inside ``fn`` binds (parameters, assignments, loop and comprehension
    targets, imports, nested definitions), except those declared global or nonlocal: the rest are the
    globals and free variables ``fn`` reads."""
    bound, declared = set(), set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fn:
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
    return bound - declared


def _converted_functions(fn: ast.FunctionDef) -> list[ast.FunctionDef]:
    """``fn`` and the functions nested in it that the rewrite converts (not those in classes, which are
    converted when called, nor async ones)."""
    functions, stack = [], [fn]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef):
            functions.append(node)
        stack.extend(child for child in ast.iter_child_nodes(node)
                     if not isinstance(child, (ast.ClassDef, ast.AsyncFunctionDef)))
    return functions
