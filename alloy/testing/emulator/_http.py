"""What arrives from and goes back to the socket, as plain values.

The provider modules decide *what* to answer and return one of the outcome values below; only
``_server`` touches sockets.  Keeping the two apart lets the answer logic be tested without a
network and keeps the I/O code small enough to audit for the things that make an emulator
dishonest (buffering, sleeping, forgetting to flush).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

JSON = "application/json"
SSE = "text/event-stream; charset=utf-8"
NDJSON = "application/x-ndjson"


@dataclass(frozen=True)
class Incoming:
    """One HTTP request as read off the wire; header names are lower-cased."""

    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: bytes

    def query_value(self, name: str) -> str | None:
        """The first value of query parameter ``name``, if present."""
        values = self.query.get(name)
        return values[0] if values else None


@dataclass(frozen=True)
class Send:
    """A complete response with a ``Content-Length`` body.

    ``cut`` sends the headers and half of the body, then closes the connection, which is what
    a dropped connection mid-download looks like to the client.
    """

    status: int
    body: bytes
    content_type: str = JSON
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    cut: bool = False


@dataclass(frozen=True)
class Stream:
    """A streamed response sent with chunked encoding, one flushed chunk per frame.

    ``cut_after`` closes the connection after that many frames without the terminating chunk,
    so the client sees a stream that broke off rather than one that ended.
    """

    status: int
    frames: tuple[bytes, ...]
    content_type: str = SSE
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    cut_after: int | None = None


@dataclass(frozen=True)
class Drop:
    """Close the connection without writing any response (after ``delay`` seconds)."""

    delay: float = 0.0


Outcome = Union[Send, Stream, Drop]


def dumps(value: Any) -> bytes:
    """Compact JSON bytes; non-ASCII is kept as UTF-8, as the providers send it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def json_send(
    status: int, value: Any, headers: Sequence[tuple[str, str]] = (), content_type: str = JSON
) -> Send:
    """A JSON response."""
    return Send(status, dumps(value), content_type, tuple(headers))


def sse_frame(data: Any, event: str | None = None, *, crlf: bool = False) -> bytes:
    """One server-sent event: optional ``event:`` line, a ``data:`` line, a blank line.

    Gemini separates events with CRLF pairs; the others use bare LF.
    """
    payload = data if isinstance(data, str) else dumps(data).decode()
    end = "\r\n\r\n" if crlf else "\n\n"
    head = f"event: {event}\n" if event is not None else ""
    return f"{head}data: {payload}{end}".encode()


def ndjson_line(value: Any) -> bytes:
    """One newline-terminated JSON line (Ollama's streaming format)."""
    return dumps(value) + b"\n"
