"""The OpenAI Responses adapter, through the real openai SDK against the local emulator."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Optional, Union

import pytest

import alloy
from alloy import command
from alloy._types import (
    FINALIZE_SCHEMA_PROMPT,
    REASK_PROMPT,
    Done,
    Media,
    ModelSettings,
    ModelTurn,
    Opaque,
    OutputSpec,
    Request,
    RetryPrompt,
    Text,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    ToolResult,
    UserTurn,
)
from alloy.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ContentFilteredError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
    RefusalError,
    SchemaRejectedError,
    ServerError,
    TruncatedOutputError,
)
from alloy.providers import get_model
from alloy.providers import openai_responses as responses
from alloy.providers._openai_common import openai_strict_schema
from alloy.testing.emulator import (
    CutStream,
    Disconnect,
    HttpError,
    RateLimited,
    ReplyEmpty,
    ReplyJson,
    ReplyMaxTokens,
    ReplyRaw,
    ReplyRefusal,
    ReplyText,
    ReplyToolCall,
    ReplyToolCalls,
    SchemaRejected,
    Slow,
    StreamError,
    Unauthorized,
)

from .openai_fixtures import (
    GET_WEATHER_PARAMETERS,
    TEST_KEY,
    WEATHER_CALLS,
    WEATHER_SCHEMA,
    Address,
    CityLocation,
    Person,
    Point,
    captured,
    forget_weather_calls_fixture,  # noqa: F401  (fixture)
    get_weather,
    make_text_command,
    make_typed,
    recording,
    structure,
)

MODEL = "openai:gpt-4o"


OUTPUTS: list[tuple[Any, Any, Any]] = [
    (float, {"value": 3.5}, 3.5),
    (bool, {"value": True}, True),
    (Point, {"x": 1.5, "y": -2.0}, Point(1.5, -2.0)),
    (Address, {"street": "1 Rue", "city": "Paris"}, Address(street="1 Rue", city="Paris")),
    (list[int], {"value": [1, 2, 3]}, [1, 2, 3]),
    (Optional[int], {"value": None}, None),
    (Union[int, str], {"value": "seven"}, "seven"),
    (
        Person,
        {
            "name": "Ada",
            "address": {"street": "2 Lane", "city": "London"},
            "tags": ["math"],
            "nickname": None,
        },
        Person(
            name="Ada",
            address=Address(street="2 Lane", city="London"),
            tags=["math"],
            nickname=None,
        ),
    ),
]


def typed(output: Any, model: str = MODEL, **options: Any) -> Any:
    return make_typed(output, model, **options)


def text_command(model: str = MODEL, **options: Any) -> Any:
    return make_text_command(model, **options)


# -- typed outputs, sync and async ----------------------------------------------------------------


@pytest.mark.parametrize(("output", "wire", "expected"), OUTPUTS, ids=lambda v: repr(v)[:30])
def test_structured_outputs(emu: Any, call: Any, output: Any, wire: Any, expected: Any) -> None:
    emu.push("openai", ReplyJson(wire))
    ask = typed(output)
    assert call(ask, "question") == expected
    request = emu.last_request("openai")
    assert request.path == "/v1/responses"
    fmt = request.body["text"]["format"]
    assert fmt == {
        "type": "json_schema",
        "name": ask.output_type.name,
        "schema": openai_strict_schema(ask.schema),
        "strict": True,
    }


def test_tool_output_mode_forces_the_output_tool(emu: Any, call: Any) -> None:
    emu.push(
        "openai", ReplyToolCalls(ReplyToolCall("Address", {"street": "1 Rue", "city": "Paris"}))
    )
    ask = typed(Address, output_mode="tool")
    assert call(ask, "where?") == Address(street="1 Rue", city="Paris")
    body = emu.last_request("openai").body
    assert "text" not in body
    assert body["tool_choice"] == {"type": "function", "name": "Address"}
    assert body["tools"][0]["strict"] is True


def test_prompt_output_mode_sends_no_schema(emu: Any, call: Any) -> None:
    emu.push("openai", ReplyText('{"value": 4.25}'))
    assert call(typed(float, output_mode="prompt"), "x") == 4.25
    body = emu.last_request("openai").body
    assert "text" not in body and "tools" not in body
    assert "JSON Schema" in body["instructions"]


def test_reask_after_invalid_output(emu: Any, call: Any) -> None:
    emu.push("openai", ReplyText('{"value": "not a number"}'), ReplyJson({"value": 2.5}))
    assert call(typed(float), "x") == 2.5
    items = emu.last_request("openai").body["input"]
    assert items[1] == {"role": "assistant", "content": '{"value": "not a number"}'}
    assert items[2]["role"] == "user"
    assert items[2]["content"].startswith(REASK_PROMPT.split("{")[0])


# -- tools --------------------------------------------------------------------------------------


def test_tool_round_trip_single_call(emu: Any, call: Any) -> None:
    emu.push(
        "openai",
        ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Paris"}, id="call_one")),
        ReplyJson({"value": 21.5}),
    )
    assert call(typed(float, tools=[get_weather]), "Weather in Paris?") == 21.5
    assert WEATHER_CALLS == ["Paris"]
    first, second = emu.requests_for("openai")
    tool = first.body["tools"][0]
    assert tool["type"] == "function" and tool["name"] == "get_weather"
    assert tool["strict"] is True and tool["description"] == "Current weather for a city."
    assert "previous_response_id" not in second.body and "store" not in second.body
    items = second.body["input"]
    assert items[0] == {"role": "user", "content": "Weather in Paris?"}
    assert items[1] == {
        "type": "function_call",
        "call_id": "call_one",
        "name": "get_weather",
        "arguments": '{"city":"Paris"}',
    }
    assert items[2]["type"] == "function_call_output" and items[2]["call_id"] == "call_one"
    assert json.loads(items[2]["output"]) == {"city": "Paris", "temp_c": 21.5}


def test_tool_round_trip_parallel_calls(emu: Any, call: Any) -> None:
    emu.push(
        "openai",
        ReplyToolCalls(
            ReplyToolCall("get_weather", {"city": "Paris"}, id="call_a"),
            ReplyToolCall("get_weather", {"city": "Oslo"}, id="call_b"),
        ),
        ReplyJson({"value": 1.0}),
    )
    assert call(typed(float, tools=[get_weather]), "Two cities") == 1.0
    assert sorted(WEATHER_CALLS) == ["Oslo", "Paris"]
    items = emu.last_request("openai").body["input"]
    kinds = [(i.get("type"), i.get("call_id")) for i in items[1:]]
    assert kinds == [
        ("function_call", "call_a"),
        ("function_call", "call_b"),
        ("function_call_output", "call_a"),
        ("function_call_output", "call_b"),
    ]


def test_auto_finalize_after_tools(emu: Any, call: Any) -> None:
    emu.push(
        "openai",
        ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Rome"}, id="call_r")),
        ReplyEmpty(),
        ReplyJson({"value": 30.0}),
    )
    assert call(typed(float, tools=[get_weather]), "Rome?") == 30.0
    requests = emu.requests_for("openai")
    assert len(requests) == 3
    final = requests[2].body
    assert "tools" not in final and "tool_choice" not in final
    assert final["text"]["format"]["type"] == "json_schema"
    assert final["input"][-1] == {"role": "user", "content": FINALIZE_SCHEMA_PROMPT}


def test_non_strict_tool_says_strict_false(emu: Any, call: Any) -> None:
    def search(query: str, limit: int = 3) -> str:
        """Search."""
        return f"{limit} results for {query}"

    emu.push("openai", ReplyToolCalls(ReplyToolCall("search", {"query": "x"})), ReplyText("done"))
    assert call(text_command(tools=[search]), "go") == "done"
    tool = emu.requests_for("openai")[0].body["tools"][0]
    assert tool["strict"] is False
    assert tool["parameters"]["required"] == ["query"]


# -- streaming ----------------------------------------------------------------------------------


def test_stream_text(emu: Any) -> None:
    emu.push("openai", ReplyText("Hello there, this is a streamed answer."))
    chunks = list(text_command().stream("hi"))
    assert "".join(chunks) == "Hello there, this is a streamed answer."
    assert len(chunks) > 1
    assert emu.last_request("openai").body["stream"] is True


async def test_astream_text(emu: Any) -> None:
    emu.push("openai", ReplyText("Hello there, this is a streamed answer."))
    chunks = [chunk async for chunk in text_command().astream("hi")]
    assert "".join(chunks) == "Hello there, this is a streamed answer."
    assert len(chunks) > 1


def test_stream_with_tools(emu: Any) -> None:
    emu.push(
        "openai",
        ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Paris"}, id="call_s")),
        ReplyText("It is 21.5 degrees in Paris."),
    )
    text = "".join(text_command(tools=[get_weather]).stream("Weather?"))
    assert text == "It is 21.5 degrees in Paris."
    assert WEATHER_CALLS == ["Paris"]
    first, second = emu.requests_for("openai")
    assert first.body["stream"] is True and second.body["stream"] is True
    assert second.body["input"][1]["call_id"] == "call_s"


async def test_astream_with_tools(emu: Any) -> None:
    emu.push(
        "openai",
        ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Oslo"})),
        ReplyText("Cold in Oslo."),
    )
    chunks = [c async for c in text_command(tools=[get_weather]).astream("Weather?")]
    assert "".join(chunks) == "Cold in Oslo."
    assert WEATHER_CALLS == ["Oslo"]


def test_model_stream_events(emu: Any) -> None:
    emu.push("openai", ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Paris"}, id="call_x")))
    model = get_model(MODEL)
    request = Request(
        MODEL,
        (UserTurn((Text("Weather?"),)),),
        tools=(ToolDefinition("get_weather", "Weather", GET_WEATHER_PARAMETERS),),
    )
    events = list(model.stream(request))
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[0].id == "call_x" and deltas[0].name == "get_weather"
    assert json.loads("".join(d.args_delta for d in deltas)) == {"city": "Paris"}
    assert isinstance(events[-1], Done)
    done = events[-1].response
    assert done.tool_calls == (ToolCall("call_x", "get_weather", {"city": "Paris"}),)
    assert done.finish_reason == "tool_calls" and done.usage.requests == 1
    assert sum(isinstance(e, Done) for e in events) == 1


# -- faults -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [
        RateLimited(retry_after_ms=1),
        HttpError(500, retry_after_ms=1),
        HttpError(503, retry_after_ms=1),
        HttpError(529, retry_after_ms=1),
    ],
    ids=["429", "500", "503", "529"],
)
def test_transient_errors_are_retried(emu: Any, call: Any, fault: Any) -> None:
    emu.push("openai", fault, ReplyJson({"value": 1.25}))
    assert call(typed(float, retries=2), "x") == 1.25
    requests = emu.requests_for("openai")
    assert len(requests) == 2
    # The SDK never retries on its own: each attempt is alloy's, sent as a first try.
    assert [r.retry_count for r in requests] == [0, 0]


def test_retry_after_is_honoured(emu: Any, sleeps: list[float]) -> None:
    emu.push("openai", RateLimited(retry_after_ms=None, retry_after=3), ReplyJson({"value": 2.0}))
    assert typed(float, retries=1)("x") == 2.0
    assert sleeps == [3.0]


def test_retry_after_ms_reaches_the_error(emu: Any, call: Any) -> None:
    emu.push("openai", RateLimited(retry_after_ms=250))
    with pytest.raises(RateLimitError) as info:
        call(typed(float, retries=0), "x")
    assert info.value.retry_after == pytest.approx(0.25)
    assert info.value.status_code == 429 and info.value.provider == "openai"


def test_retries_exhausted_raise(emu: Any, call: Any) -> None:
    emu.push("openai", *[HttpError(500, retry_after_ms=1)] * 3)
    with pytest.raises(ServerError):
        call(typed(float, retries=2), "x")
    assert len(emu.requests_for("openai")) == 3


@pytest.mark.parametrize("emu", [{"OPENAI_API_KEY": TEST_KEY}], indirect=True, ids=["key"])
@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (HttpError(400, "Invalid value for 'input'."), BadRequestError),
        (Unauthorized(), AuthenticationError),
        (SchemaRejected(), SchemaRejectedError),
    ],
    ids=["400", "401", "schema"],
)
def test_client_errors_are_not_retried(emu: Any, call: Any, fault: Any, error: type) -> None:
    emu.push("openai", fault, ReplyJson({"value": 1.0}))
    with pytest.raises(error) as info:
        call(typed(float, retries=3), "x")
    assert len(emu.requests_for("openai")) == 1
    assert TEST_KEY not in str(info.value)
    if error is not SchemaRejectedError:
        assert not isinstance(info.value, SchemaRejectedError)


def test_timeout(emu: Any, call: Any) -> None:
    emu.push("openai", Slow(2.0, ReplyJson({"value": 1.0})))
    with pytest.raises(ProviderTimeoutError):
        call(typed(float, retries=0, timeout=0.2), "x")


def test_timeout_is_retried(emu: Any, sleeps: list[float]) -> None:
    emu.push("openai", Slow(3.0), ReplyJson({"value": 5.0}))
    # Without a deadline of its own, the call's budget leaves room for the backoff before a retry;
    # the timeout leaves the retry room to answer on a busy machine.
    assert typed(float, retries=1, timeout=1.0)("x") == 5.0
    assert len(sleeps) == 1


def test_dropped_connection(emu: Any, call: Any) -> None:
    emu.push("openai", Disconnect())
    with pytest.raises(ProviderConnectionError):
        call(typed(float, retries=0), "x")


def test_dropped_connection_is_retried(emu: Any, sleeps: list[float]) -> None:
    emu.push("openai", Disconnect(), ReplyJson({"value": 6.0}))
    assert typed(float, retries=1)("x") == 6.0
    assert len(emu.requests_for("openai")) == 2


def test_cut_body(emu: Any, call: Any) -> None:
    emu.push("openai", CutStream(reply=ReplyJson({"value": 1.0})))
    with pytest.raises(ProviderConnectionError):
        call(typed(float, retries=0), "x")


def test_cut_stream(emu: Any) -> None:
    emu.push("openai", CutStream(after=4, reply=ReplyText("a long answer that gets cut off")))
    with pytest.raises(ProviderConnectionError):
        list(text_command(retries=0).stream("x"))


async def test_cut_stream_async(emu: Any) -> None:
    emu.push("openai", CutStream(after=4, reply=ReplyText("a long answer that gets cut off")))
    with pytest.raises(ProviderConnectionError):
        _ = [c async for c in text_command(retries=0).astream("x")]


def test_error_event_in_stream(emu: Any) -> None:
    emu.push("openai", StreamError(after=3, reply=ReplyText("some text that fails midway")))
    with pytest.raises(ServerError, match="server_error"):
        list(text_command(retries=0).stream("x"))


def test_refusal(emu: Any, call: Any) -> None:
    emu.push("openai", ReplyRefusal("I can't help with that."))
    with pytest.raises(RefusalError, match="can't help"):
        call(typed(float), "x")


def test_max_tokens_truncation(emu: Any, call: Any) -> None:
    emu.push("openai", ReplyMaxTokens('{"value": 1'))
    with pytest.raises(TruncatedOutputError):
        call(typed(float), "x")


def test_missing_key_is_a_configuration_error(
    emu: Any, call: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        call(typed(float), "x")
    assert emu.requests == []


def test_options_beat_env(emu: Any, call: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    emu.push("openai", ReplyJson({"value": 8.0}))
    ask = typed(float, api_key="sk-option-key-0000", base_url=emu.openai_base_url)
    assert call(ask, "x") == 8.0
    assert emu.last_request("openai").header("authorization") == "Bearer sk-option-key-0000"


def test_client_is_built_once(emu: Any) -> None:
    emu.push("openai", ReplyJson({"value": 1.0}), ReplyJson({"value": 2.0}))
    ask = typed(float)
    ask("a")
    model = get_model(MODEL)
    client = model.client()  # type: ignore[attr-defined]
    ask("b")
    assert get_model(MODEL) is model and model.client() is client  # type: ignore[attr-defined]


# -- settings reach the wire ------------------------------------------------------------------------


def _sent(emu: Any, **options: Any) -> dict[str, Any]:
    emu.push("openai", ReplyText("ok"))
    text_command(**options)("hello")
    body: dict[str, Any] = emu.last_request("openai").body
    return body


def test_temperature_on_the_wire(emu: Any) -> None:
    assert _sent(emu, temperature=0.3)["temperature"] == 0.3


def test_max_tokens_on_the_wire(emu: Any) -> None:
    assert _sent(emu, max_tokens=77)["max_output_tokens"] == 77


def test_system_on_the_wire(emu: Any) -> None:
    assert _sent(emu, system="Be brief.")["instructions"] == "Be brief."


def test_timeout_on_the_wire(emu: Any) -> None:
    emu.push("openai", ReplyText("ok"))
    text_command(timeout=12.5)("hello")
    assert emu.last_request("openai").header("x-stainless-read-timeout") == "12.5"


def test_extra_json_on_the_wire(emu: Any) -> None:
    body = _sent(emu, extra_json={"service_tier": "flex", "custom_flag": {"a": 1}})
    assert body["service_tier"] == "flex" and body["custom_flag"] == {"a": 1}


def test_extra_json_from_env_merges_nested(emu: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOY_EXTRA_JSON", '{"text": {"verbosity": "low"}}')
    alloy.reset_configuration()
    emu.push("openai", ReplyJson({"value": 1.0}))
    typed(float)("x")
    text = emu.last_request("openai").body["text"]
    assert text["verbosity"] == "low" and text["format"]["type"] == "json_schema"


def test_reasoning_model_omits_temperature_with_a_warning(
    emu: Any, caplog: pytest.LogCaptureFixture
) -> None:
    emu.push("openai", ReplyText("ok"))
    caplog.set_level(logging.DEBUG, logger="alloy")

    @command(model="openai:gpt-5-mini", temperature=0.2, max_tokens=50)
    def think(q: str) -> str:
        return q

    assert think("x") == "ok"
    body = emu.last_request("openai").body
    assert "temperature" not in body and body["max_output_tokens"] == 50
    assert body["include"] == ["reasoning.encrypted_content"]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any("temperature" in r.getMessage() for r in warnings)


# -- reasoning items are echoed back, in order ----------------------------------------------------

REASONING_ITEM = {
    "id": "rs_0123",
    "type": "reasoning",
    "summary": [],
    "encrypted_content": "gAAAAABencrypted",
}


def _reasoning_response() -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1758034836,
        "status": "completed",
        "model": "gpt-5-mini",
        "output": [
            REASONING_ITEM,
            {
                "id": "fc_1",
                "type": "function_call",
                "status": "completed",
                "arguments": '{"city":"Paris"}',
                "call_id": "call_r1",
                "name": "get_weather",
            },
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 4, "cache_write_tokens": 0},
            "output_tokens": 50,
            "output_tokens_details": {"reasoning_tokens": 40},
            "total_tokens": 60,
        },
    }


def test_reasoning_items_echoed_without_previous_response_id(emu: Any, run_result: Any) -> None:
    emu.push("openai", ReplyRaw.json(_reasoning_response()), ReplyJson({"value": 3.0}))
    result = run_result(typed(float, "openai:gpt-5-mini", tools=[get_weather]), "Weather?")
    assert result.value == 3.0
    assert result.usage.reasoning_tokens == 40 and result.usage.cached_tokens == 4
    second = emu.last_request("openai").body
    assert "previous_response_id" not in second
    items = second["input"]
    assert items[1] == REASONING_ITEM
    assert items[2]["type"] == "function_call" and items[2]["id"] == "fc_1"
    assert items[3] == {
        "type": "function_call_output",
        "call_id": "call_r1",
        "output": '{"city":"Paris","temp_c":21.5}',
    }


# -- recorded exchanges -------------------------------------------------------------------------------


def test_replay_structured_output_with_function_call(emu: Any, call: Any) -> None:
    data = recording("openai_responses/structured_output_with_function_call.json")
    emu.replay(data, "openai")

    def get_user_country() -> str:
        """The user's country."""
        return "Mexico"

    @command(output=CityLocation, model=MODEL, tools=[get_user_country])
    def largest() -> str:
        return "What is the largest city in the user country?"

    assert call(largest) == CityLocation(city="Mexico City", country="Mexico")
    second = emu.last_request("openai").body["input"]
    recorded_call = data["interactions"][0]["response"]["body"]["output"][0]
    assert second[1]["call_id"] == recorded_call["call_id"]
    assert second[2] == {
        "type": "function_call_output",
        "call_id": recorded_call["call_id"],
        "output": "Mexico",
    }


