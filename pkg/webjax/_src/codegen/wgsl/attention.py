"""Fused attention (ir/attention.py) as one WGSL compute shader, FlashAttention style.

One invocation owns one query row: its query (pre-multiplied by the scale) and its output
accumulator live in registers (H / 4 vec4 variables each, the code unrolled over H), and the
keys are visited in blocks of BK. Per block the row's BK logits are kept in a private array,
their maximum taken, the running sum and accumulator rescaled once (online softmax), and the
block's values added with the weights exp(logit - max). Masked keys (past the row's end) get
the float32 minimum, whose weight is 0; a block with no key left for the row is skipped.

Two schedules, by the adapter's class (as the other WGSL kernels choose): on GPUs a workgroup
takes BQ consecutive query rows of one (batch, head), loads each block of K and V once into
workgroup memory (BK x H each, BK sized to the device's workgroup storage) and every
invocation reads it from there (the same address at a time: a broadcast); the blocks run up
to the last key any row of the workgroup needs (causal rows end early). On CPU
implementations (lavapipe, SwiftShader), where a workgroup barrier costs every invocation a
fiber switch, there is no shared memory and no barrier: each invocation reads K and V from
storage, neighbouring invocations being neighbouring query rows of the same head (the same
keys, so the same cache lines).
"""

from __future__ import annotations

from ...ir.attention import AttentionKernel, fused_on
from .program import WgslPass, WgslProgram

NEG = "-3.4028234663852886e38"  # float32's lowest: a masked logit (its weight underflows to 0)
BQ = 64  # query rows per workgroup (GPUs)
CPU_BK = 16  # keys per block without shared memory


def _lit(x: float) -> str:
    r = repr(float(x))
    return r if ("e" in r or "." in r) else r + ".0"


def _block_size(h: int, storage: int) -> int:
    bk = 32
    while bk > 4 and 2 * bk * h * 4 > storage:
        bk //= 2
    return bk


