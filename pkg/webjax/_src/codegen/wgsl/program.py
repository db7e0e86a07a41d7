"""What the WGSL codegen produces for a kernel: its compute-shader launches (passes)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WgslPass:
    """One compute shader launch: entry point `main`, bindings 0..n-1 (the last read_write)."""

    source: str
    nbindings: int
    workgroups: tuple[int, int]  # dispatch grid (x, y)


@dataclass(frozen=True)
class WgslProgram:
    """A kernel's launches. Two passes (partials into `scratch_bytes` of scratch, then the
    finish with the epilogue) split long reductions with few outputs over many workgroups."""

    passes: tuple[WgslPass, ...]
    nargs: int
    invocations: int  # output words; 0 means nothing to run
    scratch_bytes: int = 0
    note: str = ""  # how it was scheduled (the tiled matmul's tile), for profiles and benches

    @property
    def source(self) -> str:
        return "\n".join(p.source for p in self.passes)

    @property
    def workgroups(self) -> tuple[int, int]:
        return self.passes[-1].workgroups
