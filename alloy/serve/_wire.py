"""Reading the parts of the OpenAI wire format that Chat Completions and Responses share.

Every field is either understood or refused: a request naming a field this server does not
support gets a 400 naming it, never an answer that silently ignored it. A field that asks for
nothing (``null``, an empty list or object, or OpenAI's default) is taken as absent.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

from .._nesting import MAX_NESTING, check_nesting
from .._output import SchemaOutput
from .._text import lone_surrogate_at
from .._types import Message, ToolDefinition
from ._errors import ServeError, invalid, unsupported
from ._proxy import ChatCall
from ._rails import RailConfig


def new_id(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


def now() -> int:
    return int(time.time())


def read_body(raw: bytes) -> Any:
    """A request body as JSON; a 400 for one that is not UTF-8, not JSON, nested deeper than
    alloy reads any JSON (:data:`~alloy._nesting.MAX_NESTING` levels), or holding text that
    cannot be sent on (a lone surrogate, named by its field)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise invalid("the body is not UTF-8 text") from None
    try:
        check_nesting(text)
        value = json.loads(text)
    except RecursionError:
        raise invalid(f"the body is JSON nested deeper than {MAX_NESTING} levels") from None
    except ValueError:
        raise invalid("the body is not valid JSON") from None
    if _SURROGATE_ESCAPE.search(text):
        refuse_lone_surrogates(value)
    return value


#: A JSON escape of a UTF-16 surrogate (``\ud800`` to ``\udfff``): text decoded from UTF-8
#: holds a surrogate only through one, so a body without any is not walked for them.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def refuse_lone_surrogates(value: Any) -> None:
    """A 400 naming the first field whose text or name holds a lone surrogate (an escape such
    as ``"\\ud800"`` that UTF-8 cannot encode, so no provider could be sent it)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, param = stack.pop()
        if isinstance(item, str):
            index = lone_surrogate_at(item)
            if index is not None:
                where = param or "body"
                raise invalid(
                    f"{where!r} holds a lone surrogate ({item[index]!r}) at index {index}, "
                    "which is not text UTF-8 can encode",
                    where,
                )
        elif isinstance(item, dict):
            for key, field in item.items():
                stack.append((key, f"{param}.{key}" if param else str(key)))
                stack.append((field, f"{param}.{key}" if param else key))
        elif isinstance(item, list):
            stack.extend((field, f"{param}[{index}]") for index, field in enumerate(item))


#: OpenAI's defaults for fields this server does not take: sent as the default, such a field
#: asks for nothing (clients send them as they are), so it is taken as absent.
DEFAULTS: Mapping[str, Any] = {
    "top_p": 1,
    "frequency_penalty": 0,
    "presence_penalty": 0,
    "logprobs": False,
    "top_logprobs": 0,
    "store": False,
    "background": False,
    "truncation": "disabled",
    "service_tier": "auto",
    "verbosity": "medium",
}


def asks_nothing(key: str, value: Any) -> bool:
    """Whether a field's value asks for nothing: null, an empty list, object or text, or
    OpenAI's default for it (:data:`DEFAULTS`)."""
    if value is None or (isinstance(value, (list, dict, str)) and not value):
        return True
    if isinstance(value, bool) or isinstance(DEFAULTS.get(key), bool):
        return type(value) is type(DEFAULTS.get(key)) and value == DEFAULTS[key]
    return key in DEFAULTS and value == DEFAULTS[key]


def given(body: Mapping[str, Any], allowed: Collection[str], where: str = "") -> dict[str, Any]:
    """The non-null fields of ``body``; a 400 for any field not in ``allowed`` unless it asks
    for nothing (``include: []``, ``top_p: 1``: :func:`asks_nothing`)."""
    fields = {}
    for key, value in body.items():
        if value is None:
            continue
        if key not in allowed:
            if asks_nothing(key, value):
                continue
            raise unsupported(f"{where}{key}")
        fields[key] = value
    return fields


