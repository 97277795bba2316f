"""``xlac.numpy``: NumPy's API, written on xlac's primitives.

Inside ``@xlac.compile`` these functions record IR; outside they run eagerly on
the device and return ``xlac.Array``.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.maximum(np.array([1, 5]), 3))
array([3, 5])
"""
from xlac.numpy.dtypes import *  # noqa: F401,F403
from xlac.numpy.ufuncs import *  # noqa: F401,F403
from xlac.numpy.shapes import *  # noqa: F401,F403
from xlac.numpy.reductions import *  # noqa: F401,F403
from xlac.numpy.creation import *  # noqa: F401,F403
from xlac.numpy.contractions import *  # noqa: F401,F403
from xlac.numpy.indexing import *  # noqa: F401,F403
from xlac.numpy.index_write import *  # noqa: F401,F403
from xlac.numpy.inplace import *  # noqa: F401,F403
from xlac.numpy.sorting import *  # noqa: F401,F403
from xlac.numpy.manipulation import *  # noqa: F401,F403
from xlac.numpy.windows import *  # noqa: F401,F403
from xlac.numpy.statistics import *  # noqa: F401,F403
from xlac.numpy.array_api import *  # noqa: F401,F403
from xlac.numpy import fft, linalg  # noqa: F401,E402  (the xnp.fft and xnp.linalg namespaces)

# Every ufunc gets NumPy's methods (reduce, accumulate, reduceat, outer, at), built on the functions above.
from xlac.numpy.ufunc_methods import install_ufunc_methods as _install_ufunc_methods  # noqa: E402

_install_ufunc_methods()

# The array classes below this package get NumPy's operators, methods and protocol hooks from it.
from xlac.array import Array as _Array  # noqa: E402
from xlac.numpy.operators import install_array_methods as _install_array_methods  # noqa: E402
from xlac.trace.tracer import Tracer as _Tracer  # noqa: E402

_install_array_methods(_Tracer)
_install_array_methods(_Array)

# Values with a dynamic extent (x[i:j] with traced bounds) reach their rules through xlac.numpy's functions:
# importing the rules registers them.
from xlac.numpy import dynamic_extent_math as _dynamic_extent_rules  # noqa: E402,F401
