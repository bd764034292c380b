"""An MCP server's tools as alloy tools, for ``@command(tools=[...])``.

Each is an ordinary alloy tool (timeouts, rails, the response cache and the tool runner treat it
like any other) whose call goes to the server over the process's shared connection
(:mod:`alloy.mcp._connection`):

- its parameters are the tool's ``inputSchema``: sent strict when that converts losslessly (every
  property required, no open-ended object), else non-strict as it is; the ``alloy.mcp`` logger
  says which, and why, for each tool;
- its result is the ``structuredContent`` (the SDK validates it against the ``outputSchema``
  first; a value an alloy server wrapped as ``{"result": ...}`` is unwrapped), else the text
  content;
- an ``isError`` result is reported to the model as any failed tool is;
- ``cacheable=True`` caches the tools the server marks ``readOnlyHint`` and ``idempotentHint``,
  and only those.

What the model needs of a tool (its description and parameters) is read from the server's
listing on first use, so naming tools with ``include=`` starts no server until a call does.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

import mcp_types

from .._schema import strict_schema
from .._tools import Tool, ToolInputError, arguments_json
from .._types import ToolCall, ToolDefinition
from ..errors import ConfigurationError
from ._connection import CONNECTIONS, Connection
from ._described import RESULT_KEY, WRAPPED_META

log = logging.getLogger("alloy.mcp")


class McpToolError(Exception):
    """The MCP server answered the call with ``isError``; the message is the server's text."""


class McpTool(Tool[Any]):
    """One tool of an MCP server, offered to the model under ``name``."""

    def __init__(
        self, connection: Connection, remote_name: str, name: str, *, cacheable: bool = False
    ) -> None:
        self.connection = connection
        #: The tool's name on its server (``name`` is what the model sees, prefix included).
        self.remote_name = remote_name
        self._wants_cache = cacheable
        self._listed: mcp_types.Tool | None = None
        self._definition: ToolDefinition | None = None
        self._made = False  # until Tool.__init__ is done, nothing may read the listing

        async def call(arguments: dict[str, Any]) -> Any:
            return await self.call(arguments)

        call.__name__ = name
        super().__init__(call, name=name)
        self._made = True

    # -- what is read from the server's listing on first use -------------------------------
    @property
    def listed(self) -> mcp_types.Tool:
        """The tool as the server lists it (the server starts now if it has not)."""
        if self._listed is None:
            try:
                tools = CONNECTIONS.run(self.connection.list_tools())
            except Exception as error:
                raise ConfigurationError(
                    f"MCP server {self.connection.name} could not list its tools: "
                    f"{type(error).__name__}: {error}"
                ) from None
            found = tools.get(self.remote_name)
            if found is None:
                raise ConfigurationError(
                    f"MCP server {self.connection.name} has no tool named {self.remote_name!r}; "
                    f"it has: {', '.join(sorted(tools)) or 'none'}"
                )
            self._listed = found
        return self._listed

    @property
    def definition(self) -> ToolDefinition:
        if self._definition is None:
            self._definition = parameters_of(self.name, self.description, self.listed)
        return self._definition

    @definition.setter
    def definition(self, value: ToolDefinition) -> None:
        pass  # Tool.__init__ sets one from the placeholder function: the listing's wins

    @property
    def description(self) -> str:
        if not self._made:
            return self.name
        listed = self.listed
        return listed.description or listed.title or self.remote_name

    @description.setter
    def description(self, value: str) -> None:
        pass

    @property
    def cacheable(self) -> bool:
        """Whether a call with a response cache may answer it from the store: asked for, and
        the server says the tool only reads and gives the same answer for the same arguments."""
        return self._wants_cache and eligible_for_cache(self.listed)

    @cacheable.setter
    def cacheable(self, value: bool) -> None:
        pass

    # -- a call from the model -----------------------------------------------------------------
    def bind(self, call: ToolCall) -> inspect.BoundArguments:
        """The model's arguments as one JSON object, checked by the server (its errors reach
        the model as the server words them)."""
        arguments = json.loads(arguments_json(call))
        if not isinstance(arguments, dict):
            raise ToolInputError("arguments must be a JSON object")
        return self.signature.bind(arguments)

    async def call(self, arguments: dict[str, Any]) -> Any:
        """Call the tool on its server: the structured value, else the text."""
        result = await CONNECTIONS.arun(self.connection.call_tool(self.remote_name, arguments))
        return value_of(self.listed, result)

    def __reduce__(self) -> Any:
        """Pickled as where its server is, so a process pool's worker opens its own connection.
        A server object (in memory) or one reached with headers (which may hold a key, and a
        key is never pickled) cannot go: make the tools in the process that uses them."""
        where = self.connection.where
        if not isinstance(where, str) or self.connection.headers:
            raise TypeError(
                f"MCP tool {self.name!r} cannot be pickled: its server is "
                f"{'reached with headers' if isinstance(where, str) else 'an object in memory'}"
                "; make the tools with mcp_tools() in the process that uses them"
            )
        return (_unpickled, (where, self.remote_name, self.name, self._wants_cache))


