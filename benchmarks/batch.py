"""Suite: provider batch APIs against online calls, over the same rows.

10,000 rows of one command on Anthropic's wire, against an emulator in its own process that
gives each request its own answer: ``cmd.map(rows, mode="batch")`` (one Message Batch, its
turnaround compressed to nothing, so the wall time is alloy's and the SDK's own work: building
the requests, submitting, reading and validating every answer) beside ``mode="online"`` with 32
calls at once. Both must give every row the same value; the batch run's cost must be half.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ._emulator import EmulatorProcess
from ._measure import Figure, SuiteResult, Target
from ._scale import Scale
from ._subjects import pointing_at

HALF = Target("max", 0.5 + 1e-9)


@dataclass
class Reading:
    station: str
    value: float


def run(scale: Scale) -> SuiteResult:
    from alloy import command

    started = time.perf_counter()
    result = SuiteResult("batch", "Provider batch API vs online calls")
    rows = [f"station {i}" for i in range(scale.batch_rows)]

    @command(output=Reading, model="anthropic:claude-haiku-4-5")
    def read(station: str) -> str:
        return f"What does {station} read?"

    runs: dict[str, Any] = {}
    with EmulatorProcess("--vary-answers") as emulator, pointing_at(emulator.url):
        for mode in ("batch", "online"):
            began = time.perf_counter()
            handle = read.map(rows, mode=mode, concurrency=32, poll_interval=0.05, progress=False)
            records = list(handle)
            runs[mode] = (time.perf_counter() - began, records, handle.summary)
    batch_seconds, batch_rows, batch_summary = runs["batch"]
    online_seconds, online_rows, online_summary = runs["online"]
    same = [r.value for r in batch_rows] == [r.value for r in online_rows]
    ok = all(r.ok for r in batch_rows) and all(r.ok for r in online_rows)
    how = f"{scale.batch_rows} rows, Anthropic's wire, emulator in its own process"
    result.figures.append(
        Figure(
            "batch",
            f"wall time, {scale.batch_rows} rows: batch vs online",
            batch_seconds,
            online_seconds,
            "the same rows online, 32 at once",
            "s",
            how,
        )
    )
    result.figures.append(
        Figure(
            "batch",
            "cost: batch vs online",
            batch_summary.cost or 0.0,
            online_summary.cost or 1.0,
            "the same rows online",
            "USD",
            how,
            HALF,
        )
    )
    result.notes.append(
        f"Same value for every row both ways: {same} (every row ok: {ok}). The emulated batch "
        "turnaround is compressed to nothing: a real one takes minutes to hours, during which "
        "the run polls; the wall time here is alloy's and the SDK's own work."
    )
    if not (same and ok):
        result.notes.append("PROBLEM: the batch run and the online run disagree")
    result.seconds = time.perf_counter() - started
    return result
