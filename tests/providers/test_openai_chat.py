"""The Chat Completions adapter (``openai-chat:``), through the real openai SDK and the emulator."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Optional, Union

import pytest
from pydantic import BaseModel

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
from alloy.providers import get_model, split_model
from alloy.providers import openai_chat as chat
from alloy.providers._openai_common import PLACEHOLDER_KEY, openai_strict_schema
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

MODEL = "openai-chat:gpt-4o"


class final_result(BaseModel):  # the output tool name in the recorded exchange
    city: str
    country: str


OUTPUTS: list[tuple[Any, Any, Any]] = [
    (float, {"value": 3.5}, 3.5),
    (bool, {"value": False}, False),
    (Point, {"x": 1.5, "y": -2.0}, Point(1.5, -2.0)),
    (Address, {"street": "1 Rue", "city": "Paris"}, Address(street="1 Rue", city="Paris")),
    (list[str], {"value": ["a", "b"]}, ["a", "b"]),
    (Optional[int], {"value": 4}, 4),
    (Union[int, str], {"value": 7}, 7),
    (
        Person,
        {
            "name": "Ada",
            "address": {"street": "2 Lane", "city": "London"},
            "tags": [],
            "nickname": "A",
        },
        Person(name="Ada", address=Address(street="2 Lane", city="London"), tags=[], nickname="A"),
    ),
]


def typed(output: Any, model: str = MODEL, **options: Any) -> Any:
    return make_typed(output, model, **options)


def text_command(model: str = MODEL, **options: Any) -> Any:
    return make_text_command(model, **options)


# -- typed outputs ------------------------------------------------------------------------------


def test_prefix_selects_the_chat_adapter() -> None:
    assert split_model("openai-chat:llama3.2") == ("openai-chat", "llama3.2")


@pytest.mark.parametrize(("output", "wire", "expected"), OUTPUTS, ids=lambda v: repr(v)[:30])
def test_structured_outputs(emu: Any, call: Any, output: Any, wire: Any, expected: Any) -> None:
    emu.push("openai", ReplyJson(wire))
    ask = typed(output)
    assert call(ask, "question") == expected
    request = emu.last_request("openai")
    assert request.path == "/v1/chat/completions"
    assert request.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": ask.output_type.name,
            "schema": openai_strict_schema(ask.schema),
            "strict": True,
        },
    }


def test_tool_output_mode(emu: Any, call: Any) -> None:
    emu.push(
        "openai", ReplyToolCalls(ReplyToolCall("Address", {"street": "1 Rue", "city": "Paris"}))
    )
    assert call(typed(Address, output_mode="tool"), "x") == Address(street="1 Rue", city="Paris")
    body = emu.last_request("openai").body
    assert "response_format" not in body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "Address"}}
    assert body["tools"][0]["function"]["strict"] is True


def test_reask_after_invalid_output(emu: Any, call: Any) -> None:
    emu.push("openai", ReplyText('{"value": "nope"}'), ReplyJson({"value": 1.5}))
    assert call(typed(float), "x") == 1.5
    messages = emu.last_request("openai").body["messages"]
    assert messages[1] == {"role": "assistant", "content": '{"value": "nope"}'}
    assert messages[2]["content"].startswith(REASK_PROMPT.split("{")[0])


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
    function = first.body["tools"][0]["function"]
    assert function["name"] == "get_weather" and function["strict"] is True
    messages = second.body["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_one",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            }
        ],
    }
    assert messages[2]["role"] == "tool" and messages[2]["tool_call_id"] == "call_one"
    assert json.loads(messages[2]["content"]) == {"city": "Paris", "temp_c": 21.5}


def test_tool_round_trip_parallel_calls(emu: Any, call: Any) -> None:
    emu.push(
        "openai",
        ReplyToolCalls(
            ReplyToolCall("get_weather", {"city": "Paris"}, id="call_a"),
            ReplyToolCall("get_weather", {"city": "Oslo"}, id="call_b"),
        ),
        ReplyJson({"value": 2.0}),
    )
    assert call(typed(float, tools=[get_weather]), "Two?") == 2.0
    assert sorted(WEATHER_CALLS) == ["Oslo", "Paris"]
    messages = emu.last_request("openai").body["messages"]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["call_a", "call_b"]
    assert [(m["role"], m["tool_call_id"]) for m in messages[2:4]] == [
        ("tool", "call_a"),
        ("tool", "call_b"),
    ]


def test_auto_finalize_after_tools(emu: Any, call: Any) -> None:
    emu.push(
        "openai",
        ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Rome"})),
        ReplyEmpty(),
        ReplyJson({"value": 30.0}),
    )
    assert call(typed(float, tools=[get_weather]), "Rome?") == 30.0
    requests = emu.requests_for("openai")
    assert len(requests) == 3
    final = requests[2].body
    assert "tools" not in final and "tool_choice" not in final
    assert final["messages"][-1] == {"role": "user", "content": FINALIZE_SCHEMA_PROMPT}


# -- streaming ----------------------------------------------------------------------------------


def test_stream_text(emu: Any) -> None:
    emu.push("openai", ReplyText("Streaming through chat completions works."))
    chunks = list(text_command().stream("hi"))
    assert "".join(chunks) == "Streaming through chat completions works."
    assert len(chunks) > 1
    body = emu.last_request("openai").body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_astream_text(emu: Any) -> None:
    emu.push("openai", ReplyText("Streaming through chat completions works."))
    chunks = [c async for c in text_command().astream("hi")]
    assert "".join(chunks) == "Streaming through chat completions works."


def test_stream_with_tools(emu: Any) -> None:
    emu.push(
        "openai",
        ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Paris"}, id="call_s")),
        ReplyText("Warm in Paris."),
    )
    assert "".join(text_command(tools=[get_weather]).stream("Weather?")) == "Warm in Paris."
    assert WEATHER_CALLS == ["Paris"]
    second = emu.last_request("openai").body
    assert second["messages"][1]["tool_calls"][0]["id"] == "call_s"


async def test_astream_with_tools(emu: Any) -> None:
    emu.push(
        "openai", ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Oslo"})), ReplyText("Cold.")
    )
    chunks = [c async for c in text_command(tools=[get_weather]).astream("Weather?")]
    assert "".join(chunks) == "Cold."
    assert WEATHER_CALLS == ["Oslo"]


def test_model_stream_usage_and_tool_deltas(emu: Any) -> None:
    emu.push("openai", ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Paris"}, id="call_x")))
    request = Request(
        MODEL,
        (UserTurn((Text("Weather?"),)),),
        tools=(ToolDefinition("get_weather", "Weather", GET_WEATHER_PARAMETERS),),
    )
    events = list(get_model(MODEL).stream(request))
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert json.loads("".join(d.args_delta for d in deltas)) == {"city": "Paris"}
    done = events[-1]
    assert isinstance(done, Done)
    assert done.response.tool_calls == (ToolCall("call_x", "get_weather", {"city": "Paris"}),)
    assert done.response.finish_reason == "tool_calls"
    assert done.response.usage.input_tokens > 0 and done.response.usage.requests == 1


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
    assert [r.retry_count for r in requests] == [0, 0]


def test_retry_after_is_honoured(emu: Any, sleeps: list[float]) -> None:
    emu.push("openai", RateLimited(retry_after_ms=1500), ReplyJson({"value": 2.0}))
    assert typed(float, retries=1)("x") == 2.0
    assert sleeps == [1.5]


def test_rate_limit_error_carries_retry_after(emu: Any, call: Any) -> None:
    emu.push("openai", RateLimited(retry_after_ms=None, retry_after=7))
    with pytest.raises(RateLimitError) as info:
        call(typed(float, retries=0), "x")
    assert info.value.retry_after == 7.0


@pytest.mark.parametrize("emu", [{"OPENAI_API_KEY": TEST_KEY}], indirect=True, ids=["key"])
@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (HttpError(400, "Invalid value for 'messages'."), BadRequestError),
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


def test_timeout(emu: Any, call: Any) -> None:
    emu.push("openai", Slow(2.0, ReplyJson({"value": 1.0})))
    with pytest.raises(ProviderTimeoutError):
        call(typed(float, retries=0, timeout=0.2), "x")


def test_dropped_connection(emu: Any, call: Any) -> None:
    emu.push("openai", Disconnect())
    with pytest.raises(ProviderConnectionError):
        call(typed(float, retries=0), "x")


def test_dropped_connection_is_retried(emu: Any, sleeps: list[float]) -> None:
    emu.push("openai", Disconnect(), ReplyJson({"value": 6.0}))
    assert typed(float, retries=1)("x") == 6.0
    assert len(sleeps) == 1


def test_cut_stream(emu: Any) -> None:
    emu.push("openai", CutStream(after=3, reply=ReplyText("an answer that will be cut short")))
    with pytest.raises(ProviderConnectionError):
        list(text_command(retries=0).stream("x"))


async def test_cut_stream_async(emu: Any) -> None:
    emu.push("openai", CutStream(after=3, reply=ReplyText("an answer that will be cut short")))
    with pytest.raises(ProviderConnectionError):
        _ = [c async for c in text_command(retries=0).astream("x")]


def test_error_inside_stream(emu: Any) -> None:
    emu.push("openai", StreamError(after=2, reply=ReplyText("text that fails part-way")))
    with pytest.raises(ServerError):
        list(text_command(retries=0).stream("x"))


def test_error_inside_stream_is_retried(emu: Any, sleeps: list[float]) -> None:
    emu.push(
        "openai", StreamError(after=2, reply=ReplyText("broken")), ReplyText("second time lucky")
    )
    assert "".join(text_command(retries=1).stream("x")).endswith("second time lucky")


def test_refusal(emu: Any, call: Any) -> None:
    emu.push("openai", ReplyRefusal("I won't do that."))
    with pytest.raises(RefusalError, match="won't"):
        call(typed(float), "x")


def test_max_tokens_truncation(emu: Any, call: Any) -> None:
    emu.push("openai", ReplyMaxTokens('{"value": 1'))
    with pytest.raises(TruncatedOutputError):
        call(typed(float), "x")


def test_content_filter(emu: Any, call: Any) -> None:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [
            {
                "index": 0,
                "finish_reason": "content_filter",
                "message": {"role": "assistant", "content": None},
            }
        ],
    }
    emu.push("openai", ReplyRaw.json(body))
    with pytest.raises(ContentFilteredError):
        call(typed(float), "x")


def test_missing_key_for_openai_is_a_configuration_error(
    emu: Any, call: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        call(typed(float), "x")


def test_compatible_server_needs_no_key(
    emu: Any, call: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    emu.push("openai", ReplyJson({"value": 9.0}))
    ask = typed(float, "openai-chat:llama3.2", base_url=emu.openai_base_url)
    assert call(ask, "x") == 9.0
    request = emu.last_request("openai")
    assert request.header("authorization") == f"Bearer {PLACEHOLDER_KEY}"
    assert request.body["model"] == "llama3.2"


def test_model_from_alloy_model_env(emu: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOY_MODEL", "openai-chat:qwen3")
    alloy.reset_configuration()
    emu.push("openai", ReplyText("hi"))

    @command
    def greet(name: str) -> str:
        return f"Greet {name}"

    assert greet("Bo") == "hi"
    assert emu.last_request("openai").body["model"] == "qwen3"


# -- settings reach the wire ------------------------------------------------------------------------


def _sent(emu: Any, model: str = MODEL, **options: Any) -> dict[str, Any]:
    emu.push("openai", ReplyText("ok"))
    text_command(model, **options)("hello")
    body: dict[str, Any] = emu.last_request("openai").body
    return body


def test_temperature_on_the_wire(emu: Any) -> None:
    assert _sent(emu, temperature=0.7)["temperature"] == 0.7


def test_max_tokens_on_the_wire(emu: Any) -> None:
    assert _sent(emu, max_tokens=64)["max_tokens"] == 64


def test_system_on_the_wire(emu: Any) -> None:
    assert _sent(emu, system="Be brief.")["messages"][0] == {
        "role": "system",
        "content": "Be brief.",
    }


def test_timeout_on_the_wire(emu: Any) -> None:
    emu.push("openai", ReplyText("ok"))
    text_command(timeout=9.5)("hello")
    assert emu.last_request("openai").header("x-stainless-read-timeout") == "9.5"


def test_extra_json_on_the_wire(emu: Any) -> None:
    body = _sent(emu, extra_json={"top_p": 0.5, "repetition_penalty": 1.1})
    assert body["top_p"] == 0.5 and body["repetition_penalty"] == 1.1


def test_reasoning_model_settings(emu: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="alloy")
    body = _sent(emu, "openai-chat:o4-mini", temperature=0.5, max_tokens=99)
    assert "temperature" not in body and "max_tokens" not in body
    assert body["max_completion_tokens"] == 99
    assert any(
        r.levelno == logging.WARNING and "temperature" in r.getMessage() for r in caplog.records
    )


# -- recorded exchanges -------------------------------------------------------------------------------


def get_user_country() -> str:
    """The user's country."""
    return "Mexico"


