"""Stand-in values for a JSON Schema: what the offline model and the emulator's ``Auto`` answer.

A stand-in needs a value the schema accepts, and the same value whenever it is asked the same
thing: seeded draws (``_draws``) make every choice, so the value depends only on the schema and
the seed. It covers the schemas alloy sends: pydantic's, and the provider dialects made from them
(``type`` alone, as a list or upper-case, ``nullable``, ``enum``, ``const``, ``allOf``/``anyOf``/
``oneOf``, local ``$ref`` into ``$defs`` or ``definitions``, object and array bounds, string
length and ``format``, the ``pattern`` subset of ``_pattern``, numeric bounds and
``multipleOf``). Recursion ends because from a few levels down every choice takes its smallest
form: null, no optional property, the fewest items, the union branch that is not an object.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any, TypeGuard

from ...errors import ConfigurationError
from ._draws import Draws
from ._pattern import sample_pattern

__all__ = ["sample_value", "sampler_for"]

#: From this depth on, optional content is left out and unions take their smallest branch.
_DEEP = 3
#: A schema still nesting at this depth has no finite value (a required property of its own type).
_LIMIT = 32
_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")
#: Keywords that need more than a look at ``type``.
_CHOICES = frozenset({"$ref", "const", "enum", "allOf", "anyOf", "oneOf", "nullable"})
_LIMITS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
_TEXT_RULES = frozenset({"minLength", "maxLength", "pattern", "format", "contentSchema"})
#: The type an untyped schema has, by the keywords it uses.
_BY_KEYWORD = (
    ("object", frozenset({"properties", "additionalProperties", "required", "minProperties"})),
    ("array", frozenset({"items", "prefixItems", "minItems", "maxItems"})),
    ("string", _TEXT_RULES),
    ("number", _LIMITS),
)
#: How small a value of each type is, for picking a union branch deep in a recursive schema.
_SIZE = {"null": 0, "boolean": 1, "integer": 1, "number": 1, "string": 1, "array": 2}


def sample_value(schema: Mapping[str, Any], *, seed: int = 0) -> Any:
    """A JSON value (dict, list, str, int, float, bool or None) valid for ``schema``.

    The same schema and seed give the same value, in any process.
    """
    root = schema if type(schema) is dict else dict(schema)
    return _Walk(root, Draws(seed)).value(root, 0)


def sampler_for(schema: Mapping[str, Any]) -> Callable[[int], Any]:
    """``sample_value`` for ``schema`` as a function of the seed, worked out once.

    The schema alloy sends most (an object of unconstrained scalars, all required: a wrapped
    primitive, a flat record) gets a function that makes the draws the walk would make, in its
    order, without walking the schema each time: the same values, in a third of the time. Any
    other schema is walked as :func:`sample_value` walks it.
    """
    root = schema if type(schema) is dict else dict(schema)
    draws = _flat_draws(root)
    if draws is None:
        return lambda seed: sample_value(root, seed=seed)

    if len(draws) == 1:  # a wrapped primitive: {"value": ...}
        ((name, draw),) = draws
        return lambda seed: {name: draw(Draws(seed))}

    def sample(seed: int) -> dict[str, Any]:
        rng = Draws(seed)
        return {name: draw(rng) for name, draw in draws}

    return sample


#: What the walk draws for a scalar schema with nothing but its ``type`` to say (the walk and
#: the shortcut of :func:`sampler_for` both draw through these, so their values agree).
_PLAIN_DRAWS: dict[str, Callable[[Draws], Any]] = {
    "null": lambda rng: None,
    "boolean": lambda rng: rng.random() < 0.5,
    "integer": lambda rng: rng.randrange(101),
    "number": lambda rng: round(100.0 * rng.random(), 2),  # uniform(0, 100), one call less
    "string": lambda rng: rng.choice(_WORDS),
}
#: All a property may say and still be drawn by ``_PLAIN_DRAWS``: its type, and words for people.
_PLAIN_KEYS = frozenset({"type", "title", "description"})
#: Keywords of an object that make the walk do more than one draw per property.
_OBJECT_EXTRAS = frozenset({"minProperties", "propertyNames", *_CHOICES})


def _flat_draws(schema: dict[str, Any]) -> list[tuple[str, Callable[[Draws], Any]]] | None:
    """The draw of each property, in order, for an object whose properties are all required
    scalars without constraints; None for any other schema (it is walked)."""
    properties = schema.get("properties")
    if (
        schema.get("type") != "object"
        or not isinstance(properties, dict)
        or not properties
        or not _OBJECT_EXTRAS.isdisjoint(schema)
        or schema.get("required") != list(properties)
    ):
        return None
    draws = []
    for name, sub in properties.items():
        if type(sub) is not dict or not _PLAIN_KEYS.issuperset(sub):
            return None
        kind = sub.get("type")
        draw = _PLAIN_DRAWS.get(kind) if type(kind) is str else None
        if draw is None:
            return None
        draws.append((name, draw))
    return draws


class _Walk:
    """One walk of a schema: the root (for ``$ref``) and the seeded choices."""

    def __init__(self, root: Any, rng: Draws) -> None:
        self.root = root
        self.rng = rng

    def value(self, schema: Any, depth: int) -> Any:
        if type(schema) is dict and _CHOICES.isdisjoint(schema) and depth <= _LIMIT:
            kind = schema.get("type")  # the bulk of any schema: one plain type, nothing to choose
            make = _MAKERS.get(kind) if type(kind) is str else None
            if make is not None:
                return make(self, schema, depth)
        schema = self.resolve(schema)
        if not isinstance(schema, dict):
            return None if schema is False else self.rng.choice(_WORDS)
        if depth > _LIMIT:
            raise ConfigurationError(
                "The offline stand-in model cannot write a value for this schema: it requires "
                "itself without end (a required property of its own type, never null or empty)."
            )
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return self.rng.choice(schema["enum"])
        if schema.get("allOf"):
            return self.value(self.merged(schema), depth)
        options = schema.get("anyOf") or schema.get("oneOf")
        if options:
            rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
            branch = self.resolve(self.branch(options, depth, "oneOf" in schema))
            return self.value({**rest, **branch} if isinstance(branch, dict) else branch, depth)
        make = _MAKERS.get(self.kind(schema, depth))
        return make(self, schema, depth) if make else self.rng.choice(_WORDS)

    def resolve(self, schema: Any) -> Any:
        """Follow ``$ref``; keywords written next to a ``$ref`` win over its target's."""
        seen: set[str] = set()
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            if ref in seen:
                return {}
            seen.add(ref)
            target = self.pointer(ref)
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **rest} if isinstance(target, dict) else rest
        return schema

    def pointer(self, ref: str) -> Any:
        """The node a local JSON pointer (``#/$defs/Node``) names; ``{}`` for any other."""
        node: Any = self.root if ref.startswith("#") else {}
        for raw in filter(None, ref[1:].split("/")):
            key = raw.replace("~1", "/").replace("~0", "~")
            node = node.get(key, {}) if isinstance(node, dict) else {}
        return node

    def merged(self, schema: dict[str, Any]) -> dict[str, Any]:
        """``allOf`` as one schema: properties and required lists joined, else first one wins."""
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in map(self.resolve, schema["allOf"]):
            for key, value in part.items() if isinstance(part, dict) else ():
                if key == "properties":
                    merged[key] = {**merged.get(key, {}), **value}
                elif key == "required":
                    merged[key] = [*merged.get(key, []), *value]
                else:
                    merged.setdefault(key, value)
        return merged

    def branch(self, options: list[Any], depth: int, tagged: bool) -> Any:
        """Deep down, the smallest branch; else the first non-null one of an ``anyOf`` (pydantic
        lists the most specific first, ``number`` before ``string`` for Decimal) or any
        non-null one of a ``oneOf`` (the tagged unions, so every variant gets its turn)."""
        if depth >= _DEEP:
            return min(options, key=self.size)
        concrete = [o for o in options if self.size(o) > 0] or options
        return self.rng.choice(concrete) if tagged else concrete[0]

    def size(self, schema: Any) -> int:
        """How small the smallest value of ``schema`` is, roughly: null 0, scalars 1, arrays 2,
        objects 3 (a branch that may lead back into the same object)."""
        schema = self.resolve(schema)
        if not isinstance(schema, dict) or "const" in schema or "enum" in schema:
            return 1
        if "anyOf" in schema or "oneOf" in schema:
            return 2
        kind = self.kind(schema, _DEEP)
        return 1 if kind is None else _SIZE.get(kind, 3)

    def kind(self, schema: dict[str, Any], depth: int) -> str | None:
        """The type to write: declared (one of a list), else implied by the keywords; ``null``
        when allowed and deep, else the first other type."""
        declared = schema.get("type")
        if not isinstance(declared, (str, list)):
            declared = [k for k, words in _BY_KEYWORD if not words.isdisjoint(schema)][:1]
        types = [str(t).lower() for t in ([declared] if isinstance(declared, str) else declared)]
        types += ["null"] if schema.get("nullable") is True else []
        concrete = [t for t in types if t != "null"]
        if "null" in types and (depth >= _DEEP or not concrete):
            return "null"
        return concrete[0] if concrete else None

    def number(self, schema: dict[str, Any], depth: int, whole: bool = False) -> float | int:
        """A number in the bounds; on the ``multipleOf`` grid (whole numbers are a grid of one),
        counted in exact fractions so that 3 steps of 0.1 make 0.3."""
        if _LIMITS.isdisjoint(schema):
            return _PLAIN_DRAWS["integer" if whole else "number"](self.rng)
        low, high = _bounds(schema)
        lo = low[0] if low else min(0.0, high[0] - 100) if high else 0.0
        hi = high[0] if high else lo + 100
        step = schema.get("multipleOf")
        if whole or step:
            grid = Fraction(str(step or 1))
            grid = Fraction(grid.numerator) if whole else grid  # whole multiples of p/q: of p
            start, end = Fraction(str(lo)), Fraction(str(hi))
            first, last = math.ceil(start / grid), math.floor(end / grid)
            first += bool(low and low[1] and first * grid == start)
            last -= bool(high and high[1] and last * grid == end)
            point = grid * self.rng.randint(first, max(first, last))
            return int(point) if point.denominator == 1 else float(point)
        for _ in range(8):
            value = round(self.rng.uniform(lo, hi), 2)
            if _within(value, low, high):
                return value
        return (lo + hi) / 2

    def string(self, schema: dict[str, Any], depth: int) -> str:
        if _TEXT_RULES.isdisjoint(schema):
            return _PLAIN_DRAWS["string"](self.rng)
        shortest, longest = schema.get("minLength", 0), schema.get("maxLength")
        form = schema.get("format")
        if form in _FORMATS:
            return _formatted(_FORMATS[form], self.rng)
        if isinstance(form, str) and form.startswith("uuid"):
            return _uuid(form[4:], self.rng)
        if isinstance(schema.get("contentSchema"), dict):  # pydantic's Json[T]
            return json.dumps(self.value(schema["contentSchema"], depth + 1))
        if isinstance(schema.get("pattern"), str):
            return sample_pattern(schema["pattern"], self.rng, shortest, longest)
        word = self.rng.choice(_WORDS).ljust(shortest, "x")
        return word[:longest] if isinstance(longest, int) else word

    def array(self, schema: dict[str, Any], depth: int) -> list[Any]:
        prefix, items = schema.get("prefixItems") or [], schema.get("items", {})
        if isinstance(items, list):  # the draft-07 tuple form
            prefix, items = items, schema.get("additionalItems", {})
        fewest, most = schema.get("minItems", 0), schema.get("maxItems")
        count = max(fewest, len(prefix), 0 if depth >= _DEEP else self.rng.randint(1, 2))
        if items is False:
            count = min(count, len(prefix))
        if isinstance(most, int):
            count = min(count, most)
        values: list[Any] = []
        unique = schema.get("uniqueItems") is True
        for index in range(count):
            sub = prefix[index] if index < len(prefix) else items
            value = self.value(sub, depth + 1)
            for _ in range(8 if unique else 0):  # a few more tries for an unseen value
                if value not in values:
                    break
                value = self.value(sub, depth + 1)
            if unique and value in values:
                break
            values.append(value)
        return values

    def object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        properties = schema.get("properties") or {}
        required = schema.get("required") or []
        result = {
            name: self.value(sub, depth + 1)
            for name, sub in properties.items()
            if depth < _DEEP or name in required
        }
        for name in required:
            if name not in result:
                result[name] = self.value({}, depth + 1)
        extra = schema.get("additionalProperties", True)
        wanted = schema.get("minProperties", 0)
        if depth < _DEEP and not properties and isinstance(extra, dict):
            wanted = min(max(wanted, 1), schema.get("maxProperties", 1))  # a dict shows an entry
        names = schema.get("propertyNames")
        for attempt in range(4 * wanted if extra is not False else 0):  # names may run out
            if len(result) >= wanted:
                break
            key = self.value(names, depth + 1) if names else f"key{attempt + 1}"
            result[str(key)] = self.value(extra if isinstance(extra, dict) else {}, depth + 1)
        return result


