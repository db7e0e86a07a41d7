"""The WebAssembly codegen: a kernel as a wasm module (kernel), its binary assembler (asm),
scalar math functions (math), SIMD lanes (simd), reductions and the register-tiled matmul
(reduce)."""
