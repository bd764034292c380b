"""The exact event sequence of a call, for each path, under both drivers; handlers never break calls."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from alloy import BudgetExceeded, ParseError, command, tool
from alloy import events as ev
from alloy.errors import ServerError
from alloy.testing import json_reply, override_model, script, tool_call

from ..conftest import Call


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return key.upper()


@command(output=int, tools=[lookup])
def answer(question: str) -> str:
    return question


@pytest.fixture
def seen() -> Iterator[list[ev.Event]]:
    events: list[ev.Event] = []
    unsubscribe = ev.subscribe(events.append)
    yield events
    unsubscribe()


def names(events: list[ev.Event]) -> list[str]:
    return [type(e).__name__ for e in events]


def test_plain_call_sequence(call: Call, seen: list[ev.Event]) -> None:
    with override_model(script(json_reply(4, wrap=True))):
        assert call(answer, "2+2?") == 4
    assert names(seen) == [
        "CommandStarted",
        "PromptRendered",
        "ModelRequest",
        "ModelResponse",
        "OutputParsed",
        "OutputReady",
        "CommandFinished",
    ]
    assert len({e.call_id for e in seen}) == 1
    assert all(e.command == "answer" for e in seen)
    finished = seen[-1]
    assert isinstance(finished, ev.CommandFinished) and finished.value == 4
    response = seen[3]
    assert isinstance(response, ev.ModelResponse) and response.usage.input_tokens == 10


def test_tool_call_sequence(call: Call, seen: list[ev.Event]) -> None:
    model = script(
        [tool_call("lookup", {"key": "a"}, id="1"), tool_call("lookup", {"key": "b"}, id="2")],
        "",
        '"seven"',  # not an int (a bare 7 would be read)
    )
    with override_model(model), pytest.raises(ParseError):
        call(answer.with_options(max_reasks=0), "q")
    assert names(seen) == [
        "CommandStarted",
        "PromptRendered",
        "ModelRequest",
        "ModelResponse",
        "ToolCallStarted",
        "ToolCallStarted",
        "ToolCallFinished",
        "ToolCallFinished",
        "ModelRequest",
        "ModelResponse",
        "FinalizeTurn",
        "ModelRequest",
        "ModelResponse",
        "OutputRejected",
        "CommandFailed",
    ]
    finished = [e for e in seen if isinstance(e, ev.ToolCallFinished)]
    assert [f.result.content for f in finished] == ["A", "B"]


def test_reask_sequence(call: Call, seen: list[ev.Event]) -> None:
    with override_model(script('{"value": "x"}', json_reply(1, wrap=True))):
        assert call(answer, "q") == 1
    assert names(seen) == [
        "CommandStarted",
        "PromptRendered",
        "ModelRequest",
        "ModelResponse",
        "OutputRejected",
        "Reask",
        "ModelRequest",
        "ModelResponse",
        "OutputParsed",
        "OutputReady",
        "CommandFinished",
    ]
    reask = seen[5]
    assert isinstance(reask, ev.Reask) and "valid integer" in reask.feedback and reask.reask == 1


def test_failure_sequence_with_retry(call: Call, seen: list[ev.Event], sleeps: list[float]) -> None:
    failure = ServerError("down", status_code=503)
    with override_model(script(failure, failure)), pytest.raises(ServerError):
        call(answer.with_options(retries=1), "q")
    assert names(seen) == [
        "CommandStarted",
        "PromptRendered",
        "ModelRequest",
        "ProviderRetry",
        "ModelRequest",
        "CommandFailed",
    ]
    failed = seen[-1]
    assert isinstance(failed, ev.CommandFailed) and isinstance(failed.error, ServerError)
    retry = seen[3]
    assert isinstance(retry, ev.ProviderRetry) and retry.delay == 0.5  # the first ceiling
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.5  # jittered below it


def test_per_command_handlers_and_kinds(call: Call) -> None:
    finished: list[ev.Event] = []

    @command(output=int)
    def one() -> str:
        return "1"

    unsubscribe = one.subscribe(finished.append, ev.CommandFinished)
    with override_model(script(json_reply(1, wrap=True), json_reply(1, wrap=True))):
        call(one)
        call(answer, "not observed by the per-command handler")
        unsubscribe()
    assert names(finished) == ["CommandFinished"]


def test_async_handlers_run_under_both_drivers(call: Call) -> None:
    got: list[str] = []

    async def handler(event: ev.Event) -> None:
        await asyncio.sleep(0)
        got.append(type(event).__name__)

    unsubscribe = ev.subscribe(handler, ev.CommandStarted, ev.CommandFinished)
    try:
        with override_model(script(json_reply(2, wrap=True))):
            call(answer, "q")
    finally:
        unsubscribe()
    assert got == ["CommandStarted", "CommandFinished"]


def test_failing_handler_is_logged_and_never_breaks_the_call(
    call: Call, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(event: ev.Event) -> None:
        raise RuntimeError("handler bug")

    unsubscribe = ev.subscribe(broken)
    try:
        with (
            caplog.at_level(logging.ERROR, logger="alloy"),
            override_model(script(json_reply(3, wrap=True))),
        ):
            assert call(answer, "q") == 3
    finally:
        unsubscribe()
    assert any("handler" in r.getMessage() and r.exc_info for r in caplog.records)


def test_no_handlers_means_no_events_are_built(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Any] = []
    original = ev.CommandStarted.__init__

    def spy(self: Any, *args: Any, **kwargs: Any) -> None:
        built.append(args)
        original(self, *args, **kwargs)

    monkeypatch.setattr(ev.CommandStarted, "__init__", spy)
    with override_model(script(json_reply(1, wrap=True))):
        answer("q")
    assert built == []


def test_debug_logging_hides_content_unless_asked(caplog: pytest.LogCaptureFixture) -> None:
    secret_prompt = "my-private-question-123"
    with (
        caplog.at_level(logging.DEBUG, logger="alloy"),
        override_model(script(json_reply(1, wrap=True))),
    ):
        answer(secret_prompt)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "ModelRequest command=answer" in text
    assert secret_prompt not in text
    caplog.clear()
    with (
        caplog.at_level(logging.DEBUG, logger="alloy"),
        override_model(script(json_reply(1, wrap=True))),
    ):
        answer.with_options(log_content=True)(secret_prompt)
    assert secret_prompt in "\n".join(r.getMessage() for r in caplog.records)


def test_token_budget_stops_reasks(call: Call) -> None:
    bad = '{"value": "x"}'
    with (
        override_model(script(bad, bad, bad)) as model,
        pytest.raises(BudgetExceeded, match="Token budget of 20"),
    ):
        call(answer.with_options(token_budget=20, max_reasks=5), "q")
    assert len(model.requests) == 2  # 15 tokens per turn: the third turn would exceed 20


def test_token_budget_stops_tool_turns(call: Call) -> None:
    model = script(*[tool_call("lookup", {"key": "k"}) for _ in range(5)])
    with override_model(model), pytest.raises(BudgetExceeded):
        call(answer.with_options(token_budget=30), "q")
    assert len(model.requests) == 2


def test_usage_per_turn_and_cost(call: Call) -> None:
    from alloy.pricing import Price, set_price

    set_price("script", Price(input=1.0, output=2.0))
    with override_model(script('{"value": "x"}', json_reply(1, wrap=True))):
        result = answer.run("q") if call.mode == "sync" else asyncio.run(answer.arun("q"))  # type: ignore[attr-defined]
    assert [u.total_tokens for u in result.transcript.turn_usage] == [15, 15]
    assert result.usage.total_tokens == 30
    assert result.cost == pytest.approx((20 * 1.0 + 10 * 2.0) / 1_000_000)
