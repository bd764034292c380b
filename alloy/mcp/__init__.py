"""MCP both ways (install ``alloy[mcp]``): commands served as typed MCP tools, and the tools of
MCP servers used inside commands.

::

    alloy mcp app                      # app's commands as MCP tools, over stdio
    alloy serve app --mcp              # the same over Streamable HTTP at /mcp

    from alloy.mcp import mcp_tools

    fs = mcp_tools("stdio:python -m files_server", prefix="fs_", include=["read_file"])

    @command(output=Summary, tools=fs)
    def summarize(path: str) -> str: ...

    import alloy.mcp
    total = alloy.mcp.call("http://127.0.0.1:9000/mcp", "add", {"a": 1, "b": 2}, output=int)

Built on the official SDK (``mcp`` 2.x). Nothing here is imported by ``import alloy``. See the
"MCP" page of the docs.
"""

from __future__ import annotations

try:
    import mcp  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from ..errors import ConfigurationError

    raise ConfigurationError("alloy.mcp needs the MCP SDK: pip install 'alloy[mcp]'") from exc

from ._answers import ATTEMPTS_META, COST_META, MODEL_META, USAGE_META
from ._call import acall, call
from ._connection import CONNECTIONS
from ._described import RESULT_KEY, WRAPPED_META
from ._http import MCP_PATH, HttpEndpoint, streamable_http
from ._remote_tools import McpTool, McpToolError, mcp_tools
from ._server import mcp_server
from ._stdio import serve_stdio, serve_stdio_async
from ._targets import commands_in

__all__ = [
    "ATTEMPTS_META",
    "COST_META",
    "HttpEndpoint",
    "MCP_PATH",
    "MODEL_META",
    "McpTool",
    "McpToolError",
    "RESULT_KEY",
    "USAGE_META",
    "WRAPPED_META",
    "acall",
    "call",
    "close",
    "commands_in",
    "mcp_server",
    "mcp_tools",
    "serve_stdio",
    "serve_stdio_async",
    "streamable_http",
]


def close() -> None:
    """Close every MCP connection this process opened (stdio servers exit); the next use
    opens anew. The process does this itself at exit."""
    CONNECTIONS.close()
