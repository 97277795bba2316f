"""Placing generated syntax at the user's source, shared by the rewrites of :mod:`xlac.convert`."""
from __future__ import annotations

import ast

__all__ = ["placed_at"]


def placed_at(new: ast.AST, original: ast.AST) -> ast.AST:
    """``new`` and the nodes generated under it (those without a position) placed at the start of
    ``original``: on one line, so that every instruction of generated code, a method call's too, reports
    the line where the user's construct begins.

    >>> node = placed_at(ast.Pass(), ast.parse("\\n\\nx = 1").body[0])
    >>> node.lineno
    3
    """
    line, column = original.lineno, original.col_offset
    for node in ast.walk(new):
        if "lineno" in node._attributes and (node is new or getattr(node, "lineno", None) is None):
            node.lineno, node.col_offset, node.end_lineno, node.end_col_offset = line, column, line, column
    return new
