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

import xlac.numpy as xnp
from xlac.array import Array
from xlac.errors import located, UnsupportedError
from xlac.numpy import reductions
from xlac.numpy._core import writable
from xlac.trace import pytree
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

# ufunc.reduce / ufunc.accumulate as the xlac.numpy reduction or scan that computes them.
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min", "fmax": "nanmax",
               "fmin": "nanmin", "logical_and": "all", "logical_or": "any"}
_ACCUMULATIONS = {"add": "cumsum", "multiply": "cumprod", "maximum": "maximum_accumulate",
                  "minimum": "minimum_accumulate"}

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
    namespace = xnp
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
    """``__array_ufunc__``: ufunc calls and their ``reduce``, ``accumulate``, ``outer`` and ``at`` methods."""
    name = ufunc.__name__
    if getattr(np, name, None) is not ufunc:     # another library's ufunc (scipy.special.expit)
        _unsupported(public_name(ufunc), "it is not a NumPy ufunc, and xlac compiles only NumPy's")
        return _on_host(getattr(ufunc, method), inputs, kwargs)
    function = getattr(xnp, name, None)
    if function is None:
        _unsupported(f"numpy.{name}", "xlac.numpy has no ufunc of that name")
        return _on_host(getattr(ufunc, method), inputs, kwargs)
    if method == "__call__":
        return function(*inputs, **kwargs)
    if method == "outer":
        return _outer(function, inputs, kwargs)
    if method == "reduce" and name in _REDUCTIONS:
        return _reduce(getattr(xnp, _REDUCTIONS[name]), *inputs, **kwargs)
    if method == "accumulate" and name in _ACCUMULATIONS:
        return _accumulate(getattr(reductions, _ACCUMULATIONS[name]), *inputs, **kwargs)
    if method == "at" and name in _AT_MODES:
        return _at(name, *inputs)
    _unsupported(f"numpy.{name}.{method}", f"xlac implements {name}.{method} only as listed in its docs")
    return _on_host(getattr(ufunc, method), inputs, kwargs)


def _outer(function, inputs, kwargs):
    a, b = inputs
    a, b = xnp.asarray(a), xnp.asarray(b)
    return function(xnp.reshape(a, a.shape + (1,) * b.ndim), b, **kwargs)


def _reduce(reduction, array, axis=0, dtype=None, out=None, keepdims=False, **rest):
    """``ufunc.reduce``: NumPy's default axis is 0 here, not None as for np.sum; a 0-d array takes axis 0 or -1."""
    if np.ndim(array) == 0 and axis in (0, -1):
        axis = None
    if dtype is not None:
        rest["dtype"] = dtype
    if out is not None:
        rest["out"] = out[0] if isinstance(out, tuple) else out
    return reduction(array, axis=axis, keepdims=keepdims, **rest)


def _accumulate(scan, array, axis=0, dtype=None, out=None):
    if out is not None:
        return scan(array, axis=axis, dtype=dtype, out=out[0] if isinstance(out, tuple) else out)
    return scan(array, axis=axis, dtype=dtype)


_AT_MODES = {"add": "add", "subtract": "add", "multiply": "multiply", "maximum": "maximum", "minimum": "minimum"}


def _at(name, array, indices, values=None):
    """``np.add.at(a, indices, values)``: unbuffered, so every repeated index applies; writes into ``a``.
    Values of a wider float dtype than ``a``'s are applied in ``a``'s dtype (NumPy rounds through the wider
    one: the last bit can differ); integer arrays with float values need distinct constant indices."""
    if values is None:
        raise TypeError(located(f"numpy.{name}.at: xlac needs the values argument"))
    if _inside_trace():
        array = writable(array, f"numpy.{name}.at")
    if isinstance(values, (bool, int, float, complex)):
        values = np.asarray(values)          # ufunc.at takes values as NumPy arrays: a Python int is int64
    target = np.result_type(array)
    combined = getattr(xnp, name)(xnp.asarray(array)[indices], values)
    wraps = name in ("add", "subtract", "multiply") and target.kind in "iu" and combined.dtype.kind in "iu"
    if combined.dtype != target and (wraps or target.kind == combined.dtype.kind == "f"
                                     or target.kind == combined.dtype.kind == "c"):
        # Integers: wrapping arithmetic, so casting after each step equals computing in the array's dtype.
        # Floats: computed in the array's float dtype (NumPy rounds twice, through the wider dtype: the
        # results can differ in the last bit).
        values, combined = xnp.astype(values, target), xnp.astype(combined, target)
    if combined.dtype != target:
        # NumPy computes in the promoted dtype, then casts into the array (unsafe): done here as one
        # gather, the ufunc, and one write, which equals NumPy's only where no index repeats.
        if not _unique_concrete_positions(np.shape(array), indices):
            raise UnsupportedError(located(
                f"numpy.{name}.at: values of dtype {combined.dtype} into a {np.result_type(array)} array with "
                "repeated or traced indices: NumPy applies each one in turn, casting after each; xlac can "
                "do that only for distinct constant indices. Cast the values to the array's dtype first"))
        updated = xnp.index_update(array, indices, combined)
    else:
        if name == "subtract":        # in the array's dtype: wraps for integers, as the array's own arithmetic
            values = xnp.negative(xnp.astype(values, target))
        updated = xnp.index_update(array, indices, values, mode=_AT_MODES[name])
    if isinstance(array, np.ndarray):
        array[...] = np.asarray(updated)
    else:
        array[...] = updated


def _unique_concrete_positions(shape, indices) -> bool:
    """Whether ``indices`` are constants (no traced or device values) that select no element twice."""
    leaves, _ = pytree.flatten(indices)
    if any(isinstance(leaf, (Tracer, Array)) for leaf in leaves):
        return False
    hits = np.zeros(shape, np.int64)
    np.add.at(hits, indices, 1)
    return hits.max(initial=0) <= 1


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
