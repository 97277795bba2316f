"""Autocast keeps a region's signature: a loop's carries and a conditional's results come out of the body in
the dtype they were traced with (cast back, counted in the report), so ``fori_loop``, ``while_loop``, ``scan``,
``cond`` and converted Python loops and ``if``s run under ``xlac.autocast`` and return float32 as without it.

Values are checked against NumPy in float64 within a bound derived from the computation: each bfloat16
rounding is off by at most u = 2**-8 relative; a dot product of n terms of bfloat16 inputs, accumulated in
bfloat16, by at most (n + 2) u |h| @ |w| (the inputs' roundings and gamma_n of the sum), and its result by u
more; tanh is 1-Lipschitz with |tanh| <= 1, so it adds the bound of its input and one rounding of u.
"""
import numpy as np
import pytest

import xlac
import xlac.numpy as xnp

U = 2.0 ** -8                 # bfloat16's unit roundoff (8 significant bits)
RNG = np.random.default_rng(0)
W = (RNG.standard_normal((8, 8)) / 3).astype(np.float32)
X = RNG.standard_normal((4, 8)).astype(np.float32)
STEPS = 3


def tanh_steps(x, w, steps):
    """NumPy's ``h = tanh(h @ w)`` ``steps`` times in float64, and a bound on the bfloat16 error of each."""
    h, bound = x.astype(np.float64), np.zeros(x.shape)
    for _ in range(steps):
        product = h @ w
        n = w.shape[0]
        bound = bound @ np.abs(w) + (n + 2) * U * ((np.abs(h) + bound) @ np.abs(w)) \
            + U * (np.abs(product) + bound @ np.abs(w))
        h = np.tanh(product)
        bound = bound + U
    return h, bound * 1.01


def assert_within(got, expected, bound):
    err = np.abs(np.asarray(got).astype(np.float64) - expected)
    assert (err <= bound).all(), f"errors {err[err > bound]} over their bounds {bound[err > bound]}"


def fori(x, w):
    with xlac.autocast():
        return xlac.fori_loop(0, STEPS, lambda i, h: xnp.tanh(h @ w), x)


def fori_traced_bound(x, w, n):
    with xlac.autocast():
        return xlac.fori_loop(0, n, lambda i, h: xnp.tanh(h @ w), x)


def while_loop(x, w):
    with xlac.autocast():
        return xlac.while_loop(lambda c: c[0] < STEPS, lambda c: (c[0] + 1, xnp.tanh(c[1] @ w)), (0, x))[1]


def scan(x, w):
    with xlac.autocast():
        return xlac.scan(lambda h, _: (xnp.tanh(h @ w), None), x, None, length=STEPS)[0]


def python_for(x, w, n):                 # a traced trip count: the converter rolls it into one loop
    with xlac.autocast():
        h = x
        for _ in range(n):
            h = np.tanh(h @ w)
        return h


def python_while(x, w):
    with xlac.autocast():
        h, k = x, 0
        while h.sum() < 1e6 and k < STEPS:
            h = np.tanh(h @ w)
            k += 1
        return h


LOOPS = {"fori_loop": (fori, ()), "fori_loop, traced bound": (fori_traced_bound, (STEPS,)),
         "while_loop": (while_loop, ()), "scan": (scan, ()), "Python for": (python_for, (STEPS,)),
         "Python while": (python_while, ())}


@pytest.mark.parametrize("name", LOOPS)
def test_a_carry_keeps_its_dtype_and_the_loop_computes_numpys_values(name):
    fn, extra = LOOPS[name]
    got = xlac.compile(fn)(X, W, *extra)
    expected, bound = tanh_steps(X, W, STEPS)
    assert got.dtype == np.float32                      # as without autocast
    assert_within(got, expected, bound)
    assert not (np.abs(tanh_steps(X, W, STEPS - 1)[0] - expected) <= bound).all()    # the bound tells steps apart
    assert "bf16[4,8]" in str(xlac.compile(fn).trace(X, W, *extra).ir("final"))     # it did run in bfloat16


def test_the_cast_back_at_the_carry_is_counted_in_the_report():
    report = xlac.compile(fori).trace(X, W).ir("autocast").report
    assert report["outputs_cast_back"] == 1 and report["ops_lowered"] == 1
    report = xlac.compile(while_loop).trace(X, W).ir("autocast").report
    assert report["outputs_cast_back"] == 1


def product_and_bound(x, w):
    """``x @ w`` in float64 and the bound of its bfloat16 error (one contraction, see the module's docstring)."""
    product = x.astype(np.float64) @ w
    return product, ((w.shape[0] + 2) * U * (np.abs(x) @ np.abs(w)) + U * np.abs(product)) * 1.01


def cond_branches(x, w):
    with xlac.autocast():
        return xlac.cond(x.sum() > 0, lambda h: h @ w, lambda h: h * 2, x)


def converted_if(x, w):
    with xlac.autocast():
        if x.sum() > 0:
            h = x @ w
        else:
            h = x * 2
        return h


@pytest.mark.parametrize("fn", [cond_branches, converted_if], ids=["cond", "converted if"])
def test_branches_return_their_declared_dtype(fn):
    xs = np.abs(X)
    got = xlac.compile(fn)(xs, W)
    assert got.dtype == np.float32
    assert_within(got, *product_and_bound(xs, W))
    np.testing.assert_array_equal(np.asarray(xlac.compile(fn)(-xs, W)), -xs * 2)


def test_a_carry_is_named_as_the_user_wrote_it():
    def one_array(x):
        return xlac.fori_loop(0, 2, lambda i, h: h.astype(np.int32), x)

    def a_tuple(x):
        return xlac.fori_loop(0, 2, lambda i, c: (c[0], c[1].astype(np.int32)), (x, x))

    def while_one_array(x):
        return xlac.while_loop(lambda h: h.sum() < 10, lambda h: h.astype(np.int32), x)
    line = one_array.__code__.co_firstlineno + 1
    with pytest.raises(TypeError, match=rf"fori_loop: the carry init_val is f32\[4,8\] going in and i32\[4,8\] "
                                        rf"coming out; it must keep its shape and dtype\n  at .*:{line}"):
        xlac.compile(one_array)(X)
    with pytest.raises(TypeError, match=r"fori_loop: the carry init_val\[1\] is f32\[4,8\] going in and i32"):
        xlac.compile(a_tuple)(X)
    with pytest.raises(TypeError, match=r"while_loop: the carry init_val is f32\[4,8\] going in and i32"):
        xlac.compile(while_one_array)(X)
