"""One StableHLO emitter per primitive, attached to the primitive's declaration.

An emitter takes the function writer, the node and its operands' SSA names and
returns its results' SSA names. Elementwise primitives are one table each.

>>> from xlac.ir import CATALOG
>>> all(p.emitter is not None for p in CATALOG.values())
True
"""
from __future__ import annotations

import numpy as np

from xlac.ir.dtypes import BOOL
from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.ir.primitive import CATALOG
from xlac.ir.types import TensorType, scalar_type
from xlac.lowering.module import FunctionWriter, dims, int_list


def _types(node):
    return [v.type for v in node.operands], [v.type for v in node.results]


def _simple(op_name: str, attrs_of=lambda node: ""):
    """An emitter for a primitive that maps onto one StableHLO op with no region."""
    def emit(w: FunctionWriter, node, operands):
        ins, outs = _types(node)
        return w.op(op_name, operands, ins, outs, attrs_of(node))
    return emit


# The primitives declared as one StableHLO op each; the others have emitters of their own below.
for _primitive in CATALOG.values():
    if _primitive.stablehlo:
        _primitive.register(emitter=_simple(_primitive.stablehlo))


def _abs(w, node, operands):
    if dtypes.is_unsigned_int(node.operands[0].type.dtype):    # stablehlo.abs takes signed types only
        return list(operands)
    return _simple("stablehlo.abs")(w, node, operands)


P.abs_.register(emitter=_abs)


def _sign(w, node, operands):
    t = node.operands[0].type
    if not dtypes.is_unsigned_int(t.dtype):
        return _simple("stablehlo.sign")(w, node, operands)
    nonzero = emit_compare(w, operands[0], emit_zeros(w, t), t, "NE")     # stablehlo.sign takes signed types only
    return w.op("stablehlo.convert", [nonzero], [t.with_dtype(BOOL)], [t])


P.sign.register(emitter=_sign)


def emit_zeros(w: FunctionWriter, t: TensorType) -> str:
    return emit_constant(w, np.zeros(t.shape, t.dtype))


def emit_full(w: FunctionWriter, t: TensorType, value) -> str:
    return emit_constant(w, np.full(t.shape, value, t.dtype))


def _integer_division(op_name: str):
    """Integer divide / remainder with the divisor guarded: XLA defines x / 0 = -1, x % 0 = x and
    MIN / -1 = MIN, MIN % -1 = 0, but its constant folder traps (SIGFPE) on such constants, so the
    hardware never sees a zero or overflowing divisor."""
    plain = _simple(op_name)

    def emit(w, node, operands):
        t = node.operands[0].type
        if not dtypes.is_int(t.dtype):
            return plain(w, node, operands)
        x, d = operands
        bt = t.with_dtype(BOOL)
        bad = is_zero = emit_compare(w, d, emit_zeros(w, t), t, "EQ")
        if dtypes.is_signed_int(t.dtype):
            is_min = emit_compare(w, x, emit_full(w, t, np.iinfo(t.dtype).min), t, "EQ")
            is_minus_one = emit_compare(w, d, emit_full(w, t, -1), t, "EQ")
            overflow = w.op("stablehlo.and", [is_min, is_minus_one], [bt, bt], [bt])[0]
            bad = w.op("stablehlo.or", [is_zero, overflow], [bt, bt], [bt])[0]
        safe = w.op("stablehlo.select", [bad, emit_full(w, t, 1), d], [bt, t, t], [t])[0]
        result = w.op(op_name, [x, safe], [t, t], [t])[0]
        all_ones = np.array(-1).astype(t.dtype)          # -1, or the largest unsigned value
        by_zero = emit_full(w, t, all_ones) if op_name == "stablehlo.divide" else x
        return w.op("stablehlo.select", [is_zero, by_zero, result], [bt, t, t], [t])
    return emit


def _division(w, node, operands):
    if node.operands[0].type.dtype.kind == "c":
        return [_smith_division(w, *operands, node.operands[0].type)]
    return _divide_integers_or_floats(w, node, operands)


