"""Compiling Python as written: a source converter in the spirit of TensorFlow's AutoGraph.

``xlac.compile`` (and ``grad``, ``vmap`` and the other transforms) trace the converted form of the user's
function and of the user functions and methods it calls: ``if``/``elif``/``else``, conditional
expressions, ``and``/``or``/``not`` and chained comparisons on traced values become conditionals and
logical operations; ``max``/``min``/``pow`` of traced numbers and NumPy's creation functions
(``np.zeros`` filled with traced values, ``np.array([t1, t2])``) route to xlac. Concrete values keep
Python's behaviour, so a function converts to the same program it was.

- :mod:`xlac.convert.rewrite`: the syntax-tree rewrite.
- :mod:`xlac.convert.runtime`: the functions the rewritten code calls; behind them
  :mod:`xlac.convert.branches` (a traced ``if``), :mod:`xlac.convert.loops` (a ``while`` or ``for`` with a
  traced trip count; :mod:`xlac.convert.vectorized_loops`: a ``for`` whose iterations are independent), :mod:`xlac.convert.substitutes` (builtins, NumPy allocation) and
  :mod:`xlac.convert.numpy_random`.
- :mod:`xlac.convert.cache`: one conversion per code object; :func:`converted`, :func:`why_not_converted`.

>>> import numpy as np, xlac
>>> @xlac.compile
... def clipped_norm(x, limit):
...     n = np.sqrt((x * x).sum())
...     if n > limit:
...         x = x * (limit / n)
...     return x
>>> clipped_norm(np.array([3.0, 4.0]), 1.0).tolist()
[0.6000000000000001, 0.8]
"""
from xlac.convert.cache import converted, why_not_converted

__all__ = ["converted", "why_not_converted"]
