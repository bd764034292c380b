"""The effect of the performance commits, measured side by side in this run.

The package as it was at earlier commits (``alloy/`` taken from git) runs the in-process worker
next to today's tree, alternating processes. Skipped when git or that history is not available.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from ._measure import Figure, SuiteResult, median
from ._setup import VENVS
from .inprocess import WORKERS

ROOT = Path(__file__).parent.parent
#: Earlier states compared with today's: the commit, and what it stands for.
BASELINES = (
    ("ec94872^", "before the performance work"),
    ("9c3d323", "before the second round (plan reuse, sampler, engine and adapter trims)"),
    ("9e436e5", "before the third round (records built through their slots, price lookups kept)"),
)
CASES = ("fake_float", "fake_person", "canned_float", "canned_person")


def _tree(rev: str) -> Path:
    """``alloy/`` as it was at ``rev``, unpacked beside the benchmark venvs."""
    tree = VENVS / f"src-{rev.replace('^', '-parent')}"
    shutil.rmtree(tree, ignore_errors=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "alloy"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    # Our own git history, but take the safe extraction where this Python has it (3.10.12+).
    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, **safe)  # type: ignore[arg-type]
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


def _label(case: str) -> str:
    return (
        case.replace("_", " ").replace("fake", "offline model,").replace("canned", "canned model,")
    )


def run(batch: int, batches: int, rounds: int) -> SuiteResult:
    started = time.perf_counter()
    result = SuiteResult("changes", "Effect of the performance commits")
    trees = {"now": str(ROOT)}
    for rev, _ in BASELINES:
        try:
            trees[rev] = str(_tree(rev))
        except (OSError, subprocess.CalledProcessError, tarfile.TarError) as exc:
            result.notes.append(f"Skipped {rev}: cannot unpack alloy/ as it was then ({exc}).")
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    order = list(trees)
    for round_ in range(rounds):
        for name in order[round_ % len(order) :] + order[: round_ % len(order)]:
            for case, values in _worker(trees[name], batch, batches).items():
                samples[name].setdefault(case, []).extend(values)
    how = f"{rounds * batches} batches of {batch} calls per side, {rounds} processes each"
    for rev, meaning in BASELINES:
        if rev not in samples:
            continue
        for case in CASES:
            result.figures.append(
                Figure(
                    "changes",
                    f"{_label(case)} vs {rev}",
                    median(samples["now"][case]),
                    median(samples[rev][case]),
                    f"alloy at {rev}",
                    "µs",
                    how,
                )
            )
        result.notes.append(f"`{rev}`: the package {meaning}.")
    result.notes.append(
        "Each earlier state is the whole alloy/ package at that commit, run by the same worker "
        "and interpreter as today's, in alternating processes."
    )
    result.seconds = time.perf_counter() - started
    return result
