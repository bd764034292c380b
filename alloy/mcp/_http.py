"""The MCP server over Streamable HTTP, as an ASGI app to mount (``alloy serve --mcp``).

Stateless, with JSON answers: each POST is its own exchange, so any worker of a server started
with ``--workers N`` can answer it, and the answer passes alloy serve's middleware (auth, host
check, access log) like every other route. The host check and body limit are alloy serve's own
(:mod:`alloy.serve._guard`), so the SDK's are not repeated here.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager

#: Where ``alloy serve --mcp`` mounts the endpoint.
MCP_PATH = "/mcp"


@dataclass(frozen=True)
class HttpEndpoint:
    """An ASGI app answering MCP requests, and what must run around the app's lifetime."""

    app: Callable[..., Any]
    #: Enter in the app's lifespan: it holds the tasks that answer requests.
    running: Callable[[], AbstractAsyncContextManager[None]]
    path: str = MCP_PATH


def streamable_http(server: Server[Any]) -> HttpEndpoint:
    """``server`` as a Streamable HTTP endpoint."""
    manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)
    return HttpEndpoint(StreamableHTTPASGIApp(manager), manager.run)
