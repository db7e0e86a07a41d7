"""conv_general_dilated and friends against real JAX: values over a grid of strides, paddings,
dilations, groups and layouts; gradients of both operands; vmap; jit; every backend."""

from __future__ import annotations

import gc
import itertools

import pytest

import webjax
import webjax.numpy as jnp
from webjax._src.lax import convolution as C

np = pytest.importorskip("numpy")
jax = pytest.importorskip("jax")
jlax = jax.lax

RNG = np.random.default_rng(0)


def _rand(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def _close(got, want, tol=1e-4):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max()) if want.size else 1.0)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


LAYOUTS = [
    None,
    ("NHWC", "HWIO", "NHWC"),
    ("NCHW", "OIHW", "NHWC"),
    ("HWCN", "IOHW", "CNWH"),
]


def _operands(layout, n, c, h, w, o, i, kh, kw):
    """Random lhs/rhs in the given layout, built from canonical NCHW / OIHW."""
    lhs, rhs = _rand(n, c, h, w), _rand(o, i, kh, kw)
    if layout is None:
        return lhs, rhs
    lhs_s, rhs_s, _ = layout
    lhs = np.transpose(lhs, ["NCHW".index(ch) for ch in lhs_s])
    rhs = np.transpose(rhs, ["OIHW".index(ch) for ch in rhs_s])
    return lhs, rhs


# strides x padding x lhs dilation x rhs dilation; groups and layouts cycle along.
_PADDINGS = ["VALID", "SAME", ((1, 2), (0, 1)), ((-1, 1), (2, 0))]
_GROUPS = [(1, 1), (2, 1), (1, 2)]
GRID = []
for _k, (_s, _p, _ld, _rd) in enumerate(
    itertools.product([(1, 1), (2, 1)], _PADDINGS, [None, (2, 1)], [None, (1, 2)])
):
    if isinstance(_p, str) and _ld is not None:
        continue  # string padding with lhs dilation raises (tested below)
    GRID.append((_s, _p, _ld, _rd, _GROUPS[_k % 3], LAYOUTS[_k % 4]))


def _config(groups, layout):
    g, b = groups
    n, c, o = 2 * b, 2 * g, 2 * g * b
    return _operands(layout, n, c, 5, 6, o, 2, 3, 2)


@pytest.mark.parametrize("strides,padding,ldil,rdil,groups,layout", GRID)
def test_conv_values(strides, padding, ldil, rdil, groups, layout):
    lhs, rhs = _config(groups, layout)
    kw = {
        "window_strides": strides,
        "padding": padding,
        "lhs_dilation": ldil,
        "rhs_dilation": rdil,
        "dimension_numbers": layout,
        "feature_group_count": groups[0],
        "batch_group_count": groups[1],
    }
    got = C.conv_general_dilated(jnp.asarray(lhs), jnp.asarray(rhs), **kw)
    _close(got, jlax.conv_general_dilated(lhs, rhs, **kw))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("groups", _GROUPS)
def test_conv_layouts_and_groups(layout, groups):
    lhs, rhs = _config(groups, layout)
    kw = {
        "dimension_numbers": layout,
        "feature_group_count": groups[0],
        "batch_group_count": groups[1],
    }
    got = C.conv_general_dilated(jnp.asarray(lhs), jnp.asarray(rhs), (1, 2), "SAME", **kw)
    _close(got, jlax.conv_general_dilated(lhs, rhs, (1, 2), "SAME", **kw))


GRAD_GRID = GRID[::3] + [
    ((2, 2), ((1, 1), (1, 1)), (2, 2), (2, 1), (2, 1), LAYOUTS[1]),
    ((1, 3), ((0, 2), (3, 1)), None, (1, 2), (1, 2), LAYOUTS[3]),
]


