"""StableHLO emitters of the decompositions.

Where the device runs a vendor's matrix kernels (``w.kernels``; see :mod:`xlac.lowering.solver_calls`),
cholesky, qr, lu, eig, eigh and svd call them as NumPy and JAX do: on CPU LAPACK's ``potrf``, ``geqrf``
and ``orgqr``/``ungqr``, ``getrf``, ``geev``, ``syevd``/``heevd``, ``gesdd`` (and ``trsm`` for
triangular_solve); on GPUs cuSOLVER's (hipSOLVER's) ``potrf``, ``geqrf``/``orgqr``, ``getrf``,
``syevd``, ``gesvdj`` or ``gesvd``, and the plugin's host-side ``geev``, with triangular_solve left to
XLA (cuBLAS's ``trsm``). Elsewhere (TPU) ``cholesky`` and ``triangular_solve`` are StableHLO ops, and QR
and eigh are custom calls that XLA itself expands before code generation (its QrExpander and
EighExpander: blocked Householder QR, two-sided Jacobi); lu, eig and svd have no kernel there. Zero-sized
matrices never reach a kernel: their (trivial) results are written as constants.

>>> from xlac.ir import primitives as P
>>> all(p.emitter is not None for p in (P.cholesky, P.triangular_solve, P.qr, P.eigh, P.svd))
True
"""
from __future__ import annotations

import numpy as np

from xlac.ir.dtypes import BOOL
from xlac.errors import UnsupportedError
from xlac.ir import primitives as P
from xlac.ir.primitives_linalg import real_dtype
from xlac.ir.types import TensorType, scalar_type
from xlac.lowering.emitters import emit_compare, emit_constant, emit_full, emit_zeros
from xlac.lowering.module import FunctionWriter, dims
from xlac.lowering.solver_calls import INT32, gpu_hybrid, gpu_solver, lapack, library, nan_where_failed


# Jacobi sweeps stop when the off-diagonal part's Frobenius norm is below tol times the whole matrix's.
EIGH_MAX_SWEEPS = 100
EIGH_TOLERANCE = {"float32": 1e-7, "complex64": 1e-7, "float64": 1e-15, "complex128": 1e-15}


def _bool_op(w: FunctionWriter, name: str, a: str, b: str, t: TensorType) -> str:
    bt = t.with_dtype(BOOL)
    return w.op(name, [a, b], [bt, bt], [bt])[0]


def triangle_mask(w: FunctionWriter, t: TensorType, lower: bool, strict: bool = False) -> str:
    """A bool tensor of ``t``'s shape: True on and below (lower) or above the diagonal of the last two
    axes; ``strict`` leaves the diagonal out."""
    it = t.with_dtype(np.dtype("int32"))
    rows = w.op("stablehlo.iota", [], [], [it], f"iota_dimension = {t.ndim - 2} : i64")[0]
    cols = w.op("stablehlo.iota", [], [], [it], f"iota_dimension = {t.ndim - 1} : i64")[0]
    direction = ("GT" if strict else "GE") if lower else ("LT" if strict else "LE")
    return emit_compare(w, rows, cols, it, direction)


def keep_triangle(w: FunctionWriter, x: str, t: TensorType, lower: bool, strict: bool = False) -> str:
    """``x`` with the elements outside the (lower or upper) triangle set to zero."""
    mask = triangle_mask(w, t, lower, strict)
    return w.op("stablehlo.select", [mask, x, emit_zeros(w, t)], [t.with_dtype(BOOL), t, t], [t])[0]


def _identity(w: FunctionWriter, t: TensorType) -> str:
    """Ones on the diagonal of the last two axes of ``t``, zeros elsewhere."""
    eye = np.broadcast_to(np.eye(t.shape[-2], t.shape[-1], dtype=t.dtype), t.shape)
    return emit_constant(w, np.ascontiguousarray(eye))


def _slice(w: FunctionWriter, x: str, t: TensorType, limit) -> tuple[str, TensorType]:
    """The leading corner ``[:limit]`` of ``x``."""
    out = t.with_shape(limit)
    if tuple(limit) == t.shape:
        return x, t
    attrs = (f"start_indices = {dims([0] * t.ndim)}, limit_indices = {dims(limit)}, "
             f"strides = {dims([1] * t.ndim)}")
    return w.op("stablehlo.slice", [x], [t], [out], attrs)[0], out


