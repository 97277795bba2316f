"""The control-flow rewrite: ``if``, ``while``, ``for`` and ``assert`` statements as calls into
:mod:`xlac.convert.runtime`, which runs them as Python does on concrete values and as XLA conditionals and
loops on traced ones.

- ``if``/``elif``/``else``: each branch becomes a function of the variables the ``if`` binds, run by
  ``runtime.if_stmt``; an ``if`` whose branches both return becomes ``return runtime.if_return(...)``;
  ``if t: x[i] = a`` / ``else: x[i] = b`` becomes one ``runtime.setitem_either``.
- ``while``: test and body functions of the variables the body binds, run by ``runtime.while_stmt``.
- ``for``: a body function of the item and those variables, run by ``runtime.for_range`` (over
  ``range(...)``) or ``runtime.for_each`` (``enumerate``/``zip`` as ``runtime.loop_enumerate``/``loop_zip``).
- ``assert test, message``: ``runtime.assert_(test, lambda: message)`` (left out under ``python -O``).

Each call is told which variables are live after the statement and which a loop carries, from
:func:`xlac.convert.analysis.analyze`. A statement that cannot become functions (it breaks out of an
enclosing loop, returns from one branch only, declares names global) stays as written, its test through
``runtime.concrete_test``, which explains why when the test is traced. Expressions are left as they are:
:mod:`xlac.convert.state_routing` and :mod:`xlac.convert.expressions` rewrite them afterwards (routing
leaves the syntax this pass generates to pass variables in and out, :attr:`ControlFlow.passing`).

>>> import ast
>>> from xlac.convert.analysis import analyze
>>> from xlac.convert.exits import normalize_exits
>>> fn = ast.parse("def f(x):\\n    if x > 0:\\n        y = x\\n    else:\\n        y = 0\\n    return y").body[0]
>>> exits = normalize_exits(fn)
>>> _ = rewrite_control_flow(fn, {fn: analyze(fn)}, exits, {"x", "y"}, keep_asserts=True)
>>> print(ast.unparse(fn))
def f(x):
<BLANKLINE>
    def __xlac_if_true_0(y):
        y = x
        return (y,)
<BLANKLINE>
    def __xlac_if_false_0(y):
        y = 0
        return (y,)
    y, = __xlac_runtime__.if_stmt(x > 0, __xlac_if_true_0, __xlac_if_false_0, __xlac_runtime__.current_values(locals(), ('y',)), names=('y',), live=('y',))
    return y
"""
from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field

from xlac.convert.analysis import FunctionFacts
from xlac.convert.exits import Exits, always_returns, tail_returns
from xlac.convert.syntax import (RUNTIME, FunctionRewrite, contains, index_expression, own_scope, placed_at,
                                 runtime_attribute, runtime_call, strings, thunk)

__all__ = ["ControlFlow", "rewrite_control_flow", "UNDEFINED"]

UNDEFINED = "UNDEFINED"                      # RUNTIME.UNDEFINED: a variable no branch has bound yet


@dataclass(frozen=True)
class ControlFlow:
    """What :func:`rewrite_control_flow` made, for the passes after it: ``passing``, the syntax it generated
    to pass variables in and out of branch and loop functions as they are (the tuples of their values, the
    tests that unbind a variable left UNDEFINED, a ``for``'s target bound to its item), which no later pass
    rewrites."""

    passing: frozenset = field(default_factory=frozenset)


def rewrite_control_flow(fn: ast.FunctionDef, facts: dict, exits: Exits, bound_names: set[str], *,
                         keep_asserts: bool) -> ControlFlow:
    """Rewrite the control-flow statements of ``fn`` (nested functions included, not classes), in place.
    ``facts``: :func:`xlac.convert.analysis.analyze`'s result per function, before any rewrite; ``exits``:
    :func:`xlac.convert.exits.normalize_exits`'s; ``bound_names``: the names ``fn``'s scopes bind;
    ``keep_asserts``: False drops asserts (``python -O``)."""
    rewrite = _ControlFlowRewrite(facts, exits, bound_names, keep_asserts)
    rewrite.visit(fn)
    return ControlFlow(frozenset(rewrite.passing))


