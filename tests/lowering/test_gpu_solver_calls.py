"""xlac's GPU linear algebra calls the same cuSOLVER (hipSOLVER) kernels as JAX, with the same operands.

No GPU is needed: each function is lowered for an NVIDIA (AMD) GPU with xlac and exported for it with
``jax.export``, both are converted to XLA's HLO, and the solver custom calls XLA would run (target, operand
and result shapes and layouts, aliasing, options) must be the same. That fixes the kernels' calling
conventions, which JAX runs on GPUs; the values around them are the CPU path's, tested against NumPy.
"""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

import xlac
import xlac.numpy as xnp
import xlac.runtime
from xlac.runtime.mlir import stablehlo_to_hlo
from tests.linalg_inputs import rand

HOST_EIG = ("cuhybrid_eig_real", "cuhybrid_eig_comp", "hiphybrid_eig_real", "hiphybrid_eig_comp")


def solver_calls(stablehlo: str) -> list[str]:
    """The vendor solvers' custom calls of a module as XLA's HLO prints them, without names and metadata."""
    calls = []
    for line in stablehlo_to_hlo(stablehlo).splitlines():
        if "custom-call(" in line and re.search(r'custom_call_target="(cu|hip)(solver_|hybrid_)', line):
            line = re.sub(r"custom-call\([^)]*\)", "custom-call()", line.split(" = ", 1)[1])
            line = re.sub(r", frontend_attributes=\{.*?\"\}", "", line)     # JAX's partitioning hints
            calls.append(re.sub(r", metadata=\{[^}]*\}", "", line).strip())
    return sorted(calls)


def jax_calls(fn, x: np.ndarray, platform: str) -> list[str]:
    checks = [export.DisabledSafetyCheck.custom_call(target) for target in HOST_EIG]
    exported = export.export(jax.jit(fn), platforms=[platform], disabled_checks=checks)
    return solver_calls(exported(jax.ShapeDtypeStruct(x.shape, x.dtype)).mlir_module())


def xlac_calls(fn, x: np.ndarray, kernels: str, monkeypatch) -> list[str]:
    monkeypatch.setattr(xlac.runtime, "linalg_kernels", lambda device: kernels)
    return solver_calls(xlac.compile(fn).lower(x).as_text())


def _svd(full_matrices=True, compute_uv=True):
    return (lambda a: xnp.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv),
            lambda a: jnp.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv))


CASES = {
    "cholesky": (xnp.linalg.cholesky, jnp.linalg.cholesky, [((4, 4), "float32"), ((2, 3, 3), "float64"),
                                                           ((4, 4), "complex64"), ((3, 3), "complex128")]),
    "qr reduced": (xnp.linalg.qr, jnp.linalg.qr, [((5, 3), "float64"), ((3, 5), "float32"), ((2, 4, 3), "complex64")]),
    "qr complete": (lambda a: xnp.linalg.qr(a, mode="complete"), lambda a: jnp.linalg.qr(a, mode="complete"),
                    [((5, 3), "float32"), ((3, 5), "complex128")]),
    "qr r": (lambda a: xnp.linalg.qr(a, mode="r"), lambda a: jnp.linalg.qr(a, mode="r"), [((5, 3), "float64")]),
    "eigh": (xnp.linalg.eigh, jnp.linalg.eigh, [((4, 4), "float64"), ((2, 3, 3), "complex64")]),
    "eigh upper": (lambda a: xnp.linalg.eigh(a, UPLO="U"), lambda a: jnp.linalg.eigh(a, UPLO="U"),
                   [((4, 4), "float32")]),
    "eigvalsh": (xnp.linalg.eigvalsh, jnp.linalg.eigvalsh, [((4, 4), "float64")]),
    "svd": (*_svd(), [((4, 4), "float64"), ((2, 3, 5), "complex64"), ((3, 1100), "float32"), ((1100, 3), "float32")]),
    "svd reduced": (*_svd(full_matrices=False), [((2, 3, 40), "float32"), ((40, 50), "float64"),
                                                 ((50, 40), "complex128"), ((3, 1100), "float32"),
                                                 ((1100, 3), "float64")]),
    "svd values": (*_svd(compute_uv=False), [((4, 4), "float64"), ((40, 50), "float32"), ((3, 1100), "float32")]),
    "solve": (lambda a: xnp.linalg.solve(a, a), lambda a: jnp.linalg.solve(a, a), [((4, 4), "float64"),
                                                                                  ((2, 3, 3), "complex64")]),
    "inv": (xnp.linalg.inv, jnp.linalg.inv, [((4, 4), "float32")]),
    "det": (xnp.linalg.det, jnp.linalg.det, [((4, 4), "float64")]),
    "slogdet": (xnp.linalg.slogdet, jnp.linalg.slogdet, [((4, 4), "complex128")]),
    "eig": (xnp.linalg.eig, jnp.linalg.eig, [((4, 4), "float64"), ((3, 3), "float32"), ((4, 4), "complex64"),
                                             ((2, 3, 3), "complex128")]),
    "eigvals": (xnp.linalg.eigvals, jnp.linalg.eigvals, [((4, 4), "float64"), ((4, 4), "complex64")]),
}


@pytest.mark.parametrize("platform, kernels", [("cuda", "cusolver"), ("rocm", "hipsolver")])
@pytest.mark.parametrize("name, shape, dtype", [(name, shape, dtype) for name, (_, _, cases) in CASES.items()
                                                for shape, dtype in cases])
def test_gpu_solver_calls_are_jaxs(name, shape, dtype, platform, kernels, monkeypatch, x64):
    xlac_fn, jax_fn, _ = CASES[name]
    x = rand(np.random.default_rng(0), shape, np.dtype(dtype))
    expected = jax_calls(jax_fn, x, platform)
    assert expected, "jax calls no solver"
    assert xlac_calls(xlac_fn, x, kernels, monkeypatch) == expected


def test_gpu_triangular_solve_is_xlas_own(monkeypatch):
    """On GPUs a triangular solve stays a StableHLO op: XLA runs it as cuBLAS's trsm."""
    monkeypatch.setattr(xlac.runtime, "linalg_kernels", lambda device: "cusolver")
    a = np.tril(rand(np.random.default_rng(0), (4, 4), np.float32)) + 4 * np.eye(4, dtype=np.float32)
    text = xlac.compile(lambda a, b: xnp.linalg.solve(a, b)).lower(a, a).as_text()
    assert "stablehlo.triangular_solve" in text and "lapack_" not in text


def test_linalg_kernels_of_a_gpu_without_its_solvers_is_none():
    """A GPU whose jaxlib plugin has no solver kernels (as here: no CUDA plugin) gets XLA's expanders."""
    from xlac.runtime.kernels import linalg_kernels

    class Client:
        platform_version = "cuda 12080"

    class Device:
        platform, client = "gpu", Client()
    from jaxlib import gpu_solver
    expected = "cusolver" if gpu_solver._cusolver and gpu_solver._cuhybrid else ""
    assert linalg_kernels(Device()) == expected
