"""``cmd.map`` / ``cmd.amap``: every row once, in order, with its own record; failures collected
or raised; a ConfigurationError stops everything; memory stays flat however long the input."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from alloy import ConfigurationError, Context, ParseError, ServerError, command, tool, use_config
from alloy import events as ev
from alloy._types import Request, Usage
from alloy.rows import Args, Failed, Ok, RowInputError
from alloy.testing import FunctionModel, json_reply, override_model, tool_call, tool_results

from ..conftest import Call


def row_of(request: Request) -> int:
    """The number at the end of the call's prompt (its first user turn)."""
    prompt = request.messages[0].parts[0].text  # type: ignore[union-attr]
    return int(prompt.rsplit(" ", 1)[1])


def number_in(request: Request) -> str:
    """The model answers with the number at the end of the prompt, times ten."""
    return json_reply(row_of(request) * 10, wrap=True)


def times_ten(model: Any = None) -> Any:
    @command(output=int, model=model or FunctionModel(number_in))
    def scaled(n: int) -> str:
        return f"Multiply {n}"

    return scaled


def test_every_row_once_in_input_order(run_map: Call) -> None:
    rows = run_map(times_ten(), range(50), concurrency=4)
    assert [row.index for row in rows] == list(range(50))
    assert [row.value for row in rows] == [n * 10 for n in range(50)]
    assert all(isinstance(row, Ok) and row.ok and row.attempts == 1 for row in rows)
    assert [row.input for row in rows] == list(range(50))
    assert len({row.key for row in rows}) == 50
    summary = rows.summary
    assert (summary.rows, summary.ok, summary.failed, summary.resumed) == (50, 50, 0, 0)
    assert summary.usage == Usage(input_tokens=500, output_tokens=250, requests=50)


def test_rows_that_finish_out_of_order_still_come_in_order(run_map: Call) -> None:
    async def slow_then_fast(request: Request) -> str:
        n = row_of(request)
        await asyncio.sleep(0.02 if n % 3 == 0 else 0.0)
        return json_reply(n, wrap=True)

    rows = run_map(times_ten(FunctionModel(slow_then_fast)), range(30), concurrency=8)
    assert [row.value for row in rows] == list(range(30))


def test_as_completed_yields_each_row_once_as_it_finishes(run_map: Call) -> None:
    async def first_one_slow(request: Request) -> str:
        n = row_of(request)
        await asyncio.sleep(0.2 if n == 0 else 0.0)
        return json_reply(n, wrap=True)

    rows = run_map(
        times_ten(FunctionModel(first_one_slow)), range(12), concurrency=4, as_completed=True
    )
    assert sorted(row.index for row in rows) == list(range(12))
    assert rows[-1].index == 0  # the slow row came last, not first


@dataclass
class Invoice:
    vendor: str
    total: float


def test_row_shapes_tuples_dicts_args_and_single_values(run_map: Call) -> None:
    seen: list[str] = []

    def echo(request: Request) -> str:
        seen.append(request.messages[-1].parts[0].text)  # type: ignore[union-attr]
        return json_reply(1, wrap=True)

    @command(output=int, model=FunctionModel(echo))
    def line(vendor: str, currency: str = "USD") -> str:
        return f"{vendor} in {currency}"

    rows = run_map(
        line,
        ["ACME", ("Initech", "EUR"), {"vendor": "Hooli", "currency": "GBP"}, Args("Globex")],
        concurrency=1,
    )
    assert all(row.ok for row in rows)
    assert seen == ["ACME in USD", "Initech in EUR", "Hooli in GBP", "Globex in USD"]


def test_a_record_row_for_a_command_of_one_parameter_is_that_argument(run_map: Call) -> None:
    got: list[Any] = []

    @command(output=int, model=FunctionModel(lambda r: json_reply(1, wrap=True)))
    def total(record: dict[str, Any]) -> str:
        got.append(record)
        return f"Total of {record}"

    @command(output=int, model=FunctionModel(lambda r: json_reply(1, wrap=True)))
    def span(pair: tuple[str, str]) -> str:
        got.append(pair)
        return f"From {pair[0]} to {pair[1]}"

    assert all(row.ok for row in run_map(total, [{"a": 1, "b": 2}], concurrency=1))
    assert all(row.ok for row in run_map(span, [("x", "y")], concurrency=1))
    assert got == [{"a": 1, "b": 2}, ("x", "y")]
    # A record row for a command whose one parameter is not a record is that row's failure.
    refused = run_map(span, [{"a": 1}], concurrency=1)
    assert isinstance(refused[0].error, RowInputError)


