"""The source of the user's functions: whether code is the user's, and a function's ``def`` as syntax.

>>> import ast
>>> def double(x):
...     return 2 * x
>>> ast.unparse(definition_of(double)).splitlines()[0]
'def double(x):'
"""
from __future__ import annotations

import ast
import copy
import functools
import linecache
import os
import sysconfig
import types

__all__ = ["NotConvertible", "definition_of", "is_user_code"]

_LIBRARY_DIRS = tuple(os.path.realpath(p) + os.sep for p in
                      {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")})
_XLAC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class NotConvertible(Exception):
    """Why a function's source cannot be had (or converted)."""


def is_user_code(code: types.CodeType) -> bool:
    """Whether code is the user's: not xlac's, nor the standard library's or an installed package's."""
    return _is_user_file(code.co_filename)


@functools.lru_cache(maxsize=4096)
def _is_user_file(filename: str) -> bool:
    if filename.startswith("<frozen"):
        return False
    path = os.path.realpath(filename) if not filename.startswith("<") else filename
    return not path.startswith(_LIBRARY_DIRS) and not path.startswith(_XLAC_DIR) or \
        path.endswith(os.path.join("xlac", "__main__.py"))


def definition_of(fn: types.FunctionType) -> ast.FunctionDef:
    """``fn``'s ``def`` (a lambda as a ``def`` returning its body), found by its line in its file's syntax
    tree (so that a lambda inside a larger expression is found too), undecorated; a copy."""
    code = fn.__code__
    tree = _file_tree(code.co_filename)
    if code.co_name == "<lambda>":
        lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno]
        if len(lambdas) != 1:
            raise NotConvertible("a lambda that shares its line with another lambda")
        node = copy.deepcopy(lambdas[0])
        body = [ast.copy_location(ast.Return(node.body), node.body)]
        return ast.copy_location(ast.FunctionDef("<lambda>", node.args, body, [], None, type_comment=None), node)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name and \
                (node.decorator_list[0].lineno if node.decorator_list else node.lineno) == code.co_firstlineno:
            node = copy.deepcopy(node)
            node.decorator_list = []
            return node
    raise NotConvertible("its def is not where its code says it starts (the file changed?)")


def _file_tree(filename: str) -> ast.Module:
    lines = linecache.getlines(filename)
    if not lines:
        raise NotConvertible("its source is not available")
    return _parsed("".join(lines))


@functools.lru_cache(maxsize=64)
def _parsed(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError:
        raise NotConvertible("its file does not parse") from None
