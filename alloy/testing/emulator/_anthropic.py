"""Anthropic Messages API: ``POST /v1/messages`` (providers.md 1.2 and 3.3).

anthropic 2.12 authenticates with ``Authorization: Bearer``; older clients send ``x-api-key``,
so both are accepted.  Streams are SSE where every frame **must** carry an ``event:`` line (the
SDK drops frames without one) and include a ``ping``.  Errors use
``{"type": "error", "error": {"type", "message"}, "request_id"}``; 529 is ``overloaded_error``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from ._api import (
    BadRequest,
    EmulatedAPI,
    Failure,
    SchemaProblem,
    count_tokens,
    new_id,
    output_tokens,
    pieces,
)
from ._batches import BatchJob, EmulatedBatchAPI, json_body, stamp
from ._call import Call, ReceivedToolResult, ToolDef, Turn
from ._http import Incoming, Outcome, Send, Stream, json_send, sse_frame
from ._prompt_cache import CacheUse, prefixes
from ._schema_rules import anthropic_problem

_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "refusal": "refusal"}
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_MESSAGES: dict[str, str] = {
    "missing_key": "x-api-key header is required",
    "auth": "invalid x-api-key",
    "rate_limit": "Number of request tokens has exceeded your per-minute rate limit",
    "overloaded": "Overloaded",
    "server": "Internal server error",
    "schema": "output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false",
    "not_found": "model: not found",
    "bad_request": "Invalid request",
    "other": "Request failed",
}
_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789"
#: Blocks with ``cache_control`` one request may carry.
MAX_CACHE_BREAKPOINTS = 4


class AnthropicBatches(EmulatedBatchAPI):
    """Message Batches: ``POST /v1/messages/batches`` (``requests: [{custom_id, params}]``),
    ``GET /v1/messages/batches[/{id}]``, ``POST .../{id}/cancel``, and ``GET .../{id}/results``,
    JSON Lines of ``{custom_id, result: {type: succeeded|errored|canceled|expired, ...}}``."""

    name = "anthropic"
    server_error: ClassVar[dict[str, Any]] = {
        "type": "error",
        "error": {"type": "api_error", "message": "Internal server error"},
    }

    def route(self, incoming: Incoming, path: str, method: str) -> Outcome | None:
        if "/v1/messages/batches" not in path:
            return None
        if path.endswith("/v1/messages/batches"):
            if method == "POST":
                return json_send(200, self._json(self._create(json_body(incoming))))
            jobs = self.jobs()
            data = [self._json(j) for j in jobs[: int(incoming.query_value("limit") or 20)]]
            first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
            page = {"data": data, "has_more": len(jobs) > len(data)}
            return json_send(200, {**page, "first_id": first, "last_id": last})
        tail = path.split("/v1/messages/batches/", 1)[1].split("/")
        job = self.job(tail[0])
        if len(tail) == 2 and tail[1] == "cancel" and method == "POST":
            self.store.cancel(job)
        if len(tail) == 2 and tail[1] == "results":
            self.store.advance(job)
            if job.done is None:
                raise BadRequest(f"Batch {job.id} is still processing", status=404)
            lines = "".join(job.line(r[0], _batch_result(r)) for r in job.results)
            return Send(200, lines.encode(), "application/binary")
        return json_send(200, self._json(job))

    def online(self, job: BatchJob) -> tuple[str, str]:
        return "anthropic.messages", "/v1/messages"

    def _create(self, body: Mapping[str, Any]) -> BatchJob:
        items = body.get("requests")
        if not isinstance(items, list) or not items:
            raise BadRequest("requests: Field required")
        if len(items) > 100_000:
            raise BadRequest("requests: a batch may hold 100,000 requests at most")
        requests: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        for item in items:
            custom_id = item.get("custom_id") if isinstance(item, Mapping) else None
            if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= 64 or custom_id in seen:
                raise BadRequest("custom_id must be 1 to 64 characters and unique in a batch")
            seen.add(custom_id)
            requests.append((custom_id, dict(item.get("params") or {})))
        return self.add(BatchJob(self.name, new_id("msgbatch_", 24), requests, time.time()))

    def _json(self, job: BatchJob) -> dict[str, Any]:
        self.store.advance(job)
        counts = job.counts()
        ended = job.done is not None
        return {
            "id": job.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else len(job.requests),
                "succeeded": counts["ok"],
                "errored": counts["error"],
                "canceled": counts["canceled"],
                "expired": counts["expired"],
            },
            "ended_at": stamp(job.done) if job.done is not None else None,
            "created_at": stamp(job.created),
            "expires_at": stamp(job.created + 86400),
            "archived_at": None,
            "cancel_initiated_at": stamp(job.done) if job.cancelled and job.done else None,
            "results_url": (
                f"{self.store.base}/v1/messages/batches/{job.id}/results" if ended else None
            ),
        }


class AnthropicMessages(EmulatedAPI):
    """``/v1/messages`` (``?beta=true`` is accepted and ignored)."""

    provider = "anthropic"
    name = "anthropic.messages"
    batches = AnthropicBatches

    @classmethod
    def serves(cls, path: str) -> bool:
        return path.endswith("/v1/messages")

    def authorized(self, incoming: Incoming) -> bool:
        """``x-api-key`` (older clients) or ``Authorization: Bearer`` (anthropic 2.12)."""
        return bool(incoming.headers.get("x-api-key", "").strip()) or super().authorized(incoming)

    def inspect(self, body: Mapping[str, Any], incoming: Incoming) -> Call:
        """Required fields as the API checks them; tools without ``input_schema`` are server tools."""
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise BadRequest("model: Field required")
        if not isinstance(body.get("max_tokens"), int):
            raise BadRequest("max_tokens: Field required")
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise BadRequest("messages: Field required")
        check_messages(messages)
        marks = sum(marked for _, marked in cache_pieces(body))
        if marks > MAX_CACHE_BREAKPOINTS:
            raise BadRequest(
                f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be "
                f"provided. Found {marks}."
            )
        schema = _output_schema(body)
        tools = tuple(
            ToolDef(t["name"], t["input_schema"], t.get("strict") is True)
            for t in body.get("tools") or []
            if isinstance(t, Mapping)
            and isinstance(t.get("name"), str)
            and isinstance(t.get("input_schema"), Mapping)
            and t.get("type") in (None, "custom")
        )
        return Call(
            api=self.name,
            model=model,
            stream=body.get("stream") is True,
            body=body,
            schema=schema,
            tools=tools,
            forced_tool=_forced(body.get("tool_choice"), tools),
            tool_results=_tool_results(messages),
        )

    def schema_problem(self, call: Call) -> SchemaProblem | None:
        """``output_config`` schemas are always constrained; tools only when ``strict``."""
        if call.schema is not None:
            field = (
                "output_config.format.schema"
                if "output_config" in call.body
                else "output_format.schema"
            )
            detail = anthropic_problem(call.schema, field)
            if detail:
                return SchemaProblem(detail)
        for index, tool in enumerate(call.tools):
            if tool.strict:
                detail = anthropic_problem(tool.schema, f"tools.{index}.custom.input_schema")
                if detail:
                    return SchemaProblem(detail)
        return None

    def render(self, call: Call, turn: Turn) -> Outcome:
        """A ``message`` object, or its SSE events (same ids and usage either way)."""
        blocks: list[dict[str, Any]] = []
        if turn.refusal is not None:
            blocks.append({"type": "text", "text": turn.refusal})
        elif turn.text is not None:
            blocks.append({"type": "text", "text": turn.text})
        for tool_call in turn.tool_calls:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": tool_call.id or new_id("toolu_01", 22, _ALPHABET),
                    "name": tool_call.name,
                    "input": tool_call.args,
                    "caller": {"type": "direct"},
                }
            )
        pieces = [(block, count_tokens(block), marked) for block, marked in cache_pieces(call.body)]
        prompt = sum(tokens for _, tokens, _ in pieces)
        cache = self.prompt_cache.use(prefixes(call.model, pieces))
        completion = output_tokens(turn)
        message = {
            "model": call.model,
            "id": new_id("msg_01", 22, _ALPHABET),
            "type": "message",
            "role": "assistant",
            "content": blocks,
            "stop_reason": _STOP[turn.stop],
            "stop_sequence": None,
            "stop_details": None,
            "usage": _usage(prompt, completion, cache),
        }
        rid = new_id("req_011C", 20, _ALPHABET)
        if not call.stream:
            return json_send(200, message, (("request-id", rid),))
        return Stream(200, tuple(_events(message, completion)), headers=(("request-id", rid),))

    def envelope(self, failure: Failure) -> Send:
        """``{"type": "error", "error": {…}, "request_id"}`` plus the ``request-id`` header."""
        status = failure.status
        kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        rid = new_id("req_011C", 20, _ALPHABET)
        body = {
            "type": "error",
            "error": {"type": kind, "message": failure.message or _MESSAGES[failure.reason]},
            "request_id": rid,
        }
        return json_send(status, body, (("request-id", rid),))

    def stream_error(self, message: str | None, sequence: int) -> bytes:
        """An ``error`` event: the SDK raises it as ``APIStatusError`` with status 200."""
        data = {
            "type": "error",
            "error": {"type": "overloaded_error", "message": message or "Overloaded"},
            "request_id": new_id("req_011C", 20, _ALPHABET),
        }
        return sse_frame(data, "error")


def check_messages(messages: list[Any]) -> None:
    """Refuse, with the API's own message, what the Messages API refuses in ``messages``: a role
    other than user and assistant (``system`` has its own message: it is a top-level
    parameter), empty content anywhere but a final assistant message, empty or blank text
    blocks, and ``tool_use``/``tool_result`` blocks without their partner in the message just
    before or just after; and no message at all."""
    if not messages:
        raise BadRequest("messages: at least one message is required")
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise BadRequest(f"messages.{index}: Input should be a valid dictionary")
        role = message.get("role")
        if role == "system":
            raise BadRequest(
                'messages: Unexpected role "system". The Messages API accepts a top-level '
                '`system` parameter, not "system" as an input message role.'
            )
        if role not in ("user", "assistant"):
            raise BadRequest(f"messages.{index}.role: Input should be 'user' or 'assistant'")
    for index, message in enumerate(messages):
        blocks = _blocks(message.get("content"))
        final_assistant = index == len(messages) - 1 and message["role"] == "assistant"
        if not blocks and not final_assistant:
            raise BadRequest(
                f"messages.{index}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        for block in blocks:
            if isinstance(block, Mapping) and block.get("type") == "text":
                text = block.get("text")
                if text == "":
                    raise BadRequest("messages: text content blocks must be non-empty")
                if isinstance(text, str) and not text.strip() and not final_assistant:
                    raise BadRequest(
                        "messages: text content blocks must contain non-whitespace text"
                    )
        _check_tool_pairs(messages, index, blocks)


def _blocks(content: Any) -> list[Any]:
    """A message's content as blocks: a string is one text block (none when empty)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _check_tool_pairs(messages: list[Any], index: int, blocks: list[Any]) -> None:
    """Each ``tool_result`` answers a ``tool_use`` of the message just before; each
    ``tool_use`` is answered in the message just after, when there is one."""

    def ids(position: int, kind: str, key: str) -> list[Any]:
        if not 0 <= position < len(messages):
            return []
        found = _blocks(messages[position].get("content"))
        return [b.get(key) for b in found if isinstance(b, Mapping) and b.get("type") == kind]

    asked = ids(index - 1, "tool_use", "id")
    for number, block in enumerate(blocks):
        if not isinstance(block, Mapping) or block.get("type") != "tool_result":
            continue
        call_id = block.get("tool_use_id")
        if call_id not in asked:
            raise BadRequest(
                f"messages.{index}.content.{number}: unexpected `tool_use_id` found in "
                f"`tool_result` blocks: {call_id}. Each `tool_result` block must have a "
                "corresponding `tool_use` block in the previous message."
            )
    if index + 1 < len(messages):
        answered = set(ids(index + 1, "tool_result", "tool_use_id"))
        missing = [
            b.get("id")
            for b in blocks
            if isinstance(b, Mapping)
            and b.get("type") == "tool_use"
            and b.get("id") not in answered
        ]
        if missing:
            raise BadRequest(
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(map(str, missing))}. Each `tool_use` block must "
                "have a corresponding `tool_result` block in the next message."
            )


