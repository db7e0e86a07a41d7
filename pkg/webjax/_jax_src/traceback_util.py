"""`jax._src.traceback_util`: library frames registered as internal, entry points marked."""

from webjax._src.source_info import _exclude_paths, api_boundary, include_frame, register_exclusion

__all__ = ["_exclude_paths", "api_boundary", "include_frame", "register_exclusion"]
