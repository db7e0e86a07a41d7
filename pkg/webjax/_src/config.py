"""Global settings, read through `webjax.config` as through `jax.config`, and the context
managers that set them for a `with` block (`jax.enable_x64`, `jax.debug_nans`, ...).

Every option webjax honours is a `State`: a process-wide value (its `JAX_*` environment
variable at import, then `config.update`) and a thread-local value that a context manager sets
for its block. Values are parsed and validated as JAX does, with JAX's errors; an unknown name
raises `AttributeError`. In the browser the loader calls `config.update` before the user's code
runs (`loadWebjax({config: {...}})`). Options that change what a trace produces form the jit
cache key (`trace_context`).
"""

from __future__ import annotations

import enum
import functools
import itertools
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

_NO_DEFAULT: Any = object()  # a context manager called without a value
_UNSET: Any = object()
_local = threading.local()  # name -> the value a context manager set in this thread


class NumpyDtypePromotion(enum.Enum):
    """The values of `jax_numpy_dtype_promotion` (they compare equal to their strings)."""

    STANDARD = "standard"
    STRICT = "strict"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return self.value == other
        return self is other

    def __hash__(self) -> int:
        return hash(self.value)

    def __str__(self) -> str:
        return self.value


def bool_env(varname: str, default: bool) -> bool:
    """An environment variable as a bool: y/yes/t/true/on/1 or n/no/f/false/off/0 (any case)."""
    val = os.getenv(varname, str(default)).lower()
    if val in ("y", "yes", "t", "true", "on", "1"):
        return True
    if val in ("n", "no", "f", "false", "off", "0"):
        return False
    raise ValueError(f"invalid truth value {val!r} for environment {varname!r}")


class State:
    """One option: `.value` is the thread's context-manager value, else the global one;
    calling it gives a context manager (also a decorator) that sets it for a block."""

    def __init__(
        self,
        name: str,
        default: Any,
        help: str,
        parser: Callable[[Any], Any],
        cm_default: Any = _NO_DEFAULT,
        jit_key: bool = False,
    ) -> None:
        self._name = name
        self.__name__ = name[4:] if name.startswith("jax_") else name
        self.__doc__ = f"Context manager for `{name}` config option.\n\n{help}"
        self._parser = parser
        self._cm_default = cm_default
        self._global = parser(default)
        self.jit_key = jit_key

    @property
    def name(self) -> str:
        return self._name

    @property
    def value(self) -> Any:
        v = _local.__dict__.get(self._name, _UNSET)
        return self._global if v is _UNSET else v

    def _set(self, value: Any) -> None:
        self._global = self._parser(value)
        _refresh_trace_context()

    def __bool__(self) -> NoReturn:
        raise TypeError(
            f"bool() not supported for instances of type '{type(self).__name__}' "
            f"(did you mean to use '{type(self).__name__}.value' instead?)"
        )

    def __call__(self, new_val: Any = _NO_DEFAULT) -> StateContextManager:
        return StateContextManager(self, new_val)

    def __repr__(self) -> str:
        return f"<webjax config State {self._name}={self.value!r}>"


class StateContextManager:
    """Sets a State's thread-local value for a `with` block or a decorated function."""

    def __init__(self, state: State, new_val: Any) -> None:
        if new_val is _NO_DEFAULT:
            if state._cm_default is _NO_DEFAULT:
                raise TypeError(
                    f"Context manager for {state.__name__} config option requires an argument "
                    "representing the new value for the config option."
                )
            new_val = state._cm_default
        self.state = state
        self.new_val = state._parser(new_val)
        self._prev: list[Any] = []

    def __enter__(self) -> None:
        local = _local.__dict__
        self._prev.append(local.get(self.state._name, _UNSET))
        local[self.state._name] = self.new_val

    def __exit__(self, *exc: Any) -> None:
        prev = self._prev.pop()
        if prev is _UNSET:
            _local.__dict__.pop(self.state._name, None)
        else:
            _local.__dict__[self.state._name] = prev

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with StateContextManager(self.state, self.new_val):
                return func(*args, **kwargs)

        return wrapper


class Flag:
    """An option without a context manager (`jax_platform_name`): one global value."""

    jit_key = False

    def __init__(self, name: str, default: Any) -> None:
        self._name = name
        self.value = default

    def _set(self, value: Any) -> None:
        self.value = value


