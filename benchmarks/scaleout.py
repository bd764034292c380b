"""Suite: past one process. A command over rows in Ray Data with two actors, beside ``cmd.map``
in one process, over the same rows; and two actors sharing a rate limit through a RayBudget.

- Rows of OpenAI Chat against the emulator (in its own process, no limit): ``cmd.map`` in one
  process, and ``alloy.ray.CommandBatches`` on a local Ray cluster of two CPUs (two actors, the
  same calls at once in each as the one process makes). Rows per second both ways, counted from
  the first row to the last (Ray's start-up is reported beside, not counted; the actors'
  start is). Every row's record (value, ok, attempts, tokens) must be the same both ways.
- The same rows through two actors against an emulator keeping to a per-minute limit, which
  both learn from OpenAI's headers, sharing one ``RayBudget``: the share of the limit used
  (from a tenth of the rows admitted to nine tenths, sampled from the emulator's counts: the
  pace once the actors are up) and the requests answered 429.

On two cores, the emulator, the Ray processes and the actors share the machine: Ray's figure
here is its overhead more than its reach, which is machines.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from ._emulator import EmulatorProcess
from ._measure import Figure, SuiteResult, Target
from ._scale import Scale

ROOT = Path(__file__).parent.parent
USED = Target("min", 0.90)
REFUSED = Target("max", 0.01)


def _worker(*args: str, watch: str | None = None) -> dict[str, Any]:
    """A worker's JSON; with ``watch`` (an emulator's URL), also the requests it admitted,
    sampled every 0.2 s while the worker runs, as ``(seconds, admitted)`` pairs."""
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.ray_worker", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    samples: list[tuple[float, int]] = []
    started = time.perf_counter()
    while watch is not None and process.poll() is None:
        samples.append((time.perf_counter() - started, _counts(watch)["admitted"]))
        time.sleep(0.2)
    stdout, stderr = process.communicate(timeout=1800)
    if process.returncode != 0:
        raise RuntimeError(f"ray worker {args[0]} failed:\n{stderr[-2000:]}")
    result: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    result["samples"] = samples
    return result


def _counts(url: str) -> dict[str, int]:
    with urllib.request.urlopen(f"{url}/_alloy/limits", timeout=10) as response:
        counts: dict[str, int] = json.load(response)["openai"]
    return counts


def _steady_per_minute(samples: list[tuple[float, int]], rows: int) -> float | None:
    """Requests a minute between the samples where a tenth and nine tenths of the rows had
    been admitted: the pace once the actors are up, before the last batches trail off."""
    low = next((s for s in samples if s[1] >= rows / 10), None)
    high = next((s for s in samples if s[1] >= rows * 9 / 10), None)
    if low is None or high is None or high[0] <= low[0]:
        return None
    return (high[1] - low[1]) / (high[0] - low[0]) * 60


def run(scale: Scale) -> SuiteResult:
    started = time.perf_counter()
    result = SuiteResult("ray", "Past one process: Ray Data with two actors")
    rows, concurrency, batch = scale.ray_rows, scale.ray_concurrency, scale.ray_batch
    with EmulatorProcess() as emulator:
        one = _worker("local", emulator.url, str(rows), str(2 * concurrency))
        two = _worker("ray", emulator.url, str(rows), str(concurrency), str(batch))
    if one["digest"] != two["digest"] or one["failed"] or two["failed"]:
        raise RuntimeError(f"Ray's records differ from one process's: {one} vs {two}")
    how = f"{rows:,} rows, {2 * concurrency} calls at once in all, batches of {batch}"
    result.figures.append(
        Figure(
            "ray",
            "Ray Data, 2 actors vs cmd.map in one process, rows/s",
            rows / two["seconds"],
            rows / one["seconds"],
            "cmd.map in one process",
            "rows/s",
            how,
        )
    )
    limit = scale.ray_rpm
    paced_rows = scale.ray_paced_rows
    with EmulatorProcess("--rate-limit", f"openai:{limit:g}") as emulator:
        paced = _worker(
            "ray-paced",
            emulator.url,
            str(paced_rows),
            str(concurrency),
            str(batch),
            watch=emulator.url,
        )
        counts = _counts(emulator.url)
    overall = (paced_rows - paced["failed"]) / paced["seconds"] * 60
    per_minute = _steady_per_minute(paced["samples"], paced_rows) or overall
    sent = counts["admitted"] + counts["refused"]
    paced_how = f"{paced_rows:,} rows, limit {limit:g} requests/min, batches of {batch}"
    result.figures.append(
        Figure(
            "ray",
            "2 actors sharing a RayBudget: share of the limit used",
            per_minute,
            limit,
            "the emulator's limit",
            "requests/min",
            paced_how,
            USED,
        )
    )
    result.figures.append(
        Figure(
            "ray",
            "2 actors sharing a RayBudget: requests answered 429",
            counts["refused"],
            sent,
            "every request they sent",
            "requests",
            paced_how,
            REFUSED,
        )
    )
    result.notes.append(
        f"{rows:,} rows: one process {one['seconds']:.1f} s ({rows / one['seconds']:.0f} rows/s), "
        f"Ray with two actors {two['seconds']:.1f} s ({rows / two['seconds']:.0f} rows/s, the "
        f"actors' start included), after {two['startup']:.1f} s starting Ray; every row's "
        f"record the same both ways."
    )
    result.notes.append(
        f"Shared budget: {per_minute:.0f} requests/min of {limit:g} allowed "
        f"({per_minute / limit:.1%}) from a tenth of the rows admitted to nine tenths; "
        f"{overall:.0f} rows/min over the whole run, the actors' start included; "
        f"{counts['refused']} of {sent} requests answered 429, {paced['failed']} rows failed."
    )
    result.seconds = time.perf_counter() - started
    return result
