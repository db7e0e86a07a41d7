"""scipy."""
