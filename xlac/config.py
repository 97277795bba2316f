"""Settings that change how xlac compiles: read from the environment, changed with ``update``.

>>> from xlac.config import config
>>> config.update("verify_passes", True); config.verify_passes
True
"""
from __future__ import annotations

import os
import warnings

DEFAULT_CACHE_MAX_BYTES = 2 * 1024 ** 3


def _env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    return default if value is None else value not in ("", "0")


def _env_bytes(name: str, default: int) -> int | None:
    """A size in bytes from the environment (``0``: no limit); the default, with a warning, if malformed."""
    value = os.environ.get(name)
    if not value:
        return default
    try:
        size = int(value)
    except ValueError:
        warnings.warn(f"xlac: {name}={value!r} is not a number of bytes; using {default}", RuntimeWarning)
        return default
    return size if size > 0 else None


class Config:
    """``verify_passes``: run the IR verifier after tracing and after every pass (``XLAC_VERIFY=1``).

    ``dump_dir``: a folder where every compile writes its stages, HLO and summary (``XLAC_DUMP_DIR=DIR``;
    ``None``: no dump). ``log_compiles``: log one line per compile to the ``"xlac"`` logger at WARNING
    level, naming its cause, time per stage and what the persistent cache did (``XLAC_LOG_COMPILES=1``).

    ``cache_dir``: a folder keeping compiled executables across processes (``XLAC_CACHE_DIR=DIR``; ``None``:
    no persistent cache). ``cache_max_bytes``: its size limit, least recently used entries evicted first
    (``XLAC_CACHE_MAX_BYTES``, default 2 GiB; ``None``, or ``0`` in the environment: no limit).
    ``compile_notice``: a compile still running after 2 s prints a line on stderr, and its duration when it
    ends (``XLAC_COMPILE_NOTICE=0`` turns it off).

    ``vectorize_loops``: whether a converted ``for`` loop whose iterations are independent runs at once,
    batched, instead of as an XLA loop (see ``xlac.convert.vectorized_loops``): ``"auto"`` where that is
    measured to be faster (on the CPU: a body with a contraction), ``"always"``, or ``"never"``
    (``XLAC_VECTORIZE_LOOPS``). It is read when a function is traced: one compiled before keeps its programs.
    A loop whose only carried values are accumulators (``acc += f(i)``, ``-=``, ``*=``, ``max``/``min``,
    ``np.maximum``/``np.minimum``, ``&=``, ``|=``: see ``xlac.convert.accumulators``) vectorizes too, its terms
    reduced after the batch: integers come out exact, but float sums and products are reassociated (rounded
    otherwise than in the loop's order, as ``np.sum`` is); ``"never"`` keeps the loop's order.

    ``compiler_options``: XLA options (name to value, as ``jax.jit(f).lower(x).compile(compiler_options)``
    takes them) set for every program compiled from now on, over XLA's defaults and ``XLA_FLAGS``; they are
    part of the persistent cache's key. ``{"xla_cpu_use_fusion_emitters": False,
    "xla_backend_optimization_level": 0}`` compiles programs for the CPU about 2.4x faster, and they run
    slower (the test suite uses it: it checks values, not XLA's code). An unknown name fails the compile; a
    program XLA cannot build with them (``UNIMPLEMENTED``: those older emitters have no complex maximum) is
    built with XLA's defaults, with a RuntimeWarning.
    """

    def __init__(self):
        self.verify_passes = _env_flag("XLAC_VERIFY")
        self.dump_dir: str | None = os.environ.get("XLAC_DUMP_DIR") or None
        self.log_compiles = _env_flag("XLAC_LOG_COMPILES")
        self.cache_dir: str | None = os.environ.get("XLAC_CACHE_DIR") or None
        self.cache_max_bytes: int | None = _env_bytes("XLAC_CACHE_MAX_BYTES", DEFAULT_CACHE_MAX_BYTES)
        self.compile_notice = _env_flag("XLAC_COMPILE_NOTICE", default=True)
        self.vectorize_loops = os.environ.get("XLAC_VECTORIZE_LOOPS") or "auto"
        self.compiler_options: dict = {}

    def update(self, name: str, value) -> None:
        if not hasattr(self, name):
            raise KeyError(f"xlac.config has no setting {name!r}; settings: {', '.join(vars(self))}")
        setattr(self, name, value)


config = Config()