def _smith_division(w: FunctionWriter, x: str, d: str, t: TensorType) -> str:
    """NumPy's complex division (Smith's algorithm): scale by the larger part of the divisor, so that
    ``x / 0`` is ``inf`` or ``nan`` per part as in NumPy, and no intermediate overflows needlessly."""
    rt = t.with_dtype(np.dtype("float32") if t.dtype == np.complex64 else np.dtype("float64"))
    bt = t.with_dtype(BOOL)

    def op(name, *args):
        return w.op(f"stablehlo.{name}", list(args), [rt] * len(args), [rt])[0]
    ar, ai, br, bi = (w.op(f"stablehlo.{part}", [v], [t], [rt])[0] for v in (x, d) for part in ("real", "imag"))
    abs_r, abs_i = op("abs", br), op("abs", bi)
    by_real = emit_compare(w, abs_r, abs_i, rt, "GE")
    zero = emit_zeros(w, rt)
    both_zero = w.op("stablehlo.and", [emit_compare(w, abs_r, zero, rt, "EQ"), emit_compare(w, abs_i, zero, rt, "EQ")],
                     [bt, bt], [bt])[0]
    one = emit_full(w, rt, 1)
    # |br| >= |bi|: rat = bi/br, scale = 1/(br + bi*rat), (ar + ai*rat, ai - ar*rat) * scale
    rat1 = op("divide", bi, br)
    scale1 = op("divide", one, op("add", br, op("multiply", bi, rat1)))
    re1 = op("multiply", op("add", ar, op("multiply", ai, rat1)), scale1)
    im1 = op("multiply", op("subtract", ai, op("multiply", ar, rat1)), scale1)
    # |br| < |bi|: rat = br/bi, scale = 1/(bi + br*rat), (ar*rat + ai, ai*rat - ar) * scale
    rat2 = op("divide", br, bi)
    scale2 = op("divide", one, op("add", bi, op("multiply", br, rat2)))
    re2 = op("multiply", op("add", op("multiply", ar, rat2), ai), scale2)
    im2 = op("multiply", op("subtract", op("multiply", ai, rat2), ar), scale2)
    # a zero divisor: each part divided by |0|, giving inf or nan as NumPy
    re0, im0 = op("divide", ar, abs_r), op("divide", ai, abs_r)

    def pick(c, a, b):
        return w.op("stablehlo.select", [c, a, b], [bt, rt, rt], [rt])[0]
    re = pick(both_zero, re0, pick(by_real, re1, re2))
    im = pick(both_zero, im0, pick(by_real, im1, im2))
    return w.op("stablehlo.complex", [re, im], [rt, rt], [t])[0]


_divide_integers_or_floats = _integer_division("stablehlo.divide")
P.div.register(emitter=_division)
P.rem.register(emitter=_integer_division("stablehlo.remainder"))


def _pow(w, node, operands):
    t = node.operands[0].type
    if dtypes.is_int(t.dtype):
        return [emit_integer_pow(w, *operands, t)]
    power = _simple("stablehlo.power")(w, node, operands)
    if t.dtype.kind != "c":
        return power
    return [_complex_zero_base(w, *operands, power[0], t)]


P.pow_.register(emitter=_pow)


def _complex_zero_base(w: FunctionWriter, base: str, exponent: str, power: str, t: TensorType) -> str:
    """NumPy's complex ``0 ** b``: 1 for ``b == 0``, 0 when ``b``'s real part is positive, else nan+nanj
    (XLA's ``exp(b * log 0)`` gives nan for every complex ``b``)."""
    rt = t.with_dtype(np.dtype("float32") if t.dtype == np.complex64 else np.dtype("float64"))
    bt = t.with_dtype(BOOL)
    zero = emit_zeros(w, t)
    base_zero, exponent_zero = (emit_compare(w, v, zero, t, "EQ") for v in (base, exponent))
    real_exponent = w.op("stablehlo.real", [exponent], [t], [rt])[0]
    positive = emit_compare(w, real_exponent, emit_zeros(w, rt), rt, "GT")

    def pick(c, a, b):
        return w.op("stablehlo.select", [c, a, b], [bt, t, t], [t])[0]
    at_zero = pick(exponent_zero, emit_full(w, t, 1), pick(positive, zero, emit_full(w, t, complex(np.nan, np.nan))))
    return pick(base_zero, at_zero, power)


