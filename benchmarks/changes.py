"""The effect of the performance commits, measured side by side in this run.

A copy of today's ``alloy/`` with the core files as they were before those commits (taken from
git) runs the in-process worker next to today's tree, alternating processes. Skipped when git
or that history is not available.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ._measure import Figure, SuiteResult, median
from ._setup import VENVS
from .inprocess import WORKERS

ROOT = Path(__file__).parent.parent
#: The last commit before the first performance change, and the core files those changes touched.
BEFORE = "ec94872^"
FILES = ("alloy/_config.py", "alloy/_engine.py", "alloy/_command.py")
CASES = ("fake_float", "fake_person", "canned_float", "canned_person")


def _before_tree() -> Path:
    tree = VENVS / "before-src"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(ROOT / "alloy", tree / "alloy", ignore=shutil.ignore_patterns("__pycache__"))
    for name in FILES:
        old = subprocess.run(
            ["git", "show", f"{BEFORE}:{name}"], cwd=ROOT, capture_output=True, check=True
        ).stdout
        (tree / name).write_bytes(old)
    return tree


def _worker(pythonpath: str, batch: int, batches: int) -> dict[str, list[float]]:
    import json

    env = {**os.environ, "PYTHONPATH": pythonpath}
    done = subprocess.run(
        [
            sys.executable,
            str(WORKERS / "inproc_alloy.py"),
            str(batch),
            str(batches),
            ",".join(CASES),
        ],
        capture_output=True,
        text=True,
        cwd=WORKERS,
        env=env,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"inproc_alloy.py failed:\n{done.stderr[-2000:]}")
    cases: dict[str, list[float]] = json.loads(done.stdout)["cases"]
    return cases


def run(batch: int, batches: int, rounds: int) -> SuiteResult:
    started = time.perf_counter()
    result = SuiteResult("changes", "Effect of the performance commits")
    try:
        before = str(_before_tree())
    except (OSError, subprocess.CalledProcessError) as exc:
        result.notes.append(f"Skipped: cannot rebuild the tree before {BEFORE} ({exc}).")
        return result
    samples: dict[str, dict[str, list[float]]] = {"now": {}, "before": {}}
    trees = {"now": str(ROOT), "before": before}
    for round_ in range(rounds):
        for name in ("now", "before") if round_ % 2 == 0 else ("before", "now"):
            for case, values in _worker(trees[name], batch, batches).items():
                samples[name].setdefault(case, []).extend(values)
    how = f"{rounds * batches} batches of {batch} calls per side, {rounds} processes each"
    for case in CASES:
        result.figures.append(
            Figure(
                "changes",
                case.replace("_", " ")
                .replace("fake", "offline model,")
                .replace("canned", "canned model,"),
                median(samples["now"][case]),
                median(samples["before"][case]),
                f"core files at {BEFORE}",
                "µs",
                how,
            )
        )
    result.notes.append(
        f"`before` is today's alloy/ with {', '.join(FILES)} restored from {BEFORE}; "
        "same worker, same interpreter, alternating processes."
    )
    result.seconds = time.perf_counter() - started
    return result
