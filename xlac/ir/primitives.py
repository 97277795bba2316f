"""The primitive catalog: every IR operation, declared once with its type rule.

Primitives sit close to StableHLO (like ``jax.lax``): operands of elementwise
primitives already share one shape and dtype; broadcasting and promotion are the
business of :mod:`xlac.numpy`. Type rules raise :class:`ShapeError` with a
message that names what was expected and what was given.

>>> from xlac.ir.types import TensorType
>>> f32 = TensorType((2, 3), np.dtype("float32"))
>>> transpose.infer_types(f32, permutation=(1, 0))
(f32[3,2],)
"""
from __future__ import annotations

import math

import numpy as np

from xlac.ir.dtypes import BOOL
from xlac.ir import dtypes
from xlac.ir.autocast_classes import FLOAT32, KEEP, LOWER_PRECISION, PROMOTE
from xlac.ir.primitive import ShapeError, declare
from xlac.ir.types import TensorType


def _check(cond: bool, message: str) -> None:
    """Raise ShapeError(message) unless ``cond``. The message is built before the test: the rules every
    trace runs (elementwise, shapes, reductions, dot_general) raise directly instead, formatting nothing
    when the check passes."""
    if not cond:
        raise ShapeError(message)


def _axes_ok(axes, ndim: int) -> bool:
    return all(0 <= a < ndim for a in axes) and len(set(axes)) == len(axes)


# ---------------------------------------------------------------- elementwise

_KINDS = {
    "float": dtypes.is_inexact,
    "real_float": dtypes.is_float,
    "int": dtypes.is_int,
    "int_or_bool": lambda d: dtypes.is_int(d) or dtypes.is_bool(d),
    "number": lambda d: not dtypes.is_bool(d),
    "real_number": lambda d: not dtypes.is_bool(d) and not np.issubdtype(d, np.complexfloating),
    "real_or_bool": lambda d: not np.issubdtype(d, np.complexfloating),
    "signed": lambda d: not dtypes.is_bool(d) and not dtypes.is_unsigned_int(d),
    "any": lambda d: True,
}


def _kind_check(name: str, allowed: str, t: TensorType) -> None:
    if not _KINDS[allowed](t.dtype):
        raise ShapeError(f"{name} expects {allowed.replace('_', ' ')} operands, got {t}")


def _unary_rule(name: str, allowed: str):
    def rule(x: TensorType) -> TensorType:
        _kind_check(name, allowed, x)
        return x
    return rule


def _binary_rule(name: str, allowed: str):
    def rule(x: TensorType, y: TensorType) -> TensorType:
        if x != y:
            raise ShapeError(f"{name} expects operands of one type, got {x} and {y}")
        _kind_check(name, allowed, x)
        return x
    return rule


def _unary(name: str, allowed: str, stablehlo: str = "", **kwargs):
    return declare(name, _unary_rule(name, allowed), category="unary", stablehlo=stablehlo, **kwargs)


def _binary(name: str, allowed: str, stablehlo: str = "", **kwargs):
    return declare(name, _binary_rule(name, allowed), category="binary", stablehlo=stablehlo, **kwargs)


# Elementwise primitives, with the dtypes each accepts and the StableHLO op each is (where one is). Names that are Python keywords or builtins end in "_".
neg = _unary("neg", "number", "stablehlo.negate")
sign = _unary("sign", "number")
exp = _unary("exp", "float", "stablehlo.exponential", autocast=FLOAT32)
expm1 = _unary("expm1", "float", "stablehlo.exponential_minus_one", autocast=FLOAT32)
log = _unary("log", "float", "stablehlo.log", autocast=FLOAT32)
log1p = _unary("log1p", "float", "stablehlo.log_plus_one", autocast=FLOAT32)
sqrt = _unary("sqrt", "float", "stablehlo.sqrt")
rsqrt = _unary("rsqrt", "float", "stablehlo.rsqrt", autocast=FLOAT32)
cbrt = _unary("cbrt", "real_float", "stablehlo.cbrt")
tanh = _unary("tanh", "float", "stablehlo.tanh")
logistic = _unary("logistic", "float", "stablehlo.logistic")
sin = _unary("sin", "float", "stablehlo.sine")
cos = _unary("cos", "float", "stablehlo.cosine")
tan = _unary("tan", "float", "stablehlo.tan", autocast=FLOAT32)
floor = _unary("floor", "real_float", "stablehlo.floor")
ceil = _unary("ceil", "real_float", "stablehlo.ceil")
round_ = _unary("round", "real_float", "stablehlo.round_nearest_even")
erf = _unary("erf", "real_float", "chlo.erf")
not_ = _unary("not", "int_or_bool", "stablehlo.not")
popcnt = _unary("popcnt", "int", "stablehlo.popcnt")

