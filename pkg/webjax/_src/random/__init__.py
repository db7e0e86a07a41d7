"""random."""
