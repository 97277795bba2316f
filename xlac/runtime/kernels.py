"""Which vendor kernels a compiled program may call as custom calls on a device.

jaxlib registers the vendors' matrix factorizations with its PJRT clients as FFI custom-call targets:
LAPACK's with the CPU client (``lapack_dpotrf_ffi``, ...; they read their routines from SciPy's, which
jaxlib binds the first time a program needs them), cuSOLVER's with the CUDA plugin (``cusolver_potrf_ffi``,
...), hipSOLVER's with the ROCm plugin, and a "hybrid" ``geev`` for GPUs that runs LAPACK (or MAGMA) on the
host. The lowering asks :func:`linalg_kernels` once per compile and emits those calls; where the answer is
``""`` (TPU, or a GPU plugin without its solvers) it keeps XLA's own ops and expanders.

>>> from xlac.runtime.client import get_device
>>> linalg_kernels(get_device("cpu"))
'lapack'
"""
from __future__ import annotations

import functools

GPU_SOLVERS = {"cuda": "cusolver", "rocm": "hipsolver"}


def linalg_kernels(device) -> str:
    """The library of matrix kernels ``device`` runs: ``"lapack"`` (CPU), ``"cusolver"`` (NVIDIA GPUs),
    ``"hipsolver"`` (AMD GPUs), or ``""`` (none: XLA's own expanders)."""
    if device.platform == "cpu":
        return "lapack" if _lapack_ready() else ""
    if device.platform in ("gpu", "cuda", "rocm"):
        vendor = "rocm" if "rocm" in (device.platform + device.client.platform_version).lower() else "cuda"
        return GPU_SOLVERS[vendor] if _gpu_solvers_ready(vendor) else ""
    return ""


@functools.cache
def _lapack_ready() -> bool:
    try:
        from jaxlib.cpu import _lapack       # the registered targets call through it
        _lapack.initialize()
    except (ImportError, AttributeError, RuntimeError):
        return False
    return True


@functools.cache
def _gpu_solvers_ready(vendor: str) -> bool:
    """Whether the GPU plugin of ``vendor`` ships its solver and hybrid (host geev) kernels; registers them
    with the GPU client (as importing jax's linalg does) and loads the hybrid kernels' LAPACK."""
    try:
        from jaxlib import gpu_solver
        import jax._src.lax.linalg  # noqa: F401  (registers gpu_solver's targets with the GPU clients)
    except ImportError:
        return False
    prefix = {"cuda": "cu", "rocm": "hip"}[vendor]
    if not (getattr(gpu_solver, f"_{prefix}solver", None) and getattr(gpu_solver, f"_{prefix}hybrid", None)):
        return False
    gpu_solver.initialize_hybrid_kernels()
    return True
