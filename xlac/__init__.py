"""xlac: compile NumPy-style Python functions to XLA.

>>> import numpy as np, xlac, xlac.numpy as xnp
>>> f = xlac.compile(lambda x: xnp.sum(x * 2))
>>> float(f(np.arange(4.0)))
12.0
"""
from xlac import lowering as _lowering  # noqa: F401  (attaches the StableHLO emitters)
from xlac.autocast_policy import AutocastPolicy, autocast
from xlac.api import Compiled, CompiledFunction, Lowered, Traced, compile
from xlac.array import Array, asarray
from xlac import eager as _eager  # noqa: F401  (runs xlac.numpy calls outside compiled functions)
from xlac.vectorize import vmap
from xlac.config import config
from xlac.control_flow import cond, fori_loop, scan, switch, while_loop
from xlac.device_state import to_device
from xlac.differentiate import grad, hessian, jacfwd, jacrev, jvp, stop_gradient, value_and_grad, vjp
from xlac.errors import RebindingError, TracerConversionError, UnsupportedError
from xlac.ir.primitive import ShapeError
from xlac.numpy.inplace import inplace_update
from xlac import random  # noqa: E402  (xlac.random: functional, key-based random numbers)
from xlac import sharding  # noqa: E402  (meshes, shardings, sharded arrays)
from xlac import distributed  # noqa: E402  (xlac.distributed: several processes, one program)
from xlac.sharding import device_put, devices, with_sharding_constraint  # noqa: E402

__all__ = ["Array", "AutocastPolicy", "Compiled", "CompiledFunction", "Lowered", "RebindingError", "ShapeError",
           "Traced", "TracerConversionError", "UnsupportedError", "asarray", "autocast", "compile", "cond", "config",
           "fori_loop", "grad", "hessian", "inplace_update", "jacfwd", "jacrev", "jvp", "random", "scan",
           "stop_gradient", "switch", "to_device", "value_and_grad", "vjp", "vmap", "while_loop", "sharding",
           "device_put", "devices", "distributed", "with_sharding_constraint"]
__version__ = "0.1.0"
