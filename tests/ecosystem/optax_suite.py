"""Optax's own test files (they ship inside its wheel), run under real JAX and under webjax
installed as `jax`, test by test.

    .venv/bin/python tests/ecosystem/optax_suite.py [--all | --files FILE ...] [--jobs N]
        [--shard K/N] [--flavour jax|webjax] [--timeout S] [--skip FILE ...]
        [--report optax-report.json]
    .venv/bin/python tests/ecosystem/optax_suite.py --merge REPORT.json [REPORT.json ...]

Without `--all` it runs SAMPLE, the files the test tier runs; with it, every `*_test.py` of the
installed optax, one pytest process per file (about two hours under webjax on two cores), or with
`--jobs N` one pytest process per flavour spread over N workers (pytest-xdist). `--shard K/N`
runs every Nth file only (so a long run can be split over several machines or calls), and
`--merge` joins the reports of the shards into one comparison; `--files` runs the named files
(paths inside the optax package, e.g. contrib/_common_test.py); `--flavour` runs one flavour
only (the other's half of the report stays empty until merged); `--skip` leaves files out (named
in the report). Each flavour runs in its own
pytest processes (a library binds `jax` when it is imported, so the two cannot share one) with
JUnit XML reports; the summary gives passed, failed, errors and skipped per flavour and the tests
that pass under JAX but not under webjax.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PKG = HERE.parents[1] / "pkg"

# The files the test tier runs: each optax area once (optimizers, transforms, schedules, losses,
# tree utilities, contrib), chosen so the tier stays within a few minutes on two cores.
SAMPLE = [
    "_src/base_test.py",
    "_src/update_test.py",
    "_src/numerics_test.py",
    "_src/combine_test.py",
    "_src/lookahead_test.py",
    "_src/factorized_test.py",
    "transforms/_clipping_test.py",
    "transforms/_accumulation_test.py",
    "transforms/_masking_test.py",
    "transforms/_constraining_test.py",
    "schedules/_schedule_test.py",
    "schedules/_join_test.py",
    "losses/_regression_test.py",
    "losses/_classification_test.py",
    "tree_utils/_tree_math_test.py",
    "tree_utils/_state_utils_test.py",
    "contrib/_sam_test.py",
]

# A test that runs longer than this under either flavour counts as failed (a hang is a failure).
TIMEOUT_S = 300


def optax_root() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("optax")
    if spec is None or spec.origin is None:
        raise SystemExit("optax is not installed: `python build.py` installs the ecosystem tier")
    return Path(spec.origin).parent


def suite_files(everything: bool) -> list[Path]:
    root = optax_root()
    if everything:
        return sorted(root.rglob("*_test.py"))
    return [root / name for name in SAMPLE]


@dataclass
class Outcomes:
    """Test id -> "passed" | "failed" | "error" | "skipped"."""

    by_test: dict[str, str] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)

    def count(self, outcome: str) -> int:
        return sum(1 for v in self.by_test.values() if v == outcome)

    def summary(self) -> dict[str, int]:
        return {k: self.count(k) for k in ("passed", "failed", "error", "skipped")}


def read_junit(path: Path) -> Outcomes:
    out = Outcomes()
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                message = (
                    (child.get("message") or "").splitlines()[0][:300]
                    if child.get("message")
                    else ""
                )
                break
        out.by_test[test_id] = outcome
        if message:
            out.messages[test_id] = message
    return out


def run_flavour(
    flavour: str, files: list[Path], workdir: Path, jobs: int = 1, timeout: int = TIMEOUT_S
) -> Outcomes:
    """One pytest process over `files` (with `jobs` > 1, spread over that many pytest-xdist
    workers), with webjax installed as `jax` for flavour "webjax"."""
    report = workdir / f"{flavour}.xml"
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts="]
    if jobs > 1:
        args += ["-n", str(jobs)]
    args += ["--continue-on-collection-errors"]  # a file that fails to import counts, alone
    args += [f"--timeout={timeout}", f"--junitxml={report}", "--rootdir", str(optax_root())]
    env = dict(os.environ)
    if flavour == "webjax":
        args += ["-p", "webjax_as_jax"]
        paths = [str(HERE), str(PKG), env.get("PYTHONPATH", "")]
        env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    proc = subprocess.run(
        [*args, *map(str, files)], cwd=workdir, env=env, capture_output=True, text=True
    )
    tail = (proc.stdout + proc.stderr)[-3000:]
    if not report.exists():
        raise RuntimeError(f"pytest under {flavour} wrote no report:\n{tail}")
    out = read_junit(report)
    if out.count("error"):
        out.messages["(pytest output)"] = tail
    return out


def run_flavour_per_file(
    flavour: str, files: list[Path], workdir: Path, timeout: int = TIMEOUT_S
) -> Outcomes:
    """run_flavour with one pytest process per file, so a crash of pytest itself (an internal
    error while reporting one failure) loses that file's remaining tests only."""
    out = Outcomes()
    for i, f in enumerate(files):
        sub = workdir / f"{flavour}-{i}"
        sub.mkdir(exist_ok=True)
        try:
            one = run_flavour(flavour, [f], sub, timeout=timeout)
        except RuntimeError as e:  # no report at all: the file counts as one error
            one = Outcomes({f"{f.name}::(file)": "error"}, {f"{f.name}::(file)": str(e)[-300:]})
        out.by_test.update(one.by_test)
        out.messages.update({k: v for k, v in one.messages.items() if k != "(pytest output)"})
        print(f"{flavour} {f.name}: {one.summary()}", file=sys.stderr, flush=True)
    return out


