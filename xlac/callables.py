"""What xlac reads from a callable it compiles or transforms, whatever its kind: a plain function, a
``functools.partial``, a bound method, or an object with ``__call__`` (as JAX's ``jit`` takes them all).

>>> import functools
>>> def scale(a, x):
...     return a * x
>>> callable_name(functools.partial(scale, 2.0))
'partial(scale)'
>>> code, bound = code_and_bound_values(functools.partial(scale, 2.0))
>>> code is scale, bound
(True, [('a', 2.0)])
"""
from __future__ import annotations

import functools
import inspect
import types


def callable_name(fn) -> str:
    """A readable name for ``fn``: its ``__name__``, ``partial(<name>)`` for a partial, the class name for
    a callable object.

    >>> class Model:
    ...     def __call__(self, x):
    ...         return x
    ...     def step(self, x):
    ...         return x
    >>> callable_name(Model()), callable_name(Model().step), callable_name(len)
    ('Model', 'step', 'len')
    """
    if isinstance(fn, functools.partial):
        return f"partial({callable_name(fn.func)})"
    name = getattr(fn, "__name__", None)
    if isinstance(name, str):
        return name
    return type(fn).__name__


def code_and_bound_values(fn) -> tuple[object, list[tuple[str, object]]]:
    """The Python function whose code runs when ``fn`` is called, and the values ``fn`` binds to its
    parameters, by parameter name: a partial's arguments, a bound method's or callable object's ``self``.

    >>> class Model:
    ...     def __call__(self, x):
    ...         return x
    >>> model = Model()
    >>> code, bound = code_and_bound_values(model)
    >>> code is Model.__call__, bound == [("self", model)]
    (True, True)
    """
    if isinstance(fn, functools.partial):
        code, bound = code_and_bound_values(fn.func)
        names = _positional_names(code)[len(bound):]
        bound = bound + [(names[i] if i < len(names) else f"args[{i}]", value) for i, value in enumerate(fn.args)]
        return code, bound + list(fn.keywords.items())
    if isinstance(fn, types.MethodType):
        code, bound = code_and_bound_values(fn.__func__)
        names = _positional_names(code)
        return code, bound + [(names[0] if names else "self", fn.__self__)]
    if isinstance(fn, (types.FunctionType, types.BuiltinFunctionType, type)) or not callable(fn):
        return fn, []
    call = getattr(type(fn), "__call__", None)
    if not isinstance(call, types.FunctionType):
        return fn, []
    names = _positional_names(call)
    return call, [(names[0] if names else "self", fn)]


def _positional_names(fn) -> list[str]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
