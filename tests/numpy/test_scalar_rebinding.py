"""A 0-d result that NumPy gives as a scalar (a reduction, an element, a product of vectors, a ufunc of
scalars) is rebound by ``t += 1``, as NumPy's scalars are, so another name bound to it keeps its value; a
0-d array made by a creation function is written in place, as NumPy's 0-d arrays are."""
import numpy as np
import pytest

import xlac


def reduction(x):
    t = x.sum(); u = t; t += 1
    return u, t


def element(x):
    s = x[0] % 5; w = s; s += 2
    return w, s


def vector_product(x):
    d = x @ x; e = d; d *= 2
    return e, d


def ufunc_of_a_scalar(x):
    m = np.tanh(x.max()); n = m; m -= 1
    return n, m


def zero_d_array(x):
    z = np.zeros(()); y = z; z += x[1]
    c = np.array(x[2]); b = c; c *= 3
    w = np.where(x[0] > 0, x[1], x[2]); v = w; w += 1
    return y, z, b, c, v, w


@pytest.mark.parametrize("fn", [reduction, element, vector_product, ufunc_of_a_scalar, zero_d_array])
def test_augmented_assignment_on_zero_d_values_binds_as_numpy(fn):
    x = np.array([3.0, 1.5, -2.0, 4.0])
    for got, want in zip(xlac.compile(fn)(x), fn(x)):     # a wrong binding is off by 1 or more
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13, atol=1e-15)


def test_a_zero_d_argument_written_through_out_stays_an_array():
    def program(p0, p1):
        np.multiply(p0, 2, out=p1)          # returns p1 itself: still the caller's 0-d array
        p0 *= False
        p1 += 1
    for same in (True, False):
        a, c = np.array(1.5 + 2j), np.array(3.0 + 1j)
        b, d = a.copy(), c.copy()
        program(a, a if same else c)
        xlac.compile(program)(b, b if same else d)
        np.testing.assert_array_equal(b, a)
        np.testing.assert_array_equal(d, c)