def test_replay_structured_output_with_tool(emu: Any, call: Any) -> None:
    data = recording("openai_chat/structured_output_json_schema_with_tool.json")
    emu.replay(data, "openai")

    @command(output=CityLocation, model=MODEL, tools=[get_user_country])
    def largest() -> str:
        return "What is the largest city in the user country?"

    assert call(largest) == CityLocation(city="Mexico City", country="Mexico")
    messages = emu.last_request("openai").body["messages"]
    recorded = data["interactions"][0]["response"]["body"]["choices"][0]["message"]
    assert messages[1]["tool_calls"][0]["id"] == recorded["tool_calls"][0]["id"]
    assert messages[2]["content"] == "Mexico"


def test_replay_forced_output_tool(emu: Any, call: Any) -> None:
    data = recording("openai_chat/tool_call_round_trip.json")
    emu.replay(data, "openai")

    @command(output=final_result, model=MODEL, tools=[get_user_country], output_mode="tool")
    def largest() -> str:
        return "What is the largest city in the user country?"

    assert call(largest) == final_result(city="Mexico City", country="Mexico")
    first = emu.requests_for("openai")[0].body
    assert first["tool_choice"] == "required"
    assert [t["function"]["name"] for t in first["tools"]] == ["get_user_country", "final_result"]


