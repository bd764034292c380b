"""The real ``openai`` SDK (Responses and Chat Completions) against the emulator.

Every test runs with the sync and the async client; the client is configured only through
``base_url`` and a dummy key, and assertions cover both what the SDK parsed and what the
emulator recorded on the wire.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent
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
    ReplyMalformedJson,
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


class Weather(BaseModel):
    city: str
    temperature_c: float
    humidity: int | None


WEATHER_TOOL_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
    "required": ["city", "unit"],
    "additionalProperties": False,
}
RESPONSES_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Get current weather",
    "parameters": WEATHER_TOOL_SCHEMA,
    "strict": True,
}
CHAT_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get current weather",
        "parameters": WEATHER_TOOL_SCHEMA,
        "strict": True,
    },
}
USER = [{"role": "user", "content": "Weather in Paris?"}]


async def run(value: Any) -> Any:
    """Await the result of an async client call; pass a sync result through."""
    return await value if inspect.isawaitable(value) else value


async def collect(stream: Any) -> list[Any]:
    """All items of a sync or async stream."""
    if hasattr(stream, "__aiter__"):
        return [item async for item in stream]
    return list(stream)


@pytest.fixture(params=["sync", "async"])
def client(request: pytest.FixtureRequest, alloy_emulator: Emulator) -> Iterator[Any]:
    cls = openai.OpenAI if request.param == "sync" else openai.AsyncOpenAI
    yield cls(base_url=alloy_emulator.openai_base_url, api_key="sk-test", max_retries=0)


# -- Responses API ---------------------------------------------------------------------------


async def test_responses_text(client: Any, alloy_emulator: Emulator) -> None:
    response = await run(client.responses.create(model="gpt-4o", input="Say hello"))
    assert response.output_text == DEFAULT_TEXT
    assert response.usage.input_tokens_details.cache_write_tokens == 0
    request = alloy_emulator.last_request("openai")
    assert (request.method, request.path, request.api) == (
        "POST",
        "/v1/responses",
        "openai.responses",
    )
    assert request.body == {"model": "gpt-4o", "input": "Say hello"}
    assert request.header("authorization") == "Bearer sk-test"
    is_async = isinstance(client, openai.AsyncOpenAI)
    assert request.header("x-stainless-async") == ("async:asyncio" if is_async else "false")


async def test_responses_structured_output(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push(
        "openai", ReplyJson({"city": "Paris", "temperature_c": 21.5, "humidity": 40})
    )
    queued = await run(client.responses.parse(model="gpt-4o", input="w", text_format=Weather))
    assert queued.output_parsed == Weather(city="Paris", temperature_c=21.5, humidity=40)
    generated = await run(client.responses.parse(model="gpt-4o", input="w", text_format=Weather))
    assert isinstance(generated.output_parsed, Weather)  # a schema-valid default answer
    sent = alloy_emulator.last_request("openai").body["text"]["format"]
    assert (sent["type"], sent["name"], sent["strict"]) == ("json_schema", "Weather", True)


async def test_responses_tool_round_trip(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push(
        "openai",
        ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Paris", "unit": "c"}, id="call_1")),
        ReplyText("It is 21.5C in Paris."),
    )
    first = await run(client.responses.create(model="gpt-4o", input=USER, tools=[RESPONSES_TOOL]))
    call = first.output[0]
    assert (call.type, call.name, call.call_id) == ("function_call", "get_weather", "call_1")
    assert json.loads(call.arguments) == {"city": "Paris", "unit": "c"}
    follow_up = [
        *USER,
        {
            "type": "function_call",
            "call_id": call.call_id,
            "name": call.name,
            "arguments": call.arguments,
        },
        {"type": "function_call_output", "call_id": call.call_id, "output": '{"temp_c": 21.5}'},
    ]
    final = await run(
        client.responses.create(model="gpt-4o", input=follow_up, tools=[RESPONSES_TOOL])
    )
    assert final.output_text == "It is 21.5C in Paris."
    seen = alloy_emulator.last_request("openai").call
    assert seen is not None
    assert [(r.call_id, r.name, r.content) for r in seen.tool_results] == [
        ("call_1", "get_weather", '{"temp_c": 21.5}')
    ]


async def test_responses_parallel_tool_calls(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push(
        "openai",
        ReplyToolCalls(("get_weather", {"city": "Paris", "unit": "c"}), ("get_weather", None)),
    )
    response = await run(
        client.responses.create(model="gpt-4o", input=USER, tools=[RESPONSES_TOOL])
    )
    calls = [item for item in response.output if item.type == "function_call"]
    assert len(calls) == 2 and calls[0].call_id != calls[1].call_id
    assert json.loads(calls[0].arguments) == {"city": "Paris", "unit": "c"}
    generated = json.loads(calls[1].arguments)  # generated from the tool's schema
    assert set(generated) == {"city", "unit"} and generated["unit"] in ("c", "f")


async def test_responses_forced_tool_default(client: Any, alloy_emulator: Emulator) -> None:
    """Nothing queued and ``tool_choice`` forcing a function: a schema-valid call."""
    response = await run(
        client.responses.create(
            model="gpt-4o",
            input=USER,
            tools=[RESPONSES_TOOL],
            tool_choice={"type": "function", "name": "get_weather"},
        )
    )
    assert response.output[0].name == "get_weather"
    assert set(json.loads(response.output[0].arguments)) == {"city", "unit"}


async def test_responses_stream_text(client: Any, alloy_emulator: Emulator) -> None:
    events = await collect(
        await run(client.responses.create(model="gpt-4o", input="hi", stream=True))
    )
    kinds = [e.type for e in events]
    assert kinds[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == DEFAULT_TEXT == events[-1].response.output_text
    assert events[-1].response.usage.total_tokens > 0
    assert alloy_emulator.last_request("openai").stream is True


async def test_responses_stream_tool_calls(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push(
        "openai",
        ReplyToolCalls(
            ("get_weather", {"city": "Paris", "unit": "c"}),
            ("get_weather", {"city": "Rome", "unit": "f"}),
        ),
    )
    stream = await run(
        client.responses.create(model="gpt-4o", input=USER, tools=[RESPONSES_TOOL], stream=True)
    )
    events = await collect(stream)
    done = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert [json.loads(e.arguments)["city"] for e in done] == ["Paris", "Rome"]
    deltas = "".join(
        e.delta
        for e in events
        if e.type == "response.function_call_arguments.delta" and e.output_index == 0
    )
    assert json.loads(deltas) == {"city": "Paris", "unit": "c"}
    assert [o.name for o in events[-1].response.output] == ["get_weather", "get_weather"]


async def test_split_streams_cuts_text_and_arguments_as_asked(
    client: Any, alloy_emulator: Emulator
) -> None:
    alloy_emulator.split_streams(1).push("openai", ReplyText("héllo 😀"))
    events = await collect(
        await run(client.responses.create(model="gpt-4o", input="hi", stream=True))
    )
    assert [e.delta for e in events if e.type == "response.output_text.delta"] == list("héllo 😀")

    alloy_emulator.split_streams(lambda text: [text[:3], "", text[3:]])
    alloy_emulator.push("openai", ReplyToolCalls(("get_weather", {"city": "Paris", "unit": "c"})))
    stream = await run(
        client.responses.create(model="gpt-4o", input=USER, tools=[RESPONSES_TOOL], stream=True)
    )
    pieces = [
        e.delta for e in await collect(stream) if e.type == "response.function_call_arguments.delta"
    ]
    assert pieces == ['{"c', 'ity":"Paris","unit":"c"}']  # the empty piece is dropped

    alloy_emulator.reset()  # back to the usual 12 characters
    events = await collect(
        await run(client.responses.create(model="gpt-4o", input="hi", stream=True))
    )
    assert len([e for e in events if e.type == "response.output_text.delta"]) == 3
    with pytest.raises(ValueError, match="at least 1"):
        alloy_emulator.split_streams(0)


def test_responses_stream_helper_parses(alloy_emulator: Emulator) -> None:
    client = openai.OpenAI(base_url=alloy_emulator.openai_base_url, api_key="sk-test")
    alloy_emulator.push(
        "openai", ReplyJson({"city": "Oslo", "temperature_c": -3.0, "humidity": None})
    )
    with client.responses.stream(model="gpt-4o", input="w", text_format=Weather) as stream:
        for _ in stream:
            pass
        final = stream.get_final_response()
    assert final.output_parsed == Weather(city="Oslo", temperature_c=-3.0, humidity=None)


async def test_responses_refusal_max_tokens_malformed_empty(
    client: Any, alloy_emulator: Emulator
) -> None:
    alloy_emulator.push(
        "openai",
        ReplyRefusal("No."),
        ReplyMaxTokens("Hello, wor"),
        ReplyMalformedJson(),
        ReplyEmpty(),
    )
    refused = await run(client.responses.create(model="gpt-4o", input="x"))
    assert refused.output[0].content[0].type == "refusal"
    assert refused.output[0].content[0].refusal == "No."
    truncated = await run(client.responses.create(model="gpt-4o", input="x"))
    assert truncated.status == "incomplete"
    assert truncated.incomplete_details.reason == "max_output_tokens"
    assert truncated.output_text == "Hello, wor"
    malformed = await run(client.responses.create(model="gpt-4o", input="x"))
    with pytest.raises(ValueError):
        json.loads(malformed.output_text)
    empty = await run(client.responses.create(model="gpt-4o", input="x"))
    assert empty.output == [] and empty.output_text == ""


async def test_responses_stream_max_tokens_ends_incomplete(
    client: Any, alloy_emulator: Emulator
) -> None:
    alloy_emulator.push("openai", ReplyMaxTokens())
    events = await collect(
        await run(client.responses.create(model="gpt-4o", input="x", stream=True))
    )
    assert events[-1].type == "response.incomplete"
    assert events[-1].response.output_text == DEFAULT_TEXT[: len(DEFAULT_TEXT) // 2]


def test_responses_wire_format_is_strictly_valid(alloy_emulator: Emulator) -> None:
    """Bodies and every stream event pass *strict* validation against the SDK's own models."""
    url = f"{alloy_emulator.openai_base_url}/responses"
    headers = {"authorization": "Bearer sk-test"}
    alloy_emulator.push("openai", ReplyToolCalls(("get_weather", None), text="Checking."))
    body = {"model": "gpt-4o", "input": "x", "tools": [RESPONSES_TOOL]}
    Response.model_validate(httpx.post(url, json=body, headers=headers).json(), strict=True)
    raw = httpx.post(url, json={**body, "stream": True}, headers=headers)
    assert raw.headers["content-type"].startswith("text/event-stream")
    assert "[DONE]" not in raw.text
    frames = [f for f in raw.text.split("\n\n") if f]
    adapter: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
    for index, frame in enumerate(frames):
        event_line, data_line = frame.split("\n")
        data = json.loads(data_line.removeprefix("data: "))
        assert event_line == f"event: {data['type']}" and data["sequence_number"] == index
        adapter.validate_python(data, strict=True)


