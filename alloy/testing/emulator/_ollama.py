"""Ollama native API: ``POST /api/chat`` plus the health endpoints (providers.md 1.4 and 3.5).

Streams are NDJSON, and streaming is the *server* default when the body has no ``stream`` key
(the Python SDK always sends it, other clients may not).  Tool ``arguments`` are JSON objects,
not strings.  There is no authentication; errors are ``{"error": "…"}``.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from ._api import BadRequest, EmulatedAPI, Failure, count_tokens, new_id, output_tokens, pieces
from ._call import Call, ReceivedToolResult, ToolDef, Turn
from ._http import NDJSON, Incoming, Outcome, Send, Stream, json_send, ndjson_line

VERSION = "0.12.6"
_MESSAGES: dict[str, str] = {
    "missing_key": "unauthorized",
    "auth": "unauthorized",
    "rate_limit": "too many requests",
    "overloaded": "server busy, please try again.  maximum pending requests exceeded",
    "server": "llama runner process has terminated: exit status 2",
    "schema": 'invalid format: expected "json" or a valid JSON Schema object',
    "not_found": "model not found",
    "bad_request": "invalid request",
    "other": "request failed",
}


class OllamaChat(EmulatedAPI):
    """``/api/chat``."""

    provider = "ollama"
    name = "ollama.chat"
    needs_key = False

    @classmethod
    def serves(cls, path: str) -> bool:
        return path.endswith("/api/chat")

    def authorized(self, incoming: Incoming) -> bool:
        """Ollama has no authentication."""
        return True

    def inspect(self, body: Mapping[str, Any], incoming: Incoming) -> Call:
        """``stream`` defaults to true; ``format`` is ``"json"``, a schema, or a 400."""
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise BadRequest("model is required")
        fmt = body.get("format")
        if fmt not in (None, "", "json") and not isinstance(fmt, Mapping):
            raise BadRequest(
                f'invalid format: {json.dumps(fmt)}; expected "json" or a valid JSON Schema object'
            )
        messages = body.get("messages") or []
        tools = tuple(
            ToolDef(f["name"], f.get("parameters") or {})
            for t in body.get("tools") or []
            if isinstance(t, Mapping)
            and isinstance(f := t.get("function"), Mapping)
            and isinstance(f.get("name"), str)
        )
        stream = body.get("stream")
        return Call(
            api=self.name,
            model=model,
            stream=stream is not False,  # the server streams unless told not to
            body=body,
            schema=fmt if isinstance(fmt, Mapping) else None,
            json_mode=fmt == "json",
            tools=tools,
            tool_results=tuple(
                ReceivedToolResult(m.get("tool_call_id"), m.get("tool_name"), m.get("content"))
                for m in messages
                if isinstance(m, Mapping) and m.get("role") == "tool"
            ),
        )

    def render(self, call: Call, turn: Turn) -> Outcome:
        """A ``done`` message, or NDJSON lines ending with the ``done`` line and its stats."""
        created = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        head = {"model": call.model, "created_at": created}
        content = turn.refusal if turn.refusal is not None else (turn.text or "")
        tool_calls = [
            {
                "id": c.id or new_id("call_", 8, string.ascii_lowercase + string.digits),
                "function": {"index": i, "name": c.name, "arguments": c.args},
            }
            for i, c in enumerate(turn.tool_calls)
        ]
        prompt = count_tokens(call.body.get("messages", []))
        completion = output_tokens(turn)
        stats = {
            "done": True,
            "done_reason": "length" if turn.stop == "length" else "stop",
            "total_duration": 480_000_000 + completion * 20_000_000,
            "load_duration": 1_334_875,
            "prompt_eval_count": prompt,
            "prompt_eval_duration": prompt * 1_000_000,
            "eval_count": completion,
            "eval_duration": completion * 20_000_000,
        }
        if not call.stream:
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if tool_calls:
                message["tool_calls"] = tool_calls
            return json_send(
                200,
                {**head, "message": message, **stats},
                content_type="application/json; charset=utf-8",
            )
        lines = [
            ndjson_line({**head, "message": {"role": "assistant", "content": piece}, "done": False})
            for piece in pieces(content)
        ]
        if tool_calls:
            lines.append(
                ndjson_line(
                    {
                        **head,
                        "message": {"role": "assistant", "content": "", "tool_calls": tool_calls},
                        "done": False,
                    }
                )
            )
        lines.append(
            ndjson_line({**head, "message": {"role": "assistant", "content": ""}, **stats})
        )
        return Stream(200, tuple(lines), content_type=NDJSON)

    def envelope(self, failure: Failure) -> Send:
        """``{"error": "…"}``; the SDK raises ``ResponseError`` with the status."""
        body = {"error": failure.message or _MESSAGES[failure.reason]}
        return json_send(failure.status, body, content_type="application/json; charset=utf-8")

    def stream_error(self, message: str | None, sequence: int) -> bytes:
        """An error line mid-stream; the SDK raises ``ResponseError`` with status -1."""
        return ndjson_line({"error": message or "an error was encountered while running the model"})


def tags() -> dict[str, Any]:
    """``GET /api/tags``: one installed model, enough for health checks and model pickers."""
    return {
        "models": [
            {
                "name": "llama3.2:latest",
                "model": "llama3.2:latest",
                "modified_at": "2025-07-07T20:00:00.000000Z",
                "size": 2019393189,
                "digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
                "details": {
                    "parent_model": "",
                    "format": "gguf",
                    "family": "llama",
                    "families": ["llama"],
                    "parameter_size": "3.2B",
                    "quantization_level": "Q4_K_M",
                },
            }
        ]
    }
