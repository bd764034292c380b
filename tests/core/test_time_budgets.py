"""Time budgets of a call through the real drivers: the deadline against a provider's retry hint
(through the OpenAI SDK and the emulator) and per-tool timeouts.

No test asserts how long something took; hangs are guarded by pytest-timeout and thread joins.
"""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alloy import (
    ConfigurationError,
    ProviderTimeoutError,
    RateLimitError,
    ToolError,
    command,
    tool,
)
from alloy._tools import ToolTimedOut
from alloy._types import ToolResult
from alloy.errors import ServerError
from alloy.events import ToolCallFinished
from alloy.testing import override_model, script, tool_call, tool_results
from alloy.testing.emulator import Emulator, RateLimited, ReplyJson

from ..conftest import Call

ROOT = Path(__file__).resolve().parents[2]


@command(output=float, model="openai:gpt-5-mini", timeout=0.5)
def price(text: str) -> str:
    return f"The price in {text}?"


@pytest.mark.timeout(10)  # without the deadline this call slept 2 x 60 s
def test_a_retry_hint_longer_than_the_deadline_fails_fast(emu: Emulator, call: Call) -> None:
    emu.push("openai", RateLimited(retry_after=300, retry_after_ms=None), ReplyJson({"value": 1.5}))
    with pytest.raises(RateLimitError) as info:
        call(price, "x")
    assert info.value.retry_after == 300
    assert info.value.attempts == 1
    assert len(emu.requests_for("openai")) == 1
    assert len(emu.pending("openai")) == 1  # the answer was never asked for


def test_a_retry_hint_within_the_deadline_is_waited_for(
    emu: Emulator, call: Call, sleeps: list[float]
) -> None:
    emu.push("openai", RateLimited(retry_after_ms=1), ReplyJson({"value": 1.5}))
    assert call(price, "x") == 1.5
    assert sleeps == [0.001]  # the provider's hint, as it is
    assert len(emu.requests_for("openai")) == 2


def test_backoff_waits_are_jittered_below_their_ceiling(call: Call, sleeps: list[float]) -> None:
    """Without a hint, the driver waits between half and all of each retry's ceiling."""

    @command(retries=3)
    def flaky() -> str:
        return "q"

    down = ServerError("down", status_code=503)
    with override_model(script(down, down, down, "up")):
        assert call(flaky) == "up"
    assert len(sleeps) == 3
    for wait, ceiling in zip(sleeps, (0.5, 1.0, 2.0), strict=True):
        assert ceiling / 2 <= wait <= ceiling


# -- tool timeouts ------------------------------------------------------------------------------

