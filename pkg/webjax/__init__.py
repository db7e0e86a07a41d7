"""webjax: JAX for the browser, in Python.

    import webjax as jax
    import webjax.numpy as jnp

Public modules only re-export from `webjax._src`.
"""

from webjax import (
    api_util,
    core,
    debug,
    dtypes,
    errors,
    experimental,
    extend,
    flatten_util,
    image,
    interpreters,
    lax,
    nn,
    numpy,
    ops,
    profiler,
    random,
    scipy,
    sharding,
    stages,
    test_util,
    tree,
    tree_util,
    typing,
)
from webjax._src.api import (
    available_backends,
    block_until_ready,
    block_until_ready_async,
    clear_backends,
    clear_caches,
    default_backend,
    device_count,
    device_get,
    device_put,
    devices,
    effects_barrier,
    ensure_compile_time_eval,
    init_webgpu_async,
    install_as_jax,
    live_arrays,
    local_device_count,
    local_devices,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    named_call,
    named_scope,
    process_indices,
    read_async,
    typeof,
)
from webjax._src.api.environment import print_environment_info
from webjax._src.api.pmap import pmap, process_count, process_index
from webjax._src.callback import pure_callback
from webjax._src.checkpoint import checkpoint, checkpoint_policies, remat
from webjax._src.config import (
    config,
    debug_infs,
    debug_nans,
    default_device,
    default_matmul_precision,
    default_prng_impl,
    disable_jit,
    enable_x64,
    explain_cache_misses,
    log_compiles,
    numpy_dtype_promotion,
    numpy_rank_promotion,
    threefry_partitionable,
)
from webjax._src.core import ShapedArray
from webjax._src.custom_derivatives import closure_convert, custom_gradient, custom_jvp, custom_vjp
from webjax._src.dispatch.basearray import Array
from webjax._src.jit import jit
from webjax._src.lax.lax import stop_gradient
from webjax._src.refs import Ref, freeze, new_ref
from webjax._src.runtime.backend import Device
from webjax._src.shard_map import reshard, shard_map
from webjax._src.sharding import NamedSharding, P, Shard, make_mesh, set_mesh
from webjax._src.transformations import (
    ShapeDtypeStruct,
    eval_shape,
    grad,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    make_jaxpr,
    value_and_grad,
    vjp,
)
from webjax._src.vmap import vmap

__version__ = "0.1.0"

__all__ = [
    "Array",
    "Ref",
    "freeze",
    "new_ref",
    "Device",
    "ShapeDtypeStruct",
    "ShapedArray",
    "checkpoint",
    "custom_jvp",
    "custom_vjp",
    "eval_shape",
    "grad",
    "init_webgpu_async",
    "hessian",
    "jacfwd",
    "jit",
    "jacobian",
    "jacrev",
    "jvp",
    "linear_transpose",
    "linearize",
    "make_jaxpr",
    "nn",
    "pmap",
    "process_count",
    "process_index",
    "remat",
    "scipy",
    "stop_gradient",
    "value_and_grad",
    "vjp",
    "vmap",
    "available_backends",
    "block_until_ready",
    "block_until_ready_async",
    "config",
    "default_backend",
    "debug",
    "default_device",
    "device_count",
    "device_put",
    "devices",
    "dtypes",
    "errors",
    "install_as_jax",
    "lax",
    "local_device_count",
    "local_devices",
    "numpy",
    "profiler",
    "random",
    "read_async",
    "tree",
    "tree_util",
    "checkpoint_policies",
    "clear_backends",
    "clear_caches",
    "closure_convert",
    "custom_gradient",
    "default_matmul_precision",
    "device_get",
    "disable_jit",
    "effects_barrier",
    "enable_x64",
    "ensure_compile_time_eval",
    "experimental",
    "flatten_util",
    "float0",
    "image",
    "live_arrays",
    "named_call",
    "named_scope",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "debug_infs",
    "debug_nans",
    "default_prng_impl",
    "explain_cache_misses",
    "log_compiles",
    "print_environment_info",
    "threefry_partitionable",
    "ops",
    "pure_callback",
    "typeof",
    "typing",
    "NamedSharding",
    "P",
    "Shard",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "make_mesh",
    "process_indices",
    "reshard",
    "set_mesh",
    "shard_map",
    "sharding",
    "stages",
    "api_util",
    "extend",
    "interpreters",
    "test_util",
]


def __getattr__(name: str) -> object:
    if name == "float0":  # a NumPy dtype: made on first use, so importing webjax needs no NumPy
        from webjax._src.dtypes import float0

        return float0()
    raise AttributeError(f"module 'webjax' has no attribute {name!r}")