def select_shard(files: list[Path], shard: str | None) -> list[Path]:
    """Files of shard "K/N" (1-based): every Nth of them, largest first so shards balance."""
    if shard is None:
        return files
    k, n = (int(part) for part in shard.split("/"))
    if not 1 <= k <= n:
        raise SystemExit(f"--shard {shard}: K must be in 1..N")
    by_size = sorted(files, key=lambda f: (-f.stat().st_size, str(f)))
    return sorted(by_size[k - 1 :: n])


def merge(reports: list[dict]) -> tuple[Outcomes, Outcomes, list[str]]:
    """The outcomes of both flavours from the reports of several shards (or of one flavour
    each)."""
    jax, webjax, files = Outcomes(), Outcomes(), set()
    for report in reports:
        for flavour, into in (("jax", jax), ("webjax", webjax)):
            into.by_test.update(report["outcomes"][flavour])
            into.messages.update(report["messages"][flavour])
        files.update(report["files"])
    return jax, webjax, sorted(files)


def compare(jax: Outcomes, webjax: Outcomes) -> dict:
    regressions = sorted(
        t for t, o in jax.by_test.items() if o == "passed" and webjax.by_test.get(t) != "passed"
    )
    return {
        "jax": jax.summary(),
        "errors": {k: v for k, v in webjax.messages.items() if webjax.by_test.get(k) == "error"}
        | {k: v for k, v in webjax.messages.items() if k == "(pytest output)"},
        "webjax": webjax.summary(),
        "pass_ratio": webjax.count("passed") / max(1, jax.count("passed")),
        "regressions": {
            t: webjax.messages.get(t, webjax.by_test.get(t, "absent")) for t in regressions
        },
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--all", action="store_true", help="every optax test file, not SAMPLE")
    parser.add_argument("--files", nargs="+", help="these optax test files (package paths)")
    parser.add_argument("--jobs", type=int, default=1, help="pytest-xdist workers per flavour")
    parser.add_argument("--shard", help="K/N: run every Nth file only, from the Kth")
    parser.add_argument("--flavour", choices=("jax", "webjax"), help="run this flavour only")
    parser.add_argument("--timeout", type=int, default=TIMEOUT_S, help="seconds a test may run")
    parser.add_argument("--skip", nargs="+", default=[], help="optax test files to leave out")
    parser.add_argument("--merge", type=Path, nargs="+", help="join these reports, run nothing")
    parser.add_argument("--report", type=Path, help="write the comparison as JSON here")
    args = parser.parse_args(argv)
    if args.merge:
        jax, webjax, files = merge([json.loads(p.read_text()) for p in args.merge])
    else:
        skip = {optax_root() / f for f in args.skip}
        chosen = suite_files(args.all)
        if args.files:
            chosen = [optax_root() / f for f in args.files]
            missing = [str(f) for f in chosen if not f.exists()]
            if missing:
                raise SystemExit(f"--files: no such optax test file: {', '.join(missing)}")
        files_paths = [f for f in select_shard(chosen, args.shard) if f not in skip]
        flavours = [args.flavour] if args.flavour else ["jax", "webjax"]
        outcomes = {"jax": Outcomes(), "webjax": Outcomes()}
        with tempfile.TemporaryDirectory() as tmp:
            for flavour in flavours:
                if args.jobs > 1:
                    got = run_flavour(flavour, files_paths, Path(tmp), args.jobs, args.timeout)
                elif args.all or args.files:
                    got = run_flavour_per_file(flavour, files_paths, Path(tmp), args.timeout)
                else:
                    got = run_flavour(flavour, files_paths, Path(tmp), timeout=args.timeout)
                outcomes[flavour] = got
        jax, webjax = outcomes["jax"], outcomes["webjax"]
        files = [str(f.relative_to(optax_root())) for f in files_paths]
    result = compare(jax, webjax)
    result["files"] = files
    result["skipped_files"] = sorted(args.skip)
    result["outcomes"] = {"jax": jax.by_test, "webjax": webjax.by_test}
    result["messages"] = {"jax": jax.messages, "webjax": webjax.messages}
    if args.report:
        args.report.write_text(json.dumps(result, indent=1) + "\n")
    print(f"files: {len(files)}")
    print(f"real JAX: {result['jax']}")
    print(f"webjax:   {result['webjax']}")
    print(f"webjax passes {result['pass_ratio']:.1%} of real JAX's passes")
    for test, why in result["regressions"].items():
        print(f"  passes under JAX, not under webjax: {test}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
