"""Settings that change how xlac compiles: read from the environment, changed with ``update``.

>>> from xlac.config import config
>>> config.update("verify_passes", True); config.verify_passes
True
"""
from __future__ import annotations

import os


class Config:
    """``verify_passes``: run the IR verifier after tracing and after every pass (``XLAC_VERIFY=1``)."""

    def __init__(self):
        self.verify_passes = os.environ.get("XLAC_VERIFY", "") not in ("", "0")

    def update(self, name: str, value) -> None:
        if not hasattr(self, name):
            raise KeyError(f"xlac.config has no setting {name!r}; settings: {', '.join(vars(self))}")
        setattr(self, name, value)


config = Config()
