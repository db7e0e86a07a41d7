"""Fused attention (ir/attention.py) as one WebAssembly function: a loop over query rows.

Same export as the expression kernels (codegen/wasm/kernel.py):

    kernel(out, in_ptr_0, ..., in_ptr_{n-1}, in_len_0, ..., in_len_{n-1}, lo, hi)

computing the output rows that [lo, hi) covers (whole rows: the backend runs it unsplit). Per
row, online softmax over the row's keys, one key at a time: the logit is a SIMD dot product
(f32x4 multiply-adds over H, then the lanes summed), the accumulator is the output row itself
(zeroed, rescaled only when a new maximum arrives, so one exp per key), and each value row is
added with its weight in f32x4. At the end the row is divided by the sum. exp (of arguments
<= 0 only) is inline: exponent bits times a polynomial, within float32 tolerance.
"""

from __future__ import annotations

from ...ir.attention import AttentionKernel, fused_on
from .asm import F32, I32, MAX_PAGES, V128, Func, module

EXPORT = "kernel"
NEG = -3.4028234663852886e38  # float32's lowest: the running maximum before any key
# 2^f = sum c_i f^i on |f| <= 1/2: Taylor coefficients of exp(f ln 2)
_EXP2 = [1.0, 0.6931471805599453, 0.2402265069591007, 0.05550410866482158,
         0.009618129107628477, 0.0013333558146428443, 0.00015403530393381606]  # fmt: skip


