"""WGSL codegen: a Kernel becomes compute shaders (the same text runs on wgpu and in browsers).

Values, their storage in buffers and the ops on them are rendered by wgsl/expr.py; this module
picks each kernel's schedule (elementwise, lanes, one-pass, grouped and two-pass reductions, the
tiled matmuls of wgsl/matmul.py) and probes the device.
On CPU implementations of WebGPU (SwiftShader, lavapipe) no shader uses workgroup barriers: they
run every invocation of a workgroup with a barrier as a fiber, at about 0.5 us each (`render`).
"""

from __future__ import annotations

import math
import random
import struct
from dataclasses import dataclass

from ... import dtypes as dt
from ...dtypes import DType
from ...ir import scalar
from ...ir.exp import Exp
from ...ir.kernel import Kernel
from ...ir.ops import Op
from . import matmul as wgsl_matmul
from .expr import (
    _CT,
    LANES,
    WgslUnsupported,
    _emit,
    _f32_bits,
    _load_fn,
    _node_expr,
    _opq_init,
    _Prelude,
    _Scope,
    _straight,
    _value_fn,
    const_expr,
    elem_type,
    from_elem,
    native_f16,
    per_word,
    render_op,
    to_bits,
    to_elem,
)
from .program import WgslPass, WgslProgram

PLATFORM = "webgpu"
WORKGROUP = 64
MAX_GROUPS_X = 65535
_MAX_LOOP = 65535  # iterations of one loop that every implementation runs (llvmpipe caps here)
# GPUs: workgroup trees for long reductions with few outputs
REDUCE_THREADS = 256  # invocations per output in grouped reductions
GROUPED_MIN_RSIZE = 256  # reductions at least this long with
GROUPED_MAX_WORDS = 65536  # ... at most this many output words run grouped
SPLIT_MIN_CHUNK = 16 * REDUCE_THREADS  # two-pass reductions: at least this much per workgroup
SPLIT_TARGET_GROUPS = 1024  # ... and about this many workgroups in the first pass
# CPU implementations: no barriers; two passes with contiguous partials
SPLIT_THREADS = 4096  # two-pass reductions aim for about this many first-pass invocations,
SPLIT_MIN_TERMS = 256  # ... each combining at least this many terms,
SPLIT_MAX_PARTS = 4096  # ... and at most this many partial results per output
CPU_ITEMS = 16  # consecutive output words (or quads) per invocation on CPU implementations,
CPU_MIN_INVOCATIONS = 1024  # ... fewer when that would leave fewer invocations than this
CPU_CHAINS = 4  # split partials: steps per loop iteration, each into its own accumulators


def supports_dtype(d: DType) -> bool:
    return d.name in _CT


def check_dtype(d: DType) -> None:
    if d.name not in _CT:
        hint = " (WGSL has no 64-bit floats; use float32)" if d.name == "float64" else ""
        raise WgslUnsupported(f"dtype {d.name} is not supported on the webgpu device{hint}")


# ---- kernel rendering ---------------------------------------------------------------------------
def _uses_ridx(node: Exp, memo: dict[int, bool]) -> bool:
    r = memo.get(id(node))
    if r is None:
        # the REDUCE itself is loop-invariant: only its body is per-iteration
        r = node.op is Op.RIDX or (
            node.op is not Op.REDUCE and any(_uses_ridx(s, memo) for s in node.src)
        )
        memo[id(node)] = r
    return r


# ---- lanes: four consecutive indices per invocation ---------------------------------------------
# Evaluating an expression at x = 4q + j for j = 0..3 in one invocation lets loads whose index is
# "x plus a multiple of 4" become one vec4 load (a 16-byte access per invocation instead of four
# scattered ones: CPU implementations of WebGPU such as SwiftShader and lavapipe gain several-fold,
# GPUs a little). Values that do not depend on j are computed once.
def _lane_kinds(nodes: list[Exp], sym: Exp | None) -> dict[int, tuple[int, bool]]:
    """Per node (`nodes` in dependency order), how it varies with j when sym = 4q + j:
    (0, al): the same for every j; (1, al): int32 value(4q) + j; (2, False): otherwise.
    `al`: the int32 value at j = 0 is a multiple of 4 for every q."""
    kinds: dict[int, tuple[int, bool]] = {}
    for n in nodes:
        op = n.op
        if n is sym:
            k = (1, True)
        elif op is Op.CONST:
            k = (0, n.dtype is dt.int32 and int(n.arg) % LANES == 0)
        elif n.dtype is dt.int32 and op in (Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD):
            k = _lane_arith(n, kinds[id(n.src[0])], kinds[id(n.src[1])])
        else:
            k = (0, False) if all(kinds[id(c)][0] == 0 for c in n.src) else (2, False)
        kinds[id(n)] = k
    return kinds


