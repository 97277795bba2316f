"""The only package that touches jaxlib: devices, buffers, compiling and running StableHLO."""
from xlac.runtime.client import all_devices, default_device, get_device
from xlac.runtime.dispatch import direct_caller
from xlac.runtime.executable import Executable, compile_stablehlo
from xlac.runtime.kernels import linalg_kernels
from xlac.runtime.mlir import stablehlo_to_hlo, verify_stablehlo
from xlac.runtime.persistent_cache import PersistentCache, configured_cache
from xlac.runtime.spmd import put_from_callback, put_sharded, shards_of, to_numpy_global
from xlac.runtime.transfer import host_putter, is_device_buffer, is_split_buffer, put_buffer, to_device, to_numpy

__all__ = ["Executable", "PersistentCache", "all_devices", "compile_stablehlo", "configured_cache", "default_device",
           "direct_caller", "get_device", "host_putter", "is_device_buffer", "is_split_buffer", "linalg_kernels",
           "put_buffer", "put_from_callback", "put_sharded", "shards_of", "stablehlo_to_hlo", "to_device", "to_numpy",
           "to_numpy_global", "verify_stablehlo"]
