"""webjax.numpy: the jax.numpy API."""

import math as _math
import sys as _sys

from webjax._src.dispatch.basearray import Array as ndarray
from webjax._src.dtype_queries import issubdtype as _issubdtype
from webjax._src.dtypes import _SCALAR_TYPES as _ST
from webjax._src.dtypes import NARROW_SCALAR_TYPES as _NARROW
from webjax._src.dtypes import dtype
from webjax._src.numpy import *  # noqa: F403
from webjax._src.numpy import __all__ as _all
from webjax._src.numpy import array_api_metadata as _array_api
from webjax._src.numpy.array_api_metadata import __array_api_version__, __array_namespace_info__
from webjax._src.numpy.linalg import jnp_cross as cross
from webjax._src.shard_map import with_out_sharding as _with_out_sharding
from webjax.numpy import fft, linalg

issubdtype = _issubdtype  # the one that knows key dtypes, as JAX's jnp.issubdtype
bool_ = _ST["bool"]
int8, int16, int32, int64 = _ST["int8"], _ST["int16"], _ST["int32"], _ST["int64"]
uint8, uint16, uint32, uint64 = _ST["uint8"], _ST["uint16"], _ST["uint32"], _ST["uint64"]
float16, bfloat16, float32, float64 = (
    _ST["float16"],
    _ST["bfloat16"],
    _ST["float32"],
    _ST["float64"],
)
float4_e2m1fn, float8_e3m4, float8_e4m3 = (
    _NARROW["float4_e2m1fn"],
    _NARROW["float8_e3m4"],
    _NARROW["float8_e4m3"],
)
float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz = (
    _NARROW["float8_e4m3b11fnuz"],
    _NARROW["float8_e4m3fn"],
    _NARROW["float8_e4m3fnuz"],
)
float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu = (
    _NARROW["float8_e5m2"],
    _NARROW["float8_e5m2fnuz"],
    _NARROW["float8_e8m0fnu"],
)
int2, int4, uint2, uint4 = _NARROW["int2"], _NARROW["int4"], _NARROW["uint2"], _NARROW["uint4"]
pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
newaxis = None

# JAX's `out_sharding=` keyword, as with_sharding_constraint on the result
for _name in (
    "arange",
    "array",
    "asarray",
    "broadcast_to",
    "empty",
    "full",
    "full_like",
    "ones",
    "ones_like",
    "percentile",
    "ravel",
    "repeat",
    "reshape",
    "zeros",
    "zeros_like",
):
    globals()[_name] = _with_out_sharding(globals()[_name], label=f"jnp.{_name}")
del _name

__all__ = [
    *_all,
    "ndarray",
    "dtype",
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    *_NARROW,
    "pi",
    "e",
    "inf",
    "nan",
    "newaxis",
]

_array_api.register_namespace(_sys.modules[__name__])  # what `Array.__array_namespace__` returns
