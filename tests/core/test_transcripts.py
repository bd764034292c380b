"""Whole transcripts through a command, under both drivers: the exact conversation of a re-ask,
a tool round, a finalize turn and a retried failure, and the requests the model was sent."""

from __future__ import annotations

from typing import Any

from alloy import command, tool
from alloy._types import (
    FINALIZE_SCHEMA_PROMPT,
    ModelTurn,
    RetryPrompt,
    Text,
    ToolCall,
    ToolResult,
    UserTurn,
)
from alloy.errors import ServerError
from alloy.testing import ScriptedModel, script, tool_call

from ..conftest import Call


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def asked(model: ScriptedModel) -> list[tuple[Any, ...]]:
    """The conversation each request carried."""
    return [request.messages for request in model.requests]


def test_a_reask(run_result: Call) -> None:
    model = script('{"value": "three"}', '{"value": 3}', all_used=True)

    @command(output=int, model=model)
    def count() -> str:
        return "How many sides has a triangle?"

    result = run_result(count)
    expected = (
        UserTurn("How many sides has a triangle?"),
        ModelTurn('{"value": "three"}'),
        UserTurn(RetryPrompt('- the answer: Input should be a valid integer (got "three")')),
        ModelTurn('{"value": 3}'),
    )
    assert result.value == 3
    assert result.transcript.messages == expected
    assert asked(model) == [expected[:1], expected[:3]]


def test_a_tool_round(run_result: Call) -> None:
    model = script(tool_call("add", {"a": 1, "b": 2}, id="c1"), '{"value": 3}', all_used=True)

    @command(output=int, model=model, tools=[add])
    def total() -> str:
        return "What is 1 + 2?"

    result = run_result(total)
    expected = (
        UserTurn("What is 1 + 2?"),
        ModelTurn(ToolCall("c1", "add", {"a": 1, "b": 2})),
        UserTurn(ToolResult("c1", "add", "3")),
        ModelTurn('{"value": 3}'),
    )
    assert result.value == 3
    assert result.transcript.messages == expected
    assert asked(model) == [expected[:1], expected[:3]]
    assert [len(request.tools) for request in model.requests] == [1, 1]


def test_a_finalize_turn(run_result: Call) -> None:
    model = script(tool_call("add", {"a": 2, "b": 2}, id="c1"), "", '{"value": 4}', all_used=True)

    @command(output=int, model=model, tools=[add])
    def total() -> str:
        return "What is 2 + 2?"

    result = run_result(total)
    expected = (
        UserTurn("What is 2 + 2?"),
        ModelTurn(ToolCall("c1", "add", {"a": 2, "b": 2})),
        UserTurn(ToolResult("c1", "add", "4")),
        ModelTurn(Text("")),
        UserTurn(FINALIZE_SCHEMA_PROMPT),
        ModelTurn('{"value": 4}'),
    )
    assert result.value == 4
    assert result.transcript.messages == expected
    assert asked(model) == [expected[:1], expected[:3], expected[:5]]
    assert [len(request.tools) for request in model.requests] == [1, 1, 0]  # none to finalize


def test_a_retried_failure(run_result: Call, sleeps: list[float]) -> None:
    model = script(ServerError("overloaded"), '{"value": 7}', all_used=True)

    @command(output=int, model=model, retries=1)
    def lucky() -> str:
        return "A lucky number?"

    result = run_result(lucky)
    expected = (UserTurn("A lucky number?"), ModelTurn('{"value": 7}'))
    assert result.value == 7
    assert result.transcript.messages == expected
    assert result.transcript.attempts == 2
    assert asked(model) == [expected[:1], expected[:1]]  # the failure left nothing behind
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.5
