"""Where an MCP server is, as ``mcp_tools`` and ``call`` take it, and what ``mcp.Client`` is
given to reach it.

- ``"stdio:python -m files_server"``: a command line, started as a subprocess (split as a
  shell would split it, but run without a shell). It gets the SDK's default environment (PATH,
  HOME and the like), not this process's: API keys in the environment stay here.
- ``"http://host:port/mcp"`` or ``https://...``: a Streamable HTTP endpoint; ``headers`` are
  sent with every request (an ``Authorization`` header, say).
- a server object (the SDK's ``MCPServer`` or low-level ``Server``): connected in memory.
"""

from __future__ import annotations

import shlex
from collections.abc import Hashable, Mapping
from typing import Any
from urllib.parse import urlsplit

from mcp import StdioServerParameters
from mcp.server import MCPServer, Server

from ..errors import ConfigurationError

STDIO = "stdio:"


def checked(where: Any, headers: Mapping[str, str] | None) -> None:
    """A ConfigurationError, now, for a server that cannot be reached as given."""
    if isinstance(where, (Server, MCPServer)):
        if headers:
            raise ConfigurationError("headers= is for an MCP server reached by URL")
        return
    if not isinstance(where, str):
        raise ConfigurationError(
            f"an MCP server is 'stdio:COMMAND', an http(s) URL or a server object, got {where!r}"
        )
    if where.startswith(STDIO):
        if not shlex.split(where.removeprefix(STDIO)):
            raise ConfigurationError("'stdio:' needs a command line, e.g. 'stdio:python -m srv'")
        if headers:
            raise ConfigurationError("headers= is for an MCP server reached by URL")
        return
    parts = urlsplit(where)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(
            f"an MCP server is 'stdio:COMMAND' or an http(s) URL; {name_of(where)!r} is neither"
        )


def key_of(where: Any, headers: Mapping[str, str] | None) -> Hashable:
    """What makes two ``where``\\s the same server, so they share one connection."""
    if isinstance(where, str):
        return (where, tuple(sorted((headers or {}).items())))
    return ("object", id(where))


def name_of(where: Any) -> str:
    """The server as logs and errors name it: a URL without credentials or query, a command's
    program, or the server object's name. Never a header."""
    if isinstance(where, (Server, MCPServer)):
        return f"in-memory server {where.name!r}"
    if where.startswith(STDIO):
        words = shlex.split(where.removeprefix(STDIO))
        return f"stdio:{' '.join(words[:3])}"
    parts = urlsplit(where)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def transport(where: Any, http_client: Any = None) -> Any:
    """What ``mcp.Client`` is given to reach ``where`` (``http_client`` carries the headers)."""
    if isinstance(where, (Server, MCPServer)):
        return where
    if where.startswith(STDIO):
        command, *args = shlex.split(where.removeprefix(STDIO))
        return StdioServerParameters(command=command, args=args)
    from mcp.client.streamable_http import streamable_http_client

    return streamable_http_client(where, http_client=http_client)
