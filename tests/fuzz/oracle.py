"""One case on webjax (on a device, in the case's mode) and on real JAX (on its CPU), and the
verdict.

A case passes when both raise (the same exception type, or webjax a subclass of the type JAX
raises) or both return the same structure, shapes, dtypes, weak types and values: integers and
bools exactly, floats within the device's tolerance for the dtype (NaN where JAX has NaN,
infinities of the same sign). Anything else is a failure, by category:

- crash: webjax raised where JAX returned;
- error type: both raised, different types;
- no error: JAX raised, webjax returned;
- wrong: both returned, and the outputs differ (structure, shape, dtype, weak type or values).
"""

from __future__ import annotations

import dataclasses
import re
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.scipy.special
import ml_dtypes
import numpy as np

import webjax
import webjax.scipy.special

from .generators import Case, Key, is_operand

# rtol (and atol, scaled by the output's magnitude) per dtype: the CPU-side backends (cpu, wasm)
# and the GPU ones (webgpu, webgl: their transcendentals are the driver's, as the op tests allow)
TOL = {
    "cpu": {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5, "float64": 1e-12},
    "gpu": {"float16": 4e-3, "bfloat16": 1.6e-2, "float32": 2e-4, "float64": 1e-12},
}
MODE_TOL = {"eager": 1.0, "jit": 1.0, "vmap": 1.0, "grad": 8.0}
Leaves = list[tuple[str, Any]]  # an outcome's (path, (host value, dtype name, weak type))


def tolerance(platform: str, dtype: str) -> float:
    table = TOL["gpu" if platform in ("webgpu", "webgl") else "cpu"]
    base = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
    return table.get(base, 0.0)


def _module(lib: Any, alias: str) -> Any:
    return {
        "jnp": lib.numpy,
        "lax": lib.lax,
        "nn": lib.nn,
        "special": lib.scipy.special,
        "random": lib.random,
        "linalg": lib.numpy.linalg,
    }[alias]


def resolve(lib: Any, op: str) -> Callable[..., Any]:
    alias, name = op.split(".", 1)
    return getattr(_module(lib, alias), name)


@dataclass
class Outcome:
    error: BaseException | None = None
    leaves: list[tuple[str, Any]] | None = None  # (path, leaf) with leaves as host values
    where: str = ""  # the innermost frame of webjax's traceback, for crashes

    def summary(self) -> str:
        if self.error is not None:
            return f"raised {type(self.error).__name__}: {str(self.error)[:300]}" + (
                f" (at {self.where})" if self.where else ""
            )
        assert self.leaves is not None
        parts = []
        for path, (arr, dtype, weak) in self.leaves:
            if isinstance(arr, np.ndarray):
                vals = _short(arr)
                parts.append(f"{path}: {dtype}{list(arr.shape)}{' weak' if weak else ''} {vals}")
            else:
                parts.append(f"{path}: {arr!r}")
        return "; ".join(parts)


def _short(a: np.ndarray) -> str:
    flat = a.ravel()
    if flat.dtype == ml_dtypes.bfloat16:
        flat = flat.astype(np.float32)
    s = np.array2string(flat[:16], precision=8, separator=",", threshold=16)
    return s + ("..." if flat.size > 16 else "")


def _flatten(out: Any, path: str = "out") -> list[tuple[str, Any]]:
    if isinstance(out, (tuple, list)):
        items: list[tuple[str, Any]] = [(path, (f"{type(out).__name__}[{len(out)}]", None, None))]
        for i, o in enumerate(out):
            items += _flatten(o, f"{path}[{i}]")
        return items
    if isinstance(out, dict):
        items = [(path, (f"dict{sorted(out)}", None, None))]
        for k in sorted(out):
            items += _flatten(out[k], f"{path}[{k!r}]")
        return items
    if hasattr(out, "dtype") and hasattr(out, "shape"):
        return [(path, (np.asarray(out), str(out.dtype), bool(getattr(out, "weak_type", False))))]
    return [(path, (out, type(out).__name__, None))]


def _to_lib(lib: Any, a: Any, device: Any) -> Any:
    if isinstance(a, list):
        return [_to_lib(lib, x, device) for x in a]
    return lib.device_put(a, device) if device is not None else lib.device_put(a)


def _scalarize(lib: Any, out: Any) -> Any:
    """The sum of the real parts of every inexact output (grad needs a real scalar)."""
    leaves = lib.tree_util.tree_leaves(out)
    inexact = [x for x in leaves if lib.numpy.issubdtype(x.dtype, lib.numpy.inexact)]
    total = 0.0
    for x in inexact or leaves[:1]:
        total = total + lib.numpy.sum(lib.numpy.real(x))
    return total


def run_lib(lib: Any, case: Case, device: Any) -> Outcome:
    """The case on `lib` (webjax on `device`, or JAX), materialized to host values."""
    positions = [i for i, a in enumerate(case.args) if is_operand(a)]
    try:
        fn = resolve(lib, case.spec.op)

        def call(*ops: Any) -> Any:
            args = list(case.args)
            for p, o in zip(positions, ops):
                args[p] = o
            args = [lib.random.key(a.seed) if isinstance(a, Key) else a for a in args]
            return fn(*args, **case.kwargs)

        operands = [_to_lib(lib, case.args[p], device) for p in positions]
        if case.mode == "eager":
            out = call(*operands)
        elif case.mode == "jit":
            out = lib.jit(call)(*operands)
        elif case.mode == "grad":
            out = lib.grad(lambda *ops: _scalarize(lib, call(*ops)))(*operands)
        else:
            in_axes = tuple(0 if p == case.vmap_arg else None for p in positions)
            out = lib.vmap(call, in_axes=in_axes)(*operands)
        return Outcome(leaves=_flatten(out))
    except Exception as e:  # the exception's type is what is compared
        return Outcome(error=e, where=_where(e))


