"""Run fuzz cases on devices until a count or a time budget is spent, and write the report.

    python3 tests/fuzz/runner.py --budget 600 [--device cpu] [--x64] [--seed 0] [--report r.json]
                                 [--jobs N]

(`--jobs N` runs N such processes side by side, seeds seed*N .. seed*N+N-1, each with the whole
budget, and merges their reports: the cases scale with the cores.)

Each case is drawn once and run on every device asked for, against one JAX answer (JAX's
compiles are most of a case's time). (`python3 build.py fuzz` runs it on every device, in 32-bit
and then, in a second process, 64-bit mode.) Hypothesis draws the cases (seeded: the same seed
and count give the same cases); its database is off and nothing shrinks, so a run's time goes to
new cases. Every failure is recorded with its reproducer: the op, the mode, the arguments
(shapes, dtypes and, when small, values), the keywords and both outcomes.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the package is tests/fuzz, webjax is in pkg/
    _tests = Path(__file__).resolve().parents[1]
    sys.path[:0] = [str(_tests), str(_tests.parent / "pkg")]
    __package__ = "fuzz"

from hypothesis import HealthCheck, Phase, given, seed, settings

from . import generators as gen
from . import oracle

PLATFORMS = ("cpu", "wasm", "webgpu", "webgl")
BATCH = 100  # cases per hypothesis run; the budget is checked between cases
CASE_TIMEOUT_S = 120.0  # a case running longer is a finding ("hang"), and the run goes on


class CaseTimeout(BaseException):  # not an Exception: the oracle must not take it for an error
    pass


def _check_with_watchdog(case: gen.Case, devices: list[Any]) -> list[oracle.Verdict]:
    """oracle.check_on, with a SIGALRM watchdog (main thread, POSIX) around webjax's side on
    each device: a device past CASE_TIMEOUT_S is judged a hang there (JAX's own compile is not
    timed: XLA may take minutes on a case); interrupted native code raises once it returns to
    Python."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        return oracle.check_on(case, devices)

    def alarm(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"the case ran past {CASE_TIMEOUT_S:.0f} s on this device")

    want, answers = oracle.jax_side(case)
    verdicts = []
    previous = signal.signal(signal.SIGALRM, alarm)
    try:
        for device in devices:
            signal.setitimer(signal.ITIMER_REAL, CASE_TIMEOUT_S)
            try:
                verdicts.append(oracle.judge(case, device, want, answers))
            except CaseTimeout as e:
                out = oracle.Outcome(error=e)
                verdicts.append(oracle.Verdict("hang", str(e), out, out))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return verdicts


def set_x64(on: bool) -> None:
    import jax

    import webjax

    jax.config.update("jax_enable_x64", on)
    webjax.config.update("jax_enable_x64", on)


class Tally:
    """Cases run per device, mode and op; the failures with their reproducers."""

    def __init__(self) -> None:
        self.cases: dict[str, collections.Counter[str]] = {}
        self.failures: list[dict[str, Any]] = []
        self.seconds: dict[str, float] = {}
        self.generator_errors: list[str] = []

    def add(self, platform: str, case: gen.Case, verdict: oracle.Verdict, x64: bool) -> None:
        c = self.cases.setdefault(platform, collections.Counter())
        c["total"] += 1
        c[f"mode:{case.mode}"] += 1
        c[f"op:{case.spec.op}"] += 1
        if verdict.note:
            c[f"note:{verdict.note}"] += 1
        if not verdict.ok:
            c["failures"] += 1
            self.failures.append(
                {
                    "device": platform,
                    "x64": x64,
                    "category": verdict.category,
                    "detail": verdict.detail,
                    **case.describe(),
                    "webjax": verdict.webjax.summary(),
                    "jax": verdict.jax.summary(),
                }
            )

    def report(self, meta: dict[str, Any]) -> dict[str, Any]:
        groups: collections.Counter[str] = collections.Counter()
        for f in self.failures:
            groups[f"{f['op']} {f['mode']} {f['category']}"] += 1
        per_device = {}
        for platform, c in self.cases.items():
            per_device[platform] = {
                "cases": c["total"],
                "failures": c["failures"],
                "seconds": round(self.seconds.get(platform, 0.0), 1),
                "modes": {k[5:]: v for k, v in sorted(c.items()) if k.startswith("mode:")},
                "notes": {k[5:]: v for k, v in sorted(c.items()) if k.startswith("note:")},
                "ops": {k[3:]: v for k, v in sorted(c.items()) if k.startswith("op:")},
            }
        return {
            **meta,
            "devices": per_device,
            "failure_groups": dict(groups.most_common()),
            "generator_errors": self.generator_errors,
            "failures": self.failures,
        }


