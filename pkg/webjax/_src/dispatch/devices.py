"""Device selection: the default device, where an application runs, and moving arrays.

JAX's placement rule: committed arrays (`device_put` with a device) decide and must agree;
otherwise the first non-constant array's device; with no arrays, the default device (innermost
`jax.default_device(...)`, then the `jax_default_device` setting, then the best platform).
Uncommitted arrays elsewhere are moved; constants move for free (they are expressions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import core
from ..config import config
from ..runtime import backend as rt
from ..runtime.backend import Device
from . import array as array_mod
from . import lazy
from .array import Array

_default_device_stack: list[Device] = []


def default_device() -> Device:
    if _default_device_stack:
        return _default_device_stack[-1]
    configured = config.jax_default_device
    if configured is not None:
        return configured if isinstance(configured, Device) else rt.device(str(configured))
    return rt.device(rt.default_platform())


class using_device:
    """`jax.default_device(device)`: a context manager (also accepts a platform name)."""

    def __init__(self, device: Device | str | None) -> None:
        if isinstance(device, str):
            device = rt.device(device)
        self.device = device

    def __enter__(self) -> Device | None:
        if self.device is not None:
            _default_device_stack.append(self.device)
        return self.device

    def __exit__(self, *exc: Any) -> None:
        if self.device is not None:
            _default_device_stack.pop()


def pick_device(args: Sequence[Any]) -> Device:
    """The device an application of a primitive to `args` runs on (the module docstring's
    rule)."""
    arrays = [a for a in args if isinstance(a, Array)]
    committed = {a._device for a in arrays if a._committed}
    if len(committed) > 1:
        raise ValueError(
            "Received incompatible devices for jitted computation. Got argument devices "
            + ", ".join(sorted(str(d) for d in committed))
            + ". Move arrays to one device with jax.device_put first."
        )
    if committed:
        return committed.pop()
    for a in arrays:
        if not is_constant(a):
            return a._device
    return arrays[0]._device if arrays else default_device()


def is_constant(x: Array) -> bool:
    """Whether `x` reads no buffer (an inline constant: it is the same on every device)."""
    e = x._exp
    return e is None or not e.info[1]


def transfer(x: Array, device: Device) -> Array:
    """A copy of `x` on `device` (bytes through the host)."""
    lb = x._buffer()
    if lb is None:
        return Array(x.aval, device, None)
    out = array_mod.from_host_bytes(lazy.read_bytes(lb), x.shape, x.dtype, device)
    out.aval = x.aval
    return out


def put(x: Any, device: Device | str, commit: bool) -> Any:
    """One leaf of `jax.device_put`: an array on `device` (or a platform's device), committed
    to it with `commit`; the caller's array is never changed."""
    if isinstance(device, str):
        device = rt.device(device)
    if isinstance(x, Array):
        if x.device == device:
            out = x
        elif is_constant(x):  # an expression reading no buffer: made there, nothing copied
            out = Array(x.aval, device, array_mod.exp_of(x))
        else:
            out = transfer(x, device)
    else:
        with using_device(device):
            out = array_mod.asarray(x)
    if commit and isinstance(out, Array):
        if out is x:  # committing must not change the caller's array
            out = Array(x.aval, x._device, array_mod.exp_of(x))
        out._committed = True
    return out


def placed(out: Any, device: Any) -> Any:
    """A creation function's `device=`: the result committed to that device (a Device, a
    platform name, or a Sharding of one device), as JAX's; no device leaves it uncommitted,
    and under a transformation it stays what it is."""
    if device is None or not isinstance(out, Array) or core.find_cur_trace() is not core.eval_trace:
        return out
    if not isinstance(device, str) and hasattr(device, "device_set"):  # a Sharding
        device_set = device.device_set
        if len(device_set) != 1:
            raise ValueError(f"device= takes a sharding of one device, got {device}")
        device = next(iter(device_set))
    return put(out, device, commit=True)