def emit_integer_pow(w: FunctionWriter, base: str, exponent: str, t: TensorType) -> str:
    """Square-and-multiply over every bit of the exponent, wrapping like NumPy.

    XLA's integer stablehlo.power reads only the low 6 bits of the exponent. Negative
    exponents give 0, except 1 for a base of 1 and ±1 for a base of -1.
    """
    bt = t.with_dtype(BOOL)

    def op(name, *args, out=t):
        return w.op(name, list(args), [t] * len(args), [out])[0]
    one, zero = emit_full(w, t, 1), emit_zeros(w, t)
    is_odd = lambda e: emit_compare(w, op("stablehlo.and", e, one), zero, t, "NE")
    result, square, e = one, base, exponent
    for _ in range(8 * t.dtype.itemsize):
        times = op("stablehlo.multiply", result, square)
        result = w.op("stablehlo.select", [is_odd(e), times, result], [bt, t, t], [t])[0]
        square = op("stablehlo.multiply", square, square)
        e = op("stablehlo.shift_right_logical", e, one)
    if dtypes.is_unsigned_int(t.dtype):
        return result
    minus_one = emit_full(w, t, -1)
    sign = w.op("stablehlo.select", [is_odd(exponent), minus_one, one], [bt, t, t], [t])[0]
    base_is = lambda c: emit_compare(w, base, c, t, "EQ")
    negative_power = w.op("stablehlo.select", [base_is(minus_one), sign, zero], [bt, t, t], [t])[0]
    negative_power = w.op("stablehlo.select", [base_is(one), one, negative_power], [bt, t, t], [t])[0]
    negative = emit_compare(w, exponent, zero, t, "LT")
    return w.op("stablehlo.select", [negative, negative_power, result], [bt, t, t], [t])[0]


P.select.register(emitter=_simple("stablehlo.select"))
P.clamp.register(emitter=_simple("stablehlo.clamp"))
P.bitcast_convert.register(emitter=_simple("stablehlo.bitcast_convert"))
P.reshape.register(emitter=_simple("stablehlo.reshape"))
P.dynamic_update_slice.register(emitter=_simple("stablehlo.dynamic_update_slice"))
P.broadcast_in_dim.register(emitter=_simple(
    "stablehlo.broadcast_in_dim", lambda n: f"broadcast_dimensions = {dims(n.attrs['broadcast_dimensions'])}"))
P.transpose.register(emitter=_simple("stablehlo.transpose", lambda n: f"permutation = {dims(n.attrs['permutation'])}"))
P.reverse.register(emitter=_simple("stablehlo.reverse", lambda n: f"dimensions = {dims(n.attrs['dimensions'])}"))
P.slice_.register(emitter=_simple("stablehlo.slice", lambda n: (
    f"start_indices = {dims(n.attrs['start'])}, limit_indices = {dims(n.attrs['limit'])}, "
    f"strides = {dims(n.attrs['strides'])}")))
P.dynamic_slice.register(emitter=_simple("stablehlo.dynamic_slice", lambda n: f"slice_sizes = {dims(n.attrs['sizes'])}"))
P.concatenate.register(emitter=_simple("stablehlo.concatenate", lambda n: f"dimension = {n.attrs['dimension']} : i64"))
P.pad.register(emitter=_simple("stablehlo.pad", lambda n: (
    f"edge_padding_low = {dims(n.attrs['low'])}, edge_padding_high = {dims(n.attrs['high'])}, "
    f"interior_padding = {dims(n.attrs['interior'])}")))
P.iota.register(emitter=_simple("stablehlo.iota", lambda n: f"iota_dimension = {n.attrs['dimension']} : i64"))


def compare_type(dtype: np.dtype) -> str:
    if dtypes.is_inexact(dtype):
        return "FLOAT"
    if dtypes.is_signed_int(dtype):
        return "SIGNED"
    return "UNSIGNED"


def emit_compare(w: FunctionWriter, a: str, b: str, t: TensorType, direction: str) -> str:
    if np.issubdtype(t.dtype, np.complexfloating) and direction not in ("EQ", "NE"):
        return _complex_order(w, a, b, t, direction)
    attrs = (f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
             f"compare_type = #stablehlo<comparison_type {compare_type(t.dtype)}>")
    return w.op("stablehlo.compare", [a, b], [t, t], [t.with_dtype(BOOL)], attrs)[0]


def _complex_order(w: FunctionWriter, a: str, b: str, t: TensorType, direction: str) -> str:
    """NumPy orders complex numbers lexicographically: by real part, then by imaginary part."""
    part_t = t.with_dtype(np.dtype("float32") if t.dtype == np.complex64 else np.dtype("float64"))
    bt = t.with_dtype(BOOL)
    ra, rb = (w.op("stablehlo.real", [v], [t], [part_t])[0] for v in (a, b))
    ia, ib = (w.op("stablehlo.imag", [v], [t], [part_t])[0] for v in (a, b))
    strict = direction[0] + "T"
    real_decides = emit_compare(w, ra, rb, part_t, strict)
    real_equal = emit_compare(w, ra, rb, part_t, "EQ")
    imag_decides = emit_compare(w, ia, ib, part_t, direction)
    tie = w.op("stablehlo.and", [real_equal, imag_decides], [bt, bt], [bt])[0]
    return w.op("stablehlo.or", [real_decides, tie], [bt, bt], [bt])[0]


