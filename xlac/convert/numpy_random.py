"""NumPy's random numbers inside a compiled function: fresh draws at every call.

Traced as written, ``np.random.rand(3)`` inside a compiled function runs once, while tracing, and its
numbers become constants: a dropout mask that never changes. Converted, a call to one of NumPy's legacy
global functions (``np.random.rand``, ``randn``, ``normal``, ...) or to a method of a
``np.random.Generator`` draws from a key that xlac carries between calls as implicit state: each draw
splits the key, and the advanced key is written back after the call. The key of the global functions is
seeded from NumPy's global state, and a Generator's from the Generator, when first traced (one draw
from each). The numbers are ``xlac.random``'s (Threefry), not NumPy's bit for bit. A NumPy random
function without an xlac counterpart raises instead of freezing its numbers.

>>> import numpy as np, xlac
>>> noise = xlac.compile(lambda x: x + np.random.normal(size=x.shape))
>>> bool((noise(np.zeros(3)) != noise(np.zeros(3))).all())
True
"""
from __future__ import annotations

import threading

import numpy as np

import xlac.random as xr
from xlac.array import asarray as device_array
from xlac.errors import UnsupportedError, located
from xlac.numpy._core import writable

_GLOBAL_STATE = np.random.mtrand._rand          # the RandomState behind np.random.rand and friends
F64 = np.dtype("float64")


class _Stream:
    """A key carried across calls; each draw takes a fresh key from it and advances it."""

    def __init__(self, seed: int):
        self.key = device_array(np.array([0, seed], np.uint32))

    def next_key(self):
        carried = writable(self.key, "np.random")       # the implicit argument standing for the key
        keys = xr.split(carried)
        carried[...] = keys[0]
        return keys[1]


_lock = threading.Lock()
_global_stream: list[_Stream] = []
# id of a Generator -> (the Generator, its stream); Generators take no weak references, so each one a
# compiled function drew from is kept alive with its stream.
_generator_streams: dict[int, tuple[np.random.Generator, _Stream]] = {}


def _stream_of(source) -> _Stream:
    with _lock:
        if source is _GLOBAL_STATE:
            if not _global_stream:
                _global_stream.append(_Stream(int(np.random.randint(2 ** 31))))
            return _global_stream[0]
        entry = _generator_streams.get(id(source))
        if entry is None:
            entry = _generator_streams[id(source)] = (source, _Stream(int(source.integers(2 ** 31))))
        return entry[1]


def _shape(size, *params) -> tuple:
    if size is None:
        return np.broadcast_shapes(*(np.shape(p) for p in params)) if params else ()
    return tuple(size) if isinstance(size, (tuple, list)) else (int(size),)


def _uniform(stream, low=0.0, high=1.0, size=None):
    shape = _shape(size, low, high)
    return low + (high - low) * xr.uniform(stream.next_key(), shape, F64)


def _normal(stream, loc=0.0, scale=1.0, size=None):
    return loc + scale * xr.normal(stream.next_key(), _shape(size, loc, scale), F64)


def _standard_normal(stream, size=None, dtype=F64):
    return xr.normal(stream.next_key(), _shape(size), dtype)


def _random(stream, size=None, dtype=F64):
    return xr.uniform(stream.next_key(), _shape(size), dtype)


def _exponential(stream, scale=1.0, size=None):
    return scale * xr.exponential(stream.next_key(), _shape(size, scale), F64)


def _integers(stream, low, high=None, size=None, dtype=np.int64, endpoint=False):
    low, high = (0, low) if high is None else (low, high)
    return xr.randint(stream.next_key(), _shape(size, low, high), low, high + 1 if endpoint else high, dtype)


_LEGACY = {
    "rand": lambda s, *dims: _random(s, dims),
    "randn": lambda s, *dims: _standard_normal(s, dims),
    "random": _random, "random_sample": _random, "ranf": _random, "sample": _random,
    "uniform": _uniform, "normal": _normal, "standard_normal": _standard_normal, "exponential": _exponential,
    "randint": lambda s, low, high=None, size=None, dtype=int: _integers(s, low, high, size, dtype),
}
_GENERATOR = {"random": _random, "uniform": _uniform, "normal": _normal, "standard_normal": _standard_normal,
              "exponential": _exponential, "integers": _integers}


def replacement(fn):
    """What runs instead of ``fn`` while tracing when ``fn`` draws NumPy random numbers (a global
    ``np.random`` function or a Generator's method), or None for any other function."""
    source = getattr(fn, "__self__", None)
    if source is _GLOBAL_STATE:
        table = _LEGACY
    elif isinstance(source, np.random.Generator):
        table = _GENERATOR
    else:
        return None
    name = getattr(fn, "__name__", "")
    draw = table.get(name)
    if draw is None:
        where = "np.random" if table is _LEGACY else "Generator"
        raise UnsupportedError(located(
            f"{where}.{name} inside a compiled function would draw its numbers once, while tracing, and "
            f"repeat them at every call; it has no xlac counterpart yet. Supported: "
            f"{', '.join(sorted(table))}; or use xlac.random with a key argument"))
    return lambda *args, **kwargs: draw(_stream_of(source), *args, **kwargs)
