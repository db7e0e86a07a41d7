"""Top-level API: devices, device placement and transfers to the host, live arrays and cache
clearing, naming no-ops, `ensure_compile_time_eval`, and the `jax` module alias."""

from __future__ import annotations

import contextlib
import gc
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

from .. import checkpoint as _checkpoint  # remat
from .. import core
from .. import custom_derivatives as _custom  # custom_jvp/custom_vjp rules
from .. import debugging as _debugging  # jax.debug
from .. import jit as _jit  # the jit primitive and its rules
from .. import shard_map as _shard_map
from .. import sharding as _sharding
from .. import stages as _stages
from ..dispatch import devices as _devices
from ..dispatch import program
from ..dispatch.array import Array
from ..dispatch.devices import default_device as _current_default_device
from ..hosts import in_browser
from ..jit import Jitted
from ..lax import (
    ad_rules,  # registers derivative rules
    batching_rules,  # registers vmap rules
    control_flow,  # cond, while, scan
    convolution,  # conv_general_dilated and its rules
    windowed,  # reduce_window, select_and_*, cumulative reductions
)
from ..refs import Ref
from ..runtime import backend as rt
from ..runtime import backends  # registers the backends
from ..runtime.backend import Device
from ..runtime.webgpu import init_webgpu_async as _init_webgpu_async
from ..transformations import ShapeDtypeStruct
from ..tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten
from ..vmap import _broadcast_prefix


def devices(backend: str | None = None) -> list[Device]:
    """Devices of `backend` (default: the default backend), like `jax.devices()`."""
    if backend is not None:
        rt.check_allowed(backend)  # JAX_PLATFORMS leaves it out: JAX's error
    platform = backend if backend is not None else rt.default_platform()
    return [rt.device(platform)]


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Device]:
    return devices(backend)


def device_count(backend: str | None = None) -> int:
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    return device_count(backend)


def default_backend() -> str:
    return _current_default_device().platform


def available_backends() -> list[str]:
    """Every platform this host can run, best first (webjax-specific)."""
    return rt.available_platforms()


def device_put(
    x: Any,
    device: Any = None,
    *,
    src: Any = None,
    donate: bool = False,
    may_alias: Any = None,
) -> Any:
    """`x` (a pytree) on `device`: a Device, a platform name, a Sharding or a PartitionSpec
    over the context mesh, or a pytree prefix of `x` of those."""
    if device is None or isinstance(device, (Device, str, _sharding.Sharding, _sharding.P)):
        return tree_map(lambda leaf: _put_leaf(leaf, device), x)
    leaves, tree = tree_flatten(x)
    targets = _broadcast_prefix("device_put device", device, x)
    return tree_unflatten(tree, [_put_leaf(a, t) for a, t in zip(leaves, targets, strict=True)])


def _put_leaf(leaf: Any, device: Any) -> Any:
    if isinstance(device, str):
        device = rt.device(device)
    if device is None or isinstance(device, Device):
        target = device if device is not None else _current_default_device()
        return _devices.put(leaf, target, commit=device is not None)
    if isinstance(device, _sharding.P):
        device = _sharding.resolve(
            device,
            "Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to device_put",
            ValueError,
        )
    if not isinstance(device, _sharding.Sharding):
        raise ValueError(
            "`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, "
            "`Format`, `jax.memory.Space` or a pytree of these values. Received invalid value: "
            f"{device}"
        )
    devs = list(device._device_assignment)
    out = _devices.put(leaf, devs[0], commit=True)
    if isinstance(device, _sharding.NamedSharding):
        aval = core.get_aval(out)
        if len(device.spec) > aval.ndim:  # JAX asserts the spec fits the rank
            raise AssertionError((aval.ndim, device.spec))
        device.shard_shape(aval.shape)  # JAX's error where a dimension does not divide
    return _shard_map.placed(out, device)


async def init_webgpu_async() -> list[Device]:
    """Open the WebGPU device without blocking. In a page where Python runs without JSPI
    (plain `runPython`), await this before using the webgpu device."""
    if in_browser():
        await _init_webgpu_async()
    return devices("webgpu")


async def read_async(x: Any) -> Any:
    """The values of every array in the pytree `x` as nested Python lists, without blocking
    the page (the async twin of `tolist()`)."""
    leaves, tree = tree_flatten(x)
    out = [await leaf.tolist_async() if isinstance(leaf, Array) else leaf for leaf in leaves]
    return tree_unflatten(tree, out)


async def block_until_ready_async(x: Any) -> Any:
    for leaf in tree_leaves(x):
        if hasattr(leaf, "block_until_ready_async"):
            await leaf.block_until_ready_async()
    return x


