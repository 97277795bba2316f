"""Differentiation with JAX's API: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``,
``hessian`` and ``stop_gradient``.

Each transform traces the function into a graph of its own (functionalized and autocast, so in-place code
has the gradients of the pure function it means), differentiates it with :mod:`xlac.passes.autodiff`, and
emits the result into the current trace: the transforms nest with each other, with ``xlac.vmap`` and with
``xlac.compile`` in any order. Called outside any trace they run through ``xlac.compile`` (cached).
Arguments and results are pytrees; gradients come back in each primal's dtype.

>>> import numpy as np, xlac.numpy as xnp
>>> df = grad(lambda x: xnp.sum(xnp.sin(x)))
>>> np.allclose(np.asarray(df(np.array([0.0, 1.0]))), np.cos([0.0, 1.0]))
True
"""
from __future__ import annotations

import functools

import numpy as np

import xlac.passes.rules  # noqa: F401  (registers the VJP and JVP rules on the primitives)
from xlac.errors import located
from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.passes.autodiff import forward, is_differentiable, linearize_reverse
from xlac.trace import ops, pytree
from xlac.trace.state import current_trace
from xlac.function_graph import adopt_checks, trace_subgraph
from xlac.trace.inline import inline
from xlac.trace.tracer import Tracer
from xlac.numpy._core import asarray
from xlac.api import compile as compile_function
from xlac.vectorize import vmap

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "stop_gradient"]


# ---------------------------------------------------------------- helpers

def _asarray(x):
    return asarray(x)


def _zeros_like(x: Tracer) -> Tracer:
    return ops.full(x.shape, 0, x.dtype)


def _eager(fn, **compile_kwargs):
    """``fn`` run through ``xlac.compile`` when called outside any trace (compiled once, lazily)."""
    compiled = None

    def call(*args, **kwargs):
        nonlocal compiled
        if current_trace() is not None:
            return fn(*args, **kwargs)
        if compiled is None:
            compiled = compile_function(fn, **compile_kwargs)
        return compiled(*args, **kwargs)
    return call


def _pure_call(fn, args: tuple):
    """``fn(*args)`` evaluated into the current trace, its writes to its arguments kept inside as every
    transform keeps them: the caller's arrays hold afterwards what they held before.

    >>> import numpy as np, xlac
    >>> def zero_after_use(x):
    ...     y = x * 2.0
    ...     x[...] = 0.0
    ...     return y
    >>> x = np.ones(2)
    >>> np.asarray(xlac.compile(lambda x: _pure_call(zero_after_use, (x,)))(x)).tolist(), x.tolist()
    ([2.0, 2.0], [1.0, 1.0])
    """
    sub = trace_subgraph(fn, args, {})
    leaves, _ = pytree.flatten((tuple(args), {}))
    outputs = inline(sub.graph, [_asarray(leaf) for leaf in leaves] + list(sub.lifted))
    return pytree.unflatten(sub.out_tree, outputs)


def _argnums_tuple(argnums, n_args: int, who: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not isinstance(i, int) or not -n_args <= i < n_args:
            raise ValueError(located(f"{who}: argnums {argnums!r} out of range for a function called with "
                                     f"{n_args} positional argument(s)"))
    return tuple(i % n_args for i in nums)


def _leaf_ranges(args: tuple) -> list[range]:
    """The range of flat leaves (of ``pytree.flatten((args, kwargs))``) that each positional arg holds."""
    ranges, start = [], 0
    for arg in args:
        n = pytree.flatten(arg)[1].num_leaves
        ranges.append(range(start, start + n))
        start += n
    return ranges


class _Linearized:
    """f traced and evaluated into the current trace, with its backward pass at hand."""

    def __init__(self, f, args, kwargs, has_aux: bool, who: str):
        sub = trace_subgraph(f, args, kwargs)
        leaves, _ = pytree.flatten((tuple(args), dict(kwargs)))
        self.inputs = [_asarray(leaf) for leaf in leaves] + list(sub.lifted)
        self.sub, self.has_aux, self.who = sub, has_aux, who
        self.trace = current_trace()
        outputs_tree = sub.out_tree
        if has_aux:
            if outputs_tree.kind not in ("tuple", "list") or len(outputs_tree.children) != 2:
                raise TypeError(located(f"{who} with has_aux=True needs a function returning a pair "
                                        f"(output, aux), got a result structured as {outputs_tree}"))
            self.out_tree, self.aux_tree = outputs_tree.children
        else:
            self.out_tree, self.aux_tree = outputs_tree, None
        self.n_out = self.out_tree.num_leaves

    def run(self, wrt: list[int]):
        outputs, self.backward = linearize_reverse(self.sub.graph, self.inputs, wrt)
        outputs = adopt_checks(self.sub, outputs)
        self.wrt = wrt
        self.outputs = outputs[:self.n_out]
        self.aux = pytree.unflatten(self.aux_tree, outputs[self.n_out:]) if self.has_aux else None
        return self

    def out(self):
        return pytree.unflatten(self.out_tree, self.outputs)

    def cotangents(self, out_cts: list) -> list[Tracer]:
        """Cotangents of the ``wrt`` inputs (zeros where none flows), in each input's dtype."""
        grads = self.backward(out_cts)
        return [g if g is not None else _zeros_like(self.inputs[i]) for g, i in zip(grads, self.wrt)]


def _check_float_inputs(lin: _Linearized, wrt: list[int], who: str) -> None:
    for i in wrt:
        dtype = lin.inputs[i].dtype
        if not is_differentiable(dtype):
            raise TypeError(located(
                f"{who} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                f"np.inexact), but got {dtypes.short_name(dtype)}. If you want to use Boolean- or "
                "integer-valued inputs, use vjp."))


