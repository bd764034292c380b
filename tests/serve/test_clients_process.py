"""The clients people use, against ``alloy serve`` as a real process (uvicorn on 127.0.0.1)
with the emulator upstream: each client in its default mode and its structured-output mode,
sent the body that client builds (as its source builds it; the client packages are not
installed here), as raw JSON. ``CLIENTS`` is also the compatibility table in docs/serving.md, which
``test_the_docs_table_is_this_one`` keeps in step (``python -m tests.serve.test_clients_process``
prints it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest

from .test_openai_clients import INSTRUCTOR, LANGCHAIN, PYDANTIC_AI, RATING_PARAMETERS
from .test_process import serve

DOCS = Path(__file__).resolve().parents[2] / "docs" / "serving.md"
MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Rate the film."},
]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
RATING_SCHEMA = {"name": "Rating", "schema": RATING_PARAMETERS, "strict": True}


class Client(NamedTuple):
    client: str
    mode: str
    path: str
    body: dict[str, Any]
    #: What the answer holds: text, json (a JSON text answer) or tool (a tool call).
    answer: str


def chat(**fields: Any) -> dict[str, Any]:
    return {"model": "support", "messages": MESSAGES, **fields}


def responses(**fields: Any) -> dict[str, Any]:
    return {
        "model": "support",
        "instructions": "Be brief.",
        "input": [{"content": "Rate the film.", "role": "user"}],
        "include": [],
        "stream": False,
        **fields,
    }


CHAT, RESPONSES = "/v1/chat/completions", "/v1/responses"
STREAM = {"stream": True, "stream_options": {"include_usage": True}}
CLIENTS = [
    Client("openai-python", "chat.completions.create", CHAT, chat(), "text"),
    Client("openai-python", "chat stream", CHAT, chat(**STREAM), "text"),
    Client(
        "openai-python",
        "chat.completions.parse",
        CHAT,
        chat(response_format={"type": "json_schema", "json_schema": RATING_SCHEMA}),
        "json",
    ),
    Client("openai-python", "tools", CHAT, chat(tools=[WEATHER]), "any"),
    Client(
        "openai-python", "responses.create", RESPONSES, {"model": "support", "input": "Hi"}, "text"
    ),
    Client("LangChain ChatOpenAI", "invoke", CHAT, chat(stream=False), "text"),
    Client("LangChain ChatOpenAI", "stream", CHAT, chat(**STREAM), "text"),
    Client(
        "LangChain ChatOpenAI",
        'with_structured_output(method="json_schema")',
        CHAT,
        chat(
            stream=False,
            response_format={
                "type": "json_schema",
                "json_schema": {**RATING_SCHEMA, "description": "A rating.", "strict": False},
            },
        ),
        "json",
    ),
    Client(
        "LangChain ChatOpenAI",
        'with_structured_output(method="function_calling")',
        CHAT,
        chat(stream=False, **LANGCHAIN),
        "tool",
    ),
    Client("LangChain ChatOpenAI", "bind_tools", CHAT, chat(stream=False, tools=[WEATHER]), "any"),
    Client(
        "pydantic-ai", "Agent(output_type=Model) (tool output)", CHAT, chat(**PYDANTIC_AI), "tool"
    ),
    Client(
        "pydantic-ai",
        "Agent(output_type=NativeOutput(Model))",
        CHAT,
        chat(response_format={"type": "json_schema", "json_schema": RATING_SCHEMA}),
        "json",
    ),
    Client(
        "pydantic-ai", "Agent with a tool", CHAT, chat(tools=[WEATHER], tool_choice="auto"), "any"
    ),
    Client("instructor", "Mode.TOOLS", CHAT, chat(**INSTRUCTOR), "tool"),
    Client(
        "instructor",
        "Mode.JSON_SCHEMA",
        CHAT,
        chat(response_format={"type": "json_schema", "json_schema": RATING_SCHEMA}),
        "json",
    ),
    Client(
        "instructor", "create_partial (Mode.TOOLS)", CHAT, chat(stream=True, **INSTRUCTOR), "tool"
    ),
    Client("litellm", "completion", CHAT, chat(), "text"),
    Client("litellm", "completion(stream=True)", CHAT, chat(stream=True), "text"),
    Client("OpenAI Agents SDK", "Agent (text)", RESPONSES, responses(tools=[]), "text"),
    Client(
        "OpenAI Agents SDK",
        "Agent(output_type=Model)",
        RESPONSES,
        responses(
            tools=[],
            text={
                "format": {
                    "type": "json_schema",
                    "name": "final_output",
                    **{k: v for k, v in RATING_SCHEMA.items() if k != "name"},
                }
            },
        ),
        "json",
    ),
    Client(
        "OpenAI Agents SDK",
        "Agent with a tool",
        RESPONSES,
        responses(tools=[{"type": "function", **WEATHER["function"], "strict": True}]),
        "any",
    ),
]


def table() -> str:
    """The compatibility table docs/serving.md shows."""
    rows = ["| Client | Mode | Works | Shown by |", "| --- | --- | --- | --- |"]
    for each in CLIENTS:
        test = f"`test_clients_process.py::test_the_client_works[{_id(each)}]`"
        rows.append(f"| {each.client} | `{each.mode}` | works | {test} |")
    return "\n".join(rows)


def _id(each: Client) -> str:
    return f"{each.client}: {each.mode}"


@pytest.fixture(scope="module")
def server(alloy_emulator_session: Any) -> Iterator[str]:
    """One server for the module, its provider the session's emulator (which each test's
    ``on_emulator`` resets)."""
    with pytest.MonkeyPatch.context() as env:
        for name, value in alloy_emulator_session.env().items():
            env.setenv(name, value)
        env.setenv("ALLOY_MODEL", "openai:gpt-5-mini")
        process, url = serve("tests.serve.served:support")
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def _answer(each: Client, reply: httpx.Response) -> str:
    """What kind of answer came: text, json or tool."""
    if each.body.get("stream"):
        events = [
            json.loads(line[6:])
            for line in reply.text.splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"
        ]
        assert reply.text.rstrip().endswith("data: [DONE]")
        assert not any("error" in event and "choices" not in event for event in events), events
        deltas = [e["choices"][0]["delta"] for e in events if e.get("choices")]
        if any(d.get("tool_calls") for d in deltas):
            return "tool"
        text = "".join(d.get("content") or "" for d in deltas)
    elif each.path == CHAT:
        message = reply.json()["choices"][0]["message"]
        if message.get("tool_calls"):
            return "tool"
        text = message["content"]
    else:
        output = reply.json()["output"]
        if any(item["type"] == "function_call" for item in output):
            return "tool"
        text = "".join(
            part.get("text", "")
            for item in output
            if item["type"] == "message"
            for part in item["content"]
        )
    try:
        json.loads(text)
    except ValueError:
        return "text"
    return "json" if text.strip().startswith("{") else "text"


@pytest.mark.parametrize("each", CLIENTS, ids=_id)
def test_the_client_works(server: str, on_emulator: Any, each: Client) -> None:
    reply = httpx.post(server + each.path, json=each.body, timeout=60)
    assert reply.status_code == 200, reply.text
    kind = _answer(each, reply)
    assert kind == each.answer or (each.answer == "any" and kind in ("text", "tool"))


def test_the_docs_table_is_this_one() -> None:
    assert table() in DOCS.read_text(encoding="utf-8"), (
        "docs/serving.md's client table is out of date: "
        "python -m tests.serve.test_clients_process prints it"
    )


if __name__ == "__main__":
    print(table())
