"""`jax.scipy.spatial.transform` (Rotation, Slerp) against real JAX: every construction and
conversion, derivatives, jit and vmap, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
import webjax.scipy.spatial.transform as wtr
from check_grads import check_grads
from jax_compare import close, raises_like

jax = pytest.importorskip("jax")
jjnp = jax.numpy
import jax.scipy.spatial.transform as jtr  # noqa: E402

R = np.random.RandomState(0)


def f32(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return R.uniform(lo, hi, shape).astype(np.float32)


SEQS = ["xyz", "ZYX", "zxz", "XYX", "yzy", "XZY"]


def test_rotation(device: Any) -> None:
    from scipy.spatial.transform import Rotation as SR

    q = R.standard_normal((6, 4)).astype(np.float32)
    wr, jr, sr = wtr.Rotation.from_quat(jnp.asarray(q)), jtr.Rotation.from_quat(q), SR.from_quat(q)
    close(wr.quat, jr.quat)
    for seq in SEQS:
        close(wr.as_euler(seq), jr.as_euler(seq), 2e-5, 2e-5)
        np.testing.assert_allclose(np.asarray(wr.as_euler(seq)), sr.as_euler(seq), 1e-4, 1e-4)
        ang = np.asarray(jr.as_euler(seq))
        close(
            wtr.Rotation.from_euler(seq, jnp.asarray(ang)).quat,
            jtr.Rotation.from_euler(seq, ang).quat,
            1e-5,
            1e-6,
        )
        deg = ang[:, :2] * 50
        close(
            wtr.Rotation.from_euler(seq[:2], jnp.asarray(deg), degrees=True).quat,
            jtr.Rotation.from_euler(seq[:2], deg, degrees=True).quat,
            1e-5,
            1e-6,
        )
    close(wr.as_matrix(), jr.as_matrix())
    np.testing.assert_allclose(np.asarray(wr.as_matrix()), sr.as_matrix(), 1e-5, 1e-6)
    m = np.asarray(jr.as_matrix())
    close(wtr.Rotation.from_matrix(jnp.asarray(m)).quat, jtr.Rotation.from_matrix(m).quat, 1e-5)
    for name in ("as_mrp", "as_rotvec", "magnitude"):
        close(getattr(wr, name)(), getattr(jr, name)(), 1e-5, 1e-6)
        np.testing.assert_allclose(np.asarray(getattr(wr, name)()), getattr(sr, name)(), 1e-5, 1e-6)
    close(wr.as_rotvec(degrees=True), jr.as_rotvec(degrees=True), 1e-5, 1e-4)
    rv, mrp = np.asarray(jr.as_rotvec()), np.asarray(jr.as_mrp())
    close(wtr.Rotation.from_rotvec(jnp.asarray(rv)).quat, jtr.Rotation.from_rotvec(rv).quat, 1e-5)
    tiny = np.array([[1e-4, 0.0, 0.0], [0.0, 0.0, 0.0]], np.float32)
    close(wtr.Rotation.from_rotvec(jnp.asarray(tiny)).quat, jtr.Rotation.from_rotvec(tiny).quat)
    close(wtr.Rotation.from_mrp(jnp.asarray(mrp)).quat, jtr.Rotation.from_mrp(mrp).quat, 1e-5)
    for kw in [{}, {"canonical": True}, {"scalar_first": True}]:
        close(wr.as_quat(**kw), jr.as_quat(**kw))
        np.testing.assert_allclose(
            np.abs(np.asarray(wr.as_quat(**kw))), np.abs(sr.as_quat(**kw)), 1e-6, 1e-6
        )
    close(wr.inv().quat, jr.inv().quat)
    close((wr * wr[::-1]).quat, (jr * jr[::-1]).quat, 1e-5, 1e-6)
    close((wr[0] * wr).quat, (jr[0] * jr).quat, 1e-5, 1e-6)
    v = f32(6, 3)
    for inverse in (False, True):
        close(wr.apply(jnp.asarray(v), inverse), jr.apply(v, inverse), 1e-5, 1e-6)
        np.testing.assert_allclose(
            np.asarray(wr.apply(jnp.asarray(v), inverse)), sr.apply(v, inverse), 1e-5, 1e-6
        )
    close(wr[2].apply(jnp.asarray(v)), jr[2].apply(v), 1e-5, 1e-6)
    w = np.arange(1.0, 7.0, dtype=np.float32)
    close(wr.mean(jnp.asarray(w)).as_matrix(), jr.mean(w).as_matrix(), 1e-5, 1e-5)
    close(wtr.Rotation.identity().quat, jtr.Rotation.identity().quat)
    close(wtr.Rotation.concatenate([wr, wr[:2]]).quat, jtr.Rotation.concatenate([jr, jr[:2]]).quat)
    assert len(wr) == 6 and wr[1:3].quat.shape == (2, 4) and wr[0].single


def test_rotation_grad_jit_vmap(device: Any) -> None:
    ang, v = f32(5, 3, lo=-3.0, hi=3.0), f32(3)

    def wf(a: Any) -> Any:
        return wtr.Rotation.from_euler("xyz", a).apply(jnp.asarray(v)).sum()

    def jf(a: Any) -> Any:
        return jtr.Rotation.from_euler("xyz", a).apply(v).sum()

    close(webjax.grad(wf)(jnp.asarray(ang[0])), jax.grad(jf)(ang[0]), 1e-5, 1e-6)
    check_grads(lambda a: wtr.Rotation.from_euler("ZXZ", a).as_rotvec(), (ang[0] * 0.5,))
    jitted = webjax.jit(lambda r: r.as_euler("zyx"))(wtr.Rotation.from_euler("xyz", ang))
    close(jitted, wtr.Rotation.from_euler("xyz", jnp.asarray(ang)).as_euler("zyx"), 1e-6, 1e-6)
    batched = webjax.vmap(lambda a: wtr.Rotation.from_euler("xyz", a).as_matrix())(jnp.asarray(ang))
    close(batched, wtr.Rotation.from_euler("xyz", jnp.asarray(ang)).as_matrix(), 1e-6, 1e-7)


def test_slerp(device: Any) -> None:
    from scipy.spatial.transform import Rotation as SR
    from scipy.spatial.transform import Slerp as SS

    q = R.standard_normal((5, 4)).astype(np.float32)
    times = np.array([0.0, 1.0, 2.5, 3.0, 5.0], np.float32)
    ws = wtr.Slerp.init(jnp.asarray(times), wtr.Rotation.from_quat(jnp.asarray(q)))
    js = jtr.Slerp.init(times, jtr.Rotation.from_quat(q))
    ss = SS(times, SR.from_quat(q))
    tq = np.array([0.0, 0.3, 1.0, 2.0, 2.7, 4.9, 5.0], np.float32)
    close(ws(jnp.asarray(tq)).quat, js(tq).quat, 1e-5, 1e-6)
    np.testing.assert_allclose(
        np.asarray(ws(jnp.asarray(tq)).as_matrix()), ss(tq).as_matrix(), 1e-5, 1e-5
    )
    close(ws(1.7).quat, js(1.7).quat, 1e-5, 1e-6)
    jitted = webjax.jit(lambda s, t: s(t).quat)(ws, jnp.asarray(tq))
    close(jitted, ws(jnp.asarray(tq)).quat, 1e-6, 1e-7)
    wr, jr = wtr.Rotation.from_quat(jnp.asarray(q)), jtr.Rotation.from_quat(q)
    for wf, jf in [
        (lambda: wtr.Slerp.init(jnp.asarray(times[:2]), wr), lambda: jtr.Slerp.init(times[:2], jr)),
        (lambda: wtr.Slerp.init(jnp.asarray(times), wr[0]), lambda: jtr.Slerp.init(times, jr[0])),
        (lambda: wtr.Slerp.init(jnp.asarray(times), q), lambda: jtr.Slerp.init(times, q)),
        (lambda: ws(jnp.ones((2, 2))), lambda: js(jjnp.ones((2, 2)))),
    ]:
        raises_like(wf, jf)


def test_rotation_errors() -> None:
    wr, jr = wtr.Rotation.from_quat(jnp.ones((3, 4))), jtr.Rotation.from_quat(jjnp.ones((3, 4)))
    for wf, jf in [
        (
            lambda: wtr.Rotation.from_euler("xxz", jnp.ones(3)),
            lambda: jtr.Rotation.from_euler("xxz", jjnp.ones(3)),
        ),
        (
            lambda: wtr.Rotation.from_euler("xYz", jnp.ones(3)),
            lambda: jtr.Rotation.from_euler("xYz", jjnp.ones(3)),
        ),
        (
            lambda: wtr.Rotation.from_euler("xyzx", jnp.ones(4)),
            lambda: jtr.Rotation.from_euler("xyzx", jjnp.ones(4)),
        ),
        (
            lambda: wtr.Rotation.from_euler("z", jnp.ones(2)),
            lambda: jtr.Rotation.from_euler("z", jjnp.ones(2)),
        ),
        (lambda: wr.as_euler("xy"), lambda: jr.as_euler("xy")),
        (lambda: wr.mean(jnp.ones(2)), lambda: jr.mean(jjnp.ones(2))),
        (lambda: wr.mean(jnp.ones((3, 1))), lambda: jr.mean(jjnp.ones((3, 1)))),
        (lambda: len(wr[0]), lambda: len(jr[0])),
        (lambda: wr[0][0], lambda: jr[0][0]),
        (lambda: wtr.Rotation.random(None), lambda: jtr.Rotation.random(None)),
    ]:
        raises_like(wf, jf)
