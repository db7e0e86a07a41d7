"""JAX's configuration surface against real JAX: the JAX_* environment variables (subprocesses,
several checks per process), `jax.config` (attributes, update, read, values, absl hooks, the
errors), every option's context manager (thread-local, also a decorator), JAX_PLATFORMS as a
priority list, the enforced promotion modes, and the debugging flags (debug_nans/debug_infs on
every backend, log_compiles, explain_cache_misses, print_environment_info)."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import textwrap
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

import webjax
import webjax.numpy as jnp
from webjax._src.runtime import backend as rt

jax = pytest.importorskip("jax")
rjnp = jax.numpy

ROOT = Path(__file__).resolve().parents[1]
OPTIONS = [
    "jax_enable_x64", "jax_disable_jit", "jax_debug_nans", "jax_debug_infs",
    "jax_default_matmul_precision", "jax_numpy_rank_promotion", "jax_numpy_dtype_promotion",
    "jax_traceback_filtering", "jax_log_compiles", "jax_explain_cache_misses",
    "jax_default_prng_impl", "jax_threefry_partitionable", "jax_platforms", "jax_default_device",
]  # fmt: skip
CONTEXT_MANAGERS = [
    "enable_x64", "debug_nans", "debug_infs", "numpy_rank_promotion", "numpy_dtype_promotion",
    "default_matmul_precision", "log_compiles", "explain_cache_misses", "default_prng_impl",
    "threefry_partitionable", "default_device",
]  # fmt: skip


def _run(module: str, code: str, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess:
    """`code` in a fresh Python with `jax` bound to `module` (webjax or real JAX) under `env`."""
    base = {"PYTHONPATH": str(ROOT / "pkg"), "PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    prelude = f"import {module} as jax\nimport {module}.numpy as jnp\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code), *argv],
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=300,
    )


def _last_line(proc: subprocess.CompletedProcess) -> str:
    return proc.stderr.strip().splitlines()[-1]


# ---- environment variables ----------------------------------------------------------------------
ENV = {
    "JAX_ENABLE_X64": "1", "JAX_DISABLE_JIT": "true", "JAX_DEBUG_NANS": "On",
    "JAX_DEBUG_INFS": "y", "JAX_DEFAULT_MATMUL_PRECISION": "highest",
    "JAX_NUMPY_RANK_PROMOTION": "warn", "JAX_NUMPY_DTYPE_PROMOTION": "strict",
    "JAX_TRACEBACK_FILTERING": "off", "JAX_LOG_COMPILES": "T", "JAX_EXPLAIN_CACHE_MISSES": "yes",
    "JAX_DEFAULT_PRNG_IMPL": "threefry2x32", "JAX_THREEFRY_PARTITIONABLE": "0",
    "JAX_PLATFORMS": "cpu", "JAX_DEFAULT_DEVICE": "cpu",
}  # fmt: skip
READ_OPTIONS = f"""
import json
values = {{n: str(getattr(jax.config, n)) for n in {OPTIONS!r}}}
values["dtype"] = str(jnp.array(1.0).dtype)
values["in_values"] = all(n in jax.config.values for n in {OPTIONS!r})
values["device"] = [d.platform for d in jnp.ones(2).devices()]
print(json.dumps(values))
"""


def test_environment_variables_are_read_at_import_as_jax_reads_them():
    got = _run("webjax", READ_OPTIONS, ENV)
    want = _run("jax", READ_OPTIONS, ENV)
    assert got.returncode == 0, got.stderr
    assert want.returncode == 0, want.stderr
    assert json.loads(got.stdout) == json.loads(want.stdout)
    assert json.loads(got.stdout)["jax_enable_x64"] == "True"


BAD_ENV = [
    {"JAX_ENABLE_X64": "maybe"},
    {"JAX_DEBUG_NANS": "2"},
    {"JAX_NUMPY_RANK_PROMOTION": "sometimes"},
    {"JAX_NUMPY_DTYPE_PROMOTION": "loose"},
    {"JAX_DEFAULT_MATMUL_PRECISION": "fast"},
]


def test_bad_environment_values_fail_the_import_as_in_jax():
    for env in BAD_ENV:
        got, want = _run("webjax", "", env), _run("jax", "", env)
        assert got.returncode != 0 and want.returncode != 0, env
        assert _last_line(got) == _last_line(want), env


def test_what_webjax_does_not_implement_is_named():
    got = _run("webjax", "jax.random.key(0)", {"JAX_DEFAULT_PRNG_IMPL": "rbg"})
    assert "NotImplementedError" in _last_line(got) and "'rbg'" in _last_line(got)
    assert _run("jax", "jax.random.key(0)", {"JAX_DEFAULT_PRNG_IMPL": "rbg"}).returncode == 0


PLATFORMS = """
import json
from webjax._src.runtime import backend as rt
out = {"default": [d.platform for d in jax.devices()], "array": jnp.ones(1).device.platform}
try:
    jax.devices("webgl")
