"""Bearer-key auth: with keys configured, the command and /v1 routes need one.

The health check, the playground page and the API description stay open (they show no data
and run nothing); everything that calls a model needs ``Authorization: Bearer <key>``. A
missing or wrong key is a 401 with ``WWW-Authenticate: Bearer``; the key itself is never
logged, echoed or kept (see :class:`~alloy.serve.ServeConfig`). The OpenAPI document says so
too (:func:`declare_bearer_auth`), so generated clients and the ``/docs`` page send the key.
"""

from __future__ import annotations

import json
from typing import Any

from ._config import ServeConfig
from ._docs import DOCS_PATHS

#: The name of the bearer scheme in the OpenAPI document's ``components.securitySchemes``.
SECURITY_SCHEME = "bearerAuth"

#: Paths anyone may read: they call no model and show no data.
OPEN_PATHS = frozenset({"/", "/health", "/openapi.json", *DOCS_PATHS})

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


def declare_bearer_auth(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` (an OpenAPI document) with the bearer scheme in
    ``components.securitySchemes`` and ``security`` (and the 401) on every operation outside
    :data:`OPEN_PATHS`. Changed in place; declaring twice changes nothing more."""
    schemes = document.setdefault("components", {}).setdefault("securitySchemes", {})
    schemes[SECURITY_SCHEME] = {
        "type": "http",
        "scheme": "bearer",
        "description": "One of the server's keys (ALLOY_SERVE_API_KEYS or --api-key)",
    }
    for path, item in document.get("paths", {}).items():
        if path in OPEN_PATHS:
            continue
        for operation in item.values():
            operation["security"] = [{SECURITY_SCHEME: []}]
            operation.setdefault("responses", {}).setdefault(
                "401", {"description": "No valid bearer key"}
            )
    return document
