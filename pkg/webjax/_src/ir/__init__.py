"""The kernel IR: scalar expressions (exp), the op catalogue (ops), kernels (kernel)."""
