"""The real ``anthropic`` SDK (Messages) against the emulator, sync and async."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import httpx2
import pytest
from anthropic.types import Message, RawMessageStreamEvent
from pydantic import BaseModel, TypeAdapter

from alloy.testing.emulator import (
    DEFAULT_TEXT,
    CutStream,
    Disconnect,
    Emulator,
    HttpError,
    Overloaded,
    RateLimited,
    ReplyEmpty,
    ReplyJson,
    ReplyMaxTokens,
    ReplyRefusal,
    ReplyText,
    ReplyToolCall,
    ReplyToolCalls,
    SchemaRejected,
    Slow,
    StreamError,
    Unauthorized,
)

MODEL = "claude-haiku-4-5"
USER = [{"role": "user", "content": "Weather in Paris?"}]
TOOL = {
    "name": "get_weather",
    "description": "Get current weather",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
    "strict": True,
}


class Weather(BaseModel):
    city: str
    temperature_c: float
    humidity: int | None = None


async def run(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def collect(stream: Any) -> list[Any]:
    if hasattr(stream, "__aiter__"):
        return [item async for item in stream]
    return list(stream)


@pytest.fixture(params=["sync", "async"])
def client(request: pytest.FixtureRequest, alloy_emulator: Emulator) -> Iterator[Any]:
    cls = anthropic.Anthropic if request.param == "sync" else anthropic.AsyncAnthropic
    yield cls(base_url=alloy_emulator.anthropic_base_url, api_key="sk-ant-test", max_retries=0)


async def test_text(client: Any, alloy_emulator: Emulator) -> None:
    message = await run(
        client.messages.create(model=MODEL, max_tokens=64, messages=USER, system="be brief")
    )
    assert message.content[0].text == DEFAULT_TEXT
    assert message.stop_reason == "end_turn" and message.usage.output_tokens > 0
    request = alloy_emulator.last_request("anthropic")
    assert request.path == "/v1/messages"
    assert request.header("authorization") == "Bearer sk-ant-test"
    assert request.header("anthropic-version")
    assert request.body["system"] == "be brief"


async def test_structured_output(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push(
        "anthropic", ReplyJson({"city": "Paris", "temperature_c": 21.5, "humidity": 40})
    )
    parsed = await run(
        client.messages.parse(model=MODEL, max_tokens=64, messages=USER, output_format=Weather)
    )
    assert parsed.parsed_output == Weather(city="Paris", temperature_c=21.5, humidity=40)
    generated = await run(
        client.messages.parse(model=MODEL, max_tokens=64, messages=USER, output_format=Weather)
    )
    assert isinstance(generated.parsed_output, Weather)
    request = alloy_emulator.last_request("anthropic")
    assert request.body["output_config"]["format"]["type"] == "json_schema"
    assert request.header("x-stainless-helper") == "messages.parse"


async def test_tool_round_trip_with_parallel_calls(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push(
        "anthropic",
        ReplyToolCalls(
            ReplyToolCall("get_weather", {"city": "Paris", "unit": "c"}, id="toolu_01A"),
            ReplyToolCall("get_weather", {"city": "Rome", "unit": "c"}, id="toolu_01B"),
            text="Let me check both.",
        ),
        ReplyText("Paris 21C, Rome 25C."),
    )
    first = await run(
        client.messages.create(model=MODEL, max_tokens=64, messages=USER, tools=[TOOL])
    )
    assert first.stop_reason == "tool_use"
    assert [b.type for b in first.content] == ["text", "tool_use", "tool_use"]
    uses = [b for b in first.content if b.type == "tool_use"]
    assert [(u.id, u.input["city"]) for u in uses] == [
        ("toolu_01A", "Paris"),
        ("toolu_01B", "Rome"),
    ]
    history = [
        *USER,
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": u.id, "content": "21"} for u in uses
            ],
        },
    ]
    final = await run(
        client.messages.create(model=MODEL, max_tokens=64, messages=history, tools=[TOOL])
    )
    assert final.content[0].text == "Paris 21C, Rome 25C."
    seen = alloy_emulator.last_request("anthropic").call
    assert seen is not None
    assert [(r.call_id, r.name) for r in seen.tool_results] == [
        ("toolu_01A", "get_weather"),
        ("toolu_01B", "get_weather"),
    ]


async def test_forced_tool_default(client: Any) -> None:
    message = await run(
        client.messages.create(
            model=MODEL,
            max_tokens=64,
            messages=USER,
            tools=[TOOL],
            tool_choice={"type": "tool", "name": "get_weather"},
        )
    )
    assert message.content[0].type == "tool_use"
    assert message.content[0].input["unit"] in ("c", "f")


async def test_stream_text(client: Any, alloy_emulator: Emulator) -> None:
    events = await collect(
        await run(client.messages.create(model=MODEL, max_tokens=64, messages=USER, stream=True))
    )
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    text = "".join(e.delta.text for e in events if e.type == "content_block_delta")
    assert text == DEFAULT_TEXT
    assert events[-2].usage.output_tokens > 0


async def test_stream_tool_calls(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push(
        "anthropic",
        ReplyToolCalls(
            ("get_weather", {"city": "Paris", "unit": "c"}),
            ("get_weather", {"city": "Rome", "unit": "f"}),
        ),
    )
    if isinstance(client, anthropic.AsyncAnthropic):
        async with client.messages.stream(
            model=MODEL, max_tokens=64, messages=USER, tools=[TOOL]
        ) as stream:
            final = await stream.get_final_message()
    else:
        with client.messages.stream(
            model=MODEL, max_tokens=64, messages=USER, tools=[TOOL]
        ) as stream:
            final = stream.get_final_message()
    assert final.stop_reason == "tool_use"
    assert [b.input for b in final.content] == [
        {"city": "Paris", "unit": "c"},
        {"city": "Rome", "unit": "f"},
    ]


async def test_refusal_max_tokens_empty(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push("anthropic", ReplyRefusal(), ReplyMaxTokens("Hello, wo"), ReplyEmpty())
    refused = await run(client.messages.create(model=MODEL, max_tokens=64, messages=USER))
    assert refused.stop_reason == "refusal"
    truncated = await run(client.messages.create(model=MODEL, max_tokens=64, messages=USER))
    assert truncated.stop_reason == "max_tokens" and truncated.content[0].text == "Hello, wo"
    empty = await run(client.messages.create(model=MODEL, max_tokens=64, messages=USER))
    assert empty.content == [] and empty.stop_reason == "end_turn"


def test_wire_format_is_strictly_valid(alloy_emulator: Emulator) -> None:
    url = f"{alloy_emulator.anthropic_base_url}/v1/messages?beta=true"
    headers = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}  # older clients' auth
    alloy_emulator.push(
        "anthropic", ReplyToolCalls(("get_weather", None), text="Checking."), ReplyText("hi")
    )
    body = {"model": MODEL, "max_tokens": 64, "messages": USER, "tools": [TOOL]}
    Message.model_validate(httpx.post(url, json=body, headers=headers).json(), strict=True)
    raw = httpx.post(url, json={**body, "stream": True}, headers=headers).text
    frames = [f for f in raw.split("\n\n") if f]
    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    assert any(f.startswith("event: ping\n") for f in frames)
    for frame in frames:
        event_line, data_line = frame.split("\n")
        data = json.loads(data_line.removeprefix("data: "))
        assert event_line == f"event: {data['type']}"
        if data["type"] != "ping":
            adapter.validate_python(data, strict=True)


async def test_rate_limit_and_overload_retried(alloy_emulator: Emulator) -> None:
    client = anthropic.AsyncAnthropic(base_url=alloy_emulator.anthropic_base_url, api_key="k")
    alloy_emulator.push("anthropic", RateLimited(), Overloaded(retry_after_ms=10), ReplyText("ok"))
    message = await client.messages.create(model=MODEL, max_tokens=64, messages=USER)
    assert message.content[0].text == "ok"
    assert [r.retry_count for r in alloy_emulator.requests] == [0, 1, 2]


@pytest.mark.parametrize(
    ("fault", "error", "status"),
    [
        (Overloaded(), anthropic.OverloadedError, 529),
        (RateLimited(), anthropic.RateLimitError, 429),
        (HttpError(500), anthropic.InternalServerError, 500),
        (HttpError(503), anthropic.ServiceUnavailableError, 503),
        (Unauthorized(), anthropic.AuthenticationError, 401),
        (SchemaRejected(), anthropic.BadRequestError, 400),
    ],
)
async def test_http_faults_map_to_sdk_errors(
    client: Any, alloy_emulator: Emulator, fault: Any, error: type[Exception], status: int
) -> None:
    alloy_emulator.push("anthropic", fault)
    with pytest.raises(error) as caught:
        await run(client.messages.create(model=MODEL, max_tokens=64, messages=USER))
    assert caught.value.status_code == status  # type: ignore[attr-defined]
    assert caught.value.request_id.startswith("req_")  # type: ignore[attr-defined]


async def test_schema_rules(client: Any, alloy_emulator: Emulator) -> None:
    constrained = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1}},
        "required": ["n"],
        "additionalProperties": False,
    }
    with pytest.raises(anthropic.BadRequestError, match="'minimum' is not supported"):
        await run(
            client.messages.create(
                model=MODEL,
                max_tokens=64,
                messages=USER,
                output_config={"format": {"type": "json_schema", "schema": constrained}},
            )
        )
    open_object = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    strict_tool = {**TOOL, "input_schema": open_object}
    with pytest.raises(anthropic.BadRequestError, match="additionalProperties"):
        await run(
            client.messages.create(model=MODEL, max_tokens=64, messages=USER, tools=[strict_tool])
        )
    loose_tool = {**strict_tool, "strict": False}  # non-strict tools are not checked
    await run(client.messages.create(model=MODEL, max_tokens=64, messages=USER, tools=[loose_tool]))


async def test_transport_faults(client: Any, alloy_emulator: Emulator) -> None:
    short = client.with_options(timeout=0.2, max_retries=0)
    alloy_emulator.push(
        "anthropic", Slow(2.0), Disconnect(), CutStream(), CutStream(after=3), StreamError(after=3)
    )
    with pytest.raises(anthropic.APITimeoutError):
        await run(short.messages.create(model=MODEL, max_tokens=64, messages=USER))
    with pytest.raises(anthropic.APIConnectionError):
        await run(short.messages.create(model=MODEL, max_tokens=64, messages=USER))
    with pytest.raises(anthropic.APIConnectionError):
        await run(short.messages.create(model=MODEL, max_tokens=64, messages=USER))
    # anthropic 2.12 lets the transport error of a broken stream through unwrapped
    with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
        await collect(
            await run(short.messages.create(model=MODEL, max_tokens=64, messages=USER, stream=True))
        )
    with pytest.raises(anthropic.APIStatusError) as in_stream:
        await collect(
            await run(short.messages.create(model=MODEL, max_tokens=64, messages=USER, stream=True))
        )
    assert in_stream.value.status_code == 200  # an in-stream error arrives on a 200 response


def test_missing_key(alloy_emulator: Emulator) -> None:
    response = httpx.post(
        f"{alloy_emulator.anthropic_base_url}/v1/messages",
        json={"model": MODEL, "max_tokens": 5, "messages": USER},
    )
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"


def test_max_tokens_is_required(alloy_emulator: Emulator) -> None:
    response = httpx.post(
        f"{alloy_emulator.anthropic_base_url}/v1/messages",
        headers={"x-api-key": "k"},
        json={"model": MODEL, "messages": USER},
    )
    assert response.status_code == 400 and "max_tokens" in response.json()["error"]["message"]


USE = {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "21"}


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        (
            [*USER, {"role": "tool", "content": "21"}],
            "messages.1.role: Input should be 'user' or 'assistant'",
        ),
        (
            [{"role": "system", "content": "be brief"}, *USER],
            'messages: Unexpected role "system". The Messages API accepts a top-level `system` '
            'parameter, not "system" as an input message role.',
        ),
        (
            [*USER, {"role": "user", "content": [RESULT]}],
            "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
            "toolu_01A. Each `tool_result` block must have a corresponding `tool_use` block in "
            "the previous message.",
        ),
        (
            [*USER, {"role": "assistant", "content": [USE]}, {"role": "user", "content": "go"}],
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
            "after: toolu_01A. Each `tool_use` block must have a corresponding `tool_result` "
            "block in the next message.",
        ),
        (
            [{"role": "user", "content": ""}],
            "messages.0: all messages must have non-empty content except for the optional final "
            "assistant message",
        ),
        (
            [{"role": "user", "content": []}, {"role": "assistant", "content": "hi"}],
            "messages.0: all messages must have non-empty content except for the optional final "
            "assistant message",
        ),
        (
            [{"role": "user", "content": [{"type": "text", "text": ""}]}],
            "messages: text content blocks must be non-empty",
        ),
        (
            [{"role": "user", "content": "  \n"}],
            "messages: text content blocks must contain non-whitespace text",
        ),
        ([], "messages: at least one message is required"),
    ],
    ids=[
        "role-tool",
        "role-system",
        "result-without-use",
        "use-without-result",
        "empty-string",
        "empty-list",
        "empty-text-block",
        "blank-text",
        "no-messages",
    ],
)
async def test_what_the_api_refuses_in_messages(
    client: Any, alloy_emulator: Emulator, messages: list[Any], message: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as info:
        await run(client.messages.create(model=MODEL, max_tokens=64, messages=messages))
    error = info.value
    assert error.status_code == 400
    assert error.body["type"] == "error" and error.body["request_id"].startswith("req_")
    assert error.body["error"] == {"type": "invalid_request_error", "message": message}


async def test_what_the_api_takes_in_messages(client: Any) -> None:
    """A tool round answered in the next message, and an empty final assistant message
    (a prefill) are fine."""
    round_trip = [
        *USER,
        {"role": "assistant", "content": [{"type": "text", "text": "Looking."}, USE]},
        {"role": "user", "content": [RESULT, {"type": "text", "text": "and?"}]},
        {"role": "assistant", "content": ""},
    ]
    message = await run(
        client.messages.create(model=MODEL, max_tokens=64, messages=round_trip, tools=[TOOL])
    )
    assert message.content
