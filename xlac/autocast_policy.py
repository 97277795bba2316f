"""``xlac.autocast``: torch.autocast-style mixed precision, done by an IR pass with an editable policy.

Inside ``with xlac.autocast():`` every ``dot_general`` (``matmul``, ``@``, ``einsum``,
``dot``, ``tensordot``, ``inner``, ``vdot``, ``outer``, ``vecdot``) runs in bfloat16,
numerically sensitive operations (exp, log, pow, sums, means, var, std, ...) run in
float32, and operations that combine several operands take the widest floating
dtype among them. Only float16, bfloat16 and float32 values are touched; float64,
integers and booleans never are. The policy says which class each primitive and
each ``xlac.numpy`` function is in; ``print(policy)`` shows it and
``policy.with_changes(...)`` edits a copy. The work is done by
:mod:`xlac.passes.autocast` on the traced IR.

>>> import numpy as np, xlac, xlac.numpy as xnp
>>> @xlac.compile
... def f(x, w):
...     with xlac.autocast():
...         h = x @ w                 # bfloat16
...         return h, xnp.exp(h)      # exp runs in float32
>>> h, e = f(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
>>> str(h.dtype), str(e.dtype)
('bfloat16', 'float32')
"""
from __future__ import annotations

import functools
import threading
from dataclasses import dataclass

import numpy as np

from xlac.ir import dtypes
from xlac.ir import primitives_fft, primitives_linalg  # noqa: F401  (their primitives declare classes too)
from xlac.ir.autocast_classes import CLASSES, FLOAT32, FOLLOW, KEEP, LOWER_PRECISION, MEANING, PROMOTE
from xlac.ir.primitive import CATALOG
from xlac.trace.state import autocast_scope
import xlac.numpy as xnp

__all__ = ["autocast", "AutocastPolicy", "AutocastState", "DEFAULT_POLICY", "CLASSES"]



def _primitive_defaults() -> dict:
    """The class each primitive declares (``declare(..., autocast=...)``), by name; ``reduce:<op>`` keys for
    the classes of particular reduce ops. Primitives in ``follow`` are left out."""
    table = {}
    for prim in CATALOG.values():
        if prim.autocast_class != FOLLOW:
            table[prim.name] = prim.autocast_class
        table.update({f"{prim.name}:{op}": cls for op, cls in prim.autocast_class_by_op.items()})
    return table


# xlac.numpy function names: every node a call of the function emits (its ``origin``) is in the class.
_DEFAULT_FUNCTIONS = {name: FLOAT32 for name in (
    "sum", "prod", "nansum", "nanprod", "mean", "nanmean", "var", "std", "nanvar", "nanstd",
    "cumsum", "cumprod", "exp", "expm1", "exp2", "log", "log2", "log10", "log1p", "power", "reciprocal",
    "sinh", "cosh", "tan", "arcsin", "arccos", "logaddexp", "logaddexp2",
    "norm",
    # linear algebra: decompositions and solves lose too much in 16 bits (their inner matmuls included)
    "solve", "inv", "det", "slogdet", "svd", "svdvals", "pinv", "lstsq", "eigh", "eigvalsh", "qr", "cholesky",
    "cond", "matrix_rank", "matrix_norm", "vector_norm", "tensorsolve", "tensorinv")}


def _check_class(key: str, cls: str) -> str:
    if cls not in CLASSES:
        raise ValueError(f"autocast policy: class {cls!r} for {key!r} is not one of {', '.join(CLASSES)}")
    return cls


def _check_primitive(name: str) -> str:
    base, _, op = name.partition(":")
    if base not in CATALOG or (op and base != "reduce"):
        raise ValueError(f"autocast policy: {name!r} is not a primitive (primitives: "
                         f"{', '.join(sorted(CATALOG))}; reductions also as 'reduce:sum', 'reduce:max', ...)")
    return name


def _check_function(name: str, known) -> str:
    if name not in known and not hasattr(getattr(xnp, name, None), "__wrapped_numpy__"):
        raise ValueError(f"autocast policy: {name!r} is not an xlac.numpy function")
    return name


def _frozen(table: dict) -> tuple:
    return tuple(sorted(table.items()))