add = _binary("add", "any", "stablehlo.add", autocast=PROMOTE)
sub = _binary("sub", "number", "stablehlo.subtract", autocast=PROMOTE)
mul = _binary("mul", "any", "stablehlo.multiply", autocast=PROMOTE)
div = _binary("div", "number", autocast=PROMOTE)
rem = _binary("rem", "real_number", autocast=PROMOTE)
pow_ = _binary("pow", "number", autocast=FLOAT32)
max_ = _binary("max", "any", "stablehlo.maximum", autocast=PROMOTE)
min_ = _binary("min", "any", "stablehlo.minimum", autocast=PROMOTE)
atan2 = _binary("atan2", "real_float", "stablehlo.atan2", autocast=PROMOTE)
and_ = _binary("and", "int_or_bool", "stablehlo.and")
or_ = _binary("or", "int_or_bool", "stablehlo.or")
xor = _binary("xor", "int_or_bool", "stablehlo.xor")
shift_left = _binary("shift_left", "int", "stablehlo.shift_left")
shift_right_arithmetic = _binary("shift_right_arithmetic", "int", "stablehlo.shift_right_arithmetic")
shift_right_logical = _binary("shift_right_logical", "int", "stablehlo.shift_right_logical")


def _complex_part_rule(x: TensorType) -> TensorType:
    _check(np.issubdtype(x.dtype, np.complexfloating), f"expects a complex operand, got {x}")
    return x.with_dtype(np.dtype("float32") if x.dtype == np.complex64 else np.dtype("float64"))


def _abs_rule(x: TensorType) -> TensorType:
    _kind_check("abs", "number", x)
    return _complex_part_rule(x) if np.issubdtype(x.dtype, np.complexfloating) else x


abs_ = declare("abs", _abs_rule, category="unary")
real = declare("real", _complex_part_rule, category="unary", stablehlo="stablehlo.real")
imag = declare("imag", _complex_part_rule, category="unary", stablehlo="stablehlo.imag")


def _is_finite_rule(x: TensorType) -> TensorType:
    _kind_check("is_finite", "real_float", x)
    return x.with_dtype(BOOL)


is_finite = declare("is_finite", _is_finite_rule, category="unary", stablehlo="stablehlo.is_finite")


def _complex_rule(re: TensorType, im: TensorType) -> TensorType:
    _check(re == im and re.dtype in (np.dtype("float32"), np.dtype("float64")),
           f"complex expects two float32 or two float64 operands of one shape, got {re} and {im}")
    return re.with_dtype(np.dtype("complex64") if re.dtype == np.float32 else np.dtype("complex128"))


complex_ = declare("complex", _complex_rule, category="binary", autocast=FLOAT32,
                   stablehlo="stablehlo.complex")

COMPARISON_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


def _compare_rule(x: TensorType, y: TensorType, *, direction: str) -> TensorType:
    _check(direction in COMPARISON_DIRECTIONS, f"compare: unknown direction {direction!r}")
    if x != y:
        raise ShapeError(f"compare expects operands of one type, got {x} and {y}")
    return x.with_dtype(BOOL)


compare = declare("compare", _compare_rule, category="compare", autocast=PROMOTE)