def _unpickled(where: str, remote_name: str, name: str, cacheable: bool) -> McpTool:
    """An MCP tool pickled in another process, on this process's connection to its server."""
    return McpTool(CONNECTIONS.get(where), remote_name, name, cacheable=cacheable)


def value_of(listed: mcp_types.Tool, result: mcp_types.CallToolResult) -> Any:
    """A tool result as the model reads it, or McpToolError for an ``isError`` result."""
    if result.is_error:
        raise McpToolError(text_of(result) or "the MCP tool failed and said nothing more")
    if result.structured_content is not None:
        value = result.structured_content
        meta = listed.meta or {}
        if meta.get(WRAPPED_META) and isinstance(value, dict) and RESULT_KEY in value:
            return value[RESULT_KEY]
        return value
    return text_of(result)


def text_of(result: mcp_types.CallToolResult) -> str:
    """The result's text blocks, one after another; other blocks are named, not inlined."""
    parts = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{block.type} content]")
    return "\n".join(parts)


def eligible_for_cache(listed: mcp_types.Tool) -> bool:
    hints = listed.annotations
    return bool(hints and hints.read_only_hint and hints.idempotent_hint)


def parameters_of(name: str, description: str, listed: mcp_types.Tool) -> ToolDefinition:
    """The tool's parameters: strict when its input schema converts losslessly, else as they
    are (non-strict); logged either way."""
    schema = dict(listed.input_schema)
    why = _not_lossless(schema)
    if why is None:
        try:
            strict = strict_schema(schema, type_name=f"MCP tool {name!r} parameters")
        except ConfigurationError as error:
            why = str(error).split(":", 1)[-1].split(". ")[0].strip()
        else:
            log.info("MCP tool %s: strict parameters", name)
            return ToolDefinition(name, description, strict, strict=True)
    log.info("MCP tool %s: non-strict parameters (%s)", name, why)
    loose = {key: value for key, value in schema.items() if key != "title"}
    return ToolDefinition(name, description, loose, strict=False)


def _not_lossless(schema: Any, path: str = "$") -> str | None:
    """Why strict mode would change what ``schema`` accepts (an optional property would become
    a required, nullable one), or None when it would not."""
    if isinstance(schema, Mapping):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            optional = set(properties) - set(schema.get("required", ()))
            if optional:
                return f"optional properties at {path}: {', '.join(sorted(optional))}"
        for key, value in schema.items():
            found = _not_lossless(value, f"{path}.{key}" if key != "properties" else path)
            if found:
                return found
    elif isinstance(schema, list):
        for item in schema:
            found = _not_lossless(item, path)
            if found:
                return found
    return None


_NOT_A_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def tool_name(prefix: str, remote: str) -> str:
    """The name the model sees: ``prefix`` + the server's name, in the characters providers
    allow (others become ``_``), at most 64 long."""
    return _NOT_A_NAME.sub("_", f"{prefix}{remote}")[:64]


def mcp_tools(
    server: Any,
    *,
    prefix: str = "",
    include: Iterable[str] | None = None,
    headers: Mapping[str, str] | None = None,
    cacheable: bool = False,
) -> list[Tool[Any]]:
    """The tools of MCP server ``server`` as alloy tools, for ``@command(tools=...)``.

    ``server`` is ``"stdio:COMMAND LINE"``, an ``http(s)://`` Streamable HTTP URL (with
    ``headers=`` sent on each request), or an ``MCPServer``/``Server`` object (in memory).
    ``include`` names the server's own tool names to offer (all of them when None, which lists
    the server now); the model sees each as ``prefix`` + its name. ``cacheable=True`` lets a
    call with a response cache answer the tools the server marks read-only and idempotent from
    the store.
    """
    if not isinstance(prefix, str):
        raise ConfigurationError(f"prefix must be a string, got {prefix!r}")
    if isinstance(include, str):
        raise ConfigurationError(f"include= takes a list of tool names, got {include!r}")
    connection = CONNECTIONS.get(server, headers)
    names = (
        list(include) if include is not None else sorted(CONNECTIONS.run(connection.list_tools()))
    )
    return [
        McpTool(connection, remote, tool_name(prefix, remote), cacheable=cacheable)
        for remote in dict.fromkeys(names)
    ]
