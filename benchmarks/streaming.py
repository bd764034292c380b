"""Suite 7: a typed answer streamed in ~4-byte chunks, read as partial values.

alloy's side is the whole in-process path of ``cmd.stream_partial()``: a model that hands over
the answer's text deltas (precomputed, so no I/O is timed), the engine and driver, the
incremental parser, one ``Partial`` per change with its ``data`` read (as a display reads each
partial; the partials are counted as they pass, not kept), and the final validation. Every
string grows (``Annotated[Ledger, streaming.grow]``), as in the baselines' trailing-strings
mode. Timed in CPU seconds (``time.process_time``), the 1x and 4x outputs interleaved.

The baselines re-read the whole buffer on every chunk, the way peers stream partial values:
pydantic's ``validate_json(buffer, experimental_allow_partial="trailing-strings")``, jiter's
``from_json(buffer, partial_mode="trailing-strings")`` (what instructor parses with), and
instructor's ``Partial[Ledger].model_from_chunks`` in its own venv. Their cost per chunk grows
with the buffer, so a whole stream is quadratic: each stops after a CPU budget, and what it
took for the chunks it got through is a lower bound of its whole-stream time (the report also
gives the quadratic projection).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

from ._measure import Figure, SuiteResult, Target, median
from ._scale import Scale
from .bigoutput import Ledger, payloads

CHUNK = 4
#: What the issue asks of a ~193 KiB answer in ~49k chunks: at most this much CPU.
BUDGET_SECONDS = 0.3
WORKER = Path(__file__).parent / "workers" / "stream_instructor.py"


def _chunks(text: str) -> list[str]:
    return [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]


def _alloy_reader(text: str) -> Callable[[], int]:
    """One streamed call reading ``text`` as partials, reading each one's ``data``; returns
    how many partials it yielded."""
    from alloy import command, streaming
    from alloy._types import Done, Request, Response, StreamEvent, Text, TextDelta
    from alloy.testing import FunctionModel

    deltas = [TextDelta(chunk) for chunk in _chunks(text)]
    done = Done(Response((Text(text),)))

    class Streaming(FunctionModel):
        def stream(self, request: Request) -> Iterator[StreamEvent]:
            yield from deltas
            yield done

    @command(output=Annotated[Ledger, streaming.grow], model=Streaming(lambda request: text))
    def ledger(source: str) -> str:
        return f"Read the ledger in {source}"

    def read() -> int:
        shown = None
        for count, partial in enumerate(ledger.stream_partial("the scan"), 1):
            shown = partial.data
            if partial.complete:
                return count
        raise AssertionError(f"the stream ended without its value (last shown: {shown!r:.80})")

    return read


def _cpu_interleaved(
    a: Callable[[], Any], b: Callable[[], Any], *, n: int
) -> tuple[list[float], list[float]]:
    """CPU seconds per call of ``a`` and ``b``, called alternately (ABBA), after one warmup."""
    a()
    b()
    times_a: list[float] = []
    times_b: list[float] = []
    clock = time.process_time
    for i in range(n):
        order = ((a, times_a), (b, times_b)) if i % 2 == 0 else ((b, times_b), (a, times_a))
        for fn, sink in order:
            start = clock()
            fn()
            sink.append(clock() - start)
    return times_a, times_b


def _reparse(chunks: list[str], parse: Callable[[str], Any], cap: float) -> tuple[int, float]:
    """(chunks read, CPU seconds) re-parsing the growing buffer per chunk, until ``cap``."""
    buffer = ""
    clock = time.process_time
    start = clock()
    for count, chunk in enumerate(chunks, 1):
        buffer += chunk
        with contextlib.suppress(ValueError):
            parse(buffer)
        if clock() - start > cap:
            return count, clock() - start
    return len(chunks), clock() - start


def _instructor(text: str, cap: float, python: str) -> tuple[int, float]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as payload:
        payload.write(text)
    try:
        done = subprocess.run(
            [python, str(WORKER), payload.name, str(CHUNK), str(cap)],
            capture_output=True,
            text=True,
            check=True,
            timeout=cap * 4 + 120,
        )
    finally:
        Path(payload.name).unlink()
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return int(result["chunks"]), float(result["seconds"])


def _baseline(
    name: str, label: str, alloy_seconds: float, got: tuple[int, float], total: int, samples: str
) -> Figure:
    count, seconds = got
    whole = count == total
    projected = seconds * (total / count) ** 2 if count else float("nan")
    note = (
        f"whole stream: {seconds:.2f} s"
        if whole
        else f"stopped after {count:,} of {total:,} chunks ({seconds:.1f} s, a lower bound); "
        f"quadratic projection of the whole stream: {projected:,.0f} s"
    )
    return Figure(
        suite="streaming",
        name=name,
        alloy=alloy_seconds,
        baseline=seconds,
        baseline_label=label + ("" if whole else ", lower bound"),
        unit="s",
        samples=samples,
        note=note,
    )


def run(scale: Scale, peers: dict[str, str]) -> SuiteResult:
    from pydantic import TypeAdapter

    started = time.perf_counter()
    result = SuiteResult("streaming", "Streaming partial values")
    small, _, _ = payloads(scale.stream_bytes)
    large, _, _ = payloads(4 * scale.stream_bytes)
    small_chunks = _chunks(small)
    read_small, read_large = _alloy_reader(small), _alloy_reader(large)
    partials = read_small()
    one, four = _cpu_interleaved(read_small, read_large, n=scale.stream_runs)
    one_s, four_s = median(one), median(four)
    samples = f"{len(one)} + {len(four)} runs, interleaved"
    kib = len(small) / 1024
    result.figures.append(
        Figure(
            suite="streaming",
            name=f"stream_partial, {kib:.0f} KiB in {len(small_chunks):,} chunks (CPU)",
            alloy=one_s,
            baseline=BUDGET_SECONDS,
            baseline_label="budget",
            unit="s",
            samples=samples,
            target=Target("max", 1.0),
        )
    )
    result.figures.append(
        Figure(
            suite="streaming",
            name=f"stream_partial, 4x the answer ({len(large) / 1024:.0f} KiB)",
            alloy=four_s,
            baseline=one_s,
            baseline_label="alloy at 1x",
            unit="s",
            samples=samples,
            target=Target("max", 4.5),
        )
    )
    cap = scale.stream_baseline_cap
    adapter = TypeAdapter(Ledger)

    def pydantic_partial(buffer: str) -> Any:
        return adapter.validate_json(buffer, experimental_allow_partial="trailing-strings")

    import jiter

    def jiter_partial(buffer: str) -> Any:
        return jiter.from_json(buffer.encode(), partial_mode="trailing-strings")

    total = len(small_chunks)
    baselines = [
        (
            "vs pydantic partial re-validation per chunk",
            "validate_json allow_partial",
            pydantic_partial,
        ),
        ("vs jiter partial re-parse per chunk", "jiter trailing-strings", jiter_partial),
    ]
    for name, label, parse in baselines:
        got = _reparse(small_chunks, parse, cap)
        result.figures.append(_baseline(name, label, one_s, got, total, "1 run each side"))
    python = peers.get("instructor")
    if python is None:
        result.details.append("instructor's venv is missing: its row was not measured")
    else:
        got = _instructor(small, cap, python)
        result.figures.append(
            _baseline(
                "vs instructor Partial[T].model_from_chunks",
                "instructor",
                one_s,
                got,
                total,
                "1 run each side",
            )
        )
    result.notes.append(
        f"alloy yielded {partials:,} partials for the {kib:.0f} KiB answer (one per change of "
        "what is shown), each one's data read, and ended with the validated value. The "
        "baselines get a CPU budget of "
        f"{cap:g} s each; where it runs out, their figure is what the chunks they read took, so "
        "the ratio is an upper bound of alloy's."
    )
    for figure in result.figures:
        if figure.note:
            result.details.append(f"{figure.name}: {figure.note}")
    result.seconds = time.perf_counter() - started
    return result
