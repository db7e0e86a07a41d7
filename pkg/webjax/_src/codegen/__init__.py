"""Codegens: kernel IR -> source or binary, one module per target language."""
