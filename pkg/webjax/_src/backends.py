"""The backends webjax knows, registered in priority order (each checks its host lazily)."""

from .runtime import cpu  # noqa: F401
