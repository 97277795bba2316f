"""Contractions: matmul, dot, vdot, inner, outer, tensordot and einsum.

Each function names the axes of its operands with labels, as einsum does, and hands
them to one engine: repeated labels in one operand become diagonals (a strided
slice), labels no one else needs are summed with ``reduce``, size-1 axes that
broadcast are dropped, and every pair of operands meets in a single
``dot_general`` whose batch dimensions are the labels both share and keep.

Python scalars count as float64/int64 arrays here (NumPy converts them with
``asarray``); booleans contract as integers and come back as ``!= 0``; float16 and
bfloat16 accumulate in float32.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.einsum("ij,jk->ik", np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])))
array([[1., 2.],
       [3., 4.]])
"""
from __future__ import annotations

import numbers
import string

import numpy as np

from xlac.ir.dtypes import BOOL
from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy import _out
from xlac.numpy._core import asarray
from xlac.numpy._dispatch import numpy_function
from xlac.numpy.dtypes import dtype_of
from xlac.numpy.shapes import diagonal, transpose
from xlac.numpy.ufuncs import multiply
from xlac.trace import ops, views
from xlac.trace.tracer import Tracer

__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "vecdot", "einsum_path"]

MATMUL_SIGNATURE = "(n?,k),(k,m?)->(n?,m?)"


# ---------------------------------------------------------------- operands and dtypes


def _operand(x) -> Tracer:
    """``x`` as a strong traced array: NumPy's contractions call asarray, so 2.0 is a float64 array."""
    t = asarray(x)
    return ops.convert(t, t.dtype)


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype the contraction runs in: integers for bool, float32 for the 16-bit floats."""
    if dtype == BOOL:
        return np.dtype("int32")
    if dtype in (np.dtype("float16"), dtypes.bfloat16):
        return np.dtype("float32")
    return dtype


def _to_result(x: Tracer, dtype: np.dtype) -> Tracer:
    if dtype == BOOL:
        return ops.compare(x, ops.full(x.shape, 0, x.dtype), "NE")
    return ops.convert(x, dtype)


def _shape_str(shape) -> str:
    """A shape written as NumPy writes it in messages: (2,3) and (2,)."""
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


# ---------------------------------------------------------------- the labelled contraction engine


def _label_sizes(operands, labels, op: str) -> dict:
    """Each label's size; sizes of one label may differ across operands only where one is 1 (broadcast)."""
    sizes, seen_in = {}, {}
    for k, (x, names) in enumerate(zip(operands, labels)):
        for name, size in zip(names, x.shape):
            known = sizes.get(name)
            if known is not None and known != size and 1 not in (known, size):
                raise ValueError(located(
                    f"{op}: operands could not be broadcast together: {_show(name)} has size {known} "
                    f"in operand {seen_in[name]} and size {size} in operand {k}"))
            if known is None or known == 1:
                sizes[name], seen_in[name] = size, k
    return sizes


def _show(label) -> str:
    if isinstance(label, str) and len(label) == 1:
        return f"index '{label}'"
    if isinstance(label, tuple) and label[0] == "...":
        return f"the '...' dimension {label[1]}"
    return f"dimension {label}"


def _take_diagonals(x: Tracer, labels: list, op: str, index: int):
    """Collapse every label repeated in one operand to its diagonal: adjacent axes, merged, strided slice."""
    labels = list(labels)
    for name in dict.fromkeys(labels):
        while labels.count(name) > 1:
            i = labels.index(name)
            j = labels.index(name, i + 1)
            n, m = x.shape[i], x.shape[j]
            if n != m:
                raise ValueError(located(f"{op}: dimensions in operand {index} for collapsing "
                                         f"{_show(name)} don't match ({n} != {m})"))
            order = [d for d in range(x.ndim) if d != j]
            order.insert(i + 1, j)
            x = ops.transpose(x, order)
            x = ops.reshape(x, x.shape[:i] + (n * n,) + x.shape[i + 2:])
            start, limit, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
            strides[i] = n + 1
            x = ops.slice(x, start, limit, strides)
            del labels[j]
    return x, labels


def _sum_out(x: Tracer, labels: list, needed: set):
    """Sum over the axes whose labels nothing else needs."""
    axes = [i for i, name in enumerate(labels) if name not in needed]
    return ops.reduce(x, "sum", axes), [name for name in labels if name in needed]


