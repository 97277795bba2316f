"""jaxlib's C++ call path for an executable xlac compiled: NumPy arguments are put on the device and the
program runs without a Python array made in between, as ``jax.jit`` calls its own programs. Through
jaxlib's Python API (a ``batched_device_put`` per NumPy argument, then ``execute_sharded``) a cached xlac
call with NumPy arguments costs about 1.9x a ``jax.jit`` call; through this path 1.4-1.6x, the C++ call
itself about what ``jax.jit``'s costs (``benchmarks/README.md``).

The path is jaxlib's ``pjit`` function object: per signature of its arguments (dtypes, shapes, placement,
JAX's x64 mode) it keeps what runs the program in C++. A signature it has not seen goes to
``cache_miss``, which runs the call in Python and lets that signature take the C++ path only when every
argument is exactly of the dtype, shape and place the program was compiled for, so jaxlib never narrows
or moves an argument. JAX narrows 64-bit NumPy arrays unless its x64 mode is on, so a program with a
64-bit parameter is called with x64 on for that call only (JAX's setting is left as it was).

>>> import numpy as np
>>> from xlac.runtime.client import get_device
>>> from xlac.runtime.executable import compile_stablehlo
>>> from xlac.ir.types import TensorType
>>> text = '''func.func public @main(%a: tensor<2xf64>) -> tensor<2xf64> {
...   %0 = "stablehlo.add"(%a, %a) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
...   "func.return"(%0) : (tensor<2xf64>) -> ()
... }'''
>>> t = TensorType((2,), np.dtype("float64"))
>>> exe = compile_stablehlo(text, get_device("cpu"), output_types=[t])
>>> call = direct_caller(exe, [t])
>>> np.asarray(call(np.arange(2.0))[0])
array([0., 2.])
"""
from __future__ import annotations

import functools

import jax
import numpy as np

from xlac.runtime.memory import raise_if_out_of_memory
from xlac.runtime.transfer import put_buffer, to_device

_jax_array_type = jax.Array
_PYTHON_SCALARS = (bool, int, float, complex)


@functools.cache
def _jaxlib_parts():
    """What the path needs from jaxlib and JAX's internals, or None where this version lacks any of it."""
    try:
        from jax._src import core, tree_util
        from jax._src.interpreters import pxla
        from jax._src.lib import _jax
        return (_jax.pjit, pxla.MeshExecutableFastpathData, pxla.JitGlobalCppCacheKeys, pxla.cc_shard_arg,
                tree_util.dispatch_registry, core.ShapedArray, jax.enable_x64)
    except (ImportError, AttributeError):
        return None


def direct_caller(executable, input_types: list):
    """``call(*arguments) -> outputs`` running ``executable`` (on one device, no mesh) on NumPy arrays of
    ``input_types`` (each with its dtype and shape), Python scalars for its 0-d parameters of their dtypes
    (``float``: float64, as NumPy takes them) and jax Arrays already on its device, through jaxlib's C++
    call path; None where this jaxlib lacks that path or the program runs on a mesh. The caller passes
    only arguments of those dtypes (the cached call path keys calls by them): jaxlib's signature of a NumPy
    array does not tell its byte order, nor, without x64, a 64-bit dtype from its 32-bit one."""
    parts = _jaxlib_parts()
    if parts is None or executable.output_shardings is not None or not executable.output_types:
        return None
    pjit, fastpath_data, cache_keys, shard_arg, registry, shaped_array, enable_x64 = parts
    device, execute, output_types = executable.device, executable.execute, executable.output_types
    sharding = jax.sharding.SingleDeviceSharding(device)
    n_in, n_out = len(input_types), len(output_types)
    try:
        fast = fastpath_data(
            executable._loaded, registry.flatten(tuple(range(n_out)), None)[1], [sharding] * n_in,
            [sharding] * n_out, [shaped_array(t.shape, t.dtype) for t in output_types], [True] * n_out,
            [True] * n_in, [None] * n_in, [])
    except TypeError:         # a jaxlib whose fast path takes other facts
        return None

    def takes(argument, t) -> bool:
        """Whether jaxlib may pass ``argument`` to the program as it is (no narrowing, no move)."""
        kind = type(argument)
        if kind is np.ndarray:
            return (argument.dtype == t.dtype and argument.shape == t.shape and argument.dtype.isnative
                    and jax.dtypes.canonicalize_dtype(argument.dtype) == argument.dtype)
        if kind in _PYTHON_SCALARS:
            return t.shape == () and jax.dtypes.canonicalize_dtype(kind) == t.dtype
        return (isinstance(argument, _jax_array_type) and argument.dtype == t.dtype
                and argument.shape == t.shape and argument.sharding == sharding)

    def put(argument, t):
        if isinstance(argument, _jax_array_type):
            return put_buffer(argument, device)
        if type(argument) in _PYTHON_SCALARS:
            argument = np.asarray(argument, dtype=t.dtype)
        return to_device(argument, device)

    def run_in_python(*arguments) -> tuple:
        return tuple(execute(list(map(put, arguments, input_types))))

    def cache_miss(*arguments):
        outputs = run_in_python(*arguments)
        exact = len(arguments) == n_in and all(map(takes, arguments, input_types))
        return outputs, (fast if exact else None), False

    try:
        call = pjit("xlac", run_in_python, cache_miss, [], [], cache_keys(), registry, shard_arg)
    except TypeError:         # a jaxlib whose pjit takes other arguments
        return None
    if all(jax.dtypes.canonicalize_dtype(t.dtype) == t.dtype for t in input_types):
        def run(*arguments):
            try:
                return call(*arguments)
            except Exception as error:
                raise_if_out_of_memory(error, "running the compiled function")
                raise
        return run

    def run_with_x64(*arguments):
        try:
            with enable_x64(True):
                return call(*arguments)
        except Exception as error:
            raise_if_out_of_memory(error, "running the compiled function")
            raise
    return run_with_x64