def _pad_columns(w: FunctionWriter, x: str, t: TensorType, columns: int) -> tuple[str, TensorType]:
    """``x`` with zero columns appended up to ``columns``."""
    out = t.with_shape(t.shape[:-1] + (columns,))
    if columns == t.shape[-1]:
        return x, t
    zero = emit_constant(w, np.zeros((), t.dtype))
    high = [0] * (t.ndim - 1) + [columns - t.shape[-1]]
    attrs = (f"edge_padding_low = {dims([0] * t.ndim)}, edge_padding_high = {dims(high)}, "
             f"interior_padding = {dims([0] * t.ndim)}")
    return w.op("stablehlo.pad", [x, zero], [t, scalar_type(t.dtype)], [out], attrs)[0], out


def _is_empty(*types: TensorType) -> bool:
    return any(0 in t.shape for t in types)


# ---------------------------------------------------------------- cholesky, triangular_solve


def _cholesky(w, node, operands):
    t = node.operands[0].type
    if _is_empty(t):
        return [operands[0]]
    lower = bool(node.attrs.get("lower", True))
    kernels = library(w, t)
    if kernels:
        batch = t.shape[:-2]
        outs = [t, TensorType(batch, INT32)]
        if kernels == "lapack":
            factor, status = lapack(w, "potrf", operands, [t], outs, {"uplo": "L" if lower else "U"}, aliased=0)
        else:
            factor, status = gpu_solver(w, "potrf", operands, [t], outs, {"lower": lower}, aliased=0)
        factor = nan_where_failed(w, factor, t, status, batch)
    else:
        factor = w.op("stablehlo.cholesky", operands, [t], [t], f"lower = {str(lower).lower()}")[0]
    return [keep_triangle(w, factor, t, lower)]    # the other triangle is left undefined


P.cholesky.register(emitter=_cholesky)


def _triangular_solve(w, node, operands):
    a, b = (v.type for v in node.operands)
    if _is_empty(a, b):
        return [operands[1]]
    at = node.attrs
    if library(w, a) == "lapack":      # elsewhere XLA's own (cuBLAS's trsm on GPUs)
        config = {"side": "L" if at.get("left_side") else "R", "uplo": "L" if at.get("lower") else "U",
                  "trans_x": {"NO_TRANSPOSE": "N", "TRANSPOSE": "T", "ADJOINT": "C"}[at.get("transpose_a",
                                                                                            "NO_TRANSPOSE")],
                  "diag": "U" if at.get("unit_diagonal") else "N"}
        return lapack(w, "trsm", operands, [a, b], [b], config, aliased=1)
    flag = lambda key: str(bool(at.get(key, False))).lower()
    attrs = (f"left_side = {flag('left_side')}, lower = {flag('lower')}, unit_diagonal = {flag('unit_diagonal')}, "
             f"transpose_a = #stablehlo<transpose {at.get('transpose_a', 'NO_TRANSPOSE')}>")
    return w.op("stablehlo.triangular_solve", operands, [a, b], [b], attrs)


P.triangular_solve.register(emitter=_triangular_solve)


# ---------------------------------------------------------------- lu


def _lu(w, node, operands):
    t = node.operands[0].type
    lu_type, pivots_type = (v.type for v in node.results)
    if _is_empty(t):
        return [operands[0], emit_zeros(w, pivots_type)]
    kernels = library(w, t)
    if not kernels:
        raise UnsupportedError("lu: this device has no LU kernel (xlac.numpy's solve, inv, det and slogdet "
                               "use QR there); xlac calls getrf of LAPACK on CPU and of cuSOLVER on GPU")
    call = lapack if kernels == "lapack" else gpu_solver
    factors, pivots, _ = call(w, "getrf", operands, [t], [lu_type, pivots_type, TensorType(t.shape[:-2], INT32)],
                              {}, aliased=0)
    one = w.op("stablehlo.broadcast_in_dim", [emit_full(w, TensorType((), INT32), 1)], [TensorType((), INT32)],
               [pivots_type], f"broadcast_dimensions = {dims(())}")[0]
    return [factors, w.op("stablehlo.subtract", [pivots, one], [pivots_type] * 2, [pivots_type])[0]]   # from 0


