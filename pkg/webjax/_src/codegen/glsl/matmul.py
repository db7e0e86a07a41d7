"""Tiled matrix products for the webgl codegen: packed operands, register tiles, an unpack pass.

A float32 matrix product (ir/matmul.py's `match`: any strides, batch dimensions, transposed
operands and outputs) becomes four draws instead of one fragment per output whose loop fetches
two texels per multiply-add:

1. pack a: an RGBA32UI texture whose texel (kq, row) holds a[row, 4kq .. 4kq+3] (4 consecutive
   k), rows padded to a multiple of the tile (batches stacked: row = batch * Mp + m), zeros past
   the edges; only what a reads, so transposed operands cost nothing more;
2. pack b, the same with b's columns as rows (b transposed); an operand that no batch digit moves
   is packed once;
3. the product: each fragment computes an RM x RN block of outputs with vec4 dot products, so a
   k step of 4 fetches RM + RN texels for 4 * RM * RN multiply-adds, and writes the block as
   RM * RN / 4 RGBA32UI texels, 4 outputs per texel in the block's row-major order, one in
   each layer of a texture array (the layers are its render targets, MRT);
4. unpack: one fragment per output word of the R32UI output, which fetches its block texel from
   the layer that holds it (one fetch from one sampler: with a texture per target it was a
   branch over as many samplers, which CPU implementations run for every target, since the
   fragments they run side by side take different branches: 11.9 -> 2.8 ms at 512^2 on
   llvmpipe) and applies the kernel's epilogue (bias, activation, casts: everything around the
   REDUCE).

Each output's products are summed in k order four at a time (a dot product's own order inside):
results differ from the sequential reference by float rounding only. Products below `MIN_MACS`
(or with a side below `MIN_DIM`) keep the generic kernels, which are bit-exact.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from ...ir.exp import Exp
from ...ir.kernel import Kernel
from ...ir.matmul import Operand, Plan, match
from .expr import Prelude, Scope, check_dtype, compute_type, load_fn, to_bits

__all__ = ["MIN_MACS", "MatmulPasses", "MatmulPlan", "Rgba", "Tile", "plan_for", "render"]

MIN_MACS = 1 << 18
MIN_DIM = 4
MAX_K4 = 16384  # k steps of 4 in one fragment's loop (llvmpipe stops loops at 65535 in all)


@dataclass(frozen=True)
class Tile:
    rm: int  # output rows per fragment
    rn: int  # output columns per fragment

    @property
    def targets(self) -> int:
        return self.rm * self.rn // 4

    def __str__(self) -> str:
        return f"{self.rm}x{self.rn} outputs per fragment, {self.targets} render targets (layers)"


# (tile, the fewest multiply-adds it is taken for), largest first; `choose_tile` takes the first
# whose render targets the context has (ES 3.0 promises 4; SwiftShader and llvmpipe have 8) and
# whose threshold the product reaches. On SwiftShader (Chromium, 2 shared cores, noisy) 4x8 ran
# matmul 1024 at 7.3 GFLOP/s and the MLP step at 11.7 steps/s where 4x4 ran 3.2 and 7.8 (1.5x
# and 1.3x TF.js's WebGL backend against 1.3x and 0.8x in runs side by side). At 256^3 an
# earlier best-of-several had 4x4 ahead (8.7 ms a product against 12-13); timed by GPU queries
# in 8 alternating rounds (the layered product, a loaded machine) 4x8 was faster in every round,
# median 9.6 against 11.9 ms, so 256^3 takes 4x8 too.
TILES = ((Tile(4, 8), 1 << 24), (Tile(4, 4), 0))
UNROLL = 2  # k steps of 4 per loop iteration
# Set (or WEBJAX_GLSL_MATMUL_TILE="rm,rn") to force one tile (benchmarks, tests).
FORCE_TILE: Tile | None = None


def choose_tile(limits: dict[str, int], macs: int) -> Tile:
    t = FORCE_TILE
    spec = os.environ.get("WEBJAX_GLSL_MATMUL_TILE", "")
    if t is None and spec:
        rm, rn = (int(v) for v in spec.split(","))
        t = Tile(rm, rn)
    targets = limits.get("max_draw_buffers", 4)
    if t is None:
        fits = [c for c, least in TILES if c.targets <= targets and macs >= least]
        t = fits[0] if fits else TILES[-1][0]
    assert (t.rm * t.rn) % 4 == 0 and t.targets <= targets, t
    return t


@dataclass(frozen=True)
class Rgba:
    """A scratch RGBA32UI texture of `width` x `height` texels (16 bytes each); with `layers`
    > 1 a texture array, drawn as that many render targets (layer j is target j) and sampled
    as a `usampler2DArray`."""

    width: int
    height: int
    layers: int = 1


@dataclass(frozen=True)
class MatmulPlan:
    plan: Plan
    tile: Tile
    mp: int  # rows padded to the tile
    np_: int  # columns padded to the tile
    k4: int  # k steps of 4
    nbatch: int
    a_batched: bool
    b_batched: bool
    a_h: int  # rows of a packed operand's texture: past it, the rows go on in a strip of
    b_h: int  # k4 more columns to the right (row R at (R / h * k4 + kq, R % h))

    @property
    def a_rows(self) -> int:
        return (self.nbatch if self.a_batched else 1) * self.mp

    @property
    def b_rows(self) -> int:
        return (self.nbatch if self.b_batched else 1) * self.np_


def plan_for(kernel: Kernel, limits: dict[str, int]) -> MatmulPlan | None:
    """The tiled form of `kernel` when it is a product worth tiling that fits the device's
    textures and texture units, else None (the generic kernels run it)."""
    if kernel.out_dtype.itemsize != 4:
        return None
    plan = match(kernel, MIN_DIM, MIN_MACS)
    if plan is None:
        return None
    t = choose_tile(limits, plan.m * plan.n * plan.k * max(1, math.prod(plan.batch)))
    nbatch = 1
    for r in plan.batch:
        nbatch *= r
    mp = -(-plan.m // t.rm) * t.rm
    np_ = -(-plan.n // t.rn) * t.rn
    k4 = -(-plan.k // 4)
    a_b, b_b = any(plan.a.s_batch), any(plan.b.s_batch)
    size = limits.get("max_texture_size", 4096)
    if k4 > MAX_K4 or nbatch * mp // t.rm > size or np_ // t.rn > size:
        return None
    if kernel.nargs + 1 > limits.get("max_textures", 16):  # the unpack's samplers
        return None
    a_rows, b_rows = (nbatch if a_b else 1) * mp, (nbatch if b_b else 1) * np_
    a_h, b_h = min(a_rows, size), min(b_rows, size)  # size: a power of two, so a tile's
    if k4 * -(-a_rows // a_h) > size or k4 * -(-b_rows // b_h) > size:  # rows share a strip
        return None
    return MatmulPlan(plan, t, mp, np_, k4, nbatch, a_b, b_b, a_h, b_h)


_HEAD = [
    "#version 300 es",
    "precision highp float;",
    "precision highp int;",
    "precision highp usampler2D;",
    "uniform int u_zero;",
    "uniform int u_ow;",
]


def _div(x: str, c: int) -> str:
    """x / c for x >= 0 (a shift where c is a power of two: integer division is slow on CPU
    implementations, which emulate it lane by lane)."""
    return f"({x} >> {c.bit_length() - 1})" if c & (c - 1) == 0 else f"({x} / {c})"


def _mod(x: str, c: int) -> str:
    """x % c for x >= 0."""
    return f"({x} & {c - 1})" if c & (c - 1) == 0 else f"({x} % {c})"


def _batch_offset(name: str, strides: tuple[int, ...], ranges: tuple[int, ...], b: str) -> str:
    """`int name = ...`: the offset of flat batch index `b` (digits least significant first)."""
    terms, acc = [], 1
    for s, r in zip(strides, ranges):
        if s and r > 1:
            terms.append(f"(({b} / {acc}) % {r}) * {s}")
        acc *= r
    return f"  int {name} = {' + '.join(terms) if terms else '0'};"


def _pack_pass(op: Operand, ext: int, extp: int, h: int, mp: MatmulPlan) -> str:
    """Texel (kq, row) = op[row, 4kq .. 4kq + 3] as raw float32 words; row = batch * extp + m
    when a batch digit moves the operand, else m; zeros past m's and k's ends."""
    plan = mp.plan
    batched = any(op.s_batch)
    lines = [
        *_HEAD,
        "uniform highp usampler2D in0;",
        "uniform int u_w0;",
        "layout(location = 0) out uvec4 o;",
        "uint ld(int k) {",
        "  return texelFetch(in0, ivec2(k & ((1 << u_w0) - 1), k >> u_w0), 0).r;",
        "}",
        "void main() {",
        "  ivec2 p = ivec2(gl_FragCoord.xy);",
    ]
    if h < (mp.nbatch if batched else 1) * extp:  # rows in strips
        lines += [
            f"  int s = p.x / {mp.k4};",
            f"  int kq = p.x - s * {mp.k4};",
            f"  int y = s * {h} + p.y;",
        ]
    else:
        lines += ["  int kq = p.x;", "  int y = p.y;"]
    if batched:
        lines += [f"  int b = y / {extp};", f"  int m = y - b * {extp};"]
        lines.append(_batch_offset("boff", op.s_batch, plan.batch, "b"))
    else:
        lines += ["  int m = y;", "  int boff = 0;"]
    lines += [
        "  uvec4 w = uvec4(0u);",
        f"  if (m < {ext}) {{",
        f"    int off = {op.base} + boff + m * {op.s_mn} + kq * {4 * op.s_k};",
    ]
    for c in range(4):
        st = f"w[{c}] = ld(off + {c * op.s_k});"
        if plan.k % 4:
            st = f"if (4 * kq + {c} < {plan.k}) {{ {st} }}"
        lines.append(f"    {st}")
    lines += ["  }", "  o = w;", "}"]
    return "\n".join(lines) + "\n"


def _product_pass(mp: MatmulPlan) -> str:
    """Fragment (nb, y), y = batch * Mb + mb: the block of rows mb*RM.. and columns nb*RN.., as
    RM * RN / 4 texels in render targets o0.. (4 outputs each, the block's row-major order)."""
    t = mp.tile
    mb = mp.mp // t.rm
    lines = [
        *_HEAD,
        "uniform highp usampler2D in0;",
        "uniform highp usampler2D in1;",
        *[f"layout(location = {j}) out uvec4 o{j};" for j in range(t.targets)],
        "void main() {",
        "  ivec2 p = ivec2(gl_FragCoord.xy);",
    ]
    if mp.nbatch > 1:
        lines += [f"  int b = {_div('p.y', mb)};", f"  int mb = p.y - b * {mb};"]
    else:
        lines += ["  int b = 0;", "  int mb = p.y;"]
    lines += [
        f"  int ar = {f'b * {mp.mp} + ' if mp.a_batched else ''}mb * {t.rm};",
        f"  int bc = {f'b * {mp.np_} + ' if mp.b_batched else ''}p.x * {t.rn};",
    ]
    for name, h, rows in (("ar", mp.a_h, mp.a_rows), ("bc", mp.b_h, mp.b_rows)):
        if h < rows:  # rows in strips (a tile's rows share one)
            lines.append(f"  int {name}x = {_div(name, h)} * {mp.k4};")
            lines.append(f"  {name} = {_mod(name, h)};")
        else:
            lines.append(f"  int {name}x = 0;")
    for r in range(t.rm):
        for c in range(t.rn):
            lines.append(f"  float c{r}_{c} = 0.0;")

    def step(kq: str, ind: str) -> list[str]:
        out = []
        for r in range(t.rm):
            fetch = f"texelFetch(in0, ivec2(arx + {kq}, ar + {r}), 0)"
            out.append(f"{ind}vec4 a{r} = uintBitsToFloat({fetch});")
        for c in range(t.rn):
            fetch = f"texelFetch(in1, ivec2(bcx + {kq}, bc + {c}), 0)"
            out.append(f"{ind}vec4 b{c} = uintBitsToFloat({fetch});")
        for r in range(t.rm):
            for c in range(t.rn):
                out.append(f"{ind}c{r}_{c} += dot(a{r}, b{c});")
        return out

    u = UNROLL
    main = mp.k4 - mp.k4 % u
    if main:
        lines.append(f"  for (int kq = 0; kq < {main}; kq += {u}) {{")
        for j in range(u):
            lines += ["    {", *step(f"kq + {j}" if j else "kq", "      "), "    }"]
        lines.append("  }")
    for kq in range(main, mp.k4):
        lines += ["  {", *step(str(kq), "    "), "  }"]
    outs = [f"c{r}_{c}" for r in range(t.rm) for c in range(t.rn)]
    for j in range(t.targets):
        vals = ", ".join(f"floatBitsToUint({v})" for v in outs[4 * j : 4 * j + 4])
        lines.append(f"  o{j} = uvec4({vals});")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _epilogue_fn(kernel: Kernel, red: Exp, pre: Prelude) -> list[str]:
    """`value(int i, float acc)`: the kernel's output at flat index i given its REDUCE's value."""
    order = kernel.exp.toposort()
    need = {id(kernel.exp)}
    for n in reversed(order):
        if id(n) in need and n is not red:
            need.update(id(s) for s in n.src)
    scope = Scope()
    scope.names[id(red)] = "acc"
    lines = [f"{compute_type(kernel.out_dtype)} value(int i, float acc) {{"]
    scope.emit([n for n in order if id(n) in need and n is not red], lines, "  ", pre)
    lines += [f"  return {scope.names[id(kernel.exp)]};", "}"]
    return lines


def _unpack_pass(kernel: Kernel, mp: MatmulPlan, limits: dict[str, int] | None) -> str:
    """One fragment per output element (4-byte outputs): its block texel's word, then the
    epilogue. Samplers: the kernel's inputs (the epilogue's loads), then the product's texture
    array."""
    red = kernel.reduction
    assert red is not None
    plan, t = mp.plan, mp.tile
    pre = Prelude(limits)
    for a in kernel.arg_dtypes:
        check_dtype(a)
    value = _epilogue_fn(kernel, red, pre)
    loads = [load_fn(k, a, pre) for k, a in enumerate(kernel.arg_dtypes)]
    n_in = kernel.nargs
    layered = t.targets > 1  # one target: a plain texture
    samplers = [f"uniform highp usampler2D in{k};" for k in range(n_in)]
    samplers.append(f"uniform highp usampler2D{'Array' if layered else ''} in{n_in};")
    at = "ivec3(xy, q >> 2)" if layered else "xy"
    widths = [f"uniform int u_w{k};" for k in range(n_in)]

    def coord(ext: int, stride: int) -> str:
        if ext == 1:
            return "0"
        q = _div("i", stride) if stride > 1 else "i"
        return q if stride * ext == kernel.size else _mod(q, ext)

    lines = [
        *_HEAD,
        *samplers,
        *widths,
        "layout(location = 0) out uvec4 o;",
        pre.source(),
        *loads,
        *value,
        "void main() {",
        "  ivec2 p = ivec2(gl_FragCoord.xy);",
        "  int i = (p.y << u_ow) + p.x;",
        "  uint w = 0u;",
        f"  if (i < {kernel.size}) {{",
        f"    int m = {coord(plan.m, plan.so_m)};",
        f"    int n = {coord(plan.n, plan.so_n)};",
    ]
    terms, acc = [], 1
    for s, r in zip(plan.so_batch, plan.batch):
        terms.append(f"{coord(r, s)} * {acc}")
        acc *= r
    lines.append(f"    int b = {' + '.join(terms) if terms else '0'};")
    lines += [
        f"    int q = {_mod('m', t.rm)} * {t.rn} + {_mod('n', t.rn)};",
        f"    ivec2 xy = ivec2({_div('n', t.rn)}, b * {mp.mp // t.rm} + {_div('m', t.rm)});",
        f"    uvec4 u = texelFetch(in{n_in}, {at}, 0);",
    ]
    d = kernel.out_dtype
    lines += [
        f"    {compute_type(d)} v = value(i, uintBitsToFloat(u[q & 3]));",
        f"    w = {to_bits(d, 'v', pre)};",
        "  }",
        "  o = uvec4(w, 0u, 0u, 0u);",
        "}",
    ]
    return "\n".join(s for s in lines if s) + "\n"


@dataclass(frozen=True)
class MatmulPasses:
    """The four draws' sources and shapes, for glsl/kernel.py to turn into GlslPasses."""

    pack_a: str
    pack_b: str
    product: str
    unpack: str
    a_tex: Rgba
    b_tex: Rgba
    out_tex: Rgba  # the product's texture array, a layer per render target
    a_slot: int
    b_slot: int


def render(kernel: Kernel, mp: MatmulPlan, limits: dict[str, int] | None) -> MatmulPasses:
    plan = mp.plan
    return MatmulPasses(
        pack_a=_pack_pass(plan.a, plan.m, mp.mp, mp.a_h, mp),
        pack_b=_pack_pass(plan.b, plan.n, mp.np_, mp.b_h, mp),
        product=_product_pass(mp),
        unpack=_unpack_pass(kernel, mp, limits),
        a_tex=Rgba(mp.k4 * -(-mp.a_rows // mp.a_h), mp.a_h),
        b_tex=Rgba(mp.k4 * -(-mp.b_rows // mp.b_h), mp.b_h),
        out_tex=Rgba(mp.np_ // mp.tile.rn, mp.nbatch * mp.mp // mp.tile.rm, mp.tile.targets),
        a_slot=plan.a.slot,
        b_slot=plan.b.slot,
    )