def test_parse_recorded_structured_output() -> None:
    data = recording("openai_responses/structured_output_with_function_call.json")
    first, second = (i["response"]["body"] for i in data["interactions"])
    turn = responses.parse(first)
    assert [c.name for c in turn.tool_calls] == ["get_user_country"]
    assert turn.finish_reason == "tool_calls"
    final = responses.parse(second)
    assert CityLocation.model_validate_json(final.text) == CityLocation(
        city="Mexico City", country="Mexico"
    )
    assert final.finish_reason == "stop" and final.usage.input_tokens > 0


def _recorded_stream_text(data: dict[str, Any]) -> str:
    events = data["interactions"][0]["response"]["sse_events"]
    return "".join(e["data"]["delta"] for e in events if e["event"] == "response.output_text.delta")


def test_replay_stream_text(emu: Any) -> None:
    data = recording("openai_responses/stream_text_with_logprobs.json")
    emu.replay(data, "openai")
    chunks = list(text_command().stream("What is the capital of Minas Gerais?"))
    assert "".join(chunks) == _recorded_stream_text(data)
    assert "Belo Horizonte" in "".join(chunks)


async def test_replay_stream_text_async(emu: Any) -> None:
    data = recording("openai_responses/stream_text_with_logprobs.json")
    emu.replay(data, "openai")
    chunks = [c async for c in text_command().astream("What is the capital of Minas Gerais?")]
    assert "".join(chunks) == _recorded_stream_text(data)