def _lane_arith(n: Exp, ka: tuple[int, bool], kb: tuple[int, bool]) -> tuple[int, bool]:
    (ca, aa), (cb, ab) = ka, kb
    op, (a, b) = n.op, n.src
    if ca == 2 or cb == 2:
        return (2, False)
    if op is Op.ADD:
        return (ca + cb, aa and ab) if ca + cb <= 1 else (2, False)
    if op is Op.SUB:
        return (ca, aa and ab) if cb == 0 else (2, False)
    if op is Op.MUL:
        if ca == 0 and cb == 0:
            return (0, aa or ab)
        other = b if ca else a
        if other.is_const and int(other.arg) == 1:
            return (1, aa if ca else ab)
        return (2, False)
    # DIV, MOD (C-style: exact reasoning needs a non-negative dividend)
    if not (b.is_const and int(b.arg) > 0):
        return (0, False) if ca == cb == 0 else (2, False)
    k = int(b.arg)
    if ca == 0:
        return (0, op is Op.MOD and aa and k % LANES == 0)
    rng = a.vrange
    if aa and k % LANES == 0 and rng is not None and rng[0] >= 0:
        # (b + j) // k == b // k and (b + j) % k == b % k + j when 4 | b, 4 | k, j < 4
        return (0, False) if op is Op.DIV else (1, True)
    return (2, False)


def _vec_loads(
    nodes: list[Exp], kinds: dict[int, tuple[int, bool]], limits: dict[str, int]
) -> set[int]:
    """Slots that `nodes` read at lane-contiguous, aligned indices (one vec4 per invocation):
    32-bit dtypes, and float16 bound as f16 (limits["f16"])."""
    return {
        n.arg
        for n in nodes
        if n.op is Op.LOAD and per_word(n.dtype, limits) == 1 and kinds[id(n.src[0])] == (1, True)
    }


def _emit_lanes(
    nodes: list[Exp],
    kinds: dict[int, tuple[int, bool]],
    scope: _Scope,
    out: list[str],
    ind: str,
    pre: _Prelude,
    sym: Exp | None,
    base: str,
    vec_slots: set[int],
) -> None:
    """`let` lines evaluating `nodes` at sym = base + j for j < LANES: values that are the same
    in every lane once, the rest per lane; loads of `vec_slots` at lane-contiguous aligned
    indices as one vec4 load."""
    for node in nodes:
        nid = id(node)
        if nid in scope.names or nid in scope.lanes[0]:
            continue
        ct = _CT[node.dtype.name]
        if node is sym:
            for j in range(LANES):
                scope.lanes[j][nid] = base if j == 0 else f"({base} + {j})"
            continue
        if kinds[nid][0] == 0:
            name = scope.fresh()
            expr = _node_expr(node, [scope.lane(s, 0) for s in node.src], pre)
            out.append(f"{ind}let {name}: {ct} = {expr};")
            scope.names[nid] = name
            continue
        stem = scope.fresh()
        index = node.src[0] if node.op is Op.LOAD else None
        if index is not None and node.arg in vec_slots and kinds[id(index)] == (1, True):
            out.append(f"{ind}let {stem} = in{node.arg}[u32({scope.lane(index, 0)}) >> 2u];")
            for j in range(LANES):
                value = from_elem(node.dtype, f"{stem}[{j}]", pre)
                out.append(f"{ind}let {stem}_{j}: {ct} = {value};")
                scope.lanes[j][nid] = f"{stem}_{j}"
            continue
        for j in range(LANES):
            if j and kinds[nid][0] == 1:  # value(4q) + j
                expr = f"({stem}_0 + {j})"
            else:
                expr = _node_expr(node, [scope.lane(s, j) for s in node.src], pre)
            out.append(f"{ind}let {stem}_{j}: {ct} = {expr};")
            scope.lanes[j][nid] = f"{stem}_{j}"


def _find(nodes: list[Exp], op: Op) -> Exp | None:
    return next((n for n in nodes if n.op is op), None)