def as_object(value: Any, param: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise invalid(f"Invalid type for {param!r}: expected an object", param)
    return value


def as_list(value: Any, param: str) -> list[Any]:
    if not isinstance(value, list):
        raise invalid(f"Invalid type for {param!r}: expected an array", param)
    return value


def as_text(value: Any, param: str) -> str:
    if not isinstance(value, str):
        raise invalid(f"Invalid type for {param!r}: expected a string", param)
    return value


def temperature(fields: Mapping[str, Any]) -> float | None:
    value = fields.get("temperature")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 2:
        raise invalid("'temperature' must be a number from 0 to 2", "temperature")
    return float(value)


def token_limit(fields: Mapping[str, Any], *names: str) -> int | None:
    for name in names:
        value = fields.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise invalid(f"{name!r} must be a positive integer", name)
        return value
    return None


def flag(fields: Mapping[str, Any], name: str, *, default: bool = False) -> bool:
    value = fields.get(name, default)
    if not isinstance(value, bool):
        raise invalid(f"{name!r} must be true or false", name)
    return value


def rail_config(fields: Mapping[str, Any], configs: Mapping[str, RailConfig]) -> RailConfig:
    """The RailConfig the request's ``model`` names; 404 (as OpenAI answers) when none is."""
    name = fields.get("model")
    if not isinstance(name, str) or not name:
        raise invalid("you must provide a model parameter", "model")
    config = configs.get(name)
    if config is None:
        known = ", ".join(sorted(configs)) or "none"
        raise ServeError(
            404,
            f"The model {name!r} does not exist on this server (its rail configs: {known})",
            type="model_not_found",
            param="model",
        )
    return config


def tool_definition(
    spec: Mapping[str, Any], param: str, allowed: Collection[str]
) -> ToolDefinition:
    """A function tool's name, description, parameters and strictness."""
    fields = given(spec, allowed, f"{param}.")
    name = as_text(fields.get("name"), f"{param}.name")
    parameters = fields.get("parameters", {"type": "object", "properties": {}})
    as_object(parameters, f"{param}.parameters")
    description = fields.get("description", "")
    return ToolDefinition(
        name=name,
        description=as_text(description, f"{param}.description"),
        parameters=parameters,
        strict=flag(fields, "strict"),
    )


def tool_choice(
    fields: Mapping[str, Any], tools: tuple[ToolDefinition, ...], nested: bool
) -> tuple[tuple[ToolDefinition, ...], str | None]:
    """The tools offered and the forced choice (``"required"``, a tool's name, or None).

    ``auto`` (the default) offers the tools, ``none`` offers none, ``required`` forces some
    tool and ``{"type": "function", ...}`` forces the one it names: under ``function.name``
    (Chat Completions, ``nested``) or ``name`` (Responses). Anything else is refused.
    """
    choice = fields.get("tool_choice", "auto")
    if choice == "auto":
        return tools, None
    if choice == "none":
        return (), None
    if choice == "required":
        if not tools:
            raise invalid(
                "tool_choice 'required' needs at least one tool in 'tools'", "tool_choice"
            )
        return tools, "required"
    if isinstance(choice, Mapping) and choice.get("type") == "function":
        if nested:
            allowed = given(choice, {"type", "function"}, "tool_choice.")
            function = given(
                as_object(allowed.get("function"), "tool_choice.function"),
                {"name"},
                "tool_choice.function.",
            )
            param = "tool_choice.function.name"
        else:
            function = given(choice, {"type", "name"}, "tool_choice.")
            param = "tool_choice.name"
        name = as_text(function.get("name"), param)
        if name not in {tool.name for tool in tools}:
            raise invalid(f"tool_choice names {name!r}, which is not one of 'tools'", param)
        return tools, name
    raise unsupported("tool_choice", "use 'auto', 'none', 'required' or a function tool by name")


def chat_call(
    fields: Mapping[str, Any],
    config: RailConfig,
    conversation: tuple[str | None, tuple[Message, ...]],
    *,
    tool: Callable[[Any, str], ToolDefinition],
    nested: bool,
    output: SchemaOutput | None,
    token_fields: tuple[str, ...],
    stream: bool,
    api_key: str | None,
) -> ChatCall:
    """The call a body asks for, with the fields both APIs read alike: ``tools`` (each read
    by ``tool``), ``tool_choice``, ``temperature``, the token limit (the first of
    ``token_fields``) and ``parallel_tool_calls`` (true unless false)."""
    tools = tuple(
        tool(spec, f"tools[{index}]")
        for index, spec in enumerate(as_list(fields.get("tools", []), "tools"))
    )
    tools, forced = tool_choice(fields, tools, nested=nested)
    system, messages = conversation
    return ChatCall(
        config=config,
        messages=messages,
        system=system,
        tools=tools,
        output=output,
        temperature=temperature(fields),
        max_tokens=token_limit(fields, *token_fields),
        stream=stream,
        api_key=api_key,
        tool_choice=forced,
        parallel_tool_calls=flag(fields, "parallel_tool_calls", default=True),
    )


def text_parts(
    content: Any, param: str, kinds: Collection[str], keys: Collection[str], refusal: str
) -> str:
    """A message's text: a string, or content parts of the ``kinds`` given, whose ``keys``
    are understood; another kind of part is refused with ``refusal``."""
    if isinstance(content, str):
        return content
    pieces = []
    for index, part in enumerate(as_list(content, param)):
        where = f"{param}[{index}]"
        fields = given(as_object(part, where), keys, f"{where}.")
        if fields.get("type") not in kinds:
            raise unsupported(f"{where}.type", refusal)
        pieces.append(as_text(fields.get("text"), f"{where}.text"))
    return "".join(pieces)


def arguments(raw: Any, param: str) -> dict[str, Any]:
    """A tool call's JSON arguments as an object."""
    text = as_text(raw, param)
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        raise invalid(f"{param!r} is not valid JSON", param) from None
    if not isinstance(value, dict):
        raise invalid(f"{param!r} must be a JSON object", param)
    return value
