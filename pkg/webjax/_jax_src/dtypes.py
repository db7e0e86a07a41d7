"""`jax._src.dtypes`: dtypes and promotion, with the promotion error."""

from webjax._src.dtypes import DType, ExtendedDType, TypePromotionError, canonicalize_dtype
from webjax.dtypes import *  # noqa: F403
from webjax.dtypes import __all__ as _public

__all__ = ["DType", "ExtendedDType", "TypePromotionError", "canonicalize_dtype", *_public]
