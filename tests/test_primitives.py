"""Every row of the primitive table (tests/primitive_table.py) four ways: values against the NumPy
reference on every device, derivatives by finite differences (check_grads, orders 1 and 2) and
the linear transpose identity, vmap against a Python loop with the batch axis at every position,
and jit equal to eager, bit for bit.

Values (two cases per row), jit (one) and check_grads (one float32 case) run (shapes, dtype)
cases drawn by `primitive_table.sample_product` with a fixed seed; WEBJAX_FULL_OP_SWEEP=1 runs
every combination. vmap runs every shape group of a row and each of its dtypes (`vmap_cases`)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from check_grads import check_grads
from primitive_table import RECORDS, UNARY_SHAPES, Case, OpRecord, np_dtype, sample_product
from webjax import lax
from webjax._src.api import coverage
from webjax._src.interpreters import ad
from webjax._src.lax import lax as lax_internal

VALUE_CASES = sample_product(RECORDS)
JIT_CASES = sample_product(RECORDS, per_record=1, seed=1)
GRAD_CASES = sample_product(
    [r for r in RECORDS if r.differentiable], dtypes=("float32",), per_record=1
)
VMAP_DTYPES = ("float32", "int32", "bool")


def vmap_cases(r: OpRecord) -> list[Case]:
    """Every shape group of a row in its first dtype of float32, int32 and bool (the first group
    only for unary rows, whose rule is shape-blind), and the first group in its other ones."""
    dtypes = [d for d in VMAP_DTYPES if d in r.dtypes] or [r.dtypes[0]]
    shapes = r.shapes[:1] if r.shapes == UNARY_SHAPES else r.shapes
    return [Case(r, s, dtypes[0]) for s in shapes] + [Case(r, r.shapes[0], d) for d in dtypes[1:]]


VMAP_CASES = [c for r in RECORDS if r.vmappable for c in vmap_cases(r)]
N = 2  # the vmap batch size


def ids(cases: list[Case]) -> list[str]:
    return [c.id for c in cases]


def to_device(x: np.ndarray) -> Any:
    # a 0-d NumPy value through jnp.asarray comes out with shape (1,) (reported elsewhere)
    x = np.asarray(x)
    return lax.full((), x.item(), str(x.dtype)) if x.ndim == 0 else jnp.asarray(x)


def host_reference(case: Case, operands: list[np.ndarray]) -> np.ndarray:
    """The row's NumPy reference, floats computed in float64, cast to the output dtype."""
    wide = [
        x.astype(np.float64) if x.dtype.kind == "f" or x.dtype == np_dtype("bfloat16") else x
        for x in operands
    ]
    with np.errstate(all="ignore"):
        want = np.asarray(case.record.ref(*wide))
    return want.astype(np_dtype(case.record.out_dtype or case.dtype))


def assert_matches(got: Any, want: np.ndarray, tol: float, what: str) -> None:
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert str(got.dtype) == str(want.dtype), (what, got.dtype, want.dtype)
    g = np.asarray(got)
    if want.dtype.kind in "biu" or tol == 0.0:
        np.testing.assert_array_equal(g, want, err_msg=what)
    else:
        np.testing.assert_allclose(
            g.astype(np.float64),
            want.astype(np.float64),
            rtol=tol,
            atol=tol,
            equal_nan=True,
            err_msg=what,
        )


# ---- the table itself ----------------------------------------------------------------------------
def test_every_elementwise_primitive_and_reduction_has_a_row() -> None:
    prims = set(lax_internal.UNARY_PRIMS) | set(lax_internal.BINARY_PRIMS)
    prims |= set(lax_internal.REDUCTIONS)
    assert sorted(prims - {r.prim for r in RECORDS}) == []


def test_rows_cover_the_dtypes_lax_accepts() -> None:
    kinds = {**lax_internal.UNARY_PRIMS, **lax_internal.BINARY_PRIMS}
    for r in RECORDS:
        if r.prim in kinds:
            got = {np_dtype(d).kind if d != "bfloat16" else "f" for d in r.dtypes}
            assert got <= set(kinds[r.prim]), (r.name, got, kinds[r.prim])


# rows whose op is a composite of other primitives, with why
COMPOSITES = {
    # JAX binds round_p with rounding_method=AWAY_FROM_ZERO; webjax composes floor and select_n
    "round_half_away": "lax.round's default method is a composite",
}


@pytest.mark.parametrize("record", RECORDS, ids=[r.name for r in RECORDS])
def test_each_row_binds_its_primitive(record: OpRecord) -> None:
    if record.name in COMPOSITES:
        pytest.skip(COMPOSITES[record.name])
    case = Case(record, record.shapes[0], record.dtypes[0])
    jaxpr = webjax.make_jaxpr(record.op)(*map(to_device, case.operands()))
    assert record.prim in {e.primitive.name for e in jaxpr.jaxpr.eqns}, (record.name, jaxpr)


