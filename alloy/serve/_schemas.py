"""Request and response bodies of a command's routes, as pydantic models.

The request body is the prompt function's signature: one field per parameter, with its type
and default, and no other field (an unknown field is a 422, never ignored). The response body
carries the value, typed as the command's output, with the call's usage. Both are built once,
when the app is made, and their JSON Schemas are what ``/openapi.json`` publishes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from .._arguments import arguments_of, camel
from .._command import Command
from .._types import Usage
from ..errors import ConfigurationError


class UsageBody(BaseModel):
    """Tokens the call used, summed over its requests (re-asks and tool rounds included)."""

    input_tokens: int
    output_tokens: int
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0

    @classmethod
    def of(cls, usage: Usage) -> UsageBody:
        return cls(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cached_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            requests=usage.requests,
        )


@dataclass(frozen=True)
class CommandModels:
    """A command's bodies and how a request body becomes its call's arguments."""

    request: type[BaseModel]
    response: type[BaseModel]
    batch: type[BaseModel]
    batch_response: type[BaseModel]
    positional: tuple[str, ...]
    keywords: tuple[str, ...]

    def arguments(self, body: BaseModel) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The call's positional and keyword arguments, validated values (a dataclass
        parameter gets its dataclass)."""
        args = tuple(getattr(body, name) for name in self.positional)
        kwargs = {name: getattr(body, name) for name in self.keywords}
        return args, kwargs


#: Largest batch a request may carry: one request should not hold a worker for an hour.
MAX_BATCH = 1000


def build_models(name: str, cmd: Command[..., Any]) -> CommandModels:
    """The models for command ``name``, or a ConfigurationError naming what cannot be served."""
    arguments = arguments_of(name, cmd)
    request: Any = arguments.model  # a class made at run time: a value to mypy
    base = camel(name)
    value_type = cmd.output_type.value_type
    try:
        response = create_model(
            f"{base}Response",
            __doc__=f"The {name} command's value, with the call's usage.",
            value=(value_type, ...),
            usage=(UsageBody, ...),
            model=(str | None, None),
            attempts=(int, 0),
        )
        response.model_json_schema(mode="serialization")
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
        raise ConfigurationError(
            f"{cmd.name}'s output type {cmd.output_type.expected} cannot be a JSON response "
            f"body: {exc}"
        ) from None
    row = create_model(
        f"{base}BatchRow",
        __doc__="One input's record: its value, or its error.",
        ok=(bool, ...),
        value=(value_type | None, None),
        usage=(UsageBody | None, None),
        error=(dict[str, Any] | None, None),
    )
    batch = create_model(
        f"{base}BatchRequest",
        __config__=ConfigDict(extra="forbid"),
        __doc__=f"Inputs for the {name} command, run at most `concurrency` at once.",
        inputs=(list[request], Field(..., max_length=MAX_BATCH)),
        concurrency=(int, Field(8, ge=1, le=64)),
    )
    batch_response = create_model(
        f"{base}BatchResponse",
        __doc__="One record per input, in input order.",
        results=(list[row], ...),
        ok=(int, ...),
        failed=(int, ...),
    )
    return CommandModels(
        request, response, batch, batch_response, arguments.positional, arguments.keywords
    )
