"""The strict-schema rules each provider enforces, as checks returning the provider's message.

A schema that the real service would reject must be rejected here too, or an adapter bug (a
missing ``additionalProperties: false``, a ``minimum`` sent to Anthropic) only shows up in
production.  The rules follow ``shared/docs/providers.md`` section 4:

* OpenAI strict (``strict: true`` on ``text.format`` / ``response_format`` / a function): the
  root is an object (not ``anyOf``); every object has ``additionalProperties: false`` and lists
  every property in ``required``; ``oneOf``, ``allOf``, ``not``, ``if``/``then``/``else`` and
  ``dependent*`` are not permitted.
* Anthropic (``output_config.format`` and ``strict`` tools): no numeric or length constraints,
  ``minItems`` only 0 or 1, objects must set ``additionalProperties`` to false, no recursion.
* Gemini ``responseJsonSchema``: only the documented keyword list, and a ``$ref`` carries no
  sibling keywords other than ``$``-prefixed ones.

Each check returns ``None`` or the first problem found, worded like the provider's error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

Path = tuple[str, ...]

_OPENAI_FORBIDDEN = (
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
)
_ANTHROPIC_FORBIDDEN = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "multipleOf",
    "maxItems",
)
GEMINI_ALLOWED = frozenset(
    {
        "$id",
        "$defs",
        "$ref",
        "$anchor",
        "$schema",
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
        "property_ordering",
    }
)

# Keywords whose value is a single sub-schema, a list of them, or a name -> schema map.
_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_MAP = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def walk(schema: Any, path: Path = ()) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """Every sub-schema (dict) with its path, parents before children."""
    if not isinstance(schema, Mapping):
        return
    yield path, schema
    for key in _ONE:
        if isinstance(schema.get(key), Mapping):
            yield from walk(schema[key], (*path, key))
    for key in _MANY:
        if isinstance(schema.get(key), list):
            for index, sub in enumerate(schema[key]):
                yield from walk(sub, (*path, key, str(index)))
    for key in _MAP:
        if isinstance(schema.get(key), Mapping):
            for name, sub in schema[key].items():
                yield from walk(sub, (*path, key, str(name)))


def _is_object(node: Mapping[str, Any]) -> bool:
    """Whether a node describes an object (explicitly, or by having properties)."""
    declared = node.get("type")
    if isinstance(declared, list):
        return "object" in declared
    return declared == "object" or ("properties" in node and declared is None)


def _context(path: Path) -> str:
    """A path the way OpenAI prints it: ``('properties', 'a')``."""
    return "(" + ", ".join(repr(p) for p in path) + ("," if len(path) == 1 else "") + ")"


def openai_strict_problem(schema: Any) -> str | None:
    """The OpenAI structured-outputs error detail for ``schema``, or ``None`` if it is valid."""
    if not isinstance(schema, Mapping) or not _is_object(schema) or "anyOf" in schema:
        got = schema.get("type") if isinstance(schema, Mapping) else None
        return f"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{got}\"'."
    for path, node in walk(schema):
        for key in _OPENAI_FORBIDDEN:
            if key in node:
                return f"In context={_context(path)}, '{key}' is not permitted."
        if not _is_object(node):
            continue
        if node.get("additionalProperties") is not False:
            return (
                f"In context={_context(path)}, 'additionalProperties' is required to be "
                "supplied and to be false."
            )
        props = node.get("properties") or {}
        required = node.get("required") or []
        missing = [name for name in props if name not in required]
        if missing:
            return (
                f"In context={_context(path)}, 'required' is required to be supplied and to "
                f"be an array including every key in properties. Missing '{missing[0]}'."
            )
    return None


def anthropic_problem(schema: Any, field: str = "output_config.format.schema") -> str | None:
    """The Anthropic error message for ``schema`` (sent at ``field``), or ``None``."""
    if not isinstance(schema, Mapping):
        return f"{field}: Input should be a valid dictionary"
    for path, node in walk(schema):
        prefix = ".".join((field, *path)) + ": "
        kind = node.get("type")
        kind_name = kind if isinstance(kind, str) else "schema"
        for key in _ANTHROPIC_FORBIDDEN:
            if key in node:
                return f"{prefix}For '{kind_name}' type, property '{key}' is not supported"
        min_items = node.get("minItems")
        if min_items is not None and min_items not in (0, 1):
            return (
                f"{prefix}For 'array' type, 'minItems' values other than 0 or 1 are not supported"
            )
        if _is_object(node) and node.get("additionalProperties") is not False:
            return (
                f"{prefix}For 'object' type, 'additionalProperties' must be explicitly set to false"
            )
        enum = node.get("enum")
        if isinstance(enum, list) and any(isinstance(v, (dict, list)) for v in enum):
            return f"{prefix}Enum values must be strings, numbers, booleans or null"
    if _has_cycle(schema):
        return f"{field}: Recursive schemas are not supported"
    return None


def gemini_problem(
    schema: Any, field: str = "generation_config.response_json_schema"
) -> str | None:
    """The Gemini ``responseJsonSchema`` error for ``schema``, or ``None``."""
    for path, node in walk(schema):
        where = field + "".join(f".{p}" for p in path)
        for key in node:
            if key not in GEMINI_ALLOWED:
                return (
                    f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': "
                    "Cannot find field."
                )
        if "$ref" in node:
            extra = [k for k in node if not k.startswith("$")]
            if extra:
                return (
                    f"Invalid value at '{where}': if $ref is set, no other properties except "
                    f"those starting with '$' may be set (found '{extra[0]}')."
                )
    return None


def _has_cycle(schema: Mapping[str, Any]) -> bool:
    """True if following local ``$ref``s from the root can reach the same definition twice."""

    def refs(node: Any) -> Iterator[str]:
        """Every ``$ref`` under ``node``."""
        for _, sub in walk(node):
            ref = sub.get("$ref")
            if isinstance(ref, str):
                yield ref

    def target(ref: str) -> Any:
        """The sub-schema a local ``$ref`` points to."""
        node: Any = schema
        for part in ref.lstrip("#").split("/"):
            if part:
                node = node.get(part) if isinstance(node, Mapping) else None
        return node

    def visit(ref: str, stack: frozenset[str]) -> bool:
        """Depth-first search for a ``$ref`` reached again while still being expanded."""
        if ref in stack:
            return True
        node = target(ref)
        body = (
            {k: v for k, v in node.items() if k not in ("$defs", "definitions")}
            if isinstance(node, Mapping)
            else None
        )
        return any(visit(r, stack | {ref}) for r in refs(body))

    root_body = {k: v for k, v in schema.items() if k not in ("$defs", "definitions")}
    return any(visit(r, frozenset()) for r in refs(root_body)) or any(
        visit(f"#/{section}/{name}", frozenset())
        for section in ("$defs", "definitions")
        for name in (schema.get(section) or {})
    )
