"""Workgroup-tiled matrix products for the webgpu codegen.

`match(kernel)` recognises a (batched) matrix product in a kernel (ir/matmul.py: a REDUCE(ADD)
of a product of two float32 loads whose indices are affine in the output's digits and the
reduction index; any strides, so transposed operands and outputs too).
`render(kernel, plan, limits)` then emits one shader: each workgroup computes a TM x TN output
tile, staging BK-deep slices of both operands in `var<workgroup>` memory (k-major,
as vec4 rows), each invocation accumulating a (4*GM) x (4*GN) register tile of vec4 FMAs; the
next slice is prefetched into registers while the current one is used, and with `Tile.db`
stored into the other half of a double-size shared tile (one barrier per slice instead of two).
When the tile divides the problem and the operands are aligned, global loads and output stores
are vec4 and unguarded; otherwise every load and store is guarded. The epilogue (bias,
activation, casts) runs at store.

Each output sums its products in k order, as the reference does, but with fused multiply-adds:
results differ from the sequential reference by float rounding only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ...ir import matmul as ir_matmul
from ...ir.kernel import Kernel
from ...ir.matmul import Operand, Plan
from ...ir.ops import Op
from .expr import _load_fn, _opq_init, _Prelude, _straight, _value_fn, elem_type, to_bits
from .program import WgslPass, WgslProgram

# Products smaller than this many multiply-adds keep the generic (bit-exact) kernels.
MIN_MACS = 1 << 18
MIN_DIM = 16  # ... as do products with fewer rows or columns than this (matvec: grouped path)
MAX_GROUPS = 65535


@dataclass(frozen=True)
class Tile:
    tm: int  # output rows per workgroup
    tn: int  # output columns per workgroup
    bk: int  # k depth of one shared-memory slice
    ty: int  # invocations along rows
    tx: int  # invocations along columns
    # 1: two shared slices, loads of slice k+1 land while slice k is used (one barrier per
    # slice); 2: the same with the k loop unrolled by two, so both halves' offsets are constants
    db: int = 0
    # > 0: each 32 consecutive invocations (a subgroup on NVIDIA) cover lx columns by
    # 32 / lx rows of invocations, a squarer patch than lx = tx (fewer shared reads)
    lx: int = 0
    # > 0: the slice's k steps run as a loop of bk / ku iterations of ku unrolled steps (less
    # code than bk unrolled steps); 0: all bk steps unrolled
    ku: int = 0
    # shared tiles as arrays of k rows (array<array<vec4<f32>, tm / 4>, bk>, and a leading
    # half index when double-buffered): a read's k row is a constant, its column is
    # loop-invariant, so the index clamps of WebGPU's bounds checks can leave the inner loop
    # (H200, 128x256x16 at 4096: 0.88x cuBLAS SGEMM, 0.77x with flat arrays)
    rows: bool = False

    @property
    def gm(self) -> int:
        return self.tm // (4 * self.ty)

    @property
    def gn(self) -> int:
        return self.tn // (4 * self.tx)

    @property
    def threads(self) -> int:
        return self.tx * self.ty

    @property
    def smem(self) -> int:
        return 4 * self.bk * (self.tm + self.tn) * (2 if self.db else 1)

    def __str__(self) -> str:
        return (
            f"{self.tm}x{self.tn} tile, k-slice {self.bk}, {self.threads} invocations of "
            f"{4 * self.gm}x{4 * self.gn} outputs, {self.smem} B shared"
            + (", double-buffered" if self.db else "")
            + (" (unrolled by 2)" if self.db == 2 else "")
            + (f", {self.lx}x{32 // self.lx} invocations per 32" if self.lx else "")
            + (f", k steps unrolled by {self.ku}" if self.ku else "")
            + (", shared rows" if self.rows else "")
        )


# Largest first; `choose_tile` takes the first that the limits and the problem allow. On an
# H200 (NVIDIA Vulkan, 49152 B of workgroup storage) at 2048/4096/8192: 128x256 with k-slice
# 16, double-buffered, 8x16 outputs per invocation in 8x4 patches, shared rows ran 0.81x/0.88x/
# 0.89x cuBLAS SGEMM (0.72x/0.77x/0.78x with flat shared arrays); 128x128x16 with 8x4 patches
# and shared rows (fits WebGPU's default 16384 B) 0.80x/0.86x/0.88x, where the tile chosen
# there before, 128x128x8 (flat), ran 0.66x/0.70x/0.70x, and with shared rows 0.72x/0.76x/0.77x.
TILES = (
    Tile(128, 256, 16, 16, 16, 1, 8, 0, True),
    Tile(128, 128, 16, 16, 16, 0, 8, 0, True),
    Tile(128, 128, 8, 16, 16, 0, 0, 0, True),
    Tile(64, 64, 16, 16, 16, 0, 0, 0, True),
    Tile(64, 64, 8, 8, 8, 0, 0, 0, True),
    Tile(32, 32, 8, 8, 8, 0, 0, 0, True),
)
# Set (or WEBJAX_WGSL_MATMUL_TILE="tm,tn,bk,ty,tx") to force one tile (benchmarks, tests).
FORCE_TILE: Tile | None = None


@dataclass(frozen=True)
class RegTile:
    """The shared-memory-free product for CPU implementations of WebGPU (SwiftShader,
    lavapipe), where workgroup barriers cost far more than re-reading operands from cache:
    each invocation accumulates rm x rn outputs in registers from vec4 loads."""

    rm: int  # output rows per invocation
    rn: int  # output columns per invocation (a multiple of 4)
    wy: int  # invocations per workgroup along rows
    wx: int  # ... along columns

    def __str__(self) -> str:
        return (
            f"{self.rm}x{self.rn} outputs per invocation, {self.wy}x{self.wx} invocations, "
            "no shared memory"
        )


# Largest first; `choose_regs` takes the first that leaves enough invocations. On SwiftShader
# (2 cores) at 1024^3, 16x16 per invocation ran 1.9x the 128x128x8 shared-memory tile, 8x8 1.3x.
REG_TILES = (RegTile(16, 16, 4, 4), RegTile(8, 8, 4, 4), RegTile(4, 4, 4, 4))
MIN_REG_INVOCATIONS = 64
# Set (or WEBJAX_WGSL_MATMUL_REGS="rm,rn,wy,wx") to force one register tile.
FORCE_REGS: RegTile | None = None


def _env_tile() -> Tile | None:
    spec = os.environ.get("WEBJAX_WGSL_MATMUL_TILE", "")
    if not spec:
        return None
    tm, tn, bk, ty, tx = (int(v) for v in spec.split(","))
    return Tile(tm, tn, bk, ty, tx)


def valid_tile(t: Tile) -> bool:
    return (
        t.tm % (4 * t.ty) == 0
        and t.tn % (4 * t.tx) == 0
        and t.bk % 4 == 0
        and (t.tm * t.bk) % (4 * t.threads) == 0
        and (t.tn * t.bk) % (4 * t.threads) == 0
        and (not t.ku or t.bk % t.ku == 0)
        and (not t.lx or (32 % t.lx == 0 and t.tx % t.lx == 0 and t.ty % (32 // t.lx) == 0))
    )


def choose_regs(m: int, n: int) -> RegTile:
    forced = FORCE_REGS
    spec = os.environ.get("WEBJAX_WGSL_MATMUL_REGS", "")
    if forced is None and spec:
        rm, rn, wy, wx = (int(v) for v in spec.split(","))
        forced = RegTile(rm, rn, wy, wx)
    if forced is not None:
        assert forced.rn % 4 == 0 and forced.rm % 4 == 0, forced
        return forced
    for t in REG_TILES:
        if -(-m // t.rm) * -(-n // t.rn) >= MIN_REG_INVOCATIONS:
            return t
    return REG_TILES[-1]


def choose_tile(m: int, n: int, limits: dict[str, int]) -> Tile:
    forced = FORCE_TILE or _env_tile()
    if forced is not None:
        assert valid_tile(forced), forced
        return forced
    smem = limits.get("max_workgroup_storage", 16384)
    inv = limits.get("max_invocations", 256)
    fits = [t for t in TILES if t.smem <= smem and t.threads <= inv]
    small = min(m, n)
    for t in fits:
        if small >= 4 * max(t.tm, t.tn):  # enough tiles to fill a GPU with the big ones
            return t
    return fits[-1] if fits else TILES[-1]


# ---- recognition (ir/matmul.py) ------------------------------------------------------------------
def match(kernel: Kernel, force: bool = False) -> Plan | None:
    """A Plan when the kernel is a float32 matrix product worth tiling (at least MIN_DIM rows
    and columns and MIN_MACS multiply-adds, unless `force`), else None."""
    if force:
        return ir_matmul.match(kernel)
    return ir_matmul.match(kernel, MIN_DIM, MIN_MACS)


# ---- rendering ---------------------------------------------------------------------------------
def _vec_mode(op: Operand, ext: int, k: int, fast: bool) -> str:
    """'k': vec4 loads along k; 'mn': along the free dim; 's': scalar loads."""
    aligned = op.base % 4 == 0 and all(s % 4 == 0 for s in op.s_batch)
    if fast and aligned and op.s_k == 1 and op.s_mn % 4 == 0 and k % 4 == 0:
        return "k"
    if fast and aligned and op.s_mn == 1 and op.s_k % 4 == 0 and ext % 4 == 0:
        return "mn"
    return "s"


def render(kernel: Kernel, plan: Plan, limits: dict[str, int]) -> Any:
    """(WgslProgram, tile) or None: the register-tiled product on CPU implementations
    (limits["cpu"]), else the shared-memory tiles (or when a Tile is forced)."""
    if limits.get("cpu") and FORCE_TILE is None and not _env_tile():
        return _render_regs(kernel, plan, choose_regs(plan.m, plan.n), limits)
    return _render_smem(kernel, plan, limits)


def _render_smem(kernel: Kernel, plan: Plan, limits: dict[str, int]) -> Any:
    t = choose_tile(plan.m, plan.n, limits)
    tiles_m = -(-plan.m // t.tm)
    tiles_n = -(-plan.n // t.tn)
    nbatch = 1
    for r in plan.batch:
        nbatch *= r
    if tiles_n > MAX_GROUPS or tiles_m * nbatch > MAX_GROUPS:
        return None
    fast = plan.m % t.tm == 0 and plan.n % t.tn == 0 and plan.k % t.bk == 0
    red = kernel.reduction
    assert red is not None
    pre = _prelude(limits)
    value = _value_fn(kernel, red, pre)
    modes = {
        "a": _vec_mode(plan.a, plan.m, plan.k, fast),
        "b": _vec_mode(plan.b, plan.n, plan.k, fast),
    }
    # Slots read as vec4 must not also be read elementwise (a vec4 binding hides a ragged tail).
    epi_slots = {
        n.arg
        for n in kernel.exp.toposort()
        if n.op is Op.LOAD and n is not red.src[0].src[0] and n is not red.src[0].src[1]
    }
    for name, op, other in (("a", plan.a, plan.b), ("b", plan.b, plan.a)):
        oname = "b" if name == "a" else "a"
        if modes[name] != "s" and (
            op.slot in epi_slots or (other.slot == op.slot and modes[oname] == "s")
        ):
            modes[name] = "s"
    vec_slots = {op.slot for name, op in (("a", plan.a), ("b", plan.b)) if modes[name] != "s"}
    out_vec = (
        fast
        and plan.so_n == 1
        and plan.so_m % 4 == 0
        and all(s % 4 == 0 for s in plan.so_batch)
        and t.tn % 4 == 0
    )
    # bindings and loaders
    lines: list[str] = []
    loads: list[str] = []
    for s, d in enumerate(kernel.arg_dtypes):
        if s in vec_slots:
            lines.append(f"@group(0) @binding({s}) var<storage, read> in{s}: array<vec4<f32>>;")
            loads.append(f"fn ld{s}(k: i32) -> f32 {{ return in{s}[u32(k) >> 2u][u32(k) & 3u]; }}")
        else:
            ty = elem_type(d, pre)
            lines.append(f"@group(0) @binding({s}) var<storage, read> in{s}: array<{ty}>;")
            loads.append(_load_fn(s, d, pre))
    ot = "vec4<u32>" if out_vec else "u32"
    lines.append(f"@group(0) @binding({kernel.nargs}) var<storage, read_write> out: array<{ot}>;")
    main = _main(kernel, plan, t, modes, out_vec, tiles_m, pre)
    src = "\n".join([*pre.header(), *lines, "", pre.source(), *loads, "", *value, "", *main])
    src += "\n"
    p = WgslPass(src, kernel.nargs + 1, (tiles_n, tiles_m * nbatch))
    return WgslProgram((p,), kernel.nargs, kernel.size), t


def _prelude(limits: dict[str, int]) -> _Prelude:
    """The helpers' collector: epilogue loads of float16 read f16 bindings where the device
    has them (limits["f16"]); the product's operands and output are 32-bit."""
    return _Prelude({"f16": limits.get("f16", 0)})


