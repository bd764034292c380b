"""MCP both ways: a command that uses an MCP server's tool, and the same command served as a
typed MCP tool and called by the official SDK's client.

The small MCP server is written with the SDK's own `MCPServer` in this file; run with `--server`
it serves over stdio, which is how `mcp_tools("stdio:...")` starts it (on first use, once per
process). `alloy mcp examples/29_mcp.py:describe_file` would serve the command to an IDE or an
agent over stdio; here `mcp.Client` calls it in memory, so the example runs anywhere (on the
offline model unless ALLOY_MODEL says otherwise).
"""

import asyncio
import sys
from dataclasses import dataclass

import mcp
from mcp.server import MCPServer
from mcp_types import ToolAnnotations

from alloy import command
from alloy.mcp import mcp_server, mcp_tools

FILES = {"notes.txt": "Ship the MCP guide on Friday.\nAsk Ada to review it."}


def serve_files() -> None:
    """The small MCP server: one read-only tool, served over stdio until the client leaves."""
    files = MCPServer("files")

    @files.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
    def read_file(path: str) -> str:
        """Read a text file."""
        return FILES.get(path, "")

    files.run()


if "--server" in sys.argv:
    serve_files()
    sys.exit()


@dataclass
class FileSummary:
    title: str
    lines: int
    action_items: list[str]


# The server's read_file tool, offered to the model as fs_read_file.
fs = mcp_tools(f"stdio:{sys.executable} {__file__} --server", prefix="fs_", include=["read_file"])


@command(output=FileSummary, tools=fs)
def describe_file(path: str) -> str:
    """Summarize a text file: its title, how many lines, and the action items in it."""
    return f"Read {path} with the fs_read_file tool, then summarize it."


# 1. The command uses the MCP server's tool like any other tool.
result = describe_file.run("notes.txt")
print("value:", result.value)
print("model requests:", result.transcript.attempts)


# 2. The same command served over MCP, called by mcp.Client.
async def call_it_over_mcp() -> None:
    async with mcp.Client(mcp_server([describe_file])) as client:
        (tool,) = (await client.list_tools()).tools
        print("tool:", tool.name, "| output schema:", sorted(tool.output_schema["properties"]))
        # Not marked read-only: the command has a tool of its own (fs_read_file).
        print("annotations:", tool.annotations, "| wrapped:", tool.meta["alloy/wrapped"])
        answer = await client.call_tool("describe_file", {"path": "notes.txt"})
        print("structured:", answer.structured_content)
        print("usage:", answer.meta["alloy/usage"])
        refused = await client.call_tool("describe_file", {"path": 3})
        print("error result:", refused.is_error, "-", refused.content[0].text)


asyncio.run(call_it_over_mcp())