def test_a_row_that_does_not_fit_fails_alone(run_map: Call) -> None:
    rows = run_map(times_ten(), [1, {"m": 2}, (1, 2, 3), 4])
    assert [row.ok for row in rows] == [True, False, False, True]
    bad = rows[1]
    assert isinstance(bad, Failed) and isinstance(bad.error, RowInputError)
    assert "row {'m': 2} does not fit times_ten.<locals>.scaled(n): missing a required" in str(
        bad.error
    )
    with pytest.raises(RowInputError):
        bad.value
    assert rows.summary.failed == 2


def test_failed_calls_are_collected_with_their_error_usage_and_attempts(run_map: Call) -> None:
    def flaky(request: Request) -> Any:
        n = row_of(request)
        if n == 2:
            return ServerError("upstream down", status_code=503)
        if n == 3:
            return "not json at all"
        return json_reply(n, wrap=True)

    cmd = times_ten(FunctionModel(flaky)).with_options(retries=1, max_reasks=1)
    rows = run_map(cmd, range(5), concurrency=2)
    assert [row.ok for row in rows] == [True, True, False, False, True]
    assert isinstance(rows[2].error, ServerError) and rows[2].attempts == 2
    assert isinstance(rows[3].error, ParseError) and rows[3].attempts == 2
    assert rows[3].usage.requests == 2
    assert rows.summary.failed == 2


def test_errors_raise_stops_at_the_first_failed_row(run_map: Call) -> None:
    def fails_on_two(request: Request) -> Any:
        n = row_of(request)
        return ServerError("down", status_code=500) if n == 2 else json_reply(n, wrap=True)

    cmd = times_ten(FunctionModel(fails_on_two)).with_options(retries=0)
    with pytest.raises(ServerError, match="down"):
        run_map(cmd, range(10), errors="raise", concurrency=1)


def test_a_configuration_error_stops_the_whole_run_at_once(run_map: Call) -> None:
    @command(output=int, model=FunctionModel(lambda r: json_reply(1, wrap=True)))
    def bad(n: int) -> Any:
        return None if n == 3 else f"row {n}"  # a prompt function returning None is refused

    with pytest.raises(ConfigurationError, match="returned None"):
        run_map(bad, range(100), concurrency=2)


def test_bad_settings_are_refused_before_any_row(run_map: Call) -> None:
    for options, message in [
        ({"concurrency": 0}, "concurrency"),
        ({"rpm": -5}, "rpm"),
        ({"tpm": float("inf")}, "tpm"),
        ({"errors": "ignore"}, "errors"),
    ]:
        with pytest.raises(ConfigurationError, match=message):
            run_map(times_ten(), range(3), **options)
    with pytest.raises(ConfigurationError, match="iterable of rows"):
        run_map(times_ten(), 42)
    with pytest.raises(ConfigurationError, match="Unknown provider 'nosuch'"):
        run_map(times_ten().with_options(model="nosuch:model"), range(3))


def test_an_exception_in_the_prompt_function_fails_its_row(run_map: Call) -> None:
    @command(output=int, model=FunctionModel(lambda r: json_reply(1, wrap=True)))
    def picky(n: int) -> str:
        if n == 1:
            raise KeyError("no such customer")
        return f"row {n}"

    rows = run_map(picky, range(3))
    assert [row.ok for row in rows] == [True, False, True]
    assert isinstance(rows[1].error, KeyError)


