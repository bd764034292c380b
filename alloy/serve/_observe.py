"""One access-log line per request, and one OpenTelemetry trace per request.

The access log (logger ``alloy.serve.access``, which ``alloy serve`` writes to stderr) says
client, method, path, status, bytes sent and duration; never a header (so never a key) and,
unless the server was started with ``--log-content``, never a body. The bytes are those the
client was sent: a stream counts what left before it ended or the client went away.

Tracing opens a SERVER span per request and makes it the current span, so the spans
:func:`alloy.otel.instrument` makes for the command (``command``, ``chat``, ``execute_tool``)
are its children: one trace per request, streams included (the span ends when the last byte
is sent).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

access_log = logging.getLogger("alloy.serve.access")

#: Request bodies longer than this are cut in a content log line.
CONTENT_LOG_CHARS = 2000


class AccessLog:
    """ASGI middleware writing one access-log line per request (with its body, if asked)."""

    def __init__(self, app: Any, log_content: bool = False) -> None:
        self.app = app
        self.log_content = log_content

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0
        sent = 0
        gone = False  # the client left: what is sent now reaches no one
        body = bytearray()

        async def receive_watched() -> Any:
            nonlocal gone
            message = await receive()
            if message["type"] == "http.disconnect":
                gone = True
            elif self.log_content and message["type"] == "http.request":
                room = CONTENT_LOG_CHARS - len(body)
                if room > 0:
                    body.extend(message.get("body", b"")[:room])
            return message

        async def send_counted(message: Any) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)
            if message["type"] == "http.response.body" and not gone:
                sent += len(message.get("body", b""))

        try:
            await self.app(scope, receive_watched, send_counted)
        except BaseException:
            status = status or 500  # what the server answers for a request that raised
            raise
        finally:
            millis = (time.perf_counter() - started) * 1000
            line = '%s "%s %s" %d %dB %.1fms'
            args: list[Any] = [_client(scope), scope["method"], scope["path"], status, sent, millis]
            if self.log_content and body:
                # JSON-quoted, so a body with line breaks still makes one line.
                line += " body=%s"
                args.append(json.dumps(body.decode("utf-8", "replace"), ensure_ascii=False))
            access_log.info(line, *args)


def _client(scope: Any) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "-"


class Tracing:
    """ASGI middleware opening a SERVER span per request, current while the request runs."""

    def __init__(self, app: Any, tracer: Any) -> None:
        from opentelemetry import trace

        self.app = app
        self.tracer = tracer
        self.trace = trace

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        trace = self.trace
        name = f"{scope['method']} {scope['path']}"
        attributes = {"http.request.method": scope["method"], "url.path": scope["path"]}
        with self.tracer.start_as_current_span(
            name, kind=trace.SpanKind.SERVER, attributes=attributes
        ) as span:

            async def send_traced(message: Any) -> None:
                if message["type"] == "http.response.start":
                    status = message["status"]
                    span.set_attribute("http.response.status_code", status)
                    if status >= 500:
                        span.set_status(trace.Status(trace.StatusCode.ERROR))
                await send(message)

            await self.app(scope, receive, send_traced)


Stop = Callable[[], None]
