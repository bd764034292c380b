"""Suite 3: many async calls at once against the emulator, alloy vs the raw async SDK.

Each side runs in its own process (``concurrency_worker``), so peak memory is that side's
alone; sides alternate for several repetitions and medians are compared. Throughput is the
headline; client CPU per call is reported too, because when the client saturates its core that
is what decides throughput.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ._measure import Figure, SuiteResult, Target, median, paired_ratio_ci
from ._scale import Scale

ROOT = Path(__file__).parent.parent


def _side(side: str, root: str, scale: Scale, provider: str) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.concurrency_worker",
            side,
            root,
            str(scale.conc_calls),
            str(scale.conc_limit),
            provider,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"concurrency worker ({side}) failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def run(root: str, scale: Scale, provider: str = "openai") -> SuiteResult:
    started = time.perf_counter()
    result = SuiteResult("concurrency", f"Concurrency ({provider}, async)")
    runs: dict[str, list[dict[str, Any]]] = {"alloy": [], "raw": []}
    for rep in range(scale.conc_reps):
        for side in ("alloy", "raw") if rep % 2 == 0 else ("raw", "alloy"):
            runs[side].append(_side(side, root, scale, provider))

    # Runs i of both sides are adjacent in time: the interval resamples those pairs together.
    throughput = {side: [r["throughput"] for r in rs] for side, rs in runs.items()}

    def med(side: str, key: str) -> float:
        return median([r[key] for r in runs[side]])

    how = (
        f"{scale.conc_calls} calls, at most {scale.conc_limit} in flight; "
        f"{scale.conc_reps} processes per side, alternating"
    )
    result.figures.append(
        Figure(
            "concurrency",
            f"throughput, {scale.conc_calls} calls, {scale.conc_limit} in flight",
            med("alloy", "throughput"),
            med("raw", "throughput"),
            "raw async SDK",
            "calls/s",
            how,
            Target("min", 0.95),
            ci=paired_ratio_ci(throughput["alloy"], throughput["raw"]),
        )
    )
    result.figures.append(
        Figure(
            "concurrency",
            "client CPU per call",
            med("alloy", "cpu_us_per_call"),
            med("raw", "cpu_us_per_call"),
            "raw async SDK",
            "µs",
            how,
        )
    )
    result.figures.append(
        Figure(
            "concurrency",
            "peak RSS of the process",
            med("alloy", "rss_peak_mb"),
            med("raw", "rss_peak_mb"),
            "raw async SDK",
            "MB",
            how,
        )
    )
    result.figures.append(
        Figure(
            "concurrency",
            "peak traced Python allocations during a burst",
            med("alloy", "traced_peak_mb"),
            med("raw", "traced_peak_mb"),
            "raw async SDK",
            "MB",
            how,
        )
    )
    failed = {side: sum(r["failed"] for r in rs) for side, rs in runs.items()}
    result.details.append(
        f"RSS before the timed burst: alloy {med('alloy', 'rss_before_mb'):.1f} MB, raw "
        f"{med('raw', 'rss_before_mb'):.1f} MB (imports, clients, warm-up). Failed calls: "
        f"alloy {failed['alloy']}, raw {failed['raw']}. Per-run throughput: alloy "
        + ", ".join(f"{r['throughput']:.0f}" for r in runs["alloy"])
        + "; raw "
        + ", ".join(f"{r['throughput']:.0f}" for r in runs["raw"])
        + " calls/s."
    )
    result.notes.append(
        "Peak RSS is the process's high-water mark (VmHWM) after the timed burst; traced "
        "allocations are tracemalloc's peak during a second, untimed burst."
    )
    result.seconds = time.perf_counter() - started
    return result
