"""Runtimes: device buffers and kernel execution, one module per device (cpu, wasm, webgpu)."""
