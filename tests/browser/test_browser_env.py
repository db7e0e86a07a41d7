"""The browser environment webjax relies on: isolation headers, WebGPU, WebGL2, Pyodide."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

pytestmark = pytest.mark.browser


def _headers(url: str) -> dict[str, str]:
    with urllib.request.urlopen(url) as response:
        return {k.lower(): v for k, v in response.headers.items()}


@pytest.mark.parametrize(
    ("path", "mime"),
    [
        ("index.html", "text/html"),
        ("webjax.mjs", "text/javascript"),
        ("pyodide/pyodide.mjs", "text/javascript"),
        ("pyodide/pyodide.asm.wasm", "application/wasm"),
        ("pyodide/python_stdlib.zip", "application/zip"),
        ("manifest.json", "application/json"),
    ],
)
def test_server_headers_and_mime_types(server_url, plain_server_url, path, mime):
    isolated = _headers(server_url + path)
    assert isolated["content-type"].split(";")[0] == mime
    assert isolated["cache-control"] == "no-cache"  # kept, revalidated by its ETag
    assert isolated["etag"]
    assert isolated["cross-origin-opener-policy"] == "same-origin"
    assert isolated["cross-origin-embedder-policy"] == "require-corp"
    assert isolated["cross-origin-resource-policy"] == "same-origin"
    plain = _headers(plain_server_url + path)
    assert plain["content-type"].split(";")[0] == mime
    assert "cross-origin-embedder-policy" not in plain


def test_unchanged_files_answer_304_and_hashed_urls_are_immutable(server_url, site):
    etag = _headers(server_url + "manifest.json")["etag"]
    request = urllib.request.Request(server_url + "manifest.json", headers={"If-None-Match": etag})
    with pytest.raises(urllib.error.HTTPError) as e:  # urllib raises on a 304
        urllib.request.urlopen(request)
    assert e.value.code == 304
    wheel = json.loads((site / "manifest.json").read_text())
    hashed = _headers(f"{server_url}{wheel['wheel']}?sha256={wheel['wheel_sha256']}")
    assert hashed["cache-control"] == "max-age=31536000, immutable"


def test_wheel_served_as_zip(server_url, site):
    (wheel,) = (site / "wheels").glob("*.whl")
    assert _headers(f"{server_url}wheels/{wheel.name}")["content-type"] == "application/zip"


def test_cross_origin_isolated(new_page, server_url):
    page = new_page()
    page.goto(server_url + "test.html")
    assert page.evaluate("crossOriginIsolated") is True
    assert page.evaluate("typeof SharedArrayBuffer") == "function"
    assert page.evaluate("isSecureContext") is True


def test_not_isolated_without_headers(new_page, plain_server_url):
    page = new_page()
    page.goto(plain_server_url + "test.html")
    assert page.evaluate("crossOriginIsolated") is False


def test_pyodide_loads_without_isolation(new_page, plain_server_url):
    from browser_harness import PyodidePage

    py = PyodidePage(new_page()).load(plain_server_url + "test.html", with_webjax=False)
    assert py.run_py("import js\n[js.crossOriginIsolated, 6 * 7]") == [False, 42]


def test_python_version_and_jspi(pyodide):
    info = pyodide.run_py(
        "import sys\nfrom pyodide.ffi import can_run_sync\n"
        "[sys.version_info[:2], sys.platform, can_run_sync()]"
    )
    assert info == [[3, 14], "emscripten", True]
    # Entered through plain runPython there is no JSPI stack to suspend.
    assert pyodide.run_py_sync("from pyodide.ffi import can_run_sync\ncan_run_sync()") is False


def test_webgpu_reachable_from_python(pyodide):
    info = pyodide.run_py(
        """
import js
assert hasattr(js.navigator, "gpu"), "navigator.gpu is undefined"
adapter = await js.navigator.gpu.requestAdapter()
assert adapter is not None, "requestAdapter() gave null"
device = await adapter.requestDevice()
{
    "vendor": adapter.info.vendor,
    "architecture": adapter.info.architecture,
    "features": sorted(adapter.features.values()),
    "max_storage_buffer": device.limits.maxStorageBufferBindingSize,
}
"""
    )
    print("WebGPU adapter:", info)
    assert info["max_storage_buffer"] >= 128 << 20


def test_webgpu_runs_a_compute_shader(pyodide):
    # The smallest end-to-end WGSL dispatch from Python: out[i] = in[i] * 2.
    result = pyodide.run_py(
        """
import js
from pyodide.ffi import to_js

def obj(**fields):
    return to_js(fields, dict_converter=js.Object.fromEntries)

adapter = await js.navigator.gpu.requestAdapter()
device = await adapter.requestDevice()
usage = js.GPUBufferUsage
module = device.createShaderModule(obj(code='''
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3u) {
    data[id.x] = data[id.x] * 2.0;
}'''))
pipeline = device.createComputePipeline(
    obj(layout="auto", compute=obj(module=module, entryPoint="main")))
data = device.createBuffer(obj(size=16, usage=usage.STORAGE | usage.COPY_SRC | usage.COPY_DST))
device.queue.writeBuffer(data, 0, js.Float32Array.new(to_js([1, 2, 3, 4])))
read = device.createBuffer(obj(size=16, usage=usage.MAP_READ | usage.COPY_DST))
group = device.createBindGroup(obj(
    layout=pipeline.getBindGroupLayout(0),
    entries=to_js([obj(binding=0, resource=obj(buffer=data))]),
))
encoder = device.createCommandEncoder()
compute = encoder.beginComputePass()
compute.setPipeline(pipeline)
compute.setBindGroup(0, group)
compute.dispatchWorkgroups(1)
compute.end()
encoder.copyBufferToBuffer(data, 0, read, 0, 16)
device.queue.submit(to_js([encoder.finish()]))
await read.mapAsync(js.GPUMapMode.READ)
list(js.Float32Array.new(read.getMappedRange()).to_py())
"""
    )
    assert result == [2.0, 4.0, 6.0, 8.0]


def test_webgl2_reachable_from_python(pyodide):
    info = pyodide.run_py(
        """
import js
gl = js.OffscreenCanvas.new(1, 1).getContext("webgl2")
assert gl is not None, "OffscreenCanvas.getContext('webgl2') gave null"
{
    "float_render": gl.getExtension("EXT_color_buffer_float") is not None,
    "max_texture_size": gl.getParameter(gl.MAX_TEXTURE_SIZE),
}
"""
    )
    assert info["float_render"] is True
    assert info["max_texture_size"] >= 2048