_MAKERS: dict[str | None, Callable[[_Walk, dict[str, Any], int], Any]] = {
    "null": lambda walk, schema, depth: None,
    "boolean": lambda walk, schema, depth: _PLAIN_DRAWS["boolean"](walk.rng),
    "integer": lambda walk, schema, depth: walk.number(schema, depth, whole=True),
    "number": _Walk.number,
    "string": _Walk.string,
    "array": _Walk.array,
    "object": _Walk.object,
}

_Bound = tuple[float, bool]  # (value, exclusive)


def _bounds(schema: dict[str, Any]) -> tuple[_Bound | None, _Bound | None]:
    """Lower and upper bounds, inclusive or exclusive (draft-04's boolean forms too)."""
    low = _bound(schema.get("minimum"), schema.get("exclusiveMinimum"))
    return low, _bound(schema.get("maximum"), schema.get("exclusiveMaximum"))


def _bound(limit: Any, strict: Any) -> _Bound | None:
    if _is_number(strict):
        return float(strict), True
    return (float(limit), strict is True) if _is_number(limit) else None


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _within(value: float, low: _Bound | None, high: _Bound | None) -> bool:
    above = low is None or value > low[0] or (value == low[0] and not low[1])
    return above and (high is None or value < high[0] or (value == high[0] and not high[1]))