except RuntimeError as e:
    out["left_out"] = str(e)
out["available"] = jax.available_backends()
def unavailable():
    raise rt.BackendUnavailable("no such device on this host")
rt.register_backend("nodevice", unavailable, -10)
for wanted in ["nodevice", "nosuch,cpu", "wasm,cpu"]:
    jax.config.update("jax_platforms", wanted)
    try:
        out[wanted] = [d.platform for d in jax.devices()]
    except RuntimeError as e:
        out[wanted] = str(e)
jax.config.update("jax_platforms", None)
jax.config.parse_flags_with_absl()  # --jax_* arguments from the command line
out["absl"] = [jax.config.jax_enable_x64, jax.config.jax_numpy_rank_promotion]
print(json.dumps(out))
"""


def test_jax_platforms_is_a_priority_list_with_jax_errors():
    env = {"JAX_PLATFORMS": "cpu,wasm", "JAX_PLATFORM_NAME": ""}
    argv = ("--jax_enable_x64", "--jax_numpy_rank_promotion=raise", "--other=1")
    proc = _run("webjax", PLATFORMS, env, *argv)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["default"] == ["cpu"] and out["array"] == "cpu"
    assert out["available"] == ["cpu", "wasm"]
    assert out["left_out"] == "Unknown backend webgl. Available backends are ['cpu', 'wasm']"
    hint = " (set JAX_PLATFORMS='' to automatically choose an available backend)"
    assert out["nodevice"] == (
        "Unable to initialize backend 'nodevice': no such device on this host" + hint
    )
    known = [*rt.known_platforms(), "nodevice"]
    assert out["nosuch,cpu"] == (
        "Unable to initialize backend 'nosuch': Backend 'nosuch' is not in the list of known "
        f"backends: {known}.{hint}"
    )
    assert out["wasm,cpu"] == ["wasm"]
    assert out["absl"] == [True, "raise"]
    # real JAX words the unknown platform alike
    want = _run("jax", "jax.devices()", {"JAX_PLATFORMS": "nosuch,cpu"})
    pattern = (
        r"RuntimeError: Unable to initialize backend 'nosuch': Backend 'nosuch' is not in the "
        r"list of known backends: \[.*\]\. \(set JAX_PLATFORMS=''"
    )
    assert re.match(pattern, _last_line(want))


def test_platform_name_and_default_device_pick_the_default():
    code = """
    print(jax.devices()[0].platform, jnp.ones(1).device.platform, jax.default_device.value)
    """
    proc = _run("webjax", code, {"JAX_PLATFORMS": "cpu,wasm", "JAX_PLATFORM_NAME": "wasm"})
    assert proc.stdout.split() == ["wasm", "wasm", "None"], proc.stderr
    proc = _run("webjax", code, {"JAX_DEFAULT_DEVICE": "cpu"})
    # the default device, not the default backend: jax.devices() stays the best platform
    assert proc.stdout.split()[1:] == ["cpu", "cpu"], proc.stderr


# ---- jax.config ---------------------------------------------------------------------------------
def _error(fn: Any) -> tuple[type, str]:
    try:
        fn()
    except Exception as e:
        return type(e), str(e)
    return type(None), ""


@pytest.mark.parametrize(
    "call",
    [
        lambda j: j.config.update("jax_no_such_option", 1),
        lambda j: j.config.read("jax_no_such_option"),
        lambda j: j.config.jax_no_such_option,
        lambda j: j.config.read("jax_disable_jit"),
        lambda j: j.config.read("jax_numpy_rank_promotion"),
        lambda j: j.config.update("jax_numpy_rank_promotion", "sometimes"),
        lambda j: j.config.update("jax_default_matmul_precision", "fast"),
        lambda j: j.config.update("jax_platforms", 3),
        lambda j: j.config.update("jax_default_device", 3),
        lambda j: j.numpy_rank_promotion(),
        lambda j: j.numpy_rank_promotion("sometimes"),
        lambda j: bool(j.enable_x64),
        lambda j: j.config.jax_platform_name,
    ],
)
def test_config_errors_are_jax_errors(call):
    got, want = _error(lambda: call(webjax)), _error(lambda: call(jax))
    assert got[0] is want[0]
    # the default device's message names webjax's platforms
    if "default_device" not in want[1]:
        assert got[1] == want[1]


def test_config_reads_as_jax():
    for name in OPTIONS:
        assert str(getattr(webjax.config, name)) == str(getattr(jax.config, name)), name
        assert name in webjax.config.values
    assert webjax.config.read("jax_enable_x64") is False  # read works for x64, as in JAX
    assert webjax.config.read("jax_platform_name") == jax.config.read("jax_platform_name")
    assert webjax.config.x64_enabled is False
    assert webjax.config.jax_numpy_dtype_promotion == "standard"
    for name in CONTEXT_MANAGERS:
        state, real = getattr(webjax, name), getattr(jax, name)
        assert state.__name__ == real.__name__ and state.name == real.name
        assert str(state.value) == str(real.value)


def test_update_and_values():
    try:
        webjax.config.update("jax_numpy_rank_promotion", "warn")
        assert webjax.config.jax_numpy_rank_promotion == "warn"
        assert webjax.config.values["jax_numpy_rank_promotion"] == "warn"
        assert webjax.numpy_rank_promotion.value == "warn"
        webjax.config.update("jax_enable_x64", 1)  # bools are parsed with bool(), as in JAX
        assert webjax.config.jax_enable_x64 is True and jnp.ones(1).dtype == jnp.float64
    finally:
        webjax.config.update("jax_numpy_rank_promotion", "allow")
        webjax.config.update("jax_enable_x64", False)
    assert jnp.ones(1).dtype == jnp.float32


def test_context_managers_are_thread_local_and_decorate():
    seen: list[Any] = []
    with webjax.enable_x64(True), webjax.debug_infs(True):
        worker = threading.Thread(target=lambda: seen.append(webjax.config.jax_enable_x64))
        worker.start()
        worker.join()
        assert webjax.config.jax_enable_x64 and webjax.config.jax_debug_infs
        with webjax.enable_x64(False):  # nested blocks restore the outer value
            assert not webjax.config.jax_enable_x64
        assert webjax.config.jax_enable_x64
    assert seen == [False] and not webjax.config.jax_enable_x64

    @webjax.numpy_rank_promotion("raise")
    def strict_ranks() -> str:
        return webjax.config.jax_numpy_rank_promotion

    assert strict_ranks() == "raise" and webjax.config.jax_numpy_rank_promotion == "allow"
    with webjax.disable_jit():
        assert webjax.config.jax_disable_jit
    with webjax.default_device("cpu"):
        assert jnp.ones(1).device.platform == "cpu"


def test_config_with_absl_defines_a_flag_per_option():
    from absl import flags

    webjax.config.config_with_absl()
    for name in ["jax_enable_x64", "jax_numpy_rank_promotion", "jax_platforms"]:
        assert name in flags.FLAGS
    assert flags.FLAGS["jax_numpy_rank_promotion"].default == "allow"


def test_a_changed_option_retraces_jit():
    f = webjax.jit(lambda x, y: x + y)
    x, y = jnp.ones((2, 3)), jnp.ones(3)
    f(x, y)
    with webjax.numpy_rank_promotion("raise"), pytest.raises(ValueError, match="rank"):
        f(x, y)  # a trace under the setting, not the cached one
    assert f.trace_count == 2


# ---- promotion modes, enforced ------------------------------------------------------------------
PROMOTIONS = [
    ("int32", "float32"), ("float32", "float16"), ("float32", 1.0), ("int32", 1.0),
    ("int32", 1), ("float32", 2), ("bool", "int32"), ("uint8", "int32"), ("float32", 1j),
    ("float16", "float16"),
]  # fmt: skip


def _operand(lib: Any, x: Any) -> Any:
    return lib.numpy.ones(2, x) if isinstance(x, str) else x


def _sorted_dtypes(message: str) -> str:
    """JAX lists the input dtypes in set order: compare them as a set."""
    m = re.match(r"Input dtypes \((.*?)\) have", message)
    return message if m is None else str(sorted(m.group(1).split(", "))) + message[m.end() :]


@pytest.mark.parametrize("a,b", PROMOTIONS, ids=str)
def test_strict_dtype_promotion_as_jax(a, b):
    def run(lib: Any) -> tuple[type, str]:
        with lib.numpy_dtype_promotion("strict"):
            try:
                r = lib.numpy.add(_operand(lib, a), _operand(lib, b))
            except Exception as e:
                return type(e).__name__, _sorted_dtypes(str(e))
            return "ok", f"{r.dtype} {r.weak_type}"

    assert run(webjax) == run(jax)


def test_integers_compute_in_float32_under_x64_as_jax():
    """Under x64, bool and integers of up to 32 bits become float32 where a float is needed
    (JAX's to_inexact_dtype); only 64-bit integers and Python ints take float64 (found by the
    fuzzer: jnp.tan(int32) and nn.softplus(int16) gave float64)."""

    def dtypes_of(lib: Any) -> list[str]:
        np_ = __import__("numpy")
        jnp_, special = lib.numpy, lib.scipy.special
        xs = [np_.arange(3).astype(d) for d in ("bool", "int8", "int32", "uint32", "int64")]
        fns = [jnp_.sin, jnp_.mean, jnp_.var, jnp_.median, special.erf, jnp_.sqrt]
        fns += [special.digamma]
        out = [str(f(x).dtype) for f in fns for x in xs]
        out += [str(jnp_.arctan2(x, x).dtype) for x in xs]
        out += [str(jnp_.true_divide(x, x).dtype) for x in xs]
        out += [str(jnp_.angle(x).dtype) for x in xs]  # the default float (float64), as JAX
        nn = [lib.nn.softplus, lib.nn.softmax, lib.nn.log_softmax]
        out += [str(f(x).dtype) for f in nn for x in xs[1:]]  # (softplus(int16) gave float64)
        out += [str(jnp_.argsort(x).dtype) for x in xs]  # the default int: int64
        out += [str(jnp_.power(x, 2).dtype) for x in xs]  # a bool's static power is int32
        out += [str(jnp_.linalg.inv(np_.zeros((0, 0), x.dtype)).dtype) for x in xs]
        out.append(str(lib.random.categorical(lib.random.key(0), np_.zeros((2, 3))).dtype))
        return out + [str(jnp_.linspace(x[0], x[2], 3).dtype) for x in xs]

    import webjax.scipy.special

    with webjax.enable_x64(True):
        got = dtypes_of(webjax)
    with jax.enable_x64(True):
        want = dtypes_of(jax)
    assert got == want
    assert "float32" in got and "float64" in got


def test_rank_promotion_warn_and_raise_as_jax():
    def run(lib: Any, mode: str, shapes: tuple[tuple[int, ...], ...]) -> tuple[str, str]:
        xs = [lib.numpy.ones(s) for s in shapes]
        with lib.numpy_rank_promotion(mode), warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                out = lib.numpy.subtract(*xs)
            except ValueError as e:
                return "raise", str(e)
        return str(out.shape), " ".join(str(x.message) for x in w)

    for mode in ("warn", "raise"):
        for shapes in [((2, 3), (3,)), ((2, 3), ()), ((2, 3), (1, 3))]:
            assert run(webjax, mode, shapes) == run(jax, mode, shapes), (mode, shapes)


# ---- debugging flags ----------------------------------------------------------------------------
def _programs(lib: Any) -> list[tuple[str, Any, Any]]:
    np_ = lib.numpy

    @lib.jit
    def log_after_scale(x: Any) -> Any:
        return np_.log(x * 2.0) + 1.0

    @lib.jit
    def outer(x: Any) -> Any:  # the failing primitive inside a nested jit
        return lib.jit(lambda y: np_.exp(y) * 3.0)(x) - 1.0

    return [
        ("debug_nans", lambda: np_.log(-np_.ones(3)), "nan"),
        ("debug_nans", lambda: log_after_scale(-np_.ones(3)), "nan"),
        ("debug_infs", lambda: np_.ones(3) / 0.0, "inf"),
        ("debug_infs", lambda: outer(np_.full(3, 100.0)), "inf"),
        ("debug_nans", lambda: log_after_scale(np_.ones(3)), None),
    ]


def test_debug_nans_and_infs_name_the_primitive(device, capsys):
    for (flag, run, kind), (_, want_run, _) in zip(_programs(webjax), _programs(jax), strict=True):
        with getattr(jax, flag)(True):
            want = _error(want_run)
        with getattr(webjax, flag)(True):
            got = _error(run)
        assert got == want, (flag, kind)
        assert (got[0] is FloatingPointError) == (kind is not None)
    assert "Calling the de-optimized version." in capsys.readouterr().out


def test_log_compiles_logs_traces_and_compiles(caplog):
    caplog.set_level(logging.WARNING)

    @webjax.jit
    def scaled(x: Any, y: Any) -> Any:
        return x * y

    with webjax.log_compiles(True):
        scaled(jnp.ones(3), 2.0)
        scaled(jnp.ones(3), 2.0)  # cached: nothing logged
    by_logger = [(r.name, r.getMessage()) for r in caplog.records]
    assert [n for n, _ in by_logger] == [
        "jax._src.dispatch",
        "jax._src.interpreters.pxla",
        "jax._src.dispatch",
    ]
    assert by_logger[0][1].startswith("Finished tracing scaled for jit in ")
    assert by_logger[1][1].startswith(
        "Compiling jit(scaled) with global shapes and types (ShapedArray(float32[3]), "
        "ShapedArray(float32[], weak_type=True))."
    )


def test_explain_cache_misses_as_jax(caplog):
    def explain(lib: Any) -> list[str]:
        caplog.clear()

        def scale(x: Any, n: Any) -> Any:
            return x * n

        f = lib.jit(scale, static_argnums=1)
        with lib.explain_cache_misses(True):
            f(lib.numpy.ones(4), 2)
            f(lib.numpy.ones(5), 2)
            f(lib.numpy.ones(5), 2)  # a hit: nothing logged
            with lib.enable_x64(True):
                f(lib.numpy.ones(5, "float32"), 2)
        recs = [r for r in caplog.records if r.name == "jax._src.interpreters.partial_eval"]
        return [r.getMessage() for r in recs]

    caplog.set_level(logging.WARNING)
    got, want = explain(webjax), explain(jax)
    assert len(got) == len(want) == 3
    assert "never seen function:\n    scale id=" in got[0]
    for g, w in zip(got[1:], want[1:], strict=True):
        g_lines, w_lines = g.splitlines(), w.splitlines()
        assert g_lines[0].startswith("TRACING CACHE MISS at ") and __file__ in g_lines[0]
        assert g_lines[1].startswith("  for scale defined at ")
        assert g_lines[2:] == w_lines[2:]


def test_print_environment_info(capsys):
    assert webjax.print_environment_info() is None
    printed = capsys.readouterr().out
    assert printed.strip() == webjax.print_environment_info(return_string=True)
    assert printed.startswith(f"webjax: {webjax.__version__}\npython: {sys.version}")
    assert "host:   CPython (native)" in printed
    assert "cross-origin isolated: n/a (native)" in printed
    for p in rt.known_platforms():
        assert f"\n  {p}: " in printed
    for p in webjax.available_backends():
        assert f"{webjax.devices(p)[0]!r} max_args=" in printed
    for k in os.environ:
        if k.startswith("JAX_"):
            assert f"{k}={os.environ[k]}" in printed
