"""webjax.extend.source_info_util: source locations and name stacks of traced operations."""

from webjax._src.source_info import (
    NameStack,
    SourceInfo,
    current,
    current_name_stack,
    extend_name_stack,
    new_name_stack,
    new_source_info,
    register_exclusion,
    reset_name_stack,
    set_name_stack,
    summarize,
    transform_name_stack,
    user_context,
)

__all__ = [
    "NameStack", "SourceInfo", "current", "current_name_stack", "extend_name_stack",
    "new_name_stack", "new_source_info", "register_exclusion", "reset_name_stack",
    "set_name_stack", "summarize", "transform_name_stack", "user_context",
]  # fmt: skip
