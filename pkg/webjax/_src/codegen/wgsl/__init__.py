"""wgsl."""
