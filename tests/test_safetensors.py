"""webjax.safetensors against the reference `safetensors` package: files each writes load in the
other, byte-identical where the format is deterministic, in every dtype; lazy and sliced reads;
metadata; malformed files; Flax-like parameter trees; HTTP range reads and the download cache
through build.py's server; arrays on each device."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
import webjax.safetensors as wst
from webjax._src.safetensors import sources

st = pytest.importorskip("safetensors")
st_numpy = pytest.importorskip("safetensors.numpy")
ml_dtypes = pytest.importorskip("ml_dtypes")
R = np.random.RandomState(0)
ROOT = Path(__file__).resolve().parents[1]

# file dtype -> NumPy dtype
NUMPY_OF = {
    "F64": np.dtype(np.float64),
    "F32": np.dtype(np.float32),
    "F16": np.dtype(np.float16),
    "BF16": np.dtype(ml_dtypes.bfloat16),
    "I64": np.dtype(np.int64),
    "I32": np.dtype(np.int32),
    "I16": np.dtype(np.int16),
    "I8": np.dtype(np.int8),
    "U64": np.dtype(np.uint64),
    "U32": np.dtype(np.uint32),
    "U16": np.dtype(np.uint16),
    "U8": np.dtype(np.uint8),
    "BOOL": np.dtype(bool),
    "C64": np.dtype(np.complex64),
    "F8_E4M3": np.dtype(ml_dtypes.float8_e4m3fn),
    "F8_E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "F8_E4M3FNUZ": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "F8_E5M2FNUZ": np.dtype(ml_dtypes.float8_e5m2fnuz),
    "F8_E8M0": np.dtype(ml_dtypes.float8_e8m0fnu),
}
F8 = [k for k in NUMPY_OF if k.startswith("F8")]


def sample(file_dtype: str, shape: tuple[int, ...] = (3, 5)) -> np.ndarray:
    dt = NUMPY_OF[file_dtype]
    if file_dtype in F8:  # every byte pattern, the special ones included
        return np.arange(256, dtype=np.uint8).view(dt).reshape(16, 16)
    if dt.kind == "b":
        return R.rand(*shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return R.randint(int(info.min) // 2, int(info.max) // 2, size=shape, dtype=np.int64).astype(
            dt
        )
    if dt.kind == "c":
        return (R.standard_normal(shape) + 1j * R.standard_normal(shape)).astype(dt)
    values = (R.standard_normal(shape) * 100).astype(np.float64)
    values.flat[:3] = [np.inf, -0.0, np.nan]
    return values.astype(dt)


def same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.dtype)
    assert got.tobytes() == want.tobytes()


# ---- round trips against the reference ------------------------------------------------------
DIRECT = [k for k in NUMPY_OF if k not in F8]


@pytest.mark.parametrize("file_dtype", DIRECT)
def test_reference_files_load(tmp_path: Path, file_dtype: str) -> None:
    a = sample(file_dtype)
    st_numpy.save_file({"t": a, "scalar": a.ravel()[:1].reshape(())}, tmp_path / "x.safetensors")
    with webjax.enable_x64(True):
        got = wst.load(tmp_path / "x.safetensors", device="cpu")
        same_bits(np.asarray(got["t"]), a)
        same_bits(np.asarray(got["scalar"]), a.ravel()[:1].reshape(()))
    numpy_got = wst.load(tmp_path / "x.safetensors", "numpy")
    same_bits(numpy_got["t"], a)


@pytest.mark.parametrize("file_dtype", ["F64", "I64", "U64"])
def test_64_bit_narrowed_without_x64_as_jax_does(file_dtype: str) -> None:
    jax = pytest.importorskip("jax")
    a = sample(file_dtype)
    if file_dtype != "F64":  # values that do not fit 32 bits wrap, as in JAX
        a.flat[0] = np.iinfo(a.dtype).max - 3
    else:
        a.flat[3] = 1e300
    with webjax.enable_x64(False):
        got = np.asarray(wst.load(st_numpy.save({"t": a}))["t"])
    with jax.enable_x64(False), np.errstate(over="ignore"):  # 1e300 overflows to inf
        want = np.asarray(jax.numpy.asarray(a))
    same_bits(got, want)


@pytest.mark.parametrize("file_dtype", F8)
def test_float8_loads_as_float8(file_dtype: str) -> None:
    a = sample(file_dtype)
    data = st_numpy.save({"t": a})
    t = wst.load(data)["t"]
    got = np.asarray(t)
    assert t.dtype == a.dtype and got.dtype == a.dtype  # as the reference's flax loader gives
    nan = np.isnan(a.astype(np.float32))
    assert (np.isnan(got.astype(np.float32)) == nan).all()
    assert got[~nan].tobytes() == a[~nan].tobytes()  # every other byte pattern exactly
    same_bits(wst.load(data, "numpy")["t"], a)  # the file's own dtype through ml_dtypes
    # saved back: the same bytes, each NaN as the format's first NaN byte of its sign
    back = wst.load(wst.save({"t": t}), "numpy")["t"]
    assert back.dtype == a.dtype and back[~nan].tobytes() == a[~nan].tobytes()
    assert np.isnan(back.astype(np.float32)[nan]).all()


def test_without_ml_dtypes(monkeypatch: pytest.MonkeyPatch) -> None:
    data = st_numpy.save({"q": sample("F8_E4M3"), "h": sample("BF16"), "f": sample("F32")})
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # `import ml_dtypes` now fails
    got = wst.load(data)  # webjax arrays need no ml_dtypes: float8 widens in pure Python
    assert got["q"].dtype == jnp.float8_e4m3fn and got["h"].dtype == jnp.bfloat16
    assert got["q"].tolist()[1][:4] == sample("F8_E4M3").astype(np.float32).tolist()[1][:4]
    with wst.open(data, "numpy") as f:
        assert f.get_tensor("f").dtype == np.float32
        for name, dtype in [("q", "F8_E4M3"), ("h", "BF16")]:
            with pytest.raises(ModuleNotFoundError, match=f"dtype {dtype} .* needs ml_dtypes"):
                f.get_tensor(name)


@pytest.mark.parametrize("file_dtype", list(NUMPY_OF))
def test_save_matches_reference_bytes(tmp_path: Path, file_dtype: str) -> None:
    a = sample(file_dtype)
    want = st_numpy.save({"t": a, "z": np.zeros((0, 2), a.dtype)})
    assert wst.save({"t": a, "z": np.zeros((0, 2), a.dtype)}) == want
    if file_dtype in F8:
        return
    with webjax.enable_x64(True):
        arrays = {"t": jnp.asarray(a), "z": jnp.zeros((0, 2), jnp.dtype(a.dtype.name))}
        assert wst.save(arrays) == want
        wst.save(arrays, tmp_path / "w.safetensors")
    with st.safe_open(str(tmp_path / "w.safetensors"), framework="np") as f:
        if file_dtype != "BF16":  # the reference's NumPy loader has no bfloat16
            same_bits(f.get_tensor("t"), a)


def test_many_tensors_and_metadata_byte_identical(tmp_path: Path) -> None:
    tensors = {f"{k.lower()}.weight": sample(k, (2, 3)) for k in NUMPY_OF}
    tensors["empty"] = np.zeros((4, 0), np.float32)
    one = {"format": "np ünïcode"}
    want = st_numpy.save(tensors, metadata=one)
    assert wst.save(tensors, metadata=one) == want
    wst.save(tensors, tmp_path / "m.safetensors", metadata=one)
    assert (tmp_path / "m.safetensors").read_bytes() == want
    # several metadata keys: the reference writes them in a hash map's order, which changes
    # from run to run; webjax keeps the dict's. The headers agree as JSON, the data bytewise.
    several = {"format": "np", "zz": "last key first", "ä": "ünïcode"}
    ours, theirs = wst.save(tensors, metadata=several), st_numpy.save(tensors, metadata=several)
    n = int.from_bytes(ours[:8], "little")
    assert len(ours) == len(theirs) and ours[:8] == theirs[:8] and ours[8 + n :] == theirs[8 + n :]
    assert json.loads(ours[8 : 8 + n]) == json.loads(theirs[8 : 8 + n])
    assert list(json.loads(ours[8 : 8 + n])["__metadata__"]) == list(several)
    with wst.open(ours, "numpy") as f:
        assert f.metadata() == several
        assert f.keys() == sorted(tensors)
        for name, a in tensors.items():
            same_bits(f.get_tensor(name), a)
    # the reference reads what webjax wrote, tensor by tensor
    for name, view in st.deserialize(ours):
        assert bytes(view["data"]) == tensors[name].tobytes()


# ---- lazy reads and slices --------------------------------------------------------------------
class Reads:
    """Records the byte ranges a source reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, cls: Any) -> None:
        self.ranges: list[tuple[int, int]] = []
        original = cls.read

        def read(source: Any, start: int, end: int) -> bytes:
            self.ranges.append((start, end))
            return original(source, start, end)

        monkeypatch.setattr(cls, "read", read)


