"""The MCP server over stdio: what ``alloy mcp MODULE[:COMMAND]`` runs.

stdout carries the protocol alone. The SDK points file descriptor 1 at stderr while it serves,
so a stray print from a prompt function or a library goes to stderr instead of breaking the
stream, and alloy's own log lines go to stderr too.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server import Server
from mcp.server.stdio import stdio_server


async def serve_stdio_async(server: Server[Any]) -> None:
    """Serve ``server`` over this process's stdin and stdout until stdin closes."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over stdio until the client closes stdin (blocks)."""
    anyio.run(serve_stdio_async, server)
