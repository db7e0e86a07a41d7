"""jax.experimental.sparse.BCOO against real JAX: every layout (n_batch, n_dense) through
fromdense/todense/update_layout/extract/reduce_sum/transpose/sum_duplicates, dot_general with
batch and contracting dimensions over batch and sparse axes (either operand sparse), matmul,
vmap over a BCOO's batch axis, jit, and grad w.r.t. data and the dense operand."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from check_grads import check_grads
from jax_compare import close
from webjax.experimental import sparse as ws

jax = pytest.importorskip("jax")
from jax.experimental import sparse as js  # noqa: E402

jj = jax.numpy
M = np.array([[0.0, 1.0, 0.0, 4.0], [2.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, -1.0]], np.float32)
X = np.arange(12.0, dtype=np.float32).reshape(4, 3) / 7
_rng = np.random.default_rng(0)
# (2, 3, 4, 2): a zero block here and there, so every layout stores some padding
A = (_rng.normal(size=(2, 3, 4, 2)) * (_rng.random((2, 3, 4, 1)) < 0.4)).astype(np.float32)
LAYOUTS = [(0, 0), (0, 2), (1, 0), (1, 1), (2, 1), (1, 2)]


@functools.cache
def jax_bcoo(n_batch, n_dense, nse=None):
    """JAX's BCOO of A (computed once: JAX compiles every primitive it runs eagerly)."""
    return js.BCOO.fromdense(A, n_batch=n_batch, n_dense=n_dense, nse=nse)


def same(s, j):
    """Same shape, layout, buffers' shapes and dense value as JAX's BCOO."""
    assert (s.shape, s.n_batch, s.n_sparse, s.n_dense, s.nse, repr(s)) == (
        j.shape,
        j.n_batch,
        j.n_sparse,
        j.n_dense,
        j.nse,
        repr(j),
    )
    assert (s.data.shape, s.indices.shape) == (j.data.shape, j.indices.shape)
    close(s.todense(), j.todense(), rtol=1e-6)


def raises_like(f_jax, f_webjax):
    with pytest.raises(Exception) as want:
        f_jax()
    with pytest.raises(Exception) as got:  # its type is compared by name below
        f_webjax()
    assert (type(got.value).__name__, str(got.value)) == (
        type(want.value).__name__,
        str(want.value),
    )


def test_fromdense_todense_like_jax(device):
    for nse in (None, 7):
        s, j = ws.BCOO.fromdense(jnp.asarray(M), nse=nse), js.BCOO.fromdense(M, nse=nse)
        assert (s.shape, s.nse, repr(s)) == (j.shape, j.nse, repr(j))
        close(s.data, j.data)
        np.testing.assert_array_equal(np.asarray(s.indices), np.asarray(j.indices))
        close(s.todense(), j.todense())
    close(ws.bcoo_todense(ws.bcoo_fromdense(jnp.asarray(M))), M)


def test_layouts_fromdense_and_update_layout(device):
    for nb, nd in LAYOUTS:
        s = ws.BCOO.fromdense(jnp.asarray(A), n_batch=nb, n_dense=nd, nse=None if nb else 11)
        j = jax_bcoo(nb, nd, None if nb else 11)
        same(s, j)
        np.testing.assert_array_equal(np.asarray(s.indices), np.asarray(j.indices))
        np.testing.assert_array_equal(np.asarray(s.data), np.asarray(j.data))
    # layout changes both ways: batch <-> sparse <-> dense
    moves = [
        ((1, 1), (0, 0)),
        ((1, 1), (2, 1)),
        ((1, 1), (0, 3)),
        ((0, 0), (1, 1)),
        ((0, 2), (2, 0)),
    ]
    for (nb0, nd0), (nb, nd) in moves:
        s = ws.bcoo_fromdense(jnp.asarray(A), n_batch=nb0, n_dense=nd0)
        j = jax_bcoo(nb0, nd0)
        kw = {"n_batch": nb, "n_dense": nd, "on_inefficient": None}
        same(ws.bcoo_update_layout(s, **kw), js.bcoo_update_layout(j, **kw))


