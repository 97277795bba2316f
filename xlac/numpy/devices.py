"""Devices in the Array API sense: the devices xlac.numpy knows, ``to_device``, and the ``device=`` keyword of
the creation functions (:func:`takes_device`). A device xlac does not know raises.

>>> import xlac, xlac.numpy as xnp
>>> xnp.zeros(2, device=xlac.asarray(0.0).device).device == xlac.asarray(0.0).device
True
"""
from __future__ import annotations

import functools
import inspect

from xlac import runtime
from xlac.array import Array
from xlac.errors import located
from xlac.trace.tracer import Tracer

__all__ = []


def known_devices() -> list:
    """The default backend's devices, then the CPU's when the default backend is another."""
    found = list(runtime.default_device().client.local_devices())
    cpu = runtime.get_device("cpu")
    if cpu not in found:
        found.extend(cpu.client.local_devices())
    return found


def check_device(device, op: str) -> None:
    """``device`` (None, a device, or a name such as ``"cpu"``) must be one of :func:`known_devices`."""
    if device is None:
        return
    try:
        known = runtime.get_device(device) in known_devices()
    except (TypeError, ValueError):
        known = False
    if not known:
        raise ValueError(located(f"{op}: unknown device {device!r}; expected None or one of {known_devices()}"))


def on_device(x, device) -> bool:
    """Whether ``x`` lives on ``device`` (any device when it is None)."""
    return device is None or x.device == runtime.get_device(device)


def to_device(x, device, /):
    """``x`` on ``device``: an ``xlac.Array`` is moved (the same one when it is already there); a traced
    array stays where the compiled function runs.

    >>> import xlac
    >>> a = xlac.asarray([1.0])
    >>> to_device(a, a.device) is a
    True
    """
    target = runtime.get_device(device)
    if on_device(x, target):
        return x
    if isinstance(x, Array):
        return Array._from_buffer(runtime.put_buffer(x._buffer, target), x._xlac_type, target)
    raise ValueError(located(f"to_device: a traced array cannot move to {target} inside a compiled function; "
                             "move the arguments before the call or compile for that device"))


def takes_device(fn):
    """``fn`` with the Array API's keyword-only ``device=None``: the arrays it returns are placed on that
    device (inside a compiled function only the device the function runs on is accepted).

    >>> import numpy as np, xlac.numpy as xnp
    >>> halves = takes_device(lambda n: xnp.full(n, 0.5))
    >>> np.asarray(halves(2, device="cpu"))
    array([0.5, 0.5])
    """
    @functools.wraps(fn)
    def placed(*args, device=None, **kwargs):
        check_device(device, fn.__name__)
        result = fn(*args, **kwargs)
        if device is None:
            return result
        if isinstance(result, tuple):
            return tuple(to_device(r, device) if isinstance(r, (Array, Tracer)) else r for r in result)
        return to_device(result, device)

    signature = inspect.signature(fn)
    device_param = inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None)
    placed.__signature__ = signature.replace(parameters=[*signature.parameters.values(), device_param])
    return placed
