"""The source rewrite: a function's syntax tree in, the tree of its converted form out.

Every construct that Python evaluates with ``bool()`` or that reaches past xlac becomes a call into
:mod:`xlac.convert.runtime` (bound to the name ``RUNTIME`` in the converted code), which keeps Python's
behaviour for concrete values and routes traced ones into xlac:

- ``if``/``elif``/``else`` statements: each branch becomes a function of the variables it assigns, and
  ``runtime.if_stmt`` runs one of them (a concrete test) or both, as one conditional (a traced test). An
  ``if`` whose branches both end in ``return`` becomes ``return runtime.if_return(...)``; an ``if`` that
  returns, followed by the rest of its block, first becomes an ``if``/``else`` holding that rest.
- conditional expressions, ``and``/``or``, ``not`` and chained comparisons: ``runtime.if_expr``,
  ``and_``, ``or_``, ``not_``, ``compare_chain``, their operands as thunks where Python evaluates them lazily.
- loops: a ``while`` becomes test and body functions of the variables its body binds and
  ``runtime.while_stmt``; a ``for`` over ``range(...)`` a body function of the item and those variables and
  ``runtime.for_range`` (see :mod:`xlac.convert.loops`: rolled when the trip count is traced, or by policy).
- ``assert test, message``: ``runtime.assert_(test, lambda: message)``, a check after the call where the
  test is traced (left out under ``python -O``, as Python leaves asserts out).
- calls: ``runtime.call(f, ...)``, which converts user functions it reaches and routes builtins and
  NumPy's creation functions; a creation call whose result the function later writes into
  (``out = np.zeros(n)`` then ``out[i] = ...``) is ``runtime.call_allocation``.
- reads of state from outside the function: a global or closed-over name or an attribute
  (``self.cache``) as ``runtime.outside(...)``, which makes a floating-point NumPy array found there the
  implicit argument standing for it (read at every call, written back after it), as xlac does for
  outside ``xlac.Array``s; subscripts as ``runtime.getitem`` / ``setitem`` / ``aug_setitem``, which do
  the same for any NumPy array indexed or written with a traced value, and for a floating-point array
  taken from a container (``caches[0]``, ``params["w"]``).
- an operator's result bound by an assignment (``t = b * 2``) as ``runtime.operator_result(...)``, which notes
  a NumPy array there as one the call made.
- reads of the function's own names as ``runtime.current(...)`` (``b += v`` reads ``b`` so first): a NumPy
  array the call made that a traced value was written into, in whichever function, is read as that traced
  value (see :mod:`xlac.outside_state`).

An ``if`` that cannot become a conditional (it breaks, continues, returns from one branch only, declares
names global) stays a Python ``if`` whose test goes through ``runtime.concrete_test``, which explains why
when the test is traced. Generated nodes carry the line of the code they replace, so tracebacks and xlac's
``file:line`` point at the user's source.

>>> import ast
>>> tree = ast.parse("def f(x):\\n    y = 1 if x > 0 else 2\\n    return y")
>>> print(ast.unparse(convert_function(tree.body[0])).splitlines()[1])
    y = __xlac_runtime__.if_expr(__xlac_runtime__.current(x) > 0, lambda: 1, lambda: 2)
"""
from __future__ import annotations

import ast
import itertools
import sys
from typing import Callable

from xlac.convert.analysis import FunctionFacts, analyze
from xlac.convert.exits import Exits, always_returns, normalize_exits, tail_returns
from xlac.convert.syntax import own_scope, place_of, placed_at

RUNTIME = "__xlac_runtime__"
UNDEFINED = "UNDEFINED"                      # RUNTIME.UNDEFINED: a variable no branch has bound yet
# Calls left as they are: they read the caller's frame or scope.
_FRAME_READERS = {"super", "locals", "globals", "vars", "eval", "exec", "__import__"}
ASSERTS_RUN = not sys.flags.optimize         # `python -O` compiles no assert