def test_layout_errors():
    data = np.array([[1.0, 2, 3], [4, 5, 6]], np.float32)
    idx = np.array([[[0, 1], [2, 0], [0, 1]], [[1, 1], [3, 3], [0, 0]]], np.int32)
    for d, i, shape in [
        (data, idx, (3, 3, 3)),
        (data[:, :2], idx, (2, 3, 3)),
        (data, idx[..., :1], (2, 3, 3)),
        (data[None], idx, (2, 3, 3)),
    ]:
        raises_like(
            lambda d=d, i=i, shape=shape: js.BCOO((d, i), shape=shape),
            lambda d=d, i=i, shape=shape: ws.BCOO((jnp.asarray(d), jnp.asarray(i)), shape=shape),
        )
    s, j = (
        ws.BCOO((jnp.asarray(data), jnp.asarray(idx)), shape=(2, 3, 3)),
        js.BCOO((data, idx), shape=(2, 3, 3)),
    )
    for kw in ({"n_batch": 0, "n_dense": 2}, {"n_batch": 3, "n_dense": 1}, {"n_batch": 2}):
        raises_like(
            lambda kw=kw: js.bcoo_update_layout(j, **kw), lambda kw=kw: s.update_layout(**kw)
        )
    with pytest.warns(ws.SparseEfficiencyWarning):
        s.update_layout(n_dense=2, n_batch=0, on_inefficient="warn")


def test_transpose_reduce_sum_extract():
    for nb, nd in [(0, 0), (1, 1), (2, 1), (0, 2)]:
        s = ws.BCOO.fromdense(jnp.asarray(A), n_batch=nb, n_dense=nd)
        j = jax_bcoo(nb, nd)
        for p in [
            (0, 1, 2, 3),
            (1, 0, 2, 3),
            (0, 2, 1, 3),
            (0, 1, 3, 2),
            (3, 2, 1, 0),
            (2, 1, 0, 3),
        ]:
            try:
                want = js.bcoo_transpose(j, permutation=p)
            except NotImplementedError:
                raises_like(
                    lambda p=p, j=j: js.bcoo_transpose(j, permutation=p),
                    lambda p=p, s=s: ws.bcoo_transpose(s, permutation=p),
                )
                continue
            same(ws.bcoo_transpose(s, permutation=p), want)
        for axes in [(0,), (1,), (3,), (0, 2), (1, 3), (0, 1, 2, 3)]:
            same(ws.bcoo_reduce_sum(s, axes=axes), js.bcoo_reduce_sum(j, axes=axes))
        got, want = ws.bcoo_extract(s, jnp.asarray(A) + 1), js.bcoo_extract(j, A + 1)
        same(got, want)
        close(got.data, want.data)
    raises_like(
        lambda: js.bcoo_transpose(j, permutation=(0, 1, 2)),
        lambda: ws.bcoo_transpose(s, permutation=(0, 1, 2)),
    )


def test_sum_duplicates_and_extract_repeats():
    data = np.array([[1.0, 2, 3, 4, 5], [0, 1, 1, 0, 2]], np.float32)
    idx = np.array(
        [[[0, 1], [2, 0], [0, 1], [3, 3], [2, 0]], [[1, 1], [1, 1], [0, 0], [3, 0], [3, 3]]],
        np.int32,
    )
    s = ws.BCOO((jnp.asarray(data), jnp.asarray(idx)), shape=(2, 3, 3))
    j = js.BCOO((data, idx), shape=(2, 3, 3))
    for nse, remove_zeros in itertools.product((None, 2, 6), (False, True)):
        got = s.sum_duplicates(nse=nse, remove_zeros=remove_zeros)
        want = j.sum_duplicates(nse=nse, remove_zeros=remove_zeros)
        same(got, want)
        np.testing.assert_array_equal(np.asarray(got.indices), np.asarray(want.indices))
        close(got.data, want.data)
    same(ws.bcoo_sum_duplicates(s), js.bcoo_sum_duplicates(j))
    got = ws.bcoo_extract(s, jnp.ones((2, 3, 3)), assume_unique=False)
    close(got.data, js.bcoo_extract(j, np.ones((2, 3, 3)), assume_unique=False).data)