def _reasoning_stream_request() -> Request:
    output = OutputSpec(
        "final_result",
        {
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
            "additionalProperties": False,
        },
        mode="tool",
    )
    return Request(
        "openai:gpt-5", (UserTurn((Text("Calculate 100 * 200 / 3"),)),), output=output, stream=True
    )


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_replay_stream_reasoning_and_function_call(emu: Any, driver: str) -> None:
    data = recording("openai_responses/stream_reasoning_and_function_call.json")
    emu.replay(data, "openai")
    model = get_model("openai:gpt-5")
    request = _reasoning_stream_request()

    async def collect() -> list[Any]:
        return [event async for event in model.astream(request)]

    events = list(model.stream(request)) if driver == "sync" else asyncio.run(collect())
    done = events[-1]
    assert isinstance(done, Done)
    response = done.response
    assert response.tool_calls == (
        ToolCall("call_CWXgs68YprAjp6t0371hiPOI", "final_result", {"result": 6666}),
    )
    assert response.usage.reasoning_tokens == 448
    sent = emu.last_request("openai").body
    assert sent["tool_choice"] == {"type": "function", "name": "final_result"}
    assert sent["include"] == ["reasoning.encrypted_content"]
    # The next turn echoes the reasoning item and the call, in the order they came.
    follow_up = responses.build(
        Request(
            "openai:gpt-5",
            (
                *request.messages,
                ModelTurn(response.parts),
                UserTurn((ToolResult("call_CWXgs68YprAjp6t0371hiPOI", "final_result", "ok"),)),
            ),
        ),
        "gpt-5",
    )
    kinds = [item.get("type", item.get("role")) for item in follow_up["input"]]
    assert kinds == ["user", "reasoning", "function_call", "function_call_output"]
    assert follow_up["input"][1]["encrypted_content"].startswith("gAAAA")