def _drop_broadcast(x: Tracer, labels: list, other: Tracer, other_labels: list):
    """Remove size-1 axes of ``x`` that broadcast against a longer axis of ``other``: x does not vary along them."""
    other_size = dict(zip(other_labels, other.shape))
    keep = [i for i, name in enumerate(labels)
            if not (x.shape[i] == 1 and other_size.get(name, 1) != 1)]
    if len(keep) == x.ndim:
        return x, labels
    return ops.reshape(x, [x.shape[i] for i in keep]), [labels[i] for i in keep]


def _contract_pair(x, xl, y, yl, keep: set):
    """One dot_general of two labelled operands; the result's labels are batch, x's free, then y's free."""
    x2, xl2 = _drop_broadcast(x, xl, y, yl)
    y, yl = _drop_broadcast(y, yl, x, xl)
    x, xl = _sum_out(x2, xl2, set(yl) | keep)
    y, yl = _sum_out(y, yl, set(xl) | keep)
    shared = [name for name in xl if name in yl]
    batch = [name for name in shared if name in keep]
    summed = [name for name in shared if name not in keep]
    out = ops.dot_general(x, y,
                          contracting=([xl.index(n) for n in summed], [yl.index(n) for n in summed]),
                          batch=([xl.index(n) for n in batch], [yl.index(n) for n in batch]))
    labels = batch + [n for n in xl if n not in shared] + [n for n in yl if n not in shared]
    return out, labels


def _size(labels, sizes: dict) -> int:
    return int(np.prod([sizes[name] for name in labels], dtype=np.int64))


def _pair_cost(xl, yl, keep: set, sizes: dict) -> tuple:
    """Pairs that share an index before outer products; then the one that shrinks memory most (opt_einsum's greedy)."""
    result = (set(xl) | set(yl)) & keep
    return (not set(xl) & set(yl), _size(result, sizes) - _size(set(xl), sizes) - _size(set(yl), sizes))


def _greedy_pair(labels: list, out: set, sizes: dict) -> tuple:
    """The pair of operands to contract next, and the labels the others and the output still need."""
    if len(labels) == 2:          # one pair (matmul, dot): nothing to weigh
        return 0, 1, set(out)
    best = None
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            keep = out.union(*(labels[k] for k in range(len(labels)) if k not in (i, j)))
            cost = _pair_cost(labels[i], labels[j], keep, sizes)
            if best is None or cost < best[0]:
                best = (cost, i, j, keep)
    return best[1:]


def _contract(operands, labels, out_labels, op: str, dtype=None):
    """The labelled contraction: operands are strong tracers; labels lists of hashable names."""
    result_dtype = dtypes.canonical(dtype) if dtype is not None else dtypes.result_type(*operands)
    work = _compute_dtype(result_dtype)
    xs, ls = [], []
    for k, (x, names) in enumerate(zip(operands, labels)):
        x, names = _take_diagonals(ops.convert(x, work), names, op, k)
        xs.append(x)
        ls.append(names)
    sizes = _label_sizes(xs, ls, op)
    out = set(out_labels)
    while len(xs) > 1:
        i, j, keep = _greedy_pair(ls, out, sizes)
        x, names = _contract_pair(xs[i], ls[i], xs[j], ls[j], keep)
        xs[i], ls[i] = x, names
        del xs[j], ls[j]
    x, names = _sum_out(xs[0], ls[0], out)
    x = ops.transpose(x, [names.index(name) for name in out_labels])
    return _to_result(x, result_dtype)


# ---------------------------------------------------------------- matmul and friends


