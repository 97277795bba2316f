"""Exits normalised before the rewrite, so that every loop body and every branch of an ``if`` runs to its end
and can become a function of its variables: one pass, :func:`normalize_exits`, whose result
(:class:`Exits`) the rewrite reads.

Inside loops, ``break``, ``continue`` and ``return`` become flags (TensorFlow AutoGraph's rewriting), so that
a loop whose exit depends on a traced value can become one XLA loop whose carry holds the flags:

- ``break`` sets the loop's break flag: a ``while`` tests ``not flag and (test)``, a ``for`` stops when it
  is set (``Exits.break_flags``); an ``else`` clause runs when it is not set.
- ``continue`` sets the iteration's skip flag, cleared at the top of each iteration.
- ``return value`` inside a loop stores the value (in one of ``Exits.return_values``) and sets a returned
  flag and the break flag; after the loop, ``if returned: return value``.
- The statements of the body after one that may have exited run under ``if not <flag>:``.

A loop whose exit sits inside ``try``, ``with`` or ``match`` stays as written. Only the loop's own exits
change (not those of loops or functions nested in it). Generated names start with ``__xlac_``.

Then every block is rewritten so that an ``if`` with a branch that returns ends its block: the statements
after it join the branches that do not return (see :func:`_returns_as_else`).

>>> import ast
>>> tree = ast.parse("def f(xs):\\n    for x in xs:\\n        if x < 0:\\n            break\\n        y = x\\n")
>>> exits = normalize_exits(tree.body[0])
>>> print(ast.unparse(tree.body[0]))
def f(xs):
    __xlac_break_0 = False
    for x in xs:
        if x < 0:
            __xlac_break_0 = True
        if not __xlac_break_0:
            y = x
>>> list(exits.break_flags.values()), exits.return_values
(['__xlac_break_0'], frozenset())
"""
from __future__ import annotations

import ast
import copy
import itertools
from dataclasses import dataclass

from xlac.convert.syntax import own_scope, placed_at

__all__ = ["Exits", "always_returns", "normalize_exits", "tail_returns"]


@dataclass(frozen=True)
class Exits:
    """What :func:`normalize_exits` made: ``break_flags[loop]``, the name of the flag a ``for`` loop's
    ``break`` (or ``return``) sets, on which the loop stops; ``return_values``, the variables in which a
    ``return`` inside a loop stores its value (unbound until it runs: a traced ``if`` that binds one in one
    branch only gives the other zeros of its type, never read, as the returned flag says)."""

    break_flags: dict
    return_values: frozenset


def normalize_exits(fn: ast.FunctionDef) -> Exits:
    """Rewrite the exits of every loop in ``fn`` (nested functions included), innermost loops first, then
    its returns from inside branches (see the module's docstring)."""
    lowering = _Lowering()
    lowering.visit(fn)
    _normalize_returns(fn)
    return Exits(lowering.break_flags, frozenset(lowering.return_values))


class _Lowering(ast.NodeTransformer):
    def __init__(self):
        self.counter = itertools.count()
        self.break_flags: dict = {}
        self.return_values: list = []

    def visit_While(self, node: ast.While):
        return self._lower(self.generic_visit(node))

    visit_For = visit_While

    def _lower(self, loop):
        exits = list(_own_exits(loop.body))
        if any(guarded_by_block for _, guarded_by_block in exits):
            return loop                                     # an exit inside try/with/match: as written
        if not exits and not loop.orelse:
            return loop
        n = next(self.counter)
        kinds = {type(node) for node, _ in exits}
        flags = _Flags(n, breaks=bool(kinds & {ast.Break, ast.Return}), continues=ast.Continue in kinds,
                       returns=ast.Return in kinds)
        before, after = [], []
        if flags.breaks:
            before.append(_assign(flags.break_name, False))
        if flags.returns:
            before.append(_assign(flags.returned_name, False))
            self.return_values.append(flags.value_name)
        first = loop.body[0]
        loop.body = ([placed_at(_assign(flags.skip_name, False), first)] if flags.continues else []) + \
            flags.guarded(loop.body)
        if flags.breaks:
            if isinstance(loop, ast.While):
                loop.test = placed_at(ast.BoolOp(ast.And(), [_not(flags.break_name), loop.test]), loop.test)
            else:
                self.break_flags[loop] = flags.break_name
        if loop.orelse:
            after += [ast.If(_not(flags.break_name), loop.orelse, [])] if flags.breaks else loop.orelse
            loop.orelse = []
        if flags.returns:
            after.append(ast.If(ast.Name(flags.returned_name, ast.Load()),
                                [ast.Return(ast.Name(flags.value_name, ast.Load()))], []))
        return [placed_at(statement, loop) for statement in before] + [loop] + \
            [placed_at(statement, loop) for statement in after]