def test_parse_recorded_reasoning_stream() -> None:
    data = recording("openai_responses/stream_reasoning_and_function_call.json")
    parser = responses.StreamParser()
    deltas: list[Any] = []
    for event in data["interactions"][0]["response"]["sse_events"]:
        deltas.extend(parser.feed(event["data"]))
    response = parser.response()
    assert (
        isinstance(response.parts[0], Opaque) and response.parts[0].payload["type"] == "reasoning"
    )
    assert [c.args for c in response.tool_calls] == [{"result": 6666}]
    assert (
        "".join(d.args_delta for d in deltas if isinstance(d, ToolCallDelta)) == '{"result":6666}'
    )


def test_parse_recorded_text_stream() -> None:
    data = recording("openai_responses/stream_text_with_logprobs.json")
    parser = responses.StreamParser()
    deltas: list[Any] = []
    for event in data["interactions"][0]["response"]["sse_events"]:
        deltas.extend(parser.feed(event["data"]))
    response = parser.response()
    text = "".join(d.text for d in deltas if isinstance(d, TextDelta))
    assert text == response.text == _recorded_stream_text(data)
    assert response.finish_reason == "stop"


# -- pure translation ---------------------------------------------------------------------------------


def test_finish_reasons_from_incomplete_details() -> None:
    base = {"output": [], "status": "incomplete"}
    length = responses.parse({**base, "incomplete_details": {"reason": "max_output_tokens"}})
    assert length.finish_reason == "length"
    filtered = responses.parse({**base, "incomplete_details": {"reason": "content_filter"}})
    assert filtered.finish_reason == "content_filter"


