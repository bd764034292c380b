"""Commands as an MCP server: one tool per command, called through its async driver.

Each ``tools/call`` is its own call of the command (no state is kept on the shared command
object), its arguments checked strictly against the command's arguments model, as
``POST /commands/{name}`` checks a body. Any failure is an ``isError`` result
(:mod:`alloy.mcp._answers`), never a protocol error: the caller's model reads it and reacts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import mcp_types
from mcp.server import Server, ServerRequestContext
from pydantic import ValidationError

from .. import __version__
from .._command import Command
from .._tools import strict_arguments
from ..errors import ConfigurationError
from ._answers import answer, failed, failure, invalid_arguments
from ._described import ServedCommand, describe


def served_commands(
    commands: Mapping[str, Command[..., Any]] | Iterable[Command[..., Any]], prefix: str = ""
) -> dict[str, ServedCommand]:
    """``{tool name: served command}`` for ``{name: command}`` (or commands, named by their
    functions); a ConfigurationError names a command that cannot be a tool."""
    if not isinstance(commands, Mapping):
        named: dict[str, Command[..., Any]] = {}
        for cmd in commands:
            if not isinstance(cmd, Command):
                raise ConfigurationError(f"cannot serve {cmd!r} over MCP: give alloy commands")
            named[cmd.name.rsplit(".", 1)[-1]] = cmd
        commands = named
    served = {}
    for name, cmd in commands.items():
        one = describe(name, cmd, prefix)
        served[one.tool.name] = one
    if not served:
        raise ConfigurationError("no alloy command to serve over MCP")
    return served


def mcp_server(
    commands: Mapping[str, Command[..., Any]] | Iterable[Command[..., Any]],
    *,
    prefix: str = "",
    name: str = "alloy",
) -> Server[Any]:
    """An MCP server (the SDK's low-level ``Server``) offering each command as a tool named
    ``prefix`` + its name. Serve it over stdio (:func:`serve_stdio`), Streamable HTTP
    (``alloy serve --mcp``) or in memory (``mcp.Client(server)``)."""
    served = served_commands(commands, prefix)
    listing = mcp_types.ListToolsResult(tools=[one.tool for one in served.values()])

    async def list_tools(
        ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        one = served.get(params.name)
        if one is None:
            return failure(
                f"No tool named {params.name!r}; this server's tools: {', '.join(served)}."
            )
        try:
            body = strict_arguments(one.arguments.model, json.dumps(params.arguments or {}))
        except ValidationError as error:
            return invalid_arguments(error)
        try:
            args, kwargs = one.arguments.of(body)
            result = await one.command.arun(*args, **kwargs)
            return answer(one, result)
        except Exception as error:
            return failed(error)

    def input_schema(tool: str) -> Mapping[str, Any] | None:
        one = served.get(tool)
        return None if one is None else one.tool.input_schema

    return Server(
        name,
        version=__version__,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schema,
    )
