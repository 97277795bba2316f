"""Array manipulation and the numerical helpers array programs use: roll, tile, repeat, pad, diff,
insert/delete, interp, convolve, isclose and friends, with NumPy 2's values, dtypes and errors.

Counts, widths, positions and conditions that decide a result's shape (``repeats``, ``pad_width``,
the ``obj`` of insert/delete, compress's ``condition``) are static: Python values or NumPy arrays,
not traced ones.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.roll(np.arange(5), 2))
array([3, 4, 0, 1, 2])
>>> np.asarray(xnp.pad(np.array([1, 2, 3]), 2, mode="reflect"))
array([3, 2, 1, 2, 3, 2, 1])
"""
from xlac.numpy.manipulation import bit_packing, elementwise, index_tricks, numerics, padding, rearranging
from xlac.numpy.manipulation.bit_packing import *  # noqa: F401,F403
from xlac.numpy.manipulation.elementwise import *  # noqa: F401,F403
from xlac.numpy.manipulation.index_tricks import *  # noqa: F401,F403
from xlac.numpy.manipulation.numerics import *  # noqa: F401,F403
from xlac.numpy.manipulation.padding import *  # noqa: F401,F403
from xlac.numpy.manipulation.rearranging import *  # noqa: F401,F403

__all__ = [*rearranging.__all__, *padding.__all__, *numerics.__all__, *elementwise.__all__, *index_tricks.__all__,
           *bit_packing.__all__]
