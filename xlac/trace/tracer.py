"""Tracer: a traced array value with NumPy's array interface.

Its operators and methods are installed by ``xlac.numpy``
(:mod:`xlac.numpy.operators`), the same as ``xlac.Array``'s, so traced and eager code behave alike. Anything that
would need the value itself (``bool(t)``, ``int(t)``, ``np.asarray(t)``) raises
a :class:`TracerConversionError` that names the line and what to use instead.
"""
from __future__ import annotations

import dis

from xlac.errors import TracerConversionError, UnsupportedError, ValueNeeded, frame_location, located, user_frame
from xlac.ir import primitives as P
from xlac.trace.state import current_trace


NUMPY_ARRAY_HINT = (
    "A NumPy array made inside the function (`out = np.zeros(3)`) cannot hold a traced value: "
    "make it with xnp.zeros(...) or np.zeros(..., like=x), whose items take traced values, or build it with "
    "xnp.stack([...]) instead of np.array([...]). A NumPy array from outside the function that you index or write "
    "with traced values (`a[i]`, `a[i] = v`): hold it as an xlac.Array (xlac.asarray(a)).")

_STORE_SUBSCR = dis.opmap["STORE_SUBSCR"]

WRITE_TO_ENCLOSING = (
    "writing into an array of the enclosing function from inside a transformed function (grad, vmap, ...) "
    "is not supported yet: pass the array in as an argument and return its new value")


class Tracer:
    """A value in a graph under construction. ``weak`` marks values that came from Python scalars."""

    # base: the traced array this one is a view of (None for an array that owns its memory);
    # strides: element strides relative to the memory it views (None: C-contiguous, its own);
    # mutability: "mutable", "readonly" (a read-only view, as NumPy's broadcast_to) or "value"
    # (a Python or NumPy scalar argument: augmented assignment rebinds the name, as in Python).
    __slots__ = ("value", "_trace", "weak", "base", "strides", "mutability")
    __array_priority__ = 1000

    def __init__(self, value, trace, weak: bool = False, mutability: str = "mutable"):
        self.value = value
        self._trace = trace
        self.weak = weak
        self.base = None
        self.strides = None
        self.mutability = mutability

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.type.shape

    @property
    def dtype(self):
        return self.value.type.dtype

    @property
    def aval(self):
        return self.value.type

    def __repr__(self) -> str:
        return f"Tracer<{self.value.type}{', weak' if self.weak else ''}>"

    def _concrete_error(self, what: str, instead: str, converts_the_value: bool = False,
                        error: type = TracerConversionError):
        frame = user_frame()
        location = frame_location(frame)
        if converts_the_value and frame is not None and frame.f_code.co_code[frame.f_lasti] == _STORE_SUBSCR:
            # `out[i] = x` on a NumPy array: NumPy converts the traced x (or i) to numbers to store it
            raise TracerConversionError(located(
                f"a traced value ({self.value.type}) was used in a write to a NumPy array (`a[i] = v`, as v or i): "
                "a NumPy array holds numbers and takes numbers as indices, and the traced value is known only "
                f"when the program runs. {NUMPY_ARRAY_HINT}", location))
        message = located(f"{what} needs a concrete value, but this is a traced array {self.value.type} inside a "
                          f"compiled function: its value is known only when the program runs. {instead}", location)
        raise error(message, self.value) if error is ValueNeeded else error(message)

    def __bool__(self):
        self._concrete_error("Python control flow on a traced value (`if`, `while`, `and`, `or`, `not`, bool())",
                             "Use xnp.where(cond, a, b) to select values, or pass the value as a static argument "
                             "(static_argnums / static_argnames).")

    def __int__(self):
        self._concrete_error("int()", "Use x.astype(xnp.int64) for a traced integer, or make it a static argument.",
                             converts_the_value=True)

    def __float__(self):
        self._concrete_error("float()", "Use x.astype(xnp.float64) for a traced float, or make it a static argument.",
                             converts_the_value=True)

    def __complex__(self):
        self._concrete_error("complex()", "Use x.astype(xnp.complex128), or make it a static argument.",
                             converts_the_value=True)

    def __index__(self):
        # A Python int argument (weak, an input of the graph): the compiled function can take its value instead.
        as_value = self.weak and self.dtype.kind in "iu" and self.value in self._trace.graph.inputs
        self._concrete_error("Using a traced value as a Python index (range(), list index, shape)",
                             "Index arrays with it instead (x[i] works for traced i), or make it a static argument.",
                             error=ValueNeeded if as_value else TracerConversionError)

    def __array__(self, dtype=None, copy=None):
        self._concrete_error("np.asarray() / np.array() of a traced value (`np.array([x, y])` too)",
                             "Use xlac.numpy (import xlac.numpy as xnp) functions on traced values; "
                             f"convert the result after the compiled function returns. {NUMPY_ARRAY_HINT}",
                             converts_the_value=True)

    def tolist(self):
        self._concrete_error(".tolist()", "Return the array from the compiled function and convert it outside.")

    item = tolist

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError(located(f"len() of a 0-d traced array {self.value.type}: it has no length "
                                    "(as with NumPy, len() of a 0-d array is an error); use x.size or x.shape"))
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError(located(f"iteration over a 0-d traced array {self.value.type}"))
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        return id(self)

    # ------------------------------------------------------------ in-place updates

    def _store(self, new: "Tracer") -> None:
        """Record that the memory this array refers to (and what it is a view of) now holds ``new``."""
        self._trace.scalar_facts.pop(self.value.id, None)    # what xlac.trace.facts knew of it holds no more
        current = current_trace()
        if self._trace is not current:
            if current is None or not current.writes_enclosing or not current.encloses(self._trace):
                raise UnsupportedError(located(WRITE_TO_ENCLOSING))
            current.lift(self)._store(new)         # a loop body's write: see xlac.control_flow
            return
        self._trace.stores += 1
        self._trace.bind(P.store, (self, self._trace.checks.guard_write(self, new)))