@dataclass(frozen=True)
class AutocastPolicy:
    """Which autocast class each primitive and each ``xlac.numpy`` function is in. Immutable and hashable.

    A node's class is its ``xlac.numpy`` function's entry if there is one, else its primitive's
    (``reduce:<op>`` before ``reduce``), else ``follow``. Classes: ``lower_precision``, ``float32``,
    ``promote``, ``follow``, ``keep``.

    >>> import xlac
    >>> p = xlac.AutocastPolicy().with_changes(einsum="float32")
    >>> p.class_of("dot_general", origin="einsum"), p.class_of("dot_general", origin="matmul")
    ('float32', 'lower_precision')
    >>> p == xlac.AutocastPolicy(), hash(p) == hash(p.with_changes())
    (False, True)
    """

    primitives: tuple = _frozen(_primitive_defaults())
    functions: tuple = _frozen(_DEFAULT_FUNCTIONS)

    def __post_init__(self):
        for key, cls in self.primitives + self.functions:
            _check_class(key, cls)

    def class_of(self, primitive: str, origin: str = "", op: str = "") -> str:
        """The class of a node of ``primitive`` emitted by the xlac.numpy function ``origin`` (``op``: a
        reduction's op)."""
        functions, primitives = dict(self.functions), dict(self.primitives)
        if origin in functions:
            return functions[origin]
        if op and f"{primitive}:{op}" in primitives:
            return primitives[f"{primitive}:{op}"]
        return primitives.get(primitive, FOLLOW)

    def with_changes(self, primitives: dict | None = None, functions: dict | None = None,
                     **by_function) -> "AutocastPolicy":
        """A copy with classes changed: ``primitives={"dot_general": "float32"}``, ``functions={"einsum":
        "float32"}`` or, for functions, keywords (``einsum="float32"``). A class of None removes the entry.

        >>> import xlac
        >>> xlac.AutocastPolicy().with_changes(primitives={"tan": None}).class_of("tan")
        'follow'
        """
        prims, funcs = dict(self.primitives), dict(self.functions)
        for table, changes, check in ((prims, primitives or {}, _check_primitive),
                                      (funcs, {**(functions or {}), **by_function},
                                       lambda n: _check_function(n, funcs))):
            for name, cls in changes.items():
                check(name)
                if cls is None:
                    table.pop(name, None)
                else:
                    table[name] = _check_class(name, cls)
        return AutocastPolicy(_frozen(prims), _frozen(funcs))

    def __str__(self) -> str:
        prims, funcs = dict(self.primitives), dict(self.functions)
        lines = ["AutocastPolicy: only float16/bfloat16/float32 values are cast; "
                 "float64, integers and booleans never are."]
        for cls in CLASSES:
            lines.append(f"{cls}: {MEANING[cls]}")
            named_p = sorted(k for k, c in prims.items() if c == cls)
            named_f = sorted(k for k, c in funcs.items() if c == cls)
            if cls == FOLLOW:
                named_p.append("(every primitive not listed)")
            lines += _wrapped("  primitives: ", named_p) + _wrapped("  functions:  ", named_f)
        return "\n".join(lines)


def _wrapped(head: str, names: list[str], width: int = 100) -> list[str]:
    if not names:
        return []
    lines, line = [], head
    for name in names:
        if len(line) + len(name) + 1 > width and line.strip():
            lines.append(line.rstrip())
            line = " " * len(head)
        line += name + " "
    lines.append(line.rstrip())
    return lines


DEFAULT_POLICY = AutocastPolicy()


@dataclass(frozen=True)
class AutocastState:
    """What one ``xlac.autocast`` region asks for; recorded on every node traced inside it."""

    dtype: np.dtype
    enabled: bool
    policy: AutocastPolicy
    accumulate: np.dtype | None = None


_LOWER_DTYPES = (np.dtype("float16"), dtypes.bfloat16)


def _lower_dtype(dtype) -> np.dtype:
    dt = dtypes.canonical(dtype)
    if dt not in _LOWER_DTYPES:
        raise ValueError(f"xlac.autocast: dtype must be bfloat16 or float16, got {dt}")
    return dt


def _accumulate_dtype(accumulate) -> np.dtype | None:
    if accumulate is None:
        return None
    dt = dtypes.canonical(accumulate)
    if dt != np.float32:
        raise ValueError(f"xlac.autocast: accumulate must be None or 'float32', got {dt}")
    return dt


class autocast:
    """Mixed precision for the operations traced inside: a context manager and a decorator.

    ``dtype``: ``"bfloat16"`` (default) or ``"float16"`` (or those dtypes). ``enabled=False`` turns
    autocast off inside an enabled region: operations there run in the dtypes they were traced with
    (values coming from the region are cast back). ``policy``: an :class:`AutocastPolicy` (default
    :data:`DEFAULT_POLICY`). ``accumulate="float32"``: contractions take lower-precision inputs but give
    float32 results (XLA's ``preferred_element_type``).

    >>> import numpy as np, xlac, xlac.numpy as xnp
    >>> @xlac.compile
    ... def g(x):
    ...     with xlac.autocast(accumulate="float32"):
    ...         return x @ x
    >>> g(np.eye(2, dtype=np.float32)).dtype
    dtype('float32')
    """

    def __init__(self, dtype="bfloat16", enabled: bool = True, policy: AutocastPolicy | None = None,
                 accumulate=None):
        if policy is not None and not isinstance(policy, AutocastPolicy):
            raise TypeError(f"xlac.autocast: policy must be an AutocastPolicy, got {type(policy).__name__}")
        self.state = AutocastState(_lower_dtype(dtype), bool(enabled), policy or DEFAULT_POLICY,
                                   _accumulate_dtype(accumulate))
        self._local = threading.local()

    def __enter__(self) -> "autocast":
        scope = autocast_scope(self.state)
        scope.__enter__()
        stack = getattr(self._local, "scopes", None)
        if stack is None:
            stack = self._local.scopes = []
        stack.append(scope)
        return self

    def __exit__(self, *exc) -> None:
        self._local.scopes.pop().__exit__(*exc)

    def __call__(self, fn):
        @functools.wraps(fn)
        def with_autocast(*args, **kwargs):
            with autocast_scope(self.state):
                return fn(*args, **kwargs)
        return with_autocast

    def __repr__(self) -> str:
        s = self.state
        extra = f", accumulate='{s.accumulate}'" if s.accumulate is not None else ""
        policy = "" if s.policy == DEFAULT_POLICY else ", policy=<custom>"
        return f"xlac.autocast(dtype='{s.dtype}', enabled={s.enabled}{policy}{extra})"
