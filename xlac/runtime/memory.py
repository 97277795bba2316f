"""Device out-of-memory failures as Python's MemoryError.

jaxlib reports a failed allocation as a ``JaxRuntimeError`` whose message starts with
``RESOURCE_EXHAUSTED``; a buffer whose allocation failed must never reach ``np.asarray``
(that aborts the process), so every path that allocates or reads goes through here.

>>> with raising_memory_error("xnp.ones"):
...     pass
"""
from __future__ import annotations


def is_out_of_memory(error: BaseException) -> bool:
    """Whether a jaxlib error reports a failed allocation.

    >>> is_out_of_memory(RuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 8 bytes."))
    True
    """
    text = str(error)
    return "RESOURCE_EXHAUSTED" in text or "Out of memory" in text


class raising_memory_error:
    """Re-raise a jaxlib out-of-memory error inside the block as ``MemoryError`` naming ``what`` (a string,
    or a function giving one, called only on failure). A class rather than a generator: every call of a
    compiled function enters it, and this costs a fraction of a contextlib context manager."""

    __slots__ = ("what",)

    def __init__(self, what):
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        if error is not None:
            raise_if_out_of_memory(error, self.what)
        return False


def raise_if_out_of_memory(error: BaseException, what) -> None:
    """Raise ``MemoryError`` naming ``what`` (a string or a function giving one) when ``error`` reports a
    failed allocation; for the hot paths, which catch errors themselves instead of entering a context."""
    if isinstance(error, Exception) and not isinstance(error, MemoryError) and is_out_of_memory(error):
        what = what() if callable(what) else what
        raise MemoryError(f"{what}: the device ran out of memory ({error})") from None