@pytest.mark.parametrize(
    "name", ["structured_output_json_schema_with_tool.json", "tool_call_round_trip.json"]
)
def test_parse_recorded_bodies(name: str) -> None:
    data = recording(f"openai_chat/{name}")
    first, second = (chat.parse(i["response"]["body"]) for i in data["interactions"])
    assert [c.name for c in first.tool_calls] == ["get_user_country"]
    assert first.finish_reason == "tool_calls" and first.usage.input_tokens > 0
    expected = {"city": "Mexico City", "country": "Mexico"}
    if second.tool_calls:
        assert second.tool_calls[0].name == "final_result"
        assert dict(second.tool_calls[0].args) == expected
    else:
        assert json.loads(second.text) == expected and second.finish_reason == "stop"


# -- pure translation ---------------------------------------------------------------------------------


def test_stream_parser_refusal_and_usage() -> None:
    parser = chat.StreamParser()
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "refusal": "No"}}]},
        {"choices": [{"index": 0, "delta": {"refusal": " way."}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}},
    ]
    for chunk in chunks:
        parser.feed(chunk)
    response = parser.response()
    assert response.finish_reason == "refusal" and response.refusal == "No way."
    assert response.usage.input_tokens == 3 and response.usage.output_tokens == 2


def test_stream_parser_without_finish_is_a_cut() -> None:
    parser = chat.StreamParser()
    assert parser.feed({"choices": [{"index": 0, "delta": {"content": "Hi"}}]}) == [TextDelta("Hi")]
    with pytest.raises(ProviderConnectionError):
        parser.response()


