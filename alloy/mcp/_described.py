"""A command as an MCP tool: its name, description, input and output schemas and hints.

The input schema is the command's arguments model (:mod:`alloy._arguments`), the one
``POST /commands/{name}`` of ``alloy serve`` validates. The output schema is the output type's
JSON Schema, as ``/openapi.json`` publishes the ``value`` of the command's response. MCP's
``structuredContent`` must be an object for clients before protocol 2026-07-28, so a value whose
schema is not an object (a scalar, a list) is wrapped as ``{"result": ...}``, as the SDK's own
``MCPServer`` does, and the tool's ``_meta`` says so (``"alloy/wrapped": true``): a client
never has to guess whether to unwrap.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import mcp_types
from pydantic import TypeAdapter
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from .._arguments import Arguments, arguments_of
from .._command import Command
from .._schema import is_object_root
from ..errors import ConfigurationError

#: The tool ``_meta`` key saying whether the value is wrapped as ``{"result": ...}``.
WRAPPED_META = "alloy/wrapped"
#: The key a wrapped value sits under (the SDK's own).
RESULT_KEY = "result"


@dataclass(frozen=True)
class ServedCommand:
    """One command served as one MCP tool."""

    command: Command[..., Any]
    arguments: Arguments
    #: Validates and dumps the command's value (aliases, as the output schema names them).
    value: TypeAdapter[Any]
    #: Whether structured content is ``{"result": value}`` rather than the value itself.
    wrapped: bool
    tool: mcp_types.Tool

    def structured(self, value: Any) -> Any:
        """The call's value as the tool's ``structuredContent``."""
        dumped = self.value.dump_python(value, mode="json", by_alias=True)
        return {RESULT_KEY: dumped} if self.wrapped else dumped


def output_schema(adapter: TypeAdapter[Any]) -> tuple[dict[str, Any], bool]:
    """The tool's output schema from the value's schema, and whether it is wrapped."""
    schema = adapter.json_schema(mode="serialization")
    if is_object_root(schema):
        ref = schema.get("$ref")
        if isinstance(ref, str):  # a recursive type: the root is a reference into $defs
            defs = schema["$defs"]
            return {**defs[ref.removeprefix("#/$defs/")], "$defs": defs}, False
        return schema, False
    inner = {key: value for key, value in schema.items() if key != "$defs"}
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {RESULT_KEY: inner},
        "required": [RESULT_KEY],
    }
    if "$defs" in schema:
        wrapped["$defs"] = schema["$defs"]
    return wrapped, True


def describe(name: str, cmd: Command[..., Any], prefix: str = "") -> ServedCommand:
    """Command ``name`` as a tool named ``prefix + name``; a ConfigurationError says why it
    cannot be one."""
    arguments = arguments_of(name, cmd)
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(cmd.output_type.value_type)
        schema, wrapped = output_schema(adapter)
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
        raise ConfigurationError(
            f"{cmd.name}'s output type {cmd.output_type.expected} has no JSON Schema: {exc}"
        ) from None
    doc = inspect.getdoc(getattr(cmd, "__wrapped__", cmd)) or ""
    tool = mcp_types.Tool(
        name=f"{prefix}{name}",
        description=doc.strip() or None,
        input_schema=arguments.model.model_json_schema(),
        output_schema=schema,
        # A command that offers the model no tools only reads: it asks a model and answers.
        annotations=mcp_types.ToolAnnotations(read_only_hint=True) if not cmd.tools else None,
        meta={WRAPPED_META: wrapped},
    )
    return ServedCommand(cmd, arguments, adapter, wrapped, tool)