def _select_rule(pred: TensorType, on_true: TensorType, on_false: TensorType) -> TensorType:
    if pred.dtype != BOOL:
        raise ShapeError(f"select expects a bool predicate, got {pred}")
    if on_true != on_false:
        raise ShapeError(f"select expects branches of one type, got {on_true} and {on_false}")
    _check(pred.shape in (on_true.shape, ()),
           f"select expects a predicate of shape {on_true.shape} or (), got {pred.shape}")
    return on_true


select = declare("select", _select_rule, category="select", autocast=PROMOTE)


def _clamp_rule(lo: TensorType, x: TensorType, hi: TensorType) -> TensorType:
    for bound in (lo, hi):
        _check(bound.dtype == x.dtype and bound.shape in (x.shape, ()),
               f"clamp expects bounds of type {x} or a 0-d {dtypes.short_name(x.dtype)}, got {bound}")
    return x


clamp = declare("clamp", _clamp_rule, category="select", autocast=PROMOTE)


def _convert_rule(x: TensorType, *, dtype) -> TensorType:
    return x.with_dtype(dtypes.canonical(dtype))


convert = declare("convert", _convert_rule, category="convert")


def _bitcast_rule(x: TensorType, *, dtype) -> TensorType:
    dtype = dtypes.canonical(dtype)
    for t in (x.dtype, dtype):
        _check(not dtypes.is_bool(t) and not np.issubdtype(t, np.complexfloating),
               f"bitcast_convert from {x} to {dtypes.short_name(dtype)}: bool and complex dtypes cannot be bitcast")
    src, dst = x.dtype.itemsize, dtype.itemsize
    if src == dst:
        return x.with_dtype(dtype)
    if src > dst:
        return TensorType(x.shape + (src // dst,), dtype)
    _check(x.ndim > 0 and x.shape[-1] == dst // src,
           f"bitcast_convert from {x} to {dtypes.short_name(dtype)} needs a last axis of {dst // src}")
    return TensorType(x.shape[:-1], dtype)


bitcast_convert = declare("bitcast_convert", _bitcast_rule, category="convert", autocast=KEEP)

# ---------------------------------------------------------------- shapes and data movement


def _broadcast_in_dim_rule(x: TensorType, *, shape, broadcast_dimensions) -> TensorType:
    shape, dims = tuple(shape), tuple(broadcast_dimensions)
    if not (len(dims) == x.ndim and _axes_ok(dims, len(shape)) and list(dims) == sorted(dims)):
        raise ShapeError(f"broadcast_in_dim: dimensions {dims} do not map {x} into shape {shape}")
    for src, dst in zip(x.shape, dims):
        if src not in (1, shape[dst]):
            raise ShapeError(f"broadcast_in_dim: cannot broadcast {x} to shape {shape}")
    return x.with_shape(shape)


broadcast_in_dim = declare("broadcast_in_dim", _broadcast_in_dim_rule, category="shape")


def _reshape_rule(x: TensorType, *, shape) -> TensorType:
    shape = tuple(shape)
    if not (all(d >= 0 for d in shape) and math.prod(shape) == x.size):
        raise ShapeError(f"reshape: cannot reshape {x} (size {x.size}) into shape {shape}")
    return x.with_shape(shape)


reshape = declare("reshape", _reshape_rule, category="shape")


def _transpose_rule(x: TensorType, *, permutation) -> TensorType:
    perm = tuple(permutation)
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"transpose: {perm} is not a permutation of the {x.ndim} axes of {x}")
    return x.with_shape(tuple(x.shape[p] for p in perm))


transpose = declare("transpose", _transpose_rule, category="shape")


def _reverse_rule(x: TensorType, *, dimensions) -> TensorType:
    _check(_axes_ok(dimensions, x.ndim), f"reverse: bad dimensions {tuple(dimensions)} for {x}")
    return x


reverse = declare("reverse", _reverse_rule, category="shape")


def _slice_rule(x: TensorType, *, start, limit, strides) -> TensorType:
    if not len(start) == len(limit) == len(strides) == x.ndim:
        raise ShapeError(f"slice: start {start}, limit {limit}, strides {strides} do not match {x}")
    shape = []
    for s, l, st, d in zip(start, limit, strides, x.shape):
        if not (0 <= s <= l <= d and st >= 1):
            raise ShapeError(f"slice: [{s}:{l}:{st}] is out of range for axis of size {d} in {x}")
        shape.append(-(-(l - s) // st))
    return x.with_shape(shape)


slice_ = declare("slice", _slice_rule, category="shape")


def _dynamic_slice_rule(x: TensorType, *starts: TensorType, sizes) -> TensorType:
    _check(len(starts) == x.ndim == len(sizes),
           f"dynamic_slice: {len(starts)} start indices and sizes {tuple(sizes)} for {x}")
    for s in starts:
        _check(s.shape == () and dtypes.is_int(s.dtype), f"dynamic_slice: start index must be a 0-d integer, got {s}")
    _check(all(0 <= n <= d for n, d in zip(sizes, x.shape)), f"dynamic_slice: sizes {tuple(sizes)} exceed {x}")
    return x.with_shape(sizes)


dynamic_slice = declare("dynamic_slice", _dynamic_slice_rule, category="shape")


def _dynamic_update_slice_rule(x: TensorType, update: TensorType, *starts: TensorType) -> TensorType:
    _check(update.dtype == x.dtype and update.ndim == x.ndim and len(starts) == x.ndim,
           f"dynamic_update_slice: update {update} and {len(starts)} start indices do not fit {x}")
    _check(all(u <= d for u, d in zip(update.shape, x.shape)), f"dynamic_update_slice: update {update} larger than {x}")
    for s in starts:
        _check(s.shape == () and dtypes.is_int(s.dtype), f"dynamic_update_slice: start index must be a 0-d integer, got {s}")
    return x


dynamic_update_slice = declare("dynamic_update_slice", _dynamic_update_slice_rule, category="update", autocast=PROMOTE)


def _gather_rule(x: TensorType, indices: TensorType, *, offset_dims, collapsed_slice_dims, start_index_map,
                 slice_sizes, operand_batching_dims=(), start_indices_batching_dims=()) -> TensorType:
    """Gather with the index vector in the last axis of ``indices`` (StableHLO's index_vector_dim = rank-1)."""
    _check(dtypes.is_int(indices.dtype) and indices.ndim >= 1, f"gather: indices must be integers with an index axis, got {indices}")
    _check(indices.shape[-1] == len(start_index_map), f"gather: index vector of {indices.shape[-1]} for start_index_map {tuple(start_index_map)}")
    _check(len(slice_sizes) == x.ndim and all(0 <= s <= d for s, d in zip(slice_sizes, x.shape)),
           f"gather: slice_sizes {tuple(slice_sizes)} do not fit {x}")
    dropped = set(collapsed_slice_dims) | set(operand_batching_dims)
    _check(all(slice_sizes[d] == 1 for d in dropped), "gather: collapsed dims must have slice size 1")
    offset_sizes = [s for d, s in enumerate(slice_sizes) if d not in dropped]
    batch_sizes = list(indices.shape[:-1])
    rank = len(offset_sizes) + len(batch_sizes)
    _check(len(offset_dims) == len(offset_sizes) and _axes_ok(offset_dims, rank),
           f"gather: offset_dims {tuple(offset_dims)} do not fit a result of rank {rank}")
    shape, offsets, batches = [], iter(offset_sizes), iter(batch_sizes)
    for d in range(rank):
        shape.append(next(offsets) if d in offset_dims else next(batches))
    return x.with_shape(shape)


gather = declare("gather", _gather_rule, category="index")

SCATTER_MODES = ("set", "add", "mul", "max", "min")


def _scatter_rule(x: TensorType, indices: TensorType, updates: TensorType, *, update_window_dims,
                  inserted_window_dims, scatter_dims_to_operand_dims, mode="set",
                  input_batching_dims=(), scatter_indices_batching_dims=()) -> TensorType:
    """Scatter with the index vector in the last axis of ``indices``; ``mode`` picks the combiner."""
    _check(mode in SCATTER_MODES, f"scatter: unknown mode {mode!r}")
    _check(updates.dtype == x.dtype, f"scatter: updates {updates} must have the dtype of {x}")
    _check(dtypes.is_int(indices.dtype) and indices.ndim >= 1, f"scatter: indices must be integers with an index axis, got {indices}")
    _check(indices.shape[-1] == len(scatter_dims_to_operand_dims),
           f"scatter: index vector of {indices.shape[-1]} for scatter_dims_to_operand_dims {tuple(scatter_dims_to_operand_dims)}")
    scatter_dims = [d for d in range(updates.ndim) if d not in update_window_dims]
    _check([updates.shape[d] for d in scatter_dims] == list(indices.shape[:-1]),
           f"scatter: updates {updates} do not match indices {indices}")
    window_operand_dims = [d for d in range(x.ndim) if d not in inserted_window_dims and d not in input_batching_dims]
    _check(len(window_operand_dims) == len(update_window_dims),
           f"scatter: update_window_dims {tuple(update_window_dims)} do not fit {x}")
    for ud, od in zip(update_window_dims, window_operand_dims):
        _check(updates.shape[ud] <= x.shape[od], f"scatter: update window {updates} larger than {x}")
    return x


scatter = declare("scatter", _scatter_rule, category="update", autocast=PROMOTE)


def _concatenate_rule(*xs: TensorType, dimension) -> TensorType:
    _check(len(xs) >= 1, "concatenate needs at least one operand")
    first = xs[0]
    _check(0 <= dimension < first.ndim, f"concatenate: dimension {dimension} out of range for {first}")
    for x in xs[1:]:
        if not (x.dtype == first.dtype and x.ndim == first.ndim and all(
                a == b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != dimension)):
            raise ShapeError(f"concatenate: operands {', '.join(map(str, xs))} differ outside dimension {dimension}")
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return first.with_shape(shape)


concatenate = declare("concatenate", _concatenate_rule, category="shape", autocast=PROMOTE)


def _pad_rule(x: TensorType, padding_value: TensorType, *, low, high, interior) -> TensorType:
    _check(padding_value == TensorType((), x.dtype), f"pad: padding value must be a 0-d {dtypes.short_name(x.dtype)}, got {padding_value}")
    _check(len(low) == len(high) == len(interior) == x.ndim, f"pad: padding config does not match {x}")
    shape = []
    for d, lo, hi, inner in zip(x.shape, low, high, interior):
        _check(inner >= 0, "pad: interior padding must be >= 0")
        n = lo + hi + d + max(d - 1, 0) * inner
        _check(n >= 0, f"pad: negative size for {x}")
        shape.append(n)
    return x.with_shape(shape)


pad = declare("pad", _pad_rule, category="shape", autocast=PROMOTE)


def _iota_rule(*, shape, dtype, dimension) -> TensorType:
    _check(0 <= dimension < len(shape), f"iota: dimension {dimension} out of range for shape {tuple(shape)}")
    dtype = dtypes.canonical(dtype)
    _check(not dtypes.is_bool(dtype), f"iota: expects a numeric dtype, got {dtypes.short_name(dtype)}")
    return TensorType(tuple(shape), dtype)


iota = declare("iota", _iota_rule, category="creation")


def _constant_rule(*, value: np.ndarray) -> TensorType:
    return TensorType(value.shape, dtypes.canonical(value.dtype))


constant = declare("constant", _constant_rule, category="creation")

# ---------------------------------------------------------------- reductions, contractions, sort

REDUCE_OPS = ("sum", "prod", "max", "min", "and", "or")


def reduce_identity(op: str, dtype: np.dtype) -> np.ndarray:
    """The identity of a ``reduce`` by ``op`` over ``dtype`` (0-d): 0 for sum, 1 for prod, the lowest value
    for max, ...

    >>> reduce_identity("max", np.dtype("int8")), reduce_identity("min", np.dtype("float32"))
    (array(-128, dtype=int8), array(inf, dtype=float32))
    """
    if op == "sum" or op == "or":
        return np.zeros((), dtype)
    if op == "prod":
        return np.ones((), dtype)
    if op == "and":
        return np.array(True) if dtype == BOOL else np.array(-1).astype(dtype)
    lowest = op == "max"
    if dtype == BOOL:
        return np.array(not lowest)
    if dtypes.is_int(dtype):
        info = np.iinfo(dtype)
        return np.array(info.min if lowest else info.max, dtype)
    return np.array(-np.inf if lowest else np.inf).astype(dtype)


def reduce_combiner(op: str):
    """The elementwise primitive that combines two partial results of a ``reduce`` by ``op``.

    >>> reduce_combiner("max").name
    'max'
    """
    return {"sum": add, "prod": mul, "max": max_, "min": min_, "and": and_, "or": or_}[op]


def _reduce_rule(x: TensorType, *, op, axes) -> TensorType:
    _check(op in REDUCE_OPS, f"reduce: unknown op {op!r}")
    if not _axes_ok(axes, x.ndim):
        raise ShapeError(f"reduce: bad axes {tuple(axes)} for {x}")
    if op in ("and", "or"):
        _kind_check(f"reduce_{op}", "int_or_bool", x)
    return x.with_shape([d for i, d in enumerate(x.shape) if i not in axes])


reduce = declare("reduce", _reduce_rule, category="reduce", autocast_by_op={"sum": FLOAT32, "prod": FLOAT32})


def _reduce_many_rule(*xs: TensorType, ops, axes) -> tuple[TensorType, ...]:
    _check(len(xs) >= 1 and len(ops) == len(xs),
           f"reduce_many: {len(ops)} ops for {len(xs)} operands (one op per operand, at least one)")
    _check(all(x.shape == xs[0].shape for x in xs),
           f"reduce_many expects operands of one shape, got {', '.join(map(str, xs))}")
    floats = {x.dtype for x in xs if dtypes.is_float(x.dtype)}
    _check(len(floats) <= 1, f"reduce_many expects its floating operands of one dtype (XLA's rule), got "
                             f"{', '.join(map(str, xs))}")
    return tuple(_reduce_rule(x, op=op, axes=axes) for x, op in zip(xs, ops))


# Operand k reduced by ops[k] over the same ``axes``, in one pass over the operands (one variadic
# stablehlo.reduce): XLA fuses what computes every operand into that one loop, where separate reduces of
# values computed from the same inputs (a masked sum and the mask's count) each compute them again.
reduce_many = declare("reduce_many", _reduce_many_rule, multiple_results=True, category="reduce",
                      autocast=FLOAT32)


_CUMULATIVE_KINDS = {"and": "int_or_bool", "or": "int_or_bool", "max": "real_or_bool", "min": "real_or_bool"}


def _cumulative_rule(x: TensorType, *, op, axis, reverse) -> TensorType:
    _check(op in REDUCE_OPS, f"cumulative: unknown op {op!r}")
    _check(0 <= axis < x.ndim, f"cumulative {op}: axis {axis} out of range for {x}")
    _kind_check(f"cumulative {op}", _CUMULATIVE_KINDS.get(op, "any"), x)
    return x


# The running ``op`` (one of reduce's) along ``axis``, from the last element with ``reverse``: element i is
# the reduction of elements 0..i. Lowered as one reduce_window, as jax lowers cumsum, cumprod, cummax, cummin.
cumulative = declare("cumulative", _cumulative_rule, category="scan")


def _arg_reduce_rule(x: TensorType, *, axis, index_dtype) -> TensorType:
    _check(0 <= axis < x.ndim, f"axis {axis} out of range for {x}")
    _check(x.shape[axis] > 0, f"attempt to get argmax/argmin of an empty axis of {x}")
    return TensorType(tuple(d for i, d in enumerate(x.shape) if i != axis), dtypes.canonical(index_dtype))


argmax = declare("argmax", _arg_reduce_rule, category="reduce")
argmin = declare("argmin", _arg_reduce_rule, category="reduce")


def _dot_general_rule(lhs: TensorType, rhs: TensorType, *, contracting, batch, preferred_dtype=None) -> TensorType:
    (lc, rc), (lb, rb) = contracting, batch
    if lhs.dtype != rhs.dtype:
        raise ShapeError(f"dot_general expects operands of one dtype, got {lhs} and {rhs}")
    _check(len(lc) == len(rc) and len(lb) == len(rb), "dot_general: unequal dimension lists")
    if not (_axes_ok(tuple(lc) + tuple(lb), lhs.ndim) and _axes_ok(tuple(rc) + tuple(rb), rhs.ndim)):
        raise ShapeError(f"dot_general: bad dimension numbers for {lhs} and {rhs}")
    for a, b in zip(tuple(lc) + tuple(lb), tuple(rc) + tuple(rb)):
        if lhs.shape[a] != rhs.shape[b]:
            raise ShapeError(f"dot_general: size {lhs.shape[a]} (axis {a} of {lhs}) != size {rhs.shape[b]} "
                             f"(axis {b} of {rhs})")
    shape = ([lhs.shape[d] for d in lb]
             + [d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb]
             + [d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb])
    dtype = dtypes.canonical(preferred_dtype) if preferred_dtype is not None else lhs.dtype
    return TensorType(tuple(shape), dtype)


dot_general = declare("dot_general", _dot_general_rule, category="contraction", autocast=LOWER_PRECISION)


def _sort_rule(*xs: TensorType, dimension, is_stable=True, num_keys=1) -> tuple[TensorType, ...]:
    _check(len(xs) >= 1 and 1 <= num_keys <= len(xs), "sort needs operands and 1 <= num_keys <= len(operands)")
    _check(all(x.shape == xs[0].shape for x in xs), f"sort expects operands of one shape, got {', '.join(map(str, xs))}")
    _check(0 <= dimension < xs[0].ndim, f"sort: dimension {dimension} out of range for {xs[0]}")
    return xs


sort = declare("sort", _sort_rule, multiple_results=True, category="sort")


# ---------------------------------------------------------------- mutation (removed by functionalization)


def _copy_rule(x: TensorType) -> TensorType:
    return x


copy = declare("copy", _copy_rule, category="mutation")     # a new array with x's values


def _store_rule(target: TensorType, value: TensorType) -> tuple[()]:
    """``store target value``: the memory ``target`` refers to (an array or a view of one) now holds ``value``."""
    _check(target == value, f"store: value {value} does not match the target {target}")
    return ()


store = declare("store", _store_rule, multiple_results=True, category="mutation")


# ---------------------------------------------------------------- differentiation


def _stop_gradient_rule(x: TensorType) -> TensorType:
    return x


# ``stop_gradient x``: x's value, with a zero derivative (xlac.stop_gradient; autodiff gives it no cotangent).
stop_gradient = declare("stop_gradient", _stop_gradient_rule, category="identity")


# ---------------------------------------------------------------- sharding


def _sharding_constraint_rule(x: TensorType, *, sharding) -> TensorType:
    _check(len(sharding.spec) <= x.ndim, f"sharding_constraint: {sharding.spec} has more entries than {x} has axes")
    return x


# ``sharding_constraint x``: x's value, laid out over the devices as ``sharding`` (an xlac.ir.sharding.NamedSharding)
# says (xlac.with_sharding_constraint; XLA's partitioner inserts the communication).
sharding_constraint = declare("sharding_constraint", _sharding_constraint_rule, category="sharding")


# Decompositions and transforms, declared in their own modules.
from xlac.ir.primitives_linalg import *  # noqa: E402,F401,F403
from xlac.ir.primitives_fft import *  # noqa: E402,F401,F403
from xlac.ir.primitives_control import *  # noqa: E402,F401,F403