def _where(e: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "/webjax/" in f.filename]
    if not frames:
        return ""
    f = frames[-1]
    return f"{f.filename.split('/webjax/')[-1]}:{f.lineno} in {f.name}"


# Where JAX fails in its own code, webjax need not: JAX's error is an internal one (an index
# error inside its Python code, XLA's gather shape error from a jnp function given an empty
# axis), and webjax raises a clear error of its own ("raise") or also returns NumPy's answer
# ("any"). Counted under `notes`, not as failures.
JAX_QUIRKS = [
    (re.compile(r"tuple index out of range"), "raise"),
    (re.compile(r"index -?\d+ is out of bounds for axis \d+ with size"), "raise"),
    # (grad of det of 0 x 0 matrices: an index error inside JAX's LU-based derivative)
    (re.compile(r"index is out of bounds for axis \d+ with size 0"), "any"),
    (re.compile(r"Slice size at index \d+ in gather op is out of range"), "any"),
    (re.compile(r"cannot convert float infinity to integer"), "raise"),
]


def _clamp_batched_as_a_loop(case: Case, got: Outcome, want: Outcome) -> bool:
    """vmap of lax.clamp whose per-example call is valid, where JAX's batching rule raised,
    and webjax's answer is NumPy's per-example clip."""
    if case.spec.op != "lax.clamp" or case.mode != "vmap" or got.leaves is None:
        return False
    if want.error is None or "clamp requires" not in str(want.error):
        return False
    k = case.vmap_arg
    per_example = [np.shape(a)[1:] if i == k else np.shape(a) for i, a in enumerate(case.args)]
    lo, x, hi = per_example
    if lo not in ((), x) or hi not in ((), x):
        return False
    batched = []
    for i, a in enumerate(case.args):
        a = np.asarray(a)
        a = a.reshape(a.shape[:1] + (1,) * (len(x) - a.ndim + 1) + a.shape[1:]) if i == k else a
        batched.append(a if i == k else a[None])
    with np.errstate(all="ignore"):
        answer = np.minimum(np.maximum(batched[1], batched[0]), batched[2])
    answer = np.broadcast_to(answer, (np.shape(case.args[k])[0], *x))
    leaves = [(path, (answer.astype(g.dtype), gd, gw)) for path, (g, gd, gw) in got.leaves]
    return not compare_leaves(got.leaves, leaves, "cpu", 1.0)


# Where webjax differs from JAX on purpose (each with its reason); counted under `notes`.
KNOWN = [
    (
        "JAX's xlogy/xlog1py derivative applies log to y as given, so an integer or bool y "
        "(a Python int or an array) raises there; webjax promotes y first, as the function does",
        lambda case, got, want: (
            case.spec.op in ("special.xlogy", "special.xlog1py")
            and case.mode == "grad"
            and want.error is not None
            and re.search(r"log1?p? does not accept dtype (u?int|bool)", str(want.error))
            is not None
        ),
    ),
    (
        "lax takes Python scalars of another kind (webjax gives them the array's dtype, as jnp "
        "does; JAX's lax raises TypeError unless the scalar's own dtype matches)",
        lambda case, got, want: (
            case.spec.op.startswith("lax.")
            and want.error is not None
            and "requires arguments to have the same dtypes" in str(want.error)
            and any(isinstance(a, (bool, int, float, complex)) for a in case.args)
        ),
    ),
    (
        "vmap of lax.clamp with a batched bound and an unbatched 0-d operand: JAX's batching "
        "rule leaves the operand 0-d and raises its own shape error; webjax clamps each example",
        _clamp_batched_as_a_loop,
    ),
]


@dataclass
class Verdict:
    category: str  # "" (pass), crash, error type, no error, wrong
    detail: str
    webjax: Outcome
    jax: Outcome
    note: str = ""  # why a difference is not a failure (a JAX quirk, a known difference)

    @property
    def ok(self) -> bool:
        return not self.category


def _raises_like(got: BaseException, want: BaseException) -> bool:
    names = {c.__name__ for c in type(got).__mro__}
    return type(want).__name__ in names


def compare_leaves(
    got: list[tuple[str, Any]], want: list[tuple[str, Any]], platform: str, scale: float
) -> str:
    """Why the outputs differ ("" when they agree)."""
    if [p for p, _ in got] != [p for p, _ in want]:
        return f"structure {[p for p, _ in got]} vs {[p for p, _ in want]}"
    for (path, (g, gd, gw)), (_, (w, wd, ww)) in zip(got, want):
        if not isinstance(w, np.ndarray):
            if gd != wd or (g != w and not (isinstance(w, float) and np.isnan(w))):
                return f"{path}: {g!r} vs {w!r}"
            continue
        if not isinstance(g, np.ndarray):
            return f"{path}: {type(g).__name__} vs an array"
        if g.shape != w.shape:
            return f"{path}: shape {g.shape} vs {w.shape}"
        if gd != wd:
            return f"{path}: dtype {gd} vs {wd}"
        if gw != ww:
            return f"{path}: weak_type {gw} vs {ww}"
        if w.dtype.kind in "biu":
            if not np.array_equal(g, w):
                bad = np.flatnonzero(g.ravel() != w.ravel())
                return f"{path}: values differ at {bad[:5].tolist()} ({g.size} elements)"
            continue
        why = _close(g, w, tolerance(platform, wd) * scale)
        if why:
            return f"{path}: {why}"
    return ""