def block_until_ready(x: Any) -> Any:
    for leaf in tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


def process_indices() -> list[int]:
    """The indices of every process of the computation: [0] here."""
    return [0]


def make_array_from_single_device_arrays(
    shape: Any, sharding: Any, arrays: Any, *, dtype: Any = None
) -> Any:
    """The global array of `shape` whose shards, one per device of `sharding`, are `arrays`
    (one device here: the one array is the whole)."""
    arrays = list(arrays)
    n = len(sharding.addressable_devices)
    if len(arrays) != n:
        raise ValueError(
            f"Expected {n} per-device arrays (this is how many devices are addressable by the "
            f"sharding), but got {len(arrays)}"
        )
    x = arrays[0]
    if tuple(x.shape) != tuple(shape):
        raise ValueError(
            f"Expected shard shape {sharding.shard_shape(tuple(shape))} doesn't match the single "
            f"device array shape {tuple(x.shape)}."
        )
    return device_put(x, sharding)


def make_array_from_process_local_data(
    sharding: Any, local_data: Any, global_shape: Any = None
) -> Any:
    """The global array of this process' data (one process here: the data is the whole)."""
    if global_shape is not None and tuple(global_shape) != tuple(local_data.shape):
        raise ValueError(
            f"global_shape {tuple(global_shape)} does not match the local data's shape "
            f"{tuple(local_data.shape)} on one process"
        )
    return device_put(local_data, sharding)


def make_array_from_callback(
    shape: Any, sharding: Any, data_callback: Callable[[Any], Any], dtype: Any = None
) -> Any:
    """The array of `shape` whose every shard is `data_callback(index)` (one whole shard)."""
    index = sharding.addressable_devices_indices_map(tuple(shape))
    (idx,) = set(index.values())
    return device_put(data_callback(idx), sharding)


# ---- host values --------------------------------------------------------------------------------
def device_get(x: Any) -> Any:
    """The values of every array in the pytree `x` on the host (NumPy arrays where NumPy is
    available, nested lists otherwise); other leaves pass through."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover (Pyodide without numpy)
        np = None  # type: ignore[assignment]

    def get(leaf: Any) -> Any:
        if isinstance(leaf, core.Tracer):
            raise core.ConcretizationTypeError(
                "device_get requires concrete arrays, got a tracer (use jax.debug.callback or "
                "jax.pure_callback to see values inside transformations)"
            )
        if isinstance(leaf, Array):
            return np.asarray(leaf) if np is not None else leaf.tolist()
        return leaf

    return tree_map(get, x)


def typeof(x: Any) -> Any:
    """The abstract value (ShapedArray: shape, dtype, weak type) of `x`; a Ref's is its
    AbstractRef."""
    if isinstance(x, Ref):
        return x.aval
    return core.get_aval(x)


def live_arrays(platform: str | None = None) -> list[Any]:
    """Every Array not yet deleted (optionally only those on `platform`)."""
    out = [o for o in gc.get_objects() if isinstance(o, Array) and not o._deleted]
    if platform is not None:
        out = [a for a in out if a._device.platform == platform]
    return out


def effects_barrier() -> None:
    """Wait until every pending side effect (debug prints, callbacks) has run.

    webjax runs callbacks when the computation holding them is dispatched, so they have all
    run by the time this is called; pending lazy results are evaluated to honour that."""
    for a in live_arrays():
        a.block_until_ready()


def clear_caches() -> None:
    """Drop every jit trace cache and compiled program (they are rebuilt on the next call)."""
    program._CACHE.clear()
    program._KEEP.clear()
    for o in gc.get_objects():
        if isinstance(o, Jitted):
            o.clear_cache()


def clear_backends() -> None:
    """Drop every backend (and the compiled programs), so the next use makes fresh ones: the
    way to a working webgl device after its context was lost (`webglcontextlost`). Devices
    from `jax.devices()` after the call are new ones; arrays made before keep their device,
    and on a lost context every use of them raises, naming the loss (never zeros)."""
    rt.clear_backends()  # arrays not computed yet still run on their (old) device
    clear_caches()


# ---- naming (no-ops in webjax) ------------------------------------------------------------------
def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """`fun` itself (JAX adds a name to the profiler stack; webjax has none)."""
    return fun


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """Context manager naming the ops inside for profilers (a no-op in webjax)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


# ---- eager evaluation while tracing -------------------------------------------------------------
ensure_compile_time_eval = core.eager_constant_folding

# `jit(f).lower(...).out_info` shows result types as ShapeDtypeStructs.
_stages.out_struct[0] = lambda aval: ShapeDtypeStruct(aval.shape, aval.dtype)