def convert_function(fn: ast.FunctionDef, resolve: Callable | None = None) -> ast.FunctionDef:
    """``fn`` (a ``def`` without decorators) converted, nested functions included. ``resolve(name)``: what
    a global or free name holds (see :func:`xlac.convert.analysis.analyze`)."""
    if _contains(fn, (ast.Yield, ast.YieldFrom)):
        return fn                                        # a generator: traced as written
    exits = normalize_exits(fn)
    converted = _Converter(_bound_names(fn), resolve, exits).visit(fn)
    return ast.fix_missing_locations(_Expressions().visit(converted))


# ---------------------------------------------------------------- analysis


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


# ---------------------------------------------------------------- building nodes


def _runtime(attr: str) -> ast.expr:
    return ast.Attribute(ast.Name(RUNTIME, ast.Load()), attr, ast.Load())


def _runtime_call(attr: str, args: list, keywords: dict | None = None) -> ast.Call:
    return ast.Call(_runtime(attr), args, [ast.keyword(k, v) for k, v in (keywords or {}).items()])


def _thunk(expr: ast.expr) -> ast.Lambda:
    no_args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                            defaults=[])
    return ast.Lambda(no_args, expr)


def _strings(names) -> ast.Tuple:
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def _names(names, ctx) -> ast.Tuple:
    return ast.Tuple([ast.Name(n, ctx()) for n in names], ctx())


def _branch_function(name: str, params: list[str], body: list, returns: ast.expr | None) -> ast.FunctionDef:
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    body = list(body) + ([ast.Return(returns)] if returns is not None else [])
    return ast.FunctionDef(name, args, body or [ast.Pass()], [], None, type_comment=None)


def _current(names, bound: frozenset | None) -> ast.expr:
    """The variables' values now: the tuple of ``names`` where each is surely ``bound`` (see
    :class:`xlac.convert.analysis.Definitions`), else ``RUNTIME.current_values(locals(), names)``, UNDEFINED
    where unbound (read through ``locals()``: a converted statement inside may have unbound a variable)."""
    if bound is not None and bound.issuperset(names):
        return _names(names, ast.Load)
    return _runtime_call("current_values", [ast.Call(ast.Name("locals", ast.Load()), [], []), _strings(names)])


def _assign_back(names, call: ast.expr, sure: set) -> list:
    """``(names...) = call``, then each name the call left UNDEFINED unbound again, as Python leaves it, except
    those ``sure`` to be bound after the statement: the runtime gives them values, or UNDEFINED where they
    are dead (a rolled loop's temporaries), which reads as unbound wherever the converted code reads them."""
    out = [ast.Assign([_names(names, ast.Store)], call)]
    for name in names:
        if name in sure:
            continue
        out.append(ast.If(ast.Compare(ast.Name(name, ast.Load()), [ast.Is()], [_runtime(UNDEFINED)]),
                          [ast.Delete([ast.Name(name, ast.Del())])], []))
    return out


def _as_one_store(node: ast.If) -> ast.Expr | None:
    """``if t: x[i] = a`` / ``else: x[i] = b`` (``elif`` chains too) as ``runtime.setitem_either(x, i, t,
    lambda: a, lambda: b)``: with a traced test, one store of a selected value instead of a conditional over
    the whole array. Only where ``x`` and ``i`` call nothing (evaluating them before ``t`` changes nothing).
    None for any other ``if``."""
    stores = _branch_stores(node)
    if stores is None:
        return None
    target, when_true, when_false = stores
    call = _runtime_call("setitem_either", [target.value, _index_expression(target.slice), node.test,
                                            _thunk(when_true), _thunk(when_false)])
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
            _contains(true[0], (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda)):
        return None
    return true[0], true[1], false[1]


def _contains(node: ast.AST, kinds) -> bool:
    return any(isinstance(n, kinds) for n in ast.walk(node))


# ---------------------------------------------------------------- the rewrite