@numpy_function
def matmul(x1, x2, *, dtype=None):
    """Matrix product with NumPy's rank rules: 1-D operands get a temporary axis; leading axes broadcast.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.matmul(np.ones((2, 3, 4), np.float32), np.ones(4, np.float32)))
    array([[4., 4., 4.],
           [4., 4., 4.]], dtype=float32)
    """
    a, b = _operand(x1), _operand(x2)
    for index, t in enumerate((a, b)):
        if t.ndim == 0:
            raise ValueError(located(
                f"matmul: Input operand {index} does not have enough dimensions (has 0, gufunc core with "
                f"signature {MATMUL_SIGNATURE} requires 1)"))
    k_a, k_b = a.shape[-1], b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise ValueError(located(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            f"{MATMUL_SIGNATURE} (size {k_b} is different from {k_a})"))
    batch_a, batch_b = a.shape[:-2], b.shape[:-2]
    batch = _broadcast_batch(batch_a, batch_b, a.shape, b.shape)
    names = [f"batch{d}" for d in range(len(batch))]
    la = names[len(names) - len(batch_a):] + (["n", "k"] if a.ndim > 1 else ["k"])
    lb = names[len(names) - len(batch_b):] + (["k", "m"] if b.ndim > 1 else ["k"])
    out = names + (["n"] if a.ndim > 1 else []) + (["m"] if b.ndim > 1 else [])
    return _contract([a, b], [la, lb], out, "matmul", dtype)


def _broadcast_batch(batch_a, batch_b, shape_a, shape_b):
    try:
        return ops.broadcast_shapes(batch_a, batch_b, op="matmul")
    except ValueError:
        raise ValueError(located(
            f"matmul: operands could not be broadcast together: the batch shapes {_shape_str(batch_a)} and "
            f"{_shape_str(batch_b)} of operands with shapes {_shape_str(shape_a)} and {_shape_str(shape_b)} "
            "do not broadcast")) from None


def _not_aligned(a, b, axis_a: int, axis_b: int):
    if a.shape[axis_a] != b.shape[axis_b]:
        raise ValueError(located(
            f"shapes {_shape_str(a.shape)} and {_shape_str(b.shape)} not aligned: "
            f"{a.shape[axis_a]} (dim {axis_a}) != {b.shape[axis_b]} (dim {axis_b})"))


@numpy_function
def dot(a, b, out=None):
    """NumPy's dot: scalars multiply; otherwise the last axis of ``a`` meets the second-to-last of ``b``.
    ``out=`` must have the result's exact dtype and shape, as NumPy requires.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.dot(np.ones((2, 3)), np.ones((4, 3, 5)))).shape
    (2, 4, 5)
    """
    dst = _out.output_operand(out, "dot")
    a, b = _operand(a), _operand(b)
    if a.ndim == 0 or b.ndim == 0:
        result = multiply.__wrapped_numpy__(a, b)
    else:
        k_b = 0 if b.ndim == 1 else b.ndim - 2
        _not_aligned(a, b, a.ndim - 1, k_b)
        la = [("a", d) for d in range(a.ndim - 1)] + ["k"]
        lb = [("b", d) for d in range(b.ndim)]
        lb[k_b] = "k"
        result = _contract([a, b], [la, lb], la[:-1] + [name for name in lb if name != "k"], "dot")
    if dst is None:
        return result
    if dst.dtype != result.dtype or dst.shape != result.shape:
        raise ValueError(located(f"dot: output array is not acceptable (must have the right datatype, number of "
                                 f"dimensions, and be a C-Array): out is {dst.dtype}{list(dst.shape)}, the result "
                                 f"{result.dtype}{list(result.shape)}"))
    return _out.store(dst, result)


