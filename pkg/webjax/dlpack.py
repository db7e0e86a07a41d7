"""webjax.dlpack: `jax.dlpack` (from_dlpack, is_supported_dtype): arrays to and from other
libraries through DLPack (webjax arrays have `__dlpack__` and `__dlpack_device__`)."""

from webjax._src.dispatch.dlpack import from_dlpack, is_supported_dtype

__all__ = ["from_dlpack", "is_supported_dtype"]