def _close(g: np.ndarray, w: np.ndarray, tol: float) -> str:
    wide = np.complex128 if w.dtype.kind == "c" else np.float64
    g, w = g.astype(wide).ravel(), w.astype(wide).ravel()
    parts = (g.real, g.imag, w.real, w.imag) if w.dtype.kind == "c" else (g, None, w, None)
    for a, b in ((parts[0], parts[2]), (parts[1], parts[3])):
        if b is None:
            continue
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        if (nan_a != nan_b).any():
            i = int(np.flatnonzero(nan_a != nan_b)[0])
            return f"NaN mismatch at {i}: {a[i]!r} vs {b[i]!r}"
        fin = ~nan_b
        inf_b = np.isinf(b) & fin
        if (np.isinf(a) != np.isinf(b))[fin].any() or (a[inf_b] != b[inf_b]).any():
            i = int(np.flatnonzero(fin & ((np.isinf(a) != np.isinf(b)) | (inf_b & (a != b))))[0])
            return f"inf mismatch at {i}: {a[i]!r} vs {b[i]!r}"
        ok = fin & ~np.isinf(b)
        if not ok.any():
            continue
        mag = max(1.0, float(np.max(np.abs(b[ok]))))
        err = np.abs(a[ok] - b[ok])
        bound = tol * mag + tol * np.abs(b[ok])
        if (err > bound).any():
            j = int(np.argmax(err - bound))
            i = int(np.flatnonzero(ok)[j])
            return f"value at {i}: {a[i]!r} vs {b[i]!r} (tol {tol:.2g})"
    return ""


def check(case: Case, device: Any) -> Verdict:
    """Run the case on JAX and on webjax (on `device`) and judge."""
    return check_on(case, [device])[0]


def check_on(case: Case, devices: list[Any]) -> list[Verdict]:
    """The case on JAX once and on webjax on each of `devices`: a verdict per device (JAX's
    compiles are most of a case's time, so a case drawn once serves every device)."""
    want, answers = jax_side(case)
    return [judge(case, device, want, answers) for device in devices]


