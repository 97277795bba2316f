"""Elementwise math with NumPy 2's broadcasting, promotion (NEP 50) and result dtypes.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.add(np.array([1, 2], np.int8), 3))
array([4, 5], dtype=int8)
"""
from xlac.numpy.ufuncs.machinery import ufunc  # noqa: F401  (used by xlac.numpy.dtypes)
from xlac.numpy.ufuncs.arithmetic import *  # noqa: F401,F403
from xlac.numpy.ufuncs.float_math import *  # noqa: F401,F403
from xlac.numpy.ufuncs.comparison import *  # noqa: F401,F403
from xlac.numpy.ufuncs.bitwise import *  # noqa: F401,F403
from xlac.numpy.ufuncs.float_bits import *  # noqa: F401,F403
from xlac.numpy.ufuncs.matrix_vector import *  # noqa: F401,F403
from xlac.numpy.ufuncs.selection import *  # noqa: F401,F403
from xlac.numpy.ufuncs import arithmetic, bitwise, comparison, float_bits, float_math, matrix_vector, selection

__all__ = (arithmetic.__all__ + float_math.__all__ + comparison.__all__ + bitwise.__all__ + float_bits.__all__
           + matrix_vector.__all__ + selection.__all__)