class _ControlFlowRewrite(FunctionRewrite):
    def __init__(self, facts: dict, exits: Exits, bound_names: set[str], keep_asserts: bool):
        self.facts, self.exits, self.bound_names, self.keep_asserts = facts, exits, bound_names, keep_asserts
        self.counter = itertools.count()
        self.function_stack: list[FunctionFacts] = []
        self.passing: set[ast.AST] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef):
        self.function_stack.append(self.facts[node])
        node = self.generic_visit(node)
        self.function_stack.pop()
        return node

    def _block(self, statements: list) -> list:
        out = []
        for statement in statements:
            new = self.visit(statement)
            out.extend(new if isinstance(new, list) else [new])
        return out

    # ---- if statements

    def visit_If(self, node: ast.If):
        store = _as_one_store(node)
        if store is not None:
            return store
        body, orelse = node.body, node.orelse
        both_return = always_returns(body) and always_returns(orelse)
        reason = _unconvertible_reason(body, both_return) or _unconvertible_reason(orelse, both_return)
        if reason is not None:
            node.test = placed_at(runtime_call("concrete_test", [node.test], {"reason": ast.Constant(reason)}),
                                  node.test)
            node.body, node.orelse = self._block(body), self._block(orelse)
            return node
        n = next(self.counter)
        names = [v for v in _assigned_names(body + orelse) if v != RUNTIME]
        live = self._live_after(node, names)
        before, after = self._bound(node)
        true_name, false_name = f"__xlac_if_true_{n}", f"__xlac_if_false_{n}"
        if both_return:
            true_fn = _branch_function(true_name, names, self._block(body), None)
            false_fn = _branch_function(false_name, names, self._block(orelse), None)
        else:
            true_fn = _branch_function(true_name, names, self._block(body), self._current(names, after))
            false_fn = _branch_function(false_name, names, self._block(orelse), self._current(names, after))
        call = runtime_call("if_return" if both_return else "if_stmt",
                            [node.test, ast.Name(true_name, ast.Load()), ast.Name(false_name, ast.Load()),
                             self._current(names, before)],
                            {"names": strings(names), "live": strings(live), **self._returned(names)})
        out = [true_fn, false_fn] + ([ast.Return(call)] if both_return else
                                     self._assign_back(names, call, after or set()))
        return [placed_at(s, node) for s in out]

    # ---- loops

    def visit_While(self, node: ast.While):
        reason = "it has an else clause" if node.orelse else _unconvertible_reason(node.body, False, loop=True)
        if reason is not None:
            node.test = placed_at(runtime_call("concrete_test", [node.test], {
                "reason": ast.Constant(reason), "what": ast.Constant("while")}), node.test)
            node.body = self._block(node.body)
            return node
        n = next(self.counter)
        names = [v for v in _assigned_names(node.body) if v != RUNTIME]
        before, after = self._bound(node)
        at_end = self._bound(node.body[-1])[1]
        test_fn = _branch_function(f"__xlac_while_test_{n}", names, [], node.test)
        body_fn = _branch_function(f"__xlac_while_body_{n}", names, self._block(node.body),
                                   self._current(names, at_end))
        call = runtime_call("while_stmt", [ast.Name(test_fn.name, ast.Load()), ast.Name(body_fn.name, ast.Load()),
                                           self._current(names, before)],
                            {"names": strings(names), "live": strings(self._live_after(node, names)),
                             "carried": strings(self._carried(node, names)), **self._returned(names)})
        return [placed_at(s, node) for s in [test_fn, body_fn, *self._assign_back(names, call, after or set())]]

    def visit_For(self, node: ast.For):
        if node.orelse or _unconvertible_reason(node.body, False, loop=True) is not None:
            return self.generic_visit(node)
        n = next(self.counter)
        target_names = _assigned_names([ast.Assign([node.target], ast.Constant(None))])
        names = list(dict.fromkeys(target_names + [v for v in _assigned_names(node.body) if v != RUNTIME]))
        item = f"__xlac_item_{n}"
        before, after = self._bound(node)
        at_end = self._bound(node.body[-1])[1]
        bind_target = placed_at(ast.Assign([node.target], ast.Name(item, ast.Load())), node.target)
        self.passing.add(bind_target)
        body_fn = _branch_function(f"__xlac_for_body_{n}", [item] + names, [bind_target] + self._block(node.body),
                                   self._current(names, at_end))
        until = self.exits.break_flags.get(node)
        keywords = {"names": strings(names), "live": strings(self._live_after(node, names)),
                    "carried": strings(self._carried(node, names, until)),
                    "until": ast.Constant(until), **self._returned(names)}
        runner, iterated = self._iteration(node.iter)
        call = runtime_call(runner, [iterated, ast.Name(body_fn.name, ast.Load()), self._current(names, before)],
                            keywords)
        return [placed_at(s, node) for s in [body_fn, *self._assign_back(names, call, after or set())]]

    def _iteration(self, iterator: ast.expr) -> tuple[str, ast.expr]:
        """The runtime function running a ``for`` over ``iterator``, and what it is given: ``range(...)``'s
        bounds; ``enumerate(...)``/``zip(...)`` as ``runtime.loop_enumerate``/``loop_zip`` (arrays' rows can
        be taken with a traced index); anything else as it is."""
        call = iterator if isinstance(iterator, ast.Call) and isinstance(iterator.func, ast.Name) and \
            iterator.func.id not in self.bound_names and not iterator.keywords and \
            not any(isinstance(a, ast.Starred) for a in iterator.args) else None
        if call is not None and call.func.id == "range" and 1 <= len(call.args) <= 3:
            return "for_range", ast.Tuple(call.args, ast.Load())
        if call is not None and (call.func.id == "enumerate" and 1 <= len(call.args) <= 2 or call.func.id == "zip"):
            return "for_each", placed_at(runtime_call(f"loop_{call.func.id}", call.args), iterator)
        return "for_each", iterator

    # ---- assert

    def visit_Assert(self, node: ast.Assert):
        if not self.keep_asserts:
            return placed_at(ast.Pass(), node)
        sources = {"test_source": ast.Constant(ast.unparse(node.test))}
        if node.msg is not None:
            sources["message_source"] = ast.Constant(ast.unparse(node.msg))
        message = [thunk(node.msg)] if node.msg is not None else []
        return placed_at(ast.Expr(runtime_call("assert_", [node.test, *message], sources)), node)

    # ---- what the analysis says of a statement

    def _returned(self, names: list[str]) -> dict:
        """The ``returned=`` keyword of a runtime call: those of ``names`` that hold the value of a ``return``
        inside a loop (see :class:`xlac.convert.exits.Exits`), where there are some."""
        returned = [n for n in names if n in self.exits.return_values]
        return {"returned": strings(returned)} if returned else {}

    def _bound(self, node: ast.stmt) -> tuple[frozenset | None, frozenset | None]:
        """The names surely bound before ``node`` and after it (None where unknown: unreachable)."""
        definitions = self.function_stack[-1].definitions
        return definitions.bound_before.get(node), definitions.bound_after.get(node)

    def _live_after(self, node: ast.stmt, names: list[str]) -> list[str]:
        """The names of ``names`` live after ``node`` (some path from there reads them before binding them):
        a variable bound in one branch only is an error only where it may be read later."""
        live = self.function_stack[-1].live_after.get(node)
        return list(names) if live is None else [n for n in names if n in live]

    def _carried(self, node: ast.stmt, names: list[str], also: str | None = None) -> list[str]:
        """The names of ``names`` the loop ``node`` carries from one iteration to the next (see
        :class:`xlac.convert.analysis.LoopFacts`); its break flag ``also``, which the loop's test reads."""
        facts = self.function_stack[-1].loops.get(node)
        return list(names) if facts is None else [n for n in names if n in facts.carried or n == also]

    # ---- passing variables in and out

    def _current(self, names, bound: frozenset | None) -> ast.expr:
        """The variables' values now: the tuple of ``names`` where each is surely ``bound`` (see
        :class:`xlac.convert.analysis.Definitions`), else ``RUNTIME.current_values(locals(), names)``, UNDEFINED
        where unbound (read through ``locals()``: a converted statement inside may have unbound a variable)."""
        if bound is not None and bound.issuperset(names):
            values = ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load())
        else:
            values = runtime_call("current_values", [ast.Call(ast.Name("locals", ast.Load()), [], []), strings(names)])
        self.passing.add(values)
        return values

    def _assign_back(self, names, call: ast.expr, sure: set) -> list:
        """``(names...) = call``, then each name the call left UNDEFINED unbound again, as Python leaves it,
        except those ``sure`` to be bound after the statement: the runtime gives them values, or UNDEFINED
        where they are dead (a rolled loop's temporaries), which reads as unbound wherever the converted code
        reads them."""
        out = [ast.Assign([ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())], call)]
        for name in names:
            if name in sure:
                continue
            unbound = ast.Compare(ast.Name(name, ast.Load()), [ast.Is()], [runtime_attribute(UNDEFINED)])
            self.passing.add(unbound)
            out.append(ast.If(unbound, [ast.Delete([ast.Name(name, ast.Del())])], []))
        return out