def test_lazy_reads_only_the_tensor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tensors = {"a": sample("F32", (64, 64)), "b": sample("I16", (10,)), "c": sample("BF16")}
    path = tmp_path / "lazy.safetensors"
    st_numpy.save_file(tensors, path)
    reads = Reads(monkeypatch, sources.FileSource)
    with wst.open(path) as f:
        header_reads = len(reads.ranges)
        assert header_reads == 2  # N, then the JSON
        b = f.get_tensor("b")
        info = f.info("b")
        assert reads.ranges[header_reads:] == [(info.start, info.end)]
        same_bits(np.asarray(b), tensors["b"])
        assert f.source.file.closed is False
    assert f.source is None and info.nbytes == 20


SLICES: list[Any] = [
    (slice(None), 3),
    (1, slice(2, 9, 3)),
    (slice(None, None, -2), slice(None)),
    (Ellipsis, -1),
    (slice(5, 2), Ellipsis),
    (-2,),
    (slice(1, 6), slice(10, 0, -4)),
    2,
    Ellipsis,
]


@pytest.mark.parametrize("file_dtype", ["F32", "BF16", "U8", "BOOL", "I64", "C64"])
def test_slices_read_the_covering_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file_dtype: str
) -> None:
    a = sample(file_dtype, (7, 12))
    path = tmp_path / "s.safetensors"
    st_numpy.save_file({"pad": np.zeros(5, np.int8), "t": a}, path)
    reads = Reads(monkeypatch, sources.FileSource)
    with webjax.enable_x64(True), wst.open(path) as f:
        sl = f.get_slice("t")
        assert sl.get_shape() == [7, 12] and sl.get_dtype() == file_dtype
        for index in SLICES:
            reads.ranges.clear()
            got = np.asarray(sl[index])
            same_bits(got, a[index])
            if got.size:  # one read, from the first element touched to the last
                ((start, end),) = reads.ranges
                assert end - start <= a.nbytes
            else:
                assert reads.ranges == []
        with pytest.raises(IndexError):
            sl[7]
        with pytest.raises(IndexError):
            sl[0, 0, 0]
        with pytest.raises(TypeError):
            sl[[0, 1]]
    # the reference package's slices agree where it takes them (steps of 1)
    with st.safe_open(str(path), framework="np") as ref, wst.open(path, "numpy") as f:
        if file_dtype != "BF16":
            same_bits(f.get_slice("t")[1:4, 2:5], ref.get_slice("t")[1:4, 2:5])


