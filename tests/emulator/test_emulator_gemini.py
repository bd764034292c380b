"""The real ``google-genai`` SDK against the emulator (``client.models`` and ``client.aio.models``)."""

from __future__ import annotations

import base64
import inspect
import json
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
from google import genai
from google.genai import errors, types
from pydantic import BaseModel

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

MODEL = "gemini-2.5-flash"
PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
    "required": ["city", "unit"],
    "additionalProperties": False,
}
TOOLS = [
    types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name="get_weather", description="Get weather", parameters_json_schema=PARAMS
            )
        ]
    )
]


class Weather(BaseModel):
    city: str
    temperature_c: float
    humidity: int | None


async def run(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def collect(stream: Any) -> list[Any]:
    stream = await run(stream)
    if hasattr(stream, "__aiter__"):
        return [item async for item in stream]
    return list(stream)


class Models:
    """``client.models`` or ``client.aio.models``, keeping the client alive (it must be)."""

    def __init__(self, client: genai.Client, use_async: bool) -> None:
        self.client = client
        self.api: Any = client.aio.models if use_async else client.models


@pytest.fixture(params=["sync", "async"])
def models(request: pytest.FixtureRequest, alloy_emulator: Emulator) -> Iterator[Models]:
    client = genai.Client(
        api_key="gm-test", http_options={"base_url": alloy_emulator.gemini_base_url}
    )
    yield Models(client, request.param == "async")


async def test_text(models: Models, alloy_emulator: Emulator) -> None:
    response = await run(models.api.generate_content(model=MODEL, contents="Say hello"))
    assert response.text == DEFAULT_TEXT
    assert response.candidates[0].finish_reason == types.FinishReason.STOP
    assert response.usage_metadata.total_token_count > 0
    request = alloy_emulator.last_request("gemini")
    assert request.path == f"/v1/models/{MODEL}:generateContent"  # google-genai 3.4 uses /v1
    assert request.header("x-goog-api-key") == "gm-test"
    assert request.body == {"contents": [{"parts": [{"text": "Say hello"}], "role": "user"}]}


async def test_v1beta_and_structured_output(alloy_emulator: Emulator) -> None:
    client = genai.Client(
        api_key="k",
        http_options={"base_url": alloy_emulator.gemini_base_url, "api_version": "v1beta"},
    )
    alloy_emulator.push(
        "gemini", ReplyJson({"city": "Paris", "temperature_c": 21.5, "humidity": 42})
    )
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_schema=Weather
    )
    response = await client.aio.models.generate_content(model=MODEL, contents="w", config=config)
    assert response.parsed == Weather(city="Paris", temperature_c=21.5, humidity=42)
    assert alloy_emulator.last_request("gemini").path.startswith("/v1beta/models/")
    generated = await client.aio.models.generate_content(model=MODEL, contents="w", config=config)
    assert isinstance(generated.parsed, Weather)  # sampled from the OpenAPI-style responseSchema


async def test_response_json_schema(models: Models, alloy_emulator: Emulator) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "humidity": {"type": ["integer", "null"]}},
        "required": ["city", "humidity"],
        "additionalProperties": False,
    }
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_json_schema=schema
    )
    response = await run(models.api.generate_content(model=MODEL, contents="w", config=config))
    assert set(response.parsed) == {"city", "humidity"}
    sent = alloy_emulator.last_request("gemini").body["generationConfig"]
    assert sent["responseJsonSchema"] == schema


async def test_tool_round_trip_parallel_with_signatures(
    models: Models, alloy_emulator: Emulator
) -> None:
    signature = b"\xfb\xff\xfe\x01"  # standard base64 '+//+AQ==', echoed back URL-safe by the SDK
    alloy_emulator.push(
        "gemini",
        ReplyToolCalls(
            ReplyToolCall(
                "get_weather", {"city": "Paris", "unit": "c"}, id="fc1", signature=signature
            ),
            ReplyToolCall("get_weather", {"city": "Rome", "unit": "c"}, id="fc2"),
        ),
        ReplyText("Paris 21C, Rome 25C."),
    )
    config = types.GenerateContentConfig(tools=TOOLS)
    first = await run(models.api.generate_content(model=MODEL, contents="w", config=config))
    assert [(c.id, c.args["city"]) for c in first.function_calls] == [
        ("fc1", "Paris"),
        ("fc2", "Rome"),
    ]
    assert first.candidates[0].content.parts[0].thought_signature == signature
    contents = [
        types.Content(role="user", parts=[types.Part(text="w")]),
        first.candidates[0].content,
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=c.id, name=c.name, response={"t": 21}
                    )
                )
                for c in first.function_calls
            ],
        ),
    ]
    final = await run(models.api.generate_content(model=MODEL, contents=contents, config=config))
    assert final.text == "Paris 21C, Rome 25C."
    request = alloy_emulator.last_request("gemini")
    echoed = request.body["contents"][1]["parts"][0]["thoughtSignature"]
    assert base64.urlsafe_b64decode(echoed + "=" * (-len(echoed) % 4)) == signature
    assert request.body["tools"][0]["functionDeclarations"][0]["parameters_json_schema"] == PARAMS
    assert request.call is not None
    assert [(r.call_id, r.name) for r in request.call.tool_results] == [
        ("fc1", "get_weather"),
        ("fc2", "get_weather"),
    ]


