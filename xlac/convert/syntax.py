"""Syntax helpers shared by the analyses and rewrites of :mod:`xlac.convert`: placing generated syntax at the
user's source, walking one scope, naming places."""
from __future__ import annotations

import ast

__all__ = ["SCOPES", "own_scope", "place_of", "placed_at"]

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
          ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


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


def own_scope(nodes):
    """The nodes of ``nodes`` and below, not entering nested scopes (yielded themselves, with the parts of
    them evaluated in this scope: decorators, defaults, a comprehension's first iterable)."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, SCOPES):
                stack.append(child)
                continue
            yield child
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                stack.extend(child.args.defaults + [d for d in child.args.kw_defaults if d is not None])
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.extend(child.decorator_list)
            if isinstance(child, ast.ClassDef):
                stack.extend(child.bases + [k.value for k in child.keywords])
            if isinstance(child, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                stack.append(child.generators[0].iter)


def place_of(node: ast.expr) -> str | None:
    """A name or attribute chain (``out``, ``self.cache``) as text; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = place_of(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None