P.lu.register(emitter=_lu)


def _eig(w, node, operands):
    t = node.operands[0].type
    w_type, v_type = (v.type for v in node.results)
    if _is_empty(t):
        return [emit_zeros(w, w_type), emit_zeros(w, v_type)]
    kernels = library(w, t)
    if not kernels:
        raise UnsupportedError("eig: this device has no kernel for eigenvalues of general matrices; xlac "
                               "calls LAPACK's geev on CPU (and on the host for GPUs)")
    batch = t.shape[:-2]
    vectors_wanted = bool(node.attrs.get("vectors", True))
    is_complex = np.issubdtype(t.dtype, np.complexfloating)

    def geev(outs):      # the eigenvalues (real and imaginary parts for real input), left and right vectors, info
        if kernels == "lapack":
            config = {"compute_left": "N", "compute_right": "V" if vectors_wanted else "N"}
            return lapack(w, "geev", operands, [t], outs, config)
        config = {"left": False, "magma": "auto", "right": vectors_wanted}
        return gpu_hybrid(w, "eig_comp" if is_complex else "eig_real", operands, [t], outs, config)
    status_type = TensorType(batch, INT32)
    if is_complex:
        values, _, vectors, status = geev([w_type, v_type, v_type, status_type])
    else:
        part = w_type.with_dtype(t.dtype)
        real, imag, _, vectors, status = geev([part, part, v_type, v_type, status_type])
        values = w.op("stablehlo.complex", [real, imag], [part, part], [w_type])[0]
    return [nan_where_failed(w, values, w_type, status, batch), nan_where_failed(w, vectors, v_type, status, batch)]


P.eig.register(emitter=_eig)


def _svd(w, node, operands):
    t = node.operands[0].type
    result_types = [v.type for v in node.results]
    full_matrices = bool(node.attrs.get("full_matrices", False))
    compute_uv = bool(node.attrs.get("compute_uv", True))
    if _is_empty(t):
        return [emit_zeros(w, result_types[0])] + [_identity(w, vt) for vt in result_types[1:]]
    kernels = library(w, t)
    if not kernels:
        raise UnsupportedError("svd: this device has no SVD kernel (xlac.numpy's svd uses eigh there); xlac "
                               "calls LAPACK's gesdd on CPU and cuSOLVER's gesvdj or gesvd on GPU")
    batch = t.shape[:-2]
    if kernels == "lapack":
        s, u, vt, status = _lapack_svd(w, operands[0], t, full_matrices, compute_uv)
    else:
        s, u, vt, status = _gpu_svd(w, operands[0], t, full_matrices, compute_uv)
    results = [s, u, vt] if compute_uv else [s]
    return [nan_where_failed(w, x, xt, status, batch) for x, xt in zip(results, result_types)]


P.svd.register(emitter=_svd)


def _lapack_svd(w: FunctionWriter, x: str, t: TensorType, full_matrices: bool, compute_uv: bool):
    """(s, u, vt, info) by LAPACK's divide-and-conquer gesdd, as NumPy computes them."""
    *batch, m, n = t.shape
    batch, k = tuple(batch), min(m, n)
    s_type = TensorType(batch + (k,), real_dtype(t.dtype))
    u_columns, vt_rows = (m, n) if full_matrices and compute_uv else (k, k)    # not written with mode "N"
    u_type, vt_type = t.with_shape(batch + (m, u_columns)), t.with_shape(batch + (vt_rows, n))
    mode = ("A" if full_matrices else "S") if compute_uv else "N"
    _, s, u, vt, status = lapack(w, "gesdd", [x], [t], [t, s_type, u_type, vt_type, TensorType(batch, INT32)],
                                 {"mode": mode}, aliased=0)
    return s, u, vt, status


# cuSOLVER's Jacobi SVD (gesvdj) for matrices up to this size, its QR-based gesvd above it (JAX's choice,
# after NVIDIA's measurements); gesvdj's batched form, used up to 32 x 32, has no economy mode.
GPU_JACOBI_SVD_LIMIT = 1024
GPU_BATCHED_JACOBI_LIMIT = 32