async def test_forced_function_default(models: Models) -> None:
    config = types.GenerateContentConfig(
        tools=TOOLS,
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode="ANY", allowed_function_names=["get_weather"]
            )
        ),
    )
    response = await run(models.api.generate_content(model=MODEL, contents="w", config=config))
    assert response.function_calls[0].name == "get_weather"
    assert response.function_calls[0].args["unit"] in ("c", "f")


async def test_stream_text(models: Models, alloy_emulator: Emulator) -> None:
    chunks = await collect(models.api.generate_content_stream(model=MODEL, contents="hi"))
    assert len(chunks) > 1
    assert "".join(c.text for c in chunks) == DEFAULT_TEXT
    assert all(c.candidates[0].finish_reason is None for c in chunks[:-1])
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    assert chunks[-1].usage_metadata.candidates_token_count > 0
    request = alloy_emulator.last_request("gemini")
    assert request.path.endswith(":streamGenerateContent") and request.query == {"alt": ["sse"]}
    assert request.stream is True


async def test_stream_tool_calls(models: Models, alloy_emulator: Emulator) -> None:
    alloy_emulator.push(
        "gemini",
        ReplyToolCalls(
            ("get_weather", {"city": "Paris", "unit": "c"}),
            ("get_weather", {"city": "Rome", "unit": "f"}),
        ),
    )
    chunks = await collect(
        models.api.generate_content_stream(
            model=MODEL, contents="w", config=types.GenerateContentConfig(tools=TOOLS)
        )
    )
    calls = [c for chunk in chunks for c in chunk.function_calls or []]
    assert [c.args["city"] for c in calls] == ["Paris", "Rome"]


async def test_refusal_max_tokens_empty(models: Models, alloy_emulator: Emulator) -> None:
    alloy_emulator.push("gemini", ReplyRefusal(), ReplyMaxTokens("Hello, wo"), ReplyEmpty())
    refused = await run(models.api.generate_content(model=MODEL, contents="x"))
    assert refused.candidates[0].finish_reason == types.FinishReason.SAFETY and refused.text is None
    truncated = await run(models.api.generate_content(model=MODEL, contents="x"))
    assert truncated.candidates[0].finish_reason == types.FinishReason.MAX_TOKENS
    assert truncated.text == "Hello, wo"
    empty = await run(models.api.generate_content(model=MODEL, contents="x"))
    assert empty.text is None


def test_wire_format_is_strictly_valid(alloy_emulator: Emulator) -> None:
    """google-genai models forbid unknown fields, so this catches any key we invent."""
    url = f"{alloy_emulator.url}/v1beta/models/{MODEL}"
    alloy_emulator.push(
        "gemini",
        ReplyToolCalls(ReplyToolCall("get_weather", None, id="a", signature=b"s"), text="x"),
    )
    body = {"contents": [{"role": "user", "parts": [{"text": "w"}]}]}
    response = httpx.post(f"{url}:generateContent", params={"key": "k"}, json=body)
    types.GenerateContentResponse.model_validate(response.json())
    raw = httpx.post(f"{url}:streamGenerateContent", params={"key": "k", "alt": "sse"}, json=body)
    events = [e for e in raw.text.split("\r\n\r\n") if e]
    assert len(events) > 1 and all(e.startswith("data: ") for e in events)
    for event in events:
        types.GenerateContentResponse.model_validate(json.loads(event.removeprefix("data: ")))


def test_missing_key_and_bad_signature(alloy_emulator: Emulator) -> None:
    url = f"{alloy_emulator.url}/v1/models/{MODEL}:generateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": "w"}]}]}
    missing = httpx.post(url, json=body)
    assert missing.status_code == 400
    assert missing.json()["error"]["details"][0]["reason"] == "API_KEY_INVALID"
    bad = {
        "contents": [{"role": "model", "parts": [{"text": "w", "thoughtSignature": "not base64!"}]}]
    }
    rejected = httpx.post(url, json=bad, headers={"x-goog-api-key": "k"})
    assert (
        rejected.status_code == 400
        and "Base64 decoding failed" in rejected.json()["error"]["message"]
    )


async def test_response_json_schema_keyword_rules(models: Models, alloy_emulator: Emulator) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}}}
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_json_schema=schema
    )
    with pytest.raises(errors.ClientError) as caught:
        await run(models.api.generate_content(model=MODEL, contents="w", config=config))
    assert caught.value.code == 400 and caught.value.status == "INVALID_ARGUMENT"
    assert "exclusiveMinimum" in caught.value.message


