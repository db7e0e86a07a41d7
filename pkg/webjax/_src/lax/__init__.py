"""lax: primitives and their user functions."""