def jax_side(case: Case) -> tuple[Outcome, _JaxAnswers]:
    """JAX's answer to the case, and its other answers (eager, wider types), drawn on demand."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = run_lib(jax, case, None)
    return want, _JaxAnswers(case)


def judge(case: Case, device: Any, want: Outcome, answers: _JaxAnswers) -> Verdict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with webjax.default_device(device):
            got = run_lib(webjax, case, device)
    for reason, applies in KNOWN:
        if applies(case, got, want):
            return Verdict("", "", got, want, note="known: " + reason[:60])
    if want.error is not None:
        for pattern, webjax_may in JAX_QUIRKS:
            if pattern.search(str(want.error)) and (webjax_may == "any" or got.error is not None):
                return Verdict("", "", got, want, note="JAX quirk: " + pattern.pattern[:40])
        if got.error is None:
            return Verdict("no error", f"JAX raised {type(want.error).__name__}", got, want)
        if not _raises_like(got.error, want.error):
            return Verdict("error type", "", got, want)
        return Verdict("", "", got, want)
    if got.error is not None:
        return Verdict("crash", "", got, want)
    assert got.leaves is not None and want.leaves is not None
    scale = case.spec.tol * MODE_TOL[case.mode]
    why = compare_leaves(got.leaves, want.leaves, device.platform, scale)
    # complex results outside the finite values, where the order of operations decides
    # (the rules compose with the subnormal rule below, which compares through them too)
    if why and not compare_leaves(
        *_complex_excused(case, got.leaves, want.leaves), device.platform, scale
    ):
        return Verdict("", "", got, want, note="complex non-finite results (XLA's order)")
    if why and case.mode == "jit":
        # XLA's compiled program differs from JAX's own op-by-op answer (bool 0/0 of broadcast
        # operands is 0 under jit, NaN eagerly): webjax's jit equals JAX's eager answer
        # (rel_entr(3.4e38, 2.87) is inf - inf = NaN eagerly, inf in XLA's fused program); the
        # outputs of subnormal inputs are masked here too, as in the rule below
        eager = answers.jax_eager()
        if eager.leaves is not None and _agrees(case, got.leaves, eager.leaves, device, scale):
            return Verdict("", "", got, want, note="JAX's jit differs from its eager answer")
    if why and case.spec.op in ("special.digamma", "lax.digamma") and case.mode == "grad":
        # JAX's trigamma is wrong at negative x (-9.04e31 at -9.917, where it is 148.29):
        # the reference is trigamma in float64, rounded
        (path, (g, gd, gw)), *_ = got.leaves
        wide = [(path, (_trigamma(np.asarray(case.args[0], np.float64)), gd, gw))]
        if not compare_leaves(got.leaves, _rounded_like(wide, want.leaves), device.platform, scale):
            return Verdict("", "", got, want, note="JAX's trigamma at negative x")
    if (
        why
        and case.spec.op == "special.zeta"
        and case.mode == "grad"
        and not compare_leaves(
            *_zeta_noise_excused(case, got.leaves, want.leaves, answers), device.platform, scale
        )
    ):
        # zeta's derivative in x far below 1 is the Euler-Maclaurin series' noise: JAX's own
        # float32 and float64 answers disagree there (-0.0039 and -0.0066 at x = -4.54)
        return Verdict("", "", got, want, note="zeta's derivative where JAX disagrees with itself")
    if why and case.spec.op in IGAMMA_OPS and _floats(case):
        # JAX's incomplete gamma takes a log x - x - lgamma(a), which cancels to nothing for
        # large a (its float32 gammainc(1e6, 1.001e6) is 0.9027, where it is 0.8413, and NaN at
        # a = x = 3.4e38, where it is 1/2): the reference is SciPy's, in float64 (not JAX's
        # float64, whose series never ends at a = 3.4e38, where a + 1 == a)
        # (elements where webjax gives JAX's answer keep it: at a = 0 or inf JAX's NaN is its
        # definition, where SciPy gives 1 or 0)
        truth = _igamma_reference(case)
        tol = tolerance(device.platform, want.leaves[0][1][1]) * scale
        if truth is not None and _agrees(
            case,
            got.leaves,
            _where_close(got.leaves, want.leaves, _rounded_like(truth, want.leaves), tol),
            device,
            scale,
        ):
            return Verdict("", "", got, want, note="JAX's incomplete gamma at large a")
    special = case.spec.op.startswith("special.") or case.spec.op in LAX_SPECIAL_OPS
    if why and (special or case.spec.op in LAX_ACCUMULATING_OPS) and _narrow_floats(case):
        # JAX evaluates some special functions' series in the 16-bit type itself (zeta's
        # derivative casts its Bernoulli coefficients there, where they overflow to inf), where
        # webjax computes in float32: the reference is JAX's float32 answer, rounded
        wide = answers.jax_float32()
        if wide.leaves is not None and not compare_leaves(
            got.leaves, _rounded_like(wide.leaves, want.leaves), device.platform, scale
        ):
            return Verdict("", "", got, want, note="JAX's 16-bit series (its float32 agrees)")
    if why and special and _floats(case) and case.spec.op not in IGAMMA_OPS:
        # JAX's float32 series can be short of float32's precision (zeta's derivative sums 8
        # terms there): the reference is JAX's float64 answer, rounded
        wide = answers.jax_float64()
        if wide.leaves is not None and not compare_leaves(
            got.leaves, _rounded_like(wide.leaves, want.leaves), device.platform, scale
        ):
            return Verdict("", "", got, want, note="JAX's float32 series (its float64 agrees)")
    if why and case.spec.op in ("jnp.divide", "jnp.true_divide") and _bool_zero_by_zero(case):
        # XLA gives 0 for the 0 / 0 of a bool operand it broadcasts (by a bool or an integer;
        # NaN unbroadcast, as IEEE)
        weak = not all(isinstance(a, np.ndarray) for a in case.args[:2])
        numpy_answer = [("out", (_numpy_bool_divide(case), "float32", weak))]
        if not compare_leaves(got.leaves, numpy_answer, device.platform, scale):
            return Verdict("", "", got, want, note="XLA's bool 0/0 of broadcast operands")
    if (
        why
        and (
            case.spec.kind not in ELEMENTWISE_KINDS
            or any(isinstance(a, np.ndarray) and a.dtype.kind == "c" for a in case.args)
        )
        and any(_extreme(a) for a in case.args if is_operand(a))
        and not compare_leaves(*_finite_where_both(got.leaves, want.leaves), device.platform, scale)
    ):
        # a reduction, scan or product (or a complex formula) over values near the ends of the
        # range: whether a partial result overflows (or a complex one turns NaN) depends on the
        # order of the operations, which JAX leaves to XLA (its CPU and GPU orders differ too)
        return Verdict("", "", got, want, note="evaluation order at the overflow boundary")
    if why and any(m.any() for m in _flush_masks(case)):
        # XLA's CPU code runs with subnormals flushed to zero, in its inputs and in every
        # intermediate: an elementwise op's outputs that read a subnormal input are not IEEE's
        # there (atan2 of two subnormals is NaN; a quotient by a divisor past 2**126, whose
        # reciprocal is subnormal, is x * 0: inf / 3.4e38 is NaN), and are not compared
        masked = _mask_subnormal_elements(case, got.leaves, want.leaves)
        if masked is not None and not compare_leaves(
            *_complex_excused(case, *masked), device.platform, scale
        ):
            return Verdict("", "", got, want, note="outputs of subnormal inputs (XLA flushes)")
    if why and _has_subnormals(case):
        # XLA's CPU code runs with denormals flushed to zero (and GPUs may): the same call with
        # the subnormal inputs flushed is an answer as good. Flushed at each operand's own dtype
        # or at the narrowest normal range of the operands (mixed float16 and bfloat16 compute
        # in float32, where float16's subnormals are normal numbers)
        for tiny in answers.thresholds:
            alt_want = answers.jax(tiny)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with webjax.default_device(device):
                    alt_got = run_lib(webjax, answers.case(tiny), device)
            for g, w in ((got, alt_want), (alt_got, want)):  # either side flushing explains it
                if (
                    g.leaves is not None
                    and w.leaves is not None
                    and not compare_leaves(
                        *_complex_excused(case, g.leaves, w.leaves), device.platform, scale
                    )
                ):
                    return Verdict("", "", got, want, note="subnormals flushed to zero")
    return Verdict("wrong" if why else "", why, got, want)


def _has_complex_nan(case: Case) -> bool:
    return any(
        isinstance(a, np.ndarray) and a.dtype.kind == "c" and np.isnan(a.view(a.real.dtype)).any()
        for a in case.args
    )


def _has_complex_nonfinite(case: Case) -> bool:
    return any(
        isinstance(a, np.ndarray) and a.dtype.kind == "c" and not np.isfinite(a).all()
        for a in case.args
        if is_operand(a)
    )


def _narrow_floats(case: Case) -> bool:
    ops = [a for a in case.args if is_operand(a)]
    return bool(ops) and all(
        isinstance(a, np.ndarray) and a.dtype in (np.float16, ml_dtypes.bfloat16) for a in ops
    )


def _floats(case: Case) -> bool:
    ops = [a for a in case.args if is_operand(a)]
    return bool(ops) and all(
        isinstance(a, np.ndarray) and (a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16)
        for a in ops
    )


def _rounded_like(
    wide: list[tuple[str, Any]], like: list[tuple[str, Any]]
) -> list[tuple[str, Any]]:
    """`wide`'s leaves rounded to the dtypes (and weak types) of `like`'s."""
    out = []
    for (path, (w, _, _)), (_, (x, xd, xw)) in zip(wide, like):
        if isinstance(w, np.ndarray) and isinstance(x, np.ndarray):
            with np.errstate(all="ignore"):  # (overflowing to inf, as the narrow type would)
                w = w.astype(x.dtype)
        out.append((path, (w, xd, xw)))
    return out


def _bool_zero_by_zero(case: Case) -> bool:
    """A division of a bool array by a bool or an integer (array or Python number)."""
    ops = [a for a in case.args if is_operand(a) or isinstance(a, (bool, int, float))]
    arrays = [a for a in ops if isinstance(a, np.ndarray)]
    return (
        case.mode in ("eager", "jit", "vmap")
        and len(ops) == 2
        and any(a.dtype == np.bool_ for a in arrays)
        and all(a.dtype.kind in "biu" for a in arrays)
        and all(isinstance(a, (np.ndarray, bool, int)) for a in ops)
    )


def _numpy_bool_divide(case: Case) -> np.ndarray:
    ops = [a for a in case.args if is_operand(a) or isinstance(a, (bool, int, float))]
    x, y = (np.asarray(a, np.float32) for a in ops)
    with np.errstate(all="ignore"):
        if case.mode != "vmap":
            return np.true_divide(x, y)
        if case.vmap_arg == 0:
            return np.stack([np.true_divide(x[b], y) for b in range(x.shape[0])])
        return np.stack([np.true_divide(x, y[b]) for b in range(y.shape[0])])


def _extreme(a: Any) -> bool:
    """Whether `a` holds finite values so large (|x| >= sqrt(max)) or so small (0 < |x| <
    sqrt(tiny)) that a product or a sum of a few of them overflows or underflows."""
    if not isinstance(a, np.ndarray) or (
        a.dtype.kind not in "fc" and a.dtype != ml_dtypes.bfloat16
    ):
        return False
    info = ml_dtypes.finfo(a.dtype)
    wide = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    parts = (wide.real, wide.imag) if a.dtype.kind == "c" else (wide,)
    big, small = float(info.max) ** 0.5, float(info.tiny) ** 0.5
    return any(
        bool(((np.abs(p) >= big) & np.isfinite(p)).any() or ((p != 0) & (np.abs(p) < small)).any())
        for p in parts
    )


def _finite_where_both(got: Leaves, want: Leaves) -> tuple[Leaves, Leaves]:
    """The leaves with the elements where either side is not finite made equal."""

    def where(g: np.ndarray, w: np.ndarray) -> Any:
        if w.dtype.kind not in "fc" and w.dtype != ml_dtypes.bfloat16:
            return None
        return ~np.isfinite(g.astype(np.complex128)) | ~np.isfinite(w.astype(np.complex128))

    return _equalize(got, want, where)


# ops whose complex results overflow in an order-dependent way (Smith's division, products)
COMPLEX_OVERFLOW_OPS = frozenset(
    {
        *("jnp.divide", "jnp.true_divide", "jnp.reciprocal", "lax.div", "jnp.arctan2"),
        *("jnp.prod", "jnp.nanprod", "jnp.cumprod", "jnp.nancumprod"),
        *("lax.reduce_prod", "lax.cumprod"),
        *("jnp.matmul", "jnp.dot", "jnp.vdot", "jnp.inner", "jnp.tensordot", "jnp.einsum"),
        *("lax.dot", "lax.dot_general", "lax.batch_matmul"),
    }
)
# complex max/min: XLA folds with lexicographic comparisons, false against NaN
COMPLEX_ORDER_REDUCTIONS = frozenset(
    {"jnp.max", "jnp.min", "jnp.amax", "jnp.amin", "lax.reduce_max", "lax.reduce_min"}
)
# special functions JAX evaluates in a 16-bit operand's own type (webjax in float32), with
# lax's reductions and scans, which accumulate there (jnp's upcast first)
LAX_SPECIAL_OPS = frozenset(
    {
        *("lax.digamma", "lax.lgamma", "lax.igamma", "lax.igammac", "lax.polygamma"),
        *("lax.zeta", "lax.bessel_i0e", "lax.bessel_i1e", "lax.erf_inv", "lax.erf", "lax.erfc"),
    }
)
IGAMMA_OPS = frozenset({"special.gammainc", "special.gammaincc"})
LAX_ACCUMULATING_OPS = frozenset(
    {"lax.reduce_sum", "lax.reduce_prod", "lax.cumsum", "lax.cumprod", "lax.cumlogsumexp"}
)
ELEMENTWISE_KINDS = frozenset({"unary", "binary", "lax_unary", "lax_binary"})


def _equalize(
    got: Leaves, want: Leaves, where: Callable[[np.ndarray, np.ndarray], Any]
) -> tuple[Leaves, Leaves]:
    """`got`'s leaves with the elements where `where(g, w)` holds taken from `want` (array
    leaves of one shape; `where` gives None to leave a leaf as it is)."""
    out = []
    for (path, (g, gd, gw)), (_, (w, _, _)) in zip(got, want):
        if isinstance(g, np.ndarray) and isinstance(w, np.ndarray) and g.shape == w.shape:
            m = where(g, w)
            if m is not None:
                g = g.copy()
                g[m] = w[m]
        out.append((path, (g, gd, gw)))
    return out, want


def _same_where_infinite(got: Leaves, want: Leaves) -> tuple[Leaves, Leaves]:
    """The leaves with complex elements made equal where both sides are non-finite (an
    infinite part or a NaN part on each side)."""

    def where(g: np.ndarray, w: np.ndarray) -> Any:
        if w.dtype.kind != "c" or g.dtype.kind != "c":
            return None
        return ~np.isfinite(g) & ~np.isfinite(w)

    return _equalize(got, want, where)


def _complex_excused(case: Case, got: Leaves, want: Leaves) -> tuple[Leaves, Leaves]:
    """The leaves with the complex elements made equal whose value depends on XLA's order of
    operations: a complex result with an infinite part is infinite (C99 Annex G) whatever its
    other part, and one with a NaN part is NaN, where XLA's order may give NaN + NaNj and
    webjax's keep the inf or the other part (in the ops that overflow, and in any formula of
    complex operands that hold an inf or a NaN: squareplus(inf + 0j) squares to inf + NaNj,
    C99's infinity, whose square root is inf + NaNj to webjax, NaN + NaNj to XLA); XLA's
    complex max/min keep whichever element their fold meets first where a NaN compares false,
    where webjax's reduction takes a NaN element (its imaginary part the extreme among them)."""
    if case.spec.op in COMPLEX_OVERFLOW_OPS or _has_complex_nonfinite(case):
        got, want = _same_where_infinite(got, want)
    if case.spec.op in COMPLEX_ORDER_REDUCTIONS and _has_complex_nan(case):
        got, want = _same_where_webjax_nan(got, want)
    return got, want