class Config:
    """`jax.config`: `update`, `read`, `values`, an attribute per option, the absl hooks."""

    def __init__(self) -> None:
        self._value_holders: dict[str, State | Flag] = {}
        self.meta: dict[str, tuple[Any, list[Any], dict[str, Any]]] = {}
        self._contextmanager_flags: set[str] = set()
        self.use_absl = False
        self.absl_flags: Any = None

    def add_option(
        self,
        name: str,
        holder: State | Flag,
        opt_type: Any,
        meta_args: list[Any],
        meta_kwargs: dict[str, Any],
    ) -> None:
        if name in self._value_holders:
            raise Exception(f"Config option {name} already defined")
        self._value_holders[name] = holder
        self.meta[name] = (opt_type, meta_args, meta_kwargs)
        if isinstance(holder, State):  # a Flag is read with `config.read` only, as in JAX
            setattr(Config, name, property(lambda _: holder.value))

    def update(self, name: str, val: Any) -> None:
        if name not in self._value_holders:
            raise AttributeError(f"Unrecognized config option: {name}")
        self._value_holders[name]._set(val)

    def read(self, name: str) -> Any:
        if name in self._contextmanager_flags:
            raise AttributeError(
                "For flags with a corresponding contextmanager, read their value via e.g. "
                f"`config.{name}` rather than `config.FLAGS.{name}`."
            )
        return self._read(name)

    def _read(self, name: str) -> Any:
        try:
            return self._value_holders[name].value
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    @property
    def values(self) -> dict[str, Any]:
        return {name: holder.value for name, holder in self._value_holders.items()}

    @property
    def x64_enabled(self) -> bool:
        return bool(enable_x64.value)

    def __getattr__(self, name: str) -> Any:  # options are class properties; this is the miss
        raise AttributeError(f"'Config' object has no attribute '{name}'")

    # ---- absl: command-line flags named like the options (absl itself must be installed) ----
    def config_with_absl(self) -> None:
        """Define an absl flag per option; their values apply once `app.run` parsed argv."""
        from absl import app
        from absl import flags as absl_flags

        self.use_absl = True
        self.absl_flags = absl_flags
        define: dict[Any, Any] = {
            bool: absl_flags.DEFINE_bool,
            int: absl_flags.DEFINE_integer,
            str: absl_flags.DEFINE_string,
            "enum": absl_flags.DEFINE_enum,
        }
        for name, (opt_type, args, kwargs) in self.meta.items():
            if name in absl_flags.FLAGS:
                continue
            default = self._value_holders[name].value
            if opt_type == "enum":
                default = None if default is None else str(default)
            elif opt_type is str and default is not None and not isinstance(default, str):
                default = str(default)
            define[opt_type](name, default, *args, **kwargs)
        app.call_after_init(lambda: self.complete_absl_config(absl_flags))

    def complete_absl_config(self, absl_flags: Any) -> None:
        for name, holder in self._value_holders.items():
            try:
                flag = absl_flags.FLAGS[name]
            except KeyError:
                continue
            if flag.present:
                holder._set(flag.value)

    def parse_flags_with_absl(self) -> None:
        """Parse the `--jax...` arguments of `sys.argv` (before any `--`) into the options."""
        global _absl_configured
        if _absl_configured:
            return
        import absl.flags

        before = itertools.takewhile(lambda a: a != "--", sys.argv)
        argv = ["", *(a for a in before if a.startswith("--jax"))]
        self.config_with_absl()
        absl.flags.FLAGS(argv, known_only=True)
        self.complete_absl_config(absl.flags)
        _absl_configured = True


_absl_configured = False
config = Config()


# ---- option kinds: each reads its JAX_* environment variable once, at import ----------------
def bool_state(name: str, default: bool, help: str, *, jit_key: bool = False) -> State:
    default = bool_env(name.upper(), default)
    s = State(name, default, help, bool, cm_default=True, jit_key=jit_key)
    config._contextmanager_flags.add(name)
    config.add_option(name, s, bool, [], {"help": help})
    return s


def enum_state(
    name: str,
    values: Sequence[str],
    default: str | None,
    help: str,
    *,
    optional: bool = False,
    jit_key: bool = False,
) -> State:
    env = os.getenv(name.upper())
    if env is not None:
        if env not in values:
            raise ValueError(f'Invalid value "{env}" for JAX flag {name}')
        default = env
    allowed = list(values)

    def parser(v: Any) -> Any:
        if optional and v is None:
            return None
        if type(v) is not str or v not in allowed:
            head = "new enum value must be None or in" if optional else "new enum value must be in"
            raise ValueError(f"{head} {allowed}, got {v} of type {type(v)}.")
        return v

    s = State(name, default, help, parser, jit_key=jit_key)
    config._contextmanager_flags.add(name)
    config.add_option(name, s, "enum", [], {"enum_values": allowed, "help": help})
    return s


