"""OpenAI Responses API: ``POST /v1/responses`` (providers.md 1.1 and 3.1).

Non-streaming answers are one ``response`` object.  Streams are SSE with an ``event:`` line
and a ``data:`` object whose ``type`` repeats the event name and whose ``sequence_number``
counts up from 0; there is no ``[DONE]``.  Usage must include
``input_tokens_details.cache_write_tokens`` (required by openai 3.54).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ._api import BadRequest, SchemaProblem, count_tokens, mapping, new_id, output_tokens, pieces
from ._call import Call, ReceivedToolResult, ToolDef, Turn
from ._http import Incoming, Outcome, Stream, json_send, sse_frame
from ._openai import OpenAIBase, check_prompt_cache_key, forced_tool

_OBFUSCATION = "alloyemu"


class OpenAIResponses(OpenAIBase):
    """``/v1/responses``."""

    name = "openai.responses"

    @classmethod
    def serves(cls, path: str) -> bool:
        return path.endswith("/responses")

    def inspect(self, body: Mapping[str, Any], incoming: Incoming) -> Call:
        """``text.format`` json_schema / json_object, function tools, ``tool_choice``."""
        self.check_azure(incoming)
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise BadRequest("Missing required parameter: 'model'.", "model")
        check_prompt_cache_key(body)
        fmt = mapping(mapping(body.get("text")).get("format"))
        schema = None
        if fmt.get("type") == "json_schema":
            schema = fmt.get("schema")
            if not isinstance(schema, Mapping):
                raise BadRequest(
                    "Missing required parameter: 'text.format.schema'.", "text.format.schema"
                )
        tools = tuple(
            ToolDef(t["name"], t.get("parameters") or {}, t.get("strict") is True)
            for t in body.get("tools") or []
            if isinstance(t, Mapping)
            and t.get("type") == "function"
            and isinstance(t.get("name"), str)
        )
        return Call(
            api=self.name,
            model=model,
            stream=body.get("stream") is True,
            body=body,
            schema=schema,
            schema_name=fmt.get("name"),
            json_mode=fmt.get("type") == "json_object",
            tools=tools,
            forced_tool=forced_tool(body.get("tool_choice"), tools),
            tool_results=_tool_results(body.get("input")),
        )

    def schema_problem(self, call: Call) -> SchemaProblem | None:
        """Strict formats and strict functions must follow the strict rules."""
        fmt = mapping(mapping(call.body.get("text")).get("format"))
        return self.strict_problem(
            call.schema, call.schema_name, "text.format.schema", fmt.get("strict") is True
        ) or self.strict_tool_problem(call.tools, "tools[{index}].parameters")

    def render(self, call: Call, turn: Turn) -> Outcome:
        """A ``response`` object, or the SSE event sequence ending in it."""
        rid = new_id("resp_", 48)
        created = int(time.time())
        items = _output_items(turn)
        status = "incomplete" if turn.stop == "length" else "completed"
        body = call.body
        given = body.get("input")
        instructions = [body["instructions"]] if body.get("instructions") else []
        head = {"tools": body.get("tools"), "text": body.get("text")}
        pieces = instructions + (given if isinstance(given, list) else [given])
        usage = _usage(call, turn, self.cached_tokens(call, head, pieces))
        final = _response(call, rid, created, status, items, usage)
        if not call.stream:
            return json_send(200, final, (("x-request-id", new_id("req_", 24)),))
        return Stream(200, tuple(_events(call, rid, created, items, final)))

    def stream_error(self, message: str | None, sequence: int) -> bytes:
        """An ``error`` event; the SDK yields it as an event instead of raising."""
        data = {
            "type": "error",
            "sequence_number": sequence,
            "code": "server_error",
            "message": message or "The server had an error while processing your request.",
            "param": None,
        }
        return sse_frame(data, "error")


def _tool_results(items: Any) -> tuple[ReceivedToolResult, ...]:
    """``function_call_output`` items, named after the matching ``function_call``."""
    if not isinstance(items, list):
        return ()
    names = {
        i.get("call_id"): i.get("name")
        for i in items
        if isinstance(i, Mapping) and i.get("type") == "function_call"
    }
    return tuple(
        ReceivedToolResult(i.get("call_id"), names.get(i.get("call_id")), i.get("output"))
        for i in items
        if isinstance(i, Mapping) and i.get("type") == "function_call_output"
    )


def _output_items(turn: Turn) -> list[dict[str, Any]]:
    """Output items: one message (text or refusal) then one item per function call."""
    items: list[dict[str, Any]] = []
    message_status = "incomplete" if turn.stop == "length" else "completed"
    if turn.refusal is not None:
        part: dict[str, Any] = {"type": "refusal", "refusal": turn.refusal}
        items.append(_message(part, message_status))
    elif turn.text is not None:
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": turn.text}
        items.append(_message(part, message_status))
    for call in turn.tool_calls:
        items.append(
            {
                "id": new_id("fc_", 48),
                "type": "function_call",
                "status": "completed",
                "arguments": call.arguments_json,
                "call_id": call.id or new_id("call_", 24),
                "name": call.name,
            }
        )
    return items


def _message(part: dict[str, Any], status: str) -> dict[str, Any]:
    """A message output item."""
    return {
        "id": new_id("msg_", 48),
        "type": "message",
        "status": status,
        "content": [part],
        "role": "assistant",
    }


def _usage(call: Call, turn: Turn, cached: int) -> dict[str, Any]:
    """Responses usage; ``cache_write_tokens`` is required by openai 3.54 (always 0 here: the
    emulator has no explicit breakpoints)."""
    prompt = count_tokens(call.body.get("input", "")) + count_tokens(
        call.body.get("instructions") or ""
    )
    completion = output_tokens(turn)
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": min(cached, prompt), "cache_write_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }


def _response(
    call: Call,
    rid: str,
    created: int,
    status: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None,
) -> dict[str, Any]:
    """The ``response`` object; request settings are echoed back as the real API does."""
    body = call.body
    text = mapping(body.get("text"))
    return {
        "id": rid,
        "object": "response",
        "created_at": created,
        "status": status,
        "background": False,
        "completed_at": created if status == "completed" else None,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "max_tool_calls": body.get("max_tool_calls"),
        "model": call.model,
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "prompt_cache_key": None,
        "reasoning": {"effort": None, "summary": None},
        "safety_identifier": None,
        "service_tier": "default",
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": {
            "format": text.get("format") or {"type": "text"},
            "verbosity": text.get("verbosity", "medium"),
        },
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_logprobs": 0,
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": body.get("metadata") or {},
    }


def _events(
    call: Call, rid: str, created: int, items: list[dict[str, Any]], final: dict[str, Any]
) -> list[bytes]:
    """The SSE frames for a whole response, in the order the real API sends them."""
    frames: list[bytes] = []

    def emit(kind: str, **data: Any) -> None:
        """Append one event, numbering it with the next ``sequence_number``."""
        frames.append(sse_frame({"type": kind, "sequence_number": len(frames), **data}, kind))

    started = _response(call, rid, created, "in_progress", [], None)
    emit("response.created", response=started)
    emit("response.in_progress", response=started)
    for index, item in enumerate(items):
        if item["type"] == "message":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            _part_events(emit, index, item)
        else:
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for piece in pieces(item["arguments"]):
                emit(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=index,
                    delta=piece,
                    obfuscation=_OBFUSCATION,
                )
            emit(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=index,
                arguments=item["arguments"],
            )
        emit("response.output_item.done", output_index=index, item=item)
    terminal = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    emit(terminal, response=final)
    return frames


def _part_events(emit: Any, index: int, item: dict[str, Any]) -> None:
    """Content-part events of one message item (output text or refusal)."""
    part = item["content"][0]
    where = {"item_id": item["id"], "output_index": index, "content_index": 0}
    if part["type"] == "refusal":
        emit("response.content_part.added", **where, part={"type": "refusal", "refusal": ""})
        for piece in pieces(part["refusal"]):
            emit("response.refusal.delta", **where, delta=piece)
        emit("response.refusal.done", **where, refusal=part["refusal"])
    else:
        emit(
            "response.content_part.added",
            **where,
            part={"type": "output_text", "annotations": [], "logprobs": [], "text": ""},
        )
        for piece in pieces(part["text"]):
            emit(
                "response.output_text.delta",
                **where,
                delta=piece,
                logprobs=[],
                obfuscation=_OBFUSCATION,
            )
        emit("response.output_text.done", **where, text=part["text"], logprobs=[])
    emit("response.content_part.done", **where, part=part)