def _output_schema(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``output_config.format.schema`` (GA), or the older beta ``output_format.schema``."""
    config = body.get("output_config")
    fmt = config.get("format") if isinstance(config, Mapping) else None
    if not isinstance(fmt, Mapping):
        fmt = body.get("output_format")
    if not isinstance(fmt, Mapping) or fmt.get("type") != "json_schema":
        return None
    schema = fmt.get("schema")
    if not isinstance(schema, Mapping):
        raise BadRequest("output_config.format.schema: Field required")
    return schema


def _forced(choice: Any, tools: tuple[ToolDef, ...]) -> str | None:
    """The tool ``tool_choice`` forces: a named tool, or the first one for ``any``."""
    if not isinstance(choice, Mapping):
        return None
    if choice.get("type") == "tool" and isinstance(choice.get("name"), str):
        return str(choice["name"])
    if choice.get("type") == "any" and tools:
        return tools[0].name
    return None


def _tool_results(messages: list[Any]) -> tuple[ReceivedToolResult, ...]:
    """``tool_result`` blocks, named after the ``tool_use`` block they answer."""
    names: dict[Any, Any] = {}
    results: list[ReceivedToolResult] = []
    for message in messages:
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "tool_use":
                names[block.get("id")] = block.get("name")
            elif block.get("type") == "tool_result":
                call_id = block.get("tool_use_id")
                results.append(
                    ReceivedToolResult(call_id, names.get(call_id), block.get("content"))
                )
    return tuple(results)


def cache_pieces(body: Mapping[str, Any]) -> list[tuple[Any, bool]]:
    """The prompt block by block in the order Anthropic caches it (tools, system, messages),
    each without its ``cache_control`` and with whether it had one. A top-level
    ``cache_control`` marks the last block, as the API's automatic caching does."""
    blocks: list[Any] = list(body.get("tools") or [])
    system = body.get("system")
    blocks.extend([{"type": "text", "text": system}] if isinstance(system, str) else system or [])
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        role = message.get("role") if isinstance(message, Mapping) else None
        blocks.extend({"role": role, **b} if isinstance(b, Mapping) else b for b in content or [])
    pieces = [_unmarked(block) for block in blocks]
    if isinstance(body.get("cache_control"), Mapping) and pieces:
        pieces[-1] = (pieces[-1][0], True)
    return pieces


def _unmarked(block: Any) -> tuple[Any, bool]:
    if not isinstance(block, Mapping) or "cache_control" not in block:
        return block, False
    return {k: v for k, v in block.items() if k != "cache_control"}, block[
        "cache_control"
    ] is not None


def _usage(prompt: int, completion: int, cache: CacheUse) -> dict[str, Any]:
    """Anthropic's usage object, cache fields included (the SDK models expect them):
    ``input_tokens`` is what was neither read from the cache nor written to it."""
    return {
        "input_tokens": prompt - cache.read - cache.written,
        "cache_creation_input_tokens": cache.written,
        "cache_read_input_tokens": cache.read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache.written,
            "ephemeral_1h_input_tokens": 0,
        },
        "output_tokens": completion,
        "service_tier": "standard",
        "inference_geo": "not_available",
    }


