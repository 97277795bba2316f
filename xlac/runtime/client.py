"""PJRT clients and devices.

>>> get_device("cpu").platform
'cpu'
"""
from __future__ import annotations

import functools

import jax.extend.backend as jax_backend
import numpy as np

from xlac.config import config


@functools.cache
def _backend(platform: str | None):
    return jax_backend.get_backend(platform)


def get_device(device=None):
    """A PJRT device: ``None`` for the default backend's first device, a platform name
    (``"cpu"``, ``"gpu"``, ``"tpu"``), ``"gpu:1"``, or a device object returned by this function or by JAX."""
    if device is None:
        return default_device()
    if isinstance(device, str):
        platform, _, index = device.partition(":")
        try:
            devices = _backend(platform).local_devices()
        except RuntimeError as e:
            raise ValueError(f"xlac: no {platform!r} backend available ({e})") from None
        i = int(index or 0)
        if not 0 <= i < len(devices):
            raise ValueError(f"xlac: device {device!r} does not exist; {platform} has {len(devices)} device(s)")
        return devices[i]
    if hasattr(device, "client") and hasattr(device, "platform"):
        return device
    raise TypeError(f"xlac: expected a device or a platform name such as 'cpu' or 'gpu:0', got {device!r}")


def all_devices(platform: str | None = None) -> list:
    """Every device of the platform's backend, other processes' included, in id order."""
    return sorted(_backend(platform).devices(), key=lambda d: d.id)


@functools.cache
def default_device():
    """The first device of jaxlib's default backend (a GPU or TPU when there is one)."""
    return _backend(None).local_devices()[0]


def backend_of(device):
    return device.client


def compile_options(devices: list | None = None, overrides: bool = True):
    """XLA's compile options: for one device, or with ``devices`` (in partition order) for one program split
    over them by XLA's SPMD partitioner (Shardy), the shardings read from the program's annotations; with
    ``xlac.config.compiler_options``' XLA options set over XLA's defaults (as ``jax.jit``'s
    ``compiler_options``) unless ``overrides`` is False."""
    if devices is None or len(devices) == 1:
        options = jax_backend.get_compile_options(num_replicas=1, num_partitions=1)
    else:
        assignment = np.array([d.id for d in devices]).reshape(1, len(devices))
        options = jax_backend.get_compile_options(num_replicas=1, num_partitions=len(devices),
                                                  device_assignment=assignment)
        build = options.executable_build_options
        build.use_spmd_partitioning = True
        build.use_shardy_partitioner = True
        build.allow_spmd_sharding_propagation_to_output = [True]
    if overrides and config.compiler_options:
        given = config.compiler_options
        if not isinstance(given, dict) or not all(isinstance(name, str) for name in given):
            raise TypeError(f"xlac.config.compiler_options must be a dict of XLA option names to values, such as "
                            f"{{'xla_backend_optimization_level': 0}}; got {given!r}")
        options.env_option_overrides = sorted(given.items())
    return options