@pytest.mark.parametrize("strides,padding,ldil,rdil,groups,layout", GRAD_GRID)
def test_conv_grads_vs_jax(strides, padding, ldil, rdil, groups, layout):
    lhs, rhs = _config(groups, layout)
    kw = {
        "window_strides": strides,
        "padding": padding,
        "lhs_dilation": ldil,
        "rhs_dilation": rdil,
        "dimension_numbers": layout,
        "feature_group_count": groups[0],
        "batch_group_count": groups[1],
    }
    out_shape = jlax.conv_general_dilated(lhs, rhs, **kw).shape
    ct = _rand(*out_shape)

    def ours(a, b):
        return (C.conv_general_dilated(a, b, **kw) * jnp.asarray(ct)).sum()

    def theirs(a, b):
        return (jlax.conv_general_dilated(a, b, **kw) * ct).sum()

    got = webjax.grad(ours, argnums=(0, 1))(jnp.asarray(lhs), jnp.asarray(rhs))
    want = jax.grad(theirs, argnums=(0, 1))(lhs, rhs)
    _close(got[0], want[0])
    _close(got[1], want[1])


def test_conv_jvp_is_bilinear():
    lhs, rhs = _rand(2, 3, 6, 5), _rand(4, 3, 2, 2)
    tl, tr = _rand(*lhs.shape), _rand(*rhs.shape)

    def f(a, b):
        return C.conv_general_dilated(a, b, (1, 2), ((1, 0), (0, 1)), rhs_dilation=(2, 1))

    def g(a, b):
        return jlax.conv_general_dilated(a, b, (1, 2), ((1, 0), (0, 1)), rhs_dilation=(2, 1))

    args = [jnp.asarray(v) for v in (lhs, rhs)]
    out, t = webjax.jvp(f, args, [jnp.asarray(tl), jnp.asarray(tr)])
    out2, t2 = jax.jvp(g, (lhs, rhs), (tl, tr))
    _close(out, out2)
    _close(t, t2)


@pytest.mark.parametrize("groups", _GROUPS)
@pytest.mark.parametrize("mapped", ["lhs", "rhs", "both"])
def test_conv_vmap_matches_loop(groups, mapped):
    layout = LAYOUTS[2]
    pairs = [_config(groups, layout) for _ in range(3)]
    lhs = np.stack([p[0] for p in pairs], axis=1)  # mapped axis in the middle
    rhs = np.stack([p[1] for p in pairs], axis=-1)
    kw = {
        "dimension_numbers": layout,
        "feature_group_count": groups[0],
        "batch_group_count": groups[1],
    }

    def f(a, b):
        return C.conv_general_dilated(a, b, (2, 1), ((1, 1), (0, 2)), rhs_dilation=(1, 2), **kw)

    in_axes = {"lhs": (1, None), "rhs": (None, 4), "both": (1, 4)}[mapped]
    a0 = lhs if in_axes[0] is not None else lhs[:, 0]
    b0 = rhs if in_axes[1] is not None else rhs[..., 0]
    got = webjax.vmap(f, in_axes=in_axes)(jnp.asarray(a0), jnp.asarray(b0))
    for k in range(3):
        a = a0[:, k] if in_axes[0] is not None else a0
        b = b0[..., k] if in_axes[1] is not None else b0
        want = jlax.conv_general_dilated(a, b, (2, 1), ((1, 1), (0, 2)), rhs_dilation=(1, 2), **kw)
        _close(got[k], want)


def test_conv_vmap_of_grad():
    lhs, rhs = _rand(3, 2, 2, 5, 5), _rand(3, 2, 3, 3)

    def loss(a, b):
        return (C.conv_general_dilated(a, b, (1, 1), "SAME") ** 2).sum()

    def jloss(a, b):
        return (jlax.conv_general_dilated(a, b, (1, 1), "SAME") ** 2).sum()

    got = webjax.vmap(webjax.grad(loss, argnums=(0, 1)), in_axes=(0, None))(
        jnp.asarray(lhs), jnp.asarray(rhs)
    )
    want = jax.vmap(jax.grad(jloss, argnums=(0, 1)), in_axes=(0, None))(lhs, rhs)
    _close(got[0], want[0])
    _close(got[1], want[1])


def test_conv_under_jit_and_jit_grad():
    lhs, rhs = _rand(2, 5, 5, 3), _rand(3, 3, 3, 4)
    dn = ("NHWC", "HWIO", "NHWC")

    def f(a, b):
        return jnp.tanh(C.conv_general_dilated(a, b, (2, 2), "SAME", dimension_numbers=dn)).sum()

    def g(a, b):
        return jax.numpy.tanh(
            jlax.conv_general_dilated(a, b, (2, 2), "SAME", dimension_numbers=dn)
        ).sum()

    a, b = jnp.asarray(lhs), jnp.asarray(rhs)
    _close(webjax.jit(f)(a, b), g(lhs, rhs))
    got = webjax.jit(webjax.grad(f, argnums=(0, 1)))(a, b)
    want = jax.grad(g, argnums=(0, 1))(lhs, rhs)
    _close(got[0], want[0])
    _close(got[1], want[1])