def _events(message: dict[str, Any], completion: int) -> list[bytes]:
    """message_start, per block start/ping/deltas/stop, message_delta, message_stop."""
    frames: list[bytes] = []

    def emit(kind: str, **data: Any) -> None:
        """Append one event; the ``event:`` line must repeat the type or the SDK drops it."""
        frames.append(sse_frame({"type": kind, **data}, kind))

    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**message["usage"], "output_tokens": 1},
    }
    emit("message_start", message=start)
    if not message["content"]:
        emit("ping")
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            emit("content_block_start", index=index, content_block={"type": "text", "text": ""})
            if index == 0:
                emit("ping")
            for piece in pieces(block["text"]):
                emit(
                    "content_block_delta", index=index, delta={"type": "text_delta", "text": piece}
                )
        else:
            emit("content_block_start", index=index, content_block={**block, "input": {}})
            if index == 0:
                emit("ping")
            arguments = json.dumps(block["input"], ensure_ascii=False)
            for piece in ["", *pieces(arguments)]:
                emit(
                    "content_block_delta",
                    index=index,
                    delta={"type": "input_json_delta", "partial_json": piece},
                )
        emit("content_block_stop", index=index)
    emit(
        "message_delta",
        delta={"stop_reason": message["stop_reason"], "stop_sequence": None},
        usage={
            key: message["usage"][key]
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        }
        | {"output_tokens": completion},
    )
    emit("message_stop")
    return frames


def _batch_result(result: tuple[str, str, Any]) -> dict[str, Any]:
    custom_id, kind, payload = result
    if kind == "ok":
        return {"custom_id": custom_id, "result": {"type": "succeeded", "message": payload}}
    if kind == "error":
        return {"custom_id": custom_id, "result": {"type": "errored", "error": payload[1]}}
    return {"custom_id": custom_id, "result": {"type": kind}}