def test_content_filter_becomes_its_error(emu: Any, call: Any) -> None:
    body = {
        **_reasoning_response(),
        "status": "incomplete",
        "incomplete_details": {"reason": "content_filter"},
        "output": [],
    }
    emu.push("openai", ReplyRaw.json(body))
    with pytest.raises(ContentFilteredError):
        call(typed(float), "x")


def test_refusal_part_parsed() -> None:
    raw = {
        "status": "completed",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "refusal", "refusal": "No."}],
            }
        ],
    }
    parsed = responses.parse(raw)
    assert parsed.finish_reason == "refusal" and parsed.refusal == "No."


def test_media_and_reask_rendering() -> None:
    request = Request(
        MODEL,
        (
            UserTurn(
                (
                    Text("Describe"),
                    Media("image", "image/png", data="iVBOR"),
                    Media("pdf", "application/pdf", url="https://example.com/a.pdf"),
                )
            ),
            ModelTurn((Text("{}"),)),
            UserTurn((RetryPrompt("- value: missing"),)),
        ),
    )
    items = responses.build(request, "gpt-4o")["input"]
    content = items[0]["content"]
    assert content[1] == {
        "type": "input_image",
        "image_url": "data:image/png;base64,iVBOR",
        "detail": "auto",
    }
    assert content[2] == {"type": "input_file", "file_url": "https://example.com/a.pdf"}
    assert items[2]["content"] == REASK_PROMPT.format(errors="- value: missing")


