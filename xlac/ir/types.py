"""TensorType: the static type of every IR value, a shape and a dtype."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from xlac.errors import located, user_location
from xlac.ir import dtypes

_MAX_BYTES = np.iinfo(np.intp).max


@dataclass(frozen=True, slots=True)
class TensorType:
    """A statically shaped tensor type.

    >>> TensorType((8, 4), np.dtype("float32"))
    f32[8,4]
    """

    shape: tuple[int, ...]
    dtype: np.dtype

    def __post_init__(self):
        # XLA aborts the process on an element count that overflows int64; NumPy raises ValueError.
        if math.prod(self.shape) * self.dtype.itemsize > _MAX_BYTES:
            raise ValueError(located(f"array is too big; `arr.size * arr.dtype.itemsize` is larger than the "
                                     f"maximum possible size (shape {self.shape}, dtype {self.dtype}).",
                                     user_location(3)))     # skips the dataclass's generated __init__

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def with_dtype(self, dtype) -> "TensorType":
        return TensorType(self.shape, dtype)

    def with_shape(self, shape) -> "TensorType":
        return TensorType(tuple(shape), self.dtype)

    def mlir(self) -> str:
        """StableHLO spelling: ``tensor<8x4xf32>``."""
        return _mlir_spelling(tuple(self.shape), self.dtype)

    def __repr__(self) -> str:
        return f"{dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    __str__ = __repr__


@functools.lru_cache(maxsize=4096)
def _mlir_spelling(shape: tuple[int, ...], dtype: np.dtype) -> str:
    """``TensorType.mlir``: the lowering spells each type many times."""
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{dtypes.mlir_name(dtype)}>"


def scalar_type(dtype) -> TensorType:
    """The 0-d type of ``dtype``."""
    return TensorType((), np.dtype(dtype))
