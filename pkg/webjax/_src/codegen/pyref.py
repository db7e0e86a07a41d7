"""Reference codegen: a kernel becomes a Python function over typed memoryviews.

It is the executable definition of the IR: every op calls `ir.scalar.apply`, so results are
exactly the reference semantics (slow, and that is fine). The cpu backend runs it; tests diff
every other codegen against it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from ..dtypes import STRUCT_FORMATS, DType, bfloat16
from ..ir import scalar
from ..ir.exp import Exp
from ..ir.kernel import Kernel
from ..ir.ops import Op

# memoryview formats per dtype: the value's struct letter, except that 16-bit floats are viewed
# as their bits ('H') and converted by the kernel (memoryview.cast has no 'e' before Python 3.12;
# bfloat16, the upper half of a float32, has no letter at all).
FORMATS = {**STRUCT_FORMATS, "float16": "H", "bfloat16": "H"}


def _f16_from_bits(b: int) -> float:
    return struct.unpack("<e", struct.pack("<H", b))[0]


def _f16_to_bits(x: float) -> int:
    return struct.unpack("<H", struct.pack("<e", x))[0]


def _bf16_from_bits(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b << 16))[0]


def _bf16_to_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16


def _op_fn(node: Exp) -> Callable[..., Any]:
    op, dtype = node.op, node.dtype
    src_dtype = node.src[0].dtype if node.src else dtype
    if op is Op.WHERE:
        src_dtype = node.src[1].dtype
    return lambda *a: scalar.apply(op, dtype, a, src_dtype)


def render(kernel: Kernel) -> tuple[str, dict[str, Any]]:
    """Python source for `kernel(out, *inputs)` plus the globals it needs."""
    env: dict[str, Any] = {
        "_bf_in": _bf16_from_bits,
        "_bf_out": _bf16_to_bits,
        "_h_in": _f16_from_bits,
        "_h_out": _f16_to_bits,
    }
    names: dict[int, str] = {}
    lines = [f"def kernel(out, {', '.join(f'in{i}' for i in range(kernel.nargs)) or '*_'}):"]
    lines.append(f"    for i in range({kernel.size}):")
    order = kernel.exp.toposort()
    red = kernel.reduction
    body_ids = {id(n) for n in red.src[0].toposort()} if red is not None else set()
    # nodes that depend on RIDX must be computed inside the reduction loop
    inner = {id(n) for n in order if id(n) in body_ids and _uses_ridx(n)}

    def emit(node: Exp, indent: str) -> None:
        name = f"t{len(names)}"
        names[id(node)] = name
        op = node.op
        args = [] if op is Op.REDUCE else [names[id(s)] for s in node.src]
        if op is Op.CONST:
            env[name + "_c"] = node.arg
            lines.append(f"{indent}{name} = {name}_c")
        elif op is Op.IDX:
            lines.append(f"{indent}{name} = i")
        elif op is Op.RIDX:
            lines.append(f"{indent}{name} = r")
        elif op is Op.LOAD:
            slot = node.arg
            conv = {"bfloat16": "_bf_in", "float16": "_h_in"}.get(node.dtype.name, "")
            lines.append(
                f"{indent}{name} = {conv}(in{slot}[{args[0]}]) "
                f"if 0 <= {args[0]} < len(in{slot}) else {scalar.normalize(node.dtype, 0)!r}"
            )
        elif op is Op.REDUCE:
            combine, rsize = node.arg
            env[name + "_id"] = scalar.identity(combine, node.dtype)
            env[name + "_f"] = lambda a, b, c=combine, d=node.dtype: scalar.apply(c, d, (a, b))
            lines.append(f"{indent}{name} = {name}_id")
            lines.append(f"{indent}for r in range({rsize}):")
            for m in order:
                if id(m) in inner:
                    emit(m, indent + "    ")
            body = names[id(node.src[0])]
            lines.append(f"{indent}    {name} = {name}_f({name}, {body})")
        else:
            env[name + "_f"] = _op_fn(node)
            lines.append(f"{indent}{name} = {name}_f({', '.join(args)})")

    for node in order:
        if id(node) not in inner and id(node) not in names:
            emit(node, "        ")
    result = names[id(kernel.exp)]
    if kernel.out_dtype.name in ("bfloat16", "float16"):
        result = f"{'_bf_out' if kernel.out_dtype is bfloat16 else '_h_out'}({result})"
    lines.append(f"        out[i] = {result}")
    return "\n".join(lines) + "\n", env


def _uses_ridx(node: Exp) -> bool:
    return any(n.op is Op.RIDX for n in node.toposort())


def compile_kernel(kernel: Kernel) -> Callable[..., None]:
    source, env = render(kernel)
    code = compile(source, f"<webjax kernel {id(kernel):x}>", "exec")
    exec(code, env)
    fn: Callable[..., None] = env["kernel"]
    fn.source = source  # type: ignore[attr-defined]
    return fn


def fmt(dtype: DType) -> str:
    return FORMATS[dtype.name]
