"""experimental."""