def test_unknown_models_get_full_capabilities() -> None:
    caps = get_model("openai:some-future-model").capabilities
    assert caps.native_schema and caps.tools and caps.strict_tools
    old = get_model("openai:gpt-3.5-turbo").capabilities
    assert not old.native_schema and old.tools
    assert old.default_output_mode() == "tool"


# -- what is sent matches what the SDK sends ------------------------------------------------------------

WEATHER_TOOL = ToolDefinition("get_weather", "Get current weather", GET_WEATHER_PARAMETERS)
CALL_ID = "call_XB5fKdNv5VMSqdnqy23O1mPk"


def _user(text: str) -> UserTurn:
    return UserTurn((Text(text),))


CAPTURED_CASES: dict[str, tuple[Request, bool]] = {
    "responses.text": (Request(MODEL, (_user("Say hello"),)), False),
    "responses.structured_raw": (
        Request(MODEL, (_user("Weather in Paris?"),), output=OutputSpec("weather", WEATHER_SCHEMA)),
        False,
    ),
    "responses.tool": (Request(MODEL, (_user("Weather in Paris?"),), tools=(WEATHER_TOOL,)), False),
    "responses.tool_final": (
        Request(
            MODEL,
            (
                _user("Weather in Paris?"),
                ModelTurn((ToolCall(CALL_ID, "get_weather", {"city": "Paris", "unit": "c"}),)),
                UserTurn((ToolResult(CALL_ID, "get_weather", '{"temp_c": 21.5}'),)),
            ),
            tools=(WEATHER_TOOL,),
        ),
        False,
    ),
    "responses.stream": (Request(MODEL, (_user("Say hello"),)), True),
    "responses.stream_tool": (Request(MODEL, (_user("Weather?"),), tools=(WEATHER_TOOL,)), True),
}


