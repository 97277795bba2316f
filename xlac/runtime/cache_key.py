"""The persistent cache's key: everything that decides what XLA builds from a StableHLO module.

The key hashes the module's text with its source locations stripped (moving a line, or renaming an
argument, must not miss), the compile options, the platform and its version, the device kind and count,
jaxlib's version, the XLA flags that change code generation (``XLA_FLAGS`` without the dump flags) and
xlac's own version with the cache's entry format.

>>> text = 'func.func public @main(%a: tensor<2xf32> loc("x")) -> tensor<2xf32> loc("f"("f.py":3:0))'
>>> strip_locations(text)
'func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32>'
>>> code_generation_flags("--xla_dump_to=/tmp/d --xla_cpu_enable_fast_math=true")
['--xla_cpu_enable_fast_math=true']
"""
from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import os
import re

import jaxlib

__all__ = ["ENTRY_FORMAT", "cache_key", "code_generation_flags", "strip_locations"]

# Raised whenever what an entry holds, or how xlac runs what it loads, changes.
ENTRY_FORMAT = 1

_QUOTED = r'"(?:[^"\\]|\\.)*"'
# ` loc(...)` with one level of nesting: loc("name"), loc("name"("file.py":12:0)), loc(unknown).
_LOCATION = re.compile(rf' ?loc\((?:{_QUOTED}|[^()"]|\((?:{_QUOTED}|[^()"])*\))*\)')

# Flags that write files or set up host devices: XLA builds the same code with or without them.
_FLAGS_WITHOUT_EFFECT_ON_CODE = ("--xla_dump", "--xla_force_host_platform_device_count",
                                 "--xla_gpu_cuda_data_dir")
_DEBUG_OPTIONS_WITHOUT_EFFECT_ON_CODE = {
    "xla_dump_to": "", "xla_dump_hlo_module_re": "", "xla_dump_hlo_pass_re": "", "xla_dump_hlo_pipeline_re": "",
    "xla_dump_hlo_as_text": False, "xla_dump_hlo_as_proto": False, "xla_dump_hlo_as_dot": False,
    "xla_dump_hlo_as_url": False, "xla_dump_hlo_as_html": False, "xla_dump_hlo_as_long_text": False,
    "xla_dump_fusion_visualization": False, "xla_dump_hlo_snapshots": False, "xla_dump_max_hlo_modules": 0,
    "xla_dump_module_metadata": False, "xla_dump_compress_protos": False, "xla_dump_disable_metadata": False,
    "xla_force_host_platform_device_count": 0, "xla_gpu_cuda_data_dir": ""}


def strip_locations(text: str) -> str:
    """The StableHLO text without its ``loc(...)`` attributes (source lines and argument names).

    >>> strip_locations('%0 = "stablehlo.tanh"(%a) : (tensor<f32>) -> tensor<f32> loc("tanh"("m.py":7:0))')
    '%0 = "stablehlo.tanh"(%a) : (tensor<f32>) -> tensor<f32>'
    """
    return _LOCATION.sub("", text)


def code_generation_flags(xla_flags: str | None = None) -> list[str]:
    """The flags of ``XLA_FLAGS`` (the environment's when ``None``) that can change the code XLA builds,
    sorted.

    >>> code_generation_flags("--xla_force_host_platform_device_count=4 --xla_backend_optimization_level=0")
    ['--xla_backend_optimization_level=0']
    """
    flags = os.environ.get("XLA_FLAGS", "") if xla_flags is None else xla_flags
    return sorted(flag for flag in flags.split() if not flag.startswith(_FLAGS_WITHOUT_EFFECT_ON_CODE))


def cache_key(text: str, devices: list, options) -> str:
    """The hex SHA-256 naming the executable that compiling ``text`` for ``devices`` with ``options``
    (jaxlib's ``CompileOptions``) builds.

    >>> from xlac.runtime.client import compile_options, get_device
    >>> len(cache_key('func.func public @main() -> () { "func.return"() : () -> () }', [get_device("cpu")],
    ...               compile_options()))
    64
    """
    device = devices[0]
    parts = [f"xlac {_xlac_version()} entry format {ENTRY_FORMAT}", f"jaxlib {jaxlib.__version__}",
             f"platform {device.client.platform} {device.client.platform_version}",
             f"devices {device.device_kind} x{len(devices)}", "flags " + " ".join(code_generation_flags())]
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() + b"\0")
    digest.update(_options_bytes(options) + b"\0")
    digest.update(strip_locations(text).encode())
    return digest.hexdigest()


def _options_bytes(options) -> bytes:
    """The serialized compile options with the debug options that only dump or name files cleared (the
    options carry ``XLA_FLAGS``' values)."""
    try:
        options = copy.deepcopy(options)
        debug = options.executable_build_options.debug_options
        for name, cleared in _DEBUG_OPTIONS_WITHOUT_EFFECT_ON_CODE.items():
            if hasattr(debug, name):
                setattr(debug, name, cleared)
    except (TypeError, AttributeError, copy.Error):
        pass                      # a jaxlib without these fields: the options as they are
    return options.SerializeAsString()


def _xlac_version() -> str:
    try:
        return importlib.metadata.version("xlac")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
