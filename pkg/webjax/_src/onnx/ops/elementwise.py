"""Elementwise ONNX operators: arithmetic, comparisons, logic, activations, Cast, Where, Clip."""

from __future__ import annotations

import math
from functools import reduce
from typing import Any

from webjax._src import dtypes
from webjax._src import numpy as jnp
from webjax._src.lax import lax
from webjax._src.lax.lax import bitcast_convert_type
from webjax._src.nn import functions as jnn
from webjax._src.onnx import host
from webjax._src.onnx.ops.common import Node, cast, const, dev, is_host, onnx_dtype, scalar, xp
from webjax._src.onnx.registry import op


def _unary(name: str, fn_name: str | None = None) -> None:
    attr = fn_name or name.lower()

    def impl(node: Node, x: Any) -> Any:
        return getattr(xp(x), attr)(x)

    op(name)(impl)


_UNARY = (
    ("Abs", "abs"), ("Neg", "negative"), ("Floor", "floor"), ("Ceil", "ceil"),
    ("Sqrt", "sqrt"), ("Exp", "exp"), ("Log", "log"), ("Sin", "sin"), ("Cos", "cos"),
    ("Tan", "tan"), ("Asin", "arcsin"), ("Acos", "arccos"), ("Atan", "arctan"),
    ("Sinh", "sinh"), ("Cosh", "cosh"), ("Tanh", "tanh"), ("Asinh", "arcsinh"),
    ("Acosh", "arccosh"), ("Atanh", "arctanh"), ("Sign", "sign"), ("Not", "logical_not"),
    ("IsNaN", "isnan"), ("BitwiseNot", "invert"),
)  # fmt: skip
for _name, _fn in _UNARY:
    _unary(_name, _fn)


@op("Round")
def round_(node: Node, x: Any) -> Any:
    return xp(x).round(x)  # half to even, as ONNX says


@op("Reciprocal")
def reciprocal(node: Node, x: Any) -> Any:
    return xp(x).reciprocal(x)


@op("Erf")
def erf(node: Node, x: Any) -> Any:
    return host.erf(x) if xp(x) is host else lax.erf(dev(x))


@op("IsInf")
def isinf(node: Node, x: Any) -> Any:
    m = xp(x)
    pos, neg = node.attr("detect_positive", 1), node.attr("detect_negative", 1)
    return m.logical_and(m.isinf(x), m.logical_or(x > 0 if pos else False, x < 0 if neg else False))


def _binary(name: str, fn_name: str) -> None:
    def impl(node: Node, a: Any, b: Any) -> Any:
        return getattr(xp(a, b), fn_name)(a, b)

    op(name)(impl)


_BINARY = (
    ("Add", "add"), ("Sub", "subtract"), ("Mul", "multiply"), ("Equal", "equal"),
    ("Less", "less"), ("Greater", "greater"), ("LessOrEqual", "less_equal"),
    ("GreaterOrEqual", "greater_equal"), ("And", "logical_and"), ("Or", "logical_or"),
    ("Xor", "logical_xor"), ("BitwiseAnd", "bitwise_and"), ("BitwiseOr", "bitwise_or"),
    ("BitwiseXor", "bitwise_xor"),
)  # fmt: skip
for _name, _fn in _BINARY:
    _binary(_name, _fn)


@op("Div")
def div(node: Node, a: Any, b: Any) -> Any:
    m = xp(a, b)
    if m is host:
        dtype = host.promote_types(a.dtype, b.dtype)
        if dtype.kind in "iu":  # rounding toward zero, as C
            q = host.floor_divide(host.abs(a), host.abs(b))
            return (q * host.sign(a) * host.sign(b)).astype(dtype)
        return host.divide(a, b)
    dtype = jnp.result_type(a, b)
    if dtype.kind in "iu":
        return lax.div(*jnp.broadcast_arrays(jnp.asarray(a, dtype), jnp.asarray(b, dtype)))
    return m.divide(a, b)


@op("Mod")
def mod(node: Node, a: Any, b: Any) -> Any:
    m = xp(a, b)
    return m.fmod(a, b) if node.attr("fmod", 0) else m.mod(a, b)


@op("Pow")
def pow_(node: Node, x: Any, y: Any) -> Any:
    m = xp(x, y)
    if m is jnp:
        x, y = dev(x), dev(y)
    if x.dtype.kind in "iu" and y.dtype.kind not in "iu":
        return m.power(cast(x, y.dtype), y).astype(x.dtype)
    return m.power(x, cast(y, x.dtype))


@op("BitShift")
def bit_shift(node: Node, x: Any, y: Any) -> Any:
    m = xp(x, y)
    if node.attr("direction") == "LEFT":
        return m.left_shift(x, y)
    return m.right_shift(x, y)


def _variadic(name: str, fn_name: str, mean: bool = False) -> None:
    def impl(node: Node, *xs: Any) -> Any:
        m = xp(*xs)
        out = reduce(getattr(m, fn_name), xs)
        return out / len(xs) if mean else out

    op(name)(impl)


_variadic("Sum", "add")
_variadic("Max", "maximum")
_variadic("Min", "minimum")
_variadic("Mean", "add", mean=True)


@op("Where")
def where(node: Node, c: Any, a: Any, b: Any) -> Any:
    return xp(c, a, b).where(c, a, b)


@op("Cast")
def cast_op(node: Node, x: Any) -> Any:
    dtype = onnx_dtype(node, node.attr("to"))
    if x.dtype == dtypes.bool_ or dtype != dtypes.bool_:
        return cast(x, dtype)
    return xp(x).not_equal(x, 0)