def run_device(
    platform: str,
    tally: Tally,
    *,
    max_cases: int | None = None,
    budget_s: float | None = None,
    seed_value: int = 0,
    x64: bool = False,
    specs: list[gen.Spec] | None = None,
    modes: tuple[str, ...] = gen.MODES,
    on_case: Callable[[gen.Case, oracle.Verdict], None] | None = None,
) -> None:
    """Cases on one device until `max_cases` have run or `budget_s` seconds have passed."""
    run_devices(
        [platform],
        tally,
        max_cases=max_cases,
        budget_s=budget_s,
        seed_value=seed_value,
        seed_offset=zlib.crc32(platform.encode()),
        x64=x64,
        specs=specs,
        modes=modes,
        on_case=on_case,
    )


def run_devices(
    platforms: list[str],
    tally: Tally,
    *,
    max_cases: int | None = None,
    budget_s: float | None = None,
    seed_value: int = 0,
    seed_offset: int = 0,
    x64: bool = False,
    specs: list[gen.Spec] | None = None,
    modes: tuple[str, ...] = gen.MODES,
    on_case: Callable[[gen.Case, oracle.Verdict], None] | None = None,
) -> None:
    """Cases until `max_cases` have run or `budget_s` seconds have passed, each drawn once and
    run on every one of `platforms` against one JAX answer."""
    import webjax

    devices = [webjax.devices(platform)[0] for platform in platforms]
    start = time.monotonic()
    done = 0

    def spent() -> bool:
        if max_cases is not None and done >= max_cases:
            return True
        return budget_s is not None and time.monotonic() - start >= budget_s

    batch = 0
    while not spent():
        n = BATCH if max_cases is None else min(BATCH, max_cases - done)

        @seed(seed_value * 1_000_003 + seed_offset + batch)
        @settings(
            max_examples=n,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
            derandomize=False,
        )
        @given(gen.cases(specs, x64=x64, modes=modes))
        def one(case: gen.Case) -> None:
            nonlocal done
            if spent():
                return
            verdicts = _check_with_watchdog(case, devices)
            done += 1
            for platform, verdict in zip(platforms, verdicts):
                tally.add(platform, case, verdict, x64)
                if on_case is not None:
                    on_case(case, verdict)

        try:
            one()
        except Exception as e:  # the fuzzer's own bug (a case it could not draw): noted, go on
            tally.generator_errors.append(f"{type(e).__name__}: {str(e)[:300]}")
            if len(tally.generator_errors) > 20:
                raise
        batch += 1
    for platform in platforms:  # (the devices' time together, JAX's included)
        tally.seconds[platform] = tally.seconds.get(platform, 0.0) + time.monotonic() - start


def _has_64_bit_types(platform: str) -> bool:
    import webjax
    from webjax._src import dtypes

    backend = webjax.devices(platform)[0].backend
    return all(backend.supports_dtype(d) for d in (dtypes.float64, dtypes.int64))


def available(platforms: tuple[str, ...] = PLATFORMS) -> list[str]:
    from webjax._src.runtime import backend as rt

    return [p for p in platforms if rt.unavailable_reason(p) is None]