def _zeta_noise_excused(
    case: Case, got: Leaves, want: Leaves, answers: _JaxAnswers
) -> tuple[Leaves, Leaves]:
    """grad of zeta in x: the elements made equal where x < 1 and JAX's float32 answer is
    more than 1% off its float64 answer."""
    wide = answers.jax_float64()
    if wide.leaves is None or not _floats(case):
        return got, want
    x = np.asarray(case.args[0])
    ref = wide.leaves[0][1][0]  # (grad of one operand: one leaf)

    def where(g: np.ndarray, w: np.ndarray) -> Any:
        if g.shape != x.shape or np.shape(ref) != g.shape:
            return None
        with np.errstate(all="ignore"):
            noisy = ~(np.abs(w - ref) <= 0.01 * np.abs(ref))
        return (np.broadcast_to(x, g.shape) < 1) & noisy

    return _equalize(got, want, where)


def _igamma_reference(case: Case) -> Leaves | None:
    """gammainc / gammaincc in float64 from SciPy: the values, or the derivatives (in x the
    density x^(a-1) e^-x / Gamma(a), in Stirling's form past a = 20; in a a central difference
    of SciPy's), summed to the differentiated operand's shape. None without SciPy."""
    try:
        import scipy.special as sp
    except ImportError:
        return None
    a0, x0 = (np.asarray(v, np.float64) for v in case.args[:2])
    a, x = np.broadcast_arrays(a0, x0)
    upper = case.spec.op == "special.gammaincc"
    fn = sp.gammaincc if upper else sp.gammainc
    with np.errstate(all="ignore"):
        if case.mode == "vmap":  # each example of the mapped operand against the other whole
            mapped = a0 if case.vmap_arg == 0 else x0
            rows = [fn(v, x0) if case.vmap_arg == 0 else fn(a0, v) for v in mapped]
            return [("out", (np.stack(rows), "float64", False))]
        if case.mode != "grad":
            return [("out", (fn(a, x), "float64", False))]
        mu = x / a - 1
        log_density = np.where(
            a > 20,
            -a * (mu - np.log1p(mu)) + 0.5 * np.log(a / (2 * np.pi)) - 1 / (12 * a) - np.log(x),
            (a - 1) * np.log(x) - x - sp.gammaln(a),
        )
        sign = -1.0 if upper else 1.0
        dx = sign * np.exp(log_density)
        h = np.maximum(np.abs(a) * 1e-6, 1e-8)
        da = (fn(a + h, x) - fn(a - h, x)) / (2 * h)
    # (the fuzzer's grad is in the first operand)
    arg, d = (a0, da) if is_operand(case.args[0]) else (x0, dx)
    shape = np.shape(arg)
    d = d.sum(axis=tuple(range(d.ndim - len(shape))))
    d = d.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)
    return [("out", (d, "float64", False))]


