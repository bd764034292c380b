"""Replay recorded provider exchanges (``shared/fixtures/recorded/*.json``).

Each interaction's response becomes a :class:`ReplyRaw` reply, queued in order on the provider that
served it, so an SDK pointed at the emulator receives exactly the bytes the real API sent: JSON
bodies verbatim, SSE text split into its events, NDJSON one line per chunk.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._http import JSON, NDJSON, SSE
from ._script import APIFamily, ReplyRaw

_BY_DIRECTORY: dict[str, APIFamily] = {
    "openai_responses": "openai",
    "openai_chat": "openai",
    "openai": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "google": "gemini",
    "ollama": "ollama",
}


def load_recording(source: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """A recording as a dict, from a path or an already-loaded mapping."""
    if isinstance(source, Mapping):
        return dict(source)
    return dict(json.loads(Path(source).read_text(encoding="utf-8")))


def recording_provider(recording: Mapping[str, Any], path: str | Path | None = None) -> APIFamily:
    """Which provider served a recording: ``_source.provider``, the directory, or the URL."""
    declared = str((recording.get("_source") or {}).get("provider", "")).lower()
    for key, provider in _BY_DIRECTORY.items():
        if declared.startswith(key):
            return provider
    if path is not None and Path(path).parent.name in _BY_DIRECTORY:
        return _BY_DIRECTORY[Path(path).parent.name]
    uri = str(((recording.get("interactions") or [{}])[0].get("request") or {}).get("uri", ""))
    if "openai" in uri:
        return "openai"
    if "anthropic" in uri:
        return "anthropic"
    if "googleapis" in uri or ":generateContent" in uri or ":streamGenerateContent" in uri:
        return "gemini"
    if "/api/chat" in uri or "11434" in uri:
        return "ollama"
    raise ValueError("cannot tell which provider this recording came from")


def replies(recording: Mapping[str, Any]) -> list[ReplyRaw]:
    """One :class:`ReplyRaw` reply per interaction, in recorded order."""
    return [raw_reply(i["response"]) for i in recording.get("interactions", [])]


def raw_reply(response: Mapping[str, Any]) -> ReplyRaw:
    """The recorded response as exact bytes (JSON body, SSE text, or NDJSON lines)."""
    status = int(response.get("status", 200))
    headers = {str(k).lower(): str(v) for k, v in (response.get("headers") or {}).items()}
    content_type = headers.pop("content-type", None)
    extra = tuple((k, v) for k, v in headers.items() if k in ("request-id", "x-request-id"))
    if "sse_raw" in response:
        raw = ReplyRaw.sse(str(response["sse_raw"]), status, content_type or SSE)
    elif "ndjson" in response:
        raw = ReplyRaw.ndjson(response["ndjson"], status, content_type or NDJSON)
    else:
        body = response.get("body")
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        raw = ReplyRaw(status, data, content_type or JSON)
    return ReplyRaw(raw.status, raw.body, raw.content_type, raw.frames, extra)