# -- Chat Completions ------------------------------------------------------------------------


async def test_chat_text(client: Any, alloy_emulator: Emulator) -> None:
    completion = await run(client.chat.completions.create(model="gpt-4o", messages=USER))
    assert completion.choices[0].message.content == DEFAULT_TEXT
    assert completion.choices[0].finish_reason == "stop"
    assert (
        completion.usage.total_tokens
        == completion.usage.prompt_tokens + completion.usage.completion_tokens
    )
    assert alloy_emulator.last_request("openai").path == "/v1/chat/completions"


async def test_chat_structured_output_parse(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push(
        "openai", ReplyJson({"city": "Paris", "temperature_c": 21.5, "humidity": 42})
    )
    completion = await run(
        client.chat.completions.parse(model="gpt-4o", messages=USER, response_format=Weather)
    )
    assert completion.choices[0].message.parsed == Weather(
        city="Paris", temperature_c=21.5, humidity=42
    )
    request = alloy_emulator.last_request("openai")
    assert request.header("x-stainless-helper-method") == "chat.completions.parse"
    assert request.body["response_format"]["json_schema"]["name"] == "Weather"


async def test_chat_tool_round_trip_single_and_parallel(
    client: Any, alloy_emulator: Emulator
) -> None:
    alloy_emulator.push(
        "openai",
        ReplyToolCalls(
            ReplyToolCall("get_weather", {"city": "Paris", "unit": "c"}, id="call_a"),
            ReplyToolCall("get_weather", {"city": "Rome", "unit": "c"}, id="call_b"),
        ),
        ReplyText("Paris 21C, Rome 25C."),
    )
    first = await run(
        client.chat.completions.create(model="gpt-4o", messages=USER, tools=[CHAT_TOOL])
    )
    message = first.choices[0].message
    assert first.choices[0].finish_reason == "tool_calls" and message.content is None
    assert [c.id for c in message.tool_calls] == ["call_a", "call_b"]
    history = [*USER, message.model_dump(exclude_none=True)] + [
        {"role": "tool", "tool_call_id": c.id, "content": "21"} for c in message.tool_calls
    ]
    final = await run(
        client.chat.completions.create(model="gpt-4o", messages=history, tools=[CHAT_TOOL])
    )
    assert final.choices[0].message.content == "Paris 21C, Rome 25C."
    seen = alloy_emulator.last_request("openai").call
    assert seen is not None and [r.call_id for r in seen.tool_results] == ["call_a", "call_b"]


async def test_chat_stream_usage_only_when_asked(client: Any, alloy_emulator: Emulator) -> None:
    plain = await collect(
        await run(client.chat.completions.create(model="gpt-4o", messages=USER, stream=True))
    )
    assert all(getattr(c, "usage", None) is None for c in plain)
    assert "".join(c.choices[0].delta.content or "" for c in plain) == DEFAULT_TEXT
    assert plain[-1].choices[0].finish_reason == "stop"
    counted = await collect(
        await run(
            client.chat.completions.create(
                model="gpt-4o", messages=USER, stream=True, stream_options={"include_usage": True}
            )
        )
    )
    assert counted[-1].choices == [] and counted[-1].usage.total_tokens > 0


async def test_chat_stream_tool_calls(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push(
        "openai",
        ReplyToolCalls(
            ("get_weather", {"city": "Paris", "unit": "c"}),
            ("get_weather", {"city": "Rome", "unit": "f"}),
        ),
    )
    chunks = await collect(
        await run(
            client.chat.completions.create(
                model="gpt-4o", messages=USER, tools=[CHAT_TOOL], stream=True
            )
        )
    )
    arguments: dict[int, str] = {}
    for chunk in chunks:
        for tool_delta in chunk.choices[0].delta.tool_calls or []:
            arguments[tool_delta.index] = arguments.get(tool_delta.index, "") + (
                tool_delta.function.arguments or ""
            )
    assert {i: json.loads(a)["city"] for i, a in arguments.items()} == {0: "Paris", 1: "Rome"}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_chat_stream_helper_and_refusal(alloy_emulator: Emulator) -> None:
    client = openai.OpenAI(base_url=alloy_emulator.openai_base_url, api_key="sk-test")
    alloy_emulator.push("openai", ReplyRefusal("Not that."))
    with client.chat.completions.stream(
        model="gpt-4o", messages=USER, response_format=Weather
    ) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.refusal == "Not that."
    assert final.choices[0].message.parsed is None


async def test_chat_length_finish(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push("openai", ReplyMaxTokens('{"city": "Pa'))
    with pytest.raises(openai.LengthFinishReasonError):
        await run(
            client.chat.completions.parse(model="gpt-4o", messages=USER, response_format=Weather)
        )


def test_chat_wire_format_is_strictly_valid(alloy_emulator: Emulator) -> None:
    url = f"{alloy_emulator.openai_base_url}/chat/completions"
    headers = {"authorization": "Bearer sk-test"}
    alloy_emulator.push("openai", ReplyToolCalls(("get_weather", None)), ReplyText("hi"))
    body = {"model": "gpt-4o", "messages": USER, "tools": [CHAT_TOOL]}
    ChatCompletion.model_validate(httpx.post(url, json=body, headers=headers).json(), strict=True)
    raw = httpx.post(
        url,
        json={**body, "stream": True, "stream_options": {"include_usage": True}},
        headers=headers,
    ).text
    frames = [f.removeprefix("data: ") for f in raw.split("\n\n") if f]
    assert frames[-1] == "[DONE]" and "event:" not in raw
    for frame in frames[:-1]:
        ChatCompletionChunk.model_validate(json.loads(frame), strict=True)


# -- faults ------------------------------------------------------------------------------------


async def test_rate_limit_is_retried_fast(alloy_emulator: Emulator) -> None:
    client = openai.AsyncOpenAI(base_url=alloy_emulator.openai_base_url, api_key="sk-test")
    alloy_emulator.push("openai", RateLimited(), RateLimited(), ReplyText("finally"))
    response = await client.responses.create(model="gpt-4o", input="x")
    assert response.output_text == "finally"
    assert [r.retry_count for r in alloy_emulator.requests] == [0, 1, 2]


def test_rate_limit_exhausts_retries(alloy_emulator: Emulator) -> None:
    client = openai.OpenAI(
        base_url=alloy_emulator.openai_base_url, api_key="sk-test", max_retries=1
    )
    alloy_emulator.push("openai", RateLimited(retry_after_ms=None, retry_after=0.01), RateLimited())
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model="gpt-4o", messages=USER)
    assert caught.value.code == "rate_limit_exceeded" and caught.value.status_code == 429
    assert [r.retry_count for r in alloy_emulator.requests] == [0, 1]


@pytest.mark.parametrize(
    ("fault", "error", "status"),
    [
        (HttpError(500), openai.InternalServerError, 500),
        (Overloaded(), openai.InternalServerError, 503),
        (Unauthorized(), openai.AuthenticationError, 401),
        (SchemaRejected(), openai.BadRequestError, 400),
        (HttpError(404, "no such model"), openai.NotFoundError, 404),
    ],
)
async def test_http_faults_map_to_sdk_errors(
    client: Any, alloy_emulator: Emulator, fault: Any, error: type[Exception], status: int
) -> None:
    alloy_emulator.push("openai", fault)
    with pytest.raises(error) as caught:
        await run(client.responses.create(model="gpt-4o", input="x"))
    assert caught.value.status_code == status  # type: ignore[attr-defined]
    assert caught.value.response.headers["x-request-id"].startswith("req_")  # type: ignore[attr-defined]
    assert len(alloy_emulator.requests) == 1


async def test_strict_schema_violation_is_rejected_and_reply_kept(
    client: Any, alloy_emulator: Emulator
) -> None:
    alloy_emulator.push("openai", ReplyJson({"a": 1}))
    loose = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    fmt = {"format": {"type": "json_schema", "name": "loose", "schema": loose, "strict": True}}
    with pytest.raises(openai.BadRequestError) as caught:
        await run(client.responses.create(model="gpt-4o", input="x", text=fmt))
    assert caught.value.code == "invalid_json_schema"
    assert "additionalProperties" in str(caught.value)
    assert alloy_emulator.pending("openai") == [ReplyJson({"a": 1})]
    fixed = {"format": {**fmt["format"], "schema": {**loose, "additionalProperties": False}}}
    response = await run(client.responses.create(model="gpt-4o", input="x", text=fixed))
    assert json.loads(response.output_text) == {"a": 1}


async def test_strict_tool_schema_violation(client: Any) -> None:
    tool = {
        **CHAT_TOOL,
        "function": {
            **CHAT_TOOL["function"],  # type: ignore[dict-item]
            "parameters": {**WEATHER_TOOL_SCHEMA, "required": ["city"]},
        },
    }
    with pytest.raises(openai.BadRequestError) as caught:
        await run(client.chat.completions.create(model="gpt-4o", messages=USER, tools=[tool]))
    assert "Missing 'unit'" in str(caught.value)


async def test_transport_faults(client: Any, alloy_emulator: Emulator) -> None:
    short = client.with_options(timeout=0.2, max_retries=0)
    alloy_emulator.push("openai", Slow(2.0), Disconnect(), CutStream(after=3), CutStream())
    with pytest.raises(openai.APITimeoutError):
        await run(short.responses.create(model="gpt-4o", input="x"))
    with pytest.raises(openai.APIConnectionError):
        await run(short.responses.create(model="gpt-4o", input="x"))
    with pytest.raises(openai.APIConnectionError):
        await collect(await run(short.responses.create(model="gpt-4o", input="x", stream=True)))
    with pytest.raises(openai.APIConnectionError):
        await run(short.chat.completions.create(model="gpt-4o", messages=USER))


async def test_slow_reply_within_timeout_succeeds(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push("openai", Slow(0.1, ReplyText("late")))
    response = await run(client.with_options(timeout=5).responses.create(model="gpt-4o", input="x"))
    assert response.output_text == "late"


async def test_in_stream_errors(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push("openai", StreamError(after=3), StreamError(after=2, message="boom"))
    events = await collect(
        await run(client.responses.create(model="gpt-4o", input="x", stream=True))
    )
    assert events[-1].type == "error" and events[-1].sequence_number == 3
    with pytest.raises(openai.APIError, match="boom"):
        await collect(
            await run(client.chat.completions.create(model="gpt-4o", messages=USER, stream=True))
        )


def test_missing_key_and_model_named_faults(alloy_emulator: Emulator) -> None:
    response = httpx.post(
        f"{alloy_emulator.openai_base_url}/responses", json={"model": "m", "input": "x"}
    )
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "invalid_request_error"
    client = openai.OpenAI(
        base_url=alloy_emulator.openai_base_url, api_key="sk-test", max_retries=0
    )
    with pytest.raises(openai.RateLimitError):
        client.responses.create(model="error-429", input="x")
