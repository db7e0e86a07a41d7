"""jax.profiler's annotations (TraceAnnotation, StepTraceAnnotation, annotate_function) as
trace events, and device_memory_profile as a pprof profile that real JAX's format matches."""

from __future__ import annotations

import gzip

import pytest

import webjax
import webjax.numpy as jnp
from webjax import profiler


def test_annotations_are_spans_around_their_kernels() -> None:
    @profiler.annotate_function
    def double(v):
        return (v * 2).block_until_ready()

    profiler.start_trace()
    with (
        profiler.StepTraceAnnotation("train", step_num=3),
        profiler.TraceAnnotation("inner", tag="x"),
    ):
        double(jnp.arange(8.0) + 1)
    events = profiler.stop_trace()
    spans = {e["name"]: e for e in events if e["cat"] == "annotation"}
    assert set(spans) == {
        "train",
        "inner",
        "test_annotations_are_spans_around_their_kernels.<locals>.double",
    }
    train, inner = spans["train"], spans["inner"]
    assert train["args"] == {"step_num": "3"} and inner["args"] == {"tag": "x"}
    assert train["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= train["ts"] + train["dur"]
    kernels = [e for e in events if e["cat"] == "kernel"]
    assert kernels and all(inner["ts"] <= k["ts"] <= inner["ts"] + inner["dur"] for k in kernels)
    assert double(jnp.ones(2)).tolist() == [2.0, 2.0]  # no trace: just the function


def _varint(data: bytes, i: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = data[i]
        n, i, shift = n | (b & 0x7F) << shift, i + 1, shift + 7
        if not b & 0x80:
            return n, i


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    out: list[tuple[int, int | bytes]] = []
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        if key & 7 == 0:
            v, i = _varint(data, i)
            out.append((key >> 3, v))
        else:
            n, i = _varint(data, i)
            out.append((key >> 3, data[i : i + n]))
            i += n
    return out


def _packed(data: bytes) -> list[int]:
    out, i = [], 0
    while i < len(data):
        v, i = _varint(data, i)
        out.append(v)
    return out


def _read_pprof(data: bytes) -> tuple[list[tuple[int, ...]], list[list[int]], list[str]]:
    """(sample_type pairs, sample values, string table) of a gzipped pprof Profile."""
    types, samples, strings = [], [], []
    for num, val in _fields(gzip.decompress(data)):
        assert isinstance(val, bytes)
        if num == 1:
            types.append(tuple(v for _, v in _fields(val) if isinstance(v, int)))
        elif num == 2:
            values = next(v for k, v in _fields(val) if k == 2)
            assert isinstance(values, bytes)
            samples.append(_packed(values))
        elif num == 6:
            strings.append(val.decode())
    return types, samples, strings


def test_device_memory_profile_counts_live_arrays() -> None:
    keep = [jnp.ones((256,), jnp.float32).block_until_ready() for _ in range(3)]
    types, samples, strings = _read_pprof(profiler.device_memory_profile())
    assert [(strings[a], strings[b]) for a, b in types] == [
        ("allocations", "count"),
        ("space", "bytes"),
    ]
    assert strings[0] == "" and "(256,)" in strings and "float32" in strings
    assert any(c >= 3 and b >= 3 * 1024 for c, b in samples), samples
    del keep


def test_jax_profile_has_the_same_sample_types() -> None:
    rjax = pytest.importorskip("jax")
    x = rjax.numpy.ones(8)
    types, _, strings = _read_pprof(rjax.profiler.device_memory_profile())
    assert [(strings[a], strings[b]) for a, b in types] == [
        ("allocations", "count"),
        ("space", "bytes"),
    ]
    del x
    assert webjax.profiler.save_device_memory_profile is not None