def _gpu_svd(w: FunctionWriter, x: str, t: TensorType, full_matrices: bool, compute_uv: bool):
    """(s, u, vt, info) by the GPU solver's gesvdj or gesvd (u and vt None without ``compute_uv``)."""
    *batch, m, n = t.shape
    batch, k = tuple(batch), min(m, n)
    s_type = TensorType(batch + (k,), real_dtype(t.dtype))
    status_type = TensorType(batch, INT32)
    if max(m, n) <= GPU_JACOBI_SVD_LIMIT:
        economy = not full_matrices and min(m, n) > GPU_BATCHED_JACOBI_LIMIT
        u_type = t.with_shape(batch + (m, k if economy else m))
        v_type = t.with_shape(batch + (n, k if economy else n))
        _, s, u, v, status = gpu_solver(w, "gesvdj", [x], [t], [t, s_type, u_type, v_type, status_type],
                                        {"compute_uv": compute_uv, "full_matrices": not economy}, aliased=0)
        if not compute_uv:
            return s, None, None, status
        perm = list(range(len(batch))) + [len(batch) + 1, len(batch)]
        vt_type = v_type.with_shape(batch + v_type.shape[:-3:-1])
        vt = _conjugate(w, w.op("stablehlo.transpose", [v], [v_type], [vt_type], f"permutation = {dims(perm)}")[0],
                        vt_type)
        if not full_matrices and not economy:
            u, _ = _slice(w, u, u_type, batch + (m, k))
            vt, _ = _slice(w, vt, vt_type, batch + (k, n))
        return s, u, vt, status
    transposed = m < n           # gesvd wants m >= n: it factors the transpose, read row-major
    if compute_uv:
        u_type = t.with_shape(batch + (m, m if full_matrices else k))
        vt_type = t.with_shape(batch + (n if full_matrices else k, n))
    else:
        u_type = vt_type = TensorType((), t.dtype)
    outs = [t, s_type] + ([vt_type, u_type] if transposed else [u_type, vt_type]) + [status_type]
    options = {"compute_uv": compute_uv, "full_matrices": full_matrices, "transposed": transposed}
    _, s, first, second, status = gpu_solver(w, "gesvd", [x], [t], outs, options, aliased=0,
                                             column_major=not transposed)
    u, vt = (second, first) if transposed else (first, second)
    return s, (u if compute_uv else None), (vt if compute_uv else None), status


# ---------------------------------------------------------------- qr


def _custom_call(w: FunctionWriter, target: str, operands, ins, outs, config: str = "") -> list[str]:
    attrs = f'call_target_name = "{target}"'
    if config:
        attrs += f', backend_config = "{config}"'
    return w.op("stablehlo.custom_call", operands, ins, outs, attrs)


def _householder_determinants(w: FunctionWriter, packed: str, taus: str, t: TensorType, tt: TensorType) -> str:
    """det(I - tau v v^H) of each reflector of a geqrf pair, shape (..., k): -1 for a real reflection,
    1 where tau = 0 (no reflection); 1 - tau |v|^2 scaled to modulus 1 for complex matrices."""
    if np.issubdtype(t.dtype, np.floating):
        zero = emit_zeros(w, tt)
        is_identity = emit_compare(w, taus, zero, tt, "EQ")
        return w.op("stablehlo.select", [is_identity, emit_full(w, tt, 1), emit_full(w, tt, -1)],
                    [tt.with_dtype(BOOL), tt, tt], [tt])[0]
    k = tt.shape[-1]
    vectors, vt = _slice(w, packed, t, t.shape[:-1] + (k,))
    vectors = keep_triangle(w, vectors, vt, lower=True, strict=True)
    rt = vt.with_dtype(real_dtype(t.dtype))
    magnitude = w.op("stablehlo.abs", [vectors], [vt], [rt])[0]
    squares = w.op("stablehlo.multiply", [magnitude, magnitude], [rt, rt], [rt])[0]
    s = scalar_type(rt.dtype)
    body = lambda rw, args: (rw.op("stablehlo.add", args, [s, s], [s]), [s])
    region = w.region([s, s], body)
    rtt = tt.with_dtype(rt.dtype)
    norms = w.op("stablehlo.reduce", [squares, emit_constant(w, np.zeros((), rt.dtype))], [rt, s], [rtt],
                 f"dimensions = {dims([t.ndim - 2])}", [region])[0]
    norms = w.op("stablehlo.add", [norms, emit_full(w, rtt, 1)], [rtt, rtt], [rtt])[0]
    norms = w.op("stablehlo.complex", [norms, emit_zeros(w, rtt)], [rtt, rtt], [tt])[0]
    scaled = w.op("stablehlo.multiply", [taus, norms], [tt, tt], [tt])[0]
    det = w.op("stablehlo.subtract", [emit_full(w, tt, 1), scaled], [tt, tt], [tt])[0]
    modulus = w.op("stablehlo.abs", [det], [tt], [rtt])[0]
    modulus = w.op("stablehlo.complex", [modulus, emit_zeros(w, rtt)], [rtt, rtt], [tt])[0]
    return w.op("stablehlo.divide", [det, modulus], [tt, tt], [tt])[0]