def _compare(w, node, operands):
    return [emit_compare(w, *operands, node.operands[0].type, node.attrs["direction"])]


P.compare.register(emitter=_compare)


# ---------------------------------------------------------------- constants


def dense_literal(value: np.ndarray) -> str:
    """MLIR dense elements: a splat scalar, or the raw little-endian bytes in hex."""
    flat = value.reshape(-1)
    if flat.size and value.dtype.kind != "c" and (flat == flat[0]).all() | (flat.size == 1):
        return _scalar_literal(flat[:1].copy())
    if value.dtype == BOOL:
        value = value.astype(np.uint8)
    return '"0x' + np.ascontiguousarray(value).astype(value.dtype.newbyteorder("<")).tobytes().hex().upper() + '"'


def _scalar_literal(one: np.ndarray) -> str:
    if one.dtype == BOOL:
        return "true" if one[0] else "false"
    if dtypes.is_int(one.dtype):
        return str(int(one[0]))
    bits = one.view(np.dtype(f"uint{8 * one.dtype.itemsize}"))[0]
    return f"0x{int(bits):0{2 * one.dtype.itemsize}X}"


def emit_constant(w: FunctionWriter, value: np.ndarray) -> str:
    t = TensorType(value.shape, dtypes.canonical(value.dtype))
    return w.op("stablehlo.constant", [], [], [t], f"value = dense<{dense_literal(value)}> : {t.mlir()}")[0]


def _constant(w, node, operands):
    return [emit_constant(w, node.attrs["value"])]


P.constant.register(emitter=_constant)


# ---------------------------------------------------------------- reductions




_BOOL_REDUCE_BODY = {"sum": "stablehlo.or", "prod": "stablehlo.and", "max": "stablehlo.or", "min": "stablehlo.and"}


def _reduce_body_op(op: str, dtype) -> str:
    if dtype == BOOL and op in _BOOL_REDUCE_BODY:
        return _BOOL_REDUCE_BODY[op]
    return P.reduce_combiner(op).stablehlo


def emit_reducer(w: FunctionWriter, op: str, dtype) -> tuple[str, list[str]]:
    """The init value and the body region of a reduce or reduce_window by ``op`` of ``dtype`` elements."""
    s = scalar_type(dtype)
    init = emit_constant(w, P.reduce_identity(op, dtype))

    def body(rw, args):
        return rw.op(_reduce_body_op(op, dtype), args, [s, s], [s]), [s]
    return init, w.region([s, s], body)


def _reduce(w, node, operands):
    x = node.operands[0].type
    init, region = emit_reducer(w, node.attrs["op"], x.dtype)
    return w.op("stablehlo.reduce", [operands[0], init], [x, scalar_type(x.dtype)], [node.results[0].type],
                f"dimensions = {dims(node.attrs['axes'])}", [region])


P.reduce.register(emitter=_reduce)


def _reduce_many(w, node, operands):
    xs, reduce_ops = [v.type for v in node.operands], node.attrs["ops"]
    scalars = [scalar_type(x.dtype) for x in xs]
    inits = [emit_constant(w, P.reduce_identity(op, x.dtype)) for op, x in zip(reduce_ops, xs)]

    def body(rw, args):
        accumulated, arriving = args[:len(xs)], args[len(xs):]
        return [rw.op(_reduce_body_op(op, x.dtype), [a, b], [s, s], [s])[0]
                for op, x, s, a, b in zip(reduce_ops, xs, scalars, accumulated, arriving)], scalars
    region = w.region(scalars + scalars, body)
    return w.op("stablehlo.reduce", list(operands) + inits, xs + scalars, [v.type for v in node.results],
                f"dimensions = {dims(node.attrs['axes'])}", [region])


P.reduce_many.register(emitter=_reduce_many)


# On CPU a running op is a loop along its axis, each step combining one slice with the previous: XLA:CPU
# runs it 2-15x faster than jax's reduce_window (cumsum of 1M floats 5.4 ms vs 11.4; of 1024 x 1024 rows
# 2.1 vs 6.0; along 1024 x 1024 columns 0.65 vs 9.9), compiles it faster, and it adds in NumPy's order.
def scans_loop(w: FunctionWriter) -> bool:
    """Whether running ops are loops on ``w``'s device (else reduce_windows)."""
    return w.platform == "cpu"