# (dense operand shape, dimension_numbers) for A's (2, 3, 4, 2)
DOTS = [
    ((2, 4, 5), (((2,), (1,)), ((0,), (0,)))),  # batch over batch, contract a sparse axis
    ((2, 4, 5), (((0, 2), (0, 1)), ((), ()))),  # contract a batch and a sparse axis
    ((3, 2, 4), (((1, 2), (0, 2)), ((0,), (1,)))),
    ((2, 3, 5), (((1,), (1,)), ((0,), (0,)))),
    ((2, 4, 5), (((2,), (1,)), ((), ()))),
    ((3, 2, 4), (((0, 1, 2), (1, 0, 2)), ((), ()))),
]


def _dense(shape, seed):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


@functools.cache
def jax_dot(nb, nd, case):
    """JAX's (sparse @ dense, dense @ sparse) for DOTS[case], or the error it raises."""
    shape, dn = DOTS[case]
    r, j = _dense(shape, case), jax_bcoo(nb, nd)
    rdn = ((dn[0][1], dn[0][0]), (dn[1][1], dn[1][0]))
    try:
        return js.bcoo_dot_general(j, r, dimension_numbers=dn), js.bcoo_dot_general(
            r, j, dimension_numbers=rdn
        )
    except NotImplementedError as e:
        return e


def test_dot_general_layouts(device):
    for nb, nd in [(0, 0), (1, 1), (2, 1), (0, 2)]:
        s = ws.BCOO.fromdense(jnp.asarray(A), n_batch=nb, n_dense=nd)
        for case, (shape, dn) in enumerate(DOTS):
            r = jnp.asarray(_dense(shape, case))
            want = jax_dot(nb, nd, case)
            if isinstance(want, Exception):
                with pytest.raises(NotImplementedError) as got:
                    ws.bcoo_dot_general(s, r, dimension_numbers=dn)
                assert str(got.value) == str(want)
                continue
            rdn = ((dn[0][1], dn[0][0]), (dn[1][1], dn[1][0]))
            close(ws.bcoo_dot_general(s, r, dimension_numbers=dn), want[0], rtol=1e-5, atol=1e-5)
            close(ws.bcoo_dot_general(r, s, dimension_numbers=rdn), want[1], rtol=1e-5, atol=1e-5)


def test_matmul_batched_and_scalar_multiply():
    a3 = A[..., 0]  # (2, 3, 4)
    xs = _rng.normal(size=(2, 4, 5)).astype(np.float32)
    ls = _rng.normal(size=(2, 5, 3)).astype(np.float32)
    for nb in (1, 2):
        s, j = ws.BCOO.fromdense(jnp.asarray(a3), n_batch=nb), js.BCOO.fromdense(a3, n_batch=nb)
        for r in (xs, xs[0], xs[0, :, 0]):
            close(s @ jnp.asarray(r), j @ jj.asarray(r), rtol=1e-5, atol=1e-6)
        for r in (ls, ls[0], ls[0, 0]):
            close(jnp.asarray(r) @ s, jj.asarray(r) @ j, rtol=1e-5, atol=1e-6)
        same(s * 2.5, j * 2.5)
        same(3.0 * s, 3.0 * j)
    s, j = ws.BCOO.fromdense(jnp.asarray(a3)), js.BCOO.fromdense(a3)
    raises_like(lambda: j @ jj.asarray(xs), lambda: s @ jnp.asarray(xs))


def test_products_transpose_sum(device):
    s, j = ws.BCOO.fromdense(jnp.asarray(M), nse=6), js.BCOO.fromdense(M, nse=6)
    close(s @ jnp.asarray(X), j @ X, rtol=1e-6)
    close(s @ jnp.asarray(X[:, 0]), j @ X[:, 0], rtol=1e-6)
    close(jnp.asarray(X.T) @ s.T, jj.asarray(X.T) @ j.T, rtol=1e-6)
    close(jnp.asarray(M[:, 0]) @ s, jj.asarray(M[:, 0]) @ j, rtol=1e-6)
    assert s.T.shape == j.T.shape and s.transpose((1, 0)).shape == (4, 3)
    close(s.T.todense(), j.T.todense())
    close(s.sum(), j.sum())
    for ax in (0, 1):
        close(s.sum(ax).todense(), j.sum(ax).todense())


