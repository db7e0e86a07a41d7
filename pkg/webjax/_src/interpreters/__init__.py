"""Interpreters: the transformations (ad, batching) and staging (partial_eval)."""
