"""vmap against a Python loop, for every lax primitive with the batch axis at every position
(the elementwise primitives and reductions through the primitive table: tests/test_primitives.py).

The reference for `vmap(f, in_axes)(*args)` is `stack([f(*args_i) for i in range(n)])`, run
eagerly on the same backend. API semantics (pytrees, in_axes/out_axes prefixes, axis_size,
kwargs, errors) follow JAX; where real JAX is installed it is the oracle for a corpus.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import pytest

import webjax
import webjax.numpy as jnp
from primitive_table import RECORDS as PRIMITIVE_TABLE
from webjax import lax
from webjax._src.lax import lax as lax_internal
from webjax._src.lax.batching_rules import missing_batching_rules
from webjax._src.vmap import vmap
from webjax.lax import linalg as _la

np = pytest.importorskip("numpy")

_a33 = np.array([[0.9, -0.3, 0.4], [0.2, 1.4, -0.6], [-0.5, 0.1, 1.1]], np.float32)
_U32_23 = np.arange(6, dtype=np.uint32).reshape(2, 3) * 977


def _tf(k: Any, x: Any) -> Any:
    from webjax._src.random import threefry as prng

    y0, y1 = prng.threefry2x32(k, k, x, x)
    return lax.bitwise_xor(y0, y1)


N = 2  # the batch size: small, the cpu backend is a pure-Python reference


# ---- the loop reference --------------------------------------------------------------------------
def _take(x: Any, i: int, d: int | None) -> Any:
    return x if d is None else np.take(x, i, axis=d)


def to_jnp(x: Any) -> Any:
    # Works around jnp.asarray giving shape (1,) for 0-d NumPy values (reported), and eager
    # lax.pad misreading a padding value that is a view (reported).
    x = np.asarray(x)
    return lax.full((), x.item(), str(x.dtype)) if x.ndim == 0 else jnp.asarray(x)


def loop_reference(f: Callable, args: Sequence[Any], in_axes: Sequence[int | None]) -> Any:
    """Stack of `f` applied eagerly to each example (numpy in, numpy out, batch axis 0)."""
    outs = [
        np.asarray(f(*(to_jnp(_take(a, i, d)) for a, d in zip(args, in_axes)))) for i in range(N)
    ]
    return np.stack(outs)


def batch_arg(x: Any, d: int | None) -> Any:
    """Stack N variants of the example `x` along axis `d` (None: `x` itself, unmapped)."""
    if d is None:
        return x
    variants = [_variant(x, i) for i in range(N)]
    return np.stack(variants, axis=d if d >= 0 else x.ndim + 1 + d)


def _variant(x: Any, i: int) -> Any:
    if x.dtype == np.bool_:
        return x ^ bool(i % 2)
    if x.dtype.kind == "f":
        return (x * (1 + 0.25 * i)).astype(x.dtype)
    return (x + i).astype(x.dtype)


def check_vmap(f: Callable, examples: Sequence[Any], dims: Sequence[int | None]) -> None:
    args = [batch_arg(np.asarray(x), d) for x, d in zip(examples, dims)]
    want = loop_reference(f, args, dims)
    got = vmap(f, in_axes=tuple(dims))(*(to_jnp(a) for a in args))
    assert got.shape == want.shape, (dims, got.shape, want.shape)
    assert str(got.dtype) == str(want.dtype), (dims, got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-6, err_msg=str(dims))
    else:
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=str(dims))


def dims_choices(examples: Sequence[Any]) -> list[tuple[int | None, ...]]:
    """Every mix of batch positions 0, 1, -1 and None (1 only where the rank allows it),
    with at least one mapped argument."""
    per_arg = [[0, 1, -1, None] if x.ndim >= 1 else [0, -1, None] for x in examples]
    return [ds for ds in itertools.product(*per_arg) if any(d is not None for d in ds)]


# ---- one case per primitive ----------------------------------------------------------------------
class Case(NamedTuple):
    prim: str
    fn: Callable
    examples: tuple[Any, ...]


def f32(*shape: int, lo: float = 0.1, hi: float = 0.9) -> Any:
    n = int(np.prod(shape))
    return np.linspace(lo, hi, max(n, 1), dtype=np.float32)[:n].reshape(shape)


def _c(*shape: int) -> Any:
    return (f32(*shape) + 1j * f32(*shape, lo=-0.7, hi=0.4)[::-1]).astype(np.complex64)


def i32(*shape: int, lo: int = 1) -> Any:
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.int32) % 5 + lo).reshape(shape)


def bools(*shape: int) -> Any:
    n = int(np.prod(shape))
    return (np.arange(n) % 3 == 0).reshape(shape)


_sl = __import__("webjax._src.lax.slicing", fromlist=["slicing"])
_GDN = _sl.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
_SDN = _sl.ScatterDimensionNumbers(
    update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)


_win = __import__("webjax._src.lax.windowed", fromlist=["windowed"])
_WIN = {"window_dimensions": (2, 2), "window_strides": (1, 1), "padding": ((0, 0), (0, 0)),
        "base_dilation": (1, 1), "window_dilation": (1, 1)}  # fmt: skip


def _cases() -> list[Case]:
    """The primitives beyond the primitive table's elementwise rows and reductions
    (tests/test_primitives.py)."""
    x23, x123 = f32(2, 3), f32(1, 2, 3)
    return [
        Case("convert_element_type", lambda x: lax.convert_element_type(x, "int32"), (x23 * 9,)),
        Case("convert_element_type", lambda x: lax.convert_element_type(x, "float32"), (i32(3),)),
        Case("convert_element_type", lambda x: lax.convert_element_type(x, "bool"), (i32(3),)),
        Case("integer_pow", lambda x: lax.integer_pow(x, 3), (x23,)),
        Case("select_n", lax.select_n, (bools(3), f32(3), f32(3, lo=2, hi=3))),
        Case("select_n", lax.select_n, (np.bool_(True), f32(3), f32(3, lo=2, hi=3))),
        Case("select_n", lax.select_n, (i32(2, lo=0) % 3, f32(2), f32(2) + 1, f32(2) + 2)),
        Case("select_n", lax.select_n, (np.bool_(False), np.float32(1), np.float32(2))),
        Case("iota", lambda x: x + lax.iota("float32", 3), (f32(3),)),
        Case("iota", lambda x: x * lax.broadcasted_iota("int32", (2, 3), 1), (i32(2, 3),)),
        Case("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)), (f32(3),)),
        Case("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (3, 2), (0,)), (f32(3),)),
        Case("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 4), ()), (f32(),)),
        Case(
            "broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 2, 3), (1, 2)), (f32(1, 3),)
        ),
        Case("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 4, 3), (0, 2)), (x23,)),
        Case("reshape", lambda x: lax.reshape(x, (3, 2)), (x23,)),
        Case("reshape", lambda x: lax.reshape(x, (6,)), (x23,)),
        Case("reshape", lambda x: lax.reshape(x, (2, 3), (1, 0)), (f32(3, 2),)),
        Case("reshape", lambda x: lax.reshape(x, (1, 1)), (f32(),)),
        Case("transpose", lambda x: lax.transpose(x, (1, 0)), (x23,)),
        Case("transpose", lambda x: lax.transpose(x, (2, 0, 1)), (x123,)),
        Case("squeeze", lambda x: lax.squeeze(x, (0,)), (x123,)),
        Case("squeeze", lambda x: lax.squeeze(x, (0, 2)), (f32(1, 3, 1),)),
        Case("concatenate", lambda x, y: lax.concatenate([x, y], 0), (x23, f32(1, 3))),
        Case("concatenate", lambda x, y: lax.concatenate([x, y], 1), (x23, f32(2, 1))),
        Case("concatenate", lambda *xs: lax.concatenate(xs, 0), (f32(1), f32(2), f32(1))),
        Case("slice", lambda x: lax.slice(x, (1, 0), (3, 3)), (f32(3, 3),)),
        Case("slice", lambda x: lax.slice(x, (0, 1), (3, 3), (2, 1)), (f32(3, 3),)),
        Case("pad", lambda x, v: lax.pad(x, v, ((1, 2, 1),)), (f32(3), np.float32(-1))),
        Case("pad", lambda x, v: lax.pad(x, v, ((0, 1, 0), (-1, 1, 0))), (x23, np.float32(5))),
        Case("rev", lambda x: lax_internal.rev(x, (1,)), (x23,)),
        Case(
            "conv_general_dilated",
            lambda x, w: lax.conv(x, w, (1,), "SAME"),
            (f32(1, 2, 5), f32(3, 2, 2)),
        ),
        Case(
            "conv_general_dilated",
            lambda x, w: lax.conv(x, w, (2,), "VALID"),
            (f32(2, 1, 6), f32(2, 1, 3)),
        ),
        Case(
            "reduce_window_sum",
            lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "VALID"),
            (f32(3, 4),),
        ),
        Case(
            "reduce_window_max",
            lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 2), (1, 2), "SAME"),
            (f32(3, 4),),
        ),
        Case(
            "reduce_window_min",
            lambda x: lax.reduce_window(x, np.inf, lax.min, (2,), (1,), "VALID"),
            (f32(5),),
        ),
        Case(
            "select_and_gather_add",
            lambda t, x: _win.select_and_gather_add_p.bind(
                t, x, select_prim=lax_internal.prims["ge"], **_WIN
            ),
            (f32(3, 4), f32(3, 4)),
        ),
        Case(
            "select_and_scatter_add",
            lambda s, x: _win.select_and_scatter_add_p.bind(
                s, x, select_prim=lax_internal.prims["ge"], **_WIN
            ),
            (f32(2, 3), f32(3, 4)),
        ),
        Case(
            "eig",
            lambda x: lax.linalg.eig(x, compute_left_eigenvectors=False)[0],
            (f32(2, 3, 3) + np.eye(3, dtype=np.float32)[::-1],),
        ),
        Case(
            "eig",
            lambda x: lax.linalg.eig(
                x, compute_left_eigenvectors=False, compute_right_eigenvectors=False
            )[0],
            (np.array([[1.0, 2.0], [-3.0, 1.0]], np.float32),),
        ),
        Case("hessenberg", lambda x: lax.linalg.hessenberg(x)[0], (f32(2, 4, 4),)),
        Case(
            "schur", lambda x: lax.linalg.schur(x)[0], (f32(2, 3, 3) + np.eye(3, dtype=np.float32),)
        ),
        Case("fft", lambda x: lax.fft(x, "FFT", (4,)), (_c(2, 4),)),
        Case("fft", lambda x: lax.fft(x, lax.FftType.IFFT, (2, 3)), (_c(2, 3),)),
        Case("fft", lambda x: lax.fft(x, "RFFT", (5,)), (f32(2, 5),)),
        Case("fft", lambda x: lax.fft(x, "IRFFT", (3, 6)), (_c(3, 4),)),
        Case("cumsum", lambda x: lax.cumsum(x, axis=1), (x23,)),
        Case("cumsum", lambda x: lax.cumsum(x, axis=0, reverse=True), (x23,)),
        Case("cumprod", lambda x: lax.cumprod(x, axis=1), (x23,)),
        Case("cummax", lambda x: lax.cummax(x, axis=1), (x23,)),
        Case("cummin", lambda x: lax.cummin(x, axis=0), (x23,)),
        Case("cumlogsumexp", lambda x: lax.cumlogsumexp(x, axis=1), (x23,)),
        Case("sort", lambda x: lax.sort(x), (x23,)),
        Case("sort", lambda x: lax.sort(x, dimension=0), (x23,)),
        Case("sort", lambda x, y: lax.sort((x, y), num_keys=1)[1], (x23, f32(2, 3))),
        Case("threefry2x32", lambda k, x: _tf(k, x), (_U32_23, _U32_23 + 7)),
        Case("top_k", lambda x: lax.top_k(x, 2)[0], (x23,)),
        Case("cholesky", lambda a: _la.cholesky(a @ a.T + 3.0 * jnp.eye(3)), (_a33,)),
        Case(
            "triangular_solve",
            lambda a, b: _la.triangular_solve(a + 3.0 * jnp.eye(3), b, left_side=True, lower=True),
            (_a33, f32(3, 2)),
        ),
        Case("lu", lambda a: _la.lu(a)[0], (_a33,)),
        Case(
            "lu_pivots_to_permutation",
            lambda p: _la.lu_pivots_to_permutation(p, 4),
            (np.array([2, 3, 2], np.int32),),
        ),
        Case("qr", lambda a: jnp.abs(_la.qr(a)[1]), (_a33,)),
        Case("eigh", lambda a: _la.eigh(a + a.T)[1], (_a33,)),
        Case("svd", lambda a: _la.svd(a, compute_uv=False), (_a33,)),
        Case("top_k", lambda x: lax.top_k(x, 2)[1], (x23,)),
        Case("gather", lambda x: _sl.gather(x, jnp.array([[1], [0]]), _GDN, (1, 3)), (x23,)),
        Case("gather", lambda x, i: _sl.gather(x, i, _GDN, (1, 3)), (x23, np.array([[1], [0]]))),
        Case(
            "scatter-add",
            lambda x, u: _sl.scatter_add(x, jnp.array([[1], [1]]), u, _SDN),
            (x23, f32(2, 3)),
        ),
        Case("scatter", lambda x, u: _sl.scatter(x, jnp.array([[1]]), u, _SDN), (x23, f32(1, 3))),
        Case(
            "scatter-mul",
            lambda x, u: _sl.scatter_mul(x, jnp.array([[0]]), u, _SDN),
            (x23, f32(1, 3)),
        ),
        Case(
            "scatter-min",
            lambda x, u: _sl.scatter_min(x, jnp.array([[0]]), u, _SDN),
            (x23, f32(1, 3)),
        ),
        Case(
            "scatter-max",
            lambda x, u: _sl.scatter_max(x, jnp.array([[0]]), u, _SDN),
            (x23, f32(1, 3)),
        ),
        Case("clamp", lambda x: lax.clamp(0.3, x, 0.6), (x23,)),
        Case("clamp", lambda lo, x, hi: lax.clamp(lo, x, hi), (x23 * 0.5, x23, x23 + 0.2)),
        Case("bitcast_convert_type", lambda x: lax.bitcast_convert_type(x, "uint32"), (x23,)),
        Case(
            "dot_general",
            lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))),
            (x23, f32(3, 4)),
        ),
        Case(
            "dot_general",
            lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
            (x123, f32(1, 3, 4)),
        ),
        Case(
            "dot_general",
            lambda x, y: lax.dot_general(x, y, (((0,), (0,)), ((), ()))),
            (f32(3), f32(3)),
        ),
        Case("rev", lambda x: lax_internal.rev(x, (0, 2)), (x123,)),
        Case(
            "dynamic_slice",
            lambda x, i: lax_internal.dynamic_slice(x, (i, 1), (2, 2)),
            (f32(3, 3), i32()),
        ),
        Case(
            "dynamic_slice",
            lambda x, i: lax_internal.dynamic_slice(x, (i,), (2,)),
            (i32(4), np.int32(5)),
        ),
        Case(
            "dynamic_slice",
            lambda x, i, j: lax_internal.dynamic_slice(x, (i, j), (1, 2)),
            (bools(2, 3), np.int32(-1), np.int32(1)),
        ),
        Case(
            "dynamic_update_slice",
            lambda x, u, i: lax_internal.dynamic_update_slice(x, u, (i, 0)),
            (f32(3, 2), f32(2, 2, lo=5, hi=6), i32()),
        ),
        Case(
            "dynamic_update_slice",
            lambda x, u, i: lax_internal.dynamic_update_slice(x, u, (i,)),
            (i32(4), i32(2, lo=7), np.int32(3)),
        ),
        Case("stop_gradient", lax.stop_gradient, (x23,)),
        Case("real", lax.real, (x23 + 1j * x23[::-1].copy(),)),
        Case("imag", lax.imag, (x23 - 2j * x23,)),
        Case("complex", lax.complex, (x23, x23 * 3)),
        Case("complex", lax.complex, (f32(), x23)),
        Case("conj", lax.conj, (x23 + 1j * x23,)),
        Case("conj", lax.conj, (x23,)),
        Case("add_any", lambda x, y: lax_internal.prims["add_any"].bind(x, y), (x23, x23 + 1)),
        # Collectives need a named axis: an inner vmap binds it (the loop runs that eagerly),
        # and the outer vmap under test carries its batch axis through the collective.
        Case("psum", lambda x: vmap(lambda y: lax.psum(y, "i"), axis_name="i")(x), (f32(3, 2),)),
        Case(
            "psum",
            lambda x: vmap(lambda y: lax.psum(y, ("i", 1)), axis_name="i", in_axes=1)(x),
            (f32(2, 3, 4),),
        ),
        Case("pmax", lambda x: vmap(lambda y: lax.pmax(y, "i"), axis_name="i")(x), (f32(3, 2),)),
        Case(
            "pmax", lambda x: vmap(lambda y: lax.pmax(y, ("i", 0)), axis_name="i")(x), (i32(3, 2),)
        ),
        Case("pmin", lambda x: vmap(lambda y: lax.pmin(y, "i"), axis_name="i")(x), (f32(3, 2),)),
        Case(
            "all_gather",
            lambda x: vmap(lambda y: lax.all_gather(y, "i", axis=1), axis_name="i")(x),
            (f32(3, 2, 2),),
        ),
        Case(
            "all_gather",
            lambda x: vmap(lambda y: lax.all_gather(y, "i", axis=0, tiled=True), axis_name="i")(x),
            (f32(3, 2),),
        ),
        Case(
            "axis_index",
            lambda x: vmap(lambda y: vmap(lambda z: z + lax.axis_index("i"))(y), axis_name="i")(x),
            (i32(3, 2),),
        ),
        Case(
            "ppermute",
            lambda x: vmap(lambda y: lax.ppermute(y, "i", [(0, 1), (1, 2), (2, 0)]), axis_name="i")(
                x
            ),
            (f32(3, 2),),
        ),
        Case(
            "reduce_scatter",
            lambda x: vmap(lambda y: lax.psum_scatter(y, "i", scatter_dimension=1), axis_name="i")(
                x
            ),
            (f32(3, 2, 3),),
        ),
        Case(
            "reduce_scatter",
            lambda x: vmap(lambda y: lax.psum_scatter(y, "i", tiled=True), axis_name="i")(x),
            (f32(3, 6),),
        ),
        Case(
            "all_to_all",
            lambda x: vmap(lambda y: lax.all_to_all(y, "i", 1, 0), axis_name="i")(x),
            (f32(3, 2, 3),),
        ),
    ]


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.prim)
def test_primitive_against_loop(device: Any, case: Case) -> None:
    for dims in dims_choices(case.examples):
        check_vmap(case.fn, case.examples, dims)


def test_every_primitive_has_a_rule_and_a_case() -> None:
    assert missing_batching_rules() == []
    in_op_table = {r.prim for r in PRIMITIVE_TABLE if r.vmappable}
    untested = sorted(set(lax_internal.prims) - {c.prim for c in CASES} - in_op_table)
    assert untested == [], f"add vmap test cases for {untested}"


# ---- compositions --------------------------------------------------------------------------------
def test_nested_vmap(device: Any) -> None:
    x = f32(2, 3, 4)
    y = f32(4, 3, lo=1, hi=2)
    f = lambda a, b: lax.reduce_sum(lax.mul(a, b), (0,))  # a: (3,), b: (3,)
    got = vmap(vmap(f, in_axes=(0, 1)), in_axes=(0, None))(jnp.asarray(x), jnp.asarray(y))
    want = np.einsum("ijk,kj->ij", x, y)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    # The inner vmap maps an axis of an argument closed over from the outer one.
    g = lambda a: vmap(lambda r: r * a.sum())(jnp.asarray(y))
    got = vmap(g)(jnp.asarray(x[:, 0, :3]))
    want = np.stack([y * x[i, 0, :3].sum() for i in range(2)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_nested_vmap_out_axes(device: Any) -> None:
    x = f32(2, 3)
    got = vmap(vmap(lambda a: a * 2, out_axes=0), in_axes=1, out_axes=1)(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), x * 2, rtol=1e-6)
    got = vmap(vmap(lambda a, b: a - b, in_axes=(None, 0)), in_axes=(0, None))(
        jnp.asarray(x[:, 0]), jnp.asarray(x[0])
    )
    np.testing.assert_allclose(np.asarray(got), x[:, :1] - x[0][None, :], rtol=1e-6)


def test_jnp_functions_under_vmap(device: Any) -> None:
    x, y = f32(2, 3, 4), f32(2, 4, lo=1, hi=3)
    f = lambda a, b: (jnp.sum(a * b, axis=-1) / b.sum()).T.reshape(-1) + 1
    check = loop_reference(f, [x, y], [0, 0])
    np.testing.assert_allclose(np.asarray(vmap(f)(jnp.asarray(x), jnp.asarray(y))), check)


# ---- the API: pytrees, axes, sizes ---------------------------------------------------------------
def test_pytree_args_and_outputs(device: Any) -> None:
    a, b = jnp.asarray(f32(2, 3)), jnp.asarray(f32(3, 2))
    out = vmap(
        lambda d, t: {"s": d["a"] + t[0], "p": (d["b"] * 2, None)},
        in_axes=({"a": 0, "b": 1}, (0, None)),
    )({"a": a, "b": b}, (a, 7.0))
    np.testing.assert_allclose(np.asarray(out["s"]), 2 * np.asarray(a))
    np.testing.assert_allclose(np.asarray(out["p"][0]), 2 * np.asarray(b).T)
    assert out["p"][1] is None


def test_in_axes_forms(device: Any) -> None:
    x = jnp.asarray(f32(2, 3))
    f = lambda u, v: u * v
    for in_axes in [0, (0, 0), [0, 0], (1, 1), (-1, -2 + 1)]:
        got = vmap(f, in_axes=in_axes)(x, x)
        want = np.asarray(x) ** 2 if in_axes in (0, (0, 0), [0, 0]) else (np.asarray(x) ** 2).T
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    got = vmap(f, in_axes=(None, 0))(x, x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(x)[None] * np.asarray(x)[:, None])
    nested = vmap(lambda p: p[0] + p[1][0], in_axes=((0, (1,)),))((x, (jnp.asarray(f32(3, 2)),)))
    np.testing.assert_allclose(np.asarray(nested), np.asarray(x) + f32(3, 2).T, rtol=1e-6)


def test_out_axes_forms(device: Any) -> None:
    x = jnp.asarray(f32(2, 3))
    f = lambda u: (u, u.sum())
    u, s = vmap(f, out_axes=(1, 0))(x)
    assert u.shape == (3, 2) and s.shape == (2,)
    u, s = vmap(f, out_axes=-1)(x)
    assert u.shape == (3, 2) and s.shape == (2,)
    out = vmap(lambda u: {"a": u, "b": [u, u]}, out_axes={"a": 1, "b": [0, -1]})(x)
    assert out["a"].shape == (3, 2) and out["b"][0].shape == (2, 3) and out["b"][1].shape == (3, 2)
    # An unbatched output with out_axes None is returned as it is; with an axis it is broadcast.
    c, y = vmap(lambda u: (3.0, u), out_axes=(None, 0))(x)
    assert c == 3.0 and y.shape == (2, 3)
    c = vmap(lambda u: jnp.ones(2))(x)
    assert c.shape == (2, 2) and c.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    c = vmap(lambda u: 2.0)(x)
    assert c.shape == (2,) and c.dtype == jnp.float32 and c.weak_type


def test_axis_size_and_kwargs(device: Any) -> None:
    x = jnp.asarray(f32(3))
    out = vmap(lambda u: u * 2, in_axes=None, axis_size=4)(x)
    assert out.shape == (4, 3)
    np.testing.assert_allclose(np.asarray(out), np.broadcast_to(np.asarray(x) * 2, (4, 3)))
    assert vmap(lambda: jnp.ones(2), axis_size=3)().shape == (3, 2)
    got = vmap(lambda u, v, scale=1.0: (u + v) * scale, in_axes=(0, None))(x, 1.0, scale=x)
    np.testing.assert_allclose(np.asarray(got), (np.asarray(x) + 1) * np.asarray(x), rtol=1e-6)


def test_numpy_and_scalar_args(device: Any) -> None:
    got = vmap(lambda u, c: u * c, in_axes=(0, None))(f32(3), 2.5)
    np.testing.assert_allclose(np.asarray(got), f32(3) * 2.5, rtol=1e-6)
    assert got.dtype == jnp.float32
    lst = vmap(lambda l: l[0] + l[1])([f32(2), f32(2) + 1])  # a list is a pytree, as in JAX
    np.testing.assert_allclose(np.asarray(lst), 2 * f32(2) + 1, rtol=1e-6)
    seen = []
    vmap(lambda u, s: seen.append(s) or u, in_axes=(0, None))(f32(2), "tag")
    assert seen == ["tag"]


def test_wraps() -> None:
    def f(x):
        """Doc of f."""
        return x

    g = vmap(f)
    assert g.__name__ == "f" and g.__wrapped__ is f
    assert g.__doc__.startswith("Vectorized version of f.") and "Doc of f." in g.__doc__


# ---- errors (JAX's types and messages) -----------------------------------------------------------
def test_rank_errors() -> None:
    msg = (
        "vmap was requested to map its argument along axis 0, which implies that its rank should "
        "be at least 1, but is only 0 (its shape is ())"
    )
    with pytest.raises(ValueError, match=_re(msg)):
        vmap(lambda x: x)(jnp.asarray(1.0))
    with pytest.raises(ValueError, match=_re(msg)):
        vmap(lambda x: x)(1.0)
    with pytest.raises(ValueError, match=r"along axis -3, .* at least 3, but is only 2"):
        vmap(lambda x: x, in_axes=-3)(jnp.ones((2, 3)))


def test_inconsistent_sizes() -> None:
    with pytest.raises(ValueError, match="vmap got inconsistent sizes for array axes to be mapped"):
        vmap(lambda x, y: x + y)(jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError) as e:
        vmap(lambda x, y, z: x)(jnp.ones(3), jnp.ones(4), z=jnp.ones(4))
    assert str(e.value) == (
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * most axes (2 of them) had size 4, e.g. axis 0 of argument y of type float32[4];\n"
        "  * one axis had size 3: axis 0 of argument x of type float32[3]"
    )
    with pytest.raises(ValueError, match="the `axis_size` argument was 4"):
        vmap(lambda x: x, axis_size=4)(jnp.ones(3))


def test_in_axes_errors() -> None:
    with pytest.raises(TypeError, match=_re("vmap in_axes must be an int, None, or a tuple")):
        vmap(lambda x: x, in_axes={"a": 0})
    with pytest.raises(TypeError, match="with those types as leaves"):
        vmap(lambda x: x, in_axes=(1.0,))
    with pytest.raises(TypeError, match="vmap out_axes must be an int, None, or"):
        vmap(lambda x: x, out_axes="a")
    with pytest.raises(ValueError, match=_re("but got len(in_axes)=1, len(args)=2")):
        vmap(lambda x, y: x, in_axes=(0,))(jnp.ones(2), jnp.ones(2))
    with pytest.raises(ValueError, match="vmap in_axes specification must be a tree prefix"):
        vmap(lambda x, y: x, in_axes=(0, {"a": 0}))(jnp.ones(2), jnp.ones(2))
    with pytest.raises(ValueError, match="vmap out_axes specification must be a tree prefix"):
        vmap(lambda x: x, out_axes=(0, 0))(jnp.ones(2))
    with pytest.raises(TypeError, match="Expected a callable value, got 3"):
        vmap(3)  # type: ignore[arg-type]


def test_size_errors() -> None:
    with pytest.raises(ValueError, match="vmap must have at least one non-None value in in_axes"):
        vmap(lambda x, y: x + y, in_axes=None)(jnp.ones(2), jnp.ones(2))
    with pytest.raises(ValueError, match="must be passed at least one argument containing an"):
        vmap(lambda: 1.0)()
    with pytest.raises(TypeError, match="is not a valid JAX type"):
        vmap(lambda x, s: x)(jnp.ones(2), "s")


def test_out_axes_errors() -> None:
    with pytest.raises(ValueError, match="got axis spec None but output was batched on axis 0"):
        vmap(lambda x: x, out_axes=None)(jnp.ones(2))
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        vmap(lambda x: x, out_axes=2)(jnp.ones((2, 3)))
    with pytest.raises(TypeError, match="Output from batched function 's'"):
        vmap(lambda x: "s")(jnp.ones(2))


def test_collectives_not_supported() -> None:
    from webjax._src.core import Primitive

    psum_p = Primitive("psum")
    f = vmap(lambda x: psum_p.bind(x, axes=("i",)), axis_name="i")
    with pytest.raises(NotImplementedError, match="'psum' over the named axis"):
        f(jnp.ones(2))


def test_missing_rule_names_the_primitive() -> None:
    from webjax._src.core import Primitive

    mystery_p = Primitive("mystery")
    with pytest.raises(NotImplementedError, match="'mystery'"):
        vmap(lambda x: mystery_p.bind(x))(jnp.ones(2))


def _re(s: str) -> str:
    import re

    return re.escape(s)


# ---- transformations composed with vmap ----------------------------------------------------------
def test_vmap_of_grad_and_jacfwd(device: Any) -> None:
    if not hasattr(webjax, "grad"):
        pytest.skip("webjax.grad not available yet")
    x = f32(2, 3)
    f = lambda v: jnp.sum(jnp.sin(v) * v)
    got = vmap(webjax.grad(f))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), np.sin(x) + x * np.cos(x), rtol=1e-5)
    got = webjax.grad(lambda v: vmap(f)(v).sum())(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), np.sin(x) + x * np.cos(x), rtol=1e-5)
    jac = webjax.jacfwd(lambda v: v * 2.0)(jnp.asarray(f32(3)))
    np.testing.assert_allclose(np.asarray(jac), 2 * np.eye(3), rtol=1e-6)


def test_jit_equals_eager(device: Any) -> None:
    jit = getattr(webjax, "jit", None)
    if jit is None:
        pytest.skip("webjax.jit not available yet")
    x, y = jnp.asarray(f32(2, 3)), jnp.asarray(f32(3, lo=1, hi=2))
    f = lambda a, b: jnp.sum(a * b) + a
    eager = np.asarray(vmap(f, in_axes=(0, None))(x, y))
    np.testing.assert_allclose(np.asarray(vmap(jit(f), in_axes=(0, None))(x, y)), eager)
    np.testing.assert_allclose(np.asarray(jit(vmap(f, in_axes=(0, None)))(x, y)), eager)


# ---- real JAX as the oracle ----------------------------------------------------------------------
ORACLE_CORPUS: list[tuple[str, Callable[[Any, Any], Callable], Any, Any, tuple]] = [
    # (name, make(np_like, vmap) -> function, in_axes, out_axes, example shapes)
    ("dot-rows", lambda m, v: v(lambda a, b: m.sum(a * b, axis=-1)), 0, 0, ((2, 3, 4), (2, 3, 4))),
    ("bias", lambda m, v: v(lambda a, b: a + b, in_axes=(1, None)), (1, None), 0, ((3, 2), (3,))),
    ("transpose-out", lambda m, v: v(lambda a: a.T, in_axes=2, out_axes=-1), 2, -1, ((2, 3, 2),)),
    ("nested", lambda m, v: v(v(lambda a, b: a * b, (0, None)), (None, 0)), 0, 0, ((3,), (2,))),
    ("max-reshape", lambda m, v: v(lambda a: m.max(a.reshape(2, -1), 0), 1), 1, 0, ((4, 2),)),
    ("maximum", lambda m, v: v(lambda a, b: m.maximum(a, b * 2)), 0, 0, ((2, 3), (2, 3))),
    (
        "concat",
        lambda m, v: v(lambda a, b: m.concatenate([a, b]), (0, None)),
        0,
        0,
        ((2, 3), (2,)),
    ),
    (
        "pytree",
        lambda m, v: v(lambda d: (d["x"] * 2, d["y"].sum()), ({"x": 1, "y": 0},)),
        0,
        0,
        (None,),
    ),
]


@pytest.mark.parametrize("entry", ORACLE_CORPUS, ids=lambda e: e[0])
def test_against_jax(entry: Any) -> None:
    jax = pytest.importorskip("jax")
    name, make, _, _, shapes = entry
    if name == "pytree":
        args: list[Any] = [{"x": f32(3, 2), "y": f32(2, 4)}]
    else:
        args = [f32(*s, lo=-1, hi=1) + 0.01 * i for i, s in enumerate(shapes)]
    want = make(jax.numpy, jax.vmap)(*args)
    got = make(jnp, vmap)(*args)
    w_leaves, _ = jax.tree_util.tree_flatten(want)
    g_leaves, _ = webjax._src.tree_util.tree_flatten(got)
    assert len(w_leaves) == len(g_leaves)
    for w, g in zip(w_leaves, g_leaves):
        assert g.shape == w.shape and str(g.dtype) == str(w.dtype)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


def _error_cases(v: Callable, ones: Callable) -> list[Callable[[], Any]]:
    add = lambda x, y: x + y
    return [
        lambda: v(lambda x: x)(ones(())),
        lambda: v(lambda x: x, in_axes=-3)(ones((2, 3))),
        lambda: v(lambda x, y, z: x)(ones(3), ones(4), z=ones(4)),
        lambda: v(add, axis_size=4)(ones(3), ones(3)),
        lambda: v(add, in_axes=(0,))(ones(3), ones(3)),
        lambda: v(add, in_axes=None)(ones(3), ones(3)),
        lambda: v(lambda: 1.0)(),
        lambda: v(add, out_axes=None)(ones(3), ones(3)),
        lambda: v(add, out_axes=-3)(ones((3, 2)), ones((3, 2))),
        lambda: v(add, in_axes={"a": 0}),
        lambda: v(add, in_axes=(0, 1.0)),
        lambda: v(add, out_axes=1.0),
        lambda: v(3),
        lambda: v(lambda x: "s")(ones(3)),
    ]


def test_error_messages_match_jax() -> None:
    jax = pytest.importorskip("jax")
    ours = _error_cases(vmap, lambda s: jnp.ones(s))
    theirs = _error_cases(jax.vmap, lambda s: jax.numpy.ones(s))
    for i, (mine, ref) in enumerate(zip(ours, theirs)):
        with pytest.raises(Exception) as want:
            ref()
        with pytest.raises(type(want.value)) as got:
            mine()
        assert str(got.value) == str(want.value), i