def test_vmap_over_bcoo_batch_axis(device):
    a3 = A[..., 0]
    xs = _rng.normal(size=(2, 4, 5)).astype(np.float32)
    s, j = ws.BCOO.fromdense(jnp.asarray(a3), n_batch=1), js.BCOO.fromdense(a3, n_batch=1)

    def f(m, x):
        return m @ x

    close(webjax.vmap(f)(s, jnp.asarray(xs)), jax.vmap(f)(j, xs), rtol=1e-5, atol=1e-6)
    close(
        webjax.vmap(f, in_axes=(0, None))(s, jnp.asarray(xs[0])),
        jax.vmap(f, in_axes=(0, None))(j, xs[0]),
        rtol=1e-5,
        atol=1e-6,
    )

    def g(m):  # a BCOO out: the mapped axis becomes its batch axis again
        return (m * 2.0).T

    same(webjax.vmap(g)(s), jax.vmap(g)(j))
    same(
        webjax.vmap(lambda x: ws.BCOO.fromdense(x, nse=4))(jnp.asarray(a3)),
        jax.vmap(lambda x: js.BCOO.fromdense(x, nse=4))(a3),
    )
    raises_like(
        lambda: jax.vmap(f, in_axes=(1, None))(j, xs[0]),
        lambda: webjax.vmap(f, in_axes=(1, None))(s, jnp.asarray(xs[0])),
    )
    raises_like(lambda: jax.vmap(g, out_axes=1)(j), lambda: webjax.vmap(g, out_axes=1)(s))


def test_grad_jit_vmap():
    s = ws.BCOO.fromdense(jnp.asarray(M))
    j = js.BCOO.fromdense(M)

    def loss(mod, np_, idx, shape):
        return lambda d, x: np_.sum(np_.sin(mod.BCOO((d, idx), shape=shape) @ x))

    wl, jl = loss(ws, jnp, s.indices, s.shape), loss(js, jax.numpy, j.indices, j.shape)
    got = webjax.grad(wl, (0, 1))(s.data, jnp.asarray(X))
    want = jax.grad(jl, (0, 1))(j.data, X)
    for g, w in zip(got, want, strict=True):
        close(g, w, rtol=1e-5, atol=1e-6)
    check_grads(wl, [np.asarray(s.data), X])
    close(webjax.jit(lambda a, x: a @ x)(s, jnp.asarray(X)), j @ X, rtol=1e-6)
    xs = np.stack([X, 2 * X])
    close(webjax.vmap(lambda x: s @ x)(jnp.asarray(xs)), jax.vmap(lambda x: j @ x)(xs), rtol=1e-6)
    close(webjax.jit(lambda m: ws.BCOO.fromdense(m, nse=5).todense())(jnp.asarray(M)), M)


def test_grad_jit_batched_layout():
    s = ws.BCOO.fromdense(jnp.asarray(A), n_batch=1)
    j = jax_bcoo(1, 0)
    r = _rng.normal(size=(2, 4, 5)).astype(np.float32)
    dn = (((2,), (1,)), ((0,), (0,)))

    def loss(mod, np_, idx, shape):
        def f(d, x):
            m = mod.BCOO((d, idx), shape=shape)
            return np_.sum(np_.tanh(mod.bcoo_dot_general(m, x, dimension_numbers=dn)))

        return f

    wl, jl = loss(ws, jnp, s.indices, s.shape), loss(js, jj, j.indices, j.shape)
    got = webjax.jit(webjax.grad(wl, (0, 1)))(s.data, jnp.asarray(r))
    want = jax.grad(jl, (0, 1))(j.data, r)
    for g, w in zip(got, want, strict=True):
        close(g, w, rtol=1e-5, atol=1e-6)

    # through todense, reduce_sum and update_layout
    def chain(mod, idx, shape):
        def f(d):
            m = mod.BCOO((d, idx), shape=shape)
            m = mod.bcoo_update_layout(m, n_batch=0, n_dense=0)
            return (mod.bcoo_reduce_sum(m, axes=(1,)).todense() ** 2).sum()

        return f

    got = webjax.grad(chain(ws, s.indices, s.shape))(s.data)
    close(got, jax.grad(chain(js, j.indices, j.shape))(j.data), rtol=1e-5, atol=1e-6)