def string_or_object_state(
    name: str, help: str, validator: Callable[[Any], None], *, jit_key: bool = False
) -> State:
    def parser(v: Any) -> Any:
        validator(v)
        return v

    s = State(name, os.getenv(name.upper()), help, parser, jit_key=jit_key)
    config._contextmanager_flags.add(name)
    config.add_option(name, s, str, [], {"help": help})
    return s


def _optional_string(v: Any) -> None:
    if v is not None and not isinstance(v, str):
        raise ValueError(
            f"new string config value must be None or of type str, got {v} of type {type(v)}."
        )


PLATFORM_NAMES = ("cpu", "wasm", "webgpu", "webgl")


def _device_or_platform(v: Any) -> None:
    if v is None or (isinstance(v, str) and v in PLATFORM_NAMES) or "Device" in str(type(v)):
        return
    raise ValueError(
        "jax.default_device must be passed either a Device object (e.g. "
        "`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or 'webgpu', "
        f"got: {v!r}"
    )


def _dtype_promotion(v: Any) -> NumpyDtypePromotion:
    if isinstance(v, NumpyDtypePromotion):
        return v
    if isinstance(v, str):
        try:
            return NumpyDtypePromotion(v)
        except ValueError:
            raise ValueError(f"{v!r} is not a valid NumpyDtypePromotion") from None
    raise TypeError(
        f"new enum value must be an instance of {NumpyDtypePromotion}, got {v} of type {type(v)}."
    )


enable_x64 = bool_state(
    "jax_enable_x64",
    False,
    "Enable 64-bit types to be used (float64, int64, complex128).",
    jit_key=True,
)
config._contextmanager_flags.discard("jax_enable_x64")  # `config.read` of it works, as in JAX

jax_platforms = string_or_object_state(
    "jax_platforms",
    "Comma-separated list of the platforms webjax may use (cpu, wasm, webgpu, webgl), best "
    "first: the first is the default; each must be available. Unset: every available platform.",
    _optional_string,
)
_platform_name = Flag("jax_platform_name", os.getenv("JAX_PLATFORM_NAME", "").lower())
config.add_option(
    "jax_platform_name", _platform_name, str, [], {"help": "Deprecated: jax_platforms."}
)

default_device = string_or_object_state(
    "jax_default_device",
    "The default device of new arrays and jit calls: a Device or a platform name; None for the "
    "first platform.",
    _device_or_platform,
    jit_key=True,
)
disable_jit_state = bool_state(
    "jax_disable_jit", False, "Run jitted functions op by op (for debugging)."
)
debug_nans = bool_state(
    "jax_debug_nans",
    False,
    "Raise FloatingPointError at the primitive whose output holds a NaN (jitted programs are "
    "re-run op by op to find it).",
)
debug_infs = bool_state("jax_debug_infs", False, "Like jax_debug_nans, for infinities.")
default_matmul_precision = enum_state(
    "jax_default_matmul_precision",
    [
        "default",
        "high",
        "highest",
        "bfloat16",
        "tensorfloat32",
        "float32",
        "ANY_F8_ANY_F8_F32",
        "ANY_F8_ANY_F8_F32_FAST_ACCUM",
        "ANY_F8_ANY_F8_ANY",
        "ANY_F8_ANY_F8_ANY_FAST_ACCUM",
        "F16_F16_F16",
        "F16_F16_F32",
        "BF16_BF16_BF16",
        "BF16_BF16_F32",
        "BF16_BF16_F32_X3",
        "BF16_BF16_F32_X6",
        "BF16_BF16_F32_X9",
        "TF32_TF32_F32",
        "TF32_TF32_F32_X3",
        "F32_F32_F32",
        "F64_F64_F64",
    ],
    None,
    "The default precision of matmuls and convolutions (webjax computes every float32 "
    "contraction in float32, so all values give the same results).",
    optional=True,
    jit_key=True,
)
numpy_rank_promotion = enum_state(
    "jax_numpy_rank_promotion",
    ["allow", "warn", "raise"],
    "allow",
    "What jnp does when a binary function broadcasts operands of different ranks.",
    jit_key=True,
)
_promotion_env = os.getenv("JAX_NUMPY_DTYPE_PROMOTION")
if _promotion_env is not None and _promotion_env not in ("standard", "strict"):
    raise ValueError(f'Invalid value "{_promotion_env}" for JAX flag jax_numpy_dtype_promotion')