def _agrees(case: Case, got: Leaves, ref: Leaves, device: Any, scale: float) -> bool:
    """Whether webjax's leaves agree with a reference answer: as they are, or (for inputs
    holding subnormals, which XLA flushes to zero) with the outputs of those inputs masked, as
    the subnormal rule at the end of judge does."""
    if not compare_leaves(got, ref, device.platform, scale):
        return True
    if not any(m.any() for m in _flush_masks(case)):
        return False
    masked = _mask_subnormal_elements(case, got, ref)
    return masked is not None and not compare_leaves(*masked, device.platform, scale)


def _where_close(got: Leaves, first: Leaves, second: Leaves, tol: float) -> Leaves:
    """A reference of float leaves: `first`'s elements where `got`'s agree with them (equal,
    NaN on both sides, or within `tol` relative to 1 + |first|), else `second`'s."""
    out = []
    for (_, (g, _, _)), (path, (f, fd, fw)), (_, (s, _, _)) in zip(got, first, second):
        if all(isinstance(v, np.ndarray) for v in (g, f, s)) and g.shape == f.shape == s.shape:
            with np.errstate(all="ignore"):
                g64, f64 = g.astype(np.float64), f.astype(np.float64)
                agree = (g64 == f64) | (np.isnan(g64) & np.isnan(f64))
                agree |= np.abs(g64 - f64) <= tol * (1 + np.abs(f64))
            f = np.where(agree, f, s.astype(f.dtype))
        out.append((path, (f, fd, fw)))
    return out