def merge_reports(parts: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """One report of several processes' reports: counts summed, failures concatenated."""
    devices: dict[str, dict[str, Any]] = {}
    groups: collections.Counter[str] = collections.Counter()
    for part in parts:
        groups.update(part["failure_groups"])
        for platform, d in part["devices"].items():
            into = devices.setdefault(
                platform, {"cases": 0, "failures": 0, "seconds": 0.0, "processes": 0}
            )
            into["cases"] += d["cases"]
            into["failures"] += d["failures"]
            into["seconds"] = round(into["seconds"] + d["seconds"], 1)
            into["processes"] += 1
            for key in ("modes", "notes", "ops"):
                c = collections.Counter(into.get(key, {}))
                c.update(d[key])
                into[key] = dict(sorted(c.items()))
    return {
        **meta,
        "devices": devices,
        "failure_groups": dict(groups.most_common()),
        "generator_errors": [e for part in parts for e in part["generator_errors"]],
        "failures": [f for part in parts for f in part["failures"]],
    }


def run_jobs(args: argparse.Namespace, argv: list[str]) -> int:
    """`--jobs N`: N runner processes side by side (seeds seed*N+k), their reports merged."""
    rest, skip = [], False
    for a in argv:  # argv without --jobs/--seed/--report (each child gets its own)
        if skip:
            skip = False
        elif a in ("--jobs", "--seed", "--report"):
            skip = True
        elif not a.startswith(("--jobs=", "--seed=", "--report=")):
            rest.append(a)
    with tempfile.TemporaryDirectory() as tmp:
        reports = [Path(tmp) / f"part{k}.json" for k in range(args.jobs)]
        children = [
            subprocess.Popen(
                [sys.executable, __file__, *rest, "--seed", str(args.seed * args.jobs + k)]
                + ["--report", str(reports[k])]
            )
            for k in range(args.jobs)
        ]
        codes = [c.wait() for c in children]
        parts = [json.loads(r.read_text()) for r in reports if r.exists()]
    meta = {"seed": args.seed, "x64": args.x64, "budget_s": args.budget, "jobs": args.jobs}
    report = merge_reports(parts, meta)
    report["crashed_processes"] = sum(code != 0 for code in codes) + args.jobs - len(parts)
    if args.report:
        args.report.write_text(json.dumps(report, indent=1, default=str) + "\n")
    for platform, d in report["devices"].items():
        print(
            f"fuzz {platform}{' x64' if args.x64 else ''}: {d['cases']} cases, "
            f"{d['failures']} failures ({d['processes']} processes)"
        )
    for group, n in list(report["failure_groups"].items())[:40]:
        print(f"  {n:5d}  {group}")
    return 1 if report["crashed_processes"] else 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--budget", type=float, default=60.0, help="seconds in all")
    p.add_argument("--cases", type=int, default=None, help="cases (instead), each on every device")
    p.add_argument("--device", action="append", choices=PLATFORMS, help="default: every one")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--x64", action="store_true", help="64-bit mode (jax_enable_x64)")
    p.add_argument("--op", action="append", help="only these ops (jnp.sum, lax.add, ...)")
    p.add_argument("--mode", action="append", choices=gen.MODES)
    p.add_argument("--report", type=Path, default=None, help="write the JSON report here")
    p.add_argument("--verbose", action="store_true", help="print each failure as it is found")
    p.add_argument("--jobs", type=int, default=1, help="processes side by side (seeds differ)")
    args = p.parse_args(argv)
    if args.jobs > 1:
        return run_jobs(args, argv)
    os.environ.setdefault("GALLIVM_PERF", "nopt")  # as the test tier: Mesa compiles faster
    if args.x64:
        set_x64(True)
    platforms = available(tuple(args.device or PLATFORMS))
    if args.x64:  # devices without 64-bit types raise a TypeError naming the dtype, by design
        platforms = [p for p in platforms if _has_64_bit_types(p)]
    specs = [s for s in gen.SPECS if not args.op or s.op in args.op] or None
    modes = tuple(args.mode or gen.MODES)
    tally = Tally()

    last_write = [time.monotonic()]

    def show(case: gen.Case, v: oracle.Verdict) -> None:
        if args.report and time.monotonic() - last_write[0] > 60:  # a run cut short keeps it
            last_write[0] = time.monotonic()
            partial = tally.report({"seed": args.seed, "x64": args.x64, "budget_s": args.budget})
            args.report.write_text(json.dumps(partial, indent=1, default=str) + "\n")
        if args.verbose and not v.ok:
            print(
                f"FAIL {v.category}: {case!r}\n  webjax: {v.webjax.summary()}\n"
                f"  jax: {v.jax.summary()}\n  {v.detail}",
                flush=True,
            )

    run_devices(
        platforms,
        tally,
        max_cases=args.cases,
        budget_s=None if args.cases else args.budget,
        seed_value=args.seed,
        x64=args.x64,
        specs=specs,
        modes=modes,
        on_case=show,
    )
    for platform in platforms:
        c = tally.cases.get(platform, collections.Counter())
        print(
            f"fuzz {platform}{' x64' if args.x64 else ''}: {c['total']} cases, "
            f"{c['failures']} failures",
            flush=True,
        )
    report = tally.report({"seed": args.seed, "x64": args.x64, "budget_s": args.budget})
    if args.report:
        args.report.write_text(json.dumps(report, indent=1, default=str) + "\n")
    for group, n in list(report["failure_groups"].items())[:40]:
        print(f"  {n:5d}  {group}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
