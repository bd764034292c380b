"""What the MCP suite serves: one command, as alloy serves it and as a bare ``MCPServer`` would.

``python -m alloy mcp benchmarks/mcp_served.py:lookup`` is alloy's side over stdio;
``python benchmarks/mcp_served.py`` runs the baseline, the SDK's ``MCPServer`` with a tool that
calls the same command and returns its value. Run either with ``ALLOY_MODEL=offline`` (the
answer is made locally, so both sides do the same work but the MCP layer).

``python benchmarks/mcp_served.py --tools`` runs a plain ``MCPServer`` tool (no command) for
the client-side rows over stdio.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from mcp.server import MCPServer

from alloy import command


@dataclass
class Entry:
    """A typed answer."""

    word: str
    length: int


@command(output=Entry, retries=0)
def lookup(word: str) -> str:
    """Look a word up."""
    return f"Describe the word {word}"


def bare_server() -> MCPServer:
    """The baseline of the served rows: the SDK's own server, calling the command itself."""
    server = MCPServer("bare")

    @server.tool(name="lookup")
    async def lookup_tool(word: str) -> Entry:
        """Look a word up."""
        return await lookup.acall(word)

    return server


def tools_server() -> MCPServer:
    """A plain tool, for the client-side rows: alloy's client against the SDK's."""
    server = MCPServer("tools")

    @server.tool()
    def length(word: str) -> int:
        """The length of a word."""
        return len(word)

    return server


if __name__ == "__main__":
    (tools_server() if "--tools" in sys.argv else bare_server()).run()
