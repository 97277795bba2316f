"""Rolled loops with a true recurrence (issue 33): per iteration, XLA's optimized body of the compiled NumPy
kernel holds no more kernels and copies no more buffers than the same algorithm written with ``jax.lax``;
a transposed operand of a contraction is read in place instead of copied transposed. Values are NumPy's."""
import re

import hypothesis.strategies as st
import jax
import numpy as np
import pytest
from hypothesis import given, settings

import xlac
from xlac.inspection.hlo_copies import loop_body_copies, loop_body_count
from xlac.ir import Graph, Node, TensorType, Value
from xlac.ir import primitives as P
from xlac.lowering import lower_module
from tests.numpy_kernels import forward_substitution, gram_schmidt

_x64 = jax.config.read("jax_enable_x64")
from benchmarks.numpy_extents import forward_substitution_jax, gram_schmidt_jax  # noqa: E402  (the lax ports)
jax.config.update("jax_enable_x64", _x64)         # that module turns x64 on for good when imported


def _hlo_pair(kernel, kernel_lax, args):
    ours = xlac.compile(kernel).lower(*args).compile().as_text()
    theirs = jax.jit(kernel_lax).lower(*args).compile().as_text()
    return ours, theirs


@pytest.mark.usefixtures("xla_defaults")
def test_forward_substitution_body_is_no_larger_than_lax(x64):
    rng = np.random.default_rng(0)       # rows long enough that xlac runs one iteration per step of the loop
    L = np.tril(rng.normal(size=(300, 300))) + 300 * np.eye(300)
    b = rng.normal(size=300)
    np.testing.assert_allclose(np.asarray(xlac.compile(forward_substitution)(L, b)), forward_substitution(L, b),
                               rtol=1e-12)
    ours, theirs = _hlo_pair(forward_substitution, forward_substitution_jax, (L, b))
    assert loop_body_count(ours, "fusion") <= loop_body_count(theirs, "fusion")
    assert loop_body_copies(ours) <= loop_body_copies(theirs)
    assert "f64[300]" not in loop_body_copies(ours)              # the carried x is updated in place


@pytest.mark.usefixtures("xla_defaults")
def test_gram_schmidt_body_copies_no_transposed_matrix(x64):
    A = np.random.default_rng(1).normal(size=(40, 20))
    Q, R = xlac.compile(gram_schmidt)(A)
    Q_np, R_np = gram_schmidt(A)
    np.testing.assert_allclose(np.asarray(Q), Q_np, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(R), R_np, rtol=1e-10, atol=1e-12)
    ours, theirs = _hlo_pair(gram_schmidt, gram_schmidt_jax, (A,))
    assert "f64[20,40]" in loop_body_copies(theirs)             # the lax port copies Q[:, :j].T every step
    assert loop_body_copies(ours) == {"s64[]"}                  # only the loop index
    assert loop_body_count(ours, "fusion") <= loop_body_count(theirs, "fusion")


# ---------------------------------------------------------------- transposed operands of a contraction


def _dots_of_transposes(fn, *args) -> int:
    """How many dot_generals of the final graph read a transpose's result."""
    graph = xlac.compile(fn).lower(*args).ir("final")
    transposed = {r.id for node in graph.nodes if node.primitive is P.transpose for r in node.results}
    return sum(any(v.id in transposed for v in node.operands) for node in graph.nodes
               if node.primitive is P.dot_general)


CONTRACTIONS = {
    "a.T @ b": (lambda a, b: a.T @ b, [(5, 3), (5, 4)], 0),
    "a @ b.T": (lambda a, b: a @ b.T, [(3, 5), (4, 5)], 0),
    "a.T @ b.T": (lambda a, b: a.T @ b.T, [(5, 3), (4, 5)], 0),
    "a.T @ v": (lambda a, v: a.T @ v, [(5, 3), (5,)], 0),
    "batched swap": (lambda a, b: np.matmul(a.transpose(0, 2, 1), b), [(2, 5, 3), (2, 5, 4)], 0),
    "batch axis moved": (lambda a, b: np.einsum("bij,bjk->bik", a.transpose(1, 0, 2), b), [(3, 2, 5), (2, 5, 4)], 0),
    # The free axes of the transposed operand come out swapped: the transpose must stay.
    "free axes reordered": (lambda a, v: a.transpose(1, 0, 2) @ v, [(3, 2, 5), (5,)], 1),
}


@pytest.mark.parametrize("name", CONTRACTIONS)
def test_transposed_operands_are_contracted_in_place(name):
    fn, shapes, transposes_left = CONTRACTIONS[name]
    rng = np.random.default_rng(2)
    args = [rng.normal(size=shape) for shape in shapes]
    np.testing.assert_allclose(np.asarray(xlac.compile(fn)(*args)), fn(*args), rtol=1e-12)
    assert _dots_of_transposes(fn, *args) == transposes_left


@settings(max_examples=15)
@given(st.permutations([0, 1, 2]), st.integers(0, 2), st.sampled_from(["lhs", "rhs"]))
def test_contraction_of_any_transpose_matches_numpy(permutation, contracted, side):
    shape = (2, 3, 4)
    rng = np.random.default_rng(3)
    x = rng.normal(size=shape)
    other = rng.normal(size=(x.transpose(permutation).shape[contracted], 3))

    def fn(x, other):
        t = x.transpose(permutation)
        if side == "lhs":
            return np.tensordot(t, other, axes=([contracted], [0]))
        return np.tensordot(other.T, t, axes=([1], [contracted]))
    np.testing.assert_allclose(np.asarray(xlac.compile(fn)(x, other)), fn(x, other), rtol=1e-12)


