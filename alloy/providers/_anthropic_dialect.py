"""The Anthropic schema dialect: alloy's canonical schema -> what Claude's grammar compiler accepts.

Structured outputs (``output_config.format``) and strict tools compile the schema into a grammar
that knows only a keyword subset. This mirrors the SDK's own sanitiser
(``anthropic.lib._parse._transform.transform_schema``), written out here so it is pure, handles
``type`` lists, and does not depend on a private SDK module:

- kept: ``type``, primitive ``enum``/``const`` (the ``type`` is then dropped), ``anyOf``
  (``oneOf`` becomes ``anyOf``), ``allOf``, ``$defs``, ``$ref`` (with no siblings),
  ``description``, ``title``, ``properties``, ``required`` (as given), ``items``;
- objects always get ``additionalProperties: false``;
- string ``format`` only from the allowed list, array ``minItems`` only when it is 0 or 1;
- every other keyword (``minimum``, ``maximum``, ``exclusiveMinimum``, ``multipleOf``,
  ``minLength``, ``maxLength``, ``pattern``, ``maxItems``, ``uniqueItems``, an unsupported
  ``format``, ``default``, …) is removed and appended to ``description`` as ``{key: value, …}``,
  so the model still sees it.

Nothing is lost for correctness: the engine validates every answer against the canonical schema
and re-asks when a moved constraint was not met.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ConfigurationError

__all__ = ["SUPPORTED_STRING_FORMATS", "anthropic_schema"]

SUPPORTED_STRING_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


def anthropic_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Return the Anthropic-dialect copy of ``schema`` (the input is not modified)."""
    return _node(schema, "$")


def _node(schema: Mapping[str, Any], path: str) -> dict[str, Any]:
    if not isinstance(schema, Mapping):
        raise ConfigurationError(f"Schema node at {path} is not an object: {schema!r}")
    rest = dict(schema)
    out: dict[str, Any] = {}

    # $defs first, so a root {"$ref", "$defs"} keeps its definitions.
    defs = rest.pop("$defs", None)
    if isinstance(defs, Mapping):
        out["$defs"] = {name: _node(sub, f"$defs.{name}") for name, sub in defs.items()}
    ref = rest.pop("$ref", None)
    if ref is not None:
        # A $ref node takes no siblings in this dialect (the SDK drops them the same way).
        out["$ref"] = ref
        return out

    kind = rest.pop("type", None)
    any_of = rest.pop("anyOf", None)
    one_of = rest.pop("oneOf", None)
    all_of = rest.pop("allOf", None)

    enum = rest.get("enum")
    if isinstance(enum, list) and enum and all(_is_primitive(v) for v in enum):
        out["enum"] = list(rest.pop("enum"))
    if "const" in rest and _is_primitive(rest["const"]):
        out["const"] = rest.pop("const")
    literal = "enum" in out or "const" in out
    if literal:
        kind = None

    if isinstance(any_of, list):
        out["anyOf"] = [_node(v, f"{path}|{i}") for i, v in enumerate(any_of)]
    elif isinstance(one_of, list):
        out["anyOf"] = [_node(v, f"{path}|{i}") for i, v in enumerate(one_of)]
    elif isinstance(all_of, list):
        out["allOf"] = [_node(v, f"{path}&{i}") for i, v in enumerate(all_of)]
    elif not literal:
        if kind is None:
            raise ConfigurationError(
                f"Schema node at {path} has no 'type', 'anyOf', 'enum' or 'const'; Anthropic "
                "structured output cannot express it"
            )
        out["type"] = kind

    for key in ("description", "title"):
        value = rest.pop(key, None)
        if value is not None:
            out[key] = value

    kinds = set(kind) if isinstance(kind, list) else {kind}
    if "object" in kinds:
        properties = rest.pop("properties", {}) or {}
        out["properties"] = {name: _node(sub, f"{path}.{name}") for name, sub in properties.items()}
        rest.pop("additionalProperties", None)
        out["additionalProperties"] = False
        required = rest.pop("required", None)
        if required is not None:
            out["required"] = list(required)
    if "string" in kinds:
        fmt = rest.pop("format", None)
        if fmt in SUPPORTED_STRING_FORMATS:
            out["format"] = fmt
        elif fmt:
            rest["format"] = fmt  # left over: goes to the description
    if "array" in kinds:
        items = rest.pop("items", None)
        if isinstance(items, Mapping):
            out["items"] = _node(items, f"{path}[]")
        min_items = rest.pop("minItems", None)
        if min_items in (0, 1) and not isinstance(min_items, bool):
            out["minItems"] = min_items
        elif min_items is not None:
            rest["minItems"] = min_items

    if rest:
        moved = "{" + ", ".join(f"{key}: {value}" for key, value in rest.items()) + "}"
        description = out.get("description")
        out["description"] = f"{description}\n\n{moved}" if description is not None else moved
    return out


def _is_primitive(value: object) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))
