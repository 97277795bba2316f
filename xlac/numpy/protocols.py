"""NumPy's dispatch protocols for xlac.Array and tracers: ``np.exp(x)`` and ``np.sum(x)`` run xlac.numpy.

NumPy hands a ufunc call whose operands include an xlac array to ``__array_ufunc__``,
and a call of any other NumPy function to ``__array_function__``. Both look up the
``xlac.numpy`` function of the same name (``numpy.linalg.norm`` -> ``xlac.numpy.linalg.norm``)
and call it with the same arguments, so unmodified NumPy code compiles.

A NumPy function xlac lacks raises :class:`xlac.UnsupportedError` naming it inside a
compiled function: running it in NumPy would need the traced value. Outside a compiled
function the call falls back to NumPy on host copies and returns NumPy arrays.

>>> import numpy as np, xlac
>>> x = xlac.asarray(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
>>> np.sum(np.exp(x) > 5, axis=-1, keepdims=True)
Array([[1],
       [2]], dtype=int64)
"""
from __future__ import annotations

import functools
import inspect
import sys

import numpy as np

from xlac.array import Array
from xlac.errors import located, UnsupportedError
from xlac.numpy.array_api import namespace_for
from xlac.trace import pytree
from xlac.trace.state import current_trace

# NumPy functions whose xlac.numpy counterpart has another name.
_RENAMED = {"numpy.round_": "round", "numpy.product": "prod", "numpy.cumproduct": "cumprod",
            "numpy.alltrue": "all", "numpy.sometrue": "any", "numpy.trapz": "trapezoid"}


def _inside_trace() -> bool:
    return current_trace() is not None


def _unsupported(what: str, why: str):
    if _inside_trace():
        raise UnsupportedError(located(
            f"{what} is not supported by xlac ({why}) and cannot run on a traced value inside a compiled "
            "function. Write it with xlac.numpy functions, or call it outside the compiled function."))
    return None


def xlac_function_for(func) -> object | None:
    """The xlac.numpy function standing for the NumPy function ``func``, or None.

    >>> import numpy as np
    >>> xlac_function_for(np.linalg.norm).__module__
    'xlac.numpy.linalg'
    """
    module = getattr(func, "__module__", "") or ""
    name = getattr(func, "__name__", "")
    if module != "numpy" and not module.startswith("numpy."):
        return None             # another library's function of the same name may mean something else
    namespace = namespace_for(None)
    for sub in ("linalg", "fft"):
        if module == f"numpy.{sub}" or module.startswith(f"numpy.{sub}."):
            namespace = getattr(namespace, sub, None)
    name = _RENAMED.get(f"{module}.{name}", name)
    candidate = getattr(namespace, name, None) if namespace is not None and not name.startswith("_") else None
    if candidate is None or not callable(candidate) or isinstance(candidate, type):
        return None
    return candidate


def array_function(self, func, types, args, kwargs):
    """``__array_function__``: run the xlac.numpy function of the same name."""
    implementation = xlac_function_for(func)
    if implementation is not None:
        if "order" in kwargs or "device" in kwargs:
            kwargs = _without_layout_defaults(implementation, kwargs)
        return implementation(*args, **kwargs)
    qualified = public_name(func)
    if qualified.startswith("numpy."):
        namespace = "xlac.numpy" + "".join(f".{sub}" for sub in ("linalg", "fft")
                                           if qualified.startswith(f"numpy.{sub}."))
        _unsupported(qualified, f"{namespace} has no function of that name")
    else:
        _unsupported(qualified, "it is not a NumPy function, and xlac compiles only NumPy's")
    return _on_host(func, args, kwargs)


# Keywords NumPy's wrappers pass on at their defaults when ``like=x`` dispatches a creation function
# (``np.ones(3, like=x)`` calls ``ones(3, dtype=None, order='C', device=None)``); they change nothing in xlac.
_LAYOUT_DEFAULTS = {"order": "C", "device": None}


def _without_layout_defaults(implementation, kwargs: dict) -> dict:
    """``kwargs`` less the layout keywords at their defaults that ``implementation`` does not take."""
    accepted = _keyword_names(implementation)
    return {k: v for k, v in kwargs.items()
            if k in accepted or k not in _LAYOUT_DEFAULTS or v != _LAYOUT_DEFAULTS[k]}


@functools.lru_cache(maxsize=None)
def _keyword_names(fn) -> frozenset:
    try:
        return frozenset(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return frozenset()


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """``__array_ufunc__``: ufunc calls and their methods (``reduce``, ``accumulate``, ``reduceat``, ``outer``,
    ``at``: :mod:`xlac.numpy.ufunc_methods`)."""
    name = ufunc.__name__
    if getattr(np, name, None) is not ufunc:     # another library's ufunc (scipy.special.expit)
        _unsupported(public_name(ufunc), "it is not a NumPy ufunc, and xlac compiles only NumPy's")
        return _on_host(getattr(ufunc, method), inputs, kwargs)
    function = getattr(namespace_for(None), name, None)
    if function is None:
        _unsupported(f"numpy.{name}", "xlac.numpy has no ufunc of that name")
        return _on_host(getattr(ufunc, method), inputs, kwargs)
    if method == "__call__":
        return function(*inputs, **kwargs)
    return getattr(function, method)(*inputs, **kwargs)     # reduce, accumulate, reduceat, outer, at


def public_name(func) -> str:
    """``module.name`` for a function or ufunc, by the shortest public module that holds it: scipy's ufuncs
    live in ``scipy.special._ufuncs`` but are known as ``scipy.special.expit``.

    >>> public_name(np.linalg.norm), public_name(np.add)
    ('numpy.linalg.norm', 'numpy.add')
    """
    name = getattr(func, "__name__", None) or repr(func)
    module = getattr(func, "__module__", None)
    if module and module in sys.modules:
        parts = module.split(".")
        for end in range(1, len(parts) + 1):       # the package that re-exports it, else its own module
            prefix = ".".join(parts[:end])
            if getattr(sys.modules.get(prefix), name, None) is func:
                return f"{prefix}.{name}"
        return f"{module}.{name}"
    holders = [f"{m}.{name}" for m, mod in list(sys.modules.items()) if getattr(mod, name, None) is func]
    if not holders:         # a ufunc named otherwise than its attribute (np.frompyfunc's "f (vectorized)")
        holders = [f"{m}.{attr}" for m, mod in list(sys.modules.items())
                   for attr, value in list(getattr(mod, "__dict__", {}).items()) if value is func]
    if not holders:
        return name
    public = [h for h in holders if not any(part.startswith("_") for part in h.split("."))]
    return min(public or holders, key=lambda h: (h.count("."), h))


def _on_host(func, args, kwargs):
    """Outside a trace: call NumPy with every xlac.Array converted to a NumPy array."""
    leaves, tree = pytree.flatten((args, kwargs))
    leaves = [np.asarray(leaf) if isinstance(leaf, Array) else leaf for leaf in leaves]
    args, kwargs = pytree.unflatten(tree, leaves)
    return func(*args, **kwargs)
