"""The tool loop: schemas, validation, parallel and async tools, contracts, errors, limits, finalize."""

from __future__ import annotations

import asyncio
import datetime
import decimal
import enum
import json
import math
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from alloy import (
    ConfigurationError,
    EmptyOutputError,
    ToolError,
    ToolLoopLimitExceeded,
    command,
    ensure,
    require,
    tool,
    use_config,
)
from alloy._stream_accumulator import tool_call as parse_tool_call
from alloy._types import Request, Response, ToolCall, ToolResult, UserTurn
from alloy.testing import FunctionModel, json_reply, override_model, script, tool_call, tool_results

from ..conftest import Call


@tool
def add(a: int, b: int = 0) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@dataclass
class Weather:
    city: str
    temp_c: float


@tool
async def weather(city: str) -> Weather:
    """Current weather for a city."""
    await asyncio.sleep(0)
    return Weather(city, 21.5)


def test_tool_schema_from_type_hints_and_docstring() -> None:
    definition = add.definition
    assert definition.name == "add"
    assert definition.description == "Add two integers."
    assert definition.parameters == {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "The first number."},
            "b": {"type": "integer", "description": "The second number."},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    assert definition.strict is False  # b has a default, so not every property is required
    assert weather.definition.strict is True
    assert add(2, 3) == 5  # a tool is still the plain function


def test_tool_with_open_dict_parameter_is_offered_non_strict() -> None:
    @tool
    def store(data: dict[str, int]) -> str:
        return "ok"

    assert store.definition.strict is False
    assert store.definition.parameters["properties"]["data"]["type"] == "object"


def test_varargs_tool_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match=r"\*args"):

        @tool
        def bad(*numbers: int) -> int:
            return sum(numbers)


def test_bad_tool_name_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="Tool name"):
        tool(name="has space")(lambda: 1)


def test_tools_round_trip_with_parallel_calls(call: Call) -> None:
    @command(output=float, tools=[add, weather])
    def plan(city: str) -> str:
        return f"Plan for {city}"

    model = script(
        [
            tool_call("add", {"a": 1, "b": 2}, id="c1"),
            tool_call("weather", {"city": "Paris"}, id="c2"),
        ],
        json_reply(24.5, wrap=True),
    )
    with override_model(model):
        assert call(plan, "Paris") == 24.5
    second = model.requests[1]
    assert second.messages[-1] == UserTurn(
        (
            ToolResult("c1", "add", "3"),
            ToolResult("c2", "weather", '{"city":"Paris","temp_c":21.5}'),
        )
    )
    assert [t.name for t in second.tools] == ["add", "weather"]


def test_parallel_sync_tools_really_run_concurrently(call: Call) -> None:
    barrier = threading.Barrier(2, timeout=5)

    @tool
    def wait(tag: str) -> str:
        barrier.wait()  # deadlocks (then times out) unless both calls run at once
        return tag

    @command(tools=[wait])
    def go() -> str:
        return "go"

    model = script(
        [tool_call("wait", {"tag": "a"}, id="1"), tool_call("wait", {"tag": "b"}, id="2")], "done"
    )
    with override_model(model):
        assert call(go) == "done"
    assert [r.content for r in tool_results(model.requests[1])] == ["a", "b"]


