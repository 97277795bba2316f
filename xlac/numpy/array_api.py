"""The Python Array API standard (2024.12) on ``xlac.numpy``: version, inspection, and the standard's
names that NumPy spells differently (``concat``, ``permute_dims``, ``matrix_transpose``, ``unstack``,
``from_dlpack``, ``bool``) or whose keywords it lacks (``astype(copy=, device=)``).

``xlac.numpy`` is the namespace: ``x.__array_namespace__()`` returns it.

>>> import numpy as np, xlac.numpy as xnp
>>> xnp.__array_api_version__
'2024.12'
>>> np.asarray(xnp.concat([np.array([1, 2]), np.array([3])]))
array([1, 2, 3])
"""
from __future__ import annotations

import numpy as np

from xlac import runtime
from xlac.errors import located
from xlac.ir import dtypes as _dtypes
from xlac.numpy import dtypes as _dtype_functions
from xlac.numpy import shapes
from xlac.numpy._core import normalize_axis
from xlac.numpy.devices import check_device, known_devices, on_device, to_device
from xlac.numpy._dispatch import numpy_function, numpy_function_with_static
from xlac.numpy.shapes import as_array
from xlac.trace import ops
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer
from xlac.array import Array, asarray as device_array

__all__ = ["__array_api_version__", "__array_namespace_info__", "bool", "concat", "permute_dims",
           "matrix_transpose", "unstack", "astype", "from_dlpack"]

__array_api_version__ = "2024.12"
SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

# The standard's dtypes by name; xlac's float16 and bfloat16 work too, outside the standard.
DTYPES = {name: np.dtype(name) for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                            "uint32", "uint64", "float32", "float64", "complex64", "complex128")}
KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


# ---------------------------------------------------------------- inspection


