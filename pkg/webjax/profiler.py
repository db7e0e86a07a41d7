"""webjax.profiler: kernel traces (jax.profiler's start_trace/stop_trace/trace)."""

from webjax._src.profiler import start_trace, stop_trace, trace

__all__ = ["start_trace", "stop_trace", "trace"]
