"""Several processes, one program: JAX's distributed runtime (the PJRT coordination service jaxlib ships).

Each process calls :func:`initialize` first, before anything creates the XLA backend; the backend it then
creates sees every process's devices (``xlac.devices()``), of which it can address its own. A program compiled for the global devices runs when every process executes it with its
local shards; on CPU the collectives between processes go through Gloo (jax's
``jax_cpu_collectives_implementation``, ``"gloo"`` by default in jax 0.10).

Without ``initialize`` a process is a world of one:

>>> process_index(), process_count()
(0, 1)
"""
from __future__ import annotations

import jax

from xlac.runtime import client

try:  # jax's own record of created backends (private; moved or gone in a later jax only weakens the check)
    from jax._src.xla_bridge import backends_are_initialized as _jax_backends_created
except ImportError:  # pragma: no cover
    _jax_backends_created = None

_INITIALIZE_FIRST = (
    "xlac.distributed.initialize() must run before anything creates the XLA backend, and this process "
    "already has one. Call it first thing in every process, right after the imports: before any compiled "
    "function runs, any array is moved to a device, and before xlac.runtime.get_device(), default_device(), "
    "jax.devices() or jax.device_put() are called. Restart the process with initialize() moved up.")


def backend_created() -> bool:
    """True once xlac or jax created a PJRT client in this process (initialize is too late then)."""
    if client._backend.cache_info().currsize or client.default_device.cache_info().currsize:
        return True
    return bool(_jax_backends_created is not None and _jax_backends_created())


def is_initialized() -> bool:
    """True between a successful :func:`initialize` and :func:`shutdown`."""
    return bool(jax.distributed.is_initialized())


def initialize(coordinator_address: str, num_processes: int, process_id: int, local_device_ids=None, *,
               initialization_timeout: int = 300) -> None:
    """Join the processes of one program: ``coordinator_address`` (``"host:port"``, process 0 serves it,
    every process names the same one), how many processes, and this one's id in ``range(num_processes)``.
    ``local_device_ids``: which of this machine's accelerators this process uses (all by default).
    Blocks until all processes have joined, or raises after ``initialization_timeout`` seconds."""
    host, colon, port = coordinator_address.rpartition(":") if isinstance(coordinator_address, str) else ("",) * 3
    if not (host and colon and port.isdigit()):
        raise ValueError(f"xlac.distributed.initialize: coordinator_address must be 'host:port', "
                         f"got {coordinator_address!r}")
    if not isinstance(num_processes, int) or num_processes < 1:
        raise ValueError(f"xlac.distributed.initialize: num_processes must be a positive int, got {num_processes!r}")
    if not isinstance(process_id, int) or not 0 <= process_id < num_processes:
        raise ValueError(f"xlac.distributed.initialize: process_id must be in range({num_processes}), "
                         f"got {process_id!r}")
    if is_initialized():
        raise RuntimeError("xlac.distributed.initialize() was already called in this process")
    if backend_created():
        raise RuntimeError(_INITIALIZE_FIRST)
    if jax.config.jax_cpu_collectives_implementation is None:
        # Without it XLA's CPU client refuses programs over several processes ("Multiprocess computations
        # aren't implemented on the CPU backend"); gloo is jax's default and needs nothing installed.
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    try:
        jax.distributed.initialize(coordinator_address, num_processes=num_processes, process_id=process_id,
                                   local_device_ids=local_device_ids,
                                   initialization_timeout=initialization_timeout)
    except RuntimeError as error:
        if "before any JAX calls" in str(error) or "must be called before" in str(error):
            raise RuntimeError(_INITIALIZE_FIRST) from error
        raise


def shutdown() -> None:
    """Leave the distributed runtime (a no-op when :func:`initialize` was not called). The backend stays as
    it is: a process cannot initialize again after it."""
    if is_initialized():
        jax.distributed.shutdown()


def process_index() -> int:
    """This process's id (0 without :func:`initialize`)."""
    return jax.process_index()


def process_count() -> int:
    """How many processes run the program (1 without :func:`initialize`)."""
    return jax.process_count()
