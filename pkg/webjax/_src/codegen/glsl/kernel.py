"""GLSL codegen: a Kernel becomes one fragment shader drawn over its output texture.

The output buffer is an R32UI texture (glsl/expr.py); each fragment owns one texel, that is
one word: 1 element of a 32-bit dtype, 2 of a 16-bit one, 4 of an 8-bit one. A full-screen
triangle covers the texels the runtime draws (rows of the texture's width); each fragment finds
its texel from `gl_FragCoord`, computes its elements with `value(i)` and packs their bits. A
REDUCE is a loop inside `value`, hoisting what does not depend on the reduction index; loops
longer than `MAX_LOOP` nest, since some compilers (Mesa's) cap one loop's iterations.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dtypes import DType
from ...ir import scalar
from ...ir.exp import Exp
from ...ir.kernel import Kernel, split_reduction
from ...ir.ops import Op
from . import matmul as glsl_matmul
from .expr import (
    GlslUnsupported,
    Prelude,
    Scope,
    check_dtype,
    compute_type,
    const_expr,
    load_fn,
    render_op,
    supports_dtype,
    to_bits,
)

__all__ = [
    "GlslPass",
    "GlslProgram",
    "GlslUnsupported",
    "Rgba",
    "VERTEX",
    "render",
    "supports_dtype",
]
Rgba = glsl_matmul.Rgba

MAX_LOOP = 32768  # iterations of one loop (the rest nests)
# Loop iterations one fragment may run: Mesa's llvmpipe stops every loop of a shader invocation
# once 65535 iterations were run in all; long reductions split into passes to stay below.
LOOP_BUDGET = 16384

VERTEX = """#version 300 es
void main() {
  vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
"""


@dataclass(frozen=True)
class GlslPass:
    """One draw: a fragment shader over `texels` output texels (4 bytes each), or over the
    `grid` (width, rows) of an Rgba scratch texture. It samples `reads` as in0..: kernel input
    k is `k`, scratch buffer j is `-1 - j`; its widths' log2 go in uniforms u_w0..; it writes
    the kernel's output (`writes` -1) or scratch buffer `writes` (every layer of a layered
    one, as render targets 0..). The output width's log2 goes in `u_ow`; `u_zero` is 0."""

    source: str
    texels: int
    reads: tuple[int, ...]
    writes: int
    grid: tuple[int, int] | None = None


@dataclass(frozen=True)
class GlslProgram:
    """The draws of one kernel, in order, and the scratch buffers they pass on: R32UI buffers
    (int: bytes) or RGBA32UI textures (Rgba: texels)."""

    passes: tuple[GlslPass, ...]
    scratch: tuple[int | Rgba, ...]
    nargs: int
    note: str = ""  # how it was scheduled (the tiled matmul's tile), for profiles and benches

    @property
    def source(self) -> str:
        return "\n".join(p.source for p in self.passes)


def _depends_on_ridx(nodes: list[Exp]) -> set[int]:
    dep: set[int] = set()
    for n in nodes:
        if n.op is Op.RIDX or any(id(s) in dep for s in n.src):
            dep.add(id(n))
    return dep


def _value_fn(kernel: Kernel, pre: Prelude) -> list[str]:
    order = kernel.exp.toposort()
    for n in order:
        check_dtype(n.dtype)
    red = kernel.reduction
    scope = Scope()
    lines = [f"{compute_type(kernel.out_dtype)} value(int i) {{"]
    if red is not None:
        combine, rsize = red.arg
        body = red.src[0]
        body_nodes = body.toposort()
        inner = _depends_on_ridx(body_nodes)
        scope.emit([n for n in body_nodes if id(n) not in inner], lines, "  ", pre)
        ct = compute_type(red.dtype)
        # through the barrier: with the loop unrolled, 0.0 + x must not fold to x (-0.0 + 0.0)
        barrier = pre if red.dtype.kind == "f" else None
        init = const_expr(scalar.identity(combine, red.dtype), red.dtype, barrier)
        lines.append(f"  {ct} acc = {init};")
        if rsize > MAX_LOOP:
            lines += [
                f"  for (int r0 = 0; r0 < {rsize}; r0 += {MAX_LOOP}) {{",
                f"    int n = min({MAX_LOOP}, {rsize} - r0);",
                "    for (int r1 = 0; r1 < n; r1++) {",
                "      int r = r0 + r1;",
            ]
            ind = "      "
        else:
            lines.append(f"  for (int r = 0; r < {rsize}; r++) {{")
            ind = "    "
        loop_scope = Scope()
        loop_scope.names = dict(scope.names)
        loop_scope.count = scope.count
        loop_scope.emit([n for n in body_nodes if id(n) in inner], lines, ind, pre)
        b = loop_scope.names[id(body)]
        lines.append(f"{ind}acc = {render_op(combine, red.dtype, red.dtype, ['acc', b], pre)};")
        lines.append("    }" if rsize > MAX_LOOP else "  }")
        if rsize > MAX_LOOP:
            lines.append("  }")
        scope.count = loop_scope.count
        scope.names[id(red)] = "acc"
    # the epilogue: what the root reaches without entering the REDUCE body
    need = {id(kernel.exp)}
    for n in reversed(order):
        if id(n) in need and n.op is not Op.REDUCE:
            need.update(id(s) for s in n.src)
    scope.emit([n for n in order if id(n) in need], lines, "  ", pre)
    lines += [f"  return {scope.names[id(kernel.exp)]};", "}"]
    return lines


