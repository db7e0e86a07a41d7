"""Source information and traceback filtering (the `jax.extend.source_info_util` and
`traceback_util` API libraries call).

A `SourceInfo` is the user frame a traced operation came from plus the name stack (`jit(f)/...`)
in effect. `register_exclusion(path)` marks a library's files as internal, so the frame
reported is the caller's. `api_boundary` marks a library entry point; webjax reports
exceptions with their full traceback (it does not cut frames out of tracebacks), so it only
keeps the function's identity.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

# Paths whose frames are library internals (a library appends its own directory).
_exclude_paths: list[str] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]


def register_exclusion(path: str) -> None:
    _exclude_paths.append(path)


def include_frame(frame: Any) -> bool:
    """Whether a frame (or traceback frame summary) is user code."""
    filename = getattr(frame, "filename", None) or frame.f_code.co_filename
    return not any(filename.startswith(p) for p in _exclude_paths)


def api_boundary(fun: Callable[..., Any] | None = None, **_: Any) -> Any:
    """Mark `fun` as a library entry point (usable as `@api_boundary` or `@api_boundary()`)."""
    if fun is None:
        return api_boundary

    @functools.wraps(fun)
    def boundary(*args: Any, **kwargs: Any) -> Any:
        return fun(*args, **kwargs)

    return boundary


class Frame(NamedTuple):
    file_name: str
    function_name: str
    start_line: int
    start_column: int = 0
    end_line: int = 0
    end_column: int = 0


class NameStack(NamedTuple):
    """The names of the transformations and scopes around an operation (`jit(f)/g`)."""

    stack: tuple[str, ...] = ()

    def extend(self, name: str | tuple[str, ...]) -> NameStack:
        names = (name,) if isinstance(name, str) else tuple(name)
        return NameStack((*self.stack, *names))

    def wrap_name(self, name: str) -> str:
        return f"{name}({'/'.join(self.stack)})" if self.stack else name

    def transform(self, name: str) -> NameStack:
        return NameStack(tuple(f"{name}({n})" for n in self.stack)) if self.stack else self

    def __str__(self) -> str:
        return "/".join(self.stack)

    def __len__(self) -> int:  # type: ignore[override]
        return len(self.stack)


class SourceInfo(NamedTuple):
    traceback: list[Frame] | None
    name_stack: NameStack

    def replace(self, *, traceback: Any = None, name_stack: NameStack | None = None) -> SourceInfo:
        return SourceInfo(
            self.traceback if traceback is None else traceback,
            self.name_stack if name_stack is None else name_stack,
        )


_name_stack: list[NameStack] = [NameStack()]
_user_traceback: list[Any] = []


def _user_frames() -> list[Frame]:
    frames = []
    f = sys._getframe(2)
    while f is not None:
        if include_frame(f):
            frames.append(Frame(f.f_code.co_filename, f.f_code.co_name, f.f_lineno))
        f = f.f_back  # type: ignore[assignment]
    return frames


def new_source_info() -> SourceInfo:
    return SourceInfo(None, NameStack())


def current() -> SourceInfo:
    """The source info of an operation applied here: the innermost user frames."""
    tb = _user_traceback[-1] if _user_traceback else _user_frames()
    return SourceInfo(tb, _name_stack[-1])


def summarize(source_info: SourceInfo, num_frames: int = 1) -> str:
    frames = (source_info.traceback or [])[:num_frames]
    if not frames:
        return "unknown"
    return "\n".join(f"{f.file_name}:{f.start_line} ({f.function_name})" for f in reversed(frames))


@contextlib.contextmanager
def user_context(traceback: Any, *, name_stack: NameStack | None = None) -> Iterator[None]:
    """Operations inside report `traceback` (and `name_stack`) as their source."""
    _user_traceback.append(traceback)
    _name_stack.append(_name_stack[-1] if name_stack is None else name_stack)
    try:
        yield
    finally:
        _user_traceback.pop()
        _name_stack.pop()


def current_name_stack() -> NameStack:
    return _name_stack[-1]


def new_name_stack(name: str = "") -> NameStack:
    return NameStack((name,) if name else ())


@contextlib.contextmanager
def set_name_stack(name_stack: NameStack) -> Iterator[None]:
    _name_stack.append(name_stack)
    try:
        yield
    finally:
        _name_stack.pop()


@contextlib.contextmanager
def extend_name_stack(name: str) -> Iterator[NameStack]:
    stack = _name_stack[-1].extend(name)
    with set_name_stack(stack):
        yield stack


@contextlib.contextmanager
def reset_name_stack() -> Iterator[None]:
    with set_name_stack(NameStack()):
        yield


@contextlib.contextmanager
def transform_name_stack(name: str) -> Iterator[NameStack]:
    stack = _name_stack[-1].transform(name)
    with set_name_stack(stack):
        yield stack
