"""`jax.experimental.multihost_utils` for one process: every process' value is this one's."""

from __future__ import annotations

from typing import Any

from ..numpy import creation
from ..numpy.shape import expand_dims
from ..tree_util import tree_map


def _host(x: Any) -> Any:
    """`x` as a host array: NumPy's where NumPy exists (JAX returns NumPy arrays here)."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover (Pyodide without numpy)
        return creation.asarray(x)
    return np.asarray(x)


def sync_global_devices(name: str) -> None:
    """Wait until every process reaches this point: one process here, so at once; pending
    work is finished first, as a barrier would."""
    if not isinstance(name, str):
        raise TypeError(f"sync_global_devices name must be a string, got {type(name)}")


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process' value of each leaf, stacked along a new leading axis (concatenated
    along axis 0 with `tiled`); one process here."""

    def gather(x: Any) -> Any:
        x = creation.asarray(x)
        return _host(x if tiled else expand_dims(x, 0))

    return tree_map(gather, in_tree)


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """Process 0's value of every leaf, on every process (this one)."""
    return tree_map(lambda x: _host(creation.asarray(x)), in_tree)


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Check that every process holds the same values: one process always does."""


def reached_preemption_sync_point(step_id: int) -> bool:
    return False


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Any, pspecs: Any) -> Any:
    """One process holds the whole mesh: the local arrays are the global ones."""
    return local_inputs


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Any, pspecs: Any) -> Any:
    return global_inputs


__all__ = [
    "assert_equal",
    "broadcast_one_to_all",
    "global_array_to_host_local_array",
    "host_local_array_to_global_array",
    "process_allgather",
    "reached_preemption_sync_point",
    "sync_global_devices",
]
