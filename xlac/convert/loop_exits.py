"""``break``, ``continue`` and ``return`` inside loops rewritten as flags (TensorFlow AutoGraph's rewriting),
so that every loop body runs to its end and can become a function of its variables, and a loop whose exit
depends on a traced value can become one XLA loop whose carry holds the flags.

- ``break`` sets the loop's break flag: a ``while`` tests ``not flag and (test)``, a ``for`` stops when it
  is set (the loop node carries the flag's name as ``xlac_break``); an ``else`` clause runs when it is not set.
- ``continue`` sets the iteration's skip flag, cleared at the top of each iteration.
- ``return value`` inside a loop stores the value and sets a returned flag and the break flag; after the loop,
  ``if returned: return value``.
- The statements of the body after one that may have exited run under ``if not <flag>:``.

A loop whose exit sits inside ``try``, ``with`` or ``match`` stays as written. Only the loop's own exits
change (not those of loops or functions nested in it). Generated names start with ``__xlac_``.

>>> import ast
>>> tree = ast.parse("def f(xs):\\n    for x in xs:\\n        if x < 0:\\n            break\\n        y = x\\n")
>>> lower_loop_exits(tree.body[0])
>>> print(ast.unparse(tree.body[0]))
def f(xs):
    __xlac_break_0 = False
    for x in xs:
        if x < 0:
            __xlac_break_0 = True
        if not __xlac_break_0:
            y = x
"""
from __future__ import annotations

import ast
import itertools

from xlac.convert.syntax import placed_at

__all__ = ["lower_loop_exits", "RETURN_VALUE_PREFIX"]

RETURN_VALUE_PREFIX = "__xlac_return_value_"      # the value a `return` inside a loop stores


def lower_loop_exits(fn: ast.FunctionDef) -> None:
    """Rewrite the exits of every loop in ``fn`` (nested functions included), innermost loops first."""
    _Lowering().visit(fn)


class _Lowering(ast.NodeTransformer):
    def __init__(self):
        self.counter = itertools.count()

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
        first = loop.body[0]
        loop.body = ([placed_at(_assign(flags.skip_name, False), first)] if flags.continues else []) + \
            flags.guarded(loop.body)
        if flags.breaks:
            if isinstance(loop, ast.While):
                loop.test = placed_at(ast.BoolOp(ast.And(), [_not(flags.break_name), loop.test]), loop.test)
            else:
                loop.xlac_break = flags.break_name
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
        self.returned_name, self.value_name = f"__xlac_returned_{n}", f"{RETURN_VALUE_PREFIX}{n}"

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
