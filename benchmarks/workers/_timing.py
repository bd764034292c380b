"""Shared by the worker scripts, which run in other virtual environments (stdlib only)."""

from __future__ import annotations

import gc
import json
import sys
import time
from collections.abc import Callable
from typing import Any

#: The reply every canned model or mocked transport returns for the five-field record.
PERSON_JSON = (
    '{"name": "Ada", "age": 36, "email": "ada@example.com", "score": 0.97, "active": true}'
)
FIELDS = {"name": str, "age": int, "email": str, "score": float, "active": bool}
PROMPT = "Describe Ada as a person record."
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "email": {"type": "string"},
        "score": {"type": "number"},
        "active": {"type": "boolean"},
    },
    "required": list(FIELDS),
    "additionalProperties": False,
}


def per_call_us(fn: Callable[[], Any], *, batch: int, batches: int) -> list[float]:
    """Microseconds per call, one value per batch of ``batch`` calls, after a warm-up batch."""
    for _ in range(batch):
        fn()
    gc.collect()
    out = []
    clock = time.perf_counter
    for _ in range(batches):
        start = clock()
        for _ in range(batch):
            fn()
        out.append((clock() - start) / batch * 1e6)
    return out


def responses_body(text: str) -> dict[str, Any]:
    """A Responses API reply carrying ``text`` as the output message."""
    return {
        "id": "resp_bench",
        "object": "response",
        "created_at": 1700000000,
        "status": "completed",
        "model": "gpt-4o-mini",
        "output": [
            {
                "type": "message",
                "id": "msg_bench",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 20,
            "output_tokens": 20,
            "total_tokens": 40,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def chat_body(content: str | None = None, tool: tuple[str, str] | None = None) -> dict[str, Any]:
    """A Chat Completions reply with ``content``, or with one call of ``tool`` (name, arguments)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    finish = "stop"
    if tool is not None:
        name, arguments = tool
        message["tool_calls"] = [
            {
                "id": "call_bench",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        ]
        finish = "tool_calls"
    return {
        "id": "chatcmpl_bench",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 20, "total_tokens": 40},
    }


def mock_http_client(body: dict[str, Any]) -> Any:
    """An httpx client (httpx2 where the openai SDK uses it) whose transport answers ``body``."""
    httpx: Any
    try:
        import httpx2 as httpx
    except ImportError:
        import httpx
    payload = json.dumps(body).encode()
    headers = {"content-type": "application/json"}

    def answer(request: Any) -> Any:
        return httpx.Response(200, content=payload, headers=headers)

    return httpx.Client(transport=httpx.MockTransport(answer))


def raw_responses(client: Any, adapter: Any) -> Callable[[], Any]:
    """The raw SDK call: Responses API with the schema as text.format, then strict validation."""
    text = {"format": {"type": "json_schema", "name": "Person", "schema": SCHEMA, "strict": True}}

    def call() -> Any:
        reply = client.responses.create(model="gpt-4o-mini", input=PROMPT, text=text)
        return adapter.validate_json(reply.output_text, strict=True)

    return call


def raw_chat(client: Any, adapter: Any) -> Callable[[], Any]:
    """The raw SDK call: Chat Completions with a json_schema response_format, then validation."""
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "Person", "schema": SCHEMA, "strict": True},
    }

    def call() -> Any:
        reply = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": PROMPT}],
            response_format=response_format,
        )
        return adapter.validate_json(reply.choices[0].message.content, strict=True)

    return call


def check_person(value: Any) -> None:
    for field, kind in FIELDS.items():
        got = value[field] if isinstance(value, dict) else getattr(value, field)
        if type(got) is not kind:
            raise AssertionError(f"{field}: {got!r} is not {kind.__name__}")


def report(
    library: str, version: str, sdk: str, cases: dict[str, list[float]], notes: dict[str, str]
) -> None:
    json.dump(
        {"library": library, "version": version, "sdk": sdk, "cases": cases, "notes": notes},
        sys.stdout,
    )


def arguments() -> tuple[int, int, set[str] | None]:
    """``batch batches [case,case...]`` from the command line (no cases given: all of them)."""
    only = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else None
    return int(sys.argv[1]), int(sys.argv[2]), only
