"""Several processes running one program: ``xlac.distributed.initialize`` in each, first thing.

Every process (one per host, or one per accelerator) runs the same script; process 0 also serves the
coordinator at ``coordinator_address``. After ``initialize`` the backend sees all processes' devices; a
program compiled for them runs when each process executes it with the shards of its own devices.

>>> xlac.distributed.process_count()
1
"""
from __future__ import annotations

from xlac.runtime import distributed as _runtime

__all__ = ["initialize", "process_count", "process_index", "shutdown"]


def initialize(coordinator_address: str, num_processes: int, process_id: int, local_device_ids=None, *,
               initialization_timeout: int = 300) -> None:
    """Join the ``num_processes`` processes of one program as ``process_id`` (``0 <= process_id <
    num_processes``), meeting at ``coordinator_address`` (``"host:port"``, the same in every process; process 0
    serves it). Call it before anything else touches a device: before any compiled function runs or any array
    is moved to a device; a RuntimeError says so when the backend already exists. ``local_device_ids``: which of
    this host's accelerators this process uses (all by default). Blocks until every process has joined, or
    raises after ``initialization_timeout`` seconds. On CPU the processes talk through Gloo.

    In process 0 and process 1 of two, on one machine:

    >>> xlac.distributed.initialize("127.0.0.1:1234", 2, 0)  # doctest: +SKIP
    >>> xlac.distributed.initialize("127.0.0.1:1234", 2, 1)  # doctest: +SKIP
    """
    _runtime.initialize(coordinator_address, num_processes, process_id, local_device_ids,
                        initialization_timeout=initialization_timeout)


def process_index() -> int:
    """This process's id: ``process_id`` given to :func:`initialize`, 0 without it.

    >>> xlac.distributed.process_index()
    0
    """
    return _runtime.process_index()


def process_count() -> int:
    """How many processes run the program: ``num_processes`` given to :func:`initialize`, 1 without it.

    >>> xlac.distributed.process_count()
    1
    """
    return _runtime.process_count()


def shutdown() -> None:
    """Leave the distributed runtime at the end of the program (a no-op without :func:`initialize`); the
    process cannot initialize again afterwards.

    >>> xlac.distributed.shutdown()
    """
    _runtime.shutdown()
