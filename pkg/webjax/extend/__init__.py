"""webjax.extend: the API libraries build on (`jax.extend`): primitives and jaxprs
(`extend.core`), wrapped functions (`linear_util`), source info, backends, random bits."""

from webjax.extend import backend, core, linear_util, random, source_info_util

__all__ = ["backend", "core", "linear_util", "random", "source_info_util"]