@numpy_function
def inner(a, b):
    """Sum over the last axes of ``a`` and ``b``: the result has shape ``a.shape[:-1] + b.shape[:-1]``.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.inner(np.array([1, 2, 3]), np.array([0, 1, 0])))
    array(2)
    """
    a, b = _operand(a), _operand(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply.__wrapped_numpy__(a, b)
    _not_aligned(a, b, a.ndim - 1, b.ndim - 1)
    la = [("a", d) for d in range(a.ndim - 1)] + ["k"]
    lb = [("b", d) for d in range(b.ndim - 1)] + ["k"]
    return _contract([a, b], [la, lb], la[:-1] + lb[:-1], "inner")


@numpy_function
def outer(a, b):
    """``out[i, j] = a.ravel()[i] * b.ravel()[j]``.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.outer(np.array([1, 2]), np.array([1, 10, 100])))
    array([[  1,  10, 100],
           [  2,  20, 200]])
    """
    a, b = _operand(a), _operand(b)
    a, b = ops.reshape(a, (a.size,)), ops.reshape(b, (b.size,))
    return _contract([a, b], [["i"], ["j"]], ["i", "j"], "outer")


@numpy_function
def vdot(a, b):
    """Dot product of the flattened operands, conjugating the first.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.vdot(np.array([1j, 2]), np.array([1j, 1])))
    array(3.+0.j)
    """
    a, b = _operand(a), _operand(b)
    if a.size != b.size:
        raise ValueError(located(f"vdot: cannot reshape array of size {b.size} into shape ({a.size},): "
                                 f"operands of shapes {_shape_str(a.shape)} and {_shape_str(b.shape)} "
                                 "must have the same size"))
    a = ops.conj(a)
    a, b = ops.reshape(a, (a.size,)), ops.reshape(b, (b.size,))
    return _contract([a, b], [["k"], ["k"]], [], "vdot")


@numpy_function
def tensordot(a, b, axes=2):
    """Sum over ``axes``: an int N (the last N of ``a`` with the first N of ``b``) or two axis sequences.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.tensordot(np.ones((2, 3, 4)), np.ones((3, 4, 5)), axes=2)).shape
    (2, 5)
    >>> np.asarray(xnp.tensordot(np.ones((3, 2)), np.ones((3, 5)), axes=([0], [0]))).shape
    (2, 5)
    """
    a, b = _operand(a), _operand(b)
    axes_a, axes_b = _tensordot_axes(axes, a.ndim, b.ndim)
    if len(axes_a) != len(axes_b) or any(a.shape[i] != b.shape[j] for i, j in zip(axes_a, axes_b)):
        raise ValueError(located(
            f"shape-mismatch for sum: tensordot of shapes {_shape_str(a.shape)} and {_shape_str(b.shape)} "
            f"over axes {list(axes_a)} and {list(axes_b)}"))
    la = [("a", d) for d in range(a.ndim)]
    lb = [("b", d) for d in range(b.ndim)]
    for k, (i, j) in enumerate(zip(axes_a, axes_b)):
        la[i] = lb[j] = ("sum", k)
    out = [name for name in la if name[0] == "a"] + [name for name in lb if name[0] == "b"]
    return _contract([a, b], [la, lb], out, "tensordot")


def _tensordot_axes(axes, ndim_a: int, ndim_b: int):
    if isinstance(axes, numbers.Integral) and not isinstance(axes, bool):
        n = int(axes)
        if n < 0 or n > min(ndim_a, ndim_b):
            raise ValueError(located(f"tensordot: axes={n} needs operands with at least {n} dimensions, "
                                     f"got {ndim_a} and {ndim_b}"))
        return tuple(range(ndim_a - n, ndim_a)), tuple(range(n))
    try:
        axes_a, axes_b = axes
    except (TypeError, ValueError):
        raise TypeError(located(f"tensordot: axes must be an int or a pair of axis sequences, got {axes!r}")) from None
    return _normalize(axes_a, ndim_a), _normalize(axes_b, ndim_b)


def _normalize(axes, ndim: int) -> tuple:
    axes = (axes,) if isinstance(axes, numbers.Integral) else tuple(axes)
    out = []
    for axis in axes:
        if not -ndim <= axis < ndim:
            raise np.exceptions.AxisError(located(
                f"tensordot: axis {axis} is out of bounds for array of dimension {ndim}"))
        out.append(int(axis) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(located(f"tensordot: repeated axis in {list(axes)}"))
    return tuple(out)


@numpy_function
def vecdot(x1, x2, /, *, axis=-1):
    """Vector dot product over ``axis`` (conjugating ``x1``), broadcasting the other axes.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.vecdot(np.ones((2, 3)), np.arange(3.0)))
    array([3., 3.])
    """
    a, b = _operand(x1), _operand(x2)
    for t in (a, b):
        if t.ndim == 0:
            raise ValueError(located("vecdot: Input operands must have at least one dimension"))
    axis_a, axis_b = _vector_axis(axis, a.ndim), _vector_axis(axis, b.ndim)
    if a.shape[axis_a] != b.shape[axis_b]:
        raise ValueError(located(f"vecdot: the vector axes differ in size ({a.shape[axis_a]} != {b.shape[axis_b]}) "
                                 f"for shapes {_shape_str(a.shape)} and {_shape_str(b.shape)}"))
    a = ops.conj(a)
    a = ops.transpose(a, [d for d in range(a.ndim) if d != axis_a] + [axis_a])
    b = ops.transpose(b, [d for d in range(b.ndim) if d != axis_b] + [axis_b])
    batch = ops.broadcast_shapes(a.shape[:-1], b.shape[:-1], op="vecdot")
    names = [f"batch{d}" for d in range(len(batch))]
    la = names[len(names) - (a.ndim - 1):] + ["k"]
    lb = names[len(names) - (b.ndim - 1):] + ["k"]
    return _contract([a, b], [la, lb], names, "vecdot")


def _vector_axis(axis, ndim: int) -> int:
    if not isinstance(axis, numbers.Integral) or not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(located(f"vecdot: axis {axis} is out of bounds for array of dimension {ndim}"))
    return int(axis) % ndim


# ---------------------------------------------------------------- einsum


_LETTERS = set(string.ascii_letters)


@numpy_function(view="marked")
def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)``, implicit outputs, ``...`` and repeated indices.

    One operand and no summed index (``"ij->ji"``, ``"ii->i"``) gives a view of it, as NumPy's does.

    Deviation: a view with a diagonal (``"ii->i"``) is read-only, as ``diagonal``'s; NumPy's can be written.

    Also the interleaved form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``. ``optimize`` is accepted and
    ignored: operands are always contracted pairwise, the pair with the smallest result first.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.einsum("ii", np.arange(9).reshape(3, 3)))
    array(12)
    >>> np.asarray(xnp.einsum("...ij,...jk", np.ones((5, 2, 3)), np.ones((3, 4)))).shape
    (5, 2, 4)
    """
    if out is not None:
        raise TypeError(located("einsum: out= is not supported by xlac; use the returned array"))
    if order not in ("K", "A", "C", "F"):
        raise ValueError(located(f"einsum: order must be one of 'C', 'F', 'A', or 'K' (got {order!r})"))
    if not operands:
        raise TypeError(located("einsum: no subscripts and operands given"))
    subscripts, arrays = _interleaved(operands) if not isinstance(operands[0], str) else (operands[0], operands[1:])
    arrays = [_operand(x) for x in arrays]
    if dtype is not None:
        dtype = dtypes.canonical(dtype)
        for k, x in enumerate(arrays):
            if not np.can_cast(x.dtype, dtype, casting=casting):
                raise TypeError(located(f"einsum: operand {k} dtype {x.dtype} could not be cast to {dtype} "
                                        f"according to the rule {casting!r}"))
    labels, out_labels = _parse_subscripts(subscripts, arrays)
    raw = operands[1:] if isinstance(operands[0], str) else operands[0:1]
    if (len(arrays) == 1 and isinstance(raw[0], Tracer) and set(labels[0]) == set(out_labels)
            and dtype in (None, arrays[0].dtype)):
        return _single_operand_view(raw[0], labels[0], out_labels)
    return _contract(arrays, labels, out_labels, "einsum", dtype)


def _single_operand_view(x: Tracer, labels: list, out_labels: list) -> Tracer:
    """``einsum`` of one operand that sums over nothing: diagonals of repeated labels, then a transpose."""
    if x.ndim == 0:
        return views.element(x)                # NumPy's einsum("->", a) is a scalar
    labels = list(labels)
    while len(set(labels)) < len(labels):
        first = next(label for label in labels if labels.count(label) > 1)
        i = labels.index(first)
        j = labels.index(first, i + 1)
        x = diagonal(x, 0, i, j)               # drops axes i and j, adds their diagonal last
        labels = [label for k, label in enumerate(labels) if k not in (i, j)] + [first]
    return transpose(x, [labels.index(label) for label in out_labels])


def _interleaved(args):
    """``(a, [0, 1], b, [1, 2], [0, 2])`` as the subscripts string ``"AB,BC->AC"`` and the operands."""
    args = list(args)
    output = args.pop() if len(args) % 2 == 1 else None
    arrays, specs = args[0::2], args[1::2]
    subscripts = ",".join(_sublist(s) for s in specs)
    if output is not None:
        subscripts += "->" + _sublist(output)
    return subscripts, arrays


def _sublist(sublist) -> str:
    out = []
    for item in sublist:
        if item is Ellipsis:
            out.append("...")
        elif isinstance(item, numbers.Integral) and 0 <= item < 52:
            out.append(chr(ord("A") + item) if item < 26 else chr(ord("a") + item - 26))
        else:
            raise ValueError(located(f"einsum: subscript {item!r} in a sublist must be an integer in [0, 52) "
                                     "or Ellipsis"))
    return "".join(out)


def _parse_subscripts(subscripts: str, arrays):
    """Per-operand label lists and the output labels; '...' dimensions become labels ("...", k)."""
    if "->" in subscripts:
        inputs, output = subscripts.split("->", 1)
    else:
        inputs, output = subscripts, None
    specs = inputs.split(",")
    if len(specs) != len(arrays):
        raise ValueError(located(
            f"einsum: the subscripts {subscripts!r} name {len(specs)} operand(s) but {len(arrays)} were given"))
    parsed = [_parse_term(spec, f"operand {k}") for k, spec in enumerate(specs)]
    ellipsis_ranks = []
    for k, ((letters, at), x) in enumerate(zip(parsed, arrays)):
        rank = x.ndim - len(letters)
        if rank < 0:
            raise ValueError(located(
                f"einsum: subscripts string contains too many subscripts for operand {k} "
                f"({specs[k]!r} for shape {_shape_str(x.shape)})"))
        if at is None and rank > 0:
            raise ValueError(located(
                f"einsum: operand {k} has more dimensions than subscripts ({specs[k]!r} for shape "
                f"{_shape_str(x.shape)}), but no '...' ellipsis provided to broadcast the extra dimensions"))
        ellipsis_ranks.append(rank)
    broadcast_rank = max(ellipsis_ranks, default=0)
    broadcast = [("...", d) for d in range(broadcast_rank)]
    labels = []
    for (letters, at), rank in zip(parsed, ellipsis_ranks):
        if at is None:
            labels.append(list(letters))
        else:
            labels.append(list(letters[:at]) + broadcast[broadcast_rank - rank:] + list(letters[at:]))
    return labels, _output_labels(output, parsed, broadcast)


def _parse_term(term: str, where: str):
    """A term's letters and where its ellipsis sits among them (None without one)."""
    if term.count("...") > 1:
        raise ValueError(located(f"einsum: more than one ellipsis ('...') in {where} subscripts {term!r}"))
    at = None
    if "..." in term:
        at = term.index("...")
        term = term.replace("...", "")
    for c in term:
        if c == ".":
            raise ValueError(located(f"einsum: subscripts string contains a '.' that is not part of an "
                                     f"ellipsis ('...') in {where}"))
        if c not in _LETTERS:
            raise ValueError(located(f"einsum: invalid subscript {c!r} in einstein sum subscripts string "
                                     f"({where}), subscripts must be letters"))
    return term, at


