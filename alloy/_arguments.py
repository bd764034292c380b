"""A command's arguments as one pydantic model: what a JSON object of arguments is checked
against wherever a command is called by name with JSON (``alloy serve``'s
``POST /commands/{name}`` and an MCP ``tools/call`` of a served command).

One field per parameter of the prompt function, with its type and default, and no other field
(an unknown field is an error, never ignored). Its JSON Schema is the command's input schema in
``/openapi.json`` and in an MCP tool listing alike.
"""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from ._command import Command
from .errors import ConfigurationError


@dataclass(frozen=True)
class Arguments:
    """A command's arguments model and how a validated instance becomes the call's arguments."""

    model: type[BaseModel]
    positional: tuple[str, ...]
    keywords: tuple[str, ...]

    def of(self, body: BaseModel) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The call's positional and keyword arguments, validated values (a dataclass
        parameter gets its dataclass)."""
        args = tuple(getattr(body, name) for name in self.positional)
        kwargs = {name: getattr(body, name) for name in self.keywords}
        return args, kwargs


def camel(name: str) -> str:
    """``read_invoice`` -> ``ReadInvoice``: the stem of a command's model names."""
    return "".join(
        part[:1].upper() + part[1:] for part in name.replace("-", "_").split("_") if part
    )


def arguments_of(name: str, cmd: Command[..., Any]) -> Arguments:
    """The arguments model of command ``name`` (``<Name>Request``), or a ConfigurationError
    naming what a JSON object cannot carry."""
    fn = getattr(cmd, "__wrapped__", cmd)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise ConfigurationError(f"cannot read the type hints of {cmd.name}: {exc}") from None
    fields: dict[str, Any] = {}
    positional: list[str] = []
    keywords: list[str] = []
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ConfigurationError(
                f"{cmd.name} takes {'*' if param.kind is param.VAR_POSITIONAL else '**'}"
                f"{param.name}, which a JSON body cannot name: give it named parameters"
            )
        if param.name.startswith("_"):
            raise ConfigurationError(
                f"{cmd.name}'s parameter {param.name!r} starts with '_', which a JSON body "
                "field cannot: rename it"
            )
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
        (positional if param.kind is param.POSITIONAL_ONLY else keywords).append(param.name)
    try:
        model = create_model(
            f"{camel(name)}Request",
            __config__=ConfigDict(extra="forbid", allow_inf_nan=False),
            __doc__=f"Arguments of the {name} command.",
            **fields,
        )
        model.model_json_schema()
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError, NameError) as exc:
        raise ConfigurationError(
            f"{cmd.name}'s parameters cannot be a JSON request body: {exc}"
        ) from None
    return Arguments(model, tuple(positional), tuple(keywords))
