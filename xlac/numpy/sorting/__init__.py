"""Sorting, searching, counting, set operations and order statistics, with NumPy 2's values and dtypes.

Every sort is stable and orders as NumPy does: NaNs after every number, -0.0 equal to 0.0, complex
numbers by real part then imaginary part (those with NaN parts last). Indices are int64 (NumPy's intp).

Results whose size depends on the data (``unique``, the set functions, ``nonzero``, ``bincount``) need a
static size inside a compiled function (``size=`` / ``length=``, as in JAX); outside one they count it
first on the concrete data and return exactly NumPy's result.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.sort(np.array([3.0, np.nan, -1.0, 2.0])))
array([-1.,  2.,  3., nan])
>>> np.asarray(xnp.unique(np.array([3, 1, 3, 2])))
array([1, 2, 3])
"""
from xlac.numpy.sorting import counting, order, quantiles, searching, sets
from xlac.numpy.sorting.counting import *  # noqa: F401,F403
from xlac.numpy.sorting.order import *  # noqa: F401,F403
from xlac.numpy.sorting.quantiles import *  # noqa: F401,F403
from xlac.numpy.sorting.quantiles import QUANTILE_METHODS  # noqa: F401
from xlac.numpy.sorting.searching import *  # noqa: F401,F403
from xlac.numpy.sorting.sets import *  # noqa: F401,F403
from xlac.numpy.sorting.sets import UniqueAllResult, UniqueCountsResult, UniqueInverseResult  # noqa: F401

__all__ = [*order.__all__, *searching.__all__, *counting.__all__, *sets.__all__, *quantiles.__all__]
