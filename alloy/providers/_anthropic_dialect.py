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

Claude's grammar compiler refuses recursive schemas, so a recursive type (a tree, a linked list)
is unrolled first: every ``$ref`` into a definition that can reach itself is inlined, down to
:data:`UNROLL_DEPTH` levels of such definitions, and below that the reference is cut: dropped from
an ``anyOf`` (so an optional child is ``null`` there) or else made ``null`` (so a list of children
is empty there). Answers deeper than that are still checked against the canonical schema.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import ConfigurationError

__all__ = ["SUPPORTED_STRING_FORMATS", "anthropic_schema"]

SUPPORTED_STRING_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


#: How many levels of a recursive definition an unrolled schema keeps.
UNROLL_DEPTH = 4


def anthropic_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Return the Anthropic-dialect copy of ``schema`` (the input is not modified)."""
    defs = schema.get("$defs")
    if isinstance(defs, Mapping):
        recursive = _recursive_defs(defs)
        if recursive:
            schema = _Unroller(defs, recursive).root(schema)
    return _node(schema, "$")


_PREFIX = "#/$defs/"


def _refs(node: Any) -> Iterator[str]:
    """The names of the local definitions ``node`` refers to, anywhere inside it."""
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_PREFIX):
            yield ref[len(_PREFIX) :]
        for key, value in node.items():
            if key != "$defs":
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _recursive_defs(defs: Mapping[str, Any]) -> frozenset[str]:
    """The definitions that can reach themselves through ``$ref``s."""
    edges = {name: set(_refs(body)) for name, body in defs.items()}
    found = set()
    for start in edges:
        seen: set[str] = set()
        todo = list(edges[start])
        while todo:
            name = todo.pop()
            if name == start:
                found.add(start)
                break
            if name not in seen and name in edges:
                seen.add(name)
                todo.extend(edges[name])
    return frozenset(found)


class _Unroller:
    """Inline the recursive definitions down to UNROLL_DEPTH levels; cut the references below."""

    _CUT: Any = object()

    def __init__(self, defs: Mapping[str, Any], recursive: frozenset[str]) -> None:
        self.defs = defs
        self.recursive = recursive

    def root(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        out = self.node({k: v for k, v in schema.items() if k != "$defs"}, 0)
        kept = {n: self.node(b, 0) for n, b in self.defs.items() if n not in self.recursive}
        if kept:
            out["$defs"] = kept
        return dict(out)

    def node(self, node: Any, depth: int) -> Any:
        if isinstance(node, list):
            return [self.node(v, depth) for v in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if (
            isinstance(ref, str)
            and ref.startswith(_PREFIX)
            and ref[len(_PREFIX) :] in self.recursive
        ):
            if depth >= UNROLL_DEPTH:
                return self._CUT
            inlined = self.node(self.defs[ref[len(_PREFIX) :]], depth + 1)
            siblings = {k: self.node(v, depth) for k, v in node.items() if k != "$ref"}
            return {**inlined, **siblings}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("anyOf", "oneOf") and isinstance(value, list):
                options = [o for o in (self.node(v, depth) for v in value) if o is not self._CUT]
                out[key] = options or [{"type": "null"}]
            else:
                child = self.node(value, depth)
                out[key] = {"type": "null"} if child is self._CUT else child
        return out


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
