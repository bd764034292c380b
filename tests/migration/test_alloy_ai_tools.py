"""alloy-ai's tools: calling a ``@tool`` function from Python runs its ``require``/``ensure``
contracts (issue 21, item 5), and ``ToolLoopLimitExceeded`` keeps alloy-ai's attributes."""

from __future__ import annotations

import asyncio

import pytest

from alloy import ToolError, ToolLoopLimitExceeded, command, ensure, require, tool
from alloy._types import Response, Text, ToolCall
from alloy.testing import override_model, script, tool_call


@tool
@require(lambda ba: ba.arguments.get("x", 0) >= 0, "x must be non-negative")
@ensure(lambda r: r >= 0, "result must be non-negative")
def shifted(x: int, shift: int = 0) -> int:
    """x plus shift."""
    return x + shift


def test_a_tool_called_directly_checks_require_and_ensure() -> None:
    assert shifted(4, shift=1) == 5
    with pytest.raises(ToolError, match="precondition failed: x must be non-negative") as pre:
        shifted(-1)
    assert pre.value.tool == "shifted"
    with pytest.raises(ToolError, match="postcondition failed: result must be non-negative"):
        shifted(1, shift=-5)


def test_an_async_tool_called_directly_checks_ensure_when_awaited() -> None:
    @tool
    @ensure(lambda r: r == "ok", "must answer ok")
    async def answer(text: str) -> str:
        """Echo."""
        return text

    assert asyncio.run(answer("ok")) == "ok"
    with pytest.raises(ToolError, match="must answer ok"):
        asyncio.run(answer("no"))


def test_a_contract_added_above_tool_holds_on_direct_calls_too() -> None:
    @require(lambda ba: ba.arguments["n"] < 10, "n below 10")
    @tool
    def small(n: int) -> int:
        """n."""
        return n

    with pytest.raises(ToolError, match="n below 10"):
        small(11)


def test_tool_loop_limit_exceeded_carries_alloy_ais_attributes() -> None:
    @tool
    def lookup() -> int:
        """A number."""
        return 1

    @command(tools=[lookup], max_tool_turns=1)
    def loop() -> str:
        return "Keep looking"

    again = Response(
        (Text("still thinking"), ToolCall("c2", "lookup", {})), finish_reason="tool_calls"
    )
    with (
        override_model(script(tool_call("lookup", {}), again)),
        pytest.raises(ToolLoopLimitExceeded) as caught,
    ):
        loop()
    error = caught.value
    assert (error.max_turns, error.turns_taken, error.partial_text) == (1, 1, "still thinking")
