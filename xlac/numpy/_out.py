"""NumPy's ``out=``: the checks NumPy makes on an output array, the write into it, and the eager path.

Inside a compiled function, ``out=`` writes the result into ``out`` (a store the functionalization pass
makes pure) and returns ``out`` itself. Outside one, the function is compiled with ``out`` as an argument
it writes to, so the runner copies into a NumPy ``out`` or swaps an ``xlac.Array``'s buffer; ``out`` is
returned, as NumPy returns it.

>>> import numpy as np, xlac.numpy as xnp
>>> out = np.zeros(2, np.float32)
>>> xnp.add(np.array([1, 2]), 1, out=out) is out, out
(True, array([2., 3.], dtype=float32))
"""
from __future__ import annotations

import functools

import numpy as np

from xlac.ir.dtypes import BOOL
from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy._core import asarray, is_python_scalar, writable
from xlac.numpy.shapes import copy
from xlac.trace import ops
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer
from xlac.trace.views import Itself

CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def shape_text(shape) -> str:
    """A shape as NumPy writes it in broadcasting errors: ``(2,3)``, ``(3,)``."""
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _is_array(x) -> bool:
    if isinstance(x, Tracer):
        return x.mutability != "value"
    return isinstance(x, np.ndarray) or hasattr(x, "__xlac_array__")


def output_operand(out, op: str, *, ufunc: bool = False) -> Tracer | None:
    """The traced array ``out=`` names, or None: NumPy's TypeError for anything but an array (a 1-tuple
    holding one is fine for ufuncs), its ValueError for a read-only one."""
    if ufunc and isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(located(f"{op}: The 'out' tuple must have exactly one entry per ufunc output"))
        out = out[0]
    if out is None:
        return None
    if not _is_array(out):
        raise TypeError(located(f"{op}: return arrays must be of ArrayType (out= must be an array, got "
                                f"{type(out).__name__})"))
    dst = writable(out, op)
    if dst.mutability == "readonly":
        raise ValueError(located(f"{op}: output array is read-only"))
    return dst


def check_casting(casting: str) -> None:
    if casting not in CASTINGS:
        raise ValueError(located(f"casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe' "
                                 f"(got {casting!r})"))


def check_input_casting(op: str, inputs, loop: np.dtype, casting: str) -> None:
    """NumPy's check that each input casts to the loop dtype under ``casting`` (promotion itself is safe
    for same_kind and unsafe, so only no, equiv and safe can fail)."""
    if casting in ("same_kind", "unsafe"):
        return
    for k, x in enumerate(inputs):
        if is_python_scalar(x):
            kind = dtypes.default_dtype(x)
            if kind.kind == loop.kind or (kind.kind == "i" and loop.kind == "u"):
                continue
            if not np.can_cast(kind, loop, casting):
                raise TypeError(located(f"cannot cast Python {type(x).__name__} to {loop} under the casting "
                                        f"rule '{casting}'"))
            continue
        dtype = asarray(x).dtype
        if not np.can_cast(dtype, loop, casting):
            which = "input" if len(inputs) == 1 else f"input {k}"
            raise TypeError(located(f"Cannot cast ufunc '{op}' {which} from {dtype!r} to {loop!r} with casting "
                                    f"rule '{casting}'"))


def check_output_casting(op: str, result: Tracer, dst: Tracer, casting: str) -> None:
    """NumPy's check of the cast of the result to ``out``; a result of Python scalars alone (weak) takes
    any dtype of its kind, as those scalars would."""
    weak_fits = result.weak and casting != "no" and result.dtype.kind == dst.dtype.kind
    if result.dtype != dst.dtype and not weak_fits and not np.can_cast(result.dtype, dst.dtype, casting):
        raise TypeError(located(f"Cannot cast ufunc '{op}' output from {result.dtype!r} to {dst.dtype!r} with "
                                f"casting rule '{casting}'"))


def cast(x: Tracer, dtype: np.dtype) -> Tracer:
    """``x`` in ``dtype`` as NumPy's unsafe cast: complex to real keeps the real part, complex to bool is
    ``x != 0`` (either part)."""
    if x.dtype.kind == "c" and np.dtype(dtype).kind not in "cb":
        x = ops.real(x)
    return ops.convert(x, dtype)


def store(dst: Tracer, value: Tracer, mask: Tracer | None = None) -> Itself:
    """Write ``value`` (cast to ``dst``'s dtype, broadcast to its shape) into ``dst`` where ``mask`` holds
    (None: everywhere); the function then returns ``dst`` itself."""
    value = ops.broadcast_to(cast(value, dst.dtype), dst.shape)
    if mask is not None:
        value = ops.select(ops.broadcast_to(mask, dst.shape), value, dst)
    dst._store(value)
    return Itself(dst)


def store_whole_result(dst: Tracer | None, result: Tracer, op: str):
    """``out=`` of the functions NumPy implements as ndarray methods (take, compress, choose): ``out`` must
    have the result's shape and take its dtype under ``safe`` casting; returns ``result`` when there is none."""
    if dst is None:
        return result
    if dst.shape != result.shape:
        raise ValueError(located(f"{op}: output array does not match result of ndarray.{op} (out has shape "
                                 f"{shape_text(dst.shape)}, the result {shape_text(result.shape)})"))
    if not np.can_cast(result.dtype, dst.dtype, "safe"):
        raise TypeError(located(f"{op}: Cannot cast array data from {result.dtype!r} to {dst.dtype!r} according "
                                "to the rule 'safe'"))
    return store(dst, result)


def bool_mask(where, op: str) -> Tracer | None:
    """``where=`` as a bool tracer, None for True (everywhere)."""
    if where is True or where is None:
        return None
    mask = asarray(where)
    if mask.dtype != BOOL:
        if is_python_scalar(where) or not np.can_cast(mask.dtype, BOOL, "safe"):
            raise TypeError(located(f"{op}: where= must be a boolean array, got dtype {mask.dtype}"))
    return mask


# ---------------------------------------------------------------- eager calls


def _shares_memory(x, target) -> bool:
    if x is target:
        return True
    return isinstance(x, np.ndarray) and isinstance(target, np.ndarray) and np.may_share_memory(x, target)


def _separate(x, target):
    """``x``, or a copy of it where it is ``target`` or overlaps it: the compiled function takes its
    arguments as separate arrays, and NumPy's ufuncs read their inputs as if before the write."""
    if isinstance(x, (list, tuple)):
        return type(x)(_separate(e, target) for e in x)
    if not _shares_memory(x, target):
        return x
    if isinstance(x, np.ndarray):
        return x.copy()
    return copy(x)


def returns_out(public, out_position: int):
    """Wrap the xlac.numpy function ``public``, whose ``out`` parameter is at ``out_position`` (or a
    keyword), so that an eager call with ``out=`` writes into it and returns it."""
    @functools.wraps(public)
    def call(*args, **kwargs):
        if current_trace() is not None:
            return public(*args, **kwargs)
        out = kwargs.get("out", args[out_position] if len(args) > out_position else None)
        target = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if target is None or not (isinstance(target, np.ndarray) or hasattr(target, "_xlac_type")):
            return public(*args, **kwargs)
        if isinstance(target, np.ndarray) and not target.flags.writeable:
            raise ValueError(f"{public.__name__}: output array is read-only")
        args = tuple(a if i == out_position else _separate(a, target) for i, a in enumerate(args))
        kwargs = {k: v if k == "out" else _separate(v, target) for k, v in kwargs.items()}
        public(*args, **kwargs)
        return target

    call.__wrapped_numpy__ = public.__wrapped_numpy__
    return call
