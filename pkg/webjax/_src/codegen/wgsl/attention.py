"""Fused attention (ir/attention.py) as one WGSL compute shader, FlashAttention style.

One invocation owns one query row: its query (pre-multiplied by the scale) and its output
accumulator live in registers (H / 4 vec4 variables each, the code unrolled over H), and the
keys are visited in blocks of BK. Per block the row's BK logits are kept in registers (the
block is unrolled too), their maximum taken, the running sum and accumulator rescaled once
(online softmax), and the block's values added with the weights exp(logit - max). Masked keys
(past the row's end) get the float32 minimum, whose weight is 0; a block with no key left for
the row is skipped.

A workgroup takes BQ consecutive query rows of one (batch, head), loads each block of K and V
once into workgroup memory (BK x H each, BK sized to the device's workgroup storage) and every
invocation reads it from there (the same address at a time: a broadcast; constant offsets,
the block being unrolled); the blocks run up to the last key any row of the workgroup needs
(causal rows end early). CPU implementations of WebGPU run the composite instead
(ir/attention.fused_on says why).

Heads wider than 64 would hold more than 256 floats of query and accumulator per invocation
and spill (H = 128 ran at 0.15x PyTorch's SDPA on an H100, against 0.71x at H = 64): there a
row is split over P invocations (P = H / 64; invocation i takes row i % BQ, part i / BQ), each
holding its 64 dimensions of the query and the output. Per block each writes its partial
logits to workgroup memory, and after a barrier every part of the row sums the P partials in
the same order (so all see the same logits, bit for bit), then runs the same online softmax
and updates its own dimensions (H = 128: 0.36x).
"""

from __future__ import annotations

from ...ir.attention import AttentionKernel, fused_on
from .program import WgslPass, WgslProgram

NEG = "-3.4028234663852886e38"  # float32's lowest: a masked logit (its weight underflows to 0)
BQ = 128  # the most query rows per workgroup
# bench/webgpu_h200.py's sweep sets these (None: chosen from the head size and the limits)
PARTS: int | None = None  # invocations per query row
BK: int | None = None  # keys per block


def _lit(x: float) -> str:
    r = repr(float(x))
    return r if ("e" in r or "." in r) else r + ".0"


def _max_tree(xs: list[str]) -> str:
    while len(xs) > 1:
        pairs = [f"max({xs[i]}, {xs[i + 1]})" for i in range(0, len(xs) - 1, 2)]
        xs = pairs + xs[len(xs) - len(xs) % 2 :]
    return xs[0]


def _block_size(h: int, storage: int, exchange: int = 0) -> int:
    """Keys per block: K and V blocks (and `exchange` partial logits per key) within storage.
    A split row takes at most 16 (on an H100 at H = 128, 64 rows of 2 parts ran 3.7x slower with
    blocks of 32 keys, which fill 48 KiB, than with 8 or 16; 8 and 16 ran alike)."""
    bk = 16 if exchange else 32
    while bk > 4 and (2 * bk * h + exchange * bk) * 4 > storage:
        bk //= 2
    return bk


def _parts(c: int) -> int:
    """Invocations per query row: each holds at most 16 chunks (64 floats) of q and of out."""
    p = 1
    while c // p > 16 and c % (2 * p) == 0:
        p *= 2
    return p


