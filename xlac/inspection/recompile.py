"""A compile's signature as text, and the cause of a recompile: what changed since the previous signature.

>>> import numpy as np
>>> first = Signature.of(["x"], [((4,), np.dtype("float32"), False)], {"n": 2})
>>> str(first)
'x:f32[4], n=2'
>>> second = Signature.of(["x"], [((8,), np.dtype("float32"), False)], {"n": 3})
>>> recompile_cause(None, first)
'first call'
>>> recompile_cause(first, second)
'new shape: x f32[4] -> f32[8]; new static value n=3 (was 2)'
"""
from __future__ import annotations

from dataclasses import dataclass, field

from xlac.ir import dtypes

__all__ = ["Signature", "recompile_cause", "spec_text"]

_PYTHON_SCALARS = {"bool": "bool", "int64": "int", "float64": "float", "complex128": "complex"}


def spec_text(spec) -> str:
    """``f32[8,128]`` for an array spec ``(shape, dtype, weak)``; ``float`` for a Python scalar."""
    shape, dtype, weak = spec
    if weak:
        return _PYTHON_SCALARS.get(dtype.name, dtypes.short_name(dtype))
    return f"{dtypes.short_name(dtype)}[{','.join(map(str, shape))}]"


@dataclass(frozen=True)
class Signature:
    """What one compile was for: each array argument's type by name, each static value, the autocast state."""

    arrays: dict[str, str]
    statics: dict[str, str] = field(default_factory=dict)
    autocast: str | None = None

    @classmethod
    def of(cls, paths, specs, statics=None, autocast=None) -> "Signature":
        """From argument paths and specs (``Traced.in_paths``, ``Traced.in_specs``), a mapping or pairs of
        static values, and the autocast state (anything; ``None`` for off)."""
        pairs = statics.items() if hasattr(statics, "items") else (statics or ())
        return cls({path: spec_text(spec) for path, spec in zip(paths, specs)},
                   {str(name): repr(value) for name, value in pairs},
                   None if autocast is None else str(autocast))

    def __str__(self) -> str:
        parts = [f"{name}:{text}" for name, text in self.arrays.items()]
        parts += [f"{name}={value}" for name, value in self.statics.items()]
        if self.autocast is not None:
            parts.append(f"autocast={self.autocast}")
        return ", ".join(parts)


def recompile_cause(previous: Signature | None, current: Signature) -> str:
    """Why ``current`` needed a compile when ``previous`` (this function's last compile) was cached."""
    if previous is None:
        return "first call"
    if list(previous.arrays) != list(current.arrays):
        return f"new arguments: ({', '.join(previous.arrays)}) -> ({', '.join(current.arrays)})"
    causes = []
    for name, text in current.arrays.items():
        old = previous.arrays[name]
        if old != text:
            kind = "dtype" if old.partition("[")[2] == text.partition("[")[2] else "shape"
            causes.append(f"new {kind}: {name} {old} -> {text}")
    for name, value in current.statics.items():
        old = previous.statics.get(name)
        if old != value:
            causes.append(f"new static value {name}={value}" + (f" (was {old})" if old is not None else ""))
    if previous.autocast != current.autocast:
        causes.append(f"autocast changed: {previous.autocast or 'off'} -> {current.autocast or 'off'}")
    return "; ".join(causes) or "same signature, not in the cache"
