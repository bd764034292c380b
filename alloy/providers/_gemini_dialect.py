"""The Gemini schema dialect: alloy's canonical schema -> what ``responseJsonSchema`` accepts.

Gemini's ``responseJsonSchema`` (and a function's ``parametersJsonSchema``) takes a keyword subset
(``providers.md`` 4.3): ``$id``, ``$defs``, ``$ref``, ``$anchor``, ``type`` (a list expresses
nullable), ``format``, ``title``, ``description``, ``enum`` (strings and numbers), ``items``,
``prefixItems``, ``minItems``, ``maxItems``, ``minimum``, ``maximum``, ``anyOf``, ``oneOf``,
``properties``, ``additionalProperties``, ``required`` and ``propertyOrdering``; a ``$ref`` may
carry no sibling keyword except ``$``-prefixed ones. This pure function rewrites the rest:

- ``const`` of a string or number becomes a one-value ``enum``; ``oneOf`` becomes ``anyOf``
  (Gemini reads them the same); a single-schema ``allOf`` becomes a single-schema ``anyOf``;
- a ``$ref`` with siblings (a description, say) becomes ``{"anyOf": [{"$ref": ...}], ...}``,
  which means the same and keeps the description;
- ``discriminator`` is dropped: it annotates a union whose members already tell themselves apart;
- every other keyword (``minLength``, ``maxLength``, ``pattern``, ``exclusiveMinimum``,
  ``multipleOf``, ``uniqueItems``, an ``enum``/``const`` of booleans or null, ...) is removed and
  appended to ``description`` as ``{key: value, ...}`` so the model still sees it.

Nothing is lost for correctness: the engine validates every answer against the canonical schema
and re-asks when a moved constraint was not met. ``property_ordering=True`` adds
``propertyOrdering`` to every object, which Gemini 2.0 models need to keep the declared order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["GEMINI_KEYWORDS", "gemini_schema"]

#: Keywords ``responseJsonSchema`` supports (``google.genai.types.GenerateContentConfig``).
GEMINI_KEYWORDS = frozenset(
    {
        "$id",
        "$defs",
        "$ref",
        "$anchor",
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
    }
)

#: Annotations that constrain nothing the union members do not already say.
_DROPPED = frozenset({"discriminator"})


def gemini_schema(schema: Mapping[str, Any], *, property_ordering: bool = False) -> dict[str, Any]:
    """Return the Gemini-dialect copy of ``schema`` (the input is not modified)."""
    return _Dialect(property_ordering).node(schema)


class _Dialect:
    def __init__(self, property_ordering: bool) -> None:
        self.property_ordering = property_ordering

    def node(self, schema: Any) -> Any:
        if not isinstance(schema, Mapping):
            return schema
        out: dict[str, Any] = {}
        moved: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "$ref":
                continue
            if key == "$defs" and isinstance(value, Mapping):
                out[key] = {name: self.node(sub) for name, sub in value.items()}
            elif key in ("anyOf", "oneOf") and isinstance(value, list):
                out.setdefault("anyOf", []).extend(self.node(sub) for sub in value)
            elif key == "allOf" and isinstance(value, list) and len(value) == 1:
                out.setdefault("anyOf", []).append(self.node(value[0]))
            elif key == "properties" and isinstance(value, Mapping):
                out[key] = {name: self.node(sub) for name, sub in value.items()}
                if self.property_ordering and value and "propertyOrdering" not in schema:
                    out["propertyOrdering"] = list(value)
            elif key in ("items", "additionalProperties"):
                out[key] = self.node(value)
            elif key == "prefixItems" and isinstance(value, list):
                out[key] = [self.node(sub) for sub in value]
            elif key == "enum":
                if isinstance(value, list) and value and all(_enumerable(v) for v in value):
                    out[key] = list(value)
                else:
                    moved[key] = value
            elif key == "const":
                if _enumerable(value) and "enum" not in schema:
                    out["enum"] = [value]
                else:
                    moved[key] = value
            elif key in GEMINI_KEYWORDS:
                out[key] = value
            elif key not in _DROPPED:
                moved[key] = value
        if moved:
            note = "{" + ", ".join(f"{k}: {_show(v)}" for k, v in moved.items()) + "}"
            description = out.get("description")
            out["description"] = f"{description}\n\n{note}" if description else note

        ref = schema.get("$ref")
        if ref is None:
            return out
        if any(not key.startswith("$") for key in out):
            # A $ref takes no siblings: wrap it, so the description (etc.) survives.
            out.setdefault("anyOf", []).insert(0, {"$ref": ref})
            return out
        return {"$ref": ref, **out}


def _enumerable(value: object) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
