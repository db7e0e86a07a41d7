"""JAX's input strictness: jnp functions that JAX checks reject Python lists and tuples with
JAX's exact TypeError (found by calling every jnp function of real JAX with list arguments),
the ones JAX lets through (array, asarray, stack, concatenate of arrays, ...) still take them;
arange bit-exact with JAX on a sweep; finfo/iinfo fields of JAX's types."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import webjax.numpy as jnp

jax = pytest.importorskip("jax")
jjnp = jax.numpy

_ARGS = (
    [[1.0, 2.0]],
    [[1.0, 2.0], [1.0, 2.0]],
    [[[1.0, 2.0], [3.0, 4.0]]],
    [[1, 2], 1],
    [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]],
)
_STRICT = "requires ndarray or scalar arguments"


def _binds(f, args):
    try:
        inspect.signature(f).bind(*args)
        return True
    except (TypeError, ValueError):
        return False


def _first_strict_error(f, w):
    """JAX's probe: the first argument list (that webjax's function also takes) getting the
    strictness TypeError, and its message (None where no argument list does)."""
    for args in _ARGS:
        if not _binds(w, args):
            continue
        try:
            f(*args)
            return None
        except TypeError as e:
            if _STRICT in str(e):
                return args, str(e)
        except Exception:
            continue
    return None


def _jax_functions():
    out = []
    for name in sorted(dir(jjnp)):
        f = getattr(jjnp, name)
        if name.startswith("_") or not callable(f) or inspect.isclass(f) or inspect.ismodule(f):
            continue
        if not hasattr(jnp, name):  # a function webjax does not have (listed in FEATURES.md)
            continue
        out.append(name)
    return out


_PROBED: dict[str, object] = {}


def _probe(name):
    if name not in _PROBED:
        _PROBED[name] = _first_strict_error(getattr(jjnp, name), getattr(jnp, name))
    return _PROBED[name]


@pytest.mark.parametrize("name", _jax_functions())
def test_rejects_lists_where_jax_does(name):
    found = _probe(name)
    if found is None:
        pytest.skip(f"jnp.{name} takes lists in JAX (or fails otherwise on these arguments)")
    args, message = found
    with pytest.raises(TypeError) as e:
        getattr(jnp, name)(*args)
    assert str(e.value) == message


@pytest.mark.parametrize(
    "call",
    [
        lambda np_: np_.array([1, 2]),
        lambda np_: np_.asarray((1.0, 2.0)),
        lambda np_: np_.concatenate([np_.ones(2), np_.zeros(1)]),
        lambda np_: np_.stack([np_.ones(2), np_.zeros(2)]),
        lambda np_: np_.hstack([np_.ones(2), np_.zeros(1)]),
        lambda np_: np_.select([np_.ones(2) > 0], [np_.ones(2)]),
        lambda np_: np_.sum(np_.asarray([1, 2])),
        lambda np_: np_.clip(np_.arange(4), 1, 2),
        lambda np_: np_.arange(5),
    ],
)
def test_takes_what_jax_takes(call):
    np.testing.assert_array_equal(np.asarray(call(jnp)), np.asarray(call(jjnp)))


def test_arange_bits_match_jax():
    for args in [(5,), (0, 10, 3), (1.0, 2.0, 0.1), (-3, 4.5, 0.7), (10, 0, -1), (0.0, 1.0, 0.3)]:
        for dt in (None, "float32", "int32", "float16", "bfloat16"):
            w, j = np.asarray(jnp.arange(*args, dtype=dt)), np.asarray(jjnp.arange(*args, dtype=dt))
            assert w.dtype == j.dtype and w.shape == j.shape, (args, dt)
            assert w.tobytes() == j.tobytes(), (args, dt, w, j)


_FINFO_FIELDS = [
    "bits", "eps", "epsneg", "max", "min", "tiny", "smallest_normal", "smallest_subnormal",
    "resolution", "precision", "maxexp", "minexp", "nexp", "nmant", "iexp", "machep", "negep",
    "dtype",
]  # fmt: skip


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64", "complex64"])
def test_finfo_fields_have_jaxs_types(dt):
    got, want = jnp.finfo(dt), jjnp.finfo(dt)
    for f in _FINFO_FIELDS:
        g, w = getattr(got, f), getattr(want, f)
        assert type(g) is type(w) and str(g) == str(w), (f, g, w)


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "uint8", "uint16", "uint32", "int64"])
def test_iinfo_fields_have_jaxs_types(dt):
    got, want = jnp.iinfo(dt), jjnp.iinfo(dt)
    for f in ("bits", "min", "max", "dtype", "kind"):
        g, w = getattr(got, f), getattr(want, f)
        assert type(g) is type(w) and str(g) == str(w), (f, g, w)