def _cumulative(w, node, operands):
    """The running op along the axis: on CPU a loop, which also adds in NumPy's order; elsewhere a
    reduce_window whose window is the whole axis, padded with the axis' length - 1 identities before
    it (after it with ``reverse``), as jax lowers cumsum, cumprod, cummax and cummin."""
    x = node.operands[0].type
    op, axis, reverse = node.attrs["op"], node.attrs["axis"], node.attrs["reverse"]
    n = x.shape[axis]
    if n == 0:
        return [operands[0]]
    if scans_loop(w) and n >= _BLOCKED_SCAN_LENGTH and _exact(op, x.dtype):
        return [_cumulative_blocked(w, operands[0], x, op, axis, reverse)]
    if scans_loop(w) and n > 1:
        return [_cumulative_loop(w, operands[0], x, op, axis, reverse)]
    init, region = emit_reducer(w, op, x.dtype)
    ones = [1] * x.ndim
    window = [n if d == axis else 1 for d in range(x.ndim)]
    pads = [((0, n - 1) if reverse else (n - 1, 0)) if d == axis else (0, 0) for d in range(x.ndim)]
    padding = "[" + ", ".join(f"[{lo}, {hi}]" for lo, hi in pads) + "]"
    attrs = (f"base_dilations = {dims(ones)}, padding = dense<{padding}> : tensor<{x.ndim}x2xi64>, "
             f"window_dilations = {dims(ones)}, window_dimensions = {dims(window)}, window_strides = {dims(ones)}")
    return w.op("stablehlo.reduce_window", [operands[0], init], [x, scalar_type(x.dtype)], [node.results[0].type],
                attrs, [region])


P.cumulative.register(emitter=_cumulative)


# A running op whose result does not depend on the order it combines in (min, max, and, or; sums and
# products of integers) runs on a long axis as blocks of about sqrt(n): a loop over the blocks' positions
# (each step one position of every block), then a loop over the blocks' totals, then one combine: 2 sqrt(n)
# loop steps instead of n (a running minimum of 20,146 indices: about 1.5 ms as one loop on this CPU).
_BLOCKED_SCAN_LENGTH = 1024


def _exact(op: str, dtype: np.dtype) -> bool:
    return op in ("min", "max", "and", "or") or not dtypes.is_inexact(dtype)