def _batch_offsets(plan: Any, tiles_m: int) -> list[str]:
    """WGSL lines that split workgroup row `wid.y / tiles_m` into the batch indices and set
    the operand and output offsets (`a_off`, `b_off`, `o_off`) of this batch element."""
    lines = [
        f"  var bz = wid.y / {tiles_m}u;",
        f"  var a_off: i32 = {plan.a.base};",
        f"  var b_off: i32 = {plan.b.base};",
        "  var o_off: i32 = 0;",
    ]
    for j, r in enumerate(plan.batch):
        lines += [
            f"  {{ let d = i32(bz % {r}u); bz = bz / {r}u;",
            f"    a_off += d * {plan.a.s_batch[j]}; b_off += d * {plan.b.s_batch[j]};"
            f" o_off += d * {plan.so_batch[j]}; }}",
        ]
    return lines


def _operand_loads(
    name: str, op: Operand, mode: str, ext: int, k: int, tile: int, t: Tile, fast: bool, org: str
) -> tuple[list[str], list[str], list[str]]:
    """(register declarations, loads of slice `k0` into them, stores into shared memory, where
    `@H@` stands for the half being written: `_half` fills it in)."""
    reg = f"p{name}"
    q = tile // 4  # vec4s per k row of the shared tile

    def sh(row: str, col: str) -> str:
        if t.rows:
            return f"{name.upper()}s[@H@{row}][{col}]"
        return f"{name.upper()}s[@H@{row} * {q}u + {col}]"

    decl: list[str] = []
    load: list[str] = []
    store: list[str] = []
    T = t.threads
    base = f"{name}_off"
    if mode in ("k", "mn"):
        nv = tile * t.bk // (4 * T)
        for j in range(nv):
            v = f"(lid + {j * T}u)"
            decl.append(f"  var {reg}{j}: vec4<f32>;")
            if mode == "k":
                mm, kq = f"({v} / {t.bk // 4}u)", f"({v} % {t.bk // 4}u)"
                addr = f"{base} + i32({org} + {mm}) * {op.s_mn} + i32(k0 + 4u * {kq})"
                load.append(f"    {reg}{j} = in{op.slot}[u32({addr}) >> 2u];")
                for c in range(4):
                    store.append(
                        f"    {sh(f'(4u * ({kq}) + {c}u)', f'({mm}) / 4u')}[({mm}) % 4u]"
                        f" = {reg}{j}[{c}];"
                    )
            else:
                mq, kk = f"({v} % {q}u)", f"({v} / {q}u)"
                addr = f"{base} + i32({org} + 4u * {mq}) + i32(k0 + {kk}) * {op.s_k}"
                load.append(f"    {reg}{j} = in{op.slot}[u32({addr}) >> 2u];")
                store.append(f"    {sh(f'({kk})', mq)} = {reg}{j};")
        return decl, load, store
    ne = tile * t.bk // T
    k_fast = abs(op.s_k) <= abs(op.s_mn) if op.s_mn else True
    for j in range(ne):
        e = f"(lid + {j * T}u)"
        if k_fast:
            mm, kk = f"({e} / {t.bk}u)", f"({e} % {t.bk}u)"
        else:
            mm, kk = f"({e} % {tile}u)", f"({e} / {tile}u)"
        decl.append(f"  var {reg}{j}: f32;")
        addr = f"{base} + i32({org} + {mm}) * {op.s_mn} + i32(k0 + {kk}) * {op.s_k}"
        val = f"ld{op.slot}({addr})"
        if not fast:
            val = f"select(0.0f, {val}, {org} + {mm} < {ext}u && k0 + {kk} < {k}u)"
        load.append(f"    {reg}{j} = {val};")
        store.append(f"    {sh(f'({kk})', f'({mm}) / 4u')}[({mm}) % 4u] = {reg}{j};")
    return decl, load, store