def test_async_prompt_functions_tools_and_deps_run_per_row(run_map: Call) -> None:
    looked_up: list[tuple[str, str]] = []

    @tool
    def lookup(city: str, ctx: Context[str]) -> str:
        looked_up.append((city, ctx.deps))
        return f"{city}: 21C"

    def model(request: Request) -> Any:
        if not tool_results(request):
            city = request.messages[-1].parts[0].text.split()[-1]  # type: ignore[union-attr]
            return tool_call("lookup", {"city": city})
        return json_reply(21, wrap=True)

    @command(output=int, model=FunctionModel(model), tools=[lookup])
    async def weather(city: str) -> str:
        await asyncio.sleep(0)
        return f"Temperature in {city}"

    rows = run_map(weather, ["Paris", "Oslo"], deps="tenant-7", concurrency=1)
    assert [row.value for row in rows] == [21, 21]
    assert rows[0].attempts == 2
    assert looked_up == [("Paris", "tenant-7"), ("Oslo", "tenant-7")]


def test_use_config_and_override_model_reach_every_row() -> None:
    cmd = times_ten(model="nosuch-but-overridden:model" if False else None)
    with (
        use_config(max_reasks=0),
        override_model(FunctionModel(lambda r: json_reply(7, wrap=True))),
    ):
        rows = list(cmd.map(range(5), progress=False))
    assert [row.value for row in rows] == [7] * 5


def test_events_report_each_row_and_the_end(run_map: Call) -> None:
    cmd = times_ten()
    seen: list[ev.Event] = []
    cmd.subscribe(seen.append, ev.RowFinished, ev.MapFinished)
    rows = run_map(cmd, range(4), concurrency=2)
    progress = [e for e in seen if isinstance(e, ev.RowFinished)]
    assert [e.done for e in progress] == [1, 2, 3, 4]
    assert [e.row.index for e in progress] == [0, 1, 2, 3]
    assert all(e.total == 4 and e.failed == 0 for e in progress)
    assert progress[-1].usage == rows.summary.usage
    finished = [e for e in seen if isinstance(e, ev.MapFinished)]
    assert len(finished) == 1 and finished[0].summary == rows.summary
    assert len({e.call_id for e in seen}) == 1


def test_a_progress_bar_shows_rows_failures_and_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    list(times_ten().map(range(5), progress=True))
    shown = capsys.readouterr().err
    assert "scaled" in shown and "5/5" in shown and "failed=0" in shown and "tokens=75" in shown


def test_no_progress_bar_when_nobody_watches(capsys: pytest.CaptureFixture[str]) -> None:
    list(times_ten().map(range(5)))  # stderr is captured here: not a terminal
    assert capsys.readouterr().err == ""


def test_rows_are_read_lazily_and_few_are_started_ahead() -> None:
    """A slow consumer holds the run back: rows are read only as the window allows."""
    read: list[int] = []

    def source() -> Iterator[int]:
        for n in range(10_000):
            read.append(n)
            yield n

    rows = times_ten().map(source(), concurrency=2, progress=False)
    first = [next(rows) for _ in range(3)]
    assert [row.index for row in first] == [0, 1, 2]
    assert len(read) < 3 + 64  # the window, not the input
    rows.close()


def test_closing_a_run_early_stops_it_and_its_thread() -> None:
    before = threading.active_count()
    rows = times_ten().map(range(1000), progress=False)
    next(rows)
    rows.close()
    assert threading.active_count() == before
    with pytest.raises(StopIteration):
        next(rows)


def test_memory_stays_flat_however_many_rows() -> None:
    """Peak memory of a run does not grow with its length (a streaming iterator in, records
    out and dropped): 4x the rows, about the same peak."""
    cmd = times_ten(model="offline")  # a FunctionModel keeps every request it was sent

    def peak(count: int) -> int:
        tracemalloc.start()
        for _ in cmd.map(range(count), concurrency=8, progress=False):
            pass
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak

    peak(200)  # warm: schemas, adapters, the first loop
    small, large = peak(1_000), peak(4_000)
    assert large < small * 1.5, (small, large)


def test_a_run_left_open_does_not_hold_up_the_interpreters_exit(tmp_path: Path) -> None:
    """``next(iter(cmd.map(...)))`` and nothing more: the process still exits at once."""
    script = tmp_path / "open_run.py"
    script.write_text(
        "from alloy import command\n"
        "@command(output=int, model='offline')\n"
        "def n(word: str) -> str:\n"
        "    return word\n"
        "first = next(iter(n.map(['a'] * 200, progress=False)))\n"
        "print(first.ok)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
