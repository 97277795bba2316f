"""matmul, dot, vdot, inner, outer, tensordot, vecdot and einsum against NumPy: values, dtypes and errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st, settings
from hypothesis.extra import numpy as hnp

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches

DTYPES = [np.float32, np.float64, np.int32]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-5, 6, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- matmul

MATMUL_SHAPES = [
    ((3,), (3,)), ((3, 3), (3,)), ((3,), (3, 3)), ((3, 3), (3, 3)), ((3,), (5, 3, 2)), ((5, 3, 2), (2,)),
    ((5, 2), (3, 2, 4)), ((5, 2, 3), (3, 2)), ((5, 3, 4), (5, 4, 1)), ((3, 1, 3, 4), (5, 4, 1)),
    ((1, 5, 4), (1, 4, 3)), ((1, 1), (2, 1, 1)), ((2, 1, 1), (1, 1)),
]


def _matmul_subscripts(ndim_a, ndim_b):
    a = "...nk" if ndim_a > 1 else "k"
    b = "...km" if ndim_b > 1 else "k"
    return f"{a},{b}->..." + ("n" if ndim_a > 1 else "") + ("m" if ndim_b > 1 else "")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape_a,shape_b", MATMUL_SHAPES)
def test_matmul_shape_table(shape_a, shape_b, dtype):
    a, b = _data(shape_a, dtype, 1), _data(shape_b, dtype, 2)
    expected = np.matmul(a, b)
    subscripts = _matmul_subscripts(a.ndim, b.ndim)
    at, matmul, einsum = xlac.compile(lambda x, y: (x @ y, xnp.matmul(x, y), xnp.einsum(subscripts, x, y)))(a, b)
    for got in (at, matmul, einsum, xnp.matmul(a, b)):
        assert_matches(got, expected)


@pytest.mark.parametrize("shape_a,shape_b,message", [
    ((1,), (2,), r"core dimension 0, with gufunc signature \(n\?,k\),\(k,m\?\)->\(n\?,m\?\) \(size 2 is different from 1\)"),
    ((2, 1), (2,), r"size 2 is different from 1"),
    ((2,), (1, 2), r"size 1 is different from 2"),
    ((1, 2), (3, 1), r"size 3 is different from 2"),
    ((2, 2, 1), (3, 1, 2), r"could not be broadcast together.*\(2,\) and \(3,\)"),
    ((), (3,), r"Input operand 0 does not have enough dimensions \(has 0"),
    ((3,), (), r"Input operand 1 does not have enough dimensions \(has 0"),
])
def test_matmul_errors_match_numpy(shape_a, shape_b, message):
    a, b = np.ones(shape_a, np.float32), np.ones(shape_b, np.float32)
    with pytest.raises(ValueError):
        np.matmul(a, b)
    with pytest.raises(ValueError, match=message):
        xnp.matmul(a, b)
    with pytest.raises(ValueError, match=message):
        xlac.compile(lambda x, y: x @ y)(a, b)


def test_matmul_python_scalar_is_an_error():
    with pytest.raises(ValueError, match="Input operand 1 does not have enough dimensions"):
        xnp.matmul(np.ones(3), 2.0)


@pytest.mark.parametrize("dtype_a,dtype_b", [
    (np.int32, np.float32), (np.int8, np.uint8), (np.float32, np.float64), (np.bool_, np.bool_),
    (np.bool_, np.int32), (np.float16, np.float16), (np.complex64, np.float32),
])
def test_matmul_promotes_like_numpy(dtype_a, dtype_b):
    a, b = _data((2, 3, 4), dtype_a, 3), _data((4, 5), dtype_b, 4)
    if np.dtype(dtype_a).kind == "c":
        a = a + 1j * _data((2, 3, 4), np.float32, 5)
    assert_matches(xnp.matmul(a, b), np.matmul(a, b))


def test_bool_matmul_is_or_of_ands():
    a = np.array([[True, False], [False, False]])
    b = np.array([[True, True], [True, True]])
    got = xnp.matmul(a, b)
    assert_matches(got, np.matmul(a, b))
    assert np.asarray(got).tolist() == [[True, True], [False, False]]


def test_matmul_with_empty_core_dimension():
    a, b = np.ones((2, 0), np.float32), np.ones((0, 3), np.float32)
    assert_matches(xnp.matmul(a, b), np.matmul(a, b))


def test_matmul_graph_is_one_dot_general_with_origin():
    a, b = np.ones((5, 3, 4), np.float32), np.ones((4, 2), np.float32)
    graph = xlac.compile(lambda x, y: x @ y).trace(a, b).graph
    dots = [n for n in graph.nodes if n.primitive.name == "dot_general"]
    assert len(dots) == 1 and dots[0].origin == "matmul"
    assert "broadcast_in_dim" not in graph.op_counts()   # a batch-free operand is not broadcast


@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       core=st.tuples(st.integers(1, 4), st.integers(0, 4), st.integers(1, 4)),
       vectors=st.tuples(st.booleans(), st.booleans()), dtype=st.sampled_from(DTYPES))
def test_batched_matmul_matches_numpy(shapes, core, vectors, dtype):
    (batch_a, batch_b), _ = shapes
    n, k, m = core
    shape_a = (k,) if vectors[0] else batch_a + (n, k)
    shape_b = (k,) if vectors[1] else batch_b + (k, m)
    a, b = _data(shape_a, dtype, 6), _data(shape_b, dtype, 7)
    assert_matches(xnp.matmul(a, b), np.matmul(a, b))


# ---------------------------------------------------------------- dot, vdot, inner, outer, tensordot, vecdot

@pytest.mark.parametrize("fn,shape_a,shape_b", [
    ("dot", (2, 3), (4, 3, 5)), ("dot", (3,), (3,)), ("dot", (2, 3), (3,)), ("dot", (), (2, 3)),
    ("dot", (2, 3), ()), ("inner", (2, 3), (4, 3)), ("inner", (3,), (3,)), ("inner", (), (2,)),
    ("outer", (2, 3), (4,)), ("outer", (3,), ()), ("vdot", (2, 3), (3, 2)), ("tensordot", (2, 3, 4), (3, 4, 5)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_products_match_numpy(fn, shape_a, shape_b, dtype):
    a, b = _data(shape_a, dtype, 8), _data(shape_b, dtype, 9)
    expected = getattr(np, fn)(a, b)
    assert_matches(getattr(xnp, fn)(a, b), expected)
    assert_matches(xlac.compile(lambda x, y: getattr(xnp, fn)(x, y))(a, b), expected)


@pytest.mark.parametrize("fn", ["dot", "inner", "outer", "vdot", "tensordot"])
def test_python_scalars_are_float64_arrays(fn):
    a = np.ones(1 if fn == "vdot" else 3, np.float32)
    args = (a, 2.0) if fn != "tensordot" else (a, 2.0, 0)
    assert_matches(getattr(xnp, fn)(*args), getattr(np, fn)(*args))


@pytest.mark.parametrize("fn", ["dot", "inner", "outer", "vdot", "tensordot"])
def test_bool_products(fn):
    a, b = np.array([True, False, True]), np.array([False, False, True])
    args = (a, b, 1) if fn == "tensordot" else (a, b)
    assert_matches(getattr(xnp, fn)(*args), getattr(np, fn)(*args))


def test_vdot_conjugates_the_first_operand():
    rng = np.random.default_rng(10)
    z = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    w = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    assert_matches(xnp.vdot(z, w), np.vdot(z, w))
    assert_matches(xnp.vdot(z.astype(np.complex64), w.real.astype(np.float32)),
                   np.vdot(z.astype(np.complex64), w.real.astype(np.float32)))


def test_vecdot_matches_numpy():
    rng = np.random.default_rng(11)
    z = rng.standard_normal((4, 1, 3)) + 1j * rng.standard_normal((4, 1, 3))
    w = rng.standard_normal((5, 3)).astype(np.float32)
    assert_matches(xnp.vecdot(z, w), np.vecdot(z, w))
    x = rng.standard_normal((3, 2))
    assert_matches(xnp.vecdot(x, x, axis=0), np.vecdot(x, x, axis=0))


@settings(max_examples=12, deadline=None)
@given(st.data())
def test_tensordot_random_axes(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    summed = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    free_a = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    free_b = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    order_a = data.draw(st.permutations(range(len(summed) + len(free_a))))
    order_b = data.draw(st.permutations(range(len(summed) + len(free_b))))
    shape_a = tuple((summed + free_a)[i] for i in np.argsort(order_a))
    shape_b = tuple((summed + free_b)[i] for i in np.argsort(order_b))
    axes_a = [order_a[i] - (len(shape_a) if data.draw(st.booleans()) else 0) for i in range(len(summed))]
    axes_b = [order_b[i] for i in range(len(summed))]
    a, b = _data(shape_a, dtype, 12), _data(shape_b, dtype, 13)
    assert_matches(xnp.tensordot(a, b, axes=(axes_a, axes_b)), np.tensordot(a, b, axes=(axes_a, axes_b)))


@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3), n=st.integers(0, 3),
       dtype=st.sampled_from(DTYPES))
def test_tensordot_int_axes(shape, n, dtype):
    n = min(n, len(shape))
    a = _data(shape, dtype, 14)
    b = _data(shape[len(shape) - n:] + (2,), dtype, 15)
    assert_matches(xnp.tensordot(a, b, axes=n), np.tensordot(a, b, axes=n))


@given(fn=st.sampled_from(["dot", "inner", "outer", "vdot"]), dtype=st.sampled_from(DTYPES),
       lead_a=hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
       lead_b=hnp.array_shapes(min_dims=0, max_dims=2, max_side=3), k=st.integers(0, 3), m=st.integers(1, 3))
def test_dot_family_random_shapes(fn, dtype, lead_a, lead_b, k, m):
    shape_a = lead_a + (k,)
    shape_b = {"dot": lead_b + (k, m), "inner": lead_b + (k,), "outer": lead_b,
               "vdot": (int(np.prod(shape_a)),)}[fn]
    a, b = _data(shape_a, dtype, 16), _data(shape_b, dtype, 17)
    assert_matches(getattr(xnp, fn)(a, b), getattr(np, fn)(a, b))


@pytest.mark.parametrize("call,error,message", [
    (lambda: xnp.dot(np.ones((2, 3)), np.ones(2)), ValueError, r"shapes \(2,3\) and \(2,\) not aligned: 3 \(dim 1\) != 2 \(dim 0\)"),
    (lambda: xnp.dot(np.ones((2, 3)), np.ones((2, 4, 5))), ValueError, r"not aligned: 3 \(dim 1\) != 4 \(dim 1\)"),
    (lambda: xnp.inner(np.ones((2, 3)), np.ones(2)), ValueError, r"not aligned: 3 \(dim 1\) != 2 \(dim 0\)"),
    (lambda: xnp.vdot(np.ones((2, 3)), np.ones(2)), ValueError, r"cannot reshape array of size 2 into shape \(6,\)"),
    (lambda: xnp.tensordot(np.ones((2, 3)), np.ones(2), 1), ValueError, "shape-mismatch for sum"),
    (lambda: xnp.tensordot(np.ones((2, 3)), np.ones(2), ([0, 1], [0])), ValueError, "shape-mismatch for sum"),
    (lambda: xnp.tensordot(np.ones((2, 3)), np.ones(2), ([2], [0])), np.exceptions.AxisError, "axis 2 is out of bounds"),
    (lambda: xnp.tensordot(np.ones((2, 3)), np.ones(2), 3), ValueError, "axes=3 needs operands with at least 3"),
    (lambda: xnp.vecdot(np.ones((2, 3)), np.ones(2)), ValueError, r"vector axes differ in size \(3 != 2\)"),
])
def test_product_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---------------------------------------------------------------- einsum

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("i,j,k->ijk", [(2,), (3,), (4,)]), ("ij,j->i", [(2, 3), (3,)]),
    ("iji,i->j", [(2, 3, 2), (2,)]), ("ij,ij->", [(2, 3), (2, 3)]), ("nij,jk->nik", [(5, 2, 3), (3, 4)]),
    ("ii->", [(3, 3)]), ("ii->i", [(3, 3)]), ("iij->i", [(3, 3, 2)]), ("iijkk->ik", [(2, 2, 3, 4, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]), ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]),
    ("ij...,jk...->ik...", [(2, 3, 5), (3, 4, 1)]), ("ba,b->", [(2, 3), (2,)]),
    ("ea,fb,abcd,gc,hd->efgh", [(2, 3), (2, 4), (3, 4, 5, 6), (2, 5), (2, 6)]), ("a...a->a...", [(3, 2, 4, 3)]),
    ("ij,jk", [(2, 3), (3, 4)]), ("ba,b", [(2, 3), (2,)]), ("ii", [(3, 3)]), ("i,i", [(3,), (3,)]),
    ("aB,Cb", [(2, 3), (4, 5)]), ("ij,jk->ik", [(2, 1), (3, 4)]), ("ij->ji", [(2, 3)]), ("ij->ij", [(2, 3)]),
    ("i...->i", [(3,)]), ("ij,jk,kl->il", [(2, 0), (0, 3), (3, 2)]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("subscripts,shapes", EINSUM_CASES)
def test_einsum_matches_numpy(subscripts, shapes, dtype):
    operands = [_data(s, dtype, seed) for seed, s in enumerate(shapes)]
    assert_matches(xnp.einsum(subscripts, *operands), np.einsum(subscripts, *operands))


def test_einsum_compiled_and_eager_agree():
    a, b = _data((4, 2, 3), np.float32, 1), _data((3, 5), np.float32, 2)
    f = xlac.compile(lambda x, y: xnp.einsum("nij,jk->nik", x, y))
    assert_matches(f(a, b), np.einsum("nij,jk->nik", a, b))


@pytest.mark.parametrize("dtypes,subscripts", [
    ((np.int8, np.uint8), "i,i"), ((np.int32, np.float32), "ij,jk"), ((np.bool_, np.bool_), "ij,jk"),
    ((np.int8,), "ij->"), ((np.float16, np.float16), "ij,jk"),
])
def test_einsum_dtypes(dtypes, subscripts):
    shapes = [(2, 3), (3, 4)] if "j" in subscripts else [(3,), (3,)]
    operands = [_data(s, d, k) for k, (s, d) in enumerate(zip(shapes, dtypes))]
    assert_matches(xnp.einsum(subscripts, *operands), np.einsum(subscripts, *operands))


def test_einsum_python_scalar_operand_is_float64():
    a = np.ones(3, np.float32)
    assert_matches(xnp.einsum("i,", a, 2.0), np.einsum("i,", a, 2.0))


def test_einsum_dtype_kwarg_and_casting():
    a = _data((3,), np.int32, 1)
    assert_matches(xnp.einsum("i,i", a, a, dtype=np.float64), np.einsum("i,i", a, a, dtype=np.float64))
    assert_matches(xnp.einsum("i,i", a, a, dtype=np.float32, casting="unsafe"),
                   np.einsum("i,i", a, a, dtype=np.float32, casting="unsafe"))
    with pytest.raises(TypeError, match="could not be cast"):
        xnp.einsum("i,i", a, a, dtype=np.float32)


def test_einsum_optimize_is_accepted():
    a = _data((2, 3), np.float64, 1)
    for optimize in (True, False, "greedy", "optimal"):
        assert_matches(xnp.einsum("ij,ij->i", a, a, optimize=optimize), np.einsum("ij,ij->i", a, a))


def test_einsum_interleaved_sublists():
    a, b = _data((2, 3), np.float64, 1), _data((3, 4), np.float64, 2)
    assert_matches(xnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), np.einsum(a, [0, 1], b, [1, 2], [0, 2]))
    assert_matches(xnp.einsum(a, [26, 0]), np.einsum(a, [26, 0]))
    assert_matches(xnp.einsum(b, [Ellipsis, 0], np.ones(4), [0]), np.einsum(b, [Ellipsis, 0], np.ones(4), [0]))


def test_einsum_graph_is_dot_generals_without_loops():
    shapes = [(2, 3), (2, 4), (3, 4, 5, 6), (2, 5), (2, 6)]
    operands = [np.ones(s, np.float32) for s in shapes]
    graph = xlac.compile(lambda *xs: xnp.einsum("ea,fb,abcd,gc,hd->efgh", *xs)).trace(*operands).graph
    counts = graph.op_counts()
    assert counts["dot_general"] == 4
    assert len(graph.nodes) <= 8
    assert all(n.origin == "einsum" for n in graph.nodes)


def test_einsum_diagonal_is_not_a_loop():
    x = np.arange(64 * 64 * 3, dtype=np.float32).reshape(64, 64, 3)
    graph = xlac.compile(lambda a: xnp.einsum("iij->j", a)).trace(x).graph
    assert len(graph.nodes) <= 5
    assert_matches(xnp.einsum("iij->j", x), np.einsum("iij->j", x))


def test_einsum_contracts_shared_kept_index_as_batch():
    a, b = np.ones((5, 2, 3), np.float32), np.ones((5, 3, 4), np.float32)
    graph = xlac.compile(lambda x, y: xnp.einsum("bij,bjk->bik", x, y)).trace(a, b).graph
    (dot,) = [n for n in graph.nodes if n.primitive.name == "dot_general"]
    assert dot.attrs["batch"] == ((0,), (0,)) and dot.attrs["contracting"] == ((2,), (1,))


def test_einsum_sums_lonely_indices_with_reduce_first():
    a, b = np.ones((2, 7), np.float32), np.ones((2,), np.float32)
    graph = xlac.compile(lambda x, y: xnp.einsum("ij,i->i", x, y)).trace(a, b).graph
    names = [n.primitive.name for n in graph.nodes]
    assert names.index("reduce") < names.index("dot_general")


@pytest.mark.parametrize("subscripts,shapes,message", [
    ("ij,jk", [(2, 3)], r"name 2 operand\(s\) but 1 were given"),
    ("ij", [(2, 3), (3,)], r"name 1 operand\(s\) but 2 were given"),
    ("ij,jk", [(2, 3), (2, 3)], "could not be broadcast together: index 'j' has size 3 in operand 0 and size 2"),
    ("...i,...i", [(2, 3), (4, 3)], "could not be broadcast together"),
    ("ii", [(2, 3)], r"collapsing index 'i' don't match \(2 != 3\)"),
    ("ij->ii", [(2, 3)], "output subscript 'i' multiple times"),
    ("ij->x", [(2, 3)], "output subscript 'x' which never appeared"),
    ("i2", [(2, 3)], "invalid subscript '2'"),
    ("ijk", [(2, 3)], "too many subscripts for operand 0"),
    ("i", [(2, 3)], "more dimensions than subscripts"),
    ("ij...->ij", [(2, 3, 4)], "output has more dimensions than subscripts"),
    ("..i.", [(2, 3)], r"'\.' that is not part of an ellipsis"),
    ("i...j...", [(2, 3)], "more than one ellipsis"),
])
def test_einsum_errors(subscripts, shapes, message):
    operands = [np.ones(s) for s in shapes]
    with pytest.raises(ValueError):
        np.einsum(subscripts, *operands)
    with pytest.raises(ValueError, match=message):
        xnp.einsum(subscripts, *operands)


def test_einsum_out_is_rejected():
    with pytest.raises(TypeError, match="out="):
        xnp.einsum("i->", np.ones(3), out=np.zeros(()))
