"""The runner: install what is missing, start the emulator, run the suites, write the report.

``python -m benchmarks [--quick] [--suite NAME ...] [--no-install] [--out DIR]``. A suite that
fails is reported as a problem and the others still run, so one broken adapter never costs the
whole report.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from . import (
    _setup,
    batch,
    bigoutput,
    cache,
    changes,
    coldstart,
    concurrency,
    evalreport,
    inprocess,
    mcp_calls,
    profiling,
    proxy,
    report,
    rows,
    scaleout,
    serve,
    streaming,
    warm,
)
from ._emulator import EmulatorProcess
from ._measure import SuiteResult
from ._scale import FULL, TINY, Scale

SUITES = (
    "warm",
    "inprocess",
    "concurrency",
    "cold",
    "big",
    "streaming",
    "cache",
    "rows",
    "batch",
    "ray",
    "changes",
    "serve",
    "proxy",
    "eval",
    "mcp",
)
RESULTS = Path(__file__).parent / "results"


def _versions() -> str:
    found = []
    for package in ("pydantic", "openai", "anthropic", "google-genai", "ollama", "httpx"):
        with contextlib.suppress(PackageNotFoundError):
            found.append(f"{package} {version(package)}")
    return ", ".join(found)


def _load() -> str:
    try:
        return "/".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def _suite(name: str, scale: Scale, root: str, peers: dict[str, str]) -> Callable[[], SuiteResult]:
    return {
        "warm": lambda: warm.run(root, scale),
        "inprocess": lambda: inprocess.run(scale, peers),
        "concurrency": lambda: concurrency.run(root, scale),
        "cold": lambda: coldstart.run(root, scale.cold_runs),
        "big": lambda: bigoutput.run(scale),
        "streaming": lambda: streaming.run(scale, peers),
        "cache": lambda: cache.run(root, scale),
        "rows": lambda: rows.run(scale),
        "batch": lambda: batch.run(scale),
        "ray": lambda: scaleout.run(scale),
        "changes": lambda: changes.run(scale.inproc_batch, scale.inproc_batches, 2),
        "serve": lambda: serve.run(root, scale),
        "proxy": lambda: proxy.run(root, scale),
        "eval": lambda: evalreport.run(scale),
        "mcp": lambda: mcp_calls.run(scale),
    }[name]


def print_summary(results: Sequence[SuiteResult]) -> None:
    for result in results:
        for f in result.figures:
            mark = {True: "ok ", False: "NO ", None: "   "}[f.met]
            print(
                f"  {mark}{f.suite:12s} {f.name[:52]:52s} {f.alloy:10.2f} {f.baseline:10.2f} "
                f"{f.unit:8s} ratio {f.ratio:.3f}"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny iteration counts (a smoke run)")
    parser.add_argument("--suite", action="append", choices=SUITES, help="run only these")
    parser.add_argument("--no-install", action="store_true", help="use only venvs already built")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where report.md goes")
    args = parser.parse_args(argv)
    scale = TINY if args.quick else FULL
    chosen = tuple(args.suite or SUITES)
    started = time.perf_counter()
    load_before = _load()
    problems: list[str] = []

    print("benchmarks: preparing virtual environments", flush=True)
    peers: dict[str, str] = {}
    if "inprocess" in chosen or "streaming" in chosen:
        if args.no_install:
            peers = {
                name: str(_setup.VENVS / name / "bin" / "python")
                for name in _setup.PEERS
                if (_setup.VENVS / name / ".installed").exists()
            }
        else:
            peers = _setup.peers(problems)
    chart_python = None
    chart_venv = _setup.VENVS / "chart" / ".installed"
    if not args.no_install or chart_venv.exists():
        chart_python = _setup.chart_python(problems)

    results: list[SuiteResult] = []
    profiles: list[profiling.Profile] = []
    with EmulatorProcess() as emulator:
        for name in chosen:
            print(f"benchmarks: {name}", flush=True)
            try:
                results.append(_suite(name, scale, emulator.url, peers)())
            except Exception as exc:
                problems.append(f"suite {name} failed: {exc!r}")
                traceback.print_exc()
        print("benchmarks: profiling", flush=True)
        try:
            profiles = profiling.run(emulator.url, scale.profile_calls)
        except Exception as exc:
            problems.append(f"profiling failed: {exc!r}")
            traceback.print_exc()

    elapsed = time.perf_counter() - started
    environment = [
        f"Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs; {_versions()}.",
        f"Load average (1/5/15 min) {load_before} at the start and {_load()} at the end: other "
        "work shares this machine, which is why everything is a side-by-side ratio.",
        f"Whole run {elapsed / 60:.1f} min ({'quick' if args.quick else 'full'} scale: "
        f"{scale.describe()}).",
    ]
    path = report.write(args.out, results, profiles, environment, problems, chart_python)
    print_summary(results)
    for problem in problems:
        print(f"  problem: {problem}", file=sys.stderr)
    print(f"benchmarks: wrote {path} in {elapsed:.0f} s")
    return 0
