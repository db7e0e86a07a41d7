"""`jax.example_libraries.stax`: a small neural-network library of `(init_fun, apply_fun)`
layer pairs.

    init_fun(rng, input_shape) -> (output_shape, params)
    apply_fun(params, inputs, **kwargs) -> outputs

Shapes are tuples of ints (a leading -1 stands for any batch size, as in JAX); `serial` and
`parallel` combine layers, `FanOut`/`FanInSum`/`FanInConcat` route values between them. The
layers are lax/jnp compositions (`conv_general_dilated`, `conv_transpose`, `reduce_window`,
`jax.nn` activations and initializers), so they run on every device and under every
transformation; parameters drawn from the same key are the same as JAX's.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import numpy as jnp
from ..lax import convolution, windowed
from ..lax import lax as lax_ops
from ..nn.functions import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from ..nn.initializers import glorot_normal, normal, ones, zeros
from ..random import keys, samplers

__all__ = [
    "AvgPool",
    "BatchNorm",
    "Conv",
    "Conv1DTranspose",
    "ConvTranspose",
    "Dense",
    "Dropout",
    "Elu",
    "Exp",
    "FanInConcat",
    "FanInSum",
    "FanOut",
    "Flatten",
    "Gelu",
    "GeneralConv",
    "GeneralConvTranspose",
    "Identity",
    "LeakyRelu",
    "LogSoftmax",
    "MaxPool",
    "Relu",
    "Selu",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "SumPool",
    "Tanh",
    "elementwise",
    "parallel",
    "serial",
    "shape_dependent",
    "elu",
    "gelu",
    "glorot",
    "glorot_normal",
    "leaky_relu",
    "log_softmax",
    "logsoftmax",
    "normal",
    "ones",
    "randn",
    "relu",
    "selu",
    "sigmoid",
    "softmax",
    "softplus",
    "standardize",
    "zeros",
]

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

Layer = tuple[Callable[..., Any], Callable[..., Any]]
Shape = tuple[int, ...]


# ---- shape arithmetic (JAX's lax.*_shape_tuple helpers) ---------------------------------------


def _stride_dim(size: int, window: int, stride: int) -> int:
    return max((size - window) // stride + 1, 0)


def _canonical(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], dimension_numbers: Any
) -> tuple[Any, list[int], list[int]]:
    dn = convolution.conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    return dn, [int(lhs_shape[i]) for i in dn.lhs_spec], [int(rhs_shape[i]) for i in dn.rhs_spec]


def _in_out_layout(out_spec: Sequence[int], canonical: Sequence[int]) -> Shape:
    out = [0] * len(canonical)
    for axis, size in zip(out_spec, canonical):
        out[axis] = size
    return tuple(out)


def _conv_general_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    strides: Sequence[int],
    padding: Any,
    dimension_numbers: Any,
) -> Shape:
    dn, lhs, rhs = _canonical(lhs_shape, rhs_shape, dimension_numbers)
    if isinstance(padding, str):
        padding = convolution.padtype_to_pads(lhs[2:], rhs[2:], strides, padding)
    space = [
        _stride_dim(n + lo + hi, k, s)
        for n, k, s, (lo, hi) in zip(lhs[2:], rhs[2:], strides, padding)
    ]
    return _in_out_layout(dn.out_spec, [lhs[0], rhs[0], *space])


def _conv_transpose_pads(k: int, s: int, padding: Any) -> tuple[int, int]:
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
        return lo, total - lo
    if padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        return k - 1, total - (k - 1)
    if isinstance(padding, tuple):
        lo, hi = (k - p - 1 for p in padding)
        return lo, hi
    raise ValueError(f"Invalid padding mode: {padding}")


def _conv_transpose_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    strides: Sequence[int],
    padding: Any,
    dimension_numbers: Any,
) -> Shape:
    dn, lhs, rhs = _canonical(lhs_shape, rhs_shape, dimension_numbers)
    if isinstance(padding, str):
        padding = [_conv_transpose_pads(k, s, padding) for k, s in zip(rhs[2:], strides)]
    space = [(n - 1) * s - k + 2 + sum(p) for n, k, s, p in zip(lhs[2:], rhs[2:], strides, padding)]
    return _in_out_layout(dn.out_spec, [lhs[0], rhs[0], *space])


def _reduce_window_shape_tuple(
    shape: Sequence[int], window: Sequence[int], strides: Sequence[int], pads: Sequence[Any]
) -> Shape:
    return tuple(
        _stride_dim(n + lo + hi, w, s) for n, w, s, (lo, hi) in zip(shape, window, strides, pads)
    )


# ---- layers ----------------------------------------------------------------------------------

# default initializers (made once, as JAX's default arguments are)
_DENSE_W_INIT = glorot_normal()
_DENSE_B_INIT = normal()
_CONV_B_INIT = normal(1e-6)


def Dense(out_dim: int, W_init: Any = _DENSE_W_INIT, b_init: Any = _DENSE_B_INIT) -> Layer:
    """A fully-connected layer: inputs @ W + b."""

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        k1, k2 = keys.split(rng)
        W = W_init(k1, (input_shape[-1], out_dim))
        b = b_init(k2, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(
    lhs_spec: str, rhs_spec: str, out_chan: int, filter_shape: Sequence[int], input_shape: Shape
) -> list[int]:
    spatial = iter(filter_shape)
    in_chan = input_shape[lhs_spec.index("C")]
    return [out_chan if c == "O" else in_chan if c == "I" else next(spatial) for c in rhs_spec]


def GeneralConv(
    dimension_numbers: Any,
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    W_init: Any = None,
    b_init: Any = _CONV_B_INIT,
) -> Layer:
    """A convolution layer with layouts given by `dimension_numbers` (lhs, rhs, out specs such
    as ('NHWC', 'HWIO', 'NHWC'))."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        kernel_shape = _kernel_shape(lhs_spec, rhs_spec, out_chan, filter_shape, input_shape)
        output_shape = _conv_general_shape_tuple(
            input_shape, kernel_shape, strides, padding, dimension_numbers
        )
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = keys.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        out = convolution.conv_general_dilated(
            inputs, W, strides, padding, one, one, dimension_numbers=dimension_numbers
        )
        return out + b

    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(
    dimension_numbers: Any,
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    W_init: Any = None,
    b_init: Any = _CONV_B_INIT,
) -> Layer:
    """A transposed-convolution layer (`lax.conv_transpose`) with layouts given by
    `dimension_numbers`."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        kernel_shape = _kernel_shape(lhs_spec, rhs_spec, out_chan, filter_shape, input_shape)
        output_shape = _conv_transpose_shape_tuple(
            input_shape, kernel_shape, strides, padding, dimension_numbers
        )
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = keys.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        out = convolution.conv_transpose(
            inputs, W, strides, padding, dimension_numbers=dimension_numbers
        )
        return out + b

    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(
    axis: Any = (0, 1, 2),
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    beta_init: Any = zeros,
    gamma_init: Any = ones,
) -> Layer:
    """Batch normalization over `axis` (batch statistics of the inputs, no running averages),
    then a learned per-feature scale (`gamma`) and shift (`beta`)."""
    axis = (axis,) if jnp.isscalar(axis) else axis

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = keys.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params: Any, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z

    return init_fun, apply_fun


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """A parameter-free layer applying `fun(inputs, **fun_kwargs)`."""

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


# ---- pooling ---------------------------------------------------------------------------------


def _window_sizes(
    window_shape: Sequence[int], strides: Sequence[int], padding: Any
) -> Callable[[Any, Any, Any], Any]:
    """AvgPool's rescaling: divide each window's sum by the number of its in-bounds inputs."""

    def rescale(outputs: Any, inputs: Any, spec: Any) -> Any:
        if spec is None:
            non_spatial = (0, inputs.ndim - 1)
        else:
            non_spatial = (spec.index("N"), spec.index("C"))
        spatial = tuple(n for i, n in enumerate(inputs.shape) if i not in non_spatial)
        counts = windowed.reduce_window(
            jnp.ones(spatial, dtype=inputs.dtype), 0.0, lax_ops.add, window_shape, strides, padding
        )
        for i in sorted(non_spatial):
            counts = jnp.expand_dims(counts, i)
        return outputs / counts

    return rescale


def _pooling_layer(reducer: Any, init_val: Any, rescaler: Any = None) -> Callable[..., Layer]:
    def PoolingLayer(
        window_shape: Sequence[int],
        strides: Sequence[int] | None = None,
        padding: Any = "VALID",
        spec: str | None = None,
    ) -> Layer:
        """A pooling layer over the spatial axes of `spec` (default: batch first, channels
        last)."""
        window_shape = tuple(window_shape)
        strides = tuple(strides or (1,) * len(window_shape))
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        if spec is None:
            non_spatial = (0, len(window_shape) + 1)
        else:
            non_spatial = (spec.index("N"), spec.index("C"))
        dims, steps = window_shape, strides
        for i in sorted(non_spatial):
            dims = dims[:i] + (1,) + dims[i:]
            steps = steps[:i] + (1,) + steps[i:]

        def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
            pads = convolution.padtype_to_pads(input_shape, dims, steps, padding)
            return _reduce_window_shape_tuple(input_shape, dims, steps, pads), ()

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            out = windowed.reduce_window(inputs, init_val, reducer, dims, steps, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(lax_ops.max, -math.inf)
SumPool = _pooling_layer(lax_ops.add, 0.0)
AvgPool = _pooling_layer(lax_ops.add, 0.0, _window_sizes)


# ---- structural layers -----------------------------------------------------------------------


def _flatten() -> Layer:
    """Flatten all but the leading (batch) dimension."""

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()


def _identity() -> Layer:
    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return inputs

    return init_fun, apply_fun


Identity = _identity()


def FanOut(num: int) -> Layer:
    """Copy the input into a list of `num` inputs (for `parallel`)."""

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Any, Any]:
        return [input_shape] * num, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum() -> Layer:
    def init_fun(rng: Any, input_shape: Any) -> tuple[Shape, Any]:
        return input_shape[0], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return sum(inputs)

    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis: int = -1) -> Layer:
    """Concatenate a list of inputs along `axis`."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Shape, Any]:
        first = tuple(input_shape[0])
        ax = axis % len(first)
        size = sum(shape[ax] for shape in input_shape)
        return first[:ax] + (size,) + first[ax + 1 :], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Dropout, as JAX's stax defines it: in 'train' mode each input is kept with probability
    `rate` (and scaled by 1 / rate), so `rate` is the keep probability; apply_fun needs an
    `rng` keyword."""

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That "
                "is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng)` where `rng` is a PRNG key (e.g. from "
                "`jax.random.key`)."
            )
        if mode == "train":
            keep = samplers.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs

    return init_fun, apply_fun


# ---- combinators -----------------------------------------------------------------------------


def serial(*layers: Layer) -> Layer:
    """Compose layers in sequence; the `rng` keyword of apply_fun is split among them."""
    n = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        params = []
        for init in init_funs:
            rng, layer_rng = keys.split(rng)
            input_shape, p = init(layer_rng, input_shape)
            params.append(p)
        return input_shape, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = keys.split(rng, n) if rng is not None else (None,) * n
        for fun, p, r in zip(apply_funs, params, rngs):
            inputs = fun(p, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """Apply layers side by side: the i-th layer to the i-th of a sequence of inputs (use with
    FanOut and FanInSum/FanInConcat)."""
    n = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        rngs = keys.split(rng, n)
        pairs = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        shapes = tuple(p[0] for p in pairs)
        params = tuple(p[1] for p in pairs)
        return shapes, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = keys.split(rng, n) if rng is not None else (None,) * n
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Any], Layer]) -> Layer:
    """A layer built by `make_layer(input_shape)` once the input shape is known."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
