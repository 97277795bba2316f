"""Converted functions, made once per code object and shared by every function object of that code.

The converted ``def`` is compiled inside a factory whose parameters are the original's free variables,
so that it compiles to a code object with the same free variables; each function object is then rebuilt
from it with the original's globals, defaults and closure cells (a closure sees later rebindings of the
enclosing variables as the original does) plus one cell holding :mod:`xlac.convert.runtime`. No user
module or object is modified. Code that cannot be converted (no source, a generator, a lambda that shares
its line with another) is traced as written; :func:`why_not_converted` says why.

>>> def double(x):
...     return x * 2 if x > 0 else 0
>>> converted(double)(3), converted(double) is double
(6, False)
"""
from __future__ import annotations

import ast
import functools
import inspect
import threading
import types
import weakref
from dataclasses import dataclass

from xlac.convert.analysis import namespace_resolver
from xlac.convert.rewrite import RUNTIME, convert_function
from xlac.convert.source import NotConvertible, definition_of, is_user_code

_FACTORY = "__xlac_factory__"


@dataclass(frozen=True)
class _ConvertedCode:
    code: types.CodeType
    runtime_cell: types.CellType


_lock = threading.Lock()
_by_code: "weakref.WeakKeyDictionary[types.CodeType, _ConvertedCode | str]" = weakref.WeakKeyDictionary()


def converted(fn):
    """The callable ``fn`` with its user code converted: a function, a bound method, a ``functools.partial``
    or an object with a ``__call__`` written in Python. Anything else comes back as it is."""
    if isinstance(fn, functools.partial):
        inner = converted(fn.func)
        return fn if inner is fn.func else functools.partial(inner, *fn.args, **fn.keywords)
    if isinstance(fn, types.MethodType):
        inner = converted(fn.__func__)
        return fn if inner is fn.__func__ else types.MethodType(inner, fn.__self__)
    if isinstance(fn, types.FunctionType):
        return _converted_function(fn)
    if isinstance(fn, type) or not callable(fn):
        return fn
    call = getattr(type(fn), "__call__", None)
    if isinstance(call, types.FunctionType):
        inner = _converted_function(call)
        return fn if inner is call else types.MethodType(inner, fn)
    return fn


def why_not_converted(fn) -> str | None:
    """Why ``fn`` (a function) runs as written, or None where it is converted.

    >>> why_not_converted(len)
    'a builtin or library function'
    """
    if not isinstance(fn, types.FunctionType) or not is_user_code(fn.__code__):
        return "a builtin or library function"
    entry = _entry(fn)
    return entry if isinstance(entry, str) else None


def _converted_function(fn: types.FunctionType) -> types.FunctionType:
    if not is_user_code(fn.__code__):
        return fn
    entry = _entry(fn)
    if isinstance(entry, str):
        return fn
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cells[RUNTIME] = entry.runtime_cell
    if any(name not in cells for name in entry.code.co_freevars):
        return fn
    new = types.FunctionType(entry.code, fn.__globals__, fn.__name__, fn.__defaults__,
                             tuple(cells[name] for name in entry.code.co_freevars))
    new.__kwdefaults__, new.__annotations__ = fn.__kwdefaults__, fn.__annotations__
    new.__qualname__, new.__doc__, new.__module__ = fn.__qualname__, fn.__doc__, fn.__module__
    new.__dict__.update(fn.__dict__)
    new.__wrapped__ = fn
    return new


def _entry(fn: types.FunctionType) -> _ConvertedCode | str:
    code = fn.__code__
    with _lock:
        entry = _by_code.get(code)
        if entry is None:
            try:
                entry = _convert(fn)
            except NotConvertible as reason:
                entry = str(reason)
            _by_code[code] = entry
    return entry


def _convert(fn: types.FunctionType) -> _ConvertedCode:
    code = fn.__code__
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        raise NotConvertible("a generator or coroutine")
    definition = definition_of(fn)
    if any(isinstance(n, (ast.Name, ast.Attribute)) and _is_private(n.id if isinstance(n, ast.Name) else n.attr)
           for n in ast.walk(definition)):
        raise NotConvertible("it uses a private name (__name), which Python mangles per class")
    _strip_evaluated_at_def(definition)
    converted_def = convert_function(definition, namespace_resolver(fn))
    freevars = list(code.co_freevars)
    # The def binds its name in the factory: a function that calls itself by that name must still reach it
    # where the original does (its module's global, or its own closure cell), not the factory's local.
    own_name = [ast.Global([converted_def.name])] if converted_def.name.isidentifier() and \
        converted_def.name not in freevars else []
    factory = ast.FunctionDef(
        _FACTORY, ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in freevars], vararg=None, kwonlyargs=[],
                                kw_defaults=[], kwarg=None, defaults=[]),
        [*own_name, ast.Import([ast.alias("xlac.convert.runtime", RUNTIME)]), converted_def,
         ast.Return(ast.Name(converted_def.name, ast.Load()))], [], None, type_comment=None)
    module = ast.fix_missing_locations(ast.Module([ast.copy_location(factory, definition)], []))
    namespace: dict = {}
    exec(compile(module, code.co_filename, "exec"), namespace)
    sample = namespace[_FACTORY](*[None] * len(freevars))
    new_code = sample.__code__
    if RUNTIME not in new_code.co_freevars:
        raise NotConvertible("nothing to convert")
    return _ConvertedCode(new_code, sample.__closure__[new_code.co_freevars.index(RUNTIME)])


def _strip_evaluated_at_def(definition: ast.FunctionDef) -> None:
    """Defaults and annotations are evaluated where the ``def`` runs, here the factory: the original's values
    are used instead (``__defaults__``, ``__kwdefaults__``, ``__annotations__``)."""
    args = definition.args
    args.defaults, args.kw_defaults = [], [None] * len(args.kwonlyargs)
    for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if arg is not None:
            arg.annotation = None
    definition.returns = None


def _is_private(name: str) -> bool:
    return name.startswith("__") and not name.endswith("__") and not name.startswith("__xlac")