@pytest.mark.parametrize(
    "stride,padding,ldil,rdil,groups",
    [
        (1, "VALID", 1, 1, 1),
        (2, "SAME", 1, 2, 1),
        (3, ((2, -1),), 2, 1, 3),
        (1, "SAME_LOWER", 1, 3, 1),
        (2, ((0, 0),), 3, 2, 3),
    ],
)
def test_conv_1d(stride, padding, ldil, rdil, groups):
    lhs, rhs = _rand(2, 3, 11), _rand(6, 3 // groups, 3)
    kw = {
        "window_strides": (stride,),
        "padding": padding,
        "lhs_dilation": (ldil,),
        "rhs_dilation": (rdil,),
        "feature_group_count": groups,
    }
    got = C.conv_general_dilated(jnp.asarray(lhs), jnp.asarray(rhs), **kw)
    _close(got, jlax.conv_general_dilated(lhs, rhs, **kw))
    ours = webjax.grad(lambda a, b: (C.conv_general_dilated(a, b, **kw) ** 2).sum(), (0, 1))
    theirs = jax.grad(lambda a, b: (jlax.conv_general_dilated(a, b, **kw) ** 2).sum(), (0, 1))
    g1, g2 = ours(jnp.asarray(lhs), jnp.asarray(rhs)), theirs(lhs, rhs)
    _close(g1[0], g2[0])
    _close(g1[1], g2[1])


def test_conv_and_conv_with_general_padding():
    lhs, rhs = _rand(1, 2, 6, 7), _rand(3, 2, 2, 3)
    _close(
        C.conv(jnp.asarray(lhs), jnp.asarray(rhs), (1, 2), "SAME"),
        jlax.conv(lhs, rhs, (1, 2), "SAME"),
    )
    args = ((2, 1), ((1, 0), (2, 1)), (1, 2), (2, 1))
    _close(
        C.conv_with_general_padding(jnp.asarray(lhs), jnp.asarray(rhs), *args),
        jlax.conv_with_general_padding(lhs, rhs, *args),
    )


@pytest.mark.parametrize(
    "strides,padding,rdil,transpose_kernel,dn",
    [
        ((2, 2), "SAME", None, False, None),
        ((2, 1), "VALID", None, True, None),
        ((3, 2), "SAME", (2, 1), False, ("NCHW", "OIHW", "NCHW")),
        ((1, 2), ((1, 2), (0, 1)), None, True, ("NCHW", "IOHW", "NHWC")),
        ((2, 3), "VALID", (1, 2), False, None),
    ],
)
def test_conv_transpose(strides, padding, rdil, transpose_kernel, dn):
    layout = dn or ("NHWC", "HWIO", "NHWC")
    lhs, rhs = _operands(layout, 2, 3, 4, 5, 2, 3, 3, 2)
    if transpose_kernel:  # the kernel's O and I swap roles
        lhs, rhs = _operands(layout, 2, 2, 4, 5, 2, 3, 3, 2)
    kw = {"rhs_dilation": rdil, "dimension_numbers": dn, "transpose_kernel": transpose_kernel}
    got = C.conv_transpose(jnp.asarray(lhs), jnp.asarray(rhs), strides, padding, **kw)
    _close(got, jlax.conv_transpose(lhs, rhs, strides, padding, **kw))
    ours = webjax.grad(
        lambda a, b: (C.conv_transpose(a, b, strides, padding, **kw) ** 2).sum(), (0, 1)
    )
    theirs = jax.grad(
        lambda a, b: (jlax.conv_transpose(a, b, strides, padding, **kw) ** 2).sum(), (0, 1)
    )
    g1, g2 = ours(jnp.asarray(lhs), jnp.asarray(rhs)), theirs(lhs, rhs)
    _close(g1[0], g2[0])
    _close(g1[1], g2[1])


def test_conv_transpose_1d_default_layout():
    lhs, rhs = _rand(2, 5, 3), _rand(3, 3, 4)
    _close(
        C.conv_transpose(jnp.asarray(lhs), jnp.asarray(rhs), (2,), "SAME"),
        jlax.conv_transpose(lhs, rhs, (2,), "SAME"),
    )


@pytest.mark.parametrize(
    "dn",
    [
        None,
        ("NCHW", "OIHW", "NCHW"),
        ("NHWC", "HWIO", "NHWC"),
        ("NWHC", "WHIO", "CHWN"),
    ],
)
def test_conv_dimension_numbers_match_jax(dn):
    got = C.conv_dimension_numbers((1, 2, 3, 4), (5, 6, 7, 8), dn)
    want = jlax.conv_dimension_numbers((1, 2, 3, 4), (5, 6, 7, 8), dn)
    assert tuple(got) == tuple(tuple(s) for s in want)
    assert isinstance(got, C.ConvDimensionNumbers)
    assert C.conv_dimension_numbers((1, 2, 3, 4), (5, 6, 7, 8), got) is got


def test_integer_conv_and_preferred_element_type():
    lhs = RNG.integers(-3, 4, (1, 2, 5, 5)).astype("int32")
    rhs = RNG.integers(-3, 4, (2, 2, 2, 2)).astype("int32")
    got = C.conv_general_dilated(jnp.asarray(lhs), jnp.asarray(rhs), (1, 1), "SAME")
    want = jlax.conv_general_dilated(lhs, rhs, (1, 1), "SAME")
    assert got.dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    f32 = C.conv_general_dilated(
        jnp.asarray(lhs), jnp.asarray(rhs), (1, 1), "SAME", preferred_element_type=jnp.float32
    )
    assert f32.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(f32), np.asarray(want).astype("float32"))