def _sparsified(mod, np_, m, d):
    """The same dense-array programs through mod.sparsify: results and raised messages."""

    def run(f, *args):
        try:
            return mod.sparsify(f)(*args)
        except NotImplementedError as e:
            return str(e)

    return {
        "matvec": run(lambda m, v: 2 * m @ v, m, d[0]),
        "vecmat": run(lambda m, x: x @ m.T, m, d[1]),
        "unary": run(lambda m: np_.sin(m) * 2 - np_.tanh(m), m),
        "sum0": run(lambda m: m.sum(0), m),
        "sum": run(lambda m: m.sum(), m),
        "add_dense": run(lambda m, x: m + x, m, d),
        "add_sparse": run(lambda m: m + m / 2.0, m),
        "mul_dense": run(lambda m, x: m * x, m, d),
        "pow": run(lambda m: m**3, m),
        "cos": run(np_.cos, m),
        "sub_dense": run(lambda m, x: m - x, m, d),
        "sparse_div": run(lambda m, x: x / m, m, d),
    }


def test_sparsify_like_jax(device):
    d = _rng.normal(size=(3, 4)).astype(np.float32)
    got = _sparsified(ws, jnp, ws.BCOO.fromdense(jnp.asarray(M)), jnp.asarray(d))
    want = _sparsified(js, jj, js.BCOO.fromdense(M), jj.asarray(d))
    for k, w in want.items():
        if isinstance(w, str):
            assert got[k] == w, k
        elif isinstance(w, js.BCOO):
            same(got[k], w)
        else:
            assert not isinstance(got[k], ws.BCOO), k
            close(got[k], w, rtol=1e-5, atol=1e-6)


def test_sparsify_batched_jit_grad():
    a = np.stack([M, 2 * M])
    x = np.arange(8.0, dtype=np.float32).reshape(2, 4, 1) / 3
    s, j = ws.BCOO.fromdense(jnp.asarray(a), n_batch=1), js.BCOO.fromdense(a, n_batch=1)

    def loss(mod, np_, idx, shape):
        prog = mod.sparsify(lambda m, x: np_.tanh(np_.sin(m) @ x).sum())
        return lambda d, x: prog(mod.BCOO((d, idx), shape=shape), x)

    wl, jl = loss(ws, jnp, s.indices, s.shape), loss(js, jj, j.indices, j.shape)
    close(webjax.jit(wl)(s.data, jnp.asarray(x)), jl(j.data, x), rtol=1e-5)
    got = webjax.grad(wl, (0, 1))(s.data, jnp.asarray(x))
    for g, w in zip(got, jax.grad(jl, (0, 1))(j.data, x), strict=True):
        close(g, w, rtol=1e-5, atol=1e-6)
    close(ws.todense(s), js.todense(j))
    close(ws.bcoo_multiply_dense(s, jnp.asarray(a)), js.bcoo_multiply_dense(j, a))


def test_arithmetic_methods_like_jax():
    d = _rng.normal(size=(3, 4)).astype(np.float32)

    def run(m, x):
        out = {
            "mul": m * x,
            "rmul": x * m,
            "scalar": 2 * m,
            "add": m + m,  # two arguments: two index buffers, concatenated as JAX
            "add_dense": m + x,
            "radd_dense": x + m,
            "sub": m - m,
            "div": m / 2,
            "abs": abs(m),
            "neg": -m,
            "pos": +m,
            "astype": m.astype(np.int32),
        }
        for k, f in {"sub_dense": lambda: m - x, "rdiv": lambda: x / m}.items():
            with pytest.raises(NotImplementedError) as e:
                f()
            out[k] = str(e.value)
        return out

    got = run(ws.BCOO.fromdense(jnp.asarray(M)), jnp.asarray(d))
    want = run(js.BCOO.fromdense(M), jj.asarray(d))
    for k, w in want.items():
        if isinstance(w, str):
            assert got[k] == w, k
        elif isinstance(w, js.BCOO):
            same(got[k], w)
            assert got[k].dtype == w.dtype
        else:
            close(got[k], w, rtol=1e-6)


