"""webjax.profiler: kernel traces and annotations (jax.profiler's start_trace/stop_trace/trace,
TraceAnnotation, StepTraceAnnotation, annotate_function) and device memory profiles."""

from webjax._src.api.memory_profile import device_memory_profile, save_device_memory_profile
from webjax._src.profiler import (
    StepTraceAnnotation,
    TraceAnnotation,
    annotate_function,
    start_trace,
    stop_trace,
    trace,
)

__all__ = [
    "StepTraceAnnotation",
    "TraceAnnotation",
    "annotate_function",
    "device_memory_profile",
    "save_device_memory_profile",
    "start_trace",
    "stop_trace",
    "trace",
]