def _reduce_fn(
    red: Exp,
    step: int,
    pre: _Prelude,
    lanes: bool,
    vec_slots: set[int],
    span: int = 0,
    chains: int = 1,
) -> list[str]:
    """`fn reduce_body(i, r0, r1)`: combine the body over r = r0, r0 + step, ... < r1 (with
    lanes, over r, r + 1, r + 2, r + 3 at each such r; r1 - r0 <= span, by default the whole
    reduction). Each invocation combines its terms in increasing r, or, with `chains` > 1 (the
    partials of a split reduction, whose order is not the reference's anyway), `chains` steps
    per iteration into separate accumulators (independent chains of loads and combines),
    combined at the end."""
    combine, rsize = red.arg
    span = span or rsize
    d = red.dtype
    ct = _CT[d.name]
    memo: dict[int, bool] = {}
    body = red.src[0].toposort()
    scope = _Scope()
    lines = [f"fn reduce_body(i: i32, r0: i32, r1: i32) -> {ct} {{"]
    _emit([n for n in body if not _uses_ridx(n, memo)], scope, lines, "  ", pre)
    ident = const_expr(scalar.identity(combine, d), d, pre)
    lines.append(f"  var acc: {ct} = {ident};")
    inner = [n for n in body if _uses_ridx(n, memo)]
    stepl: list[str] = []
    root = red.src[0]
    if lanes:
        kinds = _lane_kinds(body, _find(body, Op.RIDX))
        _emit_lanes(inner, kinds, scope, stepl, "    ", pre, _find(body, Op.RIDX), "r", vec_slots)
        vals = [scope.lane(root, j) for j in range(LANES)]
    else:
        _emit(inner, scope, stepl, "    ", pre)
        vals = [scope.names[id(root)]]
    if chains > 1 and -(-span // (step * chains)) <= _MAX_LOOP:
        return lines + _chained_loop(stepl, vals, combine, d, ct, ident, step, chains, pre)
    for v in vals:
        stepl.append(f"    acc = {render_op(combine, d, d, ['acc', v], pre)};")
    # llvmpipe ends every loop (nest) after 65535 iterations in total: unroll beyond that
    iters = -(-span // step)
    unroll = -(-iters // _MAX_LOOP)
    if unroll == 1:
        lines.append(f"  for (var r: i32 = r0; r < r1; r = r + {step}) {{")
        lines += stepl
    else:
        lines.append(f"  for (var q: i32 = r0; q < r1; q = q + {step * unroll}) {{")
        for u in range(unroll):
            lines.append(f"   {{ let r = q + {u * step}; if (r < r1) {{")
            lines += stepl
            lines.append("   }}")
    lines += ["  }", "  return acc;", "}"]
    return lines


def _chained_loop(
    stepl: list[str],
    vals: list[str],
    combine: Op,
    d: DType,
    ct: str,
    ident: str,
    step: int,
    chains: int,
    pre: _Prelude,
) -> list[str]:
    """The loop of `_reduce_fn` with `chains` unrolled steps per iteration, each into its own
    accumulators, over whole blocks of steps (a per-step bounds test made SwiftShader 2-3x
    slower), then the remaining steps into the first; `acc` (declared by the caller) ends as
    their combination. float32 sums of four lanes keep a vec4 accumulator per step (SwiftShader:
    sum 2^24 1.2x the sequential loop; one scalar accumulator per lane: 1.1x)."""
    block = step * chains
    vector = combine is Op.ADD and d is dt.float32 and len(vals) == LANES
    if vector:
        names = [[f"acc_{u}"] for u in range(chains)]
        fb4 = pre.need("fb4")
        lane = f"vec4<f32>({', '.join(vals)})"

        def update(n: list[str]) -> list[str]:
            return [f"    {n[0]} = {fb4}({n[0]} + {lane});"]

        lines = [f"  var {row[0]}: vec4<f32> = vec4<f32>({ident});" for row in names]
    else:
        names = [[f"acc_{u}_{j}" for j in range(len(vals))] for u in range(chains)]

        def update(n: list[str]) -> list[str]:
            return [
                f"    {a} = {render_op(combine, d, d, [a, v], pre)};"
                for a, v in zip(n, vals, strict=True)
            ]

        lines = [f"  var {a}: {ct} = {ident};" for row in names for a in row]
    lines += ["  var q: i32 = r0;", f"  while (q + {block} <= r1) {{"]
    for u in range(chains):
        lines += [f"   {{ let r = q + {u * step};", *stepl, *update(names[u]), "   }"]
    lines += [f"    q = q + {block};", "  }", f"  for (var r: i32 = q; r < r1; r = r + {step}) {{"]
    lines += [*stepl, *update(names[0]), "  }"]
    if vector:
        total = " + ".join(row[0] for row in names)
        lines.append(f"  let acc_v = {total};")
        parts = [f"acc_v.{c}" for c in "xyzw"]
    else:
        parts = [a for row in names for a in row]
    for v in parts:
        lines.append(f"  acc = {render_op(combine, d, d, ['acc', v], pre)};")
    return [*lines, "  return acc;", "}"]


def _partials_fn(red: Exp, parts: int, pre: _Prelude) -> list[str]:
    """Second pass of a split reduction: combine an output's partial results in order."""
    combine = red.arg[0]
    d = red.dtype
    ct = _CT[d.name]
    ident = const_expr(scalar.identity(combine, d), d, pre)
    step = render_op(combine, d, d, ["acc", _from32(d, f"scr[u32(i * {parts} + g)]")], pre)
    return [
        f"fn partials(i: i32) -> {ct} {{",
        f"  var acc: {ct} = {ident};",
        f"  for (var g: i32 = 0; g < {parts}; g = g + 1) {{ acc = {step}; }}",
        "  return acc;",
        "}",
    ]


def _to32(d: DType, x: str) -> str:
    """A compute-type value as a u32 word (scratch holds words)."""
    ct = _CT[d.name]
    return f"select(0u, 1u, {x})" if ct == "bool" else x if ct == "u32" else f"bitcast<u32>({x})"


def _from32(d: DType, u: str) -> str:
    ct = _CT[d.name]
    return f"({u} != 0u)" if ct == "bool" else u if ct == "u32" else f"bitcast<{ct}>({u})"


def _value4_fn(kernel: Kernel, pre: _Prelude, vec_slots: set[int]) -> list[str]:
    """`fn value4(i0)`: the output elements i0 .. i0 + 3 as stored (32-bit words or f16s)."""
    order = kernel.exp.toposort()
    sym = _find(order, Op.IDX)
    kinds = _lane_kinds(order, sym)
    scope = _Scope()
    d = kernel.out_dtype
    vt = "vec4<f16>" if native_f16(d, pre) else "vec4<u32>"
    lines = [f"fn value4(i0: i32) -> {vt} {{"]
    _emit_lanes(order, kinds, scope, lines, "  ", pre, sym, "i0", vec_slots)
    elems = [to_elem(d, scope.lane(kernel.exp, j), pre) for j in range(LANES)]
    lines += [f"  return {vt}({', '.join(elems)});", "}"]
    return lines


def _grid(groups: int) -> tuple[int, int]:
    gx = min(groups, MAX_GROUPS_X)
    return gx, (-(-groups // gx) if groups else 0)


def _shader(
    kernel: Kernel,
    pre: _Prelude,
    body: list[str],
    extra: str = "",
    vec_slots: set[int] | frozenset[int] = frozenset(),
    out_vec: bool = False,
    partials: bool = False,
) -> str:
    """Bindings, the helpers `pre` collected, input loaders, then `body` (functions + main).
    Slots in `vec_slots` (and the output with `out_vec`) are bound as arrays of vec4s; the
    output holds u32 words of partial results with `partials` (a split reduction's pass one)."""
    n = kernel.nargs
    loads = [_load_fn(s, d, pre, s in vec_slots) for s, d in enumerate(kernel.arg_dtypes)]
    lines = [
        f"@group(0) @binding({s}) var<storage, read> in{s}: "
        f"array<{elem_type(d, pre, s in vec_slots)}>;"
        for s, d in enumerate(kernel.arg_dtypes)
    ]
    if extra:
        lines.append(f"@group(0) @binding({n}) var<storage, read> {extra}: array<u32>;")
    out = n + 1 if extra else n
    ot = "u32" if partials else elem_type(kernel.out_dtype, pre, out_vec)
    lines += [f"@group(0) @binding({out}) var<storage, read_write> out: array<{ot}>;", ""]
    lines += [pre.source(), *loads, "", *body]  # (pre.source() after the loaders' needs)
    return "\n".join([*pre.header(), *lines]) + "\n"


def split_parts(size: int, rsize: int) -> int:
    """Partial results per output for a reduction of `size` outputs over `rsize` terms: 1 (one
    invocation per output) when there are enough outputs or terms are few; else enough
    partials, each of at least SPLIT_MIN_TERMS terms, for about SPLIT_THREADS invocations."""
    if size * 4 >= SPLIT_THREADS:
        return 1
    parts = min(SPLIT_THREADS // max(size, 1), rsize // SPLIT_MIN_TERMS, SPLIT_MAX_PARTS)
    return parts if parts >= 2 else 1


def _items(count: int, limits: dict[str, int]) -> int:
    """Consecutive items (output words or quads) per invocation: several on CPU
    implementations, where each invocation has a fixed cost (SwiftShader ran an elementwise
    kernel 2.5x faster with 16 quads per invocation than with one), one on GPUs."""
    if not limits.get("cpu"):
        return 1
    return max(1, min(CPU_ITEMS, count // CPU_MIN_INVOCATIONS))


def render(
    kernel: Kernel, max_bindings: int = 8, limits: dict[str, int] | None = None
) -> WgslProgram:
    """Render the kernel as WGSL compute shaders (entry points `main`).

    Invocations evaluate 4 consecutive indices where that makes loads vec4 (lanes, above).
    Elementwise kernels run one output word (or four elements) per invocation, several
    consecutive ones on CPU implementations (`limits["cpu"]`). Reductions with enough outputs
    run one invocation per output, combining terms in the order of the reference. Long ones
    with few outputs take one of two forms. On GPUs: a workgroup of REDUCE_THREADS invocations
    per output (strided partials, then a tree in shared memory) or, with very few outputs, two
    passes: chunked partials over many workgroups, then the finish. On CPU implementations,
    which pay dearly for workgroup barriers, no barriers: partials over contiguous chunks
    (split_parts), then each output combines its partials in order. Float sums and products
    then round differently from the sequential order. `max_bindings` (storage buffers per
    shader) decides whether a two-pass form fits. Float32 matrix products (wgsl_matmul.match)
    run as tiled matmuls, chosen from `limits` (max_workgroup_storage bytes, max_invocations
    per workgroup, cpu). Devices whose sqrt and division round correctly (`exact_sqrt`,
    `exact_div`: see `probe`) use them directly; with `f16` (see `probe_f16`), float16 buffers
    are bound as f16 elements instead of packed words.
    """
    out_d = kernel.out_dtype
    for d in (*kernel.arg_dtypes, out_d):
        check_dtype(d)
    for n in kernel.exp.toposort():
        check_dtype(n.dtype)
    red = kernel.reduction
    nargs = kernel.nargs
    lim = limits or {}
    per = per_word(out_d, lim)  # elements per output word (or per f16 element: 1)
    words = -(-kernel.size // per)
    if red is None:
        if (
            per == 1
            and kernel.size % LANES == 0
            and kernel.size
            and _straight(lambda pre: _value_fn(kernel, None, pre), lim)
        ):
            return _render_lanes(kernel, lim)
        pre = _Prelude(lim)
        fns = _value_fn(kernel, None, pre)
        main, grid = _main_flat(kernel, None, per, words, _items(words, lim), pre)
        source = _shader(kernel, pre, fns + [""] + main)
        return WgslProgram((WgslPass(source, nargs + 1, grid),), nargs, words)
    plan = wgsl_matmul.match(kernel)
    if plan is not None:
        tiled = wgsl_matmul.render(kernel, plan, lim)
        if tiled is not None:
            prog, tile = tiled
            return WgslProgram(prog.passes, prog.nargs, prog.invocations, 0, str(tile))
    rsize = red.arg[1]
    lanes = (
        rsize % LANES == 0
        and rsize > 0
        and _straight(lambda pre: _reduce_fn(red, 1, pre, False, set()), lim)
    )
    body = red.src[0].toposort()
    memo: dict[int, bool] = {}
    inner = [n for n in body if _uses_ridx(n, memo)]
    vec = _vec_loads(inner, _lane_kinds(body, _find(body, Op.RIDX)), lim) if lanes else set()
    if not vec and not lim.get("cpu"):
        lanes = False  # GPUs: without vec4 loads, lanes would only make loads less coalesced
    width = LANES if lanes else 1
    r = _Reduction(kernel, red, per, words, lanes, vec, width, lim)
    fits = nargs + 2 <= max_bindings  # a second pass binds the partials too
    if lim.get("cpu"):
        parts = split_parts(kernel.size, rsize)
        if parts == 1 or not fits:
            return r.plain()
        # partial p of output i: terms [p * chunk, (p + 1) * chunk), in one invocation
        chunk = -(-rsize // (parts * width)) * width
        pre1 = _Prelude(lim)
        fns1 = _reduce_fn(red, width, pre1, lanes, vec, chunk, CPU_CHAINS)
        g1 = _grid(-(-kernel.size * parts // WORKGROUP))
        main1 = _main_partials(kernel, red, parts, chunk, g1[0], pre1)
        return r.two_passes(fns1 + [""] + main1, pre1, g1, parts)
    if not (rsize > _MAX_LOOP or (rsize >= GROUPED_MIN_RSIZE and words <= GROUPED_MAX_WORDS)):
        return r.plain()
    chunks = min(-(-rsize // SPLIT_MIN_CHUNK), max(1, SPLIT_TARGET_GROUPS // kernel.size))
    step = width * REDUCE_THREADS
    if chunks < 2 or not fits:  # a workgroup per output word
        pre = _Prelude(lim)
        fns = _reduce_fn(red, step, pre, lanes, vec) + _value_fn(kernel, red, pre)
        gx, gy = _grid(words)
        main = _main_grouped(kernel, red, per, words, width, gx, pre)
        source = _shader(kernel, pre, fns + [""] + main, vec_slots=vec)
        return WgslProgram((WgslPass(source, nargs + 1, (gx, gy)),), nargs, words)
    # chunk c of output i: a workgroup's partial over terms [c * chunk, (c + 1) * chunk)
    chunk = -(-rsize // (chunks * width)) * width
    pre1 = _Prelude(lim)
    fns1 = _reduce_fn(red, step, pre1, lanes, vec, chunk)
    g1 = _grid(kernel.size * chunks)
    main1 = _main_tree_partials(kernel, red, chunks, chunk, width, g1[0], pre1)
    return r.two_passes(fns1 + [""] + main1, pre1, g1, chunks)


@dataclass
class _Reduction:
    """What the forms of a reduction kernel share: the one-pass plain form, and the second
    pass (each output combines its partials in order, then the epilogue) of two-pass ones."""

    kernel: Kernel
    red: Exp
    per: int
    words: int
    lanes: bool
    vec: set[int]
    width: int
    lim: dict[str, int]

    def plain(self) -> WgslProgram:
        """One invocation per output word, the terms in the reference's order."""
        k, pre = self.kernel, _Prelude(self.lim)
        fns = _reduce_fn(self.red, self.width, pre, self.lanes, self.vec)
        fns += _value_fn(k, self.red, pre)
        call = f"reduce_body({{i}}, 0, {self.red.arg[1]})"
        items = _items(self.words, self.lim)
        main, grid = _main_flat(k, call, self.per, self.words, items, pre)
        source = _shader(k, pre, fns + [""] + main, vec_slots=self.vec)
        return WgslProgram((WgslPass(source, k.nargs + 1, grid),), k.nargs, self.words)

    def two_passes(
        self, body1: list[str], pre1: _Prelude, g1: tuple[int, int], parts: int
    ) -> WgslProgram:
        k = self.kernel
        source1 = _shader(k, pre1, body1, vec_slots=self.vec, partials=True)
        pass1 = WgslPass(source1, k.nargs + 1, g1)
        pre2 = _Prelude(self.lim)
        fns2 = _partials_fn(self.red, parts, pre2) + _value_fn(k, self.red, pre2)
        main2, g2 = _main_flat(k, "partials({i})", self.per, self.words, 1, pre2)
        pass2 = WgslPass(_shader(k, pre2, fns2 + [""] + main2, extra="scr"), k.nargs + 2, g2)
        return WgslProgram((pass1, pass2), k.nargs, self.words, 4 * k.size * parts)


def _head(count: int, items: int) -> tuple[list[str], tuple[int, int], str]:
    """main's opening for `count` items, `items` consecutive ones per invocation: (lines,
    dispatch grid, the loop's end: "" when each invocation has one item, `w`)."""
    inv = -(-count // items)
    gx, gy = _grid(-(-inv // WORKGROUP))
    lines = [
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {",
    ]
    if items == 1:
        lines += [
            f"  let w = gid.x + gid.y * {gx * WORKGROUP}u;",
            f"  if (w >= {count}u) {{ return; }}",
        ]
        return lines, (gx, gy), ""
    lines += [
        f"  let t = gid.x + gid.y * {gx * WORKGROUP}u;",
        f"  if (t >= {inv}u) {{ return; }}",
    ]
    loop = (
        f"  for (var w = t * {items}u; w < min(t * {items}u + {items}u, {count}u); w = w + 1u) {{"
    )
    return lines, (gx, gy), loop


def _render_lanes(kernel: Kernel, limits: dict[str, int]) -> WgslProgram:
    """An elementwise kernel with one output element per word (32-bit, or f16 bound as such)
    and 4 | size: four elements per invocation (or several such quads, consecutive, on CPU
    implementations)."""
    order = kernel.exp.toposort()
    vec = _vec_loads(order, _lane_kinds(order, _find(order, Op.IDX)), limits)
    pre = _Prelude(limits)
    fns = _value4_fn(kernel, pre, vec)
    quads = kernel.size // LANES
    head, grid, loop = _head(quads, _items(quads, limits))
    store = "out[w] = value4(i32(w) * 4);"
    main = head + _opq_init(pre) + ([loop, f"    {store}", "  }"] if loop else [f"  {store}"])
    source = _shader(kernel, pre, fns + [""] + main + ["}"], vec_slots=vec, out_vec=True)
    return WgslProgram((WgslPass(source, kernel.nargs + 1, grid),), kernel.nargs, quads)


def _main_flat(
    kernel: Kernel, red_call: str | None, per: int, words: int, items: int, pre: _Prelude
) -> tuple[list[str], tuple[int, int]]:
    """main writing output word w (and the dispatch grid): `items` consecutive words per
    invocation (or f16 elements, one per "word", where float16 is bound as f16)."""
    d = kernel.out_dtype

    def val(i: str) -> str:
        v = f"value({i}, {red_call.format(i=i)})" if red_call else f"value({i})"
        return to_elem(d, v, pre)

    head, grid, loop = _head(words, items)
    ind = "    " if loop else "  "
    done = "continue;" if loop else "return;"
    body: list[str] = []
    if per == 1:
        body.append(f"{ind}out[w] = {val('i32(w)')};")
    else:
        bits = 32 // per
        tail = kernel.size % per
        if tail:  # the last word is partly ours: keep the bytes past `size`
            keep = (0xFFFFFFFF << (tail * bits)) & 0xFFFFFFFF
            body += [f"{ind}if (w == {words - 1}u) {{", f"{ind}  var v = out[w] & 0x{keep:08x}u;"]
            for j in range(tail):
                body.append(f"{ind}  v = v | ({val(f'i32(w) * {per} + {j}')} << {j * bits}u);")
            body += [f"{ind}  out[w] = v;", f"{ind}  {done}", f"{ind}}}"]
        body.append(f"{ind}var v = 0u;")
        for j in range(per):
            body.append(f"{ind}v = v | ({val(f'i32(w) * {per} + {j}')} << {j * bits}u);")
        body.append(f"{ind}out[w] = v;")
    if loop:
        body = [loop, *body, "  }"]
    return head + _opq_init(pre) + body + ["}"], grid


def _main_partials(
    kernel: Kernel, red: Exp, parts: int, chunk: int, gx: int, pre: _Prelude
) -> list[str]:
    """Pass one of a barrier-free split reduction: invocation t = i * parts + p writes the
    partial of output i over terms [p * chunk, (p + 1) * chunk)."""
    rsize = red.arg[1]
    return [
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {",
        f"  let t = gid.x + gid.y * {gx * WORKGROUP}u;",
        f"  if (t >= {kernel.size * parts}u) {{ return; }}",
        *_opq_init(pre),
        f"  let i = i32(t / {parts}u);",
        f"  let r0 = i32(t % {parts}u) * {chunk};",
        f"  let r1 = min(r0 + {chunk}, {rsize});",
        f"  out[t] = {_to32(red.dtype, 'reduce_body(i, r0, r1)')};",
        "}",
    ]


# ---- workgroup trees (GPUs) ---------------------------------------------------------------------
def _tree(red: Exp, pre: _Prelude) -> list[str]:
    """Shared-memory tree over part[0..REDUCE_THREADS) (as u32 words); part[0] ends whole."""
    d = red.dtype
    both = render_op(red.arg[0], d, d, [_from32(d, "part[lid]"), _from32(d, "part[lid + s]")], pre)
    return [
        "workgroupBarrier();",
        f"for (var s = {REDUCE_THREADS // 2}u; s > 0u; s = s >> 1u) {{",
        f"  if (lid < s) {{ part[lid] = {_to32(d, both)}; }}",
        "  workgroupBarrier();",
        "}",
    ]


_WG_HEAD = [
    f"var<workgroup> part: array<u32, {REDUCE_THREADS}>;",
    "",
    f"@compute @workgroup_size({REDUCE_THREADS})",
    "fn main(@builtin(workgroup_id) wid: vec3<u32>,",
    "        @builtin(local_invocation_index) lid: u32) {",
]


def _main_grouped(
    kernel: Kernel, red: Exp, per: int, words: int, width: int, gx: int, pre: _Prelude
) -> list[str]:
    """A workgroup per output word (or f16 element): invocation lid combines terms
    width * lid + step * m (and the lanes after each), then the tree."""
    d = kernel.out_dtype
    rd = red.dtype
    bits = 32 // per
    first = _from32(rd, "part[0]")
    native = native_f16(d, pre)  # one f16 element per workgroup, stored as it is
    lines = [
        *_WG_HEAD,
        f"  let w = wid.x + wid.y * {gx}u;",
        f"  if (w >= {words}u) {{ return; }}",
        *_opq_init(pre),
        *([] if native else ["  var v = 0u;"]),
    ]
    call = f"reduce_body(i{{j}}, i32(lid) * {width}, {red.arg[1]})"
    for j in range(per):
        value = f"value(i{j}, {first})"
        if native:
            store = f"      out[w] = {to_elem(d, value, pre)};"
        else:
            store = f"      v = v | ({to_bits(d, value, pre)} << {j * bits}u);"
        lines += [
            f"  let i{j} = i32(w) * {per} + {j};",
            f"  if (i{j} < {kernel.size}) {{",
            f"    part[lid] = {_to32(rd, call.format(j=j))};",
            *("    " + t for t in _tree(red, pre)),
            "    if (lid == 0u) {",
            store,
            "    }",
            "    workgroupBarrier();",
            "  }",
        ]
    if native:
        return [*lines, "}"]
    tail = kernel.size % per
    if tail:
        keep = (0xFFFFFFFF << (tail * bits)) & 0xFFFFFFFF
        lines.append(f"  if (w == {words - 1}u) {{ v = v | (out[w] & 0x{keep:08x}u); }}")
    lines += ["  if (lid == 0u) { out[w] = v; }", "}"]
    return lines


def _main_tree_partials(
    kernel: Kernel, red: Exp, chunks: int, chunk: int, width: int, gx: int, pre: _Prelude
) -> list[str]:
    """Pass one of a split reduction on GPUs: workgroup wg = i * chunks + c reduces chunk c of
    output i (strided over its invocations, then the tree)."""
    rsize = red.arg[1]
    return [
        *_WG_HEAD,
        f"  let wg = wid.x + wid.y * {gx}u;",
        f"  if (wg >= {kernel.size * chunks}u) {{ return; }}",
        *_opq_init(pre),
        f"  let i = i32(wg / {chunks}u);",
        f"  let r0 = i32(wg % {chunks}u) * {chunk};",
        f"  let r1 = min(r0 + {chunk}, {rsize});",
        f"  part[lid] = {_to32(red.dtype, f'reduce_body(i, r0 + i32(lid) * {width}, r1)')};",
        *("  " + t for t in _tree(red, pre)),
        "  if (lid == 0u) { out[wg] = part[0]; }",
        "}",
    ]


# ---- device probe ------------------------------------------------------------------------------
PROBE_COUNT = 4096


def _probe_values() -> tuple[list[float], list[float]]:
    """Operands: random normal floats (quotients normal too), squares and near-midpoints of
    squares (hard cases for sqrt), and IEEE special cases for division."""
    rnd = random.Random(20261130)

    def f32(x: float) -> float:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])

    def normal(lo: int, hi: int) -> float:
        bits = (rnd.randrange(lo, hi) << 23) | rnd.getrandbits(23)
        return float(struct.unpack("<f", struct.pack("<I", bits))[0])

    inf, nan = float("inf"), float("nan")
    special = [(inf, 2.0), (2.0, inf), (3.0, 0.0), (-3.0, 0.0), (0.0, 0.0), (inf, inf),
               (nan, 1.0), (1.0, nan), (0.0, 5.0), (-0.0, 5.0), (1e38, 1e-3), (-1.0, 3.0),
               (inf, -0.0), (4.0, -inf)]  # fmt: skip
    a = [x for x, _ in special]
    b = [y for _, y in special]
    while len(a) < PROBE_COUNT:
        kind = len(a) % 4
        if kind == 0:  # a square: sqrt exact
            s = normal(64, 190)
            a.append(f32(s * s))
        elif kind == 1:  # near the midpoint between two neighbouring floats' squares
            s = normal(64, 190)
            ulp = math.ulp(s) * 2.0**29  # float32 ulp of s
            a.append(f32((s + ulp / 2) ** 2))
        else:
            a.append(normal(1, 254))
        ea = math.frexp(a[-1])[1] - 1  # quotients within 2^+-100: normal
        b.append(normal(max(-125, ea - 100) + 127, min(126, ea + 100) + 128))
    return a, b


def probe() -> tuple[str, bytes, bytes]:
    """A shader checking whether this device's sqrt and division round correctly on normal
    operands and handle IEEE special cases (then kernels use them directly). Returns (source
    with bindings a, b and the output, a's words, b's words); 64-invocation workgroups over
    PROBE_COUNT values; `probe_verdict(out)` reads the output (2 words per value)."""
    pre = _Prelude()
    sq, dv = pre.need("m_sqrt_hw"), pre.need("f_div_hw")
    body = [
        "@group(0) @binding(0) var<storage, read> in0: array<u32>;",
        "@group(0) @binding(1) var<storage, read> in1: array<u32>;",
        "@group(0) @binding(2) var<storage, read_write> out: array<u32>;",
        "",
        pre.source(),
        "",
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {",
        "  let k = gid.x;",
        f"  if (k >= {PROBE_COUNT}u) {{ return; }}",
        *_opq_init(pre),
        "  let a = fb(bitcast<f32>(in0[k]));",
        "  let b = fb(bitcast<f32>(in1[k]));",
        f"  out[2u * k] = bitcast<u32>({sq}(a));",
        f"  out[2u * k + 1u] = bitcast<u32>({dv}(a, b));",
        "}",
    ]
    a, b = _probe_values()
    n = PROBE_COUNT
    return "\n".join(body) + "\n", struct.pack(f"<{n}f", *a), struct.pack(f"<{n}f", *b)


def probe_verdict(out: bytes) -> dict[str, int]:
    """{"exact_sqrt": 0/1, "exact_div": 0/1} from the probe's output."""
    a, b = _probe_values()
    got = struct.unpack(f"<{2 * PROBE_COUNT}f", out[: 8 * PROBE_COUNT])

    def f32(x: float) -> float:
        try:
            return float(struct.unpack("<f", struct.pack("<f", x))[0])
        except OverflowError:
            return math.copysign(math.inf, x)

    def same(g: float, w: float) -> bool:
        return (g != g and w != w) or (g == w and math.copysign(1, g) == math.copysign(1, w))

    def div(x: float, y: float) -> float:
        if y == 0:
            return (
                math.nan if x == 0 or x != x else math.copysign(math.inf, x) * math.copysign(1, y)
            )
        if math.isinf(x) and math.isinf(y):
            return math.nan
        return f32(x / y)

    sqrt_ok = all(
        same(got[2 * k], math.nan if x != x or x < 0 else f32(math.sqrt(x)))
        for k, x in enumerate(a)
    )
    div_ok = all(same(got[2 * k + 1], div(x, y)) for k, (x, y) in enumerate(zip(a, b, strict=True)))
    return {"exact_sqrt": int(sqrt_ok), "exact_div": int(div_ok)}


# ---- f16 storage probe -------------------------------------------------------------------------
F16_PROBE_COUNT = 1 << 16  # every binary16 bit pattern
_F16_FINITE = ((0, 0x7C01), (0x8000, 0xFC01))  # non-NaN patterns: [lo, hi) (infinities included)
_F16_NANS = (*range(0x7C01, 0x8000), *range(0xFC01, 0x10000))


def _f16_as_f32_bits(h: int) -> int:
    """The f32 bit pattern of binary16 pattern `h` (exact; NaN payloads shifted up 13 bits, as
    f16_to_f32 does)."""
    s, e, m = (h & 0x8000) << 16, (h >> 10) & 0x1F, h & 0x3FF
    if e == 0:
        return s | (_f32_bits(m * 2.0**-24) if m else 0)
    if e == 31:
        return s | 0x7F800000 | (m << 13)
    return s | ((e + 112) << 23) | (m << 13)


def _f16_table() -> tuple[bytes, bytes]:
    """(every binary16 pattern, little-endian; each one's f32 bits as `_f16_as_f32_bits`)."""
    n = F16_PROBE_COUNT
    halves = struct.pack(f"<{n}H", *range(n))
    words = bytearray(struct.pack(f"<{n}f", *struct.unpack(f"<{n}e", halves)))
    for h in _F16_NANS:  # (struct need not keep NaN payloads)
        struct.pack_into("<I", words, 4 * h, _f16_as_f32_bits(h))
    return halves, bytes(words)


def probe_f16() -> tuple[str, str, bytes, bytes]:
    """Two shaders checking that this device converts between f16 storage and f32 exactly:
    `load` (bindings: every binary16 pattern as array<f16>, out: array<u32>) writes the f32 bits
    of each element, `store` (bindings: those values' f32 bits, out: array<f16>) stores each
    value as f16. Returns (load source, store source, load input, store input); 64-invocation
    workgroups over F16_PROBE_COUNT values; `probe_f16_verdict` reads both outputs. Hard values:
    subnormals (flushed by some hardware), the largest finite value, infinities (WGSL lets
    implementations assume none), NaNs and -0."""

    def shader(src: str, dst: str, store: str) -> str:
        return (
            "\n".join(
                [
                    "enable f16;",
                    "",
                    f"@group(0) @binding(0) var<storage, read> in0: array<{src}>;",
                    f"@group(0) @binding(1) var<storage, read_write> out: array<{dst}>;",
                    "",
                    f"@compute @workgroup_size({WORKGROUP})",
                    "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {",
                    "  let k = gid.x;",
                    f"  if (k >= {F16_PROBE_COUNT}u) {{ return; }}",
                    f"  out[k] = {store};",
                    "}",
                ]
            )
            + "\n"
        )

    halves, words = _f16_table()
    load = shader("f16", "u32", "bitcast<u32>(f32(in0[k]))")
    return load, shader("u32", "f16", "f16(bitcast<f32>(in0[k]))"), halves, words


def probe_f16_verdict(loaded: bytes, stored: bytes) -> dict[str, int]:
    """{"f16": 0/1} from the probe's outputs: 1 when every f16 loads as its exact f32 bits (a
    signaling NaN may come back quieted: f32_to_f16 quiets it in the packed form too, so every
    bitcast of a loaded value matches that form) and every such f32 stores as the f16 it came
    from, except that stored NaNs need only stay NaNs of their sign (lavapipe stores each as
    0x7e00 or 0xfe00; JAX leaves payloads undefined). NVIDIA's Vulkan driver fails: it turns
    every NaN into 0x7fffffff / 0x7fff both ways, losing signs and payloads."""
    halves, words = _f16_table()
    for lo, hi in _F16_FINITE:
        if loaded[4 * lo : 4 * hi] != words[4 * lo : 4 * hi]:
            return {"f16": 0}
        if stored[2 * lo : 2 * hi] != halves[2 * lo : 2 * hi]:
            return {"f16": 0}
    quiet = 0x00400000
    for h in _F16_NANS:
        got32 = struct.unpack_from("<I", loaded, 4 * h)[0]
        got16 = struct.unpack_from("<H", stored, 2 * h)[0]
        want = struct.unpack_from("<I", words, 4 * h)[0]
        if (got32 & 0x7FFFFFFF) <= 0x7F800000 or got32 | quiet != want | quiet:
            return {"f16": 0}
        if (got16 & 0x7FFF) <= 0x7C00 or got16 >> 15 != h >> 15:
            return {"f16": 0}
    return {"f16": 1}