def test_get_tensor_errors(tmp_path: Path) -> None:
    data = wst.save({"w": jnp.ones(3)})
    f = wst.open(data)
    with pytest.raises(KeyError, match="no tensor named 'v'"):
        f.get_tensor("v")
    f.close()
    with pytest.raises(ValueError, match="closed"):
        f.get_tensor("w")
    with pytest.raises(ValueError, match="framework"):
        wst.open(data, "torch")
    with pytest.raises(TypeError, match="source"):
        wst.load(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="metadata"):
        wst.save({"w": jnp.ones(3)}, metadata={"n": 1})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match=r"both named 'a\.b'"):
        wst.save({"a.b": jnp.ones(1), "a": {"b": jnp.ones(1)}})
    with pytest.raises(ValueError, match="__metadata__"):
        wst.save({"__metadata__": jnp.ones(1)})
    with pytest.raises(ValueError, match="named arrays"):
        wst.save(jnp.ones(1))
    with pytest.raises(TypeError, match="traced"):
        webjax.jit(lambda x: wst.save({"x": x}))(jnp.ones(2))
    with pytest.raises(TypeError, match="complex128"), webjax.enable_x64(True):
        wst.save({"c": jnp.ones(2, jnp.complex128)})


def test_metadata_round_trip() -> None:
    for metadata in [None, {}, {"b": "1", "a": "2"}]:
        data = wst.save({"x": jnp.arange(3)}, metadata=metadata)
        assert wst.open(data).metadata() == metadata
        with (
            st.safe_open_bytes(data, framework="np")
            if hasattr(st, "safe_open_bytes")
            else (_reference_open(data)) as f
        ):
            assert (f.metadata() or None) == (metadata or None)