#: ``format`` values as templates, filled with ``n`` in 1..99 and the parts of a 2024 timestamp.
_FORMATS = {
    "date-time": "2024-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z",
    "date": "2024-{month:02}-{day:02}",
    "time": "{hour:02}:{minute:02}:{second:02}",
    "duration": "PT{n}M",
    "email": "user{n}@example.com",
    "uri": "https://example.com/item/{n}",
    "ipv4": "192.0.2.{n}",
    "ipvanyaddress": "192.0.2.{n}",
    "ipv6": "2001:db8::{n:x}",
    "ipv4network": "192.0.2.0/24",
    "ipvanynetwork": "192.0.2.0/24",
    "ipv6network": "2001:db8::/32",
    "ipv4interface": "192.0.2.1/24",
    "ipvanyinterface": "192.0.2.1/24",
    "ipv6interface": "2001:db8::1/64",
    "base64": "aGVsbG8=",
    "base64url": "aGVsbG8=",
    "path": "/tmp/item-{n}",
}


def _formatted(template: str, rng: Draws) -> str:
    day = {"month": rng.randint(1, 12), "day": rng.randint(1, 28), "hour": rng.randrange(24)}
    return template.format(
        n=rng.randint(1, 99), minute=rng.randrange(60), second=rng.randrange(60), **day
    )


def _uuid(version: str, rng: Draws) -> str:
    """A UUID of ``version`` (``uuid`` alone is version 4), in the RFC 4122 variant."""
    hex = f"{rng.getrandbits(128):032x}"
    return f"{hex[:8]}-{hex[8:12]}-{version or 4}{hex[13:16]}-8{hex[17:20]}-{hex[20:]}"