def generate(kernel: AttentionKernel, *, shared: bool = False) -> bytes:
    k = kernel
    assert fused_on("wasm", k.h), k.h
    nargs = k.nargs
    f = Func([I32] * (1 + 2 * nargs + 2), [])
    out_p, q_p, k_p, v_p = 0, 1, 2, 3
    slots = k.slots
    lo, hi = 1 + 2 * nargs, 2 + 2 * nargs
    c4 = k.h // 4
    row_bytes = k.h * 4
    key_stride = k.k * k.h * 4  # bytes from one key row to the next of the same head
    g = k.n // k.k

    r, rend, b, t, n, qp, op, kp, vp, s, e, uni = (f.local(I32) for _ in range(12))
    m, l_, x, p, corr = (f.local(F32) for _ in range(5))
    acc = f.local(V128)
    accs = [f.local(V128) for _ in range(4)]
    bp = f.local(I32) if "bias" in slots else None

    ey, en = f.local(F32), f.local(F32)

    def exp_of() -> None:  # x <= 0 on the stack -> exp(x), inline
        # 2^y, y = x log2(e) >= -127: 2^round(y) from its exponent bits (0 at -127) times a
        # degree-6 polynomial of 2^f, |f| <= 1/2 (relative error below 2e-7)
        f.f32(1.4426950408889634)
        f.op("f32.mul")
        f.f32(-127.0)
        f.op("f32.max")
        f.tee(ey)
        f.op("f32.nearest")
        f.set(en)
        f.get(ey)
        f.get(en)
        f.op("f32.sub")
        f.set(ey)
        f.f32(_EXP2[-1])
        for c in reversed(_EXP2[:-1]):
            f.get(ey)
            f.op("f32.mul")
            f.f32(c)
            f.op("f32.add")
        f.get(en)
        f.op("i32.trunc_f32_s")
        f.i32(127)
        f.op("i32.add")
        f.i32(23)
        f.op("i32.shl")
        f.op("f32.reinterpret_i32")
        f.op("f32.mul")

    f.get(lo)
    f.i32(k.h)
    f.op("i32.div_u")
    f.set(r)
    f.get(hi)
    f.i32(k.h)
    f.op("i32.div_u")
    f.set(rend)
    f.block("block")
    f.block("loop")
    f.get(r)
    f.get(rend)
    f.op("i32.ge_u")
    f.br_if(1)
    # r = (b * T + t) * N + n
    f.get(r)
    f.i32(k.n)
    f.op("i32.rem_u")
    f.set(n)
    f.get(r)
    f.i32(k.n)
    f.op("i32.div_u")
    f.tee(t)
    f.i32(k.t)
    f.op("i32.div_u")
    f.set(b)
    f.get(t)
    f.i32(k.t)
    f.op("i32.rem_u")
    f.set(t)
    f.get(r)
    f.i32(row_bytes)
    f.op("i32.mul")
    f.tee(qp)
    f.get(out_p)
    f.op("i32.add")
    f.set(op)
    f.get(qp)
    f.get(q_p)
    f.op("i32.add")
    f.set(qp)
    # first key of this head: ((b * S) * K + n // G) * H floats
    f.get(b)
    f.i32(k.s * k.k * row_bytes)
    f.op("i32.mul")
    f.get(n)
    f.i32(g)
    f.op("i32.div_u")
    f.i32(row_bytes)
    f.op("i32.mul")
    f.op("i32.add")
    f.tee(kp)
    f.get(v_p)
    f.op("i32.add")
    f.set(vp)
    f.get(kp)
    f.get(k_p)
    f.op("i32.add")
    f.set(kp)
    # the row's end
    f.i32(k.s)
    f.set(e)
    if k.kv_len:
        f.get(1 + slots["kv_len"])
        f.get(b)
        f.i32(4)
        f.op("i32.mul")
        f.op("i32.add")
        f.mem("i32.load")
        f.set(e)
        # clamp to [0, S]
        f.get(e)
        f.i32(0)
        f.get(e)
        f.i32(0)
        f.op("i32.gt_s")
        f.op("select")
        f.set(e)
        f.i32(k.s)
        f.get(e)
        f.get(e)
        f.i32(k.s)
        f.op("i32.gt_s")
        f.op("select")
        f.set(e)
    if k.causal:
        f.get(t)
        f.i32(1)
        f.op("i32.add")
        f.get(e)
        f.get(t)
        f.i32(1)
        f.op("i32.add")
        f.get(e)
        f.op("i32.lt_s")
        f.op("select")
        f.set(e)
    f.get(e)
    f.i32(0)
    f.op("i32.le_s")
    f.tee(uni)
    f.block("if")
    f.i32(k.s)
    f.set(e)
    f.end()
    if bp is not None:
        sb, sn, st, _ = k.bias  # type: ignore[misc]
        f.get(1 + slots["bias"])
        for var, stride in ((b, sb), (n, sn), (t, st)):
            f.get(var)
            f.i32(stride * 4)
            f.op("i32.mul")
            f.op("i32.add")
        f.set(bp)
    # zero the accumulator (the output row)
    for i in range(c4):
        f.get(op)
        f.f32(0.0)
        f.op("f32x4.splat")
        f.simd_mem("v128.store", 16 * i)
    f.f32(NEG)
    f.set(m)
    f.f32(0.0)
    f.set(l_)
    f.i32(0)
    f.set(s)
    # keys
    f.block("block")
    f.block("loop")
    f.get(s)
    f.get(e)
    f.op("i32.ge_s")
    f.br_if(1)
    # the dot product in up to 4 independent f32x4 chains, then summed
    chains = min(4, c4)
    for i in range(c4):
        if i >= chains:
            f.get(accs[i % chains])
        f.get(qp)
        f.simd_mem("v128.load", 16 * i)
        f.get(kp)
        f.simd_mem("v128.load", 16 * i)
        f.op("f32x4.mul")
        if i >= chains:
            f.op("f32x4.add")
        f.set(accs[i % chains])
    f.get(accs[0])
    for j in range(1, chains):
        f.get(accs[j])
        f.op("f32x4.add")
    f.set(acc)
    f.get(acc)
    f.lane("f32x4.extract_lane", 0)
    f.get(acc)
    f.lane("f32x4.extract_lane", 1)
    f.op("f32.add")
    f.get(acc)
    f.lane("f32x4.extract_lane", 2)
    f.get(acc)
    f.lane("f32x4.extract_lane", 3)
    f.op("f32.add")
    f.op("f32.add")
    f.f32(k.scale)
    f.op("f32.mul")
    if bp is not None:
        ss = k.bias[3]  # type: ignore[index]
        f.get(bp)
        f.get(s)
        f.i32(ss * 4)
        f.op("i32.mul")
        f.op("i32.add")
        f.mem("f32.load")
        f.op("f32.add")
    f.set(x)
    # every logit equal where the row has no key: 0
    f.f32(0.0)
    f.get(x)
    f.get(uni)
    f.op("select")
    f.tee(x)
    f.get(m)
    f.op("f32.gt")
    f.block("if")
    # a new maximum: rescale the sum and the accumulator by exp(m - x)
    f.get(m)
    f.get(x)
    f.op("f32.sub")
    exp_of()
    f.tee(corr)
    f.get(l_)
    f.op("f32.mul")
    f.set(l_)
    for i in range(c4):
        f.get(op)
        f.get(op)
        f.simd_mem("v128.load", 16 * i)
        f.get(corr)
        f.op("f32x4.splat", "f32x4.mul")
        f.simd_mem("v128.store", 16 * i)
    f.get(x)
    f.set(m)
    f.f32(1.0)
    f.set(p)
    f.op("else")
    f.get(x)
    f.get(m)
    f.op("f32.sub")
    exp_of()
    f.set(p)
    f.end()
    f.get(l_)
    f.get(p)
    f.op("f32.add")
    f.set(l_)
    for i in range(c4):
        f.get(op)
        f.get(op)
        f.simd_mem("v128.load", 16 * i)
        f.get(vp)
        f.simd_mem("v128.load", 16 * i)
        f.get(p)
        f.op("f32x4.splat", "f32x4.mul", "f32x4.add")
        f.simd_mem("v128.store", 16 * i)
    for ptr in (kp, vp):
        f.get(ptr)
        f.i32(key_stride)
        f.op("i32.add")
        f.set(ptr)
    f.get(s)
    f.i32(1)
    f.op("i32.add")
    f.set(s)
    f.br(0)
    f.end()
    f.end()
    # out = acc / l (zeros for rows past q_len)
    f.f32(1.0)
    f.get(l_)
    f.op("f32.div")
    f.set(p)
    if k.q_len:
        f.get(t)
        f.get(1 + slots["q_len"])
        f.get(b)
        f.i32(4)
        f.op("i32.mul")
        f.op("i32.add")
        f.mem("i32.load")
        f.op("i32.ge_s")
        f.block("if")
        for i in range(c4):
            f.get(op)
            f.f32(0.0)
            f.op("f32x4.splat")
            f.simd_mem("v128.store", 16 * i)
        f.op("else")
    for i in range(c4):
        f.get(op)
        f.get(op)
        f.simd_mem("v128.load", 16 * i)
        f.get(p)
        f.op("f32x4.splat", "f32x4.mul")
        f.simd_mem("v128.store", 16 * i)
    if k.q_len:
        f.end()
    f.get(r)
    f.i32(1)
    f.op("i32.add")
    f.set(r)
    f.br(0)
    f.end()
    f.end()
    return module([f], {EXPORT: 0}, shared_max=MAX_PAGES if shared else None)