@op("CastLike")
def cast_like(node: Node, x: Any, like: Any) -> Any:
    return cast(x, like.dtype)


@op("Identity")
def identity(node: Node, x: Any) -> Any:
    return x


@op("Dropout")
def dropout(node: Node, x: Any, ratio: Any = None, training_mode: Any = None) -> Any:
    if training_mode is not None and bool(scalar(node, training_mode, "training_mode")):
        raise node.unsupported("training_mode=True (dropout needs a random key)")
    return x, xp(x).ones(tuple(x.shape), dtype=dtypes.bool_)


@op("Clip")
def clip(node: Node, x: Any, lo: Any = None, hi: Any = None) -> Any:
    m = xp(x, lo, hi)
    if node.opset < 11:
        lo = node.attr("min", None)
        hi = node.attr("max", None)
        lo = None if lo is None else const(x, lo)
        hi = None if hi is None else const(x, hi)
    if lo is not None:
        x = m.maximum(x, lo)
    if hi is not None:
        x = m.minimum(x, hi)
    return x


# --- activations ----------------------------------------------------------------------------


@op("Relu")
def relu(node: Node, x: Any) -> Any:
    return xp(x).maximum(x, const(x, 0))


@op("LeakyRelu")
def leaky_relu(node: Node, x: Any) -> Any:
    x = dev(x)
    a = const(x, node.attr("alpha", 0.01))
    return jnp.where(x >= 0, x, x * a)


@op("PRelu")
def prelu(node: Node, x: Any, slope: Any) -> Any:
    x = dev(x)
    return jnp.where(x >= 0, x, x * slope)


@op("Sigmoid")
def sigmoid(node: Node, x: Any) -> Any:
    return jnn.sigmoid(dev(x))


@op("HardSigmoid")
def hard_sigmoid(node: Node, x: Any) -> Any:
    x = dev(x)
    a, b = const(x, node.attr("alpha", 0.2)), const(x, node.attr("beta", 0.5))
    return jnp.clip(x * a + b, 0, 1).astype(x.dtype)


@op("HardSwish")
def hard_swish(node: Node, x: Any) -> Any:
    x = dev(x)
    return x * jnp.clip(x * const(x, 1 / 6) + const(x, 0.5), 0, 1).astype(x.dtype)


@op("Elu")
def elu(node: Node, x: Any) -> Any:
    x = dev(x)
    a = const(x, node.attr("alpha", 1.0))
    return jnp.where(x > 0, x, a * jnp.expm1(jnp.minimum(x, 0)))


@op("Selu")
def selu(node: Node, x: Any) -> Any:
    x = dev(x)
    a = const(x, node.attr("alpha", 1.67326319217681884765625))
    g = const(x, node.attr("gamma", 1.05070102214813232421875))
    return g * jnp.where(x > 0, x, a * jnp.expm1(jnp.minimum(x, 0)))


@op("Celu")
def celu(node: Node, x: Any) -> Any:
    x = dev(x)
    a = const(x, node.attr("alpha", 1.0))
    return jnp.maximum(x, 0) + jnp.minimum(0, a * jnp.expm1(x / a))


@op("ThresholdedRelu")
def thresholded_relu(node: Node, x: Any) -> Any:
    x = dev(x)
    a = const(x, node.attr("alpha", 1.0))
    return jnp.where(x > a, x, jnp.zeros_like(x))


@op("Softplus")
def softplus(node: Node, x: Any) -> Any:
    x = dev(x)
    return jnp.logaddexp(x, const(x, 0))


@op("Softsign")
def softsign(node: Node, x: Any) -> Any:
    x = dev(x)
    return x / (1 + jnp.abs(x))


@op("Mish")
def mish(node: Node, x: Any) -> Any:
    x = dev(x)
    return x * jnp.tanh(jnp.logaddexp(x, const(x, 0)))


@op("Swish")
def swish(node: Node, x: Any) -> Any:
    x = dev(x)
    a = const(x, node.attr("alpha", 1.0))
    return x * jnn.sigmoid(a * dev(x))


@op("Gelu")
def gelu(node: Node, x: Any) -> Any:
    x = dev(x)
    approximate = node.attr("approximate", "none")
    if approximate == "tanh":
        c = const(x, math.sqrt(2 / math.pi))
        return const(x, 0.5) * x * (1 + jnp.tanh(c * (x + const(x, 0.044715) * x * x * x)))
    if approximate != "none":
        raise node.unsupported(f"approximate={approximate!r}")
    return const(x, 0.5) * x * (1 + lax.erf(dev(x) * const(x, 1 / math.sqrt(2))))


@op("Shrink")
def shrink(node: Node, x: Any) -> Any:
    x = dev(x)
    lambd = const(x, node.attr("lambd", 0.5))
    bias = const(x, node.attr("bias", 0.0))
    zero = jnp.zeros_like(x)
    return jnp.where(x < -lambd, x + bias, jnp.where(x > lambd, x - bias, zero))


@op("SwiGLU")
def swiglu(node: Node, a: Any, b: Any) -> Any:
    a, b = dev(a), dev(b)
    alpha = const(a, node.attr("alpha", 1.0))
    return a * jnn.sigmoid(alpha * dev(a)) * b


@op("BitCast")
def bitcast(node: Node, x: Any) -> Any:
    dtype = onnx_dtype(node, node.attr("to"))
    if is_host(x):
        return host.view(x, dtype)
    if x.dtype.itemsize != dtype.itemsize:
        raise node.unsupported(f"a bitcast from {x.dtype} to {dtype} (64-bit types are off)")
    return bitcast_convert_type(x, dtype)
