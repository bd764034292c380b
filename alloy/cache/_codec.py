"""Cache entries as bytes: a model's normalized reply (and a stream's deltas), never a value.

The entry keeps what the provider said, not what alloy made of it, so every hit is parsed and
validated again against the command's current output type and checks. Entries are JSON: a
shared store (Redis) is read by many machines, and JSON cannot run code when it is read, as a
pickle could.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._types import (
    Media,
    Opaque,
    Part,
    Response,
    RetryPrompt,
    Text,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolResult,
    Usage,
)

#: Bumped when the layout changes; entries of another version are misses.
VERSION = 1

#: A hit's usage: one reply from the cache, no tokens, no provider request, so no cost.
HIT = Usage(cache_hits=1)

Delta = TextDelta | ToolCallDelta


@dataclass(frozen=True, slots=True)
class Entry:
    """One stored reply: the response, and for a streamed one the deltas it arrived in."""

    response: Response
    deltas: tuple[Delta, ...] | None = None


def encode(entry: Entry) -> bytes | None:
    """The entry as bytes, or None when a part cannot be written as JSON (it is not stored)."""
    response = entry.response
    data: dict[str, Any] = {
        "v": VERSION,
        "parts": [_part(part) for part in response.parts],
        "usage": list(_usage_counts(response.usage)),
        "finish": response.finish_reason,
        "model": response.model,
        "id": response.request_id,
        "refusal": response.refusal,
        "details": dict(response.provider_details),
        "reply_id": response.response_id,
    }
    if entry.deltas is not None:
        data["deltas"] = [_delta(delta) for delta in entry.deltas]
    try:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    except (TypeError, ValueError):
        return None


def decode(raw: bytes, *, hit: bool = False) -> Entry | None:
    """The entry ``raw`` holds, or None when it is not one this version wrote. With ``hit``,
    its reply is made as a hit at once (usage :data:`HIT`, ``cache="hit"``), not as stored."""
    try:
        data = _loads(raw)
        if data.get("v") != VERSION:
            return None
        response = Response(
            tuple(_read_part(part) for part in data["parts"]),
            HIT if hit else Usage(*data["usage"]),
            finish_reason=data["finish"],
            model=data["model"],
            request_id=data["id"],
            refusal=data["refusal"],
            provider_details=data["details"],
            response_id=data["reply_id"],
            cache="hit" if hit else None,
        )
        deltas = data.get("deltas")
        return Entry(response, None if deltas is None else tuple(map(_read_delta, deltas)))
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None


_from_json: Any = None


def _loads(raw: bytes) -> Any:
    """``raw`` parsed by pydantic-core's ``from_json``: an entry in a third of ``json.loads``'s
    time (measured). Imported at the first read, since ``import alloy`` leaves pydantic out."""
    global _from_json
    if _from_json is None:
        from pydantic_core import from_json

        _from_json = from_json
    return _from_json(raw)


def _usage_counts(usage: Usage) -> tuple[int, ...]:
    return (
        usage.input_tokens,
        usage.output_tokens,
        usage.cached_tokens,
        usage.reasoning_tokens,
        usage.requests,
        usage.cache_write_tokens,
    )


def _part(part: Part) -> list[Any]:
    match part:
        case Text(text):
            return ["t", text]
        case ToolCall(call_id, name, args, raw_args):
            return ["c", call_id, name, dict(args), raw_args]
        case Opaque(provider, payload):
            return ["o", provider, payload]
        case Media(kind, mime_type, data, url):
            return ["m", kind, mime_type, data, url]
        case ToolResult(call_id, name, content, is_error):
            return ["r", call_id, name, content, is_error]
        case RetryPrompt(errors):
            return ["p", errors]
    raise TypeError(f"not a part: {type(part).__name__}")


#: Each part's class by the letter :func:`_part` writes before its fields.
_PART_KINDS: dict[str, type[Part]] = {
    "t": Text, "c": ToolCall, "o": Opaque, "m": Media, "r": ToolResult, "p": RetryPrompt
}  # fmt: skip


def _read_part(item: Sequence[Any]) -> Part:
    kind, *fields = item
    if kind not in _PART_KINDS:
        raise ValueError(f"unknown part kind {kind!r}")
    return _PART_KINDS[kind](*fields)


def _delta(delta: Delta) -> list[Any]:
    if isinstance(delta, TextDelta):
        return [delta.text]
    return [delta.index, delta.id, delta.name, delta.args_delta]


def _read_delta(item: Sequence[Any]) -> Delta:
    return TextDelta(item[0]) if len(item) == 1 else ToolCallDelta(*item)
