"""Primitive: the declaration that every fact about an IR operation hangs off.

A primitive is declared once (in :mod:`xlac.ir.primitives`) with its type rule,
its default autocast class and, where it is one StableHLO op, that op. Other packages attach their rules to the same
object with :meth:`Primitive.register`: the lowering package its StableHLO
emitter, :mod:`xlac.passes.rules` its VJP, JVP and batching rules. A pass reads these attributes; no pass keeps a private list of
op names.

>>> from xlac.ir.types import TensorType
>>> neg = Primitive("neg_example", lambda x: x)
>>> neg.infer_types(TensorType((2,), np.dtype("float32")))
(f32[2],)
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np  # noqa: F401  (used by the docstring example)

from xlac.ir.autocast_classes import FOLLOW
from xlac.ir.types import TensorType


RULE_KINDS = ("emitter", "vjp", "jvp", "batch")      # every primitive has these (or an explicit refusal)
OPTIONAL_RULE_KINDS = ("view_rule", "region_rule", "vjp_forward")   # views; nodes with sub-graphs; residuals


class ShapeError(ValueError):
    """An operand's shape or dtype does not fit the primitive; raised by type rules."""


class Primitive:
    """An IR operation. ``type_rule(*operand_types, **attrs)`` returns the result type(s)."""

    def __init__(self, name: str, type_rule: Callable[..., Any], *, multiple_results: bool = False,
                 category: str = "", autocast: str = FOLLOW, autocast_by_op: dict | None = None,
                 stablehlo: str = ""):
        self.name = name
        self.type_rule = type_rule
        self.multiple_results = multiple_results
        self.category = category          # "unary", "binary", "compare", "reduce", ...
        # The default xlac.autocast class (see xlac.ir.autocast_classes), and for a primitive with an "op"
        # attribute (reduce) the classes of particular ops.
        self.autocast_class = autocast
        self.autocast_class_by_op = dict(autocast_by_op or {})
        # The StableHLO op this primitive is, one to one, with no attributes (e.g. "stablehlo.exponential"):
        # xlac.lowering gives it its emitter. "": the lowering registers an emitter of its own.
        self.stablehlo = stablehlo
        # The rules other packages attach, each once, through register(): the StableHLO emitter
        # (xlac.lowering), the VJP, JVP and batching rules (xlac.passes.rules).
        self.emitter: Callable | None = None
        self.vjp: Callable | None = None
        self.jvp: Callable | None = None
        self.batch: Callable | None = None
        # For a primitive whose result can view its operand 0: a ViewRule (xlac.ir.view_rules).
        self.view_rule = None
        # For a primitive whose nodes hold sub-graphs: ``region_rule(node)`` checks their signatures.
        self.region_rule = None
        # For a primitive whose VJP needs values computed inside it: ``vjp_forward(node, operands)`` evaluates
        # the node keeping them, returning (results, residuals); the VJP gets them as attrs["residuals"].
        self.vjp_forward = None

    @property
    def removed_by_functionalization(self) -> bool:
        """Whether this is a mutation primitive (``store``, ``copy``): it exists only in traced graphs, so
        autodiff and batching, which run on functionalized graphs, never need its rules."""
        return self.category == "mutation"

    def register(self, **rules: Callable) -> None:
        """Attach rules by kind (``emitter=``, ``vjp=``, ``jvp=``, ``batch=``); each kind once per primitive.

        >>> p = Primitive("twice_example", lambda x: x)
        >>> p.register(vjp=print)
        >>> p.register(vjp=print)
        Traceback (most recent call last):
        ValueError: twice_example: a second vjp rule; each primitive has one
        """
        for kind, rule in rules.items():
            if kind not in RULE_KINDS + OPTIONAL_RULE_KINDS:
                raise TypeError(f"{self.name}: no rule kind {kind!r}; the kinds are "
                                f"{', '.join(RULE_KINDS + OPTIONAL_RULE_KINDS)}")
            if getattr(self, kind) is not None:
                raise ValueError(f"{self.name}: a second {kind} rule; each primitive has one")
            setattr(self, kind, rule)

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