@pytest.mark.parametrize("case", sorted(CAPTURED_CASES))
def test_body_matches_sdk_capture(case: str) -> None:
    request, stream = CAPTURED_CASES[case]
    body = responses.build(request, "gpt-4o", stream=stream)
    expected = captured(case)
    assert structure(body) == structure(expected)
    assert body == expected


def test_settings_render_like_the_sdk_capture() -> None:
    request = Request(
        MODEL,
        (UserTurn((Text("hi"), Text("there"))),),
        system="be brief",
        settings=ModelSettings(temperature=0, max_tokens=50),
    )
    body = responses.build(request, "m")
    expected = {
        "model": "m",
        "input": [{"role": "user", "content": "..."}],
        "instructions": "be brief",
        "max_output_tokens": 50,
        "temperature": 0,
    }
    assert set(body) == set(expected)
    assert body["instructions"] == "be brief" and body["max_output_tokens"] == 50


def test_stream_retries_transient_errors(emu: Any, sleeps: list[float]) -> None:
    emu.push("openai", RateLimited(retry_after_ms=20), ReplyText("after the wait"))
    assert "".join(text_command(retries=1).stream("x")) == "after the wait"
    assert sleeps == [0.02]


def _status_exception(cls: type, status: int, body: dict[str, Any], **headers: str) -> Any:
    import httpx2

    request = httpx2.Request("POST", "https://api.openai.com/v1/responses")
    response = httpx2.Response(status, headers=headers, request=request)
    return cls(f"Error code: {status}", response=response, body=body)


