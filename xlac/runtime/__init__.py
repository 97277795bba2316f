"""The only package that touches jaxlib: devices, buffers, compiling and running StableHLO."""
from xlac.runtime.client import default_device, get_device
from xlac.runtime.executable import Executable, compile_stablehlo
from xlac.runtime.kernels import linalg_kernels
from xlac.runtime.mlir import stablehlo_to_hlo, verify_stablehlo
from xlac.runtime.persistent_cache import PersistentCache, configured_cache
from xlac.runtime.transfer import is_device_buffer, put_buffer, to_device, to_numpy

__all__ = ["Executable", "PersistentCache", "compile_stablehlo", "configured_cache", "default_device", "get_device",
           "is_device_buffer", "linalg_kernels", "put_buffer", "stablehlo_to_hlo", "to_device", "to_numpy",
           "verify_stablehlo"]
