"""Settings that change how xlac compiles: read from the environment, changed with ``update``.

>>> from xlac.config import config
>>> config.update("verify_passes", True); config.verify_passes
True
"""
from __future__ import annotations

import os


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


class Config:
    """``verify_passes``: run the IR verifier after tracing and after every pass (``XLAC_VERIFY=1``).

    ``dump_dir``: a folder where every compile writes its stages, HLO and summary (``XLAC_DUMP_DIR=DIR``;
    ``None``: no dump). ``log_compiles``: log one line per compile to the ``"xlac"`` logger at WARNING
    level, naming its cause and time per stage (``XLAC_LOG_COMPILES=1``).
    """

    def __init__(self):
        self.verify_passes = _env_flag("XLAC_VERIFY")
        self.dump_dir: str | None = os.environ.get("XLAC_DUMP_DIR") or None
        self.log_compiles = _env_flag("XLAC_LOG_COMPILES")

    def update(self, name: str, value) -> None:
        if not hasattr(self, name):
            raise KeyError(f"xlac.config has no setting {name!r}; settings: {', '.join(vars(self))}")
        setattr(self, name, value)


config = Config()