def test_parallelism_is_bounded_by_parallel_tools_max(
    call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALLOY_PARALLEL_TOOLS_MAX", "2")
    lock = threading.Lock()
    running = 0
    peak = 0

    @tool
    def slow(n: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.02)
        with lock:
            running -= 1
        return n

    @command(tools=[slow])
    def go() -> str:
        return "go"

    calls = [tool_call("slow", {"n": i}, id=str(i)) for i in range(6)]
    with override_model(script(calls, "ok")):
        assert call(go) == "ok"
    assert peak == 2


def test_async_tools_run_under_both_drivers(call: Call) -> None:
    @command(tools=[weather])
    def go() -> str:
        return "go"

    model = script(tool_call("weather", {"city": "Oslo"}), "sunny")
    with override_model(model):
        assert call(go) == "sunny"
    assert tool_results(model.requests[1])[0].content == '{"city":"Oslo","temp_c":21.5}'


def test_invalid_arguments_are_reported_to_the_model(call: Call) -> None:
    @command(tools=[add])
    def go() -> str:
        return "go"

    model = script(tool_call("add", {"a": "three"}), "sorry")
    with override_model(model):
        assert call(go) == "sorry"
    result = tool_results(model.requests[1])[0]
    assert result.is_error
    assert result.content.startswith("Error: invalid arguments: a: Input should be a valid integer")


def test_unknown_tool_is_reported_to_the_model(call: Call) -> None:
    @command(tools=[add])
    def go() -> str:
        return "go"

    model = script(tool_call("nope", {}), "ok")
    with override_model(model):
        call(go)
    assert (
        tool_results(model.requests[1])[0].content
        == "Error: no tool named 'nope'; available tools: add"
    )


def test_tool_exceptions_are_fed_back(call: Call) -> None:
    @tool
    def explode() -> str:
        raise ValueError("boom")

    @command(tools=[explode])
    def go() -> str:
        return "go"

    model = script(tool_call("explode"), "recovered")
    with override_model(model):
        assert call(go) == "recovered"
    result = tool_results(model.requests[1])[0]
    assert result == ToolResult("call_explode", "explode", "Error: ValueError: boom", is_error=True)


def test_tool_errors_can_raise_instead(call: Call) -> None:
    @tool
    def explode() -> str:
        raise ValueError("boom")

    @command(tools=[explode], tool_errors="raise")
    def go() -> str:
        return "go"

    with override_model(script(tool_call("explode"))), pytest.raises(ToolError) as info:
        call(go)
    assert info.value.tool == "explode"
    assert isinstance(info.value.__cause__, ValueError)


@tool
@require(lambda ba: ba.arguments["n"] > 0, "n must be positive")
@ensure(lambda result: result < 100, "result must stay below 100")
def square_inner(n: int) -> int:
    """Square a number (contracts applied below @tool)."""
    return n * n


@require(lambda ba: ba.arguments["n"] > 0, "n must be positive")
@ensure(lambda result: result < 100, "result must stay below 100")
@tool
def square_outer(n: int) -> int:
    """Square a number (contracts applied above @tool)."""
    return n * n


@pytest.mark.parametrize("square", [square_inner, square_outer], ids=["inner", "outer"])
def test_contracts_in_either_order(call: Call, square: Any) -> None:
    @command(tools=[square])
    def go() -> str:
        return "go"

    calls = [
        tool_call(square.name, {"n": -1}, id="a"),
        tool_call(square.name, {"n": 20}, id="b"),
        tool_call(square.name, {"n": 3}, id="c"),
    ]
    model = script(calls, "done")
    with override_model(model):
        call(go)
    contents = [r.content for r in tool_results(model.requests[1])]
    assert contents == [
        "Error: precondition failed: n must be positive",
        "Error: postcondition failed: result must stay below 100",
        "9",
    ]


def test_tool_turn_limit(call: Call, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOY_MAX_TOOL_TURNS", "2")

    @command(tools=[add])
    def go() -> str:
        return "go"

    model = FunctionModel(lambda request: tool_call("add", {"a": 1}))
    with (
        override_model(model),
        pytest.raises(ToolLoopLimitExceeded, match=r"after 2 tool turns \(max_tool_turns=2\)"),
    ):
        call(go)
    assert len(model.requests) == 3


def test_command_as_a_tool_of_another_command(call: Call) -> None:
    @command(output=int)
    def count_words(text: str) -> str:
        """Count the words in a text."""
        return f"Count words: {text}"

    @command(tools=[count_words])
    def report(text: str) -> str:
        return f"Report on {text}"

    assert report.tools[0].definition.description == "Count the words in a text."
    assert report.tools[0].definition.parameters["required"] == ["text"]

    def reply(request: Request) -> Any:
        if request.output is not None:  # the inner command
            return json_reply(2, wrap=True)
        if not tool_results(request):
            return tool_call("count_words", {"text": "two words"})
        return "It has " + tool_results(request)[0].content + " words"

    with override_model(FunctionModel(reply)):
        assert call(report, "x") == "It has 2 words"


def test_auto_finalize_asks_once_without_tools(call: Call) -> None:
    @command(output=int, tools=[add])
    def go() -> str:
        return "go"

    model = script(tool_call("add", {"a": 2, "b": 2}), "", json_reply(4, wrap=True))
    with override_model(model):
        assert call(go) == 4
    finalize = model.requests[2]
    assert finalize.tools == ()
    assert finalize.output is not None
    assert "final answer" in finalize.messages[-1].parts[0].text  # type: ignore[union-attr]


def test_auto_finalize_still_missing_raises(call: Call) -> None:
    @command(output=int, tools=[add])
    def go() -> str:
        return "go"

    with (
        override_model(script(tool_call("add", {"a": 1}), "", "")),
        pytest.raises(EmptyOutputError),
    ):
        call(go)


def test_auto_finalize_can_be_turned_off(call: Call, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOY_AUTO_FINALIZE_MISSING_OUTPUT", "false")

    @command(output=int, tools=[add])
    def go() -> str:
        return "go"

    model = script(tool_call("add", {"a": 1}), "")
    with override_model(model), pytest.raises(EmptyOutputError):
        call(go)
    assert len(model.requests) == 2


def test_auto_finalize_applies_to_text_commands(call: Call) -> None:
    @command(tools=[add])
    def go() -> str:
        return "go"

    with override_model(script(tool_call("add", {"a": 1}), "", "final words")):
        assert call(go) == "final words"


# -- tools run with the caller's settings ----------------------------------------------------


def _nested_setup() -> tuple[Any, FunctionModel]:
    """A command whose tool calls another command: the inner one must see the caller's settings."""

    @command
    def inner(word: str) -> str:
        return f"echo {word}"

    @tool
    def relay(word: str) -> str:
        return inner(word)

    @command(tools=[relay])
    def outer() -> str:
        return "go"

    def reply(request: Request) -> Any:
        if not request.tools:  # the inner command
            return f"inner says {request.messages[0].parts[0].text}"  # type: ignore[union-attr]
        if not tool_results(request):
            return [tool_call("relay", {"word": w}, id=w) for w in ("a", "b")]
        return " / ".join(r.content for r in tool_results(request))

    return outer, FunctionModel(reply)


def test_parallel_tools_keep_override_model_and_use_config(call: Call) -> None:
    outer, model = _nested_setup()
    with override_model(model), use_config(temperature=0.3):
        assert call(outer) == "inner says echo a / inner says echo b"
    inner_requests = [r for r in model.requests if not r.tools]
    assert [r.settings.temperature for r in inner_requests] == [0.3, 0.3]


def test_async_tool_of_a_sync_call_inside_a_running_loop_keeps_the_settings() -> None:
    @command
    def inner() -> str:
        return "inner"

    @tool
    async def relay() -> str:
        return await inner.acall()

    @command(tools=[relay])
    def outer() -> str:
        return "go"

    def reply(request: Request) -> Any:
        if not request.tools:
            return f"t={request.settings.temperature}"
        return tool_results(request)[0].content if tool_results(request) else tool_call("relay")

    async def main() -> str:
        with override_model(FunctionModel(reply)), use_config(temperature=0.7):
            return outer()  # a sync call while this thread runs an event loop

    assert asyncio.run(main()) == "t=0.7"


# -- caller mistakes inside tools ---------------------------------------------------------------


def _misconfigured_tool(kind: str) -> Any:
    if kind == "sync":

        def misconfigured(n: int) -> str:
            raise ConfigurationError(f"bad setting {n}")

        return tool(misconfigured)

    async def misconfigured_async(n: int) -> str:
        raise ConfigurationError(f"bad setting {n}")

    return tool(name="misconfigured")(misconfigured_async)


def _calls(count: int) -> list[Any]:
    return [tool_call("misconfigured", {"n": n}, id=str(n)) for n in range(1, count + 1)]


@pytest.mark.parametrize("count", [1, 3], ids=["single", "parallel"])
@pytest.mark.parametrize("kind", ["sync", "async"], ids=["sync-tool", "async-tool"])
def test_a_configuration_error_in_a_tool_ends_the_call(call: Call, kind: str, count: int) -> None:
    @command(tools=[_misconfigured_tool(kind)])
    def go() -> str:
        return "go"

    model = script(_calls(count), "never asked")
    with override_model(model), pytest.raises(ConfigurationError, match="bad setting"):
        call(go)
    assert len(model.requests) == 1  # not reported to the model, not retried


@pytest.mark.parametrize("count", [1, 3], ids=["single", "parallel"])
def test_a_configuration_error_in_a_tool_ends_a_streamed_call(stream: Call, count: int) -> None:
    @command(tools=[_misconfigured_tool("sync")])
    def go() -> str:
        return "go"

    model = script(_calls(count), "never asked")
    with override_model(model), pytest.raises(ConfigurationError, match="bad setting"):
        stream(go)
    assert len(model.requests) == 1


@pytest.mark.parametrize("mode", ["auto", "native", "tool", "prompt"])
def test_a_tool_named_like_the_output_type_is_refused_at_decoration(mode: str) -> None:
    @tool(name="Weather")
    def current_weather(city: str) -> str:
        return "sunny"

    with pytest.raises(
        ConfigurationError,
        match=r"Tool 'Weather' \(function .*current_weather\) has the name of the output type Weather",
    ):

        @command(output=Weather, tools=[current_weather], output_mode=mode)
        def forecast() -> str:
            return "forecast"


# -- strict arguments ---------------------------------------------------------------------------


class Unit(enum.Enum):
    CELSIUS = "C"
    FAHRENHEIT = "F"


#: What ``log_reading`` received, one tuple per run.
received_readings: list[tuple[Any, ...]] = []


@tool
def log_reading(
    sensor: int,
    value: float,
    ok: bool,
    day: datetime.date,
    at: datetime.datetime,
    reading_id: uuid.UUID,
    exact: decimal.Decimal,
    unit: Unit,
) -> str:
    """Record a sensor reading."""
    received_readings.append((sensor, value, ok, day, at, reading_id, exact, unit))
    return "recorded"


GOOD_READING: dict[str, Any] = {
    "sensor": 7,
    "value": 21,  # an integer is a fine number
    "ok": True,
    "day": "2026-01-02",
    "at": "2026-01-02T03:04:05Z",
    "reading_id": "12345678-1234-5678-1234-567812345678",
    "exact": "1.25",
    "unit": "C",
}


def _run_reading(call: Call, args: Any) -> ToolResult:
    """One call of ``log_reading`` with these arguments (a dict, or the raw JSON text)."""
    if isinstance(args, str):
        request = parse_tool_call("r", "log_reading", args)
    else:
        request = ToolCall("r", "log_reading", args)

    @command(tools=[log_reading])
    def go() -> str:
        return "go"

    model = script(Response((request,), finish_reason="tool_calls"), "done")
    with override_model(model):
        assert call(go) == "done"
    return tool_results(model.requests[1])[0]


def test_json_strings_still_become_dates_uuids_decimals_and_enums(call: Call) -> None:
    received_readings.clear()
    assert _run_reading(call, GOOD_READING) == ToolResult("r", "log_reading", "recorded")
    assert received_readings == [
        (
            7,
            21.0,
            True,
            datetime.date(2026, 1, 2),
            datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
            uuid.UUID("12345678-1234-5678-1234-567812345678"),
            decimal.Decimal("1.25"),
            Unit.CELSIUS,
        )
    ]
    assert type(received_readings[0][1]) is float


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("sensor", True, "sensor: Input should be a valid integer"),
        ("sensor", "3", "sensor: Input should be a valid integer"),
        ("sensor", 3.0, "sensor: Input should be a valid integer"),
        ("ok", "yes", "ok: Input should be a valid boolean"),
        ("ok", 1, "ok: Input should be a valid boolean"),
        ("value", "NaN", "value: Input should be a valid number"),
        ("value", "2.5", "value: Input should be a valid number"),
        ("day", 1767312000, "day: Input should be a valid date"),
        ("unit", "celsius", "unit: Input should be 'C' or 'F'"),
    ],
)
def test_loose_arguments_are_reported_not_coerced(
    call: Call, field: str, value: Any, message: str
) -> None:
    received_readings.clear()
    result = _run_reading(call, {**GOOD_READING, field: value})
    assert result.is_error
    assert result.content == f"Error: invalid arguments: {message}"
    assert received_readings == []  # the tool never ran


def _json_with(replacement: str) -> str:
    return json.dumps({**GOOD_READING, "value": "HOLE"}).replace('"HOLE"', replacement)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_in_the_json_are_an_input_error(call: Call, constant: str) -> None:
    result = _run_reading(call, _json_with(constant))
    assert result.is_error
    assert result.content.startswith("Error: arguments are not a valid JSON object")
    assert "NaN and Infinity" in result.content


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_among_parsed_arguments_are_an_input_error(
    call: Call, value: float
) -> None:
    result = _run_reading(call, {**GOOD_READING, "value": value})
    assert result.is_error
    assert "NaN and Infinity" in result.content


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deeply_nested_arguments_are_an_input_error(call: Call, depth: int) -> None:
    result = _run_reading(call, _json_with("[" * depth + "]" * depth))
    assert result.is_error
    assert result.content.startswith(
        "Error: arguments are not a valid JSON object (nested too deeply)"
    )


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ('{"sensor": 1', "Expecting ',' delimiter at position 12"),
        ("[1, 2]", "a JSON object is needed, not an array"),
        ('"text"', "a JSON object is needed, not a string"),
    ],
)
def test_arguments_that_are_not_a_json_object_are_an_input_error(
    call: Call, raw: str, why: str
) -> None:
    result = _run_reading(call, raw)
    assert result.content == f"Error: arguments are not a valid JSON object ({why}): {raw!r}"