@pytest.mark.usefixtures("xla_defaults")
def test_transposed_operand_in_a_loop_matches_numpy():
    def projections(Q, a):
        out = np.zeros((Q.shape[1], a.shape[1]))
        for j in range(a.shape[1]):
            out[:, j] = Q.T @ a[:, j]
            Q = Q * 0.5
        return out
    rng = np.random.default_rng(4)
    Q, a = rng.normal(size=(30, 10)), rng.normal(size=(30, 7))
    compiled = xlac.compile(projections)
    np.testing.assert_allclose(np.asarray(compiled(Q, a)), projections(Q, a), rtol=1e-12)
    assert "f64[10,30]" not in loop_body_copies(compiled.lower(Q, a).compile().as_text())


# ---------------------------------------------------------------- batched matrix-vector products on the CPU


MATRIX_VECTOR = {                 # spec, shapes, whether XLA would copy the matrix transposed for a dot
    "scores over a cache": ("hd,thd->ht", [(8, 16), (40, 8, 16)], True),
    "weights times a cache": ("ht,thd->hd", [(8, 40), (40, 8, 16)], True),
    "matrix first": ("thd,hd->ht", [(40, 8, 16), (8, 16)], True),
    "result axes swapped": ("hd,thd->th", [(8, 16), (40, 8, 16)], True),
    "rows dotted": ("ib,bi->b", [(4, 3), (3, 4)], True),
    "batch axes lead": ("bij,bj->bi", [(3, 4, 5), (3, 5)], False),
    "matrix times matrix": ("bij,jkb->bik", [(3, 4, 5), (5, 2, 3)], False),
}


@pytest.mark.parametrize("name", MATRIX_VECTOR)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_batched_matrix_vector_reads_the_matrix_in_place(name, dtype):
    spec, shapes, summed = MATRIX_VECTOR[name]
    rng = np.random.default_rng(5)
    a, b = (rng.normal(size=shape).astype(dtype) for shape in shapes)
    if dtype is np.complex128:
        a, b = a + 1j * a[..., ::-1], b - 2j * b

    def fn(a, b):
        return np.einsum(spec, a, b)
    compiled = xlac.compile(fn)
    got, expected = np.asarray(compiled(a, b)), fn(a, b)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    tolerance = 1e-5 if dtype is np.float32 else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)
    assert ("stablehlo.dot_general" not in compiled.lower(a, b).as_text()) == summed


@pytest.mark.parametrize("dtype, summed", [(np.float16, False), (np.float32, True)])
def test_half_precision_batched_matrix_vector_stays_a_dot(dtype, summed):
    """A half-float dot accumulates in float32 in XLA; a sum would add in half precision."""
    q, cache = Value(TensorType((8, 16), np.dtype(dtype))), Value(TensorType((40, 8, 16), np.dtype(dtype)))
    scores = Value(TensorType((8, 40), np.dtype(dtype)))
    dot = Node(P.dot_general, (q, cache), {"contracting": ((1,), (2,)), "batch": ((0,), (1,)),
                                          "preferred_dtype": None}, (scores,))
    text = lower_module(Graph([q, cache], [dot], [scores]), platform="cpu")
    assert ("stablehlo.dot_general" not in text) == summed


def test_batched_matrix_vector_gradient_matches_jax(x64):
    rng = np.random.default_rng(6)
    q, cache = rng.normal(size=(8, 16)), rng.normal(size=(40, 8, 16))

    def loss(q, cache):
        return (np.einsum("hd,thd->ht", q, cache) ** 2).sum()

    def loss_jax(q, cache):
        return (jax.numpy.einsum("hd,thd->ht", q, cache) ** 2).sum()
    got = xlac.grad(loss, argnums=(0, 1))(q, cache)
    expected = jax.grad(loss_jax, argnums=(0, 1))(q, cache)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12)


@pytest.mark.usefixtures("xla_defaults")
def test_attention_decode_step_copies_no_cache_transposed():
    from benchmarks.as_written_kernels import attention_decode_step
    rng = np.random.default_rng(7)
    args = (rng.normal(size=32), *(rng.normal(size=(32, 32)) for _ in range(4)), rng.normal(size=(64, 4, 8)),
            rng.normal(size=(64, 4, 8)), 40)
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    expected = attention_decode_step(*mine)
    compiled = xlac.compile(attention_decode_step)
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    np.testing.assert_allclose(np.asarray(compiled(*theirs)), expected, rtol=1e-10)
    np.testing.assert_allclose(theirs[5], mine[5], rtol=1e-12)       # the caches, written in place
    np.testing.assert_allclose(theirs[6], mine[6], rtol=1e-12)
    hlo = compiled.lower(*args).compile().as_text()
    moved = re.findall(r"= f64\[(\d+),(\d+),(\d+)\]\S* (?:transpose|copy)\(", hlo)
    assert moved == []                                         # no cache is copied, transposed or not