def test_eye_empty_sort_indices():
    for n, m, k in [(3, 3, 0), (3, 5, 1), (4, 3, -2), (3, 4, 5), (5, 3, 2)]:
        for nb, nd in [(0, 0), (1, 0), (0, 1), (2, 0)]:
            same(ws.eye(n, m, k, n_batch=nb, n_dense=nd), js.eye(n, m, k, n_batch=nb, n_dense=nd))
    got, want = (
        ws.eye(3, dtype=np.int32, index_dtype=np.int16),
        js.eye(3, dtype=np.int32, index_dtype=np.int16),
    )
    same(got, want)
    assert (got.dtype, got.indices.dtype) == (want.dtype, want.indices.dtype)
    for shape, kw in [((3, 4), {}), ((2, 3, 4), {"n_batch": 1, "nse": 2})]:
        same(ws.empty(shape, **kw), js.empty(shape, **kw))
    raises_like(
        lambda: js.empty((2,), sparse_format="xx"), lambda: ws.empty((2,), sparse_format="xx")
    )
    raises_like(lambda: js.eye(2, n_batch=3), lambda: ws.eye(2, n_batch=3))
    data = np.array([[1.0, 2, 3, 4, 5], [0, 1, 1, 0, 2]], np.float32)
    idx = np.array(
        [[[0, 1], [2, 0], [0, 1], [3, 3], [2, 0]], [[1, 1], [1, 1], [0, 0], [3, 0], [0, 2]]],
        np.int32,
    )
    got = ws.BCOO((jnp.asarray(data), jnp.asarray(idx)), shape=(2, 3, 3)).sort_indices()
    want = js.BCOO((data, idx), shape=(2, 3, 3)).sort_indices()
    np.testing.assert_array_equal(np.asarray(got.indices), np.asarray(want.indices))
    np.testing.assert_array_equal(np.asarray(got.data), np.asarray(want.data))
    assert got.indices_sorted and ws.bcoo_sort_indices(got).indices_sorted


def _sparse_ad(mod, np_, m, x):
    def f(m, x):
        return np_.sin(m @ x).sum()

    return {
        "grad": mod.grad(f)(m, x),
        "grad01": mod.grad(f, (1, 0))(m, x),  # gradients in argument order, as JAX
        "grad_dense": mod.grad(f, 1)(m, x),
        "value_and_grad": mod.value_and_grad(f)(m, x),
        "aux": mod.grad(lambda m, x: (f(m, x), m @ x), has_aux=True)(m, x),
        "jacfwd": mod.jacfwd(lambda m, x: np_.sin(m @ x))(m, x),
        "jacrev": mod.jacrev(lambda m, x: np_.sin(m @ x))(m, x),
        "tree": mod.grad(lambda t: f(t["m"], t["x"]))({"m": m, "x": x}),
    }


def test_sparse_grad_value_and_grad_jacobians():
    a = np.stack([M, -M])
    x = np.arange(4.0, dtype=np.float32) / 3
    for n_batch in (0, 1):
        mat = a if n_batch else M
        got = _sparse_ad(
            ws, jnp, ws.BCOO.fromdense(jnp.asarray(mat), n_batch=n_batch), jnp.asarray(x)
        )
        want = _sparse_ad(js, jj, js.BCOO.fromdense(mat, n_batch=n_batch), x)
        for k, w in want.items():
            gl, gt = webjax.tree_util.tree_flatten(got[k], is_leaf=lambda v: isinstance(v, ws.BCOO))
            wl, wt = jax.tree_util.tree_flatten(w, is_leaf=lambda v: isinstance(v, js.BCOO))
            assert gt.num_leaves == wt.num_leaves, k
            for g, v in zip(gl, wl, strict=True):
                if isinstance(v, js.BCOO):
                    same(g, v)
                else:
                    close(g, v, rtol=1e-5, atol=1e-6)


