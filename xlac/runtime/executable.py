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

from xlac.config import config
from xlac.ir.sharding import NamedSharding, PartitionSpec, ProgramSharding
from xlac.runtime.cache_key import cache_key
from xlac.runtime.client import compile_options
from xlac.runtime.memory import raise_if_out_of_memory
from xlac.runtime.persistent_cache import configured_cache
from xlac.runtime.spmd import assemble, result_handlers, sharding_of_output


class CompileError(RuntimeError):
    """XLA refused the StableHLO module xlac produced (a bug in xlac: please report it)."""


class Executable:
    """A compiled program on one device, or split over a mesh's devices; ``execute(buffers)`` runs it and
    returns the output buffers (global arrays on a mesh). ``persistent_cache``: what the persistent cache
    did for it, ``"hit"``, ``"miss (no entry)"``, ``"miss (corrupt entry)"`` or ``"off"``.
    ``output_shardings``: on a mesh, each output's sharding (as given, or as XLA's partitioner chose).
    ``output_types``: each output's TensorType."""

    def __init__(self, loaded, device, persistent_cache: str = "off", sharding: ProgramSharding | None = None,
                 output_types=()):
        self._loaded = loaded
        self.device = device
        self.persistent_cache = persistent_cache
        self.output_types = list(output_types)
        self.output_shardings = None if sharding is None else _output_shardings(loaded, sharding, output_types)
        # execute(buffers) -> output buffers, parameters in order: a closure, as it runs on every call.
        self.execute = _runner(loaded, device, self.output_shardings, output_types)

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


def _runner(loaded, device, output_shardings, output_types):
    """``execute(buffers) -> outputs``: with jaxlib's result handlers where it has them (each output made
    into an array in C++: about 6 us a call less than taking the results apart into per-device arrays), else
    per-device arrays, assembled into global ones on a mesh. One Python frame a call: it runs on every call."""
    execute_sharded = loaded.execute_sharded
    places = output_shardings or [device] * len(output_types)
    handlers = result_handlers(output_types, places) if output_types else None
    if handlers is not None:
        def execute(buffers: list) -> list:
            try:
                return execute_sharded(buffers).consume_with_handlers(handlers)
            except Exception as error:
                raise_if_out_of_memory(error, "running the compiled function")
                raise
        return execute
    layouts = [(t.shape, s) for t, s in zip(output_types, output_shardings or ())]

    def execute(buffers: list) -> list:
        try:
            results = execute_sharded(buffers).disassemble_into_single_device_arrays()
            if output_shardings is None:
                return [r[0] for r in results]
            return [assemble(shape, s, shards) for (shape, s), shards in zip(layouts, results)]
        except Exception as error:
            raise_if_out_of_memory(error, "running the compiled function")
            raise
    return execute


def compile_stablehlo(text: str, device, sharding: ProgramSharding | None = None, output_types=()) -> Executable:
    """Compile a StableHLO module (text with a ``main`` function) for ``device``, or with ``sharding`` for
    the devices of its mesh (``output_types``: the outputs' TensorTypes); with ``xlac.config.cache_dir`` set,
    load it from the persistent cache when it holds it, else compile and store it there."""
    devices = [device] if sharding is None else sharding.mesh.device_list
    options = compile_options(devices)
    cache = configured_cache()

    def executable(loaded, outcome):
        return Executable(loaded, device, outcome, sharding, output_types)
    if cache is None:
        return executable(_compile(text, devices, options), "off")
    key = cache_key(text, devices, options)
    payload, outcome = cache.load(key)
    if payload is not None:
        loaded = _deserialize(payload, devices, options, cache.path_of(key))
        if loaded is not None:
            return executable(loaded, "hit")
        outcome = "corrupt entry"
    loaded = _compile(text, devices, options)
    payload = _serialize(loaded, device)
    if payload is not None:
        cache.store(key, payload)
    return executable(loaded, f"miss ({outcome})")


def _compile(text: str, devices: list, options, with_overrides: bool = True):
    try:
        return devices[0].client.compile_and_load(text, devices, options)
    except Exception as e:  # jaxlib raises its own JaxRuntimeError
        if not (with_overrides and config.compiler_options and "UNIMPLEMENTED" in str(e)):
            raise CompileError(f"XLA could not compile the module xlac produced: {e}") from None
        failure = e
    # What XLA builds with other options is XLA's to choose (its older CPU emitters have no complex maximum):
    # the program is compiled as XLA compiles it by default, and says so.
    warnings.warn(f"xlac: XLA could not compile a program with xlac.config.compiler_options "
                  f"{config.compiler_options} ({failure}); compiled it with XLA's default options",
                  RuntimeWarning, stacklevel=2)
    return _compile(text, devices, compile_options(devices, overrides=False), with_overrides=False)


def _output_shardings(loaded, sharding: ProgramSharding, output_types) -> list:
    """Each output's sharding: as the program says, else as XLA's partitioner chose it."""
    chosen = loaded.get_output_shardings()     # None on a mesh of one device
    shardings = []
    for i, (given, t) in enumerate(zip(sharding.outputs, output_types)):
        found = given or (sharding_of_output(chosen[i], sharding.mesh, t.ndim) if chosen else
                          NamedSharding(sharding.mesh, PartitionSpec()))
        if found is None:
            raise CompileError(f"XLA's partitioner split output {i} in a way no PartitionSpec over the mesh "
                               f"{sharding.mesh} describes; give the outputs' shardings (out_shardings=)")
        shardings.append(found)
    return shardings


def _serialize(loaded, device) -> bytes | None:
    try:
        return loaded.serialize() if hasattr(loaded, "serialize") else device.client.serialize_executable(loaded)
    except Exception as e:  # noqa: BLE001 - a platform that cannot serialize only goes uncached
        warnings.warn(f"xlac: the executable could not be serialized for the persistent cache ({e})",
                      RuntimeWarning, stacklevel=4)
        return None


def _deserialize(payload: bytes, devices: list, options, path: str):
    """The loaded executable, or None (after a warning) when jaxlib refuses the entry."""
    try:
        return devices[0].client.deserialize_executable(payload, devices, options)
    except Exception as e:  # noqa: BLE001 - jaxlib's errors: a bad entry must fall back to compiling
        warnings.warn(f"xlac: jaxlib could not load the persistent cache entry {path} ({e}); compiling again",
                      RuntimeWarning, stacklevel=4)
        return None
