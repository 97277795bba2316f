"""The ufunc wrapper: NumPy's ``out=``, ``where=``, ``casting=`` and ``dtype=`` around a function that computes
the results, and the ufunc attributes ``nin``, ``nout``, ``nargs``, ``identity`` and ``signature``.

>>> import numpy as np, xlac.numpy as xnp
>>> xnp.add.nin, xnp.add.nout, xnp.divmod.nout
(2, 1, 2)
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from xlac.ir.dtypes import BOOL
from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy._core import asarray, is_python_scalar
from xlac.numpy import _out
from xlac.numpy._dispatch import numpy_function
from xlac.trace import ops
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer


__all__ = []


def ufunc(fn=None, *, nout: int = 1, cast_inputs: int | None = None, signature: str | None = None):
    """Make ``fn(x1, ...)``, which computes the result (a tuple of ``nout`` results when ``nout > 1``), a
    public ufunc taking NumPy's ``out=`` (an array, or a tuple with one entry per output; also positional
    after the inputs), ``where=`` (with ``out``: elements of ``out`` where it is False are left as they
    were), ``casting=`` (of the inputs to the loop dtype, and of the results to ``out``'s dtypes) and
    ``dtype=`` (the dtype of every output: the inputs are cast to it). ``cast_inputs`` says how many
    leading inputs cast to the loop dtype (the dtype of the first result); ``signature`` makes it a
    generalized ufunc, which takes no ``where=``. The result carries ufunc attributes: ``nin``, ``nout``,
    ``nargs``, ``identity``, ``signature``."""
    if fn is None:
        return functools.partial(ufunc, nout=nout, cast_inputs=cast_inputs, signature=signature)
    name = fn.__name__
    nin = len(inspect.signature(fn).parameters)
    checked = nin if cast_inputs is None else cast_inputs

    def body(*args, out=None, where=True, casting="same_kind", dtype=None):
        inputs, outs = _split_outputs(name, args, out, nin, nout)
        if signature is not None and where is not True:
            raise TypeError(located(f"{name}() got an unexpected keyword argument 'where'"))
        _out.check_casting(casting)
        results = _loop_results(fn, name, inputs, dtype, casting)
        dsts = [_out.output_operand(o, name) for o in outs]
        for result, dst in zip(results, dsts):
            if dst is not None:
                _out.check_output_casting(name, result, dst, casting)
        if dtype is None and casting in ("no", "equiv", "safe"):
            loop = results[0].dtype if results[0].dtype != BOOL else dtypes.result_type(*inputs)
            _out.check_input_casting(name, inputs[:checked], loop, casting)
        mask = _out.bool_mask(where, name)
        shapes = [results[0].shape] + ([mask.shape] if mask is not None else [])
        shape = ops.broadcast_shapes(*shapes, op=name) if mask is not None else results[0].shape
        finished = [_finish(name, result, dst, mask, shapes, shape) for result, dst in zip(results, dsts)]
        return finished[0] if nout == 1 else tuple(finished)

    body.__name__ = body.__qualname__ = name
    body.__doc__ = fn.__doc__
    body.__module__ = fn.__module__
    if nout == 1:
        public = _out.returns_out(numpy_function(body), nin)
    else:
        public = _returns_outs(numpy_function(body), nin, nout)
    reference = getattr(np, name, None)
    public.nin, public.nout, public.nargs = nin, nout, nin + nout
    public.identity = reference.identity if isinstance(reference, np.ufunc) else None
    public.signature = signature
    public.__signature__ = _call_signature(fn, nout)
    return public


def _call_signature(fn, nout: int) -> inspect.Signature:
    """NumPy's ufunc call: the inputs positional-only, ``out`` (positional too with one output), keywords."""
    P = inspect.Parameter
    inputs = [P(name, P.POSITIONAL_ONLY) for name in inspect.signature(fn).parameters]
    out = P("out", P.POSITIONAL_OR_KEYWORD if nout == 1 else P.KEYWORD_ONLY, default=None)
    keywords = [P(name, P.KEYWORD_ONLY, default=default)
                for name, default in (("where", True), ("casting", "same_kind"), ("dtype", None))]
    return inspect.Signature([*inputs, out, *keywords])


def _split_outputs(name: str, args, out, nin: int, nout: int):
    """(the inputs, one ``out`` entry per output, None where none) from NumPy's ways of passing them."""
    if len(args) > nin:
        if len(args) > nin + nout:
            raise TypeError(located(f"{name}() takes from {nin} to {nin + nout} positional arguments but "
                                    f"{len(args)} were given"))
        if out is not None:
            raise TypeError(located(f"{name}: cannot specify 'out' as both a positional and keyword argument"))
        return args[:nin], tuple(args[nin:]) + (None,) * (nin + nout - len(args))
    if len(args) < nin:
        raise TypeError(located(f"{name}() takes {nin} positional argument{'s' if nin > 1 else ''} but "
                                f"{len(args)} were given"))
    if isinstance(out, tuple):
        if len(out) != nout:
            raise ValueError(located(f"{name}: The 'out' tuple must have exactly one entry per ufunc output"))
        return args, out
    if out is not None and nout > 1:
        raise TypeError(located(f"{name}: 'out' must be a tuple of arrays"))
    return args, (out,) + (None,) * (nout - 1)


def _weak_if_all_weak(inputs, results: tuple) -> tuple:
    """Results of operands that are all weak (Python scalars, or traced values that stand for them) are weak
    too, as Python arithmetic on Python numbers stays a Python number (``x * (n // 2)`` keeps x's dtype),
    however many ops the ufunc is made of."""
    if not all(is_python_scalar(x) or (isinstance(x, Tracer) and x.weak) for x in inputs):
        return results
    return tuple(Tracer(r.value, r._trace, True) if isinstance(r, Tracer) and not r.weak else r for r in results)


def _loop_results(fn, name: str, inputs, dtype, casting: str) -> tuple:
    """``fn``'s results as a tuple; with ``dtype=``, computed from the inputs cast to it (NumPy's
    "signature" of that output dtype), and an error where no loop gives that dtype."""
    if dtype is None:
        return _weak_if_all_weak(inputs, _as_tuple(fn(*inputs)))
    target = dtypes.canonical(dtype)
    if target == BOOL:       # predicates: a bool output does not mean bool inputs
        results = _as_tuple(fn(*inputs))
        if all(r.dtype == BOOL for r in results):
            return results
    results = _as_tuple(fn(*(asarray(x, target) for x in inputs)))
    if any(r.dtype != target for r in results):
        raise TypeError(located(f"No loop matching the specified signature and casting was found for ufunc {name}"))
    for k, x in enumerate(inputs):
        _check_input_cast(name, k, len(inputs), x, target, casting)
    return results


def _as_tuple(results) -> tuple:
    return results if isinstance(results, tuple) else (results,)


def _check_input_cast(name: str, k: int, nin: int, x, target: np.dtype, casting: str) -> None:
    """NumPy's check that input ``k`` casts to ``target`` under ``casting``; a Python scalar (weak) casts
    to any dtype of its kind or a higher one."""
    from xlac.numpy.dtypes import can_cast     # dtypes builds on the ufuncs
    if is_python_scalar(x) or getattr(x, "weak", False):
        source = dtypes.default_dtype(x) if is_python_scalar(x) else x.dtype
        if casting == "unsafe" or _KIND_ORDER.index(_kind(source)) <= _KIND_ORDER.index(_kind(target)):
            return
    else:
        source = np.dtype(x.dtype) if hasattr(x, "dtype") else asarray(x).dtype
        if can_cast(source, target, casting):
            return
    which = "input" if nin == 1 else f"input {k}"
    raise TypeError(located(f"Cannot cast ufunc '{name}' {which} from {source!r} to {target!r} with casting rule "
                            f"'{casting}'"))


_KIND_ORDER = "biufc"


def _kind(dtype: np.dtype) -> str:
    return "f" if dtype == dtypes.bfloat16 else dtype.kind


def _finish(name: str, result, dst, mask, shapes, shape):
    """``result`` broadcast to ``shape``, or written into ``dst`` where ``mask`` holds after NumPy's
    shape checks."""
    if dst is None:
        return ops.broadcast_to(result, shape)
    try:
        full = ops.broadcast_shapes(*shapes, dst.shape, op=name)
    except ValueError:
        raise ValueError(located(f"operands could not be broadcast together with shapes "
                                 f"{' '.join(_out.shape_text(s) for s in shapes + [dst.shape])}")) from None
    if full != dst.shape:
        raise ValueError(located(f"non-broadcastable output operand with shape {_out.shape_text(dst.shape)} "
                                 f"doesn't match the broadcast shape {_out.shape_text(full)}"))
    return _out.store(dst, result, mask)


def _returns_outs(public, nin: int, nout: int):
    """``_out.returns_out`` for ufuncs with several outputs: an eager call with ``out=`` writes into the
    arrays it names and returns them (with new arrays for the entries that are None)."""
    @functools.wraps(public)
    def call(*args, **kwargs):
        outs = kwargs.get("out", tuple(args[nin:]))
        outs = outs if isinstance(outs, tuple) else (outs,)
        targets = [o for o in outs if isinstance(o, np.ndarray) or hasattr(o, "_xlac_type")]
        if current_trace() is not None or not targets:
            return public(*args, **kwargs)
        for target in targets:
            if isinstance(target, np.ndarray) and not target.flags.writeable:
                raise ValueError(f"{public.__name__}: output array is read-only")
        inputs = args[:nin]
        for target in targets:
            inputs = _out._separate(inputs, target)
        results = public(*inputs, *args[nin:], **kwargs)
        return tuple(o if o is not None else r for o, r in zip(outs + (None,) * nout, results))

    call.__wrapped_numpy__ = public.__wrapped_numpy__
    return call