def _same_where_webjax_nan(got: Leaves, want: Leaves) -> tuple[Leaves, Leaves]:
    """The leaves with complex elements made equal where webjax's has a NaN part."""

    def where(g: np.ndarray, w: np.ndarray) -> Any:
        return np.isnan(g.real) | np.isnan(g.imag) if g.dtype.kind == "c" else None

    return _equalize(got, want, where)


def _trigamma(x: np.ndarray) -> np.ndarray:
    """polygamma(1, x) in float64: reflection below 1/2, recurrence up to 12, then the
    asymptotic series (relative error near 1e-15 away from the poles)."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        neg = x < 0.5
        y = np.where(neg, 1.0 - x, x)
        acc = np.zeros_like(y)
        for _ in range(12):
            small = y < 12.0
            acc = acc + np.where(small, 1.0 / (y * y), 0.0)
            y = np.where(small, y + 1.0, y)
        r = 1.0 / (y * y)
        series = (1.0 / y + r / 2 + r / y * (1 / 6 - r * (1 / 30 - r * (1 / 42 - r / 30)))) + acc
        pole = np.where(x == np.floor(x), np.inf, np.pi**2 / np.sin(np.pi * (x - np.floor(x))) ** 2)
        return np.where(neg, pole - series, series)


def _mask_subnormal_elements(case: Case, got: Leaves, want: Leaves) -> tuple[Leaves, Leaves] | None:
    """For an elementwise op: the leaves with the elements computed from a subnormal input
    made equal on both sides (None when the op is not elementwise). Inputs near the bottom
    of the normal range count too (see _flush_sensitive)."""
    if case.spec.kind not in ELEMENTWISE_KINDS or case.spec.op == "jnp.ravel":
        return None
    masks = _flush_masks(case)
    if not masks:
        return None
    try:
        if case.mode == "vmap":
            k = case.vmap_arg
            rest = [m for i, m in enumerate(masks) if i != k]
            shape = np.broadcast_shapes(masks[k].shape[1:], *(m.shape for m in rest))
            mask = (
                np.stack(
                    [
                        np.logical_or.reduce(
                            [np.broadcast_to(masks[k][b], shape)]
                            + [np.broadcast_to(m, shape) for m in rest]
                        )
                        for b in range(masks[k].shape[0])
                    ]
                )
                if masks[k].shape[0]
                else np.zeros((0, *shape), bool)
            )
        else:
            shape = np.broadcast_shapes(*(m.shape for m in masks))
            mask = np.logical_or.reduce([np.broadcast_to(m, shape) for m in masks])
            if case.mode == "grad":  # d/dx of the sum: x's element reads its broadcast partners
                first = masks[0].shape
                lead = mask.ndim - len(first)
                mask = mask.any(axis=tuple(range(lead))) if lead else mask
                axes = tuple(i for i, n in enumerate(first) if n == 1 and mask.shape[i] != 1)
                mask = mask.any(axis=axes, keepdims=True) if axes else mask
                mask = np.broadcast_to(mask, first)
    except ValueError:  # shapes that do not broadcast (the case raised on both sides)
        return None
    return _equalize(got, want, lambda g, w: mask.reshape(g.shape) if g.size == mask.size else None)


class _JaxAnswers:
    """JAX's other answers to a case, each made once and only when a verdict asks for it: with
    the subnormal inputs flushed to zero (per threshold; None: each operand's own smallest
    normal), run op by op, and with 16-bit float operands in float32."""

    def __init__(self, case: Case) -> None:
        self._case = case
        self._cases: dict[float | None, Case] = {}
        self._jax: dict[float | None, Outcome] = {}
        self._eager: dict[str, Outcome] = {}
        floats = [
            float(ml_dtypes.finfo(x.dtype).tiny)
            for a in case.args
            for x in (a if isinstance(a, list) else [a])
            if isinstance(x, np.ndarray) and (x.dtype.kind in "fc" or x.dtype == ml_dtypes.bfloat16)
        ]
        common = min(floats) if floats else None
        self.thresholds: list[float | None] = [None]
        if common is not None and any(t != common for t in floats):
            self.thresholds.append(common)

    def case(self, tiny: float | None) -> Case:
        if tiny not in self._cases:
            args = [_flush(a, tiny) for a in self._case.args]
            self._cases[tiny] = dataclasses.replace(self._case, args=args)
        return self._cases[tiny]

    def jax_eager(self) -> Outcome:
        """JAX's answer to the case run op by op (no jit)."""
        if "eager" not in self._eager:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                eager = dataclasses.replace(self._case, mode="eager")
                self._eager["eager"] = run_lib(jax, eager, None)
        return self._eager["eager"]

    def jax_float32(self) -> Outcome:
        """JAX's answer with the 16-bit float operands cast to float32."""
        if "float32" not in self._eager:
            up = [
                a.astype(np.float32)
                if isinstance(a, np.ndarray) and a.dtype in (np.float16, ml_dtypes.bfloat16)
                else a
                for a in self._case.args
            ]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._eager["float32"] = run_lib(
                    jax, dataclasses.replace(self._case, args=up), None
                )
        return self._eager["float32"]

    def jax_float64(self) -> Outcome:
        """JAX's answer with x64 on and the float operands cast to float64."""
        if "float64" not in self._eager:
            up = [
                a.astype(np.float64)
                if isinstance(a, np.ndarray)
                and (a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16)
                else a
                for a in self._case.args
            ]
            with warnings.catch_warnings(), jax.enable_x64(True):
                warnings.simplefilter("ignore")
                self._eager["float64"] = run_lib(
                    jax, dataclasses.replace(self._case, args=up), None
                )
        return self._eager["float64"]

    def jax(self, tiny: float | None) -> Outcome:
        if tiny not in self._jax:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._jax[tiny] = run_lib(jax, self.case(tiny), None)
        return self._jax[tiny]