def _product_over_last_axis(w: FunctionWriter, x: str, t: TensorType) -> tuple[str, TensorType]:
    s = scalar_type(t.dtype)
    body = lambda rw, args: (rw.op("stablehlo.multiply", args, [s, s], [s]), [s])
    region = w.region([s, s], body)
    out = t.with_shape(t.shape[:-1])
    return w.op("stablehlo.reduce", [x, emit_constant(w, np.ones((), t.dtype))], [t, s], [out],
                f"dimensions = {dims([t.ndim - 1])}", [region])[0], out


def _scale_last(w: FunctionWriter, x: str, t: TensorType, factor: str, ft: TensorType, axis: int) -> str:
    """``x`` with its last row (axis -2) or last column (axis -1) multiplied by ``factor`` (batch-shaped)."""
    factor = w.op("stablehlo.broadcast_in_dim", [factor], [ft], [t],
                  f"broadcast_dimensions = {dims(range(t.ndim - 2))}")[0]
    it = t.with_dtype(np.dtype("int32"))
    index = w.op("stablehlo.iota", [], [], [it], f"iota_dimension = {t.ndim + axis} : i64")[0]
    last = emit_compare(w, index, emit_full(w, it, t.shape[axis] - 1), it, "EQ")
    scaled = w.op("stablehlo.multiply", [x, factor], [t, t], [t])[0]
    return w.op("stablehlo.select", [last, scaled, x], [t.with_dtype(BOOL), t, t], [t])[0]


def _conjugate(w: FunctionWriter, x: str, t: TensorType) -> str:
    if not np.issubdtype(t.dtype, np.complexfloating):
        return x
    rt = t.with_dtype(real_dtype(t.dtype))
    re = w.op("stablehlo.real", [x], [t], [rt])[0]
    im = w.op("stablehlo.imag", [x], [t], [rt])[0]
    im = w.op("stablehlo.negate", [im], [rt], [rt])[0]
    return w.op("stablehlo.complex", [re, im], [rt, rt], [t])[0]


def _qr(w, node, operands):
    t = node.operands[0].type
    mode = node.attrs.get("mode", "reduced")
    q_type, r_type = (v.type for v in node.results)
    *batch, m, n = t.shape
    k = min(m, n)
    if _is_empty(t):
        if mode == "raw":
            return [operands[0], emit_zeros(w, r_type)]
        return [_identity(w, q_type), emit_zeros(w, r_type)]
    tt = TensorType(tuple(batch) + (k,), t.dtype)
    kernels = library(w, t)
    call = lapack if kernels == "lapack" else gpu_solver
    if kernels:
        packed, taus = call(w, "geqrf", operands, [t], [t, tt], {}, aliased=0)
    else:
        packed, taus = _custom_call(w, "Qr", operands, [t], [t, tt])
    if mode == "raw":
        return [packed, taus]
    columns = q_type.shape[-1]               # k (reduced) or m (complete)
    reflectors, ref_t = _slice(w, packed, t, t.shape[:-1] + (min(n, columns),))
    reflectors, ref_t = _pad_columns(w, reflectors, ref_t, columns)
    if kernels:
        routine = "ungqr" if kernels == "lapack" and np.issubdtype(t.dtype, np.complexfloating) else "orgqr"
        q = call(w, routine, [reflectors, taus], [ref_t, tt], [q_type], {}, aliased=0)[0]
    else:
        q = _custom_call(w, "ProductOfElementaryHouseholderReflectors", [reflectors, taus], [ref_t, tt], [q_type])[0]
    r, rt = _slice(w, packed, t, t.shape[:-2] + (r_type.shape[-2], n))
    r = keep_triangle(w, r, rt, lower=False)
    if columns == m:                         # q is square: make det(q) = 1, the sign (phase) moving into r
        dets = _householder_determinants(w, packed, taus, t, tt)
        det_q, bt = _product_over_last_axis(w, dets, tt)
        q = _scale_last(w, q, q_type, _conjugate(w, det_q, bt), bt, axis=-1)
        r = _scale_last(w, r, r_type, det_q, bt, axis=-2)
    return [q, r]


