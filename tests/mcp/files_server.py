"""A small MCP server written with the SDK's own ``MCPServer``: the server side of alloy's
client tests (in memory, and once over stdio as ``python -m tests.mcp.files_server``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations


@dataclass
class Stats:
    lines: int
    words: int


TEXTS = {"a.txt": "one two\nthree", "b.txt": "four"}


def files_server(starts: list[int] | None = None) -> MCPServer:
    """A server of three files; each start of it is counted in ``starts``."""

    @asynccontextmanager
    async def counted(server: Any) -> AsyncIterator[dict[str, Any]]:
        if starts is not None:
            starts.append(1)
        yield {}

    files = MCPServer("files", lifespan=counted)

    @files.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
    def read_file(path: str) -> str:
        """Read a file's text."""
        if path not in TEXTS:
            raise ToolError(f"no file {path!r}: try one of {sorted(TEXTS)}")
        return TEXTS[path]

    @files.tool(annotations=ToolAnnotations(read_only_hint=True))
    def stats(path: str) -> Stats:
        """Count a file's lines and words."""
        text = TEXTS[path]
        return Stats(len(text.splitlines()), len(text.split()))

    @files.tool(structured_output=False)
    def head(path: str, lines: int = 1) -> str:
        """The first lines of a file."""
        return "\n".join(TEXTS[path].splitlines()[:lines])

    return files


if __name__ == "__main__":
    files_server().run()