def _reference_open(data: bytes) -> Any:
    import tempfile

    tmp = Path(tempfile.mkdtemp()) / "m.safetensors"
    tmp.write_bytes(data)
    return st.safe_open(str(tmp), framework="np")


# ---- malformed files -------------------------------------------------------------------------
def _file(header: Any, data: bytes = b"", raw: bytes | None = None) -> bytes:
    text = raw if raw is not None else json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text)) + text + data


def _t(dtype: str, shape: list[int], begin: int, end: int) -> dict[str, Any]:
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


MALFORMED = {
    "gap": (_file({"a": _t("F32", [1], 0, 4), "b": _t("F32", [1], 8, 12)}, bytes(12)), "gap"),
    "overlap": (
        _file({"a": _t("F32", [2], 0, 8), "b": _t("F32", [1], 4, 8)}, bytes(8)),
        "overlaps",
    ),
    "past the end": (_file({"a": _t("F32", [2], 0, 8)}, bytes(4)), "not fully covered"),
    "trailing bytes": (_file({"a": _t("F32", [1], 0, 4)}, bytes(8)), "not fully covered"),
    "size and shape": (_file({"a": _t("F32", [3], 0, 8)}, bytes(8)), "12 bytes"),
    "not from 0": (_file({"a": _t("F32", [1], 4, 8)}, bytes(8)), "gap"),
    "reversed": (_file({"a": _t("F32", [0], 4, 0)}, bytes(4)), "ends"),
    "dtype": (_file({"a": _t("F17", [2], 0, 8)}, bytes(8)), "unknown dtype 'F17'"),
    "shape": (_file({"a": _t("F32", [-2], 0, 8)}, bytes(8)), "shape"),
    "offsets type": (_file({"a": _t("F32", [1], 0.0, 4)}, bytes(4)), "data_offsets"),  # type: ignore[arg-type]
    "missing field": (_file({"a": {"dtype": "F32", "shape": [2]}}, bytes(8)), "data_offsets"),
    "JSON": (_file(None, raw=b'{"a":'), "invalid JSON"),
    "not an object": (_file(None, raw=b"[1, 2]  "), "not an object"),
    "UTF-8": (_file(None, raw=b'{"\xff":1}'), "UTF-8"),
    "header limit": (struct.pack("<Q", 10**9) + b"{}", "too large"),
    "header length": (struct.pack("<Q", 100) + b"{}", "invalid header length"),
    "short": (b"\x01\0\0", "too small"),
    "metadata": (_file({"__metadata__": {"a": 1}}), "__metadata__"),
    "tensor entry": (_file({"a": 5}), "expected an object"),
    "sub-byte end": (_file({"a": _t("F4", [3], 0, 2)}, bytes(2)), "byte boundary"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    data, message = MALFORMED[case]
    with pytest.raises(st.SafetensorError):  # the reference refuses it too
        st.deserialize(data)
    with pytest.raises(wst.SafetensorError, match=message) as info:
        wst.load(data)
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith("Error while deserializing header: ")
    opened: list[Any] = []
    original = sources.FileSource.__init__

    def record(self: Any, path: Any) -> None:
        original(self, path)
        opened.append(self)

    monkeypatch.setattr(sources.FileSource, "__init__", record)
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    for call in (wst.load, wst.open):
        with pytest.raises(wst.SafetensorError, match=message):
            call(path)
    assert len(opened) == 2 and all(s.file.closed for s in opened)  # nothing left open


def test_duplicate_names_are_refused_and_unaligned_offsets_accepted() -> None:
    one = '"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}'
    with pytest.raises(wst.SafetensorError, match="duplicate key 'a'"):
        wst.load(_file(None, bytes(4), raw=("{" + one + "," + one + "}").encode()))
    # the format does not require aligned offsets (the reference reads this file too)
    odd = _file(
        {"b": _t("I8", [1], 0, 1), "a": _t("F32", [1], 1, 5)}, b"\7" + struct.pack("<f", 2.5)
    )
    assert dict(st.deserialize(odd))["a"]["dtype"] == "F32"
    got = wst.load(odd)
    assert float(got["a"][0]) == 2.5 and int(got["b"][0]) == 7


def test_sub_byte_dtypes_raise_naming_the_dtype() -> None:
    data = _file({"a": _t("F4", [4], 0, 2)}, bytes(2))
    with pytest.raises(TypeError, match="dtype F4"):
        wst.load(data)


# ---- pytrees ------------------------------------------------------------------------------------
def _params() -> dict[str, Any]:
    return {
        "params": {
            "Dense_0": {"kernel": jnp.asarray(sample("F32", (4, 8))), "bias": jnp.zeros(8)},
            "LayerNorm_0": {"scale": jnp.ones(8, jnp.bfloat16)},
            "blocks": [{"w": jnp.full((2, 2), i, jnp.float16)} for i in range(3)],
        },
        "batch_stats": {"mean": jnp.arange(8, dtype=jnp.int32)},
    }


def test_flax_like_trees_round_trip() -> None:
    flax_traverse = pytest.importorskip("flax.traverse_util")
    params = _params()
    names = set(wst.flatten(params))
    assert "params.blocks.2.w" in names and "params.Dense_0.kernel" in names
    dict_only = {k: v for k, v in params["params"].items() if k != "blocks"}
    assert set(wst.flatten(dict_only)) == set(flax_traverse.flatten_dict(dict_only, sep="."))
    loaded = wst.load(wst.save(params))
    assert set(loaded) == names
    back = wst.unflatten(loaded, like=params)
    for got, want in zip(webjax.tree.leaves(back), webjax.tree.leaves(params), strict=True):
        assert got.dtype == want.dtype
        same_bits(np.asarray(got), np.asarray(want))
    nested = wst.unflatten(loaded)
    assert set(nested["params"]["blocks"]) == {"0", "1", "2"}
    with pytest.raises(KeyError, match="no tensors named"):
        wst.unflatten({}, like=params)
    wrong = dict(loaded, **{"batch_stats.mean": jnp.zeros(3)})
    with pytest.raises(ValueError, match="shape"):
        wst.unflatten(wrong, like=params)


def test_flax_safetensors_reads_webjax_files() -> None:
    st_flax = pytest.importorskip("safetensors.flax")
    params = _params()
    del params["params"]["LayerNorm_0"]  # its NumPy loader has no bfloat16
    data = wst.save(params)
    got = st_flax.load(data)
    assert set(got) == set(wst.flatten(params))
    for name, a in wst.load(data).items():
        same_bits(np.asarray(got[name]), np.asarray(a))
    assert st_flax.save({k: got[k] for k in got}) == data


# ---- devices ------------------------------------------------------------------------------------
DEVICE_DTYPES = ["F32", "F16", "BF16", "I32", "U8", "BOOL", "F8_E4M3"]


def test_arrays_land_on_the_device(device: Any) -> None:
    tensors = {k: sample(k, (3, 4)) for k in DEVICE_DTYPES}
    data = st_numpy.save(tensors)
    default = wst.load(data)  # the default device (the fixture's), uncommitted
    placed = wst.load(data, device=device)
    for name, a in tensors.items():
        assert default[name].device == device and not default[name].committed
        assert placed[name].device == device and placed[name].committed
        got = np.asarray(placed[name])
        assert got.dtype == a.dtype
        if name.startswith("F8"):  # (NaNs in the same places)
            got, a = got.astype(np.float32), a.astype(np.float32)
        np.testing.assert_array_equal(got, a)
    # computing on them works as on any array of the device
    total = webjax.jit(lambda x, y: (x * 2).sum() + y.astype(jnp.float32).sum())(
        placed["F32"], placed["BF16"]
    )
    expect = (tensors["F32"] * 2).sum() + tensors["BF16"].astype(np.float32).sum()
    np.testing.assert_allclose(float(total), float(expect), rtol=1e-5)
    with webjax.enable_x64(False):
        narrowed = wst.load(st_numpy.save({"d": sample("F64")}), device=device)["d"]
        assert narrowed.dtype == jnp.float32 and narrowed.device == device


# ---- HTTP: range reads and the download cache, through build.py's server -----------------------
@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    spec = importlib.util.spec_from_file_location("webjax_build_script", ROOT / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.setenv("WEBJAX_CACHE_DIR", str(tmp_path / "cache"))
    server, url = build.start_server(root, quiet=True)
    try:
        yield url, root
    finally:
        server.shutdown()
        server.server_close()


MODEL = {
    "embed": sample("F32", (300, 64)),  # 76.8 kB, first in the file: past the first read's 64 kB
    "head.bias": sample("BF16", (64,)),
    "head.kernel": sample("F16", (64, 10)),
}


def _model() -> dict[str, np.ndarray]:
    return MODEL


def test_url_reads_in_ranges(served: tuple[str, Path]) -> None:
    url, root = served
    model = _model()
    st_numpy.save_file(model, root / "m.safetensors")
    with wst.open(url + "m.safetensors", cache=None) as f:
        assert f.source.requests == 1  # the header came with the first 64 kB
        first = f.get_slice("embed")[:10]  # inside those 64 kB: no request
        assert f.source.requests == 1
        bias = f.get_tensor("head.bias")  # past them: one request
        last = f.get_slice("embed")[299]
        assert f.source.requests == 3
        same_bits(np.asarray(first), model["embed"][:10])
        same_bits(np.asarray(last), model["embed"][299])
        same_bits(np.asarray(bias), model["head.bias"])
    loaded = wst.load_url(url + "m.safetensors", cache=None)
    for name, a in model.items():
        same_bits(np.asarray(loaded[name]), a)
    assert wst.load(url + "m.safetensors").keys() == loaded.keys()
    for got in (
        asyncio.run(wst.load_async(url + "m.safetensors")),
        asyncio.run(wst.load_async(root / "m.safetensors")),
    ):
        for name, a in model.items():
            same_bits(np.asarray(got[name]), a)
    with pytest.raises(OSError, match="404"):
        wst.open(url + "missing.safetensors")


def test_download_then_offline(served: tuple[str, Path]) -> None:
    url, root = served
    model = _model()
    st_numpy.save_file(model, root / "m.safetensors", metadata={"name": "tiny"})
    size = (root / "m.safetensors").stat().st_size
    seen: list[tuple[int, int | None]] = []
    assert wst.download(url + "m.safetensors", progress=lambda n, t: seen.append((n, t))) == size
    assert seen[-1] == (size, size) and all(t == size for _, t in seen)
    (root / "m.safetensors").unlink()  # the server has it no more
    with pytest.raises(OSError, match="404"):
        wst.open(url + "m.safetensors", cache=None)
    with wst.open(url + "m.safetensors") as f:  # from the cache
        assert "cached" in f.source.description and f.metadata() == {"name": "tiny"}
        same_bits(np.asarray(f.get_tensor("head.kernel")), model["head.kernel"])
    assert wst.download(url + "m.safetensors") == size  # cached: no fetch
    assert wst.evict(url + "m.safetensors") and not wst.evict(url + "m.safetensors")
    with pytest.raises(OSError, match="404"):
        wst.load(url + "m.safetensors")


def test_server_without_ranges(tmp_path: Path) -> None:
    import functools
    import http.server
    import threading

    st_numpy.save_file(_model(), tmp_path / "m.safetensors")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))

    class Quiet(http.server.ThreadingHTTPServer):
        def handle_error(self, *args: Any) -> None:
            pass

    server = Quiet(("127.0.0.1", 0), handler)
    handler.func.log_message = lambda *a: None  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/m.safetensors"
        with wst.open(url, cache=None) as f:  # a 200 with the whole file: read from memory
            same_bits(np.asarray(f.get_tensor("embed")), _model()["embed"])
            assert isinstance(f.source, sources.BytesSource)
    finally:
        server.shutdown()
        server.server_close()


def test_f8_table_matches_ml_dtypes_exhaustively() -> None:
    from webjax._src.safetensors import convert

    for name in F8:
        np_dt = NUMPY_OF[name]
        got = convert._widen_f8(bytes(range(256)), name)
        values = np.frombuffer(got, np.float32)
        want = np.arange(256, dtype=np.uint8).view(np_dt).astype(np.float32)
        assert all(
            (math.isnan(g) and math.isnan(w))
            or (g == w and math.copysign(1, g) == math.copysign(1, w))
            for g, w in zip(values.tolist(), want.tolist(), strict=True)
        ), name