_JAX_MODULES = {
    "jax": "webjax",
    "jax.numpy": "webjax.numpy",
    "jax.numpy.linalg": "webjax.numpy.linalg",
    "jax.numpy.fft": "webjax.numpy.fft",
    "jax.lax": "webjax.lax",
    "jax.lax.linalg": "webjax.lax.linalg",
    "jax.tree_util": "webjax.tree_util",
    "jax.flatten_util": "webjax.flatten_util",
    "jax.tree": "webjax.tree",
    "jax.dtypes": "webjax.dtypes",
    "jax.ad_checkpoint": "webjax.ad_checkpoint",
    "jax.custom_derivatives": "webjax.custom_derivatives",
    "jax.profiler": "webjax.profiler",
    "jax.errors": "webjax.errors",
    "jax.debug": "webjax.debug",
    "jax.scipy": "webjax.scipy",
    "jax.scipy.special": "webjax.scipy.special",
    "jax.scipy.linalg": "webjax.scipy.linalg",
    "jax.scipy.optimize": "webjax.scipy.optimize",
    "jax.scipy.signal": "webjax.scipy.signal",
    "jax.scipy.ndimage": "webjax.scipy.ndimage",
    "jax.scipy.integrate": "webjax.scipy.integrate",
    "jax.scipy.interpolate": "webjax.scipy.interpolate",
    "jax.scipy.cluster": "webjax.scipy.cluster",
    "jax.scipy.cluster.vq": "webjax.scipy.cluster.vq",
    "jax.scipy.spatial": "webjax.scipy.spatial",
    "jax.scipy.sparse": "webjax.scipy.sparse",
    "jax.scipy.sparse.linalg": "webjax.scipy.sparse.linalg",
    "jax.scipy.spatial.transform": "webjax.scipy.spatial.transform",
    "jax.random": "webjax.random",
    "jax.nn": "webjax.nn",
    "jax.nn.initializers": "webjax.nn.initializers",
    "jax.ops": "webjax.ops",
    "jax.image": "webjax.image",
    "jax.typing": "webjax.typing",
    "jax.experimental": "webjax.experimental",
    "jax.experimental.ode": "webjax.experimental.ode",
    "jax.experimental.sparse": "webjax.experimental.sparse",
    "jax.example_libraries": "webjax.example_libraries",
    "jax.example_libraries.optimizers": "webjax.example_libraries.optimizers",
    "jax.example_libraries.stax": "webjax.example_libraries.stax",
    "jax.scipy.stats": "webjax.scipy.stats",
    "jax.scipy.stats.bernoulli": "webjax.scipy.stats.bernoulli",
    "jax.scipy.stats.beta": "webjax.scipy.stats.beta",
    "jax.scipy.stats.binom": "webjax.scipy.stats.binom",
    "jax.scipy.stats.cauchy": "webjax.scipy.stats.cauchy",
    "jax.scipy.stats.chi2": "webjax.scipy.stats.chi2",
    "jax.scipy.stats.expon": "webjax.scipy.stats.expon",
    "jax.scipy.stats.gamma": "webjax.scipy.stats.gamma",
    "jax.scipy.stats.geom": "webjax.scipy.stats.geom",
    "jax.scipy.stats.laplace": "webjax.scipy.stats.laplace",
    "jax.scipy.stats.logistic": "webjax.scipy.stats.logistic",
    "jax.scipy.stats.multivariate_normal": "webjax.scipy.stats.multivariate_normal",
    "jax.scipy.stats.norm": "webjax.scipy.stats.norm",
    "jax.scipy.stats.pareto": "webjax.scipy.stats.pareto",
    "jax.scipy.stats.poisson": "webjax.scipy.stats.poisson",
    "jax.scipy.stats.t": "webjax.scipy.stats.t",
    "jax.scipy.stats.uniform": "webjax.scipy.stats.uniform",
    "jax.scipy.stats.dirichlet": "webjax.scipy.stats.dirichlet",
    "jax.scipy.stats.truncnorm": "webjax.scipy.stats.truncnorm",
    "jax.scipy.stats.gennorm": "webjax.scipy.stats.gennorm",
    "jax.scipy.stats.multinomial": "webjax.scipy.stats.multinomial",
    "jax.scipy.stats.betabinom": "webjax.scipy.stats.betabinom",
    "jax.scipy.stats.gumbel_l": "webjax.scipy.stats.gumbel_l",
    "jax.scipy.stats.gumbel_r": "webjax.scipy.stats.gumbel_r",
    "jax.scipy.stats.nbinom": "webjax.scipy.stats.nbinom",
    "jax.scipy.stats.vonmises": "webjax.scipy.stats.vonmises",
    "jax.scipy.stats.wrapcauchy": "webjax.scipy.stats.wrapcauchy",
    "jax.core": "webjax.core",
    "jax.extend": "webjax.extend",
    "jax.extend.core": "webjax.extend.core",
    "jax.extend.core.primitives": "webjax.extend.core.primitives",
    "jax.extend.linear_util": "webjax.extend.linear_util",
    "jax.extend.source_info_util": "webjax.extend.source_info_util",
    "jax.extend.backend": "webjax.extend.backend",
    "jax.extend.random": "webjax.extend.random",
    "jax.interpreters": "webjax.interpreters",
    "jax.interpreters.ad": "webjax.interpreters.ad",
    "jax.interpreters.batching": "webjax.interpreters.batching",
    "jax.interpreters.partial_eval": "webjax.interpreters.partial_eval",
    "jax.interpreters.mlir": "webjax.interpreters.mlir",
    "jax.api_util": "webjax.api_util",
    "jax.test_util": "webjax.test_util",
    "jax.experimental.checkify": "webjax.experimental.checkify",
    # the private `jax._src` paths libraries import (see webjax/_jax_src)
    "jax._src": "webjax._jax_src",
    "jax._src.api_util": "webjax._jax_src.api_util",
    "jax._src.callback": "webjax._jax_src.callback",
    "jax._src.checkify": "webjax._jax_src.checkify",
    "jax._src.compiler": "webjax._jax_src.compiler",
    "jax._src.core": "webjax._jax_src.core",
    "jax._src.dispatch": "webjax._jax_src.dispatch",
    "jax._src.dtypes": "webjax._jax_src.dtypes",
    "jax._src.traceback_util": "webjax._jax_src.traceback_util",
    "jax._src.tree_util": "webjax._jax_src.tree_util",
    "jax._src.xla_bridge": "webjax._jax_src.xla_bridge",
    "jax.sharding": "webjax.sharding",
    "jax.stages": "webjax.stages",
    "jax.experimental.shard_map": "webjax.experimental.shard_map",
    "jax.experimental.multihost_utils": "webjax.experimental.multihost_utils",
    "jax.experimental.layout": "webjax.experimental.layout",
    "jax.experimental.hijax": "webjax.experimental.hijax",
}


