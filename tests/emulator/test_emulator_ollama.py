"""The real ``ollama`` SDK against the emulator (``Client`` and ``AsyncClient``)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from typing import Any

import httpx
import ollama
import pytest
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
    ReplyText,
    ReplyToolCalls,
    SchemaRejected,
    Slow,
    StreamError,
)

MODEL = "llama3.2"
USER = [{"role": "user", "content": "Weather in Paris?"}]
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get current weather",
        "parameters": {
            "type": "object",
            "required": ["city", "unit"],
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["c", "f"]},
            },
        },
    },
}


class Weather(BaseModel):
    city: str
    temperature_c: float
    humidity: int | None = None


async def run(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def collect(stream: Any) -> list[Any]:
    stream = await run(stream)
    if hasattr(stream, "__aiter__"):
        return [item async for item in stream]
    return list(stream)


@pytest.fixture(params=["sync", "async"])
def client(request: pytest.FixtureRequest, alloy_emulator: Emulator) -> Iterator[Any]:
    cls = ollama.Client if request.param == "sync" else ollama.AsyncClient
    yield cls(host=alloy_emulator.ollama_host)


async def test_text(client: Any, alloy_emulator: Emulator) -> None:
    response = await run(client.chat(model=MODEL, messages=USER))
    assert response.message.content == DEFAULT_TEXT
    assert response.done and response.done_reason == "stop"
    assert response.prompt_eval_count > 0 and response.eval_count > 0
    request = alloy_emulator.last_request("ollama")
    assert request.path == "/api/chat" and request.body["stream"] is False
    assert request.header("authorization") is None  # Ollama needs no key


async def test_structured_output(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push("ollama", ReplyJson({"city": "Paris", "temperature_c": 21.5}))
    queued = await run(client.chat(model=MODEL, messages=USER, format=Weather.model_json_schema()))
    assert Weather.model_validate_json(queued.message.content) == Weather(
        city="Paris", temperature_c=21.5
    )
    generated = await run(
        client.chat(model=MODEL, messages=USER, format=Weather.model_json_schema())
    )
    Weather.model_validate_json(generated.message.content)
    json_mode = await run(client.chat(model=MODEL, messages=USER, format="json"))
    assert json.loads(json_mode.message.content) == {}


async def test_tool_round_trip_parallel(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push(
        "ollama",
        ReplyToolCalls(
            ("get_weather", {"city": "Paris", "unit": "c"}),
            ("get_weather", {"city": "Rome", "unit": "c"}),
        ),
        ReplyText("Paris 21C, Rome 25C."),
    )
    first = await run(client.chat(model=MODEL, messages=USER, tools=[TOOL]))
    calls = first.message.tool_calls
    assert [(c.function.name, c.function.arguments) for c in calls] == [
        ("get_weather", {"city": "Paris", "unit": "c"}),
        ("get_weather", {"city": "Rome", "unit": "c"}),
    ]
    history = [*USER, first.message] + [
        {"role": "tool", "content": "21", "tool_name": c.function.name} for c in calls
    ]
    final = await run(client.chat(model=MODEL, messages=history, tools=[TOOL]))
    assert final.message.content == "Paris 21C, Rome 25C."
    seen = alloy_emulator.last_request("ollama").call
    assert seen is not None and [r.name for r in seen.tool_results] == [
        "get_weather",
        "get_weather",
    ]


async def test_stream_text_and_tools(client: Any, alloy_emulator: Emulator) -> None:
    chunks = await collect(client.chat(model=MODEL, messages=USER, stream=True))
    assert "".join(c.message.content for c in chunks) == DEFAULT_TEXT
    assert [c.done for c in chunks] == [False] * (len(chunks) - 1) + [True]
    assert chunks[-1].eval_count > 0
    alloy_emulator.push("ollama", ReplyToolCalls(("get_weather", {"city": "Paris", "unit": "c"})))
    tool_chunks = await collect(client.chat(model=MODEL, messages=USER, tools=[TOOL], stream=True))
    assert tool_chunks[0].message.tool_calls[0].function.arguments == {"city": "Paris", "unit": "c"}
    assert tool_chunks[-1].done


async def test_max_tokens_and_empty(client: Any, alloy_emulator: Emulator) -> None:
    alloy_emulator.push("ollama", ReplyMaxTokens("Hel"), ReplyEmpty())
    truncated = await run(client.chat(model=MODEL, messages=USER))
    assert truncated.done_reason == "length" and truncated.message.content == "Hel"
    empty = await run(client.chat(model=MODEL, messages=USER))
    assert empty.message.content == ""


def test_server_streams_by_default(alloy_emulator: Emulator) -> None:
    """Without a ``stream`` key the real server streams NDJSON; so does the emulator."""
    response = httpx.post(
        f"{alloy_emulator.ollama_host}/api/chat", json={"model": MODEL, "messages": USER}
    )
    assert response.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert len(lines) > 1 and lines[-1]["done"] is True
    for line in lines:
        ollama.ChatResponse.model_validate(line, strict=True)


def test_health_endpoints(alloy_emulator: Emulator) -> None:
    client = ollama.Client(host=alloy_emulator.ollama_host)
    assert [m.model for m in client.list().models] == ["llama3.2:latest"]
    assert httpx.get(f"{alloy_emulator.ollama_host}/api/version").json()["version"]
    assert httpx.get(f"{alloy_emulator.ollama_host}/").text == "Ollama is running"


@pytest.mark.parametrize(
    ("fault", "status"),
    [
        (RateLimited(), 429),
        (HttpError(500), 500),
        (Overloaded(), 503),
        (HttpError(404, "model 'x' not found"), 404),
        (SchemaRejected(), 400),
    ],
)
async def test_http_faults(client: Any, alloy_emulator: Emulator, fault: Any, status: int) -> None:
    alloy_emulator.push("ollama", fault)
    with pytest.raises(ollama.ResponseError) as caught:
        await run(client.chat(model=MODEL, messages=USER))
    assert caught.value.status_code == status


async def test_invalid_format_is_rejected(alloy_emulator: Emulator) -> None:
    response = httpx.post(
        f"{alloy_emulator.ollama_host}/api/chat",
        json={"model": MODEL, "messages": USER, "format": "yaml", "stream": False},
    )
    assert response.status_code == 400 and "invalid format" in response.json()["error"]


async def test_transport_faults(alloy_emulator: Emulator) -> None:
    client = ollama.AsyncClient(host=alloy_emulator.ollama_host, timeout=0.2)
    alloy_emulator.push(
        "ollama", Slow(2.0), Disconnect(), CutStream(), CutStream(after=1), StreamError(after=1)
    )
    with pytest.raises(httpx.ReadTimeout):
        await client.chat(model=MODEL, messages=USER)
    with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
        await client.chat(model=MODEL, messages=USER)
    with pytest.raises(httpx.RemoteProtocolError, match="complete message body"):
        await client.chat(model=MODEL, messages=USER)
    with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
        await collect(client.chat(model=MODEL, messages=USER, stream=True))
    with pytest.raises(ollama.ResponseError) as in_stream:
        await collect(client.chat(model=MODEL, messages=USER, stream=True))
    assert in_stream.value.status_code == -1


def test_connection_refused_is_a_connection_error() -> None:
    with Emulator() as emulator:
        host = emulator.ollama_host
    with pytest.raises(ConnectionError):
        ollama.Client(host=host).chat(model=MODEL, messages=USER)