P.qr.register(emitter=_qr)


# ---------------------------------------------------------------- eigh


def _matmul(w: FunctionWriter, x: str, xt: TensorType, y: str, yt: TensorType, adjoint_x: bool = False) -> str:
    """x @ y (x^H @ y with ``adjoint_x``) over the last two axes, leading axes a batch."""
    if adjoint_x:
        x = _conjugate(w, x, xt)
    nd = xt.ndim
    batch = list(range(nd - 2))
    out = xt.with_shape(xt.shape[:-2] + (xt.shape[-1 if adjoint_x else -2], yt.shape[-1]))
    attrs = (f"dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = {batch}, "
             f"rhs_batching_dimensions = {batch}, lhs_contracting_dimensions = [{nd - 2 if adjoint_x else nd - 1}], "
             f"rhs_contracting_dimensions = [{nd - 2}]>, "
             "precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]")
    return w.op("stablehlo.dot_general", [x, y], [xt, yt], [out], attrs)[0]


def _hermitian_from_triangle(w: FunctionWriter, a: str, t: TensorType, lower: bool) -> str:
    """The Hermitian matrix that the lower (or upper) triangle of ``a`` describes."""
    triangle = keep_triangle(w, a, t, lower)
    strict = keep_triangle(w, a, t, lower, strict=True)
    perm = list(range(t.ndim - 2)) + [t.ndim - 1, t.ndim - 2]
    mirrored = w.op("stablehlo.transpose", [_conjugate(w, strict, t)], [t], [t], f"permutation = {dims(perm)}")[0]
    return w.op("stablehlo.add", [triangle, mirrored], [t, t], [t])[0]


def _refine_eigenpairs(w: FunctionWriter, h: str, t: TensorType, vectors: str) -> tuple[str, str]:
    """Float64 eigenpairs brought to float64 accuracy.

    XLA's Jacobi sweeps stop at about 0.1 float32-epsilon, which leaves float64 eigenvectors and
    eigenvalues accurate to only about 1e-8. Two steps of Ogita and Aishima's refinement ("Iterative
    refinement for symmetric eigenvalue decomposition", 2018) converge quadratically to working accuracy for
    eigenvalues apart by more than the current error; within a closer cluster they only re-orthonormalize,
    which is exact for repeated eigenvalues. Two Newton-Schulz steps then remove the orthonormality error
    that the steps' rounding leaves, and the pairs are sorted by their refined eigenvalues."""
    for _ in range(2):
        values, vectors = _refinement_step(w, h, t, vectors)
    eye = _identity(w, t)
    for _ in range(2):
        gram = _matmul(w, vectors, t, vectors, t, adjoint_x=True)
        three = w.op("stablehlo.multiply", [eye, emit_full(w, t, 3)], [t, t], [t])[0]
        step = w.op("stablehlo.subtract", [three, gram], [t, t], [t])[0]
        step = w.op("stablehlo.multiply", [step, emit_full(w, t, 0.5)], [t, t], [t])[0]
        vectors = _matmul(w, vectors, t, step, t)
    return _sort_eigenpairs(w, t, values, vectors)


