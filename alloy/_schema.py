"""Turn pydantic's JSON Schema into alloy's canonical *strict* schema, or explain why it can't be.

Strict means what every provider's structured-output mode demands: each object lists all of its
properties in ``required`` and forbids extra keys. Open-ended objects cannot meet that, so they
are refused here, at decoration time, with guidance, rather than failing at the provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import ConfigurationError

GUIDANCE = (
    "Strict structured output needs a concrete schema: use a @dataclass, TypedDict or pydantic "
    "model with known fields instead."
)

# Keywords pydantic emits that carry no constraint and only cost prompt tokens.
_DROPPED = frozenset({"title", "default", "examples"})


def strict_schema(schema: Mapping[str, Any], *, type_name: str) -> dict[str, Any]:
    """Return a strict copy of ``schema``; raise ConfigurationError naming the offending spot."""
    return _Strictifier(type_name).node(schema, "$")


class _Strictifier:
    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def fail(self, path: str, problem: str) -> ConfigurationError:
        where = "" if path == "$" else f" at {path}"
        return ConfigurationError(
            f"Output type {self.type_name} cannot be used in strict mode: {problem}{where}. {GUIDANCE}"
        )

    def node(self, schema: Mapping[str, Any], path: str) -> dict[str, Any]:
        if not isinstance(schema, Mapping):
            raise self.fail(path, "schema is not an object")
        if not schema or set(schema) <= {"title", "description", "default"}:
            raise self.fail(path, "it accepts any value (Any or object)")
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key in _DROPPED:
                continue
            if key == "$defs":
                out[key] = {name: self.node(sub, f"$defs.{name}") for name, sub in value.items()}
            elif key == "properties":
                out[key] = {name: self.node(sub, f"{path}.{name}") for name, sub in value.items()}
            elif key in ("items", "not", "contains") and isinstance(value, Mapping):
                out[key] = self.node(value, f"{path}[]")
            elif key in ("anyOf", "oneOf", "allOf"):
                out[key] = [self.node(sub, f"{path}|{i}") for i, sub in enumerate(value)]
            elif key == "prefixItems":
                raise self.fail(
                    path, "fixed-length tuples have no strict schema; use list[T] or a dataclass"
                )
            elif key == "additionalProperties":
                if value not in (False,):
                    raise self.fail(path, "it is an open-ended mapping (dict or dict[str, X])")
            elif key in ("patternProperties", "unevaluatedProperties"):
                raise self.fail(path, "it is an open-ended mapping")
            else:
                out[key] = value
        if out.get("format") == "binary":
            raise self.fail(path, "bytes cannot be produced as JSON text; use str")
        if _is_object(out):
            if "properties" not in out:
                raise self.fail(path, "it is an object without declared fields (dict)")
            out["required"] = list(out["properties"])
            out["additionalProperties"] = False
        return out


def _is_object(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind)


def wrap_value(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Wrap a non-object schema as ``{"value": ...}``: providers need an object at the root."""
    inner = {k: v for k, v in schema.items() if k != "$defs"}
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"value": inner},
        "required": ["value"],
        "additionalProperties": False,
    }
    if "$defs" in schema:
        wrapped["$defs"] = schema["$defs"]
    return wrapped


def is_object_root(schema: Mapping[str, Any]) -> bool:
    """True when the schema (after following a root ``$ref``) describes an object."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = schema.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {})
        return _is_object(target)
    return _is_object(schema)