def test_media_rendering() -> None:
    request = Request(
        MODEL,
        (
            UserTurn(
                (
                    Text("Look"),
                    Media("image", "image/jpeg", url="https://example.com/x.jpg"),
                    Media("pdf", "application/pdf", data="JVBER"),
                )
            ),
            ModelTurn((Text("{}"),)),
            UserTurn((RetryPrompt("- bad"),)),
        ),
    )
    messages = chat.build(request, "gpt-4o")["messages"]
    content = messages[0]["content"]
    assert content[1] == {"type": "image_url", "image_url": {"url": "https://example.com/x.jpg"}}
    assert content[2] == {
        "type": "file",
        "file": {"filename": "document.pdf", "file_data": "data:application/pdf;base64,JVBER"},
    }
    assert messages[2]["content"] == REASK_PROMPT.format(errors="- bad")


def test_pdf_by_url_is_refused() -> None:
    request = Request(MODEL, (UserTurn((Media("pdf", "application/pdf", url="https://x/a.pdf"),)),))
    with pytest.raises(ConfigurationError, match="PDF by URL"):
        chat.build(request, "gpt-4o")


# -- what is sent matches what the SDK sends ------------------------------------------------------------

WEATHER_TOOL = ToolDefinition("get_weather", "Get current weather", GET_WEATHER_PARAMETERS)
CALL_ID = "call_jrILMA3RPNVJsgxFUtrVZn7o"


