"""Which vendor kernels a compiled program may call as custom calls on a device.

jaxlib registers LAPACK's factorizations with its CPU client as FFI custom-call targets
(``lapack_dpotrf_ffi``, ...); they read their LAPACK routines from SciPy's, which jaxlib binds the first
time a program needs them. The lowering asks :func:`linalg_kernels` once per compile and emits those calls
where the answer is ``"lapack"``; elsewhere it keeps XLA's own expanders.

>>> from xlac.runtime.client import get_device
>>> linalg_kernels(get_device("cpu"))
'lapack'
"""
from __future__ import annotations

import functools


def linalg_kernels(device) -> str:
    """``"lapack"`` where ``device`` runs jaxlib's LAPACK custom calls (CPU), else ``""``."""
    return "lapack" if device.platform == "cpu" and _lapack_ready() else ""


@functools.cache
def _lapack_ready() -> bool:
    try:
        from jaxlib.cpu import _lapack       # the registered targets call through it
        _lapack.initialize()
    except (ImportError, AttributeError, RuntimeError):
        return False
    return True
