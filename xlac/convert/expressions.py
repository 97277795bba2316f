"""The expressions Python evaluates lazily or by truth, as calls into :mod:`xlac.convert.runtime` (the last
pass of the rewrite): conditional expressions (``runtime.if_expr``), ``and``/``or`` (``runtime.and_``,
``or_``, their operands as thunks), ``not`` (``runtime.not_``) and chained comparisons
(``runtime.compare_chain``, each operand evaluated once, when Python would).

>>> import ast
>>> fn = ast.parse("def f(x):\\n    return 1 if 0 < x < 2 else 2").body[0]
>>> rewrite_expressions(fn)
>>> print(ast.unparse(fn).replace("__xlac_runtime__", "RUNTIME"))
def f(x):
    return RUNTIME.if_expr(RUNTIME.compare_chain(lambda: 0, lambda: x, lambda: 2, ops=('<', '<')), lambda: 1, lambda: 2)
"""
from __future__ import annotations

import ast

from xlac.convert.syntax import FunctionRewrite, contains, placed_at, runtime_call, strings, thunk

__all__ = ["rewrite_expressions"]

# An expression holding these stays as written: a thunk would change where they bind or run.
_NOT_IN_THUNKS = (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)


def rewrite_expressions(fn: ast.FunctionDef) -> None:
    """Rewrite these expressions in ``fn`` (nested functions included, not classes), in place."""
    _Expressions().visit(fn)


class _Expressions(FunctionRewrite):
    def visit_IfExp(self, node: ast.IfExp):
        node = self.generic_visit(node)
        if contains(node, _NOT_IN_THUNKS):
            return node
        return placed_at(runtime_call("if_expr", [node.test, thunk(node.body), thunk(node.orelse)]), node)

    def visit_BoolOp(self, node: ast.BoolOp):
        node = self.generic_visit(node)
        if contains(node, _NOT_IN_THUNKS):
            return node
        attr = "and_" if isinstance(node.op, ast.And) else "or_"
        return placed_at(runtime_call(attr, [thunk(v) for v in node.values]), node)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        node = self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return placed_at(runtime_call("not_", [node.operand]), node)
        return node

    def visit_Compare(self, node: ast.Compare):
        node = self.generic_visit(node)
        if len(node.ops) == 1 and not isinstance(node.ops[0], (ast.In, ast.NotIn)) or contains(node, _NOT_IN_THUNKS):
            return node
        symbols = tuple(_COMPARISON_SYMBOLS[type(op)] for op in node.ops)
        operands = [thunk(e) for e in [node.left, *node.comparators]]
        return placed_at(runtime_call("compare_chain", operands, {"ops": strings(symbols)}), node)


_COMPARISON_SYMBOLS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
                       ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