# ---------------------------------------------------------------- grad / value_and_grad

def value_and_grad(f, argnums=0, has_aux: bool = False):
    """A function giving ``f``'s value and its gradient with respect to the positional argument(s)
    ``argnums`` (an int, or a tuple giving a tuple of gradients). ``f`` must return a real scalar (with
    ``has_aux=True``: a pair ``(scalar, aux)``, and the value is ``(scalar, aux)``).

    >>> import numpy as np, xlac.numpy as xnp
    >>> value, g = value_and_grad(lambda w, x: xnp.sum((x @ w) ** 2))(np.ones(2), np.eye(2))
    >>> float(value), np.asarray(g).tolist()
    (2.0, [2.0, 2.0])
    """
    def traced(*args, **kwargs):
        who = "grad"
        nums = _argnums_tuple(argnums, len(args), who)
        lin = _Linearized(f, args, kwargs, has_aux, who)
        ranges = _leaf_ranges(args)
        wrt = [i for n in nums for i in ranges[n]]
        _check_float_inputs(lin, wrt, who)
        lin.run(wrt)
        _check_scalar_output(lin, who)
        (out,) = lin.outputs
        grads = iter(lin.cotangents([ops.full((), 1, out.dtype)]))
        trees = [pytree.unflatten(pytree.flatten(args[n])[1], [next(grads) for _ in ranges[n]]) for n in nums]
        g = trees[0] if isinstance(argnums, int) else tuple(trees)
        return ((out, lin.aux) if has_aux else out), g
    return functools.wraps(f)(_eager(traced))


def _check_scalar_output(lin: _Linearized, who: str) -> None:
    if lin.n_out != 1 or lin.out_tree.kind != "leaf":
        raise TypeError(located(f"{who} requires a function returning one scalar, got a result structured "
                                f"as {lin.out_tree}"))
    (out,) = lin.outputs
    if out.shape != ():
        raise TypeError(located(f"Gradient only defined for scalar-output functions. Output had shape: "
                                f"{out.shape}."))
    if not dtypes.is_float(out.dtype):
        raise TypeError(located(f"grad requires real-valued outputs (output dtype that is a sub-dtype of "
                                f"np.floating), but got {dtypes.short_name(out.dtype)}."))


def grad(f, argnums=0, has_aux: bool = False):
    """The gradient of ``f`` (a function returning a real scalar) with respect to the positional
    argument(s) ``argnums``; with ``has_aux=True`` ``f`` returns ``(scalar, aux)`` and the gradient
    function returns ``(gradient, aux)``. Gradients of integer inputs are a TypeError, as in JAX.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(grad(lambda x: xnp.sum(x ** 3))(np.array([1.0, 2.0]))).tolist()
    [3.0, 12.0]
    >>> np.asarray(grad(grad(lambda x: x ** 3))(2.0)).item()
    12.0
    """
    both = value_and_grad(f, argnums, has_aux)

    def traced(*args, **kwargs):
        value, g = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return functools.wraps(f)(_eager(traced))


# ---------------------------------------------------------------- vjp

