"""OpenAI Chat Completions: ``POST /v1/chat/completions`` (providers.md 1.1 and 3.2).

Streams are data-only SSE chunks ending with ``data: [DONE]``; usage arrives (in one extra
chunk with empty ``choices``) only when the request sets ``stream_options.include_usage``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ._api import BadRequest, SchemaProblem, count_tokens, mapping, new_id, output_tokens, pieces
from ._call import Call, ReceivedToolResult, ToolDef, Turn
from ._http import Incoming, Outcome, Stream, json_send, sse_frame
from ._openai import OpenAIBase, check_prompt_cache_key, forced_tool

_FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "refusal": "stop"}
_FINGERPRINT = "fp_alloyemu01"


class OpenAIChat(OpenAIBase):
    """``/v1/chat/completions``."""

    name = "openai.chat"

    @classmethod
    def serves(cls, path: str) -> bool:
        return path.endswith("/chat/completions")

    def inspect(self, body: Mapping[str, Any], incoming: Incoming) -> Call:
        """``response_format`` json_schema / json_object, function tools, stream options."""
        self.check_azure(incoming)
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise BadRequest("you must provide a model parameter", "model")
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise BadRequest("Missing required parameter: 'messages'.", "messages")
        check_prompt_cache_key(body)
        fmt = mapping(body.get("response_format"))
        spec = mapping(fmt.get("json_schema"))
        schema = None
        if fmt.get("type") == "json_schema":
            schema = spec.get("schema", {})
            if not isinstance(schema, Mapping):
                raise BadRequest(
                    "Invalid type for 'response_format.json_schema.schema'.",
                    "response_format.json_schema.schema",
                )
        tools = tuple(
            ToolDef(f["name"], f.get("parameters") or {}, f.get("strict") is True)
            for t in body.get("tools") or []
            if isinstance(t, Mapping)
            and isinstance(f := t.get("function"), Mapping)
            and isinstance(f.get("name"), str)
        )
        options = mapping(body.get("stream_options"))
        return Call(
            api=self.name,
            model=model,
            stream=body.get("stream") is True,
            body=body,
            schema=schema,
            schema_name=spec.get("name"),
            json_mode=fmt.get("type") == "json_object",
            tools=tools,
            forced_tool=forced_tool(body.get("tool_choice"), tools),
            tool_results=_tool_results(messages),
            include_usage=options.get("include_usage") is True,
        )

    def schema_problem(self, call: Call) -> SchemaProblem | None:
        """Strict response formats and strict functions must follow the strict rules."""
        strict = (
            mapping(mapping(call.body.get("response_format")).get("json_schema")).get("strict")
            is True
        )
        return self.strict_problem(
            call.schema, call.schema_name, "response_format", strict
        ) or self.strict_tool_problem(call.tools, "tools[{index}].function.parameters")

    def render(self, call: Call, turn: Turn) -> Outcome:
        """A ``chat.completion``, or its chunks followed by ``[DONE]``."""
        cid = new_id("chatcmpl-", 29)
        created = int(time.time())
        calls = [
            {
                "id": c.id or new_id("call_", 24),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json},
            }
            for c in turn.tool_calls
        ]
        head = {"tools": call.body.get("tools"), "format": call.body.get("response_format")}
        cached = self.cached_tokens(call, head, list(call.body.get("messages") or []))
        usage = _usage(call, turn, cached)
        if call.stream:
            return Stream(200, tuple(_chunks(call, turn, cid, created, calls, usage)))
        message: dict[str, Any] = {
            "role": "assistant",
            "content": _content(turn),
            "refusal": turn.refusal,
            "annotations": [],
        }
        if calls:
            message["tool_calls"] = calls
        body = {
            "id": cid,
            "object": "chat.completion",
            "created": created,
            "model": call.model,
            "service_tier": "default",
            "system_fingerprint": _FINGERPRINT,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": _FINISH[turn.stop],
                }
            ],
            "usage": usage,
        }
        return json_send(200, body, (("x-request-id", new_id("req_", 24)),))


def _content(turn: Turn) -> str | None:
    """``content`` is null for pure tool calls and refusals, ``""`` for an empty answer."""
    if turn.text is not None:
        return turn.text
    return None if turn.tool_calls or turn.refusal is not None else ""


def _tool_results(messages: list[Any]) -> tuple[ReceivedToolResult, ...]:
    """``role: tool`` messages, named after the assistant tool call they answer."""
    names: dict[Any, Any] = {}
    for message in messages:
        if isinstance(message, Mapping) and isinstance(message.get("tool_calls"), list):
            for tc in message["tool_calls"]:
                if isinstance(tc, Mapping):
                    names[tc.get("id")] = (tc.get("function") or {}).get("name")
    return tuple(
        ReceivedToolResult(
            m.get("tool_call_id"), names.get(m.get("tool_call_id")), m.get("content")
        )
        for m in messages
        if isinstance(m, Mapping) and m.get("role") == "tool"
    )


def _usage(call: Call, turn: Turn, cached: int) -> dict[str, Any]:
    """Chat usage, with the detail objects newer SDK models carry."""
    prompt = count_tokens(call.body.get("messages", []))
    completion = output_tokens(turn)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": min(cached, prompt), "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _chunks(
    call: Call,
    turn: Turn,
    cid: str,
    created: int,
    calls: list[dict[str, Any]],
    usage: dict[str, Any],
) -> list[bytes]:
    """The ``chat.completion.chunk`` frames, then ``[DONE]``."""
    base = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": call.model,
        "service_tier": "default",
        "system_fingerprint": _FINGERPRINT,
    }
    frames: list[bytes] = []

    def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
        """Append one chunk; ``usage: null`` only appears when usage was asked for."""
        data: dict[str, Any] = {
            **base,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if call.include_usage:
            data["usage"] = None
        data["obfuscation"] = "alloyemu"
        frames.append(sse_frame(data))

    role: dict[str, Any] = {
        "role": "assistant",
        "content": "" if turn.text is not None else None,
        "refusal": None,
    }
    if turn.refusal is not None:
        chunk({**role, "refusal": ""})
        for piece in pieces(turn.refusal):
            chunk({"refusal": piece})
    elif turn.text is not None or not calls:
        chunk({**role, "content": ""})
        for piece in pieces(turn.text or ""):
            chunk({"content": piece})
    for index, tool_call in enumerate(calls):
        head = {
            "index": index,
            "id": tool_call["id"],
            "type": "function",
            "function": {"name": tool_call["function"]["name"], "arguments": ""},
        }
        first = (
            {**role, "tool_calls": [head]}
            if index == 0 and turn.text is None and turn.refusal is None
            else {"tool_calls": [head]}
        )
        chunk(first)
        for piece in pieces(tool_call["function"]["arguments"]):
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    chunk({}, _FINISH[turn.stop])
    if call.include_usage:
        frames.append(sse_frame({**base, "choices": [], "usage": usage, "obfuscation": "alloyemu"}))
    frames.append(sse_frame("[DONE]"))
    return frames
