"""Elementwise ONNX operators: arithmetic, comparisons, logic, activations, Cast, Where, Clip."""

from __future__ import annotations

import math
from functools import reduce
from typing import Any

import numpy as np

from webjax._src import numpy as jnp
from webjax._src.lax import lax
from webjax._src.lax.lax import bitcast_convert_type
from webjax._src.nn import functions as jnn
from webjax._src.onnx.ops.common import Node, cast, dev, is_host, onnx_dtype, static, xp
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
    return xp(x).reciprocal(x) if not is_host(x) else np.reciprocal(x)


@op("Erf")
def erf(node: Node, x: Any) -> Any:
    return lax.erf(dev(x))


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
    dtype = np.result_type(a.dtype, b.dtype) if is_host(a, b) else jnp.result_type(a, b)
    if np.issubdtype(dtype, np.integer):
        if m is np:
            q = np.abs(a) // np.abs(b)
            return (q * np.sign(a) * np.sign(b)).astype(dtype)
        return lax.div(*jnp.broadcast_arrays(jnp.asarray(a, dtype), jnp.asarray(b, dtype)))
    return m.divide(a, b)


@op("Mod")
def mod(node: Node, a: Any, b: Any) -> Any:
    m = xp(a, b)
    return m.fmod(a, b) if node.attr("fmod", 0) else m.mod(a, b)


@op("Pow")
def pow_(node: Node, x: Any, y: Any) -> Any:
    m = xp(x, y)
    if np.issubdtype(np.dtype(x.dtype), np.integer) and not np.issubdtype(
        np.dtype(y.dtype), np.integer
    ):
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
    to = node.attr("to")
    dtype = onnx_dtype(node, to)
    if node.attr("saturate", 1) == 0 and dtype.itemsize == 1 and dtype.kind == "V":
        raise node.unsupported("saturate=0")
    if np.dtype(x.dtype) == np.bool_ or dtype != np.bool_:
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
    if training_mode is not None and bool(
        np.ravel(static(node, training_mode, "training_mode"))[0]
    ):
        raise node.unsupported("training_mode=True (dropout needs a random key)")
    return x, xp(x).ones(np.shape(x), dtype=bool)


@op("Clip")
def clip(node: Node, x: Any, lo: Any = None, hi: Any = None) -> Any:
    m = xp(x, lo, hi)
    if node.opset < 11:
        lo = node.attr("min", None)
        hi = node.attr("max", None)
        lo = None if lo is None else np.asarray(lo, dtype=x.dtype)
        hi = None if hi is None else np.asarray(hi, dtype=x.dtype)
    if lo is not None:
        x = m.maximum(x, lo)
    if hi is not None:
        x = m.minimum(x, hi)
    return x


# --- activations ----------------------------------------------------------------------------


def _const(x: Any, v: float) -> Any:
    return np.asarray(v, dtype=x.dtype)


@op("Relu")
def relu(node: Node, x: Any) -> Any:
    return xp(x).maximum(x, _const(x, 0))


@op("LeakyRelu")
def leaky_relu(node: Node, x: Any) -> Any:
    a = _const(x, node.attr("alpha", 0.01))
    return jnp.where(x >= 0, x, x * a)


@op("PRelu")
def prelu(node: Node, x: Any, slope: Any) -> Any:
    return jnp.where(x >= 0, x, x * slope)


@op("Sigmoid")
def sigmoid(node: Node, x: Any) -> Any:
    return jnn.sigmoid(dev(x))


@op("HardSigmoid")
def hard_sigmoid(node: Node, x: Any) -> Any:
    a, b = _const(x, node.attr("alpha", 0.2)), _const(x, node.attr("beta", 0.5))
    return jnp.clip(x * a + b, 0, 1).astype(x.dtype)


@op("HardSwish")
def hard_swish(node: Node, x: Any) -> Any:
    return x * jnp.clip(x * _const(x, 1 / 6) + _const(x, 0.5), 0, 1).astype(x.dtype)


@op("Elu")
def elu(node: Node, x: Any) -> Any:
    a = _const(x, node.attr("alpha", 1.0))
    return jnp.where(x > 0, x, a * jnp.expm1(jnp.minimum(x, 0)))


@op("Selu")
def selu(node: Node, x: Any) -> Any:
    a = _const(x, node.attr("alpha", 1.67326319217681884765625))
    g = _const(x, node.attr("gamma", 1.05070102214813232421875))
    return g * jnp.where(x > 0, x, a * jnp.expm1(jnp.minimum(x, 0)))


@op("Celu")
def celu(node: Node, x: Any) -> Any:
    a = _const(x, node.attr("alpha", 1.0))
    return jnp.maximum(x, 0) + jnp.minimum(0, a * jnp.expm1(x / a))


@op("ThresholdedRelu")
def thresholded_relu(node: Node, x: Any) -> Any:
    a = _const(x, node.attr("alpha", 1.0))
    return jnp.where(x > a, x, jnp.zeros_like(x))


@op("Softplus")
def softplus(node: Node, x: Any) -> Any:
    return jnp.logaddexp(x, _const(x, 0))


@op("Softsign")
def softsign(node: Node, x: Any) -> Any:
    return x / (1 + jnp.abs(x))


@op("Mish")
def mish(node: Node, x: Any) -> Any:
    return x * jnp.tanh(jnp.logaddexp(x, _const(x, 0)))


@op("Swish")
def swish(node: Node, x: Any) -> Any:
    a = _const(x, node.attr("alpha", 1.0))
    return x * jnn.sigmoid(a * dev(x))


@op("Gelu")
def gelu(node: Node, x: Any) -> Any:
    approximate = node.attr("approximate", "none")
    if approximate == "tanh":
        c = _const(x, math.sqrt(2 / math.pi))
        return _const(x, 0.5) * x * (1 + jnp.tanh(c * (x + _const(x, 0.044715) * x * x * x)))
    if approximate != "none":
        raise node.unsupported(f"approximate={approximate!r}")
    return _const(x, 0.5) * x * (1 + lax.erf(dev(x) * _const(x, 1 / math.sqrt(2))))


@op("Shrink")
def shrink(node: Node, x: Any) -> Any:
    lambd = _const(x, node.attr("lambd", 0.5))
    bias = _const(x, node.attr("bias", 0.0))
    zero = jnp.zeros_like(x)
    return jnp.where(x < -lambd, x + bias, jnp.where(x > lambd, x - bias, zero))


@op("SwiGLU")
def swiglu(node: Node, a: Any, b: Any) -> Any:
    alpha = _const(a, node.attr("alpha", 1.0))
    return a * jnn.sigmoid(alpha * dev(a)) * b


@op("BitCast")
def bitcast(node: Node, x: Any) -> Any:
    dtype = onnx_dtype(node, node.attr("to"))
    if is_host(x):
        return np.asarray(x).view(dtype)
    if np.dtype(x.dtype).itemsize != dtype.itemsize:
        raise node.unsupported(f"a bitcast from {x.dtype} to {dtype} (64-bit types are off)")
    return bitcast_convert_type(x, dtype)