# ---------------------------------------------------------------- which statements can become functions


def _assigned_names(statements) -> list[str]:
    """The variables ``statements`` bind, in first-binding order."""
    names = {}
    for node in own_scope(statements):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.setdefault(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.setdefault(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.setdefault((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.setdefault(node.name)
    return list(names)


def _unconvertible_reason(statements, returns: bool, loop: bool = False) -> str | None:
    """Why these branch statements (a loop's body with ``loop``) cannot become a function, or None.
    ``returns``: the branch must end in a return on every path, and return nowhere else."""
    tail = tail_returns(statements) if returns else set()
    for node in own_scope(statements):
        if isinstance(node, (ast.Break, ast.Continue)) and not _inside_loop(node, statements):
            return "its loop body uses break or continue" if loop else "it leaves a loop with break or continue"
        if isinstance(node, ast.Return) and id(node) not in tail:
            return "it returns from inside the loop" if loop else \
                "it returns from one branch only, or before the branch ends"
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            return "it yields or awaits"
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return "it declares a name global or nonlocal"
        if isinstance(node, ast.Delete) and any(isinstance(t, ast.Name) for t in node.targets):
            return "it deletes a variable"
        if isinstance(node, ast.Name) and node.id in ("super", "__class__"):
            return "it calls super()"
    return None


def _inside_loop(node: ast.AST, statements) -> bool:
    """Whether a break/continue binds to a loop inside ``statements`` (then it stays inside the branch)."""
    for loop in own_scope(statements):
        if isinstance(loop, (ast.For, ast.While, ast.AsyncFor)) and any(n is node for n in ast.walk(loop)):
            return True
    return False


def _branch_function(name: str, params: list[str], body: list, returns: ast.expr | None) -> ast.FunctionDef:
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    body = list(body) + ([ast.Return(returns)] if returns is not None else [])
    return ast.FunctionDef(name, args, body or [ast.Pass()], [], None, type_comment=None)


# ---------------------------------------------------------------- an if that stores either of two values


def _as_one_store(node: ast.If) -> ast.Expr | None:
    """``if t: x[i] = a`` / ``else: x[i] = b`` (``elif`` chains too) as ``runtime.setitem_either(x, i, t,
    lambda: a, lambda: b)``: with a traced test, one store of a selected value instead of a conditional over
    the whole array. Only where ``x`` and ``i`` call nothing (evaluating them before ``t`` changes nothing).
    None for any other ``if``."""
    stores = _branch_stores(node)
    if stores is None:
        return None
    target, when_true, when_false = stores
    call = runtime_call("setitem_either", [target.value, index_expression(target.slice), node.test,
                                           thunk(when_true), thunk(when_false)])
    return placed_at(ast.Expr(call), node)


def _branch_stores(node: ast.If):
    """``(x[i], a, b)`` for ``if t: x[i] = a`` / ``else: x[i] = b`` (an ``elif`` chain's ``b`` a conditional
    expression of its values), where ``x[i]`` calls nothing; else None."""
    def single_store(statements):
        if len(statements) == 1 and isinstance(statements[0], ast.If):
            inner = _branch_stores(statements[0])
            return inner and (inner[0], ast.IfExp(statements[0].test, inner[1], inner[2]))
        if len(statements) == 1 and isinstance(statements[0], ast.Assign) and len(statements[0].targets) == 1 \
                and isinstance(statements[0].targets[0], ast.Subscript):
            return statements[0].targets[0], statements[0].value
        return None
    true, false = single_store(node.body), single_store(node.orelse)
    if true is None or false is None or ast.dump(true[0]) != ast.dump(false[0]) or \
            contains(true[0], (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda)):
        return None
    return true[0], true[1], false[1]