def _per_texel(d: DType) -> int:
    return 4 // d.itemsize


def render(kernel: Kernel, limits: dict[str, int] | None = None) -> GlslProgram:
    """The draws for `kernel`. A reduction whose loop would run more than LOOP_BUDGET
    iterations in one fragment is split (ir.kernel.split_reduction) into partials written to a
    scratch texture and a reduction of those, again split if still too long."""
    if limits is not None:
        mp = glsl_matmul.plan_for(kernel, limits)
        if mp is not None:
            return _render_matmul(kernel, mp, limits)
    passes: list[GlslPass] = []
    scratch: list[int | Rgba] = []
    slots = list(range(kernel.nargs))  # what each slot of the current kernel reads
    while True:
        red = kernel.reduction
        if red is not None:
            rsize = red.arg[1]
            if min(_per_texel(kernel.out_dtype), kernel.size) * rsize > LOOP_BUDGET:
                chunk = max(1, LOOP_BUDGET // _per_texel(red.dtype))
                first, kernel = split_reduction(kernel, -(-rsize // chunk))
                j = len(scratch)
                scratch.append(first.size * red.dtype.itemsize)
                passes.append(_render_pass(first, tuple(slots), j, limits))
                slots.append(-1 - j)
                continue
        passes.append(_render_pass(kernel, tuple(slots), -1, limits))
        return GlslProgram(tuple(passes), tuple(scratch), len(slots) - len(scratch))


def _render_matmul(
    kernel: Kernel, mp: glsl_matmul.MatmulPlan, limits: dict[str, int]
) -> GlslProgram:
    """The tiled product (glsl/matmul.py): pack a, pack b, the product into the layers of a
    texture array (MRT), the unpack with the epilogue into the output."""
    mm = glsl_matmul.render(kernel, mp, limits)
    scratch: tuple[int | Rgba, ...] = (mm.a_tex, mm.b_tex, mm.out_tex)
    grid_a, grid_b = (mm.a_tex.width, mm.a_tex.height), (mm.b_tex.width, mm.b_tex.height)
    grid_o = (mm.out_tex.width, mm.out_tex.height)
    passes = (
        GlslPass(mm.pack_a, 0, (mm.a_slot,), 0, grid_a),
        GlslPass(mm.pack_b, 0, (mm.b_slot,), 1, grid_b),
        GlslPass(mm.product, 0, (-1, -2), 2, grid_o),
        GlslPass(mm.unpack, kernel.size, (*range(kernel.nargs), -3), -1),
    )
    return GlslProgram(passes, scratch, kernel.nargs, str(mp.tile))


def _render_pass(
    kernel: Kernel, reads: tuple[int, ...], writes: int, limits: dict[str, int] | None
) -> GlslPass:
    d = kernel.out_dtype
    check_dtype(d)
    for a in kernel.arg_dtypes:
        check_dtype(a)
    pre = Prelude(limits)
    value = _value_fn(kernel, pre)
    loads = [load_fn(k, a, pre) for k, a in enumerate(kernel.arg_dtypes)]
    per_word = 4 // d.itemsize
    texels = -(-kernel.size // per_word)  # one 32-bit word per texel
    bits = to_bits(d, "v", pre)
    if per_word == 1:
        word = [
            "  uint w = 0u;",
            f"  if (t < {kernel.size}) {{ {compute_type(d)} v = value(t); w = {bits}; }}",
        ]
    else:
        word = [
            "  uint w = 0u;",
            f"  for (int l = 0; l < {per_word}; l++) {{",
            f"    int i = t * {per_word} + l;",
            f"    if (i < {kernel.size}) {{",
            f"      {compute_type(d)} v = value(i);",
            f"      w |= ({bits}) << uint(l * {8 * d.itemsize});",
            "    }",
            "  }",
        ]
    samplers = [f"uniform highp usampler2D in{k};" for k in range(kernel.nargs)]
    widths = [f"uniform int u_w{k};" for k in range(kernel.nargs)]
    src = [
        "#version 300 es",
        "precision highp float;",
        "precision highp int;",
        "precision highp usampler2D;",
        "uniform int u_zero;",
        "uniform int u_ow;",
        *samplers,
        *widths,
        "layout(location = 0) out uvec4 o;",
        pre.source(),
        *loads,
        *value,
        "void main() {",
        "  ivec2 p = ivec2(gl_FragCoord.xy);",
        "  int t = (p.y << u_ow) + p.x;",
        *word,
        "  o = uvec4(w, 0u, 0u, 0u);",
        "}",
    ]
    return GlslPass("\n".join(s for s in src if s) + "\n", texels, reads, writes)
