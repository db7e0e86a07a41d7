"""Fused attention: a kernel the tiling backends (wasm, webgpu) run as one launch.

An `AttentionKernel` is not an expression kernel (ir/kernel.py): it computes, for every query
row (b, t, n) of a float32 query (B, T, N, H) and float32 key/value (B, S, K, H), K dividing N,

    out[b, t, n, :] = sum_s p[s] v[b, s, n // (N // K), :],  p = softmax_s(logit[s])
    logit[s] = scale * <q[b, t, n, :], k[b, s, n // (N // K), :]> + bias[b, n, t, s]

over the keys s < end(b, t): `end` is S, clipped to `kv_len[b]` (with `kv_len`) and to t + 1
(`causal`, aligned at the top left as `jax.nn.dot_product_attention` aligns it). A row with no
key left (end <= 0) averages all S values, as the composite's masked softmax does (every logit
equal). With `q_len`, rows t >= q_len[b] are zeros. Softmax runs online (a running maximum and
sum, rescaled per block of keys: one pass over K and V, no T x S matrix anywhere).

Inputs, by slot: q, k, v, then bias (float32, read at `b * sb + n * sn + t * st + s * ss`: a
stride 0 broadcasts), kv_len (int32, B), q_len (int32, B), each only where present. The output
is float32 (B, T, N, H), contiguous. Kernels are values (frozen, hashable): backends cache
their compiled forms by them, as for expression kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import dtypes
from ..dtypes import DType


def fused_on(platform: str, h: int, limits: dict[str, int] | None = None) -> bool:
    """Whether `platform`'s codegen takes head size `h` (its registers are unrolled over H on
    webgpu, its loops are f32x4 on wasm); elsewhere the composite runs. On CPU implementations
    of WebGPU (`limits["cpu"]`: lavapipe, SwiftShader), whose invocations are SIMD lanes with
    few registers each, the composite's register-tiled products ran 2x faster on lavapipe."""
    if platform == "wasm":
        return h % 4 == 0 and h <= 1024
    if platform == "webgpu":
        return h <= 256 and (h % 4 == 0 or h <= 64) and not (limits or {}).get("cpu")
    return False


@dataclass(frozen=True)
class AttentionKernel:
    b: int
    t: int
    s: int
    n: int
    k: int  # key/value heads (k | n)
    h: int
    scale: float
    causal: bool
    bias: tuple[int, int, int, int] | None  # strides (b, n, t, s) of the bias input
    kv_len: bool
    q_len: bool

    @property
    def size(self) -> int:
        return self.b * self.t * self.n * self.h

    @property
    def arg_dtypes(self) -> tuple[DType, ...]:
        f32, i32 = dtypes.float32, dtypes.int32
        extra = [f32] * (self.bias is not None) + [i32] * self.kv_len + [i32] * self.q_len
        return (f32, f32, f32, *extra)

    @property
    def nargs(self) -> int:
        return len(self.arg_dtypes)

    @property
    def out_dtype(self) -> DType:
        return dtypes.float32

    @property
    def reduction(self) -> None:
        return None  # (profiles and debug output ask expression kernels for theirs)

    @property
    def slots(self) -> dict[str, int]:
        """Input slot of each optional operand present (bias, kv_len, q_len)."""
        out: dict[str, int] = {}
        nxt = 3
        for name, present in (
            ("bias", self.bias is not None),
            ("kv_len", self.kv_len),
            ("q_len", self.q_len),
        ):
            if present:
                out[name] = nxt
                nxt += 1
        return out

    @property
    def exp(self) -> str:
        """A description in place of an expression (the profiler shows kernels' `exp`)."""
        return (
            f"attention(B={self.b}, T={self.t}, S={self.s}, N={self.n}, K={self.k}, "
            f"H={self.h}, causal={self.causal}, bias={self.bias is not None}, "
            f"kv_len={self.kv_len}, q_len={self.q_len})"
        )

    @property
    def flops(self) -> int:
        """Multiply-adds x 2 of the two products (the full T x S, masks not subtracted)."""
        return 4 * self.b * self.n * self.t * self.s * self.h