@pytest.mark.parametrize(
    ("fault", "error", "code", "status"),
    [
        (RateLimited(), errors.ClientError, 429, "RESOURCE_EXHAUSTED"),
        (HttpError(500), errors.ServerError, 500, "INTERNAL"),
        (Overloaded(), errors.ServerError, 503, "UNAVAILABLE"),
        (Unauthorized(), errors.ClientError, 401, "UNAUTHENTICATED"),
        (SchemaRejected(), errors.ClientError, 400, "INVALID_ARGUMENT"),
    ],
)
async def test_http_faults_map_to_sdk_errors(
    models: Models,
    alloy_emulator: Emulator,
    fault: Any,
    error: type[Exception],
    code: int,
    status: str,
) -> None:
    alloy_emulator.push("gemini", fault)
    with pytest.raises(error) as caught:
        await run(models.api.generate_content(model=MODEL, contents="x"))
    assert (caught.value.code, caught.value.status) == (code, status)  # type: ignore[attr-defined]
    assert len(alloy_emulator.requests) == 1  # google-genai does not retry by default


def test_opt_in_retries(alloy_emulator: Emulator) -> None:
    retry = types.HttpRetryOptions(attempts=3, initial_delay=0.01, max_delay=0.02, jitter=0)
    client = genai.Client(
        api_key="k",
        http_options=types.HttpOptions(
            base_url=alloy_emulator.gemini_base_url, retry_options=retry
        ),
    )
    alloy_emulator.push("gemini", RateLimited(), Overloaded(), ReplyText("third time"))
    assert client.models.generate_content(model=MODEL, contents="x").text == "third time"
    assert len(alloy_emulator.requests) == 3


async def test_transport_faults(alloy_emulator: Emulator) -> None:
    # google-genai sends async requests through aiohttp whenever aiohttp is installed (the
    # interop extra brings it): the transport keeps them on httpx2, as alloy's clients do.
    client = genai.Client(
        api_key="k",
        http_options={
            "base_url": alloy_emulator.gemini_base_url,
            "timeout": 200,
            "async_client_args": {"transport": httpx2.AsyncHTTPTransport()},
        },
    )
    alloy_emulator.push(
        "gemini", Slow(2.0), Disconnect(), CutStream(), CutStream(after=1), StreamError(after=1)
    )
    with pytest.raises(httpx2.TimeoutException):
        await client.aio.models.generate_content(model=MODEL, contents="x")
    with pytest.raises(httpx2.RemoteProtocolError, match="without sending a response"):
        await client.aio.models.generate_content(model=MODEL, contents="x")
    with pytest.raises(httpx2.RemoteProtocolError, match="complete message body"):
        client.models.generate_content(model=MODEL, contents="x")
    with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
        list(client.models.generate_content_stream(model=MODEL, contents="x"))
    with pytest.raises(errors.ServerError) as in_stream:
        list(client.models.generate_content_stream(model=MODEL, contents="x"))
    assert in_stream.value.code == 503


def test_both_proto_json_spellings(alloy_emulator: Emulator) -> None:
    """``parametersJsonSchema`` and ``parameters_json_schema``, ``propertyOrdering`` and
    ``property_ordering`` are the same field to the real API, so they are to the emulator."""
    url = f"{alloy_emulator.url}/v1beta/models/{MODEL}:generateContent"
    headers = {"x-goog-api-key": "k"}
    contents = [{"role": "user", "parts": [{"text": "w"}]}]
    tools = [{"functionDeclarations": [{"name": "get_weather", "parametersJsonSchema": PARAMS}]}]
    forced = {"functionCallingConfig": {"mode": "ANY"}}
    call = httpx.post(
        url, headers=headers, json={"contents": contents, "tools": tools, "toolConfig": forced}
    )
    args = call.json()["candidates"][0]["content"]["parts"][0]["functionCall"]["args"]
    assert set(args) == {"city", "unit"}
    snake = {
        "contents": contents,
        "generation_config": {
            "response_mime_type": "application/json",
            "response_schema": {
                "type": "OBJECT",
                "property_ordering": ["b", "a"],
                "required": ["a", "b"],
                "properties": {
                    "a": {"type": "INTEGER", "nullable": True},
                    "b": {"type": "ARRAY", "min_items": 2, "items": {"type": "STRING"}},
                },
            },
        },
    }
    value = json.loads(
        httpx.post(url, headers=headers, json=snake).json()["candidates"][0]["content"]["parts"][0][
            "text"
        ]
    )
    assert isinstance(value["a"], int) and len(value["b"]) >= 2
    camel = {
        "contents": contents,
        "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": {
                "type": "object",
                "propertyOrdering": ["a"],
                "properties": {"a": {"type": "string"}},
                "required": ["a"],
            },
        },
    }
    assert httpx.post(url, headers=headers, json=camel).status_code == 200
