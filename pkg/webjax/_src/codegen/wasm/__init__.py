"""wasm."""