def test_concatenate_squeeze():
    b = (_rng.normal(size=(2, 3, 4)) * (_rng.random((2, 3, 4)) < 0.3)).astype(np.float32)
    a = A[..., 0]
    for nb, nd in [(0, 0), (1, 1), (0, 1)]:
        sa, sb = (ws.BCOO.fromdense(jnp.asarray(x), n_batch=nb, n_dense=nd) for x in (a, b))
        ja, jb = (js.BCOO.fromdense(x, n_batch=nb, n_dense=nd) for x in (a, b))
        for d in range(3):
            try:
                want = js.bcoo_concatenate([ja, jb], dimension=d)
            except NotImplementedError:
                raises_like(
                    lambda d=d, ja=ja, jb=jb: js.bcoo_concatenate([ja, jb], dimension=d),
                    lambda d=d, sa=sa, sb=sb: ws.bcoo_concatenate([sa, sb], dimension=d),
                )
                continue
            same(ws.bcoo_concatenate([sa, sb], dimension=d), want)
    # an unbatched x[:1] next to a batched array: aligned to n_batch=1, as JAX
    same(
        ws.bcoo_concatenate(
            [ws.BCOO.fromdense(jnp.asarray(a[:1])), ws.BCOO.fromdense(jnp.asarray(b), n_batch=1)],
            dimension=0,
        ),
        js.bcoo_concatenate(
            [js.BCOO.fromdense(a[:1]), js.BCOO.fromdense(b, n_batch=1)], dimension=0
        ),
    )
    for x, kw, dims in [
        (a[:1], {"n_batch": 1, "n_dense": 1}, (0,)),
        (a[:, :1, :1], {}, (1, -1)),
        (a[..., :1], {"n_dense": 1}, (2,)),
    ]:
        same(
            ws.bcoo_squeeze(ws.BCOO.fromdense(jnp.asarray(x), **kw), dimensions=dims),
            js.bcoo_squeeze(js.BCOO.fromdense(x, **kw), dimensions=dims),
        )
    raises_like(
        lambda: js.bcoo_squeeze(js.BCOO.fromdense(a), dimensions=(1,)),
        lambda: ws.bcoo_squeeze(ws.BCOO.fromdense(jnp.asarray(a)), dimensions=(1,)),
    )
    got = ws.sparsify(lambda x, y: jnp.concatenate([x, y], axis=1))(
        ws.BCOO.fromdense(jnp.asarray(a)), ws.BCOO.fromdense(jnp.asarray(b))
    )
    same(
        got,
        js.sparsify(lambda x, y: jj.concatenate([x, y], axis=1))(
            js.BCOO.fromdense(a), js.BCOO.fromdense(b)
        ),
    )


def test_broadcast_in_dim_and_size1_reshapes():
    a = A[:, :1, :, 0]  # (2, 1, 4)
    cases = [((3, 2, 1, 4), (1, 2, 3)), ((2, 1, 4, 5), (0, 1, 2)), ((2, 1, 1, 4), (0, 1, 3))]
    cases += [((2, 3, 4), (0, 1, 2)), ((2, 4, 1), (0, 2, 1))]
    for nb, nd in [(0, 0), (1, 1), (0, 1)]:
        s, j = (
            ws.BCOO.fromdense(jnp.asarray(a), n_batch=nb, n_dense=nd),
            js.BCOO.fromdense(a, n_batch=nb, n_dense=nd),
        )
        for shape, dims in cases:
            kw = {"shape": shape, "broadcast_dimensions": dims}
            try:
                want = js.bcoo_broadcast_in_dim(j, **kw)
            except (ValueError, NotImplementedError):
                raises_like(
                    lambda kw=kw, j=j: js.bcoo_broadcast_in_dim(j, **kw),
                    lambda kw=kw, s=s: ws.bcoo_broadcast_in_dim(s, **kw),
                )
                continue
            same(ws.bcoo_broadcast_in_dim(s, **kw), want)
    s, j = ws.BCOO.fromdense(jnp.asarray(a)), js.BCOO.fromdense(a)
    same(ws.sparsify(lambda m: m[None, :, None])(s), js.sparsify(lambda m: m[None, :, None])(j))
    same(ws.sparsify(lambda m: jnp.squeeze(m, 1))(s), js.sparsify(lambda m: jj.squeeze(m, 1))(j))
    with pytest.raises(NotImplementedError, match="only size-1 axes"):
        ws.sparsify(lambda m: m.reshape(8))(s)


