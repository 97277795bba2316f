"""Rolled loop bodies compile to no more kernels than the same loop written with ``jax.lax`` (issue 33,
item 3): counted in XLA's optimized HLO of both programs, compiled in this process; values are NumPy's."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlac
from xlac.inspection.hlo_copies import loop_body_count
from benchmarks import as_written_kernels
from tests.numpy_kernels import crc16_arc

pytestmark = pytest.mark.usefixtures("xla_defaults")   # tests of XLA's optimized program


def crc16_arc_lax(data, poly=0xA001):
    def byte(crc, b):
        def bit(_, state):
            crc, cur = state
            crc = jnp.where(((crc & 1) ^ (cur & 1)) != 0, (crc >> 1) ^ poly, crc >> 1)
            return crc, cur >> 1
        return jax.lax.fori_loop(0, 8, bit, (crc, b.astype(crc.dtype) & 0xFF))[0], None
    return jax.lax.scan(byte, jnp.asarray(0, data.dtype).astype(jnp.int32), data)[0]


def test_crc_body_has_no_more_fusions_than_lax():
    data = np.random.default_rng(0).integers(0, 256, 2000, dtype=np.uint8)
    compiled = xlac.compile(crc16_arc)
    assert int(compiled(data)) == crc16_arc(data)
    assert int(jax.jit(crc16_arc_lax)(data)) == crc16_arc(data)
    ours = compiled.lower(data).compile().as_text()
    theirs = jax.jit(crc16_arc_lax).lower(data).compile().as_text()
    assert loop_body_count(ours, "conditional") == 0          # the `if` is a select, not a conditional
    assert loop_body_count(ours, "fusion") <= loop_body_count(theirs, "fusion")


def scalar_shift(x):
    n = 0
    if x.sum() > 0:
        n = 6
    n >>= 1                        # a Python number: rebinds, never a write into memory
    return n


@pytest.mark.parametrize("values", [[1.0, 2.0], [-1.0]])
def test_augmented_assignment_on_traced_python_number_rebinds(values):
    x = np.array(values)
    assert int(xlac.compile(scalar_shift)(x)) == scalar_shift(x)


def row_stencil(a):
    for i in range(1, a.shape[0] - 1):
        a[i, 1:-1] = (a[i - 1, :-2] + a[i - 1, 2:] + a[i + 1, 1:-1]) / 3.0
    return a


def test_traced_row_read_slices_no_whole_array_in_the_loop():
    a = np.random.default_rng(1).random((64, 64))
    compiled = xlac.compile(row_stencil)
    np.testing.assert_allclose(np.asarray(compiled(a.copy())), row_stencil(a.copy()))
    hlo = compiled.lower(a.copy()).compile().as_text()
    assert not re.search(r"f64\[64,62\]\S* fusion\(", hlo)    # no (64, 62) slice copied per iteration


def test_a_stencil_reading_back_what_it_wrote_runs_as_lean_as_lax():
    """``A[1:-1] = g(B[1:-1])`` right after ``B[1:-1] = f(A)``: B's interior is read back, not replaced by
    ``f(A)`` (XLA would fuse ``f(A)`` into A's in-place update and first copy the parts of A it reads)."""
    A, B = np.random.default_rng(2).random(64), np.random.default_rng(3).random(64)
    jacobi_1d, jacobi_1d_lax = as_written_kernels.jacobi_1d, as_written_kernels.jacobi_1d_jax
    compiled = xlac.compile(jacobi_1d, static_argnums=(2,))
    for got, want in zip(compiled(A.copy(), B.copy(), 20), jacobi_1d(A.copy(), B.copy(), 20)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
    ours = compiled.lower(A, B, 20).compile().as_text()
    with jax.enable_x64(True):
        theirs = jax.jit(jacobi_1d_lax, static_argnums=(2,)).lower(A, B, 20).compile().as_text()
    assert loop_body_count(ours, "fusion") <= loop_body_count(theirs, "fusion")