def vjp(f, *primals, has_aux: bool = False):
    """``(f(*primals), vjp_fn)``: ``vjp_fn(cotangent)`` (a pytree shaped like the output) returns a
    tuple with the cotangent of each primal, in its dtype (zeros for integer primals).

    ``vjp_fn(cotangents, batched=True)``: each leaf of ``cotangents`` has a leading axis of one length;
    row ``i`` of every result is the VJP of row ``i`` of the cotangents, all computed in one batched
    backward pass (``xlac.vmap`` of the backward pass, ``torch.autograd.grad(is_grads_batched=True)``).
    With ``has_aux=True`` ``f`` returns ``(out, aux)`` and ``vjp`` returns ``(out, vjp_fn, aux)``.

    >>> import numpy as np, xlac.numpy as xnp
    >>> out, vjp_fn = vjp(lambda x: x * 2.0, np.array([1.0, 2.0]))
    >>> np.asarray(vjp_fn(np.array([1.0, 10.0]))[0]).tolist()
    [2.0, 20.0]
    >>> np.asarray(vjp_fn(np.eye(2), batched=True)[0]).tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    """
    if current_trace() is None:
        return _eager_vjp(f, primals, has_aux)
    lin = _Linearized(f, primals, {}, has_aux, "vjp")
    ranges = _leaf_ranges(primals)
    lin.run([i for r in ranges for i in r])
    out = lin.out()
    fn = _VJPFunction(lin, primals, ranges)
    return (out, fn, lin.aux) if has_aux else (out, fn)


class _VJPFunction:
    """The ``vjp_fn`` of :func:`vjp` for a function traced in the current trace."""

    def __init__(self, lin: _Linearized, primals: tuple, ranges: list[range]):
        self.lin, self.ranges = lin, ranges
        self.primal_trees = [pytree.flatten(p)[1] for p in primals]

    def __call__(self, cotangents, batched: bool = False):
        trace = current_trace()
        if trace is None or not trace.encloses(self.lin.trace):
            raise RuntimeError(located("vjp_fn was called outside the function in which vjp traced it "
                                       "(call vjp and vjp_fn inside one compiled function, or both eagerly)"))
        leaves = _cotangent_leaves(self.lin, cotangents, batched)
        if batched:
            flat = vmap(lambda *cts: tuple(self.lin.cotangents(list(cts))))(*leaves)
        else:
            flat = self.lin.cotangents(leaves)
        flat = iter(flat)
        return tuple(pytree.unflatten(tree, [next(flat) for _ in r])
                     for tree, r in zip(self.primal_trees, self.ranges))


def _cotangent_leaves(lin: _Linearized, cotangents, batched: bool) -> list:
    leaves, tree = pytree.flatten(cotangents)
    if tree != lin.out_tree:
        raise TypeError(located(f"vjp_fn: the cotangent is structured as {tree}, but the function's output "
                                f"is structured as {lin.out_tree}"))
    converted, lengths = [], set()
    for ct, out in zip(leaves, lin.outputs):
        ct = _asarray(ct)
        shape = ct.shape[1:] if batched else ct.shape
        if shape != out.shape or (batched and ct.ndim == 0):
            what = "a leading batch axis and then " if batched else ""
            raise ValueError(located(f"vjp_fn: a cotangent of shape {ct.shape} for an output of shape "
                                     f"{out.shape} (expected {what}the output's shape)"))
        if batched:
            lengths.add(ct.shape[0])
        converted.append(ops.convert(ct, out.dtype) if is_differentiable(out.dtype) else None)
    if len(lengths) > 1:
        raise ValueError(located(f"vjp_fn(batched=True): cotangents with different batch sizes {sorted(lengths)}"))
    if batched:   # vmap needs arrays: integer outputs get a zero cotangent row
        converted = [ct if ct is not None else ops.full((lengths.pop() if lengths else 1,) + out.shape, 0,
                                                        out.dtype)
                     for ct, out in zip(converted, lin.outputs)]
    return converted


def _eager_vjp(f, primals, has_aux):

    out = compile_function(lambda *args: _pure_call(f, args))(*primals)
    aux = None
    if has_aux:
        out, aux = out

    def backward(cts, batched, *args):
        return vjp(f, *args, has_aux=has_aux)[1](cts, batched=batched)
    compiled = compile_function(backward, static_argnums=(1,))

    def vjp_fn(cotangents, batched: bool = False):
        return compiled(cotangents, bool(batched), *primals)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


# ---------------------------------------------------------------- jvp