class _Flags:
    """One loop's flag variables, and its body rewritten to set and obey them."""

    def __init__(self, n: int, *, breaks: bool, continues: bool, returns: bool):
        self.breaks, self.continues, self.returns = breaks, continues, returns
        self.break_name, self.skip_name = f"__xlac_break_{n}", f"__xlac_continue_{n}"
        self.returned_name, self.value_name = f"__xlac_returned_{n}", f"__xlac_return_value_{n}"

    def guarded(self, statements: list) -> list:
        """``statements`` with each exit replaced by setting flags, and what follows a statement that may
        have exited run only if it did not."""
        out = []
        for i, statement in enumerate(statements):
            if isinstance(statement, (ast.Break, ast.Continue, ast.Return)):
                return out + [placed_at(s, statement) for s in self._exit(statement)]
            out.append(statement)
            if isinstance(statement, ast.If) and any(True for _ in _own_exits([statement])):
                statement.body = self.guarded(statement.body)
                statement.orelse = self.guarded(statement.orelse)
                rest = statements[i + 1:]
                if rest:
                    skip = self.skip_name if self.continues else self.break_name
                    out.append(placed_at(ast.If(_not(skip), self.guarded(rest), []), rest[0]))
                return out
        return out

    def _exit(self, statement) -> list:
        flags = []
        if isinstance(statement, ast.Return):
            value = statement.value if statement.value is not None else ast.Constant(None)
            flags += [_assign(self.returned_name, True), ast.Assign([ast.Name(self.value_name, ast.Store())], value)]
        if isinstance(statement, (ast.Break, ast.Return)):
            flags.append(_assign(self.break_name, True))
        if self.continues:
            flags.append(_assign(self.skip_name, True))
        return flags


def _own_exits(statements):
    """``(node, inside_try_with_or_match)`` for each break/continue/return of the loop whose body is
    ``statements`` (not of loops, functions or classes nested in it)."""
    stack = [(s, False) for s in statements]
    while stack:
        node, guarded_by_block = stack.pop()
        if isinstance(node, (ast.Break, ast.Continue, ast.Return)):
            yield node, guarded_by_block
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            stack += [(s, guarded_by_block) for s in node.orelse]  # `else` exits belong to the outer loop
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        blocks = isinstance(node, (ast.Try, ast.With, ast.AsyncWith, ast.Match)) or \
            type(node).__name__ == "TryStar"
        stack += [(child, guarded_by_block or blocks) for child in ast.iter_child_nodes(node)]


def _assign(name: str, value: bool) -> ast.Assign:
    return ast.Assign([ast.Name(name, ast.Store())], ast.Constant(value))


def _not(name: str) -> ast.UnaryOp:
    return ast.UnaryOp(ast.Not(), ast.Name(name, ast.Load()))


# ---------------------------------------------------------------- returns from branches


def _normalize_returns(fn: ast.FunctionDef) -> None:
    """Rewrite every block so that an ``if`` with a branch that returns ends its block (see
    :func:`_returns_as_else`)."""
    for node in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                at_end = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and field == "body"
                setattr(node, field, _returns_as_else(value, at_end))


def _returns_as_else(statements: list, at_function_end: bool = False) -> list:
    """``if t: ...; return a`` followed by more statements becomes ``if t: ...; return a`` / ``else:`` the
    rest (the rest joins every branch that does not return; after an ``if`` whose branches all return it is
    never reached), so that the ``if`` converts. At a function's end, a branch that does not return gets
    ``return None``. The same program, for Python."""
    for i, statement in enumerate(statements):
        if not isinstance(statement, ast.If):
            continue
        rest = statements[i + 1:]
        is_last = not rest
        branches_return = [always_returns(statement.body), always_returns(statement.orelse)]
        if not (_returns_inside(statement.body) or _returns_inside(statement.orelse)):
            if is_last:
                statement.body = _returns_as_else(statement.body, at_function_end)
                statement.orelse = _returns_as_else(statement.orelse, at_function_end) if statement.orelse else []
            continue
        joined = 0
        for field, returns in zip(("body", "orelse"), branches_return):
            branch = getattr(statement, field)
            if not returns:
                branch = branch + (rest if joined == 0 else copy.deepcopy(rest))     # each node in one place
                joined += 1
                if at_function_end and not always_returns(branch):
                    branch = branch + [placed_at(ast.Return(ast.Constant(None)), statement)]
            setattr(statement, field, _returns_as_else(branch, at_function_end) if branch else [])
        return statements[:i + 1]
    return statements


def always_returns(statements) -> bool:
    """Whether every path through ``statements`` ends in a return at its end."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and always_returns(last.body) and always_returns(last.orelse)


def _returns_inside(statements) -> bool:
    return any(isinstance(n, ast.Return) for n in own_scope(statements))


def tail_returns(statements) -> set[int]:
    """The ids of the returns that end the paths of ``statements`` (see :func:`always_returns`)."""
    if not always_returns(statements):
        return set()
    last = statements[-1]
    if isinstance(last, ast.Return):
        return {id(last)}
    return tail_returns(last.body) | tail_returns(last.orelse)