def _output_labels(output, parsed, broadcast) -> list:
    counts = {}
    for letters, _ in parsed:
        for c in letters:
            counts[c] = counts.get(c, 0) + 1
    if output is None:
        return broadcast + sorted(c for c, n in counts.items() if n == 1)
    letters, at = _parse_term(output, "the output")
    for c in letters:
        if letters.count(c) > 1:
            raise ValueError(located(f"einsum: subscripts string includes output subscript {c!r} multiple times"))
        if c not in counts:
            raise ValueError(located(f"einsum: subscripts string included output subscript {c!r} which never "
                                     "appeared in an input"))
    if at is None:
        if broadcast:
            raise ValueError(located(
                "einsum: output has more dimensions than subscripts given in einstein sum, but no '...' "
                "ellipsis provided to broadcast the extra dimensions"))
        return list(letters)
    return list(letters[:at]) + broadcast + list(letters[at:])


def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """NumPy's contraction-order report for these operands' shapes (xlac contracts greedily in pairs).

    >>> einsum_path("ij,jk", np.ones((2, 3)), np.ones((3, 4)))[0]
    ['einsum_path', (0, 1)]
    """
    stand_ins = [np.broadcast_to(np.zeros((), dtype_of(x)), np.shape(x) if not hasattr(x, "shape") else x.shape)
                 for x in operands]
    return np.einsum_path(subscripts, *stand_ins, optimize=optimize)