def _user(text: str) -> UserTurn:
    return UserTurn((Text(text),))


CAPTURED_CASES: dict[str, tuple[Request, bool]] = {
    "chat.text": (Request(MODEL, (_user("Say hello"),)), False),
    "chat.structured_raw": (
        Request(MODEL, (_user("Weather?"),), output=OutputSpec("weather", WEATHER_SCHEMA)),
        False,
    ),
    "chat.tool": (Request(MODEL, (_user("Weather in Paris?"),), tools=(WEATHER_TOOL,)), False),
    "chat.tool_final": (
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
    "chat.stream": (Request(MODEL, (_user("Say hello"),)), True),
}


@pytest.mark.parametrize("case", sorted(CAPTURED_CASES))
def test_body_matches_sdk_capture(case: str) -> None:
    request, stream = CAPTURED_CASES[case]
    body = chat.build(request, "gpt-4o", stream=stream)
    expected = captured(case)
    assert structure(body) == structure(expected)
    assert body == expected


def test_settings_render() -> None:
    request = Request(
        MODEL,
        (_user("hi"),),
        system="be brief",
        settings=ModelSettings(temperature=0, max_tokens=50, extra={"seed": 1}),
    )
    body = chat.build(request, "gpt-4o")
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    assert body["temperature"] == 0 and body["max_tokens"] == 50 and body["seed"] == 1


def test_sync_and_async_share_one_model(emu: Any) -> None:
    emu.push("openai", ReplyText("a"), ReplyText("b"))
    talk = text_command()
    assert talk("x") == "a"
    assert asyncio.run(talk.acall("y")) == "b"
    assert len(emu.requests_for("openai", api="openai.chat")) == 2


def test_an_empty_model_turn_is_left_out_as_the_other_adapters_do() -> None:
    """alloy's record of an empty answer (the turn before a finalize prompt), or a turn whose
    only parts were another provider's (reasoning, thinking), has nothing Chat Completions
    takes: an assistant message needs content or tool calls, so it is not sent."""
    request = Request(
        "gpt-4o-mini",
        (
            UserTurn(Text("Weather?")),
            ModelTurn(Text("")),
            UserTurn(Text("Answer now.")),
            ModelTurn(Opaque("anthropic", {"type": "thinking", "signature": "s"})),
            UserTurn(Text("Well?")),
        ),
    )
    assert chat.build_messages(request) == [
        {"role": "user", "content": "Weather?"},
        {"role": "user", "content": "Answer now."},
        {"role": "user", "content": "Well?"},
    ]
