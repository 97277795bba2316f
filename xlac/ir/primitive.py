"""Primitive: the declaration that every fact about an IR operation hangs off.

A primitive is declared once (in :mod:`xlac.ir.primitives`) with its type rule.
Other packages attach their facts to the same object: the lowering package its
StableHLO emitter, later the autodiff package its VJP and JVP rules, the
batching pass its batching rule, the autocast pass its class. A pass reads
these attributes; no pass keeps a private list of op names.

>>> from xlac.ir.types import TensorType
>>> neg = Primitive("neg_example", lambda x: x)
>>> neg.infer_types(TensorType((2,), np.dtype("float32")))
(f32[2],)
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np  # noqa: F401  (used by the docstring example)

from xlac.ir.types import TensorType


class ShapeError(ValueError):
    """An operand's shape or dtype does not fit the primitive; raised by type rules."""


class Primitive:
    """An IR operation. ``type_rule(*operand_types, **attrs)`` returns the result type(s)."""

    def __init__(self, name: str, type_rule: Callable[..., Any], *, multiple_results: bool = False,
                 category: str = ""):
        self.name = name
        self.type_rule = type_rule
        self.multiple_results = multiple_results
        self.category = category          # "unary", "binary", "compare", "reduce", ...
        self.emitter: Callable | None = None    # set by xlac.lowering
        self.vjp: Callable | None = None        # set by xlac.passes.autodiff
        self.jvp: Callable | None = None
        self.batch: Callable | None = None      # set by xlac.passes.batching
        self.autocast_class: str | None = None  # set by xlac.passes.autocast

    def infer_types(self, *operand_types: TensorType, **attrs) -> tuple[TensorType, ...]:
        """Result types of applying this primitive; raises ShapeError when operands do not fit."""
        out = self.type_rule(*operand_types, **attrs)
        return tuple(out) if self.multiple_results else (out,)

    def __repr__(self) -> str:
        return self.name


CATALOG: dict[str, Primitive] = {}


def declare(name: str, type_rule: Callable[..., Any], **kwargs) -> Primitive:
    """Create a primitive and enter it in the catalog."""
    if name in CATALOG:
        raise ValueError(f"primitive {name!r} declared twice")
    prim = Primitive(name, type_rule, **kwargs)
    CATALOG[name] = prim
    return prim
