"""JAX's input strictness: jnp functions that JAX checks reject Python lists and tuples with
JAX's exact TypeError (found by calling every jnp function of real JAX with list arguments),
the ones JAX lets through (array, asarray, stack, concatenate of arrays, ...) still take them;
arange bit-exact with JAX on a sweep."""

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