def _subnormal(a: np.ndarray, tiny: float | None = None) -> np.ndarray:
    """Where `a` holds subnormals (of its own dtype, or below `tiny`)."""
    if a.dtype.kind not in "fc" and a.dtype != ml_dtypes.bfloat16:
        return np.zeros(a.shape, bool)
    if tiny is None:
        tiny = float(ml_dtypes.finfo(a.dtype).tiny)
    wide = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    parts = (wide.real, wide.imag) if a.dtype.kind == "c" else (wide,)
    return np.logical_or.reduce([(p != 0) & (np.abs(p) < tiny) for p in parts])


def _flush_sensitive(a: np.ndarray) -> np.ndarray:
    """Where `a` holds subnormals or normals so small that a product with a number below 1 in
    the op's own formula is subnormal (|x| < tiny * 2**(mantissa bits + 1)): where XLA's
    flushing makes its answer differ from IEEE arithmetic."""
    if a.dtype.kind not in "fc" and a.dtype != ml_dtypes.bfloat16:
        return np.zeros(a.shape, bool)
    info = ml_dtypes.finfo(a.dtype)
    return _subnormal(a, float(info.tiny) * 2.0 ** (info.nmant + 1))


DIVIDING_OPS = frozenset({"lax.div", "jnp.divide", "jnp.true_divide"})


def _flush_masks(case: Case) -> list[np.ndarray]:
    """Per operand, where XLA's flushing of subnormals to zero can change the op's answer:
    subnormal and near-subnormal inputs (_flush_sensitive), and a divisor so large that its
    reciprocal, which XLA's CPU code may multiply by, is subnormal in the float type computed
    in (float32 for the 16-bit floats)."""
    operands = [np.asarray(a) for a in case.args if is_operand(a)]
    masks = [_flush_sensitive(a) for a in operands]
    if case.spec.op in DIVIDING_OPS and len(operands) == 2:
        y = operands[1]
        if y.dtype.kind == "f" or y.dtype == ml_dtypes.bfloat16:
            wide = np.float64 if y.dtype == np.float64 else np.float32
            with np.errstate(all="ignore"):
                masks[1] = masks[1] | (np.abs(y.astype(wide)) >= 1 / np.finfo(wide).tiny)
    return masks


def _has_subnormals(case: Case) -> bool:
    arrays = [x for a in case.args for x in (a if isinstance(a, list) else [a])]
    return any(isinstance(x, np.ndarray) and _subnormal(x).any() for x in arrays)


def _flush(a: Any, tiny: float | None = None) -> Any:
    """`a` with its subnormals (below `tiny` if given) made zeros of their sign."""
    if isinstance(a, list):
        return [_flush(x, tiny) for x in a]
    if not isinstance(a, np.ndarray) or not _subnormal(a, tiny).any():
        return a
    wide = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    if a.dtype.kind == "c":
        if tiny is None:
            tiny = float(ml_dtypes.finfo(a.dtype).tiny)
        re = np.where(np.abs(wide.real) < tiny, np.copysign(0.0, wide.real), wide.real)
        im = np.where(np.abs(wide.imag) < tiny, np.copysign(0.0, wide.imag), wide.imag)
        out = np.empty(a.shape, a.dtype)
        out.real, out.imag = re, im  # (re + 1j * im would make inf * 0j a NaN)
        return out
    return np.where(_subnormal(a, tiny), np.copysign(0.0, wide), wide).astype(a.dtype)
