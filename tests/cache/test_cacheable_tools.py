"""Tools marked cacheable are answered from the call's store for the same arguments; every other
tool runs on every call."""

from __future__ import annotations

from typing import Any

import pytest

from alloy import ConfigurationError, Context, command, tool, use_config
from alloy.testing.emulator import Emulator, ReplyJson, ReplyToolCalls

from ..conftest import Call
from .test_cache_through_sdks import PROVIDERS, Weather


def forecast(model: str, tools: list[Any], **options: Any) -> Any:
    @command(output=Weather, model=model, tools=tools, **options)
    def read(city: str) -> str:
        return f"Weather in {city}?"

    return read


@pytest.mark.parametrize("provider", ["anthropic", "openai-chat", "gemini"])
def test_a_cacheable_tool_is_answered_from_the_store_and_the_others_run(
    provider: str, emu: Emulator, run_result: Call
) -> None:
    model, queue, _ = PROVIDERS[provider]
    ran: list[str] = []

    @tool(cacheable=True)
    def look_up(city: str) -> dict[str, Any]:
        """Today's weather in a city (slow, and the same all day)."""
        ran.append(f"look_up {city}")
        return {"city": city, "sky": "sunny"}

    @tool
    def notify(city: str) -> str:
        """Tell the user a forecast was read (a side effect: runs every time)."""
        ran.append(f"notify {city}")
        return "sent"

    # Not repeatable (no temperature 0): the model is asked every time, the tool is not.
    turns = [
        ReplyToolCalls(("look_up", {"city": "Oslo"}), ("notify", {"city": "Oslo"})),
        ReplyJson({"city": "Oslo", "temp_c": 3}),
    ]
    emu.push(queue, *turns, *turns)
    read = forecast(model, [look_up, notify], parallel_tools_max=1)
    with use_config(cache="memory"):
        first = run_result(read, "Oslo")
        second = run_result(read, "Oslo")
    assert first.value == second.value == Weather("Oslo", 3)
    assert ran == ["look_up Oslo", "notify Oslo", "notify Oslo"]
    results = [
        [part.content for part in message.parts if hasattr(part, "content")]
        for message in second.transcript.messages
    ]
    assert ['{"city":"Oslo","sky":"sunny"}', "sent"] in results  # the model read the same text
    assert len(emu.requests_for(queue)) == 4


def test_the_key_is_the_tool_and_its_arguments(emu: Emulator) -> None:
    model, queue, _ = PROVIDERS["openai-chat"]
    ran: list[tuple[str, int]] = []

    @tool(cacheable=True)
    def look_up(city: str, days: int) -> str:
        """A forecast for some days."""
        ran.append((city, days))
        return f"{days} sunny days in {city}"

    @tool(cacheable=True, name="look_up_too")
    def other(city: str, days: int) -> str:
        """The same arguments, another tool."""
        ran.append(("other " + city, days))
        return "cloudy"

    def round_of(*calls: tuple[str, dict[str, Any]]) -> list[Any]:
        return [ReplyToolCalls(*calls), ReplyJson({"city": "Oslo", "temp_c": 3})]

    emu.push(
        queue,
        *round_of(("look_up", {"city": "Oslo", "days": 2})),
        *round_of(("look_up", {"days": 2, "city": "Oslo"})),  # the same arguments, reordered
        *round_of(("look_up", {"city": "Oslo", "days": 3})),
        *round_of(("look_up_too", {"city": "Oslo", "days": 2})),
    )
    read = forecast(model, [look_up, other])
    with use_config(cache="memory"):
        for _ in range(4):
            read("Oslo")
    assert ran == [("Oslo", 2), ("Oslo", 3), ("other Oslo", 2)]


def test_a_failed_tool_call_is_not_stored_and_without_a_cache_the_tool_runs(
    emu: Emulator,
) -> None:
    model, queue, _ = PROVIDERS["anthropic"]
    attempts: list[int] = []

    @tool(cacheable=True)
    def look_up(city: str) -> str:
        """Today's weather."""
        attempts.append(1)
        if len(attempts) == 1:
            raise TimeoutError("the weather service is down")
        return "sunny"

    turns = [
        ReplyToolCalls(("look_up", {"city": "Oslo"})),
        ReplyJson({"city": "Oslo", "temp_c": 3}),
    ]
    emu.push(queue, *turns * 5)
    read = forecast(model, [look_up])
    with use_config(cache="memory"):
        read("Oslo")  # the error reaches the model, and is not stored
        read("Oslo")  # runs, and is stored
        read("Oslo")  # from the store
    assert len(attempts) == 2
    read("Oslo")  # no cache: the tool runs
    read("Oslo")
    assert len(attempts) == 4


def test_replay_mode_runs_a_tool_it_holds_no_result_for_and_record_mode_refreshes(
    emu: Emulator, cache_file: Any
) -> None:
    model, queue, _ = PROVIDERS["anthropic"]
    ran: list[int] = []

    @tool(cacheable=True)
    def look_up(city: str) -> str:
        """Today's weather."""
        ran.append(1)
        return f"sunny, reading {len(ran)}"

    turns = [
        ReplyToolCalls(("look_up", {"city": "Oslo"})),
        ReplyJson({"city": "Oslo", "temp_c": 3}),
    ]
    emu.push(queue, *turns * 3)
    read = forecast(model, [look_up], temperature=0)
    with use_config(cache=str(cache_file), cache_mode="record"):
        read("Oslo")
        read("Oslo")  # record mode always runs the tool and asks the model
    assert len(ran) == 2
    with use_config(cache=str(cache_file), cache_mode="replay"):
        result = read.run("Oslo")  # the model's turns and the tool, all from the store
    assert len(ran) == 2 and result.cached
    assert any("reading 2" in str(message) for message in result.transcript.messages)


def test_a_tool_that_takes_the_call_context_cannot_be_cacheable() -> None:
    def with_context(context: Context[Any], city: str) -> str:
        return city

    def plain(city: str) -> str:
        return city

    with pytest.raises(ConfigurationError, match="context"):
        tool(cacheable=True)(with_context)
    with pytest.raises(ConfigurationError, match="cacheable must be True or False"):
        tool(cacheable="yes")(plain)  # type: ignore[call-overload]
    assert not tool(plain).cacheable
