"""Differential fuzzing of webjax against real JAX: `generators` draws calls of the public
functions (op specs by argument kind, shapes, dtypes, axes, keywords, special values), `oracle`
runs one call on webjax (on a device, under eager, jit, grad or vmap) and on JAX and compares the
outcomes, `runner` runs cases until a count or a time budget is spent and writes the report.

`tests/test_fuzz.py` is the seeded CI-sized run; `python3 build.py fuzz --budget SECONDS` the
long one."""
