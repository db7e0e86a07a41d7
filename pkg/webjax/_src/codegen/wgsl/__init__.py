"""The WGSL codegen: a kernel as WebGPU compute passes (kernel), value storage and expression
rendering (expr), pass and program types (program), matmul schedules (matmul), and the
correctly-rounded math (math, libm, special)."""