# -- tool results the model reads are always valid text -----------------------------------------


@pytest.mark.parametrize(
    ("returned", "content"),
    [
        ("abc\udc80", "abc\ufffd"),
        ({"name": "report\udcff.txt", "size": 3}, '{"name":"report\ufffd.txt","size":3}'),
        (["\ud800", "ok"], '["\ufffd","ok"]'),
    ],
)
def test_lone_surrogates_in_a_tool_result_become_replacement_characters(
    call: Call, returned: Any, content: str
) -> None:
    @tool
    def read_name() -> Any:
        return returned

    @command(tools=[read_name])
    def go() -> str:
        return "go"

    model = script(tool_call("read_name"), "done")
    with override_model(model):
        assert call(go) == "done"
    assert tool_results(model.requests[1])[0] == ToolResult("call_read_name", "read_name", content)


def test_lone_surrogates_in_a_tool_error_become_replacement_characters(call: Call) -> None:
    @tool
    def open_file() -> str:
        raise FileNotFoundError("no such file: 'r\udce9sum\udce9.txt'")

    @command(tools=[open_file])
    def go() -> str:
        return "go"

    model = script(tool_call("open_file"), "done")
    with override_model(model):
        call(go)
    result = tool_results(model.requests[1])[0]
    assert result.content == "Error: FileNotFoundError: no such file: 'r\ufffdsum\ufffd.txt'"
