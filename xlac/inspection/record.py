"""The hook every compile calls: log it if ``log_compiles`` is on, dump it if a dump folder is set.

>>> import numpy as np, xlac
>>> compiled = xlac.compile(lambda x: x + 1).lower(np.ones(2, np.float32)).compile()
>>> record_compile(name="f", signature="x:f32[2]", cause="first call", compiled=compiled,
...                timings={"trace": 0.001}, dump_dir=None) is None   # no log, no dump: nothing to do
True
"""
from __future__ import annotations

import warnings

from xlac.config import config
from xlac.inspection.dump import write_dump
from xlac.inspection.log import log_compile
from xlac.inspection.summary import summarize

__all__ = ["record_compile"]


def record_compile(*, name: str, signature: str, cause: str, compiled, timings: dict[str, float],
                   dump_dir: str | None = None) -> str | None:
    """Log and dump one compile; the dump folder written, or None.

    ``signature``: the compile's argument types and static values as text (see
    :class:`xlac.inspection.recompile.Signature`); ``cause``: why it compiled (see ``recompile_cause``);
    ``compiled``: the ``xlac.Compiled``; ``timings``: seconds per stage (``"trace"``, each pass name,
    ``"lower"``, ``"xla_compile"``); ``dump_dir``: the dump root, else ``config.dump_dir``. Nothing here can
    fail the compile: an unwritable folder, or anything else going wrong, is a warning.
    """
    if config.log_compiles:
        log_compile(name, signature, cause, timings)
    root = dump_dir if dump_dir is not None else config.dump_dir
    if not root:
        return None
    try:
        return write_dump(root, name, signature, compiled, summarize(name, signature, cause, compiled, timings))
    except Exception as e:  # noqa: BLE001 - a dump must never change or stop what is compiled
        warnings.warn(f"xlac: could not dump the compile of {name}: {type(e).__name__}: {e}", stacklevel=2)
        return None