def jvp(f, primals, tangents):
    """``(f(*primals), tangent_out)``: the output and its directional derivative along ``tangents``
    (a tuple shaped like ``primals``; each tangent has its primal's shape).

    >>> import numpy as np, xlac.numpy as xnp
    >>> y, t = jvp(xnp.sin, (np.array([0.0]),), (np.array([2.0]),))
    >>> np.asarray(t).tolist()
    [2.0]
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(located(f"jvp: primals and tangents must be tuples or lists, got "
                                f"{type(primals).__name__} and {type(tangents).__name__}"))
    return _jvp(f, tuple(primals), tuple(tangents))


def _jvp_traced(f, primals, tangents):
    p_leaves, p_tree = pytree.flatten(primals)
    t_leaves, t_tree = pytree.flatten(tangents)
    if p_tree != t_tree:
        raise TypeError(located(f"jvp: primal and tangent arguments must have equal structure, got "
                                f"{p_tree} and {t_tree}"))
    sub = trace_subgraph(f, primals, {})
    inputs = [_asarray(leaf) for leaf in p_leaves]
    tans = []
    for x, t in zip(inputs, t_leaves):
        t = _asarray(t)
        if t.shape != x.shape:
            raise ValueError(located(f"jvp: a tangent of shape {t.shape} for a primal of shape {x.shape}"))
        tans.append(ops.convert(t, x.dtype) if is_differentiable(x.dtype) else None)
    outputs, out_tans = forward(sub.graph, inputs + list(sub.lifted), tans + [None] * len(sub.lifted))
    outputs = adopt_checks(sub, outputs)
    out_tans = out_tans[:len(outputs)]
    out_tans = [t if t is not None else _zeros_like(o) for t, o in zip(out_tans, outputs)]
    return pytree.unflatten(sub.out_tree, outputs), pytree.unflatten(sub.out_tree, out_tans)


_jvp_cache: dict = {}


def _jvp(f, primals, tangents):
    if current_trace() is not None:
        return _jvp_traced(f, primals, tangents)
    compiled = compile_function(lambda p, t: _jvp_traced(f, p, t))
    return compiled(primals, tangents)


# ---------------------------------------------------------------- Jacobians

def _identity_rows(n: int, dtype) -> Tracer:
    rows, cols = ops.iota((n, n), np.int32, 0), ops.iota((n, n), np.int32, 1)
    return ops.convert(ops.compare(rows, cols, "EQ"), dtype)


def _basis(leaves: list[Tracer]) -> list[Tracer]:
    """For leaves of total size n: one (n, *leaf.shape) array per leaf; row k is the k-th unit vector."""
    n = sum(int(np.prod(x.shape, dtype=np.int64)) for x in leaves)
    out, start = [], 0
    for x in leaves:
        size = int(np.prod(x.shape, dtype=np.int64))
        dtype = x.dtype if is_differentiable(x.dtype) else np.dtype("float32")
        eye = _identity_rows(n, dtype)
        block = ops.slice(eye, (0, start), (n, start + size))
        out.append(ops.reshape(block, (n,) + x.shape))
        start += size
    return out


def _split_rows(stacked: Tracer, leaves: list[Tracer], trailing: tuple) -> list[Tracer]:
    """``stacked`` (n, *trailing) split by the sizes of ``leaves`` into arrays (*leaf.shape, *trailing)."""
    out, start = [], 0
    for x in leaves:
        size = int(np.prod(x.shape, dtype=np.int64))
        rows = ops.slice(stacked, (start,) + (0,) * len(trailing), (start + size,) + trailing)
        out.append(ops.reshape(rows, x.shape + trailing))
        start += size
    return out


def jacrev(f, argnums=0, has_aux: bool = False):
    """The Jacobian of ``f`` by reverse mode: one batched backward pass over the rows of the identity.
    For each output leaf of shape ``S`` and argument leaf of shape ``T`` the block has shape ``S + T``;
    the result has the output's structure, each leaf holding the argument(s)' structure.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(jacrev(lambda x: x ** 2)(np.array([1.0, 3.0]))).tolist()
    [[2.0, 0.0], [0.0, 6.0]]
    """
    def traced(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "jacrev")
        lin = _Linearized(f, args, kwargs, has_aux, "jacrev")
        ranges = _leaf_ranges(args)
        wrt = [i for n in nums for i in ranges[n]]
        _check_float_inputs(lin, wrt, "jacrev")
        lin.run(wrt)
        basis = _basis(lin.outputs)
        rows = vmap(lambda *cts: tuple(lin.cotangents(list(cts))))(*basis)   # each (n_out, *input shape)
        per_input = [_split_rows(r, lin.outputs, lin.inputs[i].shape) for r, i in zip(rows, wrt)]
        jac = _assemble(per_input, lin.outputs, args, nums, ranges, argnums, lin.out_tree)
        return (jac, lin.aux) if has_aux else jac
    return functools.wraps(f)(_eager(traced))


def _assemble(per_input, outputs, args, nums, ranges, argnums, out_tree):
    """The Jacobian pytree: the output's structure, each leaf holding the arguments' structure.
    ``per_input[j][k]`` is the block of input leaf j (in wrt order) and output leaf k."""
    blocks = []
    for k in range(len(outputs)):
        column = iter(per_input[j][k] for j in range(len(per_input)))
        trees = [pytree.unflatten(pytree.flatten(args[n])[1], [next(column) for _ in ranges[n]]) for n in nums]
        blocks.append(trees[0] if isinstance(argnums, int) else tuple(trees))
    return pytree.unflatten(out_tree, blocks)


def jacfwd(f, argnums=0, has_aux: bool = False):
    """The Jacobian of ``f`` by forward mode: one batched JVP over the columns of the identity; the
    same layout as :func:`jacrev`.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(jacfwd(lambda x: x[::-1] * 2.0)(np.array([1.0, 3.0]))).tolist()
    [[0.0, 2.0], [2.0, 0.0]]
    """
    def traced(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        ranges = _leaf_ranges(args)
        leaves, tree = pytree.flatten((tuple(args), dict(kwargs)))
        wrt = [i for n in nums for i in ranges[n]]
        primals = [_asarray(leaf) for leaf in leaves]
        for i in wrt:
            if not is_differentiable(primals[i].dtype):
                raise TypeError(located(f"jacfwd requires real- or complex-valued inputs, but got "
                                        f"{dtypes.short_name(primals[i].dtype)}."))

        def call(*flat):
            a, kw = pytree.unflatten(tree, list(flat))
            out = f(*a, **kw)
            return out if has_aux else (out, None)

        wrt_primals = [primals[i] for i in wrt]
        basis = _basis(wrt_primals)

        def pushforward(*tangent_rows):
            tans = [_zeros_like(p) for p in primals]
            for i, t in zip(wrt, tangent_rows):
                tans[i] = t
            (out, aux), (t_out, _) = _jvp_traced(lambda *flat: call(*flat), tuple(primals), tuple(tans))
            return pytree.flatten(t_out)[0]

        (out, aux) = _pure_call(call, tuple(primals))
        out_leaves, out_tree = pytree.flatten(out)
        columns = vmap(pushforward)(*basis)            # each (n_in, *output shape)
        per_output = []
        for col, o in zip(columns, out_leaves):
            split = _split_rows(col, wrt_primals, o.shape)     # (*input shape, *output shape)
            per_output.append([_move_input_axes_last(s, len(wrt_primals[j].shape))
                               for j, s in enumerate(split)])
        per_input = [[per_output[k][j] for k in range(len(out_leaves))] for j in range(len(wrt))]
        jac = _assemble(per_input, out_leaves, args, nums, ranges, argnums, out_tree)
        return (jac, aux) if has_aux else jac
    return functools.wraps(f)(_eager(traced))


def _move_input_axes_last(x: Tracer, n_input_axes: int) -> Tracer:
    perm = tuple(range(n_input_axes, x.ndim)) + tuple(range(n_input_axes))
    return ops.transpose(x, perm)


def hessian(f, argnums=0, has_aux: bool = False):
    """The Hessian of a scalar ``f``: ``jacfwd(jacrev(f))``.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(hessian(lambda x: xnp.sum(x ** 3))(np.array([1.0, 2.0]))).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    return jacfwd(jacrev(f, argnums, has_aux), argnums, has_aux)


# ---------------------------------------------------------------- stop_gradient

def stop_gradient(x):
    """``x`` (a pytree) with a zero derivative: transforms treat it as a constant.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(grad(lambda x: xnp.sum(x * stop_gradient(x)))(np.array([3.0]))).tolist()
    [3.0]
    """
    return _stop_gradient_eager(x)


def _stop_gradient_leaf(leaf):
    x = _asarray(leaf)
    return ops.bind(P.stop_gradient, x, weak=x.weak)


def _stop_gradient_tree(x):
    leaves, tree = pytree.flatten(x)
    return pytree.unflatten(tree, [_stop_gradient_leaf(leaf) for leaf in leaves])


_stop_gradient_eager = _eager(_stop_gradient_tree)
