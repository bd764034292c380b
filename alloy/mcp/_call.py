"""A typed one-off call of an MCP tool: ``alloy.mcp.call(server, "tool", args, output=T)``.

It goes over the process's shared connection to ``server`` (see :mod:`alloy.mcp._connection`),
so calling the same server again costs no new start. The value is the result's
``structuredContent`` (unwrapped from ``{"result": ...}`` where the tool says it is wrapped, or
where ``T`` is not an object and the SDK wrapped it), else its text parsed as JSON (kept as text
for ``output=str``), validated as ``T``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, TypeVar, overload

import mcp_types
from pydantic import TypeAdapter, ValidationError

from .._schema import is_object_root
from ..errors import ConfigurationError, ToolError
from ._connection import CONNECTIONS
from ._described import RESULT_KEY, WRAPPED_META
from ._remote_tools import text_of

T = TypeVar("T")


@overload
async def acall(
    server: Any,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    output: type[T],
    headers: Mapping[str, str] | None = None,
) -> T: ...
@overload
async def acall(
    server: Any,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    output: None = None,
    headers: Mapping[str, str] | None = None,
) -> Any: ...
async def acall(
    server: Any,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    output: Any = None,
    headers: Mapping[str, str] | None = None,
) -> Any:
    """Call ``tool`` on MCP server ``server`` and return its value as ``output`` (the value as
    it came when None). A failed call, an ``isError`` result or a value that is not an
    ``output`` raises ToolError; a server that has no such tool, ConfigurationError."""
    connection = CONNECTIONS.get(server, headers)

    async def listed_and_called() -> tuple[mcp_types.Tool, mcp_types.CallToolResult]:
        listing = await connection.list_tools()
        listed = listing.get(tool)
        if listed is None:
            raise ConfigurationError(
                f"MCP server {connection.name} has no tool named {tool!r}; it has: "
                f"{', '.join(sorted(listing)) or 'none'}"
            )
        return listed, await connection.call_tool(tool, dict(arguments or {}))

    try:  # one trip to the connection's loop
        listed, result = await CONNECTIONS.arun(listed_and_called())
    except ConfigurationError:
        raise
    except Exception as error:
        raise ToolError(
            f"MCP tool {tool!r} on {connection.name} could not be called: "
            f"{type(error).__name__}: {error}",
            tool=tool,
        ) from None
    if result.is_error:
        raise ToolError(
            f"MCP tool {tool!r} on {connection.name} failed: {text_of(result)}", tool=tool
        )
    return typed(listed, result, output, connection.name)


@overload
def call(
    server: Any,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    output: type[T],
    headers: Mapping[str, str] | None = None,
) -> T: ...
@overload
def call(
    server: Any,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    output: None = None,
    headers: Mapping[str, str] | None = None,
) -> Any: ...
def call(
    server: Any,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    output: Any = None,
    headers: Mapping[str, str] | None = None,
) -> Any:
    """:func:`acall`, waited for: usable from any thread, inside a running event loop too."""
    return CONNECTIONS.run(acall(server, tool, arguments, output=output, headers=headers))


@functools.lru_cache(maxsize=256)
def _cached_adapter(output: Any) -> TypeAdapter[Any]:
    return TypeAdapter(output)


def adapter_for(output: Any) -> TypeAdapter[Any]:
    """The validator of ``output``, made once per type (building one costs more than a call)."""
    try:
        return _cached_adapter(output)
    except TypeError:  # an unhashable type expression
        return TypeAdapter(output)


def typed(listed: mcp_types.Tool, result: mcp_types.CallToolResult, output: Any, where: str) -> Any:
    """The result's value as ``output``, or ToolError saying why it is not one."""
    adapter = None if output is None else adapter_for(output)
    value = result.structured_content
    try:
        if value is None:
            text = text_of(result)
            if adapter is None or output is str:
                return text
            return adapter.validate_json(text)
        if _wrapped(listed, value, adapter):
            value = value[RESULT_KEY]
        return value if adapter is None else adapter.validate_python(value)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}"
            for e in error.errors(include_url=False)[:5]
        )
        raise ToolError(
            f"MCP tool {listed.name!r} on {where} answered a value that is not "
            f"{getattr(output, '__name__', output)}: {problems}",
            tool=listed.name,
        ) from None


def _wrapped(listed: mcp_types.Tool, value: Any, adapter: TypeAdapter[Any] | None) -> bool:
    """Whether ``value`` is ``{"result": v}`` around the real value: the tool says so (alloy's
    servers), or the value asked for is no object and the value is exactly that (the SDK's)."""
    if not (isinstance(value, dict) and RESULT_KEY in value):
        return False
    if (listed.meta or {}).get(WRAPPED_META):
        return True
    if adapter is None or len(value) != 1:
        return False
    return not is_object_root(adapter.json_schema())
