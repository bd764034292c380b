"""``alloy mcp module[:command]``: serve commands as MCP tools over stdio (install
``alloy[mcp]``). An MCP client starts it as a subprocess and talks over its stdin and stdout."""

from __future__ import annotations

import argparse

from ._shared import UsageError, Verbs


def add_parser(verbs: Verbs) -> None:
    mcp = verbs.add_parser(
        "mcp",
        help="serve commands as MCP tools over stdio",
        description="Serve every command of a module (or the one named as module:command) as "
        "an MCP tool over stdio: name, docstring, input and output schemas, structured "
        "results. An MCP client (an IDE, an agent) starts this as its server command.",
    )
    mcp.add_argument("target", help="module, module:command or path/to/file.py[:command]")
    mcp.add_argument(
        "--prefix", default="", help="put this in front of every tool name (e.g. 'billing_')"
    )
    mcp.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    try:
        from ..mcp import commands_in, mcp_server, serve_stdio
    except ImportError as exc:
        raise UsageError(f"alloy mcp needs its extra: pip install 'alloy[mcp]' ({exc})") from None
    serve_stdio(mcp_server(commands_in(args.target), prefix=args.prefix))
    return 0