HANG_GUARD = pytest.mark.timeout(20)


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set when the test ends, so the threads of abandoned tools finish too."""
    event = threading.Event()
    yield event
    event.set()


def stuck_tool(release: threading.Event, **options: Any) -> Any:
    """A sync tool that hangs until the test ends."""

    @tool(**options)
    def stuck() -> str:
        """Never answers in time."""
        release.wait()
        return "too late"

    return stuck


def run_tools(call: Call, tools: list[Any], calls: list[Any], **options: Any) -> list[ToolResult]:
    """One tool round with these calls, then a final answer; the results the model was sent."""

    @command(tools=tools, **options)
    def go() -> str:
        return "go"

    model = script(calls, "done")
    with override_model(model):
        assert call(go) == "done"
    return tool_results(model.requests[1])


@HANG_GUARD
def test_a_hung_sync_tool_times_out_and_the_model_is_told(
    call: Call, release: threading.Event
) -> None:
    results = run_tools(call, [stuck_tool(release, timeout=0.2)], [tool_call("stuck")])
    assert results == [
        ToolResult("call_stuck", "stuck", "Error: tool 'stuck' timed out after 0.2 s", True)
    ]


@HANG_GUARD
def test_an_async_tool_past_its_timeout_is_cancelled(call: Call) -> None:
    cancelled = threading.Event()

    @tool(timeout=0.2)
    async def waits() -> str:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "too late"

    results = run_tools(call, [waits], [tool_call("waits")])
    assert results[0].content == "Error: tool 'waits' timed out after 0.2 s"
    assert cancelled.wait(10)


@HANG_GUARD
def test_tool_timeout_is_the_default_for_every_tool(
    call: Call, release: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALLOY_TOOL_TIMEOUT", "0.2")
    results = run_tools(call, [stuck_tool(release)], [tool_call("stuck")])
    assert results[0].content == "Error: tool 'stuck' timed out after 0.2 s"


@HANG_GUARD
def test_a_tools_own_timeout_wins_over_tool_timeout(call: Call, release: threading.Event) -> None:
    @tool(timeout=30)
    def patient() -> str:
        time.sleep(0.3)  # far past tool_timeout, well within its own timeout
        return "worth the wait"

    tools = [patient, stuck_tool(release, timeout=0.2)]
    calls = [tool_call("patient", id="1"), tool_call("stuck", id="2")]
    results = run_tools(call, tools, calls, tool_timeout=0.05)
    assert [r.content for r in results] == [
        "worth the wait",
        "Error: tool 'stuck' timed out after 0.2 s",
    ]


@HANG_GUARD
def test_a_hung_tool_does_not_hold_back_the_others(call: Call, release: threading.Event) -> None:
    @tool
    def quick(n: int) -> int:
        return n * 2

    tools = [quick, stuck_tool(release)]
    calls = [tool_call("stuck", id="s"), *(tool_call("quick", {"n": n}, id=str(n)) for n in (1, 2))]
    results = run_tools(call, tools, calls, tool_timeout=0.2, parallel_tools_max=2)
    assert [r.content for r in results] == ["Error: tool 'stuck' timed out after 0.2 s", "2", "4"]


@HANG_GUARD
def test_a_timed_out_tool_raises_with_tool_errors_raise(
    call: Call, release: threading.Event
) -> None:
    @command(tools=[stuck_tool(release, timeout=0.2)], tool_errors="raise")
    def go() -> str:
        return "go"

    with override_model(script(tool_call("stuck"))), pytest.raises(ToolError) as info:
        call(go)
    assert info.value.tool == "stuck"
    assert isinstance(info.value.__cause__, ToolTimedOut)


@HANG_GUARD
def test_the_deadline_stops_a_tool_without_a_timeout(call: Call, release: threading.Event) -> None:
    @command(tools=[stuck_tool(release)], deadline=0.3)
    def go() -> str:
        return "go"

    model = script(tool_call("stuck"), "never asked")
    with override_model(model), pytest.raises(ProviderTimeoutError, match=r"deadline of 0\.3 s"):
        call(go)
    assert len(model.requests) == 1


@HANG_GUARD
def test_tool_calls_waiting_for_a_turn_are_cut_at_the_deadline_too(
    call: Call, release: threading.Event
) -> None:
    @command(tools=[stuck_tool(release)], deadline=0.3, parallel_tools_max=1)
    def go() -> str:
        return "go"

    finished: list[str] = []
    go.subscribe(lambda event: finished.append(event.result.content), ToolCallFinished)
    calls = [tool_call("stuck", id="1"), tool_call("stuck", id="2")]
    with override_model(script(calls)), pytest.raises(ProviderTimeoutError):
        call(go)
    # The first used up the time left; the second, started after it, got none.
    assert finished[0].startswith("Error: tool 'stuck' timed out after")
    assert finished[1] == "Error: tool 'stuck' timed out after 0 s"


HUNG_FOREVER = """
import asyncio, sys, time
from alloy import command, tool
from alloy.testing import override_model, script, tool_call

@tool(timeout=0.2)
def stuck() -> str:
    time.sleep(3600)
    return "too late"

@command(tools=[stuck])
def go() -> str:
    return "go"

with override_model(script(tool_call("stuck"), "done")):
    print(go() if sys.argv[1] == "sync" else asyncio.run(go.acall()))
"""


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_hung_sync_tool_holds_up_neither_the_call_nor_the_exit(driver: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", HUNG_FOREVER, driver],
        capture_output=True,
        text=True,
        timeout=60,  # the hang guard: without daemon threads the exit waits an hour
        env={**os.environ, "PYTHONPATH": str(ROOT), "ALLOY_NO_DOTENV": "1"},
    )
    assert (done.returncode, done.stdout.strip()) == (0, "done"), done.stderr


@pytest.mark.parametrize("timeout", [0, -1, math.nan, math.inf, 10**9, True, "5"])
def test_a_tool_timeout_must_be_positive_finite_seconds(timeout: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"Tool 'f': timeout must be"):
        tool(name="f", timeout=timeout)(lambda: None)