def render(kernel: AttentionKernel, limits: dict[str, int] | None = None) -> WgslProgram:
    lim = limits or {}
    k = kernel
    assert fused_on("webgpu", k.h), k.h
    w = 4 if k.h % 4 == 0 else 1
    c = k.h // w
    ty = "vec4<f32>" if w == 4 else "f32"
    g = k.n // k.k
    gpu = not lim.get("cpu")
    storage = int(lim.get("max_workgroup_storage", 16384))
    bk = _block_size(k.h, storage) if gpu else CPU_BK
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
    if gpu:
        bq = BQ if k.b * k.n * -(-k.t // BQ) >= 128 else 32
        groups_x, groups_y = -(-k.t // bq), k.b * k.n
        lines += [
            f"var<workgroup> ks: array<{ty}, {bk * c}>;",
            f"var<workgroup> vs: array<{ty}, {bk * c}>;",
            "",
            f"@compute @workgroup_size({bq})",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>,",
            "        @builtin(local_invocation_index) li: u32) {",
            f"  let bn = i32(wid.y); let b = bn / {k.n}; let n = bn % {k.n};",
            f"  let t = i32(wid.x) * {bq} + i32(li);",
            f"  let live = t < {k.t};",
        ]
    else:
        groups = -(-rows // 64)
        groups_x = min(groups, 65535)
        groups_y = -(-groups // groups_x)
        lines += [
            "@compute @workgroup_size(64)",
            "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {",
            f"  let row = i32(gid.x + gid.y * {groups_x * 64}u);",
            f"  if (row >= {rows}) {{ return; }}",
            f"  let t = row % {k.t}; let bn = row / {k.t};",
            f"  let b = bn / {k.n}; let n = bn % {k.n};",
        ]
    lines += [
        f"  let kh = n / {g};",
        f"  let tq = min(t, {k.t - 1});",
        f"  let qb = ((b * {k.t} + tq) * {k.n} + n) * {c};",
        f"  let kb = b * {k.s * k.k * c} + kh * {c};  // + s * {k.k * c} + chunk",
    ]
    lines += [f"  let q{i} = in0[qb + {i}] * {_lit(k.scale)};" for i in range(c)]
    lines += [f"  var a{i} = {ty}(0.0);" for i in range(c)]
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
    if gpu:
        # the keys the workgroup's rows need: up to the last row's end (rows end in order)
        we = f"{k.s}"
        if k.kv_len:
            we = "kl"
        lines.append(f"  var we = {we};")
        if k.causal:
            lines.append(f"  we = min(we, min(i32(wid.x) * {bq} + {bq}, {k.t}));")
        lines.append(f"  if (we <= 0) {{ we = {k.s}; }}")
        lines += [
            f"  for (var j0 = 0; j0 < we; j0 = j0 + {bk}) {{",
            f"    for (var i = i32(li); i < {bk * c}; i = i + {bq}) {{",
            f"      let s = j0 + i / {c};",
            f"      let src = kb + min(s, {k.s - 1}) * {k.k * c} + i % {c};",
            f"      ks[i] = select({ty}(0.0), in1[src], s < {k.s});",
            f"      vs[i] = select({ty}(0.0), in2[src], s < {k.s});",
            "    }",
            "    workgroupBarrier();",
            "    if (live) {",
        ]
        kread = lambda i: f"ks[jc + {i}]"
        vread = lambda i: f"vs[jc + {i}]"
        jc = f"j * {c}"
        ind = "      "
    else:
        lines += [
            f"  for (var j0 = 0; j0 < e; j0 = j0 + {bk}) {{",
            "    {",
        ]
        kread = lambda i: f"in1[jc + {i}]"
        vread = lambda i: f"in2[jc + {i}]"
        jc = f"kb + min(j0 + j, {k.s - 1}) * {k.k * c}"
        ind = "      "
    body = [
        f"var sc: array<f32, {bk}>;",
        f"var mt = {NEG};",
        f"for (var j = 0; j < {bk}; j = j + 1) {{",
        "  let s = j0 + j;",
        f"  let jc = {jc};",
        "  var x = " + " + ".join(f"d(q{i}, {kread(i)})" for i in range(c)) + ";",
    ]
    if k.bias is not None:
        sb, sn, st, ss = k.bias
        body.append(f"  x = x + bias[b * {sb} + n * {sn} + tq * {st} + min(s, {k.s - 1}) * {ss}];")
    body += [
        "  if (uni) { x = 0.0; }",
        f"  x = select({NEG}, x, s < e);",
        "  sc[j] = x;",
        "  mt = max(mt, x);",
        "}",
        f"if (mt > {NEG}) {{",
        "  let mn = max(m, mt);",
        "  let corr = exp(m - mn);",
        "  l = l * corr;",
        *[f"  a{i} = a{i} * corr;" for i in range(c)],
        f"  for (var j = 0; j < {bk}; j = j + 1) {{",
        "    let p = exp(sc[j] - mn);",
        "    l = l + p;",
        f"    let jc = {jc};",
        *[f"    a{i} = a{i} + p * {vread(i)};" for i in range(c)],
        "  }",
        "  m = mn;",
        "}",
    ]
    lines += [ind + x for x in body]
    lines.append("    }")
    if gpu:
        lines.append("    workgroupBarrier();")
    lines.append("  }")
    tail = "  var inv = 1.0 / l;"
    lines.append(tail)
    if k.q_len:
        lines.append("  if (t >= q_len[b]) { inv = 0.0; }")
        fix = lambda i: f"select(a{i} * inv, {ty}(0.0), inv == 0.0)"
    else:
        fix = lambda i: f"a{i} * inv"
    if gpu:
        lines.append("  if (!live) { return; }")
    lines += [f"  out[qb + {i}] = {fix(i)};" for i in range(c)]
    lines.append("}")
    source = "\n".join(lines) + "\n"
    note = f"attention {'gpu' if gpu else 'cpu'} bk={bk} w={w}"
    p = WgslPass(source, k.nargs + 1, (groups_x, groups_y))
    return WgslProgram((p,), k.nargs, rows, note=note)