numpy_dtype_promotion = State(
    "jax_numpy_dtype_promotion",
    _promotion_env or "standard",
    "standard: JAX's type promotion lattice; strict: only equal dtypes (and weak scalars that "
    "fit) combine implicitly.",
    _dtype_promotion,
    jit_key=True,
)
config._contextmanager_flags.add("jax_numpy_dtype_promotion")
config.add_option(
    "jax_numpy_dtype_promotion",
    numpy_dtype_promotion,
    "enum",
    [],
    {"enum_values": ["standard", "strict"], "help": "dtype promotion mode"},
)
traceback_filtering = enum_state(
    "jax_traceback_filtering",
    ["off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto"],
    "auto",
    "Accepted for JAX programs; webjax's tracebacks are never filtered.",
)
log_compiles = bool_state(
    "jax_log_compiles",
    False,
    "Log (WARNING, loggers jax._src.dispatch and jax._src.interpreters.pxla) each trace and "
    "compile of a jitted function, with its name and argument types.",
)
explain_cache_misses = bool_state(
    "jax_explain_cache_misses",
    False,
    "Log (WARNING, logger jax._src.interpreters.partial_eval) why a jitted function traced again.",
)
default_prng_impl = enum_state(
    "jax_default_prng_impl",
    ["threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32"],
    "threefry2x32",
    "The PRNG implementation of new keys (webjax implements threefry2x32).",
    jit_key=True,
)
threefry_partitionable = bool_state(
    "jax_threefry_partitionable",
    True,
    "Partitionable threefry counters (the default; webjax implements only these).",
    jit_key=True,
)


def _debug_parser(v: Any) -> int:
    return int(v or 0)


# webjax's own: 1 prints dispatches, 2 + jaxprs of jit, 3 + kernel IR, 4 + generated code
webjax_debug = State(
    "webjax_debug",
    os.environ.get("WEBJAX_DEBUG", "0"),
    "webjax's debug printing level",
    _debug_parser,
)
config.add_option("webjax_debug", webjax_debug, int, [], {"help": "webjax's debug printing level"})


def check_prng_impl() -> None:
    """Called when a key is made: a `jax_default_prng_impl` or `jax_threefry_partitionable`
    webjax does not implement is an error there, not a silent difference in the bits."""
    if default_prng_impl.value != "threefry2x32":
        raise NotImplementedError(
            f"webjax implements only the threefry2x32 PRNG; jax_default_prng_impl is "
            f"{default_prng_impl.value!r}"
        )
    if not threefry_partitionable.value:
        raise NotImplementedError(
            "webjax implements only partitionable threefry (jax_threefry_partitionable=True)"
        )


# ---- what traces depend on ----------------------------------------------------------------------
_JIT_KEY: list[State] = [
    h for h in config._value_holders.values() if isinstance(h, State) and h.jit_key
]
_global_context: list[tuple[Any, ...]] = [()]


def _refresh_trace_context() -> None:
    if "_JIT_KEY" in globals():
        _global_context[0] = tuple(s._global for s in _JIT_KEY)


_refresh_trace_context()


def trace_context() -> tuple[Any, ...]:
    """The values of the options a trace depends on (part of every jit cache key)."""
    if not _local.__dict__:
        return _global_context[0]
    return tuple(s.value for s in _JIT_KEY)


def trace_context_names() -> tuple[str, ...]:
    return tuple(s.name for s in _JIT_KEY)


def debug_level() -> int:
    return int(webjax_debug.value)


def x64_enabled() -> bool:
    return bool(enable_x64.value)


def check_special() -> bool:
    """Whether outputs are checked for NaNs or infinities (jax_debug_nans/jax_debug_infs).
    Every eager primitive asks: the common case (no context manager active) is two reads."""
    local = _local.__dict__
    if not local:
        return bool(debug_nans._global or debug_infs._global)
    return bool(debug_nans.value or debug_infs.value)


# ---- the context managers of JAX's top level -----------------------------------------------------
def disable_jit(disable: bool = True) -> StateContextManager:
    """Run `jit` functions op by op (Python control flow sees concrete values) in the block."""
    return disable_jit_state(disable)


def experimental_enable_x64(new_val: bool = True) -> StateContextManager:
    """`jax.experimental.enable_x64`: 64-bit types inside the block."""
    return enable_x64(bool(new_val))


def experimental_disable_x64() -> StateContextManager:
    """`jax.experimental.disable_x64`: 32-bit defaults inside the block."""
    return enable_x64(False)