def _refinement_step(w: FunctionWriter, a: str, t: TensorType, x: str) -> tuple[str, str]:
    """One step of Ogita and Aishima's refinement of approximate eigenvectors x of the Hermitian a:
    R = I - x^H x, S = x^H a x, lambda_i = S_ii / (1 - R_ii), and x (I + R/2 + K) with
    K_ij = (S_ij + (lambda_i + lambda_j) R_ij / 2) / (lambda_j - lambda_i) for pairs apart by more than
    delta = 2 (|S - diag(lambda)| + |a| |R|), 0 for the others. K is made exactly anti-Hermitian (R and S
    Hermitian), so the step's rounding does not cost orthonormality. Returns (lambda, the new x)."""
    nd = t.ndim
    rt, bt = t.with_dtype(real_dtype(t.dtype)), t.with_dtype(BOOL)
    wt = rt.with_shape(t.shape[:-1])
    eye = _identity(w, t)
    binary = lambda name, x, y, tt=t: w.op(f"stablehlo.{name}", [x, y], [tt, tt], [tt])[0]
    r = _hermitian_part(w, binary("subtract", eye, _matmul(w, x, t, x, t, adjoint_x=True)), t)
    s = _hermitian_part(w, _matmul(w, x, t, _matmul(w, a, t, x, t), t, adjoint_x=True), t)
    one = emit_full(w, wt, 1.0)
    values = binary("divide", _real_diagonal(w, s, t), binary("subtract", one, _real_diagonal(w, r, t), wt), wt)
    spread = lambda axis: w.op("stablehlo.broadcast_in_dim", [values], [wt], [rt],
                               f"broadcast_dimensions = {dims(list(range(nd - 2)) + [axis])}")[0]
    value_j, value_i = spread(nd - 1), spread(nd - 2)
    gaps = binary("subtract", value_j, value_i, rt)
    mean = binary("multiply", binary("add", value_j, value_i, rt), emit_full(w, rt, 0.5), rt)
    numerator = binary("add", s, binary("multiply", _as_type(w, mean, rt, t), r))
    deviation = binary("subtract", s, binary("multiply", eye, _as_type(w, value_j, rt, t)))
    delta = binary("add", _frobenius(w, deviation, t), binary("multiply", _frobenius(w, a, t), _frobenius(w, r, t), rt), rt)
    delta = binary("multiply", delta, emit_full(w, rt, 2.0), rt)
    gap_size = w.op("stablehlo.abs", [gaps], [rt], [rt])[0]
    apart = emit_compare(w, gap_size, delta, rt, "GT")
    k = w.op("stablehlo.select", [apart, binary("divide", numerator, _as_type(w, gaps, rt, t)), emit_zeros(w, t)],
             [bt, t, t], [t])[0]
    correction = binary("add", binary("multiply", r, emit_full(w, t, 0.5)), k)
    return values, binary("add", x, _matmul(w, x, t, correction, t))


def _hermitian_part(w: FunctionWriter, x: str, t: TensorType) -> str:
    """(x + x^H) / 2."""
    perm = list(range(t.ndim - 2)) + [t.ndim - 1, t.ndim - 2]
    adjoint = w.op("stablehlo.transpose", [_conjugate(w, x, t)], [t], [t], f"permutation = {dims(perm)}")[0]
    total = w.op("stablehlo.add", [x, adjoint], [t, t], [t])[0]
    return w.op("stablehlo.multiply", [total, emit_full(w, t, 0.5)], [t, t], [t])[0]


def _as_type(w: FunctionWriter, x: str, rt: TensorType, t: TensorType) -> str:
    """A real tensor as the (possibly complex) matrix type t."""
    if t.dtype == rt.dtype:
        return x
    return w.op("stablehlo.complex", [x, emit_zeros(w, rt)], [rt, rt], [t])[0]


def _sum(w: FunctionWriter, x: str, t: TensorType, axes: list[int]) -> tuple[str, TensorType]:
    out = t.with_shape(tuple(d for i, d in enumerate(t.shape) if i not in axes))
    s = scalar_type(t.dtype)
    body = lambda rw, args: (rw.op("stablehlo.add", args, [s, s], [s]), [s])
    total = w.op("stablehlo.reduce", [x, emit_constant(w, np.zeros((), t.dtype))], [t, s], [out],
                 f"dimensions = {dims(axes)}", [w.region([s, s], body)])[0]
    return total, out