def test_conv_errors():
    lhs, rhs = jnp.zeros((1, 4, 5, 5)), jnp.zeros((2, 3, 2, 2))
    with pytest.raises(ValueError):
        C.conv_general_dilated(lhs, rhs, (1, 1), "VALID")  # 4 features vs 3 in the kernel
    with pytest.raises(ValueError):
        C.conv_general_dilated(lhs, jnp.zeros((2, 4, 2, 2)), (1, 1), "SAME", lhs_dilation=(2, 2))
    with pytest.raises(ValueError):
        C.conv_general_dilated(lhs, jnp.zeros((2, 4, 2, 2)), (1, 1), "FULL")
    with pytest.raises(TypeError):
        C.conv_general_dilated(lhs, jnp.zeros((2, 4, 2)), (1, 1), "SAME")


def test_conv_jaxpr_names_the_primitive():
    lhs, rhs = jnp.zeros((1, 2, 4, 4)), jnp.zeros((3, 2, 2, 2))
    text = str(webjax.make_jaxpr(lambda a, b: C.conv(a, b, (1, 1), "VALID"))(lhs, rhs))
    assert "conv_general_dilated[" in text
    assert "feature_group_count=1" in text


@pytest.fixture
def gpu_safe(device):
    """Work around a webgpu host bug: a GPUBuffer finalized by the cycle collector together
    with its LazyBuffer gets returned to the buffer pool dead, and a later bind group built on
    it aborts the process. No cyclic GC during the test; afterwards collect, then drop the pool."""
    gc.disable()
    try:
        yield device
    finally:
        gc.enable()
        gc.collect()
        backend = device.backend
        for name in ("flush", "trim"):
            if hasattr(backend, name):
                getattr(backend, name)()


# ---- every backend ------------------------------------------------------------------------------
def test_conv_on_every_backend(gpu_safe):
    device = gpu_safe
    layout = ("NHWC", "HWIO", "NHWC")
    lhs, rhs = _operands(layout, 2, 4, 5, 6, 6, 2, 3, 2)
    kw = {
        "window_strides": (2, 1),
        "padding": ((1, 1), (0, 2)),
        "lhs_dilation": (1, 2),
        "rhs_dilation": (2, 1),
        "dimension_numbers": layout,
        "feature_group_count": 2,
    }
    a, b = jnp.asarray(lhs), jnp.asarray(rhs)
    got = C.conv_general_dilated(a, b, **kw)
    assert got.device == device
    _close(got, jlax.conv_general_dilated(lhs, rhs, **kw))
    g1 = webjax.grad(lambda a, b: (C.conv_general_dilated(a, b, **kw) ** 2).sum(), (0, 1))(a, b)
    g2 = jax.grad(lambda a, b: (jlax.conv_general_dilated(a, b, **kw) ** 2).sum(), (0, 1))(lhs, rhs)
    _close(g1[0], g2[0])
    _close(g1[1], g2[1])