def _invocation_xy(t: Tile) -> list[str]:
    """WGSL lines setting this invocation's column `tx` and row `ty` in the tile's grid."""
    if not t.lx:
        return [f"  let tx = lid % {t.tx}u;", f"  let ty = lid / {t.tx}u;"]
    wc = t.tx // t.lx  # patches of 32 invocations per row of patches
    return [
        "  let lane = lid % 32u;",
        "  let grp = lid / 32u;",
        f"  let tx = (grp % {wc}u) * {t.lx}u + lane % {t.lx}u;",
        f"  let ty = (grp / {wc}u) * {32 // t.lx}u + lane / {t.lx}u;",
    ]


def _main(
    kernel: Kernel,
    plan: Plan,
    t: Tile,
    modes: dict[str, str],
    out_vec: bool,
    tiles_m: int,
    pre: Any,
) -> list[str]:
    fast = plan.m % t.tm == 0 and plan.n % t.tn == 0 and plan.k % t.bk == 0
    nk = -(-plan.k // t.bk)
    nbuf = 2 if t.db else 1

    def shared(tile: int) -> str:
        if not t.rows:
            return f"array<vec4<f32>, {nbuf * t.bk * tile // 4}>"
        rows = f"array<array<vec4<f32>, {tile // 4}>, {t.bk}>"
        return f"array<{rows}, 2>" if t.db else rows

    L = [
        f"var<workgroup> As: {shared(t.tm)};",
        f"var<workgroup> Bs: {shared(t.tn)};",
        "",
        f"@compute @workgroup_size({t.threads})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>,",
        "        @builtin(local_invocation_index) lid: u32) {",
        *_opq_init(pre),
        *_invocation_xy(t),
        f"  let m0 = (wid.y % {tiles_m}u) * {t.tm}u;",
        f"  let n0 = wid.x * {t.tn}u;",
        *_batch_offsets(plan, tiles_m),
    ]
    da, la, sa = _operand_loads("a", plan.a, modes["a"], plan.m, plan.k, t.tm, t, fast, "m0")
    db, lb, sb = _operand_loads("b", plan.b, modes["b"], plan.n, plan.k, t.tn, t, fast, "n0")
    gm, gn = t.gm, t.gn
    acc = [[[f"c{g}_{j}_{h}" for h in range(gn)] for j in range(4)] for g in range(gm)]
    for g in range(gm):
        for j in range(4):
            for h in range(gn):
                L.append(f"  var {acc[g][j][h]} = vec4<f32>(0.0f);")
    L += da + db
    qa, qb = t.tm // 4, t.tn // 4
    ha, hb = t.bk * qa, t.bk * qb  # one half of As, of Bs (flat layout)

    def half(lines: list[str], h: str) -> list[str]:
        """Stores into the half `h` (rows layout: its index; flat: its offset; "": none)."""
        fill = "" if not h else (f"{h}][" if t.rows else f"{h} + ")
        return [x.replace("@H@", fill) for x in lines]

    def rd(name: str, h: str, kk: int, ko: str, col: str) -> str:
        """A shared read: half h, k row kk of a group starting at row `ko` (or ""), column."""
        if t.rows:
            row = f"{ko} + {kk}u" if ko else f"{kk}u"
            return f"{name}s[{h + '][' if h else ''}{row}][{col}]"
        q = qa if name == "A" else qb
        off = f"{h} + " if h else ""
        off += f"{ko} * {q}u + " if ko else ""
        return f"{name}s[{off}{kk * q}u + {col}]"

    def compute(ra: str, rb: str) -> list[str]:
        """The multiply-adds of one slice, read from halves ra of As and rb of Bs."""
        C: list[str] = []
        steps, ko = t.bk, ""
        if t.ku and t.ku < t.bk:  # a loop over groups of ku k rows
            steps, ko = t.ku, "ko"
            C += [f"    for (var kq = 0u; kq < {t.bk // t.ku}u; kq = kq + 1u) {{"]
            C += [f"    let ko = kq * {t.ku}u;"]
        for kk in range(steps):
            C.append("    {")
            for g in range(gm):
                C.append(f"      let a{g} = {rd('A', ra, kk, ko, f'ty + {g * t.ty}u')};")
            for h in range(gn):
                C.append(f"      let b{h} = {rd('B', rb, kk, ko, f'tx + {h * t.tx}u')};")
            for g in range(gm):
                for j in range(4):
                    for h in range(gn):
                        c = acc[g][j][h]
                        C.append(f"      {c} = fma(vec4<f32>(a{g}[{j}]), b{h}, {c});")
            C.append("    }")
        if steps < t.bk:
            C.append("    }")
        return C

    def step(kt: str, ra: str, rb: str, wa: str, wb: str) -> list[str]:
        """One double-buffered slice: prefetch slice kt + 1 into registers, use slice kt (read
        from one half), store the prefetch into the other half (`more` is uniform), barrier."""
        S = [f"    let more = {kt} + 1u < {nk}u;", "    if (more) {"]
        S += [f"      let k0 = ({kt} + 1u) * {t.bk}u;", *["  " + x for x in la + lb], "    }"]
        S += compute(ra, rb)
        S += ["    if (more) {", *["  " + x for x in half(sa, wa) + half(sb, wb)], "    }"]
        return [*S, "    workgroupBarrier();"]

    if t.db:
        # slice kt is read from half kt % 2 while slice kt + 1 is stored into the other half:
        # one barrier per slice (the other half was last read before the previous barrier)
        zero = "0u" if t.rows else ""
        L += ["  {", "    let k0 = 0u;", *la, *lb, *half(sa, zero), *half(sb, zero), "  }"]
        L += ["  workgroupBarrier();"]
    h1a, h1b = ("1u", "1u") if t.rows else (f"{ha}u", f"{hb}u")
    if t.db == 2:
        L += [f"  for (var kt = 0u; kt < {nk}u; kt = kt + 2u) {{", "   {"]
        L += step("kt", zero, zero, h1a, h1b)
        L += ["   }", f"   if (kt + 1u < {nk}u) {{"]
        L += step("(kt + 1u)", h1a, h1b, zero, zero)
        L += ["   }", "  }"]
    elif t.db:
        L += [f"  for (var kt = 0u; kt < {nk}u; kt = kt + 1u) {{"]
        if t.rows:
            L += ["    let ra = kt & 1u;"]
            L += step("kt", "ra", "ra", "(1u - ra)", "(1u - ra)")
        else:
            L += [f"    let ra = (kt & 1u) * {ha}u;", f"    let rb = (kt & 1u) * {hb}u;"]
            L += step("kt", "ra", "rb", f"({ha}u - ra)", f"({hb}u - rb)")
        L += ["  }"]
    else:
        L += ["  {", "    let k0 = 0u;", *la, *lb, "  }"]
        L += [f"  for (var kt = 0u; kt < {nk}u; kt = kt + 1u) {{", *half(sa, ""), *half(sb, "")]
        L += ["    workgroupBarrier();"]
        L += [f"    if (kt + 1u < {nk}u) {{", f"      let k0 = (kt + 1u) * {t.bk}u;"]
        L += ["  " + x for x in la + lb]
        L += ["    }"]
        L += compute("", "")
        L += ["    workgroupBarrier();", "  }"]
    # epilogue and stores
    d = kernel.out_dtype
    for g in range(gm):
        for j in range(4):
            m = f"m0 + {g * 4 * t.ty}u + ty * 4u + {j}u"
            for h in range(gn):
                n = f"n0 + {h * 4 * t.tx}u + tx * 4u"
                c = acc[g][j][h]
                L.append("  {")
                L.append(f"    let m = {m};")
                L.append(f"    let n = {n};")
                L.append(f"    let i = o_off + i32(m) * {plan.so_m} + i32(n) * {plan.so_n};")
                if out_vec:
                    vals = [to_bits(d, f"value(i + {cc}, {c}[{cc}])", pre) for cc in range(4)]
                    L.append(f"    out[u32(i) >> 2u] = vec4<u32>({', '.join(vals)});")
                else:
                    for cc in range(4):
                        ii = f"i + {cc * plan.so_n}"
                        v = to_bits(d, f"value({ii}, {c}[{cc}])", pre)
                        st = f"out[u32({ii})] = {v};"
                        if not fast:
                            st = f"if (m < {plan.m}u && n + {cc}u < {plan.n}u) {{ {st} }}"
                        L.append(f"    {st}")
                L.append("  }")
    L.append("}")
    return L


# ---- register tiles (no shared memory) ---------------------------------------------------------
def _reg_mode(op: Operand, ext: int, k: int, r: int) -> str:
    """'k': vec4 loads along k; 'mn': along the free dim; 's': scalar loads."""
    aligned = op.base % 4 == 0 and all(s % 4 == 0 for s in op.s_batch)
    if aligned and op.s_k == 1 and op.s_mn % 4 == 0 and k % 4 == 0:
        return "k"
    if aligned and op.s_mn == 1 and op.s_k % 4 == 0 and ext % 4 == 0 and r % 4 == 0:
        return "mn"
    return "s"


def _render_regs(kernel: Kernel, plan: Plan, t: RegTile, limits: dict[str, int]) -> Any:
    m_, n_, k_ = plan.m, plan.n, plan.k
    tiles_m = -(-m_ // (t.rm * t.wy))
    tiles_n = -(-n_ // (t.rn * t.wx))
    nbatch = 1
    for r in plan.batch:
        nbatch *= r
    if tiles_n > MAX_GROUPS or tiles_m * nbatch > MAX_GROUPS:
        return None
    red = kernel.reduction
    assert red is not None
    pre = _prelude(limits)
    value = _value_fn(kernel, red, pre)
    ma = _reg_mode(plan.a, m_, k_, t.rm)
    mb = _reg_mode(plan.b, n_, k_, t.rn)
    vec_slots = {op.slot for op, mode in ((plan.a, ma), (plan.b, mb)) if mode != "s"}
    out_vec = (
        plan.so_n == 1
        and plan.so_m % 4 == 0
        and all(s % 4 == 0 for s in plan.so_batch)
        and n_ % 4 == 0
    )
    lines: list[str] = []
    loads: list[str] = []
    for s, d in enumerate(kernel.arg_dtypes):
        ty = "vec4<f32>" if s in vec_slots else elem_type(d, pre)
        lines.append(f"@group(0) @binding({s}) var<storage, read> in{s}: array<{ty}>;")
        if s in vec_slots:
            loads.append(f"fn ld{s}(k: i32) -> f32 {{ return in{s}[u32(k) >> 2u][u32(k) & 3u]; }}")
        else:
            loads.append(_load_fn(s, d, pre))
    ot = "vec4<u32>" if out_vec else "u32"
    lines.append(f"@group(0) @binding({kernel.nargs}) var<storage, read_write> out: array<{ot}>;")
    main = _main_regs(kernel, plan, t, ma, mb, out_vec, tiles_m, pre)
    src = "\n".join([*pre.header(), *lines, "", pre.source(), *loads, "", *value, "", *main])
    src += "\n"
    p = WgslPass(src, kernel.nargs + 1, (tiles_n, tiles_m * nbatch))
    return WgslProgram((p,), kernel.nargs, kernel.size), t


def _main_regs(
    kernel: Kernel,
    plan: Plan,
    t: RegTile,
    ma: str,
    mb: str,
    out_vec: bool,
    tiles_m: int,
    pre: Any,
) -> list[str]:
    """main of the register-tiled product: the invocation's tile origin and operand indices,
    the k loop (four steps at a time, then the last k % 4), then the epilogue and stores."""
    k4 = plan.k - plan.k % 4
    L = _regs_head(plan, t, ma, mb, tiles_m, pre)
    if k4:
        L += _regs_k_loop(plan, t, ma, mb, k4)
    if k4 < plan.k:
        L += _regs_k_tail(plan, t, k4)
    red = kernel.reduction
    assert red is not None
    if not _straight(lambda p: _value_fn(kernel, red, p), {}):
        return L + _regs_store_loop(kernel, plan, t, out_vec, pre)
    return L + _regs_stores(kernel, plan, t, out_vec, pre)


def _regs_head(plan: Plan, t: RegTile, ma: str, mb: str, tiles_m: int, pre: Any) -> list[str]:
    """main's opening: the tile origin (m0, n0) of this invocation, the batch offsets, the
    operand rows (ar*, aq*) and columns (bc*, bq*) it reads, and the zeroed accumulators."""
    m_, n_ = plan.m, plan.n
    rm, rn, nq = t.rm, t.rn, t.rn // 4
    L = [
        f"@compute @workgroup_size({t.wx}, {t.wy})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>,",
        "        @builtin(local_invocation_id) lid: vec3<u32>) {",
        f"  let n0 = (wid.x * {t.wx}u + lid.x) * {rn}u;",
        f"  let m0 = ((wid.y % {tiles_m}u) * {t.wy}u + lid.y) * {rm}u;",
        f"  if (m0 >= {m_}u || n0 >= {n_}u) {{ return; }}",
        *_opq_init(pre),
        *_batch_offsets(plan, tiles_m),
    ]

    # operand rows (a) and columns (b) this invocation reads, clamped into the matrix: the
    # values past its edge are never stored
    def idx(name: str, org: str, count: int, step: int, ext: int) -> None:
        for q in range(count):
            v = f"{org} + {q * step}u"
            if ext % (count * step):  # a partial tile at the edge
                v = f"min({v}, {ext - step}u)"
            L.append(f"  let {name}{q} = i32({v});")

    idx("ar", "m0", rm, 1, m_)
    idx("bc", "n0", rn, 1, n_)
    if ma == "mn":
        idx("aq", "m0", rm // 4, 4, m_)
    if mb == "mn":
        idx("bq", "n0", nq, 4, n_)
    for i in range(rm):
        for jq in range(nq):
            L.append(f"  var c{i}_{jq} = vec4<f32>(0.0f);")
    return L


def _regs_k_loop(plan: Plan, t: RegTile, ma: str, mb: str, k4: int) -> list[str]:
    """The k loop over [0, k4), four steps per iteration: the operands' values for the four
    k (vec4 loads along k or along the free dim where the mode allows, else scalar loads),
    then rm x rn/4 vec4 multiply-adds per step."""
    rm, rn, nq = t.rm, t.rn, t.rn // 4
    a, b = plan.a, plan.b

    def a_val(i: int, kk: int) -> str:
        if ma == "k":
            return f"va{i}[{kk}]"
        if ma == "mn":
            return f"va{kk}_{i // 4}[{i % 4}]"
        return f"a{i}_{kk}"

    def b_vec(jq: int, kk: int) -> str:
        if mb == "mn":
            return f"vb{kk}_{jq}"
        if mb == "k":
            return f"vec4<f32>({', '.join(f'vb{4 * jq + c}[{kk}]' for c in range(4))})"
        return f"vec4<f32>({', '.join(f'b{4 * jq + c}_{kk}' for c in range(4))})"

    L = [f"  for (var k: i32 = 0; k < {k4}; k = k + 4) {{"]
    for i in range(rm):
        if ma == "k":
            L.append(f"    let va{i} = in{a.slot}[u32(a_off + ar{i} * {a.s_mn} + k) >> 2u];")
    if ma == "mn":
        for kk in range(4):
            for q in range(rm // 4):
                addr = f"a_off + aq{q} + (k + {kk}) * {a.s_k}"
                L.append(f"    let va{kk}_{q} = in{a.slot}[u32({addr}) >> 2u];")
    if ma == "s":
        for i in range(rm):
            for kk in range(4):
                addr = f"a_off + ar{i} * {a.s_mn} + (k + {kk}) * {a.s_k}"
                L.append(f"    let a{i}_{kk} = ld{a.slot}({addr});")
    if mb == "k":
        for j in range(rn):
            L.append(f"    let vb{j} = in{b.slot}[u32(b_off + bc{j} * {b.s_mn} + k) >> 2u];")
    if mb == "mn":
        for kk in range(4):
            for q in range(nq):
                addr = f"b_off + bq{q} + (k + {kk}) * {b.s_k}"
                L.append(f"    let vb{kk}_{q} = in{b.slot}[u32({addr}) >> 2u];")
    if mb == "s":
        for j in range(rn):
            for kk in range(4):
                addr = f"b_off + bc{j} * {b.s_mn} + (k + {kk}) * {b.s_k}"
                L.append(f"    let b{j}_{kk} = ld{b.slot}({addr});")
    for kk in range(4):
        for i in range(rm):
            av = f"vec4<f32>({a_val(i, kk)})"
            for jq in range(nq):
                L.append(f"    c{i}_{jq} = fma({av}, {b_vec(jq, kk)}, c{i}_{jq});")
    L.append("  }")
    return L


def _regs_k_tail(plan: Plan, t: RegTile, k4: int) -> list[str]:
    """The last k % 4 steps of the k loop, from scalar loads."""
    rm, rn, nq = t.rm, t.rn, t.rn // 4
    a, b = plan.a, plan.b
    L = [f"  for (var k: i32 = {k4}; k < {plan.k}; k = k + 1) {{"]
    for i in range(rm):
        L.append(f"    let a{i} = ld{a.slot}(a_off + ar{i} * {a.s_mn} + k * {a.s_k});")
    for j in range(rn):
        L.append(f"    let b{j} = ld{b.slot}(b_off + bc{j} * {b.s_mn} + k * {b.s_k});")
    for i in range(rm):
        for jq in range(nq):
            bv = f"vec4<f32>({', '.join(f'b{4 * jq + c}' for c in range(4))})"
            L.append(f"    c{i}_{jq} = fma(vec4<f32>(a{i}), {bv}, c{i}_{jq});")
    L.append("  }")
    return L


def _regs_store_loop(kernel: Kernel, plan: Plan, t: RegTile, out_vec: bool, pre: Any) -> list[str]:
    """The stores for an epilogue with branches (tanh, erf, ...): one copy of it in a loop over
    the accumulators, not rm * rn inlined copies (SwiftShader's compile time explodes)."""
    d = kernel.out_dtype
    rm, nq = t.rm, t.rn // 4
    L = [f"  var res: array<vec4<f32>, {rm * nq}>;"]
    L += [f"  res[{i * nq + jq}] = c{i}_{jq};" for i in range(rm) for jq in range(nq)]
    L += [
        f"  for (var q = 0u; q < {rm * nq * 4}u; q = q + 1u) {{",
        f"    let m = m0 + q / {nq * 4}u;",
        f"    let n = n0 + q % {nq * 4}u;",
        f"    let i = o_off + i32(m) * {plan.so_m} + i32(n) * {plan.so_n};",
        f"    let v = {to_bits(d, 'value(i, res[q / 4u][q % 4u])', pre)};",
    ]
    if out_vec:  # the output binding is vec4: store one component
        L.append(
            f"    if (m < {plan.m}u && n < {plan.n}u) {{ out[u32(i) >> 2u][u32(i) & 3u] = v; }}"
        )
    else:
        L.append(f"    if (m < {plan.m}u && n < {plan.n}u) {{ out[u32(i)] = v; }}")
    L += ["  }", "}"]
    return L


def _regs_stores(kernel: Kernel, plan: Plan, t: RegTile, out_vec: bool, pre: Any) -> list[str]:
    """The epilogue inlined at each accumulator's store (a vec4 store of four outputs where the
    output binding is vec4, else four guarded scalar stores), and main's end."""
    m_, n_ = plan.m, plan.n
    d = kernel.out_dtype
    L: list[str] = []
    for i in range(t.rm):
        for jq in range(t.rn // 4):
            c = f"c{i}_{jq}"
            L.append("  {")
            L.append(f"    let m = m0 + {i}u;")
            L.append(f"    let n = n0 + {4 * jq}u;")
            L.append(f"    let i = o_off + i32(m) * {plan.so_m} + i32(n) * {plan.so_n};")
            if out_vec:
                vals = [to_bits(d, f"value(i + {cc}, {c}[{cc}])", pre) for cc in range(4)]
                st = f"out[u32(i) >> 2u] = vec4<u32>({', '.join(vals)});"
                L.append(f"    if (m < {m_}u && n < {n_}u) {{ {st} }}")
            else:
                for cc in range(4):
                    ii = f"i + {cc * plan.so_n}"
                    v = to_bits(d, f"value({ii}, {c}[{cc}])", pre)
                    L.append(f"    if (m < {m_}u && n + {cc}u < {n_}u) {{ out[u32({ii})] = {v}; }}")
            L.append("  }")
    L.append("}")
    return L