def _real_diagonal(w: FunctionWriter, x: str, t: TensorType) -> str:
    """The real part of the diagonal of a stack of matrices."""
    rt = t.with_dtype(real_dtype(t.dtype))
    on_diagonal = w.op("stablehlo.multiply", [x, _identity(w, t)], [t, t], [t])[0]
    if rt.dtype != t.dtype:
        on_diagonal = w.op("stablehlo.real", [on_diagonal], [t], [rt])[0]
    return _sum(w, on_diagonal, rt, [t.ndim - 1])[0]


def _frobenius(w: FunctionWriter, x: str, t: TensorType) -> str:
    """The Frobenius norm of each matrix of a stack, spread over the matrix's (real) shape."""
    rt = t.with_dtype(real_dtype(t.dtype))
    size = w.op("stablehlo.abs", [x], [t], [rt])[0]
    squares = w.op("stablehlo.multiply", [size, size], [rt, rt], [rt])[0]
    total, bt = _sum(w, squares, rt, [t.ndim - 2, t.ndim - 1])
    norm = w.op("stablehlo.sqrt", [total], [bt], [bt])[0]
    return w.op("stablehlo.broadcast_in_dim", [norm], [bt], [rt], f"broadcast_dimensions = {dims(range(t.ndim - 2))}")[0]


def _sort_eigenpairs(w: FunctionWriter, t: TensorType, values: str, vectors: str) -> tuple[str, str]:
    """Eigenvalues ascending, each eigenvector column moved with its eigenvalue."""
    nd = t.ndim
    rt = t.with_dtype(real_dtype(t.dtype))
    wt = rt.with_shape(t.shape[:-1])
    keys = w.op("stablehlo.broadcast_in_dim", [values], [wt], [rt],
                f"broadcast_dimensions = {dims(list(range(nd - 2)) + [nd - 1])}")[0]

    def ascending(types):
        def body(rw, args):
            return [emit_compare(rw, args[0], args[1], scalar_type(rt.dtype), "LT")], [scalar_type(BOOL)]
        return w.region([scalar_type(tt.dtype) for tt in types for _ in (0, 1)], body)
    by_column = f"dimension = {nd - 1} : i64, is_stable = true"
    vectors = w.op("stablehlo.sort", [keys, vectors], [rt, t], [rt, t], by_column, [ascending([rt, t])])[1]
    values = w.op("stablehlo.sort", [values], [wt], [wt], f"dimension = {nd - 2} : i64, is_stable = true",
                  [ascending([wt])])[0]
    return values, vectors


def _eigh(w, node, operands):
    t = node.operands[0].type
    w_type, v_type = (v.type for v in node.results)
    if _is_empty(t):
        return [emit_zeros(w, w_type), operands[0]]
    lower = bool(node.attrs.get("lower", True))
    kernels = library(w, t)
    if kernels:       # syevd / heevd read the one triangle
        batch = t.shape[:-2]
        outs = [v_type, w_type, TensorType(batch, INT32)]
        if kernels == "lapack":
            routine = "heevd" if np.issubdtype(t.dtype, np.complexfloating) else "syevd"
            options = {"mode": "V", "uplo": "L" if lower else "U"}
            vectors, values, status = lapack(w, routine, operands, [t], outs, options, aliased=0)
        else:         # algorithm 0: the solver's default (its QR-based syevd; Jacobi syevj is 2)
            options = {"algorithm": np.uint8(0), "lower": lower}
            vectors, values, status = gpu_solver(w, "syevd", operands, [t], outs, options, aliased=0)
        return [nan_where_failed(w, values, w_type, status, batch),
                nan_where_failed(w, vectors, v_type, status, batch)]
    h = _hermitian_from_triangle(w, operands[0], t, lower)     # XLA's expander reads the whole matrix
    config = f"1,1,{EIGH_MAX_SWEEPS},{EIGH_TOLERANCE[t.dtype.name]:g}"
    vectors, values = _custom_call(w, "Eigh", [h], [t], [v_type, w_type], config)
    if w_type.dtype == np.float64 and t.shape[-1] > 1:
        values, vectors = _refine_eigenpairs(w, h, t, vectors)
    return [values, vectors]


P.eigh.register(emitter=_eigh)