@pytest.mark.parametrize("layout", [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC")])
def test_large_conv_im2col_path_matches_jax(device, layout):
    """Convolutions past IM2COL_MIN_FLOPS run as patches + matmul: values and gradients."""
    rjax = pytest.importorskip("jax")
    from webjax._src.lax import convolution

    rng = np.random.RandomState(3)
    lhs_shape = (2, 8, 20, 24) if layout[0] == "NCHW" else (2, 20, 24, 8)
    rhs_shape = (16, 8, 3, 3) if layout[1] == "OIHW" else (3, 3, 8, 16)
    x = rng.randn(*lhs_shape).astype(np.float32)
    w = rng.randn(*rhs_shape).astype(np.float32)
    flops = 2 * 16 * 20 * 24 * 8 * 9
    assert flops >= convolution.IM2COL_MIN_FLOPS

    def f(lax_mod, a, b):
        return lax_mod.conv_general_dilated(
            a, b, (1, 2), ((1, 1), (0, 2)), rhs_dilation=(1, 2), dimension_numbers=layout
        )

    got = f(webjax.lax, jnp.asarray(x), jnp.asarray(w))
    want = f(rjax.lax, x, w)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)
    g = webjax.grad(lambda a: (f(webjax.lax, a, jnp.asarray(w)) ** 2).sum())(jnp.asarray(x))
    rg = rjax.grad(lambda a: (f(rjax.lax, a, w) ** 2).sum())(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(rg), rtol=1e-3, atol=1e-3)


def test_im2col_block_computes_shared_producers_once():
    """A residual block under jit: the normalized activation feeding a 3x3 conv, a 1x1 conv
    and the residual add is computed by one kernel (not once per patch, per conv and per
    add), the 1x1 conv reads it in place (no patch copy) and the results match JAX."""
    from webjax._src import profiler

    rng = np.random.RandomState(5)
    x = rng.randn(1, 32, 32, 32).astype(np.float32)
    m = rng.randn(1, 32, 1, 1).astype(np.float32)
    v = rng.uniform(0.5, 2.0, (1, 32, 1, 1)).astype(np.float32)
    w3 = (rng.randn(32, 32, 3, 3) / 17).astype(np.float32)
    w1 = (rng.randn(32, 32, 1, 1) / 6).astype(np.float32)

    def block(lax_mod, xnp, x, m, v, w3, w1):
        h = xnp.maximum((x - m) * lax_mod.rsqrt(v + 1e-5), 0.0)
        pad = ((1, 1), (1, 1))
        y = lax_mod.conv_general_dilated(h, w3, (1, 1), pad)
        z = lax_mod.conv_general_dilated(h, w1, (1, 1), ((0, 0), (0, 0)))
        return y + z + h

    f = webjax.jit(lambda *a: block(webjax.lax, jnp, *a))
    args = [jnp.asarray(a) for a in (x, m, v, w3, w1)]
    f(*args).block_until_ready()
    profiler.start_trace(None)
    got = f(*args)
    got.block_until_ready()
    events = [e for e in profiler.stop_trace() if e.get("cat") == "kernel"]
    assert C.IM2COL_MIN_FLOPS <= 32 * 1024 * 32  # both convs take the im2col path
    assert sum("rsqrt" in e["args"]["expr"] for e in events) == 1
    sizes = sorted(e["args"]["size"] for e in events)
    assert sizes.count(32 * 1024) == 4  # h, the 3x3 conv's product, the 1x1's, the sum
    assert sizes.count(32 * 9 * 1024) == 1  # the 3x3 patches; the 1x1 reads h itself
    want = block(jax.lax, jax.numpy, x, m, v, w3, w1)
    _close(got, want)
