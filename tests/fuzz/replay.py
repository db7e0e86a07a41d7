"""Run a fuzz report's failures again, on this checkout and this machine's JAX, and say which
still fail: the check after a fix, and the filter for a report made elsewhere (another JAX).

    python3 tests/fuzz/replay.py REPORT.json [REPORT.json ...] [--device wasm] [--op jnp.fmod]
                                 [--show N] [--out still-failing.json]

Each failure's reproducer (generators.Case.describe: op, mode, operands with their values,
static arguments, the vmap argument) is rebuilt and checked by the oracle on its device (or on
`--device`); operands above the report's size cap have no values and are skipped.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the package is tests/fuzz, webjax is in pkg/
    _tests = Path(__file__).resolve().parents[1]
    sys.path[:0] = [str(_tests), str(_tests.parent / "pkg")]
    __package__ = "fuzz"

import numpy as np

from . import generators as gen
from . import oracle


class NotReplayable(Exception):
    pass


def _operand(d: dict[str, Any]) -> np.ndarray:
    if "values" not in d:
        raise NotReplayable("an operand's values are not in the report")
    dt = gen.np_dtype(d["dtype"])
    if dt.kind == "c":
        flat = np.array([complex(v) for v in d["values"]], np.complex128)
    elif dt.kind in "fV":
        flat = np.array([float(v) for v in d["values"]], np.float64)
    else:
        flat = np.array([ast.literal_eval(v) for v in d["values"]], dtype=object)
    return flat.astype(dt).reshape(d["shape"])


def _static(v: Any) -> Any:
    if isinstance(v, list):
        return [_value(x) for x in v]
    if not isinstance(v, str):
        return v
    try:
        return ast.literal_eval(v)
    except (ValueError, SyntaxError):
        name = v.removeprefix("<class '").removesuffix("'>").rsplit(".", 1)[-1]
        try:
            return np.dtype(gen.np_dtype(name))
        except TypeError:
            raise NotReplayable(f"a static argument {v!r}") from None


def _value(v: Any) -> Any:
    if isinstance(v, dict) and "shape" in v:
        return _operand(v)
    if isinstance(v, dict) and "key" in v:
        return gen.Key(v["key"])
    return _static(v)


def rebuild(failure: dict[str, Any]) -> gen.Case:
    specs = [s for s in gen.SPECS if s.op == failure["op"]]
    if not specs:
        raise NotReplayable(f"no spec of {failure['op']}")
    args = [_value(a) for a in failure["args"]]
    kwargs = {k: _value(v) for k, v in failure["kwargs"].items()}
    return gen.Case(specs[0], args, kwargs, failure["mode"], failure.get("vmap_arg", -1))


def _failures(report: Any) -> list[dict[str, Any]]:
    """A runner's report's failures, or an --out file's (earlier ones were a bare list)."""
    return report if isinstance(report, list) else report["failures"]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("reports", nargs="+", type=Path)
    p.add_argument("--device", default=None, help="replay every failure on this device")
    p.add_argument("--op", action="append", help="only these ops")
    p.add_argument("--show", type=int, default=0, help="print this many still-failing cases")
    p.add_argument("--out", type=Path, default=None, help="the still-failing failures, as JSON")
    args = p.parse_args(argv)
    import webjax

    failures = [f for r in args.reports for f in _failures(json.loads(r.read_text()))]
    failures = [f for f in failures if not args.op or f["op"] in args.op]
    by_x64: dict[bool, list[dict[str, Any]]] = collections.defaultdict(list)
    for f in failures:
        by_x64[bool(f.get("x64"))].append(f)
    if True in by_x64 and False in by_x64:
        print("the reports mix 32- and 64-bit runs: replaying the 32-bit ones", file=sys.stderr)
    x64 = False not in by_x64
    if x64:
        import jax

        jax.config.update("jax_enable_x64", True)
        webjax.config.update("jax_enable_x64", True)
    tally: collections.Counter[str] = collections.Counter()
    still: list[dict[str, Any]] = []
    groups: collections.Counter[str] = collections.Counter()
    for f in by_x64[x64]:
        platform = args.device or f["device"]
        try:
            case = rebuild(f)
        except NotReplayable:
            tally["not replayable"] += 1
            continue
        verdict = oracle.check(case, webjax.devices(platform)[0])
        if verdict.ok:
            tally["passes now"] += 1
            continue
        tally["still fails"] += 1
        groups[f"{f['op']} {f['mode']} {verdict.category}"] += 1
        entry = {**f, "device": platform, "category": verdict.category, "detail": verdict.detail}
        entry.update(webjax=verdict.webjax.summary(), jax=verdict.jax.summary())
        still.append(entry)
        if len(still) <= args.show:
            print(
                f"FAIL {verdict.category}: {json.dumps(case.describe())[:600]}\n"
                f"  webjax: {verdict.webjax.summary()[:300]}\n"
                f"  jax:    {verdict.jax.summary()[:300]}\n  {verdict.detail[:300]}"
            )
    print(f"replayed {len(by_x64[x64])} failures: {dict(tally)}")
    for group, n in groups.most_common():
        print(f"  {n:5d}  {group}")
    if args.out:
        args.out.write_text(json.dumps({"failures": still}, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
