"""The emitter of ``dot_general``: one StableHLO ``dot_general``, or on the CPU, for a batched matrix-vector
product whose matrix does not lead with its batch axes, a multiply and a sum.

XLA:CPU runs a batched dot with the batch axes leading in both operands, and first copies an operand whose
batch axes do not lead, transposed. For a matrix-vector product the copy costs more than the product: a decode
step's ``einsum("hd,thd->ht", q, k_cache)`` over a (position, head, dim) cache of 1024 x 8 x 64 float64 copies
4 MiB per call, 1.9 ms against 0.77 ms for the multiply and the sum, which read the matrix once where it lies.

>>> import numpy as np, xlac
>>> def scores(q, k):
...     return np.einsum("hd,thd->ht", q, k)
>>> text = xlac.compile(scores).lower(np.ones((8, 64)), np.ones((1024, 8, 64))).as_text()
>>> "stablehlo.dot_general" in text, "stablehlo.reduce" in text
(False, True)
"""
from __future__ import annotations

from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.ir.types import TensorType, scalar_type
from xlac.lowering.emitters import emit_reducer
from xlac.lowering.module import FunctionWriter, dims, int_list


def _dot_general(w: FunctionWriter, node, operands):
    vector_side = _vector_side(node) if w.platform == "cpu" else None
    if vector_side is not None:
        return [_multiply_and_sum(w, node, operands, vector_side)]
    (lc, rc), (lb, rb) = node.attrs["contracting"], node.attrs["batch"]
    ins, outs = [v.type for v in node.operands], [v.type for v in node.results]
    attrs = (f"dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = {int_list(lb)}, "
             f"rhs_batching_dimensions = {int_list(rb)}, lhs_contracting_dimensions = {int_list(lc)}, "
             f"rhs_contracting_dimensions = {int_list(rc)}>")
    if dtypes.is_inexact(ins[0].dtype) and ins[0].dtype.itemsize >= 4:
        # NumPy's float32 matmul is exact float32: no TF32 or bf16 passes on GPUs and TPUs.
        attrs += ", precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]"
    return w.op("stablehlo.dot_general", operands, ins, outs, attrs)


P.dot_general.register(emitter=_dot_general)


def _vector_side(node) -> int | None:
    """The operand without free axes of a batched matrix-vector product of (at least 32-bit) floats whose
    other operand (the matrix) does not lead with its batch axes; None for any other contraction."""
    contracting, batch = node.attrs["contracting"], node.attrs["batch"]
    dtype = node.operands[0].type.dtype
    # (half floats stay dots: XLA accumulates their products in float32, a sum would add in half precision)
    if not batch[0] or not dtypes.is_inexact(dtype) or dtype.itemsize < 4 or node.results[0].type.dtype != dtype:
        return None
    for side in (0, 1):
        vector_axes = len(contracting[side]) + len(batch[side])
        if vector_axes == node.operands[side].type.ndim and tuple(batch[1 - side]) != tuple(range(len(batch[0]))):
            return side
    return None


def _multiply_and_sum(w: FunctionWriter, node, operands, vector_side: int) -> str:
    """The contraction as the matrix times the vector broadcast to its shape, summed over the contracted
    axes, and the sum's axes put in ``dot_general``'s order (batch axes, then the matrix's free axes)."""
    contracting, batch = node.attrs["contracting"], node.attrs["batch"]
    matrix_side = 1 - vector_side
    vector, matrix = operands[vector_side], operands[matrix_side]
    vector_type, matrix_type = node.operands[vector_side].type, node.operands[matrix_side].type
    # each vector axis with the matrix axis it pairs with, in the matrix's order
    pairs = sorted(zip(batch[matrix_side] + contracting[matrix_side], batch[vector_side] + contracting[vector_side]))
    order = [vector_axis for _, vector_axis in pairs]
    if order != sorted(order):
        vector_type, vector = _transposed(w, vector, vector_type, order)
    broadcast = w.op("stablehlo.broadcast_in_dim", [vector], [vector_type], [matrix_type],
                     f"broadcast_dimensions = {dims([matrix_axis for matrix_axis, _ in pairs])}")[0]
    product = w.op("stablehlo.multiply", [matrix, broadcast], [matrix_type, matrix_type], [matrix_type])[0]
    kept = [axis for axis in range(matrix_type.ndim) if axis not in contracting[matrix_side]]
    summed_type = TensorType(tuple(matrix_type.shape[axis] for axis in kept), matrix_type.dtype)
    init, region = emit_reducer(w, "sum", matrix_type.dtype)
    summed = w.op("stablehlo.reduce", [product, init], [matrix_type, scalar_type(matrix_type.dtype)], [summed_type],
                  f"dimensions = {dims(sorted(contracting[matrix_side]))}", [region])[0]
    result_axes = list(batch[matrix_side]) + [axis for axis in kept if axis not in batch[matrix_side]]
    permutation = [kept.index(axis) for axis in result_axes]
    if permutation != sorted(permutation):
        summed_type, summed = _transposed(w, summed, summed_type, permutation)
    return summed


def _transposed(w: FunctionWriter, x: str, t: TensorType, permutation: list[int]) -> tuple[TensorType, str]:
    result = TensorType(tuple(t.shape[axis] for axis in permutation), t.dtype)
    return result, w.op("stablehlo.transpose", [x], [t], [result], f"permutation = {dims(permutation)}")[0]