def test_multiply_sparse():
    b = (_rng.normal(size=(2, 3, 4)) * (_rng.random((2, 3, 4)) < 0.5)).astype(np.float32)
    a = A[..., 0]
    pairs = [
        ((0, 0), (0, 0)),
        ((1, 0), (0, 0)),
        ((2, 0), (1, 0)),
        ((1, 1), (1, 1)),
        ((0, 1), (0, 0)),
    ]
    for (nb1, nd1), (nb2, nd2) in pairs:
        s1, s2 = (
            ws.BCOO.fromdense(jnp.asarray(a), n_batch=nb1, n_dense=nd1),
            ws.BCOO.fromdense(jnp.asarray(b), n_batch=nb2, n_dense=nd2),
        )
        j1, j2 = (
            js.BCOO.fromdense(a, n_batch=nb1, n_dense=nd1),
            js.BCOO.fromdense(b, n_batch=nb2, n_dense=nd2),
        )
        if nd1 != nd2:
            raises_like(
                lambda j1=j1, j2=j2: js.bcoo_multiply_sparse(j1, j2),
                lambda s1=s1, s2=s2: ws.bcoo_multiply_sparse(s1, s2),
            )
            continue
        got, want = ws.bcoo_multiply_sparse(s1, s2), js.bcoo_multiply_sparse(j1, j2)
        same(got, want)
        np.testing.assert_array_equal(np.asarray(got.indices), np.asarray(want.indices))
        close(got.data, want.data)
    # a size-1 sparse axis broadcasts against the other's; two arguments through `*`
    s1, j1 = ws.BCOO.fromdense(jnp.asarray(a[:, :1])), js.BCOO.fromdense(a[:, :1])
    s2, j2 = ws.BCOO.fromdense(jnp.asarray(b)), js.BCOO.fromdense(b)
    same(ws.bcoo_multiply_sparse(s1, s2), js.bcoo_multiply_sparse(j1, j2))
    same(s2 * s2.T.T, j2 * j2.T.T)
    raises_like(
        lambda: js.bcoo_multiply_sparse(j1, js.BCOO.fromdense(b[0])),
        lambda: ws.bcoo_multiply_sparse(s1, ws.BCOO.fromdense(jnp.asarray(b[0]))),
    )


def test_sparse_dot_sparse():
    a = A[..., 0]  # (2, 3, 4)
    b = (_rng.normal(size=(2, 4, 5)) * (_rng.random((2, 4, 5)) < 0.5)).astype(np.float32)
    dns = [(((2,), (1,)), ((0,), (0,))), (((1,), (0,)), ((), ())), (((2,), (1,)), ((), ()))]
    for nb1, nb2 in [(0, 0), (1, 1), (1, 0), (0, 1)]:
        s1, s2 = (
            ws.BCOO.fromdense(jnp.asarray(a), n_batch=nb1),
            ws.BCOO.fromdense(jnp.asarray(b), n_batch=nb2),
        )
        j1, j2 = js.BCOO.fromdense(a, n_batch=nb1), js.BCOO.fromdense(b, n_batch=nb2)
        for dn in dns:
            try:
                want = js.bcoo_dot_general(j1, j2, dimension_numbers=dn)
            except (TypeError, ValueError, NotImplementedError):
                raises_like(
                    lambda dn=dn, j1=j1, j2=j2: js.bcoo_dot_general(j1, j2, dimension_numbers=dn),
                    lambda dn=dn, s1=s1, s2=s2: ws.bcoo_dot_general(s1, s2, dimension_numbers=dn),
                )
                continue
            got = ws.bcoo_dot_general(s1, s2, dimension_numbers=dn)
            assert isinstance(got, ws.BCOO)
            same(got, want)
    m1, m2 = ws.BCOO.fromdense(jnp.asarray(a[0])), ws.BCOO.fromdense(jnp.asarray(b[0]))
    n1, n2 = js.BCOO.fromdense(a[0]), js.BCOO.fromdense(b[0])
    same(m1 @ m2, n1 @ n2)
    same(ws.sparsify(lambda x, y: x @ y)(m1, m2), js.sparsify(lambda x, y: x @ y)(n1, n2))
