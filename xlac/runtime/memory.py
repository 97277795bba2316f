"""Device out-of-memory failures as Python's MemoryError.

jaxlib reports a failed allocation as a ``JaxRuntimeError`` whose message starts with
``RESOURCE_EXHAUSTED``; a buffer whose allocation failed must never reach ``np.asarray``
(that aborts the process), so every path that allocates or reads goes through here.

>>> with raising_memory_error("xnp.ones"):
...     pass
"""
from __future__ import annotations

import contextlib


def is_out_of_memory(error: BaseException) -> bool:
    """Whether a jaxlib error reports a failed allocation.

    >>> is_out_of_memory(RuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 8 bytes."))
    True
    """
    text = str(error)
    return "RESOURCE_EXHAUSTED" in text or "Out of memory" in text


@contextlib.contextmanager
def raising_memory_error(what: str):
    """Re-raise a jaxlib out-of-memory error inside the block as ``MemoryError`` naming ``what``."""
    try:
        yield
    except MemoryError:
        raise
    except Exception as error:
        if not is_out_of_memory(error):
            raise
        raise MemoryError(f"{what}: the device ran out of memory ({error})") from None
