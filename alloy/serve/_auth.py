"""Bearer-key auth: with keys configured, the command and /v1 routes need one.

The health check, the playground page and the API description stay open (they show no data
and run nothing); everything that calls a model needs ``Authorization: Bearer <key>``. A
missing or wrong key is a 401 with ``WWW-Authenticate: Bearer``; the key itself is never
logged, echoed or kept (see :class:`~alloy.serve.ServeConfig`).
"""

from __future__ import annotations

import json
from typing import Any

from ._config import ServeConfig

#: Paths anyone may read: they call no model and show no data.
OPEN_PATHS = frozenset({"/", "/health", "/openapi.json", "/docs", "/docs/oauth2-redirect"})

_UNAUTHORIZED = json.dumps(
    {
        "error": {
            "type": "unauthorized",
            "code": "invalid_api_key",
            "message": "A valid API key is required: send Authorization: Bearer <key>",
            "param": None,
        }
    }
).encode()


class BearerAuth:
    """ASGI middleware refusing calls without one of the configured keys."""

    def __init__(self, app: Any, config: ServeConfig) -> None:
        self.app = app
        self.config = config

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self.config.auth or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        if self._key_ok(scope):
            await self.app(scope, receive, send)
            return
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="alloy"'),
                    (b"content-length", str(len(_UNAUTHORIZED)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": _UNAUTHORIZED})

    def _key_ok(self, scope: Any) -> bool:
        for name, value in scope["headers"]:
            if name == b"authorization":
                scheme, _, key = value.decode("latin-1").partition(" ")
                return scheme.lower() == "bearer" and bool(key) and self.config.accepts(key.strip())
        return False