def _cumulative_blocked(w: FunctionWriter, x: str, t: TensorType, op: str, axis: int, reverse: bool) -> str:
    """The running op along ``axis`` in blocks (see ``_BLOCKED_SCAN_LENGTH``); from the end with ``reverse``
    (the axis reversed before and after)."""
    n = t.shape[axis]
    if reverse:
        x = w.op("stablehlo.reverse", [x], [t], [t], f"dimensions = {dims([axis])}")[0]
    order = [axis] + [d for d in range(t.ndim) if d != axis]
    front = t.with_shape(tuple(t.shape[d] for d in order))
    if axis:
        x = w.op("stablehlo.transpose", [x], [t], [front], f"permutation = {dims(order)}")[0]
    rest = front.shape[1:]
    size = int(np.ceil(np.sqrt(n)))
    blocks = -(-n // size)
    padded = front.with_shape((blocks * size,) + rest)
    identity = emit_constant(w, P.reduce_identity(op, t.dtype))
    zeros = [0] * front.ndim
    x = w.op("stablehlo.pad", [x, identity], [front, scalar_type(t.dtype)], [padded],
             f"edge_padding_low = {dims(zeros)}, edge_padding_high = {dims([blocks * size - n] + zeros[1:])}, "
             f"interior_padding = {dims(zeros)}")[0]
    grouped = padded.with_shape((blocks, size) + rest)
    x = w.op("stablehlo.reshape", [x], [padded], [grouped])[0]
    swap = [1, 0] + list(range(2, grouped.ndim))
    by_position = grouped.with_shape((size, blocks) + rest)
    x = w.op("stablehlo.transpose", [x], [grouped], [by_position], f"permutation = {dims(swap)}")[0]
    within = _cumulative_loop(w, x, by_position, op, 0, False)
    totals_type = by_position.with_shape((1, blocks) + rest)
    totals = w.op("stablehlo.slice", [within], [by_position], [totals_type],
                  f"start_indices = {dims([size - 1] + [0] * (grouped.ndim - 1))}, "
                  f"limit_indices = {dims(by_position.shape)}, strides = {dims([1] * grouped.ndim)}")[0]
    block_type = by_position.with_shape((blocks,) + rest)
    totals = w.op("stablehlo.reshape", [totals], [totals_type], [block_type])[0]
    before = _cumulative_loop(w, totals, block_type, op, 0, False) if blocks > 1 else totals
    # what the blocks before each block combine to: the running totals shifted by one, the identity first
    before = w.op("stablehlo.pad", [before, identity], [block_type, scalar_type(t.dtype)], [block_type],
                  f"edge_padding_low = {dims([1] + zeros[1:])}, edge_padding_high = {dims([-1] + zeros[1:])}, "
                  f"interior_padding = {dims(zeros)}")[0]
    before = w.op("stablehlo.broadcast_in_dim", [before], [block_type], [by_position],
                  f"broadcast_dimensions = {dims(range(1, by_position.ndim))}")[0]
    out = w.op(_reduce_body_op(op, t.dtype), [within, before], [by_position, by_position], [by_position])[0]
    out = w.op("stablehlo.transpose", [out], [by_position], [grouped], f"permutation = {dims(swap)}")[0]
    out = w.op("stablehlo.reshape", [out], [grouped], [padded])[0]
    out = w.op("stablehlo.slice", [out], [padded], [front],
               f"start_indices = {dims(zeros)}, limit_indices = {dims(front.shape)}, "
               f"strides = {dims([1] * front.ndim)}")[0]
    if axis:
        out = w.op("stablehlo.transpose", [out], [front], [t], f"permutation = {dims(list(np.argsort(order)))}")[0]
    if reverse:
        out = w.op("stablehlo.reverse", [out], [t], [t], f"dimensions = {dims([axis])}")[0]
    return out


def _cumulative_loop(w: FunctionWriter, x: str, t: TensorType, op: str, axis: int, reverse: bool) -> str:
    """``out[i] = op(out[i - 1], x[i])`` along ``axis`` (from the end with ``reverse``) as a while loop over
    the axis moved to the front; the loop's array starts as ``x``, so step i reads its own row i."""
    n = t.shape[axis]
    order = [axis] + [d for d in range(t.ndim) if d != axis]
    front = t.with_shape(tuple(t.shape[d] for d in order))
    if axis:
        x = w.op("stablehlo.transpose", [x], [t], [front], f"permutation = {dims(order)}")[0]
    row = front.with_shape((1,) + front.shape[1:])
    index = TensorType((), np.dtype("int32"))
    sizes = f"slice_sizes = {dims(row.shape)}"
    first, step = (n - 1, -1) if reverse else (0, 1)

    def at(rw, i):
        return [i] + [emit_constant(rw, np.zeros((), np.int32)) for _ in range(front.ndim - 1)]
    start = emit_constant(w, np.array(first, np.int32))
    previous = w.op("stablehlo.dynamic_slice", [x] + at(w, start), [front] + [index] * front.ndim, [row], sizes)[0]
    second = emit_constant(w, np.array(first + step, np.int32))
    state = [index, row, front]

    def condition(rw, args):
        bound = emit_constant(rw, np.array(-1 if reverse else n, np.int32))
        return [emit_compare(rw, args[0], bound, index, "GT" if reverse else "LT")], [scalar_type(BOOL)]

    def body(rw, args):
        i, previous, out = args
        current = rw.op("stablehlo.dynamic_slice", [out] + at(rw, i), [front] + [index] * front.ndim, [row], sizes)[0]
        combined = rw.op(_reduce_body_op(op, t.dtype), [previous, current], [row, row], [row])[0]
        out = rw.op("stablehlo.dynamic_update_slice", [out, combined] + at(rw, i),
                    [front, row] + [index] * front.ndim, [front])[0]
        following = rw.op("stablehlo.add", [i, emit_constant(rw, np.array(step, np.int32))], [index, index], [index])[0]
        return [following, combined, out], state
    out = w.op("stablehlo.while", [second, previous, x], state, state,
               regions=[w.region(state, condition), w.region(state, body)])[2]
    if axis:
        inverse = list(np.argsort(order))
        out = w.op("stablehlo.transpose", [out], [front], [t], f"permutation = {dims(inverse)}")[0]
    return out


def _ordered_keys(w: FunctionWriter, x: str, t: TensorType, nan_first_for: str) -> tuple[str, TensorType]:
    """Signed integers ordered as the floats ``x`` are (-0.0 and 0.0 equal), NaN above everything for
    ``nan_first_for`` "GT" (argmax) and below everything for "LT" (argmin), so NaN wins either way."""
    kt = t.with_dtype(np.dtype(f"int{8 * t.dtype.itemsize}"))
    info = np.iinfo(kt.dtype)
    bt = t.with_dtype(BOOL)

    def full(value) -> str:
        scalar = emit_constant(w, np.array(value, kt.dtype if value in (info.max, info.min, 0) else t.dtype))
        target = kt if value in (info.max, info.min) else t
        return w.op("stablehlo.broadcast_in_dim", [scalar], [scalar_type(target.dtype)], [target],
                    f"broadcast_dimensions = {dims([])}")[0]
    zero = emit_zeros(w, t)
    unsigned_zero = w.op("stablehlo.select", [emit_compare(w, x, zero, t, "EQ"), zero, x], [bt, t, t], [t])[0]
    bits = w.op("stablehlo.bitcast_convert", [unsigned_zero], [t], [kt])[0]
    negative = emit_compare(w, bits, emit_zeros(w, kt), kt, "LT")
    flipped = w.op("stablehlo.xor", [bits, full(info.max)], [kt, kt], [kt])[0]
    keys = w.op("stablehlo.select", [negative, flipped, bits], [bt, kt, kt], [kt])[0]
    nan_key = full(info.max if nan_first_for == "GT" else info.min)
    keys = w.op("stablehlo.select", [emit_compare(w, x, x, t, "NE"), nan_key, keys], [bt, kt, kt], [kt])[0]
    return keys, kt


def _arg_reduce(direction: str):
    """argmax / argmin as a reduce over (value, index) pairs; ties and NaNs go to the first index, as in NumPy.
    Real floats are reduced as integer keys in the same order (NaN first), so that the reducer needs no
    NaN tests: a third of the scalar ops per element."""
    def emit(w, node, operands):
        x = node.operands[0].type
        axis, index_dtype = node.attrs["axis"], node.attrs["index_dtype"]
        if dtypes.is_inexact(x.dtype) and x.dtype.kind != "c":
            keys, x = _ordered_keys(w, operands[0], x, direction)
            operands = [keys]
        vt, it = scalar_type(x.dtype), scalar_type(index_dtype)
        indices = w.op("stablehlo.iota", [], [], [x.with_dtype(index_dtype)], f"iota_dimension = {axis} : i64")[0]
        init_value = emit_constant(w, P.reduce_identity("max" if direction == "GT" else "min", x.dtype))
        init_index = emit_constant(w, np.array(np.iinfo(index_dtype).max, index_dtype))
        bt = vt.with_dtype(BOOL)

        def body(rw, args):
            a, ai, b, bi = args
            better = emit_compare(rw, a, b, vt, direction)
            equal = emit_compare(rw, a, b, vt, "EQ")
            if dtypes.is_inexact(x.dtype):
                a_nan = emit_compare(rw, a, a, vt, "NE")
                b_nan = emit_compare(rw, b, b, vt, "NE")
                both_nan = rw.op("stablehlo.and", [a_nan, b_nan], [bt, bt], [bt])[0]
                equal = rw.op("stablehlo.or", [equal, both_nan], [bt, bt], [bt])[0]
                not_b_nan = rw.op("stablehlo.not", [b_nan], [bt], [bt])[0]
                better = rw.op("stablehlo.or", [better, a_nan], [bt, bt], [bt])[0]
                better = rw.op("stablehlo.and", [better, not_b_nan], [bt, bt], [bt])[0]
            first = emit_compare(rw, ai, bi, it, "LT")
            tie = rw.op("stablehlo.and", [equal, first], [bt, bt], [bt])[0]
            pick_a = rw.op("stablehlo.or", [better, tie], [bt, bt], [bt])[0]
            value = rw.op("stablehlo.select", [pick_a, a, b], [bt, vt, vt], [vt])[0]
            index = rw.op("stablehlo.select", [pick_a, ai, bi], [bt, it, it], [it])[0]
            return [value, index], [vt, it]
        region = w.region([vt, it, vt, it], body)
        out = node.results[0].type
        results = w.op("stablehlo.reduce", [operands[0], indices, init_value, init_index],
                       [x, x.with_dtype(index_dtype), vt, it], [out.with_dtype(x.dtype), out],
                       f"dimensions = {dims([axis])}", [region])
        return [results[1]]
    return emit


P.argmax.register(emitter=_arg_reduce("GT"))
P.argmin.register(emitter=_arg_reduce("LT"))


# ---------------------------------------------------------------- contraction, sort, gather, scatter


def _less_than(rw, a: str, b: str, t: TensorType) -> tuple[str, str]:
    """(a < b, a == b) with NaNs sorted after every number, as NumPy sorts."""
    bt = t.with_dtype(BOOL)
    lt = emit_compare(rw, a, b, t, "LT")
    eq = emit_compare(rw, a, b, t, "EQ")
    if dtypes.is_float(t.dtype):
        a_nan = emit_compare(rw, a, a, t, "NE")
        b_nan = emit_compare(rw, b, b, t, "NE")
        a_num = rw.op("stablehlo.not", [a_nan], [bt], [bt])[0]
        num_then_nan = rw.op("stablehlo.and", [a_num, b_nan], [bt, bt], [bt])[0]
        lt = rw.op("stablehlo.or", [lt, num_then_nan], [bt, bt], [bt])[0]
        both_nan = rw.op("stablehlo.and", [a_nan, b_nan], [bt, bt], [bt])[0]
        eq = rw.op("stablehlo.or", [eq, both_nan], [bt, bt], [bt])[0]
    return lt, eq


def _sort(w, node, operands):
    ins, outs = _types(node)
    num_keys = node.attrs["num_keys"]
    scalars = [scalar_type(t.dtype) for t in ins]
    arg_types = [t for s in scalars for t in (s, s)]
    bt = scalar_type(BOOL)

    def body(rw, args):
        result = None
        for k in reversed(range(num_keys)):      # lexicographic: key 0 decides, later keys break ties
            lt, eq = _less_than(rw, args[2 * k], args[2 * k + 1], scalars[k])
            if result is None:
                result = lt
            else:
                tie = rw.op("stablehlo.and", [eq, result], [bt, bt], [bt])[0]
                result = rw.op("stablehlo.or", [lt, tie], [bt, bt], [bt])[0]
        return [result], [bt]
    region = w.region(arg_types, body)
    attrs = f"dimension = {node.attrs['dimension']} : i64, is_stable = {str(node.attrs['is_stable']).lower()}"
    return w.op("stablehlo.sort", operands, ins, outs, attrs, [region])


P.sort.register(emitter=_sort)


def _gather(w, node, operands):
    a = node.attrs
    ins, outs = _types(node)
    numbers = (f"offset_dims = {int_list(a['offset_dims'])}, collapsed_slice_dims = {int_list(a['collapsed_slice_dims'])}, "
               f"operand_batching_dims = {int_list(a.get('operand_batching_dims', ()))}, "
               f"start_indices_batching_dims = {int_list(a.get('start_indices_batching_dims', ()))}, "
               f"start_index_map = {int_list(a['start_index_map'])}, index_vector_dim = {ins[1].ndim - 1}")
    attrs = (f"dimension_numbers = #stablehlo.gather<{numbers}>, indices_are_sorted = false, "
             f"slice_sizes = {dims(a['slice_sizes'])}")
    return w.op("stablehlo.gather", operands, ins, outs, attrs)


P.gather.register(emitter=_gather)


SCATTER_COMBINERS = {"add": "stablehlo.add", "mul": "stablehlo.multiply", "max": "stablehlo.maximum",
                     "min": "stablehlo.minimum"}


def _scatter(w, node, operands):
    a = node.attrs
    ins, outs = _types(node)
    s = scalar_type(ins[0].dtype)
    mode = a.get("mode", "set")

    def body(rw, args):
        if mode == "set":
            return [args[1]], [s]
        op = SCATTER_COMBINERS[mode]
        if s.dtype == BOOL and mode in ("add", "max"):
            op = "stablehlo.or"
        elif s.dtype == BOOL and mode in ("mul", "min"):
            op = "stablehlo.and"
        return rw.op(op, args, [s, s], [s]), [s]
    region = w.region([s, s], body)
    numbers = (f"update_window_dims = {int_list(a['update_window_dims'])}, "
               f"inserted_window_dims = {int_list(a['inserted_window_dims'])}, "
               f"input_batching_dims = {int_list(a.get('input_batching_dims', ()))}, "
               f"scatter_indices_batching_dims = {int_list(a.get('scatter_indices_batching_dims', ()))}, "
               f"scatter_dims_to_operand_dims = {int_list(a['scatter_dims_to_operand_dims'])}, "
               f"index_vector_dim = {ins[1].ndim - 1}")
    attrs = (f"scatter_dimension_numbers = #stablehlo.scatter<{numbers}>, indices_are_sorted = false, "
             "unique_indices = false")
    return w.op("stablehlo.scatter", operands, ins, outs, attrs, [region])


P.scatter.register(emitter=_scatter)


def _copy(w, node, operands):
    return [operands[0]]        # values are immutable once lowered: a copy is the same SSA value


P.copy.register(emitter=_copy)


def _store(w, node, operands):
    raise NotImplementedError("xlac internal error: a store reached lowering; functionalization removes them")


P.store.register(emitter=_store)


def _stop_gradient(w, node, operands):
    return [operands[0]]        # an identity when run: only differentiation treats it specially


P.stop_gradient.register(emitter=_stop_gradient)
