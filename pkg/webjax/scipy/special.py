"""webjax.scipy.special: `jax.scipy.special`."""

from webjax._src.scipy_special import (
    digamma,
    entr,
    erf,
    erfc,
    erfinv,
    expit,
    gammaln,
    log_ndtr,
    logit,
    logsumexp,
    ndtr,
    ndtri,
    xlog1py,
    xlogy,
)

__all__ = [
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfinv",
    "expit",
    "gammaln",
    "log_ndtr",
    "logit",
    "logsumexp",
    "ndtr",
    "ndtri",
    "xlog1py",
    "xlogy",
]
