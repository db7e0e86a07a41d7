"""jax.experimental.checkify and io_callback: the same programs on webjax and on real JAX
(error messages, under jit, vmap and grad; the automatic checks)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax

# `ns` is webjax or jax; `show` records a value or the exception it raised.
PROGRAM = """
jnp, checkify = ns.numpy, ns.experimental.checkify

def f(x):
    checkify.check(x > 0, "x must be positive, got {x}", x=x)
    return jnp.log(x)

def show(thunk):
    try:
        v = thunk()
        out.append(v if isinstance(v, (str, type(None))) else np.asarray(v).tolist())
    except Exception as ex:
        out.append((type(ex).__name__, str(ex).split("\\n")[0]))

show(lambda: checkify.checkify(f)(jnp.array(-1.0))[0].get())
show(lambda: checkify.checkify(f)(jnp.array(2.0))[1])
show(lambda: ns.jit(checkify.checkify(f))(jnp.array(-2.0))[0].get())
show(lambda: ns.jit(checkify.checkify(f))(jnp.array(2.0))[0].get())
show(lambda: checkify.checkify(ns.jit(f))(jnp.array(-1.0))[0].get())
show(lambda: ns.vmap(checkify.checkify(f))(jnp.array([1.0, -2.0, -3.0]))[0].get())
show(lambda: checkify.checkify(ns.vmap(f))(jnp.array([1.0, -2.0, -3.0]))[0].get())
show(lambda: checkify.checkify(ns.grad(f))(jnp.array(-1.0))[0].get())
show(lambda: checkify.checkify(f)(jnp.array(-1.0))[0].throw())
show(lambda: checkify.checkify(f)(jnp.array(1.0))[0].throw())
show(lambda: checkify.check(jnp.array(False), "boom {}", jnp.array(3)))
show(lambda: checkify.check(jnp.array(True), "fine"))
show(lambda: ns.jit(lambda x: checkify.check(x > 0, "boom"))(1.0))

def g(x):
    return jnp.log(x), x / jnp.array(0.0), jnp.arange(3)[x.astype(int) + 5]

for errors in (checkify.all_checks, checkify.user_checks, checkify.index_checks):
    show(lambda: checkify.checkify(g, errors=errors)(jnp.array(-1.0))[0].get())
show(lambda: checkify.checkify(lambda x: x // jnp.array([0, 1]), errors=checkify.div_checks)(
    jnp.array(1))[0].get())
show(lambda: checkify.checkify(lambda x: x // jnp.array([2, 1]), errors=checkify.div_checks)(
    jnp.array(1))[0].get())
show(lambda: checkify.checkify(lambda x: jnp.arange(3)[x], errors=checkify.index_checks)(
    jnp.array(-7))[0].get())
show(lambda: checkify.checkify(lambda x: jnp.sin(x) * jnp.inf * 0, errors=checkify.nan_checks)(
    jnp.array(1.0))[0].get())
show(lambda: checkify.checkify(lambda x: jnp.sqrt(x), errors=checkify.float_checks)(
    jnp.array([1.0, -1.0]))[0].get())
out.append(sorted(c.__name__ for c in checkify.automatic_checks))

def two(x):
    checkify.check(x < 10, "first {}", x)
    checkify.check(x < 5, "second {}", x)
    return x

show(lambda: checkify.checkify(two)(jnp.array(7))[0].get())
show(lambda: checkify.checkify(two)(jnp.array(12))[0].get())
err, _ = checkify.checkify(f)(jnp.array(-4.0))
show(lambda: checkify.checkify(lambda: checkify.check_error(err))()[0].get())
show(lambda: checkify.check_error(err))
show(lambda: checkify.checkify(lambda x: checkify.debug_check(x > 0, "dbg {}", x))(
    jnp.array(-1.0))[0].get())
show(lambda: checkify.debug_check(jnp.array(False), "ignored"))
show(lambda: ns.tree_util.tree_structure(checkify.checkify(f)(jnp.array(1.0))[0]).num_leaves > 0)
"""


def _run(ns: Any) -> list:
    out: list = []
    exec(PROGRAM, {"ns": ns, "np": np, "out": out})
    return out


def test_checkify_matches_jax(device):
    pytest.importorskip("jax.experimental.checkify")
    jax = pytest.importorskip("jax")

    got, want = _run(webjax), _run(jax)
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        assert a == b, (i, a, b)


def test_checks_in_control_flow_are_named():
    checkify = webjax.experimental.checkify
    jnp = webjax.numpy

    def body(c, x):
        checkify.check(x > 0, "neg")
        return c, x

    with pytest.raises(NotImplementedError, match="scan"):
        checkify.checkify(lambda xs: webjax.lax.scan(body, 0.0, xs))(jnp.ones(3))


# ---- io_callback ------------------------------------------------------------------------------
IO_PROGRAM = """
jnp = ns.numpy
from_host = []

def record(x):
    from_host.append(np.asarray(x).tolist())
    return np.asarray(x) * 2

spec = lambda x: ns.ShapeDtypeStruct(x.shape, x.dtype)
io = ns.experimental.io_callback

def f(x):
    io(record, spec(x), x + 1, ordered=True)  # result unused: still runs
    return io(record, spec(x), x, ordered=True)  # in program order after the first

x = jnp.arange(3.0)
out.append(np.asarray(f(x)).tolist())
jf = ns.jit(f)
out.append(np.asarray(jf(x)).tolist())
out.append(np.asarray(jf(x + 10)).tolist())
out.append(np.asarray(ns.vmap(lambda r: io(record, spec(r), r))(jnp.ones((2, 2)))).tolist())
for thunk in (lambda: ns.vmap(lambda r: io(record, spec(r), r, ordered=True))(jnp.ones((2, 2))),
              lambda: ns.grad(lambda r: io(record, spec(r), r).sum())(x)):
    try:
        thunk()
    except Exception as e:
        out.append((type(e).__name__, str(e)))
out.append(from_host)
"""


def test_io_callback_matches_jax():
    jax = pytest.importorskip("jax")

    def run(ns: Any) -> list:
        out: list = []
        exec(IO_PROGRAM, {"ns": ns, "np": np, "out": out})
        return out

    assert run(webjax) == run(jax)


def test_callback_errors_are_jax_runtime_errors():
    jax = pytest.importorskip("jax")

    def run(ns: Any) -> list:
        def boom(x):
            raise ValueError("boom")

        out = []
        spec = ns.ShapeDtypeStruct((), "float32")
        for f in (
            lambda x: ns.pure_callback(boom, spec, x),
            ns.jit(lambda x: ns.pure_callback(boom, spec, x)),
            lambda x: ns.experimental.io_callback(boom, spec, x),
        ):
            try:
                f(1.0).block_until_ready()
            except Exception as e:
                out.append((isinstance(e, ns.errors.JaxRuntimeError), str(e).splitlines()[-1]))
        return out

    assert run(webjax) == run(jax) == [(True, "ValueError: boom")] * 3
