"""Custom calls of the vendors' matrix kernels, as jaxlib registers them with its PJRT clients.

``FunctionWriter.kernels`` names the device's library (:func:`xlac.runtime.kernels.linalg_kernels`):
"lapack" on CPU (one target per routine and dtype, ``lapack_dpotrf_ffi``; character options), "cusolver"
and "hipsolver" on NVIDIA and AMD GPUs (one target per routine, ``cusolver_potrf_ffi``; typed options, and
the host-side ``cuhybrid_eig_real``/``_comp`` for eigenvalues of general matrices). Each kernel reads and
writes its matrices column-major with the batch dimensions outermost, and reports LAPACK's ``info`` per
matrix; :func:`nan_where_failed` turns a failed matrix's results into NaN, as JAX does.

>>> attribute(True), attribute(np.uint8(76)), attribute("auto")
('true', '76 : ui8', '"auto"')
"""
from __future__ import annotations

import numpy as np

from xlac.ir.dtypes import BOOL, INT32
from xlac.ir.types import TensorType
from xlac.lowering.emitters import emit_compare, emit_full, emit_zeros
from xlac.lowering.module import FunctionWriter, dims

LAPACK_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}
GPU_PREFIX = {"cusolver": "cu", "hipsolver": "hip"}


def library(w: FunctionWriter, t: TensorType) -> str:
    """The kernels that factor matrices of ``t``'s dtype on ``w``'s device: "lapack", "gpu" or "" (none)."""
    if t.dtype.name not in LAPACK_PREFIX:
        return ""
    return "lapack" if w.kernels == "lapack" else "gpu" if w.kernels in GPU_PREFIX else ""


def lapack(w: FunctionWriter, routine: str, operands, ins, outs, options: dict, aliased: int | None = None
           ) -> list[str]:
    """One call of LAPACK's ``routine`` (e.g. "potrf") for the dtype of ``ins[0]``, batched over leading
    dimensions; ``options``: its character arguments (uplo="L", ...)."""
    target = f"lapack_{LAPACK_PREFIX[ins[0].dtype.name]}{routine}_ffi"
    options = {key: np.uint8(ord(value)) for key, value in options.items()}
    return custom_call(w, target, operands, ins, outs, options, aliased)


def gpu_solver(w: FunctionWriter, routine: str, operands, ins, outs, options: dict, aliased: int | None = None,
               column_major: bool = True) -> list[str]:
    """One call of the GPU solver's ``routine`` ("potrf", "gesvdj", ...; any dtype), batched over leading
    dimensions; ``column_major=False`` hands it the matrices row-major (that is, their transposes)."""
    target = f"{GPU_PREFIX[w.kernels]}solver_{routine}_ffi"
    return custom_call(w, target, operands, ins, outs, options, aliased, column_major)


def gpu_hybrid(w: FunctionWriter, routine: str, operands, ins, outs, options: dict) -> list[str]:
    """One call of a GPU plugin's host-side kernel (``cuhybrid_eig_real``, ...)."""
    return custom_call(w, f"{GPU_PREFIX[w.kernels]}hybrid_{routine}", operands, ins, outs, options)


def custom_call(w: FunctionWriter, target: str, operands, ins, outs, options: dict, aliased: int | None = None,
                column_major: bool = True) -> list[str]:
    """A typed-FFI custom call of ``target``. Operands and results of the first operand's rank are matrices
    (column-major unless ``column_major`` is False); the others vectors (eigenvalues, pivots, Householder
    scalars, info), row-major. ``aliased``: the operand the first result overwrites."""
    rank = len(ins[0].shape)
    layout = lambda t: _layout(len(t.shape), column_major and len(t.shape) == rank)
    config = ", ".join(f"{key} = {attribute(value)}" for key, value in options.items())
    attrs = (f'call_target_name = "{target}", api_version = 4 : i32, backend_config = {{{config}}}, '
             f'operand_layouts = [{", ".join(map(layout, ins))}], result_layouts = [{", ".join(map(layout, outs))}]')
    if aliased is not None:
        tuple_index = "0" if len(outs) > 1 else ""
        attrs += (f", output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [{tuple_index}], "
                  f"operand_index = {aliased}, operand_tuple_indices = []>]")
    return w.op("stablehlo.custom_call", operands, ins, outs, attrs)


def attribute(value) -> str:
    """An FFI option as an MLIR attribute: booleans, unsigned bytes (LAPACK's characters, enum values),
    strings."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, np.uint8):
        return f"{int(value)} : ui8"
    if isinstance(value, str):
        return '"' + value + '"'
    raise TypeError(f"no FFI attribute for {value!r}")


def _layout(rank: int, matrices: bool) -> str:
    """A layout (minor to major): each matrix column-major with the batch dimensions outermost
    (``matrices``), else row-major."""
    order = [rank - 2, rank - 1, *range(rank - 3, -1, -1)] if matrices else list(range(rank - 1, -1, -1))
    return f"dense<[{', '.join(map(str, order))}]> : tensor<{rank}xindex>" if order else "dense<> : tensor<0xindex>"


def nan_where_failed(w: FunctionWriter, x: str, t: TensorType, status: str, batch: tuple) -> str:
    """``x`` where the kernel's status is 0, NaN for the matrices whose call failed (as JAX gives them)."""
    st = TensorType(batch, INT32)
    ok = emit_compare(w, status, emit_zeros(w, st), st, "EQ")
    ok = w.op("stablehlo.broadcast_in_dim", [ok], [st.with_dtype(BOOL)], [t.with_dtype(BOOL)],
              f"broadcast_dimensions = {dims(range(len(batch)))}")[0]
    scalar = TensorType((), t.dtype)
    nan = w.op("stablehlo.broadcast_in_dim", [emit_full(w, scalar, np.nan)], [scalar], [t],
               f"broadcast_dimensions = {dims(())}")[0]
    return w.op("stablehlo.select", [ok, x, nan], [t.with_dtype(BOOL), t, t], [t])[0]
