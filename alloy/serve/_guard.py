"""The door every request passes before a route sees it: the right host, JSON, a bounded body.

- **Host.** The ``Host`` header must name this server (``ServeConfig.allowed_hosts``), or the
  answer is a 421. A page on another site that had its own name resolve to 127.0.0.1 (DNS
  rebinding) sends that name, so it cannot reach a server meant for this machine alone.
  ``/health`` is exempt: load balancers and orchestrators probe it by address.
- **JSON.** Every POST must say ``Content-Type: application/json``, or the answer is a 415. A
  browser sends a cross-site POST without asking first only as ``text/plain`` or a form, so
  such a POST never reaches a route; a JSON one needs a CORS preflight the server never grants.
- **Size.** A body longer than ``ServeConfig.max_body_bytes`` is a 413, decided from
  ``Content-Length`` before any of it is read, and for a body sent in chunks as soon as the
  bytes received pass the limit; the rest is never read.

Each refusal has the JSON error shape of every other error (:mod:`alloy.serve._errors`).
"""

from __future__ import annotations

import json
from typing import Any

from ._config import ServeConfig
from ._errors import ServeError, describe

#: Probed by load balancers by address, whatever name they give; it shows no data.
HOST_EXEMPT_PATHS = frozenset({"/health"})


class RequestGuard:
    """ASGI middleware refusing a wrong host (421), a POST that is not JSON (415) and a body
    over the limit (413); a body that passes is handed on whole."""

    def __init__(self, app: Any, config: ServeConfig) -> None:
        self.app = app
        self.config = config

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name: value for name, value in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is None and scope["method"] == "POST":
            body, refusal = await self._read_body(receive)
            if body is None and refusal is None:
                return  # the client left before its body was whole: no one to answer
            if body is not None:
                receive = _replay(body, receive)
        if refusal is not None:
            await _answer(send, refusal)
            return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Any, headers: dict[bytes, bytes]) -> ServeError | None:
        host = headers.get(b"host")
        if scope["path"] not in HOST_EXEMPT_PATHS and not self.config.serves_host(
            host.decode("latin-1") if host is not None else None
        ):
            return ServeError(
                421,
                "This server does not serve the host this request names; start it with "
                "--allowed-host NAME (ALLOY_SERVE_ALLOWED_HOSTS) to serve that name",
                type="invalid_host",
            )
        if scope["method"] != "POST":
            return None
        media = headers.get(b"content-type", b"").decode("latin-1").partition(";")[0]
        if media.strip().lower() != "application/json":
            return ServeError(
                415,
                "A POST body must be JSON, sent with Content-Type: application/json",
                type="unsupported_media_type",
            )
        length = headers.get(b"content-length")
        if length is not None and length.strip().isdigit():
            return self._too_large() if int(length) > self.config.max_body_bytes else None
        return None

    async def _read_body(self, receive: Any) -> tuple[bytes | None, ServeError | None]:
        """The whole body, counted as it arrives; a 413 once it passes the limit (None for
        the body of a client that left, or of one refused)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None, None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.config.max_body_bytes:
                return None, self._too_large()
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), None

    def _too_large(self) -> ServeError:
        return ServeError(
            413,
            f"The request body is larger than this server takes "
            f"({self.config.max_body_bytes} bytes; --max-body-bytes sets it)",
            type="request_too_large",
        )


def _replay(body: bytes, receive: Any) -> Any:
    """A ``receive`` that gives the body read already, then waits on the client as before."""
    given = False

    async def replay() -> Any:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _answer(send: Any, refusal: ServeError) -> None:
    status, body, _ = describe(refusal)
    payload = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
    ]
    if status == 413:  # the rest of the body is not read: the connection cannot be reused
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
