"""Suite: a command over rows. Pacing against a binding rate limit, and memory against length.

- 10,000 rows of OpenAI Chat against an emulator (in its own process) that keeps to a per-minute
  request limit, stated in its reply headers as OpenAI does: ``cmd.amap`` (which learns the limit
  from them) beside the usual hand-written ``asyncio.gather`` with a semaphore over the raw async
  SDK (its own retries on, honouring retry-after). Each side gets a fresh emulator, whose
  ``GET /_alloy/limits`` counts the requests it admitted and answered 429. The targets: at least
  90% of the limit used, at most 1% of requests answered 429.
- Peak RSS of ``cmd.map`` over 100,000 rows on the offline model beside 10,000 rows, each in its
  own process: flat means the run holds a window of rows, not the input.
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
FLAT = Target("max", 1.10)


def _worker(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.rows_worker", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"rows worker {args[0]} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _limited(side: str, scale: Scale) -> dict[str, Any]:
    """One side's run against a fresh rate-limited emulator, with the emulator's counts."""
    with EmulatorProcess("--rate-limit", f"openai:{scale.rows_rpm:g}") as emulator:
        result = _worker(side, emulator.url, str(scale.rows), str(scale.rows_concurrency))
        with urllib.request.urlopen(f"{emulator.url}/_alloy/limits", timeout=10) as response:
            counts = json.load(response)["openai"]
    result["admitted"], result["refused"] = counts["admitted"], counts["refused"]
    result["per_minute"] = (scale.rows - result["failed"]) / result["seconds"] * 60  # rows done
    return result


def run(scale: Scale) -> SuiteResult:
    started = time.perf_counter()
    result = SuiteResult("rows", "A command over rows (cmd.map)")
    paced = _limited("paced", scale)
    gather = _limited("gather", scale)
    limit = scale.rows_rpm
    how = f"{scale.rows} rows, {scale.rows_concurrency} in flight, limit {limit:g} requests/min"
    result.figures.append(
        Figure(
            "rows",
            f"paced map: share of the limit used, {scale.rows} rows",
            paced["per_minute"],
            limit,
            "the emulator's limit",
            "rows/min",
            how,
            USED,
        )
    )
    paced_requests = paced["admitted"] + paced["refused"]
    result.figures.append(
        Figure(
            "rows",
            "paced map: requests answered 429",
            paced["refused"],
            paced_requests,
            "every request it sent",
            "requests",
            how,
            REFUSED,
        )
    )
    result.figures.append(
        Figure(
            "rows",
            "paced map vs asyncio.gather + semaphore, rows done/s",
            paced["per_minute"] / 60,
            gather["per_minute"] / 60,
            "gather + semaphore over the raw async SDK",
            "rows/s",
            how,
        )
    )
    gather_requests = gather["admitted"] + gather["refused"]
    result.figures.append(
        Figure(
            "rows",
            "requests answered 429: paced map vs gather + semaphore",
            paced["refused"],
            max(gather["refused"], 1),
            "gather + semaphore's 429s",
            "requests",
            how,
        )
    )
    small = _worker("memory", str(scale.rows_memory // 10))
    large = _worker("memory", str(scale.rows_memory))
    result.figures.append(
        Figure(
            "rows",
            f"peak RSS, {scale.rows_memory:,} rows vs {scale.rows_memory // 10:,}",
            large["rss_peak_mb"],
            small["rss_peak_mb"],
            f"{scale.rows_memory // 10:,} rows",
            "MiB",
            "one process each, offline model",
            FLAT,
        )
    )
    result.notes.append(
        f"Paced map: {paced['per_minute']:.0f} rows/min of {limit:g} allowed "
        f"({paced['per_minute'] / limit:.1%}), {paced['refused']} of {paced_requests} requests "
        f"answered 429, {paced['failed']} rows failed. Hand-written gather + semaphore: "
        f"{gather['per_minute']:.0f} rows/min, {gather['refused']} of {gather_requests} requests "
        f"answered 429 (the SDK retried each up to twice), {gather['failed']} rows lost to 429s."
    )
    result.notes.append(
        f"Memory: {scale.rows_memory // 10:,} rows in {small['seconds']:.1f} s, peak "
        f"{small['rss_peak_mb']:.0f} MiB; {scale.rows_memory:,} rows in {large['seconds']:.1f} s, "
        f"peak {large['rss_peak_mb']:.0f} MiB."
    )
    result.seconds = time.perf_counter() - started
    return result
