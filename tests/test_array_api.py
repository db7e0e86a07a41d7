"""The Array API standard's metadata of webjax.numpy (`__array_api_version__`,
`Array.__array_namespace__`, `__array_namespace_info__()`) against real JAX's. The standard's
own test suite runs with `python build.py array-api` (FEATURES.md has its counts)."""

from __future__ import annotations

import pytest

import webjax
import webjax.numpy as wnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

KINDS = [
    None,
    "bool",
    "signed integer",
    "unsigned integer",
    "integral",
    "real floating",
    "complex floating",
    "numeric",
    ("bool", "real floating"),
]


def _names(dtypes: dict) -> dict[str, str]:
    return {k: str(v) for k, v in dtypes.items()}


def test_version_and_namespace():
    assert wnp.__array_api_version__ == jnp.__array_api_version__
    x = wnp.arange(3)
    assert x.__array_namespace__() is wnp
    assert x.__array_namespace__(api_version=wnp.__array_api_version__) is wnp
    with pytest.raises(ValueError, match=r"2021\.12"):
        x.__array_namespace__(api_version="2021.12")
    with pytest.raises(ValueError) as theirs:
        jnp.arange(3).__array_namespace__(api_version="2021.12")
    with pytest.raises(ValueError) as ours:
        x.__array_namespace__(api_version="2021.12")
    assert str(ours.value) == str(theirs.value)


def test_namespace_of_a_tracer():
    seen = []

    def f(x):
        seen.append(x.__array_namespace__())
        return x

    webjax.jit(f)(wnp.ones(2))
    webjax.grad(lambda x: f(x).sum())(wnp.ones(2))
    assert seen == [wnp, wnp]


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_info_dtypes_match_jax(kind, x64):
    with webjax.enable_x64(x64), jax.enable_x64(x64):
        ours = wnp.__array_namespace_info__().dtypes(kind=kind)
        theirs = jnp.__array_namespace_info__().dtypes(kind=kind)
        assert sorted(_names(ours).items()) == sorted(_names(theirs).items())
        for default in (wnp.__array_namespace_info__().default_dtypes(),):
            assert _names(default) == _names(jnp.__array_namespace_info__().default_dtypes())


def test_info_dtypes_of_a_device():
    info = wnp.__array_namespace_info__()
    with webjax.enable_x64(True):
        for platform in ("cpu", "wasm", "webgpu", "webgl"):
            (device,) = webjax.devices(platform)
            names = set(info.dtypes(device=device))
            wide = {"int64", "uint64", "float64", "complex128"}
            assert names == set(info.dtypes()) - (
                wide if platform in ("webgpu", "webgl") else set()
            )
            for name in names:  # each can be made there
                assert wnp.zeros(2, name, device=device).devices() == {device}


def test_info_capabilities_and_devices():
    info = wnp.__array_namespace_info__()
    assert info.capabilities() == jnp.__array_namespace_info__().capabilities()
    assert info.default_device() is None
    devices = info.devices()
    assert devices[0] is None  # uncommitted, as in JAX
    assert webjax.devices()[0] in devices and webjax.devices("cpu")[0] in devices
    for d in devices[1:]:
        assert webjax.devices(d.platform)[0] == d
    with pytest.raises(KeyError):
        info.dtypes(kind="floating")


CREATORS = {
    "zeros": lambda m, d: m.zeros(3, device=d),
    "ones": lambda m, d: m.ones((2,), m.int32, device=d),
    "empty": lambda m, d: m.empty(2, device=d),
    "full": lambda m, d: m.full((2,), 7.0, device=d),
    "zeros_like": lambda m, d: m.zeros_like(m.ones(2), device=d),
    "ones_like": lambda m, d: m.ones_like(m.ones(2), device=d),
    "full_like": lambda m, d: m.full_like(m.ones(2), 3, device=d),
    "empty_like": lambda m, d: m.empty_like(m.ones(2), device=d),
    "arange": lambda m, d: m.arange(4, device=d),
    "linspace": lambda m, d: m.linspace(0, 1, 5, device=d),
    "eye": lambda m, d: m.eye(3, 2, 1, device=d),
    "asarray": lambda m, d: m.asarray([1, 2], device=d),
    "astype": lambda m, d: m.astype(m.ones(2), m.int32, device=d),
    "astype_method": lambda m, d: m.ones(2).astype(m.int32, device=d),
    "to_device": lambda m, d: m.ones(2).to_device(d),
}


@pytest.mark.parametrize("name", sorted(CREATORS))
def test_device_keyword_commits_as_in_jax(name):
    make = CREATORS[name]
    theirs, ours = make(jnp, jax.devices("cpu")[0]), make(wnp, webjax.devices("cpu")[0])
    assert ours.committed == theirs.committed is True
    assert ours.devices() == set(webjax.devices("cpu"))
    assert ours.tolist() == theirs.tolist()
    # no device: uncommitted; under jit: what the traced function returns, uncommitted
    assert make(wnp, None).committed == make(jnp, None).committed is False
    assert webjax.jit(lambda: make(wnp, webjax.devices("cpu")[0]))().committed is False


def test_setitem_raises_as_in_jax():
    with pytest.raises(TypeError) as theirs:
        jnp.ones(3)[0] = 2
    with pytest.raises(TypeError) as ours:
        wnp.ones(3)[0] = 2
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(NotImplementedError, match="stream"):
        wnp.ones(2).to_device(webjax.devices()[0], stream=1)