def test_differentiable_flags_match_the_rules() -> None:
    # zero derivatives, or none at all where JAX has none (differentiating raises, as in JAX)
    nondiff = {p.name for p in ad.nondifferentiable} | coverage.UNDIFFERENTIATED_IN_JAX
    for r in RECORDS:
        assert r.differentiable == (r.prim not in nondiff), r.name


# ---- values on every device, and jit against eager -----------------------------------------------
@pytest.mark.parametrize("case", VALUE_CASES, ids=ids(VALUE_CASES))
def test_value_matches_reference(device: Any, case: Case) -> None:
    operands = case.operands()
    got = case.record.op(*map(to_device, operands))
    tol = case.record.tol.get(case.dtype, 0.0)
    assert_matches(got, host_reference(case, operands), tol, case.id)


@pytest.mark.parametrize("case", JIT_CASES, ids=ids(JIT_CASES))
def test_jit_equals_eager(device: Any, case: Case) -> None:
    """Bit for bit, the second call from the cache too; on the GPU devices within the row's
    tolerance (their compilers fold constants: a scalar acosh on webgpu and a scalar pow on
    webgl came out one ulp from eager under jit)."""
    args = list(map(to_device, case.operands()))
    eager = np.asarray(case.record.op(*args))
    jitted = webjax.jit(case.record.op)
    tol = case.record.tol.get(case.dtype, 0.0) if device.platform in ("webgpu", "webgl") else 0.0
    for call in ("first call", "cached"):
        got = jitted(*args)
        assert_matches(got, eager, tol, f"{case.id} ({call})")


# ---- derivatives ---------------------------------------------------------------------------------
@pytest.mark.parametrize("case", GRAD_CASES, ids=ids(GRAD_CASES))
def test_check_grads(case: Case) -> None:
    check_grads(case.record.op, case.operands(), order=2)


LINEAR_CASES = [c for c in GRAD_CASES if c.record.linear]


@pytest.mark.parametrize("case", LINEAR_CASES, ids=ids(LINEAR_CASES))
def test_linear_transpose(case: Case) -> None:
    """<u, f(v)> == <f^T(u), v> for linear rows."""
    rng = np.random.RandomState(0)
    vs = [to_device(x) for x in case.operands()]
    out = case.record.op(*vs)
    u = to_device(rng.standard_normal(out.shape).astype(np.float32))
    cts = webjax.linear_transpose(case.record.op, *vs)(u)
    lhs = float(np.sum(np.asarray(u, np.float64) * np.asarray(out, np.float64)))
    rhs = sum(
        float(np.sum(np.asarray(c, np.float64) * np.asarray(v, np.float64)))
        for c, v in zip(cts, vs, strict=True)
    )
    assert abs(lhs - rhs) <= 1e-5 * max(1.0, abs(lhs)), (lhs, rhs)


# ---- vmap against a loop -------------------------------------------------------------------------
def _variant(x: np.ndarray, i: int) -> np.ndarray:
    if x.dtype == np.bool_:
        return x ^ bool(i % 2)
    if x.dtype.kind == "f":
        return (x * (1 + 0.25 * i)).astype(x.dtype)
    return (x + i).astype(x.dtype)


def _batched(x: np.ndarray, d: int | None) -> np.ndarray:
    """N variants of `x` stacked along axis `d` (None: `x` itself, unmapped)."""
    if d is None:
        return x
    return np.stack([_variant(x, i) for i in range(N)], axis=d if d >= 0 else x.ndim + 1 + d)


def dims_choices(operands: list[np.ndarray]) -> list[tuple[int | None, ...]]:
    """Every mix of batch positions 0, 1, -1 and None (1 where the rank allows it), at least one
    operand mapped."""
    per_arg = [[0, 1, -1, None] if x.ndim >= 1 else [0, -1, None] for x in operands]
    return [ds for ds in itertools.product(*per_arg) if any(d is not None for d in ds)]


def example(args: list[np.ndarray], dims: tuple[int | None, ...], i: int) -> list[Any]:
    """The operands of example `i` of a batch, on the device."""
    return [to_device(a if d is None else np.take(a, i, axis=d)) for a, d in zip(args, dims)]


@pytest.mark.parametrize("case", VMAP_CASES, ids=ids(VMAP_CASES))
def test_vmap_matches_loop(device: Any, case: Case) -> None:
    operands = case.operands()
    f = case.record.op
    for dims in dims_choices(operands):
        args = [_batched(x, d) for x, d in zip(operands, dims, strict=True)]
        want = np.stack([np.asarray(f(*example(args, dims, i))) for i in range(N)])
        got = webjax.vmap(f, in_axes=dims)(*map(to_device, args))
        what = f"{case.id} in_axes={dims}"
        assert got.shape == want.shape and str(got.dtype) == str(want.dtype), (what, got, want)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-6, err_msg=what)
        else:
            np.testing.assert_array_equal(np.asarray(got), want, err_msg=what)
