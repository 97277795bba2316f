"""Syntax helpers shared by the analyses and rewrites of :mod:`xlac.convert`: placing generated syntax at the
user's source, walking one scope, naming places, building calls into the converted code's runtime.

>>> ast.unparse(runtime_call("current", [ast.Name("x", ast.Load())]))
'__xlac_runtime__.current(x)'
"""
from __future__ import annotations

import ast

__all__ = ["RUNTIME", "SCOPES", "FunctionRewrite", "contains", "index_expression", "is_runtime_attribute",
           "own_scope", "place_of", "placed_at", "runtime_attribute", "runtime_call", "strings", "thunk"]

RUNTIME = "__xlac_runtime__"                 # the name of xlac.convert.runtime in the converted code

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


def runtime_attribute(attr: str) -> ast.expr:
    """``RUNTIME.attr``."""
    return ast.Attribute(ast.Name(RUNTIME, ast.Load()), attr, ast.Load())


def is_runtime_attribute(node: ast.expr) -> bool:
    """Whether ``node`` is ``RUNTIME.something``: converted code's own, not the user's."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == RUNTIME


def runtime_call(attr: str, args: list, keywords: dict | None = None) -> ast.Call:
    """``RUNTIME.attr(*args, **keywords)``."""
    return ast.Call(runtime_attribute(attr), args, [ast.keyword(k, v) for k, v in (keywords or {}).items()])


def thunk(expr: ast.expr) -> ast.Lambda:
    """``lambda: expr``."""
    no_args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                            defaults=[])
    return ast.Lambda(no_args, expr)


def strings(names) -> ast.Tuple:
    """A tuple of string constants."""
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def contains(node: ast.AST, kinds) -> bool:
    """Whether ``node`` or a node below it is one of ``kinds``."""
    return any(isinstance(n, kinds) for n in ast.walk(node))


def index_expression(index: ast.expr) -> ast.expr:
    """A subscript's index as an expression: ``a:b:c`` becomes ``RUNTIME.index_slice(a, b, c)``, inside tuples too."""
    if isinstance(index, ast.Slice):
        bounds = [b if b is not None else ast.Constant(None) for b in (index.lower, index.upper, index.step)]
        return placed_at(ast.Call(runtime_attribute("index_slice"), bounds, []), index)
    if isinstance(index, ast.Tuple):
        return placed_at(ast.Tuple([index_expression(e) for e in index.elts], ast.Load()), index)
    return index


class FunctionRewrite(ast.NodeTransformer):
    """A rewrite of a function and the functions nested in it: classes (whose methods are converted when
    they are called) and async functions stay as written."""

    def visit_AsyncFunctionDef(self, node):
        return node

    def visit_ClassDef(self, node):
        return node