class _Converter(ast.NodeTransformer):
    def __init__(self, bound_names: set[str], resolve: Callable | None, exits: Exits):
        self.bound_names, self.resolve, self.exits = bound_names, resolve, exits
        self.counter = itertools.count()
        self.function_stack: list[ast.AST] = []
        self.facts: dict[ast.AST, FunctionFacts] = {}     # per function, analysed before it is rewritten

    # ---- scopes

    def visit_FunctionDef(self, node: ast.FunctionDef):
        self.function_stack.append(node)
        self.facts[node] = analyze(node, self.resolve)
        node = self.generic_visit(node)
        self.function_stack.pop()
        return node

    def visit_AsyncFunctionDef(self, node):
        return node

    def visit_ClassDef(self, node):
        return node                                      # methods are converted when they are called

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
            return self.visit(store)
        body, orelse = node.body, node.orelse
        both_return = always_returns(body) and always_returns(orelse)
        reason = _unconvertible_reason(body, both_return) or _unconvertible_reason(orelse, both_return)
        test = self.visit(node.test)
        if reason is not None:
            node.test = placed_at(
                _runtime_call("concrete_test", [test], {"reason": ast.Constant(reason)}), node.test)
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
            true_fn = _branch_function(true_name, names, self._block(body), _current(names, after))
            false_fn = _branch_function(false_name, names, self._block(orelse), _current(names, after))
        call = _runtime_call("if_return" if both_return else "if_stmt",
                             [test, ast.Name(true_name, ast.Load()), ast.Name(false_name, ast.Load()),
                              _current(names, before)],
                             {"names": _strings(names), "live": _strings(live), **self._returned(names)})
        out = [true_fn, false_fn] + ([ast.Return(call)] if both_return else
                                     _assign_back(names, call, after or set()))
        return [placed_at(s, node) for s in out]

    def _returned(self, names: list[str]) -> dict:
        """The ``returned=`` keyword of a runtime call: those of ``names`` that hold the value of a ``return``
        inside a loop (see :class:`xlac.convert.exits.Exits`), where there are some."""
        returned = [n for n in names if n in self.exits.return_values]
        return {"returned": _strings(returned)} if returned else {}

    def _bound(self, node: ast.stmt) -> tuple[frozenset | None, frozenset | None]:
        """The names surely bound before ``node`` and after it (None where unknown: unreachable)."""
        definitions = self.facts[self.function_stack[-1]].definitions
        return definitions.bound_before.get(node), definitions.bound_after.get(node)

    def _live_after(self, node: ast.stmt, names: list[str]) -> list[str]:
        """The names of ``names`` live after ``node`` (some path from there reads them before binding them):
        a variable bound in one branch only is an error only where it may be read later."""
        live = self.facts[self.function_stack[-1]].live_after.get(node)
        return list(names) if live is None else [n for n in names if n in live]

    def _carried(self, node: ast.stmt, names: list[str], also: str | None = None) -> list[str]:
        """The names of ``names`` the loop ``node`` carries from one iteration to the next (see
        :class:`xlac.convert.analysis.LoopFacts`); its break flag ``also``, which the loop's test reads."""
        facts = self.facts[self.function_stack[-1]].loops.get(node)
        return list(names) if facts is None else [n for n in names if n in facts.carried or n == also]

    # ---- loops

    def visit_While(self, node: ast.While):
        reason = "it has an else clause" if node.orelse else _unconvertible_reason(node.body, False, loop=True)
        test = self.visit(node.test)
        if reason is not None:
            node.test = placed_at(_runtime_call("concrete_test", [test], {
                "reason": ast.Constant(reason), "what": ast.Constant("while")}),
                node.test)
            node.body = self._block(node.body)
            return node
        n = next(self.counter)
        names = [v for v in _assigned_names(node.body) if v != RUNTIME]
        before, after = self._bound(node)
        at_end = self._bound(node.body[-1])[1]
        live = self._live_after(node, names)
        test_fn = _branch_function(f"__xlac_while_test_{n}", names, [], test)
        body_fn = _branch_function(f"__xlac_while_body_{n}", names, self._block(node.body), _current(names, at_end))
        call = _runtime_call("while_stmt", [ast.Name(test_fn.name, ast.Load()), ast.Name(body_fn.name, ast.Load()),
                                            _current(names, before)],
                             {"names": _strings(names), "live": _strings(live),
                              "carried": _strings(self._carried(node, names)), **self._returned(names)})
        return [placed_at(s, node) for s in [test_fn, body_fn, *_assign_back(names, call, after or set())]]

    def visit_For(self, node: ast.For):
        if node.orelse or _unconvertible_reason(node.body, False, loop=True) is not None:
            return self.generic_visit(node)
        n = next(self.counter)
        target_names = [v for v in _assigned_names([ast.Assign([node.target], ast.Constant(None))])]
        names = list(dict.fromkeys(target_names + [v for v in _assigned_names(node.body) if v != RUNTIME]))
        item = f"__xlac_item_{n}"
        before, after = self._bound(node)
        at_end = self._bound(node.body[-1])[1]
        live = self._live_after(node, names)
        bind_target = placed_at(ast.Assign([node.target], ast.Name(item, ast.Load())), node.target)
        body_fn = _branch_function(f"__xlac_for_body_{n}", [item] + names, [bind_target] + self._block(node.body),
                                   _current(names, at_end))
        until = self.exits.break_flags.get(node)
        keywords = {"names": _strings(names), "live": _strings(live),
                    "carried": _strings(self._carried(node, names, until)),
                    "until": ast.Constant(until), **self._returned(names)}
        runner, iterated = self._iteration(node.iter)
        call = _runtime_call(runner, [iterated, ast.Name(body_fn.name, ast.Load()), _current(names, before)],
                             keywords)
        return [placed_at(s, node) for s in [body_fn, *_assign_back(names, call, after or set())]]

    def _iteration(self, iterator: ast.expr) -> tuple[str, ast.expr]:
        """The runtime function running a ``for`` over ``iterator``, and what it is given: ``range(...)``'s
        bounds; ``enumerate(...)``/``zip(...)`` as ``runtime.loop_enumerate``/``loop_zip`` (arrays' rows can
        be taken with a traced index); anything else as it is."""
        call = iterator if isinstance(iterator, ast.Call) and isinstance(iterator.func, ast.Name) and \
            iterator.func.id not in self.bound_names and not iterator.keywords and \
            not any(isinstance(a, ast.Starred) for a in iterator.args) else None
        if call is not None and call.func.id == "range" and 1 <= len(call.args) <= 3:
            return "for_range", ast.Tuple([self.visit(a) for a in call.args], ast.Load())
        if call is not None and (call.func.id == "enumerate" and 1 <= len(call.args) <= 2 or call.func.id == "zip"):
            return "for_each", placed_at(_runtime_call(f"loop_{call.func.id}", [self.visit(a) for a in call.args]),
                                         iterator)
        return "for_each", self.visit(iterator)

    # ---- assert

    def visit_Assert(self, node: ast.Assert):
        if not ASSERTS_RUN:
            return placed_at(ast.Pass(), node)
        sources = {"test_source": ast.Constant(ast.unparse(node.test))}
        if node.msg is not None:
            sources["message_source"] = ast.Constant(ast.unparse(node.msg))
        node = self.generic_visit(node)
        message = [_thunk(node.msg)] if node.msg is not None else []
        return placed_at(ast.Expr(_runtime_call("assert_", [node.test, *message], sources)), node)

    def visit_Call(self, node: ast.Call):
        callee = node.func
        if isinstance(callee, ast.Attribute):                   # a method: its object may be outside state
            callee.value = self.visit(callee.value)
        elif not isinstance(callee, ast.Name):
            node.func = self.visit(callee)
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        func = node.func
        if isinstance(func, ast.Name) and (func.id in _FRAME_READERS or func.id.startswith("__xlac")):
            return node
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == RUNTIME:
            return node
        return placed_at(ast.Call(_runtime("call"), [func, *node.args], node.keywords), node)

    def visit_Name(self, node: ast.Name):
        if not isinstance(node.ctx, ast.Load) or node.id.startswith("__xlac"):
            return node
        read = "current" if node.id in self.bound_names else "outside"
        return placed_at(_runtime_call(read, [node]), node)

    def visit_Attribute(self, node: ast.Attribute):
        node = self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and not (isinstance(node.value, ast.Name) and node.value.id == RUNTIME):
            return placed_at(_runtime_call("outside", [node]), node)
        return node

    def visit_Subscript(self, node: ast.Subscript):
        node = self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            return placed_at(_runtime_call("getitem", [node.value, _index_expression(node.slice)]), node)
        return node

    def visit_AugAssign(self, node: ast.AugAssign):
        node = self.generic_visit(node)
        target = node.target
        if isinstance(target, ast.Name) and target.id in self.bound_names:
            # `b += v` reads b as Python does, unseen: read it as any other read of a local name first
            read = ast.Assign([ast.Name(target.id, ast.Store())], _runtime_call("current", [ast.Name(target.id, ast.Load())]))
            return [placed_at(read, node), node]
        if not isinstance(target, ast.Subscript):
            return node
        symbol = _AUGMENTED_SYMBOLS[type(node.op)]
        return placed_at(ast.Expr(_runtime_call("aug_setitem", [target.value, _index_expression(target.slice),
                                                               ast.Constant(symbol), node.value])), node)

    def visit_Assign(self, node: ast.Assign):
        node = self.generic_visit(node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            target = node.targets[0]
            return placed_at(ast.Expr(_runtime_call("setitem", [target.value, _index_expression(target.slice),
                                                               node.value])), node)
        value = node.value
        if isinstance(value, (ast.BinOp, ast.UnaryOp)):      # `t = b * 2`: NumPy's operators make new arrays
            node.value = placed_at(_runtime_call("operator_result", [value]), value)
            return node
        written = {access.place for access in self.facts[self.function_stack[-1]].array_writes if not access.assumed}
        writes_into = any(place_of(t) in written for t in node.targets)
        if writes_into and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr == "call" and isinstance(value.func.value, ast.Name) \
                and value.func.value.id == RUNTIME:
            value.func.attr = "call_allocation"       # a NumPy array the function fills: an xlac one
        return node


class _Expressions(ast.NodeTransformer):
    """The expressions Python evaluates lazily or by truth, as runtime calls (after :class:`_Converter`, on
    its result): conditional expressions, ``and``/``or``, ``not`` and chained comparisons."""

    def visit_AsyncFunctionDef(self, node):
        return node

    def visit_ClassDef(self, node):
        return node

    def visit_IfExp(self, node: ast.IfExp):
        node = self.generic_visit(node)
        if _contains(node, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)):
            return node
        return placed_at(_runtime_call("if_expr", [node.test, _thunk(node.body), _thunk(node.orelse)]), node)

    def visit_BoolOp(self, node: ast.BoolOp):
        node = self.generic_visit(node)
        if _contains(node, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)):
            return node
        attr = "and_" if isinstance(node.op, ast.And) else "or_"
        return placed_at(_runtime_call(attr, [_thunk(v) for v in node.values]), node)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        node = self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return placed_at(_runtime_call("not_", [node.operand]), node)
        return node

    def visit_Compare(self, node: ast.Compare):
        node = self.generic_visit(node)
        if len(node.ops) == 1 and not isinstance(node.ops[0], (ast.In, ast.NotIn)) or \
                _contains(node, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)):
            return node
        symbols = tuple(_COMPARISON_SYMBOLS[type(op)] for op in node.ops)
        operands = [_thunk(e) for e in [node.left, *node.comparators]]
        return placed_at(_runtime_call("compare_chain", operands, {"ops": _strings(symbols)}), node)


_COMPARISON_SYMBOLS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
                       ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


def _index_expression(index: ast.expr) -> ast.expr:
    """A subscript's index as an expression: ``a:b:c`` becomes ``slice(a, b, c)``, inside tuples too."""
    if isinstance(index, ast.Slice):
        bounds = [b if b is not None else ast.Constant(None) for b in (index.lower, index.upper, index.step)]
        return placed_at(ast.Call(_runtime("index_slice"), bounds, []), index)
    if isinstance(index, ast.Tuple):
        return placed_at(ast.Tuple([_index_expression(e) for e in index.elts], ast.Load()), index)
    return index


_AUGMENTED_SYMBOLS = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.Div: "/=", ast.FloorDiv: "//=",
                      ast.Mod: "%=", ast.Pow: "**=", ast.MatMult: "@=", ast.BitAnd: "&=", ast.BitOr: "|=",
                      ast.BitXor: "^=", ast.LShift: "<<=", ast.RShift: ">>="}