def render(kernel: AttentionKernel, limits: dict[str, int] | None = None) -> WgslProgram:
    lim = limits or {}
    k = kernel
    assert fused_on("webgpu", k.h, lim), (k.h, lim)
    w = 4 if k.h % 4 == 0 else 1
    c = k.h // w
    ty = "vec4<f32>" if w == 4 else "f32"
    g = k.n // k.k
    storage = int(lim.get("max_workgroup_storage", 16384))
    parts = PARTS if PARTS and c % PARTS == 0 else _parts(c)
    cp = c // parts  # the chunks of q and out each invocation holds
    slots = k.slots
    rows = k.b * k.t * k.n
    lines = [
        f"@group(0) @binding(0) var<storage, read> in0: array<{ty}>;",
        f"@group(0) @binding(1) var<storage, read> in1: array<{ty}>;",
        f"@group(0) @binding(2) var<storage, read> in2: array<{ty}>;",
    ]
    if "bias" in slots:
        lines.append(f"@group(0) @binding({slots['bias']}) var<storage, read> bias: array<f32>;")
    for name in ("kv_len", "q_len"):
        if name in slots:
            lines.append(
                f"@group(0) @binding({slots[name]}) var<storage, read> {name}: array<i32>;"
            )
    lines.append(f"@group(0) @binding({k.nargs}) var<storage, read_write> out: array<{ty}>;")
    dot = "dot(a, b)" if w == 4 else "a * b"
    lines += ["", f"fn d(a: {ty}, b: {ty}) -> f32 {{ return {dot}; }}", ""]
    # the most query rows per workgroup that still give the device enough workgroups (on an
    # H200, 128 rows ran 1.4x (1.6x causal) faster than 64 at B=8, N=16, T=2048, H=64)
    most = min(BQ, int(lim.get("max_invocations", 256)) // parts)
    bq = next((q for q in (128, 64) if q <= most and k.b * k.n * -(-k.t // q) >= 256), 32)
    bq = min(bq, most)
    lanes = bq * parts  # invocations per workgroup
    bk = BK or _block_size(k.h, storage, lanes if parts > 1 else 0)
    nt = -(-k.t // bq)  # query blocks per (batch, head)
    per = max(1, min(k.b * k.n, 65535 // nt))  # (batch, head)s along x
    groups_x, groups_y = nt * per, -(-(k.b * k.n) // per)
    lines += [
        f"var<workgroup> ks: array<{ty}, {bk * c}>;",
        f"var<workgroup> vs: array<{ty}, {bk * c}>;",
    ]
    if parts > 1:  # each invocation's partial logits of the block, key-major
        lines.append(f"var<workgroup> xp: array<f32, {bk * lanes}>;")
    lines += [
        "",
        f"@compute @workgroup_size({lanes})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>,",
        "        @builtin(local_invocation_index) li: u32) {",
        f"  let bn = i32(wid.y) * {per} + i32(wid.x) / {nt};",
        f"  if (bn >= {k.b * k.n}) {{ return; }}  // (the whole workgroup)",
        f"  let b = bn / {k.n}; let n = bn % {k.n};",
        f"  let t0 = (i32(wid.x) % {nt}) * {bq};",
    ]
    if parts > 1:  # part-major: the 32 invocations of a subgroup read the same K/V chunks
        lines += [
            f"  let row = i32(li) % {bq};",
            f"  let po = (i32(li) / {bq}) * {cp};  // the first chunk of this part",
        ]
    else:
        lines += ["  let row = i32(li);", "  let po = 0;"]
    lines += [
        "  let t = t0 + row;",
        f"  let live = t < {k.t};",
        f"  let kh = n / {g};",
        f"  let tq = min(t, {k.t - 1});",
        f"  let qb = ((b * {k.t} + tq) * {k.n} + n) * {c} + po;",
        f"  let kb = b * {k.s * k.k * c} + kh * {c};  // + s * {k.k * c} + chunk",
    ]
    lines += [f"  let q{i} = in0[qb + {i}] * {_lit(k.scale)};" for i in range(cp)]
    lines += [f"  var a{i} = {ty}(0.0);" for i in range(cp)]
    lines += [f"  var m = {NEG};", "  var l = 0.0;", f"  var e = {k.s};"]
    if k.kv_len:
        lines.append(f"  let kl = clamp(kv_len[b], 0, {k.s});")
        lines.append("  e = kl;")
    if k.causal:
        lines.append("  e = min(e, t + 1);")
    lines += [
        "  let uni = e <= 0;  // no key left: every logit equal",
        f"  if (uni) {{ e = {k.s}; }}",
    ]
    # the keys the workgroup's rows need: up to the last row's end (rows end in order)
    lines.append(f"  var we = {'kl' if k.kv_len else k.s};")
    if k.causal:
        lines.append(f"  we = min(we, min(t0 + {bq}, {k.t}));")
    lines.append(f"  if (we <= 0) {{ we = {k.s}; }}")
    lines += [
        f"  for (var j0 = 0; j0 < we; j0 = j0 + {bk}) {{",
        f"    for (var i = i32(li); i < {bk * c}; i = i + {lanes}) {{",
        f"      let s = j0 + i / {c};",
        f"      let src = kb + min(s, {k.s - 1}) * {k.k * c} + i % {c};",
        f"      ks[i] = select({ty}(0.0), in1[src], s < {k.s});",
        f"      vs[i] = select({ty}(0.0), in2[src], s < {k.s});",
        "    }",
        "    workgroupBarrier();",
    ]
    kv = "po + " if parts > 1 else ""  # this part's chunks of a K or V row

    def dots(j: int) -> str:
        return " + ".join(f"d(q{i}, ks[{kv}{j * c + i}])" for i in range(cp))

    if parts > 1:
        # partial logits to workgroup memory (every invocation: the barrier is uniform)
        lines += [f"    xp[{j * lanes} + i32(li)] = {dots(j)};" for j in range(bk)]
        lines.append("    workgroupBarrier();")
    lines.append("    if (live) {")
    body: list[str] = []
    # the block unrolled: its logits in registers x0..x{bk-1}
    for j in range(bk):
        if parts > 1:
            total = " + ".join(f"xp[{j * lanes + p * bq} + row]" for p in range(parts))
            body.append(f"var x{j} = {total};")
        else:
            body.append(f"var x{j} = {dots(j)};")
        if k.bias is not None:
            sb, sn, st, ss = k.bias
            body.append(
                f"x{j} = x{j} + bias[b * {sb} + n * {sn} + tq * {st} "
                f"+ min(j0 + {j}, {k.s - 1}) * {ss}];"
            )
        body.append(f"x{j} = select({NEG}, select(x{j}, 0.0, uni), j0 + {j} < e);")
    body.append("let mt = " + _max_tree([f"x{j}" for j in range(bk)]) + ";")
    body += [
        f"if (mt > {NEG}) {{",
        "  let mn = max(m, mt);",
        "  let corr = exp(m - mn);",
        "  l = l * corr;",
        *[f"  a{i} = a{i} * corr;" for i in range(cp)],
    ]
    for j in range(bk):
        body.append(f"  let p{j} = exp(x{j} - mn);")
        body += [f"  a{i} = a{i} + p{j} * vs[{kv}{j * c + i}];" for i in range(cp)]
    body += [
        "  l = l + " + " + ".join(f"p{j}" for j in range(bk)) + ";",
        "  m = mn;",
        "}",
    ]
    ind = "      "
    lines += [ind + x for x in body]
    lines.append("    }")
    lines.append("    workgroupBarrier();")
    lines.append("  }")
    tail = "  var inv = 1.0 / l;"
    lines.append(tail)
    if k.q_len:
        lines.append("  if (t >= q_len[b]) { inv = 0.0; }")
        fix = lambda i: f"select(a{i} * inv, {ty}(0.0), inv == 0.0)"
    else:
        fix = lambda i: f"a{i} * inv"
    lines.append("  if (!live) { return; }")
    lines += [f"  out[qb + {i}] = {fix(i)};" for i in range(cp)]
    lines.append("}")
    source = "\n".join(lines) + "\n"
    note = f"attention bq={bq} bk={bk} w={w}" + (f" parts={parts}" if parts > 1 else "")
    p = WgslPass(source, k.nargs + 1, (groups_x, groups_y))
    return WgslProgram((p,), k.nargs, rows, note=note)