class ArrayNamespaceInfo:
    """What ``__array_namespace_info__()`` returns: the capabilities, devices and dtypes of ``xlac.numpy``.

    >>> info = ArrayNamespaceInfo()
    >>> info.default_dtypes()["real floating"]
    dtype('float64')
    >>> sorted(info.dtypes(kind="unsigned integer"))
    ['uint16', 'uint32', 'uint64', 'uint8']
    """

    __module__ = "xlac.numpy"

    def capabilities(self) -> dict:
        """Boolean-mask indexing and the functions with data-dependent output shapes (``nonzero``,
        ``unique_*``) work on concrete arrays only, not inside a compiled function, so both are False,
        as in JAX; ``max dimensions`` is NumPy's, through which arrays reach the device."""
        return {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}

    def default_device(self):
        """The device arrays are made on when none is named."""
        return runtime.default_device()

    def devices(self) -> list:
        """The devices arrays can be placed on."""
        return known_devices()

    def default_dtypes(self, *, device=None) -> dict:
        """NumPy's defaults: float64, complex128, and int64 for integers and indices."""
        check_device(device, "default_dtypes")
        return {"real floating": np.dtype("float64"), "complex floating": np.dtype("complex128"),
                "integral": np.dtype("int64"), "indexing": np.dtype("int64")}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The standard's dtypes of ``kind`` (None, a kind name or a tuple of them), by name."""
        check_device(device, "dtypes")
        kinds = (kind,) if isinstance(kind, str) else kind
        if kinds is not None:
            unknown = [k for k in kinds if k not in KINDS]
            if unknown:
                raise ValueError(located(f"dtypes: unknown kind {unknown[0]!r}; the kinds are {list(KINDS)}"))
        return {name: d for name, d in DTYPES.items() if kinds is None or any(KINDS[k](d) for k in kinds)}


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The namespace's inspection object.

    >>> __array_namespace_info__().capabilities()["data-dependent shapes"]
    False
    """
    return ArrayNamespaceInfo()


def namespace_for(api_version):
    """``xlac.numpy`` for ``x.__array_namespace__(api_version=...)``; a version it does not implement raises."""
    if api_version is not None and api_version not in SUPPORTED_VERSIONS:
        raise ValueError(located(f"__array_namespace__: unsupported Array API version {api_version!r}; "
                                 f"xlac.numpy implements {SUPPORTED_VERSIONS[-1]} (and accepts "
                                 f"{', '.join(SUPPORTED_VERSIONS)})"))
    import xlac.numpy     # the package imports this module: the namespace is whole only once it has run
    return xlac.numpy


# ---------------------------------------------------------------- manipulation


def concat(arrays, /, *, axis=0):
    """The arrays joined along ``axis`` (flattened first when ``axis`` is None): ``concatenate``.

    >>> np.asarray(concat([np.zeros((1, 2)), np.ones((1, 2))], axis=None))
    array([0., 0., 1., 1.])
    """
    return shapes.concatenate(arrays, axis=axis)


def permute_dims(x, /, axes):
    """``x`` with its axes permuted: ``transpose(x, axes)``, ``axes`` required.

    >>> np.asarray(permute_dims(np.zeros((1, 2, 3)), (2, 0, 1))).shape
    (3, 1, 2)
    """
    return shapes.transpose(x, axes)


@numpy_function(view="writable")
def matrix_transpose(x, /):
    """``x`` with its last two axes swapped (a stack of transposed matrices).

    >>> np.asarray(matrix_transpose(np.zeros((4, 2, 3)))).shape
    (4, 3, 2)
    """
    a = as_array(x)
    if a.ndim < 2:
        raise ValueError(located(f"matrix_transpose: x must have at least 2 dimensions, got shape {a.shape}"))
    perm = list(range(a.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return ops.transpose(a, tuple(perm))


@numpy_function_with_static("axis")
def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple: the inverse of ``stack``.

    >>> [np.asarray(s).tolist() for s in unstack(np.array([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    a = as_array(x)
    if a.ndim == 0:
        raise ValueError(located("unstack: x must have at least 1 dimension, got a 0-d array"))
    axis = normalize_axis(axis, a.ndim, "unstack")
    return tuple(a[(slice(None),) * axis + (i,)] for i in range(a.shape[axis]))


# ---------------------------------------------------------------- dtypes and devices


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` converted to ``dtype`` with NumPy's casting, on ``device``; ``copy=False`` returns ``x``
    itself when it already has ``dtype`` (and lives on ``device``).

    >>> np.asarray(astype(np.array([1.7, -1.7]), np.int32))
    array([ 1, -1], dtype=int32)
    """
    target = _dtypes.canonical(dtype)
    if not copy and _is_array(x) and x.dtype == target and on_device(x, device):
        return x
    result = _dtype_functions.astype(x, target)
    return result if device is None else to_device(result, device)


def from_dlpack(x, /, *, device=None, copy=None):
    """An array holding the data of ``x``, any object with ``__dlpack__`` (an ``xlac.Array`` is kept as it is
    unless ``copy=True`` or another ``device`` asks for a new one).

    Deviation: data from another library is copied through host memory, so ``copy=False`` works only for
    ``xlac.Array`` inputs and raises ValueError for others.

    >>> np.asarray(from_dlpack(np.arange(3)))
    array([0, 1, 2])
    """
    if isinstance(x, (Array, Tracer)):
        if copy is False and not on_device(x, device):
            raise ValueError(located(f"from_dlpack: copy=False, but the array lives on {x.device}, not {device}"))
        result = _dtype_functions.astype(x, x.dtype) if copy else x
        return result if device is None else to_device(result, device)
    if copy is False:
        raise ValueError(located(f"from_dlpack: copy=False, but xlac copies data from "
                                 f"{type(x).__name__} through host memory"))
    if not hasattr(x, "__dlpack__"):
        raise TypeError(located(f"from_dlpack: expected an object with __dlpack__, got {type(x).__name__}"))
    host = np.from_dlpack(x, device="cpu", copy=True)
    if current_trace() is not None:
        return _dtype_functions.astype(host, host.dtype)
    return device_array(host, device=device)


def _is_array(x) -> bool:
    return isinstance(x, (Array, Tracer))


bool = np.bool_  # noqa: A001  (the standard's name for the boolean dtype; defined last, after the code above)