def install_as_jax() -> None:
    """Register webjax under the `jax` module names so unmodified JAX programs import it."""
    import importlib

    for alias, real in _JAX_MODULES.items():
        try:
            sys.modules[alias] = importlib.import_module(real)
        except ImportError:  # a module a later issue adds
            continue
    # importing JAX imports ml_dtypes, which gives NumPy the names 'bfloat16', 'int4', ...
    # (optional here: Pyodide has no ml_dtypes)
    with contextlib.suppress(ImportError):
        importlib.import_module("ml_dtypes")
    jax = JaxNamespace(sys.modules["webjax"], sys.modules["webjax._jax_src"])
    sys.modules["jax"] = jax
    sys.modules["jax.version"] = jax.version


# The JAX release whose API webjax follows: what `jax.__version__` says after install_as_jax
# (libraries choose code paths by it; webjax's own version is `webjax.__version__`).
JAX_API_VERSION = "0.10.2"


class JaxNamespace(types.ModuleType):
    """The module `jax` after `install_as_jax`: webjax's namespace (every attribute read and
    write goes to the `webjax` module), except `jax._src`, which is the package of the private
    `jax._src` paths libraries import (`webjax._jax_src`), not webjax's implementation: code
    that reaches `jax._src.traceback_util` by attribute finds JAX's name there; and the
    version, which is that of the JAX API webjax follows (`jax.__version__`, `jax.version`)."""

    def __init__(self, webjax: types.ModuleType, private: types.ModuleType) -> None:
        super().__init__(webjax.__name__, webjax.__doc__)  # `jax.__name__` is "webjax"
        info = tuple(int(p) for p in JAX_API_VERSION.split("."))
        version = types.ModuleType("jax.version", "The JAX API version webjax follows.")
        version.__version__ = JAX_API_VERSION  # type: ignore[attr-defined]
        version.__version_info__ = info  # type: ignore[attr-defined]
        version._version = JAX_API_VERSION  # type: ignore[attr-defined]
        self.__dict__.update(
            _webjax=webjax,
            _src=private,
            version=version,
            __version__=JAX_API_VERSION,
            __version_info__=info,
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_webjax"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("_src", "version", "__version__", "__version_info__"):
            self.__dict__[name] = value
        else:
            setattr(self.__dict__["_webjax"], name, value)

    def __dir__(self) -> list[str]:
        return dir(self.__dict__["_webjax"])
