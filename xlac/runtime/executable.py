"""Compiling StableHLO text with PJRT and running the executable.

>>> text = '''func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {
...   %0 = "stablehlo.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
...   "func.return"(%0) : (tensor<2xf32>) -> ()
... }'''
>>> import numpy as np
>>> from xlac.runtime.client import get_device
>>> from xlac.runtime.transfer import to_device
>>> exe = compile_stablehlo(text, get_device("cpu"))
>>> np.asarray(exe.execute([to_device(np.ones(2, np.float32), exe.device)])[0])
array([2., 2.], dtype=float32)
"""
from __future__ import annotations

import warnings

from xlac.runtime.cache_key import cache_key
from xlac.runtime.client import compile_options
from xlac.runtime.memory import raise_if_out_of_memory
from xlac.runtime.persistent_cache import configured_cache


class CompileError(RuntimeError):
    """XLA refused the StableHLO module xlac produced (a bug in xlac: please report it)."""


class Executable:
    """A compiled program on one device; ``execute(buffers)`` runs it and returns the output buffers.
    ``persistent_cache``: what the persistent cache did for it, ``"hit"``, ``"miss (no entry)"``,
    ``"miss (corrupt entry)"`` or ``"off"``."""

    def __init__(self, loaded, device, persistent_cache: str = "off"):
        self._loaded = loaded
        self.device = device
        self.persistent_cache = persistent_cache
        # execute(buffers) -> output buffers, parameters in order: a closure, as it runs on every call.
        self.execute = _make_execute(loaded.execute_sharded)

    def optimized_hlo(self) -> str:
        """XLA's HLO after its optimization passes."""
        return "\n".join(m.to_string() for m in self._loaded.hlo_modules())

    def cost_analysis(self) -> dict:
        cost = self._loaded.cost_analysis()
        return dict(cost[0] if isinstance(cost, list) else cost)

    def memory_analysis(self) -> dict:
        stats = self._loaded.get_compiled_memory_stats()
        names = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes",
                 "temp_size_in_bytes", "generated_code_size_in_bytes")
        out = {name: getattr(stats, name) for name in names if hasattr(stats, name)}
        if hasattr(stats, "peak_memory_in_bytes"):
            out["peak_memory_in_bytes"] = stats.peak_memory_in_bytes
        return out


def _make_execute(execute_sharded):
    def execute(buffers: list) -> list:
        try:
            return [r[0] for r in execute_sharded(buffers).disassemble_into_single_device_arrays()]
        except Exception as error:
            raise_if_out_of_memory(error, "running the compiled function")
            raise
    return execute


def compile_stablehlo(text: str, device) -> Executable:
    """Compile a StableHLO module (text with a ``main`` function) for ``device``; with ``xlac.config.cache_dir``
    set, load it from the persistent cache when it holds it, else compile and store it there."""
    options = compile_options()
    cache = configured_cache()
    if cache is None:
        return Executable(_compile(text, device, options), device, "off")
    key = cache_key(text, [device], options)
    payload, outcome = cache.load(key)
    if payload is not None:
        loaded = _deserialize(payload, device, options, cache.path_of(key))
        if loaded is not None:
            return Executable(loaded, device, "hit")
        outcome = "corrupt entry"
    loaded = _compile(text, device, options)
    payload = _serialize(loaded, device)
    if payload is not None:
        cache.store(key, payload)
    return Executable(loaded, device, f"miss ({outcome})")


def _compile(text: str, device, options):
    try:
        return device.client.compile_and_load(text, [device], options)
    except Exception as e:  # jaxlib raises its own JaxRuntimeError
        raise CompileError(f"XLA could not compile the module xlac produced: {e}") from None


def _serialize(loaded, device) -> bytes | None:
    try:
        return loaded.serialize() if hasattr(loaded, "serialize") else device.client.serialize_executable(loaded)
    except Exception as e:  # noqa: BLE001 - a platform that cannot serialize only goes uncached
        warnings.warn(f"xlac: the executable could not be serialized for the persistent cache ({e})",
                      RuntimeWarning, stacklevel=4)
        return None


def _deserialize(payload: bytes, device, options, path: str):
    """The loaded executable, or None (after a warning) when jaxlib refuses the entry."""
    try:
        return device.client.deserialize_executable(payload, [device], options)
    except Exception as e:  # noqa: BLE001 - jaxlib's errors: a bad entry must fall back to compiling
        warnings.warn(f"xlac: jaxlib could not load the persistent cache entry {path} ({e}); compiling again",
                      RuntimeWarning, stacklevel=4)
        return None
