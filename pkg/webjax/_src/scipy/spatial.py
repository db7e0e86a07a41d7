"""`jax.scipy.spatial.transform`: `Rotation` (unit quaternions, scalar last, any leading batch
shape) and `Slerp` (spherical linear interpolation between key rotations), with JAX's
formulas: every conversion works on the quaternion's last axis elementwise, so batches need no
`vmap`, and `jit`, `grad` and `vmap` apply. `Rotation.mean` takes the eigenvector of the
largest eigenvalue of sum(w q q^T) (`eigh`: its sign may differ from LAPACK's, which is the
same rotation).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from .. import numpy as jnp
from ..numpy import util
from ..tree_util import register_pytree_node


def _part(q: Any, i: int) -> Any:
    return q[..., i]


def _norm(v: Any) -> Any:
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _stack(parts: Sequence[Any]) -> Any:
    return jnp.stack(jnp.broadcast_arrays(*parts), axis=-1)


def _normalize(q: Any) -> Any:
    return q / _norm(q)[..., None]


def _compose(p: Any, q: Any) -> Any:
    """The quaternion product p q (scalar last): the rotation q followed by p."""
    p0, p1, p2, p3 = (_part(p, i) for i in range(4))
    q0, q1, q2, q3 = (_part(q, i) for i in range(4))
    c0, c1, c2 = p1 * q2 - p2 * q1, p2 * q0 - p0 * q2, p0 * q1 - p1 * q0  # p[:3] x q[:3]
    return _stack(
        [
            p3 * q0 + q3 * p0 + c0,
            p3 * q1 + q3 * p1 + c1,
            p3 * q2 + q3 * p2 + c2,
            p3 * q3 - p0 * q0 - p1 * q1 - p2 * q2,
        ]
    )


def _elementary(axis: int, angle: Any) -> Any:
    """The rotation by `angle` about basis axis `axis`."""
    zero = jnp.zeros_like(angle)
    parts = [zero, zero, zero, jnp.cos(angle / 2.0)]
    parts[axis] = jnp.sin(angle / 2.0)
    return _stack(parts)


_AXIS = {"x": 0, "y": 1, "z": 2}


def _axes(seq: str) -> list[int]:
    out = []
    for a in seq.lower():
        if a not in _AXIS:
            raise ValueError(f"Expected axis to be from ['x', 'y', 'z'], got {a}")
        out.append(_AXIS[a])
    return out


def _check_seq(seq: str) -> tuple[bool, bool]:
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(
            f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq}"
        )
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return intrinsic, extrinsic


def _inexact(x: Any) -> Any:
    (x,) = util.promote_dtypes_inexact(util.ensure_array(x))
    return x


class Rotation(NamedTuple):
    """Rotations in 3 dimensions as unit quaternions `quat` (x, y, z, w), one per leading
    index (scipy.spatial.transform.Rotation, as JAX)."""

    quat: Any

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        """Concatenate a sequence of `Rotation` objects."""
        return cls(jnp.concatenate([r.quat for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> Rotation:
        """From Euler angles about the axes of `seq`: 'xyz' extrinsic (fixed axes), 'XYZ'
        intrinsic (rotating axes); one to three axes, consecutive ones different."""
        if len(seq) < 1 or len(seq) > 3:
            raise ValueError(
                "Expected axis specification to be a non-empty string of upto 3 characters, "
                f"got {seq}"
            )
        intrinsic, _ = _check_seq(seq)
        axes = _axes(seq)
        angles = jnp.atleast_1d(_inexact(angles))
        if angles.shape[-1] != len(axes):
            raise ValueError(
                f"inconsistent size for core dimension 'm': {len(axes)} vs {angles.shape[-1]} "
                "on vectorized function with excluded=frozenset() and "
                "signature='(m),(m),(),()->(n)'"
            )
        if degrees:
            angles = jnp.deg2rad(angles)
        result = _elementary(axes[0], angles[..., 0])
        for n in range(1, len(axes)):
            q = _elementary(axes[n], angles[..., n])
            result = _compose(result, q) if intrinsic else _compose(q, result)
        return cls(result)

    @classmethod
    def from_matrix(cls, matrix: Any) -> Rotation:
        """From rotation matrices (..., 3, 3)."""
        m = _inexact(matrix)

        def e(i: int, j: int) -> Any:
            return m[..., i, j]

        trace = e(0, 0) + e(1, 1) + e(2, 2)
        choice = jnp.argmax(_stack([e(0, 0), e(1, 1), e(2, 2), trace]), axis=-1)
        # the largest of 4 w^2, 4 x^2, 4 y^2, 4 z^2 (up to a common term) gives the stable form
        candidates = []
        for i in range(3):
            j, k = (i + 1) % 3, (i + 2) % 3
            parts = [None, None, None, e(k, j) - e(j, k)]
            parts[i] = 1 - trace + 2 * e(i, i)
            parts[j] = e(j, i) + e(i, j)
            parts[k] = e(k, i) + e(i, k)
            candidates.append(_stack(parts))
        candidates.append(
            _stack([e(2, 1) - e(1, 2), e(0, 2) - e(2, 0), e(1, 0) - e(0, 1), 1 + trace])
        )
        quat = candidates[3]
        for i in range(3):
            quat = jnp.where((choice == i)[..., None], candidates[i], quat)
        return cls(_normalize(quat))

    @classmethod
    def from_mrp(cls, mrp: Any) -> Rotation:
        """From Modified Rodrigues Parameters (..., 3)."""
        p = _inexact(mrp)
        s = jnp.sum(p * p, axis=-1) + 1
        q = jnp.concatenate([2 * p, (2 - s)[..., None]], axis=-1)
        return cls(q / s[..., None])

    @classmethod
    def from_quat(cls, quat: Any) -> Rotation:
        """From quaternions (..., 4), scalar last; normalized."""
        return cls(_normalize(_inexact(quat)))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> Rotation:
        """From rotation vectors (..., 3): axis times angle."""
        v = _inexact(rotvec)
        if degrees:
            v = jnp.deg2rad(v)
        angle = _norm(v)
        a2 = angle * angle
        small = 0.5 - a2 / 48 + a2 * a2 / 3840  # sin(a / 2) / a by its series near 0
        scale = jnp.where(angle <= 1e-3, small, jnp.sin(angle / 2) / angle)
        return cls(jnp.concatenate([scale[..., None] * v, jnp.cos(angle / 2)[..., None]], -1))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation (`num` must be None, as in JAX)."""
        assert num is None
        return cls(jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> Rotation:
        """Not implemented (as in JAX)."""
        raise NotImplementedError()

    def __getitem__(self, indexer: Any) -> Rotation:  # type: ignore[override]
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        if self.single:
            raise TypeError("Single rotation has no len().")
        return int(self.quat.shape[0])

    def __mul__(self, other: Any) -> Rotation:  # type: ignore[override]
        """The composition: `other` first, then `self`."""
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors: Any, inverse: bool = False) -> Any:
        """Rotate vectors (..., 3) (by the inverse rotation with `inverse=True`)."""
        m = self.as_matrix()
        mt = jnp.swapaxes(m, -1, -2)
        m = (mt if inverse else m) if isinstance(inverse, bool) else jnp.where(inverse, mt, m)
        v = _inexact(vectors)
        return jnp.matmul(m, v[..., None])[..., 0]

    def as_euler(self, seq: str, degrees: bool = False) -> Any:
        """Euler angles (..., 3) for the three axes of `seq` (see `from_euler`), each in
        [-pi, pi); the middle one in [0, pi] (symmetric sequences) or [-pi/2, pi/2]."""
        if len(seq) != 3:
            raise ValueError(f"Expected 3 axes, got {seq}.")
        _, extrinsic = _check_seq(seq)
        axes = _axes(seq)
        q = self.quat
        first, third = (0, 2) if extrinsic else (2, 0)
        i, j, k = axes if extrinsic else axes[::-1]
        symmetric = i == k
        if symmetric:
            k = 3 - i - j
        sign = float((i - j) * (j - k) * (k - i) // 2)
        qi, qj, qk, qw = _part(q, i), _part(q, j), _part(q, k), _part(q, 3)
        if symmetric:
            a, b, c, d = qw, qi, qj, qk * sign
        else:
            a, b, c, d = qw - qj, qi + qk * sign, qj + qw, qk * sign - qi
        middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
        eps = 1e-7
        case = jnp.where(jnp.abs(middle - math.pi) <= eps, 2, 0)
        case = jnp.where(jnp.abs(middle) <= eps, 1, case)  # gimbal lock: one angle is free
        half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
        out = [jnp.zeros_like(middle), middle, jnp.zeros_like(middle)]
        out[0] = jnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1.0 if extrinsic else 1.0))
        regular = case == 0
        out[first] = jnp.where(regular, half_sum - half_diff, out[first])
        out[third] = jnp.where(regular, half_sum + half_diff, out[third])
        if not symmetric:
            out[third] = out[third] * sign
            out[1] = out[1] - math.pi / 2
        angles = jnp.remainder(_stack(out) + math.pi, 2 * math.pi) - math.pi
        return jnp.rad2deg(angles) if degrees else angles

    def as_matrix(self) -> Any:
        """Rotation matrices (..., 3, 3)."""
        x, y, z, w = (_part(self.quat, i) for i in range(4))
        x2, y2, z2, w2 = x * x, y * y, z * z, w * w
        xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
        rows = [
            _stack([x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)]),
            _stack([2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)]),
            _stack([2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]),
        ]
        return jnp.stack(rows, axis=-2)

    def as_mrp(self) -> Any:
        """Modified Rodrigues Parameters (..., 3) (the representation with norm <= 1)."""
        w = _part(self.quat, 3)
        sign = jnp.where(w < 0, -1.0, 1.0)
        return sign[..., None] * self.quat[..., :3] / (1.0 + sign * w)[..., None]

    def as_rotvec(self, degrees: bool = False) -> Any:
        """Rotation vectors (..., 3), angles in [0, pi]."""
        q = jnp.where((_part(self.quat, 3) < 0)[..., None], -self.quat, self.quat)
        angle = 2.0 * jnp.arctan2(_norm(q[..., :3]), _part(q, 3))
        a2 = angle * angle
        small = 2 + a2 / 12 + 7 * a2 * a2 / 2880  # a / sin(a / 2) by its series near 0
        scale = jnp.where(angle <= 1e-3, small, angle / jnp.sin(angle / 2))
        if degrees:
            scale = jnp.rad2deg(scale)
        return scale[..., None] * q[..., :3]

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Any:
        """Quaternions (..., 4); `canonical`: the sign with w > 0 (the first nonzero of
        w, x, y, z positive); `scalar_first`: (w, x, y, z)."""
        q = self.quat
        if canonical:
            neg, zero = q < 0, q == 0
            flip = neg[..., 3] | (zero[..., 3] & neg[..., 0])
            flip = flip | (zero[..., 3] & zero[..., 0] & neg[..., 1])
            flip = flip | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2])
            q = jnp.where(flip[..., None], -q, q)
        return jnp.roll(q, shift=1, axis=-1) if scalar_first else q

    def inv(self) -> Rotation:
        """The inverse rotation(s)."""
        return Rotation(self.quat * jnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self) -> Any:
        """The rotation angle(s), in [0, pi]."""
        return 2.0 * jnp.arctan2(_norm(self.quat[..., :3]), jnp.abs(_part(self.quat, 3)))

    def mean(self, weights: Any = None) -> Rotation:
        """The (weighted) mean rotation: the quaternion maximizing sum(w (q . p)^2)."""
        dt = self.quat.dtype
        w = (
            jnp.ones(self.quat.shape[0], dtype=dt)
            if weights is None
            else jnp.asarray(weights, dtype=dt)
        )
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError(
                "Expected `weights` to have number of values equal to number of rotations, "
                f"got {w.shape[0]} values and {len(self)} rotations."
            )
        k = jnp.dot(w[None, :] * self.quat.T, self.quat)
        _, v = jnp.linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this holds a single rotation (a 1-d quaternion)."""
        return bool(self.quat.ndim == 1)


class Slerp(NamedTuple):
    """Spherical linear interpolation between key rotations at increasing key times
    (scipy.spatial.transform.Slerp, as JAX); build it with `Slerp.init(times, rotations)`."""

    times: Any
    timedelta: Any
    rotations: Rotation
    rotvecs: Any

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> Slerp:
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(
                "Expected times to be specified in a 1 dimensional array, got "
                f"{times.ndim} dimensions."
            )
        if times.shape[0] != len(rotations):
            raise ValueError(
                "Expected number of rotations to be equal to number of timestamps given, got "
                f"{len(rotations)} rotations and {times.shape[0]} timestamps."
            )
        quat = rotations.as_quat()
        start = Rotation(quat[:-1])
        steps = (start.inv() * Rotation(quat[1:])).as_rotvec()
        return cls(times=times, timedelta=jnp.diff(times), rotations=start, rotvecs=steps)

    def __call__(self, times: Any) -> Rotation:
        """The interpolated rotation(s) at `times` (a scalar or a 1-d array)."""
        t = jnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = t.ndim == 0
        t = jnp.atleast_1d(t)
        ind = jnp.maximum(jnp.searchsorted(self.times, t) - 1, 0)
        alpha = (t - self.times[ind]) / self.timedelta[ind]
        result = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        return result[0] if single else result


# Explicit nodes: Rotation overrides tuple's __len__/__getitem__ (a single rotation has none)
register_pytree_node(Rotation, lambda r: ((r.quat,), None), lambda _, c: Rotation(*c))
register_pytree_node(
    Slerp,
    lambda s: ((s.times, s.timedelta, s.rotations, s.rotvecs), None),
    lambda _, c: Slerp(*c),
)