def test_map_quota_exhaustion_is_not_retried() -> None:
    import openai

    model = get_model(MODEL)
    exc = _status_exception(
        openai.RateLimitError,
        429,
        {"message": "You exceeded your current quota.", "code": "insufficient_quota"},
    )
    mapped = model.map_error(exc)  # type: ignore[attr-defined]
    assert isinstance(mapped, RateLimitError) and mapped.transient is False
    throttled = _status_exception(
        openai.RateLimitError, 429, {"message": "slow down"}, **{"retry-after": "2"}
    )
    again = model.map_error(throttled)  # type: ignore[attr-defined]
    assert again.transient is True and again.retry_after == 2.0


def test_map_schema_code_and_redaction() -> None:
    import openai

    model = responses.create("gpt-4o", api_key="sk-secret-key-abcdefgh")
    exc = _status_exception(
        openai.BadRequestError,
        400,
        {"message": "Bad thing for sk-secret-key-abcdefgh", "code": "invalid_json_schema"},
    )
    mapped = model.map_error(exc)
    assert isinstance(mapped, SchemaRejectedError)
    assert "sk-secret-key-abcdefgh" not in str(mapped)
    other = model.map_error(openai.OpenAIError("something client-side"))
    assert isinstance(other, BadRequestError)
    assert model.map_error(ValueError("not ours")) is None


@pytest.mark.parametrize("body", [b"<html>bad gateway</html>", b"[1, 2]"])
def test_a_200_reply_that_is_not_a_json_object_is_unreadable(
    emu: Any, call: Any, body: bytes
) -> None:
    from alloy.errors import UnreadableResponseError

    @command(output=int, model="openai:gpt-4o-mini", retries=0)
    def number() -> str:
        return "a number"

    emu.push("openai", ReplyRaw(200, body))
    with pytest.raises(UnreadableResponseError, match="could not read") as caught:
        call(number)
    assert caught.value.transient and caught.value.status_code == 200
    assert caught.value.__cause__ is None and caught.value.__context__ is None
