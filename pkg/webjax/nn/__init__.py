"""webjax.nn: the jax.nn API (activations, softmax family, one_hot, dot_product_attention,
initializers)."""

from webjax._src.nn.attention import dot_product_attention
from webjax._src.nn.functions import (
    celu,
    elu,
    gelu,
    glu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    identity,
    leaky_relu,
    log1mexp,
    log_sigmoid,
    log_softmax,
    logmeanexp,
    logsumexp,
    mish,
    one_hot,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    soft_sign,
    softmax,
    softplus,
    sparse_plus,
    sparse_sigmoid,
    squareplus,
    standardize,
    swish,
    tanh,
)
from webjax.nn import initializers

__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "initializers", "leaky_relu", "log_sigmoid", "log_softmax", "logsumexp", "one_hot", "relu",
    "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax", "softplus", "standardize",
    "swish", "tanh", "dot_product_attention", "identity", "log1mexp", "logmeanexp", "mish",
    "sparse_plus", "sparse_sigmoid", "squareplus",
]  # fmt: skip
