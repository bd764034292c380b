"""Deterministic sample values that satisfy a JSON Schema.

The provider emulator answers structured-output requests with a value drawn from the request's
schema, and alloy's offline model does the same, so both need one small generator that returns
something a real validator accepts.  It is deliberately pure (no I/O, no global random state):
the same schema and seed always give the same value, which keeps test failures reproducible.

Coverage is aimed at what pydantic's ``TypeAdapter(T).json_schema()`` and the provider strict
dialects produce: ``type`` (single or list), ``enum``, ``const``, ``anyOf`` / ``oneOf`` /
``allOf``, local ``$ref`` with ``$defs`` / ``definitions`` (recursion included), objects with
``properties`` / ``required`` / ``additionalProperties``, arrays with ``items`` / ``prefixItems``
and item bounds, string length, ``format`` and (best-effort) ``pattern``, and numeric bounds with
``multipleOf``.  Recursion is cut off by preferring ``null``, empty arrays and omitted optional
properties once the value is a few levels deep.
"""

from __future__ import annotations

import importlib
import math
import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeGuard

from ._schema import memoize_by_identity


def _regex_parser() -> Any:
    """``re``'s own pattern parser: ``re._parser`` on 3.11+, ``sre_parse`` on 3.10."""
    try:
        return importlib.import_module("re._parser")
    except ImportError:  # pragma: no cover - Python 3.10
        return importlib.import_module("sre_parse")


_sre_parse = _regex_parser()

__all__ = ["sample_value"]

#: Nesting depth after which optional content is dropped to stop recursion.
_SOFT_DEPTH = 4
#: Nesting depth below which optional object properties are filled in.
_OPTIONAL_DEPTH = 2
#: Nesting depth after which we give up on a schema that cannot terminate.
_HARD_DEPTH = 48

#: Keywords that need more than a look at ``type``; a node with none of them takes a short path.
_NOT_PLAIN = frozenset({"$ref", "const", "enum", "allOf", "anyOf", "oneOf", "nullable"})
_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")
_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "discriminator",
        "propertyOrdering",
        "property_ordering",
        "$schema",
        "$id",
        "$anchor",
    }
)


def sample_value(schema: Mapping[str, Any], *, seed: int = 0) -> Any:
    """Return a JSON value (dict, list, str, int, float, bool or None) valid against ``schema``.

    ``seed`` selects among the valid choices (enum members, union branches, numbers); the
    result is a pure function of ``(schema, seed)``.
    """
    if type(schema) is not dict:
        schema = dict(schema)
    rng = SplitMix(seed)
    direct = _direct_sampler(schema)
    if direct is not None:
        return direct(rng)
    return _Sampler(schema, rng).sample(schema, 0)


# -- plain schemas: sampled directly -------------------------------------------------------
#
# Most output schemas are objects of required scalar fields. For those, the walk below always
# makes the same decisions, so they are made once per schema and kept as a function of the
# random source. It draws the same numbers in the same order as the walk (the scalar draws
# are shared), so both give the same value for a seed; a test holds them to that.


def _plain_boolean(rng: SplitMix) -> bool:
    return rng.random() < 0.5


def _plain_integer(rng: SplitMix) -> int:
    return rng.randint(0, 100)


def _plain_number(rng: SplitMix) -> float:
    return round(rng.uniform(0.0, 100.0), 2)


def _plain_word(rng: SplitMix) -> str:
    return _WORDS[rng.randrange(len(_WORDS))]


def _plain_null(rng: SplitMix) -> None:
    return None


_PLAIN_SCALARS: dict[str, Callable[[SplitMix], Any]] = {
    "boolean": _plain_boolean,
    "integer": _plain_integer,
    "number": _plain_number,
    "string": _plain_word,
    "null": _plain_null,
}
_SCALAR_KEYS = _ANNOTATIONS | {"type"}
_PLAIN_KEYS = _SCALAR_KEYS | {"properties", "required", "additionalProperties", "enum", "$defs"}


@memoize_by_identity
def _direct_sampler(schema: Any) -> Callable[[SplitMix], Any] | None:
    """The direct sampler for ``schema`` (built once per schema object), or None to walk it."""
    return _compile_plain(schema, schema, 0, ())


def _compile_plain(
    root: Any, schema: Any, depth: int, refs: tuple[str, ...]
) -> Callable[[SplitMix], Any] | None:
    """A function sampling what the walk would, for enums, unconstrained scalars and objects
    whose properties are all required and closed, through non-recursive ``$ref``; else None."""
    if type(schema) is not dict or depth > _SOFT_DEPTH:
        return None
    ref = schema.get("$ref")
    if ref is not None:  # the walk follows a bare reference and samples its target
        if len(schema) != 1 or not isinstance(ref, str) or ref in refs:
            return None
        return _compile_plain(root, _pointer(root, ref), depth, (*refs, ref))
    if not _PLAIN_KEYS.issuperset(schema) or ("$defs" in schema and schema is not root):
        return None
    enum = schema.get("enum")
    if enum is not None:
        if not isinstance(enum, list) or not enum:
            return None
        choices = tuple(enum)
        return lambda rng: choices[rng.randrange(len(choices))]
    kind = schema.get("type")
    if kind != "object":
        if isinstance(kind, str) and _SCALAR_KEYS.issuperset(schema):
            return _PLAIN_SCALARS.get(kind)
        return None
    props, required = schema.get("properties"), schema.get("required")
    if (
        not isinstance(props, dict)
        or not isinstance(required, list)
        or set(required) != set(props)
        or schema.get("additionalProperties", False) is not False
    ):
        return None
    fields = [(name, _compile_plain(root, sub, depth + 1, refs)) for name, sub in props.items()]
    if any(field is None for _, field in fields):
        return None
    drawn: list[tuple[str, Callable[[SplitMix], Any]]] = fields  # type: ignore[assignment]
    return lambda rng: {name: field(rng) for name, field in drawn}


_MASK64 = (1 << 64) - 1
_TO_UNIT = 1.0 / (1 << 53)


class SplitMix:
    """A small seeded generator (SplitMix64) with the few ``SplitMix`` methods used here.

    The offline model samples a value on every call, and seeding a ``SplitMix`` (a
    Mersenne Twister state of 624 words) took longer than the whole walk of a small schema;
    this one is seeded by storing an integer. Its draws are fine for picking sample values,
    nothing more.
    """

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK64

    def bits64(self) -> int:
        """The next 64 random bits."""
        self.state = z = (self.state + 0x9E3779B97F4A7C15) & _MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def getrandbits(self, k: int) -> int:
        """An integer of ``k`` random bits."""
        value, have = 0, 0
        while have < k:
            value, have = (value << 64) | self.bits64(), have + 64
        return value >> (have - k)

    def random(self) -> float:
        """A float in [0, 1)."""
        return (self.bits64() >> 11) * _TO_UNIT

    def randrange(self, stop: int) -> int:
        """An integer in [0, stop)."""
        if stop <= 0:
            raise ValueError(f"empty range for randrange({stop})")
        if stop <= 1 << 32:  # the usual case: a list index or a small span
            return self.bits64() % stop
        return self.getrandbits(stop.bit_length() + 64) % stop

    def randint(self, low: int, high: int) -> int:
        """An integer in [low, high]."""
        return low + self.randrange(high - low + 1)

    def uniform(self, low: float, high: float) -> float:
        """A float between ``low`` and ``high``."""
        return low + (high - low) * self.random()


def _pointer(root: Any, ref: str) -> Any:
    """The node a local JSON pointer such as ``#/$defs/Node`` names (``#`` is the root)."""
    if not ref.startswith("#"):
        return {}
    node: Any = root
    for raw in ref[1:].split("/"):
        if not raw:
            continue
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return {}
    return node


class _Sampler:
    """Walks one schema; holds the root (for ``$ref``) and the seeded random source."""

    def __init__(self, root: Any, rng: SplitMix) -> None:
        self.root = root
        self.rng = rng

    # -- references ------------------------------------------------------------------------

    def lookup(self, ref: str) -> Any:
        """Resolve a local JSON pointer such as ``#/$defs/Node`` (``#`` is the root)."""
        return _pointer(self.root, ref)

    def resolve(self, schema: Any) -> Any:
        """Follow ``$ref`` chains; sibling keywords of a ``$ref`` are merged over the target."""
        if type(schema) is dict and "$ref" not in schema:  # most nodes: nothing to follow
            return schema
        seen: set[str] = set()
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            if ref in seen:
                return {}
            seen.add(ref)
            target = self.lookup(ref)
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            if not siblings:
                schema = target
            elif isinstance(target, dict):
                schema = {**target, **siblings}
            else:
                schema = siblings
        return schema

    # -- dispatch --------------------------------------------------------------------------

    def sample(self, schema: Any, depth: int) -> Any:
        """Sample one value; ``depth`` is the nesting level, used to stop recursion."""
        if type(schema) is dict and depth <= _HARD_DEPTH:
            # The bulk of any schema: a node with one plain type and nothing to resolve first.
            kind = schema.get("type")
            if type(kind) is str and _NOT_PLAIN.isdisjoint(schema):
                handler = self._handlers.get(kind)
                if handler is not None:
                    return handler(self, schema, depth)
        schema = self.resolve(schema)
        if schema is True or schema is None:
            return "value"
        if schema is False or not isinstance(schema, dict):
            return None
        if depth > _HARD_DEPTH:
            return None
        if "const" in schema:
            return schema["const"]
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return enum[self.rng.randrange(len(enum))]
        if isinstance(schema.get("allOf"), list):
            return self.sample(self.merge_all_of(schema), depth)
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                siblings = {
                    k: v
                    for k, v in schema.items()
                    if k not in ("anyOf", "oneOf") and k not in _ANNOTATIONS
                }
                branch = self.resolve(self.pick_branch(options, depth, key == "oneOf"))
                if isinstance(branch, dict) and siblings:
                    branch = {**siblings, **branch}
                return self.sample(branch, depth)
        kind = self.pick_type(schema, depth)
        handler = self._handlers.get(kind) if kind else None
        if handler is None:
            return "value"
        return handler(self, schema, depth)

    def pick_type(self, schema: dict[str, Any], depth: int) -> str | None:
        """Choose one type from ``type`` (string or list), or infer it from the keywords."""
        declared = schema.get("type")
        nullable = schema.get("nullable") is True
        if isinstance(declared, str):
            types = [declared.lower()]
        elif isinstance(declared, list) and declared:
            types = [str(t).lower() for t in declared]
        else:
            inferred = self.infer_type(schema)
            types = [inferred] if inferred else []
        if nullable and "null" not in types:
            types.append("null")
        if not types:
            return None
        concrete = [t for t in types if t != "null"]
        if "null" in types and (depth >= _SOFT_DEPTH or not concrete):
            return "null"
        return concrete[0]

    @staticmethod
    def infer_type(schema: dict[str, Any]) -> str | None:
        """Guess the type of an untyped schema from the keywords it uses."""
        if {"properties", "additionalProperties", "required", "minProperties"} & schema.keys():
            return "object"
        if {"items", "prefixItems", "minItems", "maxItems"} & schema.keys():
            return "array"
        if {"minLength", "maxLength", "pattern", "format"} & schema.keys():
            return "string"
        if {
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        } & schema.keys():
            return "number"
        return None

    # -- unions ----------------------------------------------------------------------------

    def merge_all_of(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Flatten ``allOf`` into one schema (properties and required lists are unioned)."""
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema.get("allOf", []):
            part = self.resolve(part)
            if not isinstance(part, dict):
                continue
            for key, value in part.items():
                if key == "properties" and isinstance(value, dict):
                    merged["properties"] = {**merged.get("properties", {}), **value}
                elif key == "required" and isinstance(value, list):
                    merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
                else:
                    merged.setdefault(key, value)
        return merged

    def pick_branch(self, options: list[Any], depth: int, tagged: bool) -> Any:
        """Pick a union branch: the cheapest one when deep, else a non-null one.

        ``anyOf`` takes its first non-null branch, because loose unions list the most specific
        form first (pydantic's Decimal is ``number`` before a bare ``string``); ``oneOf``, the
        form of tagged unions, picks a branch by seed so every variant gets exercised.
        """
        if depth >= _SOFT_DEPTH:
            return min(options, key=lambda o: self.weight(o, 0, frozenset()))
        concrete = [o for o in options if not self.is_null(o)]
        pool = concrete or options
        return pool[self.rng.randrange(len(pool))] if tagged else pool[0]

    def is_null(self, schema: Any) -> bool:
        """True for a schema that only admits ``null``."""
        schema = self.resolve(schema)
        return isinstance(schema, dict) and schema.get("type") == "null"

    def weight(self, schema: Any, level: int, seen: frozenset[str]) -> float:
        """Rough size of the smallest value of ``schema``; recursion through a ``$ref`` is infinite."""
        if level > 8:
            return math.inf
        if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            if ref in seen:
                return math.inf
            return self.weight(self.resolve(schema), level + 1, seen | {ref})
        if not isinstance(schema, dict):
            return 1
        if "const" in schema or "enum" in schema:
            return 1
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return min(self.weight(o, level + 1, seen) for o in schema[key])
        declared = schema.get("type")
        types = declared if isinstance(declared, list) else [declared or self.infer_type(schema)]
        if "null" in types or schema.get("nullable") is True:
            return 0
        kind = next((t for t in types if t), None)
        if kind == "array":
            if int(schema.get("minItems", 0)) == 0 and not schema.get("prefixItems"):
                return 1
            return 2 + self.weight(schema.get("items", {}), level + 1, seen)
        if kind == "object":
            props = schema.get("properties", {})
            return 1 + sum(
                self.weight(props.get(name, {}), level + 1, seen)
                for name in schema.get("required", [])
            )
        return 1

    # -- scalars ---------------------------------------------------------------------------

    def sample_null(self, schema: dict[str, Any], depth: int) -> None:
        """``null``."""
        return None

    def sample_boolean(self, schema: dict[str, Any], depth: int) -> bool:
        """``true`` or ``false``."""
        return _plain_boolean(self.rng)

    def sample_integer(self, schema: dict[str, Any], depth: int) -> int:
        """An integer inside the bounds, on the ``multipleOf`` grid if one is given."""
        if _NUMERIC_LIMITS.isdisjoint(schema):
            return _plain_integer(self.rng)
        low, high = _bounds(schema)
        lo = hi = None
        if low is not None:
            lo = math.floor(low[0]) + 1 if low[1] else math.ceil(low[0])
        if high is not None:
            hi = math.ceil(high[0]) - 1 if high[1] else math.floor(high[0])
        lo_eff = lo if lo is not None else (min(hi, 0) if hi is not None else 0)
        hi_eff = hi if hi is not None else lo_eff + 100
        step = schema.get("multipleOf")
        if isinstance(step, (int, float)) and step > 0:
            if float(step).is_integer():
                step_i = int(step)
                first, last = -(-lo_eff // step_i), hi_eff // step_i
                if first > last:
                    return first * step_i
                return self.rng.randint(first, last) * step_i
            for candidate in range(lo_eff, hi_eff + 1):
                if _is_multiple(candidate, float(step)):
                    return candidate
            return lo_eff
        if lo_eff > hi_eff:
            return lo_eff
        return self.rng.randint(lo_eff, hi_eff)

    def sample_number(self, schema: dict[str, Any], depth: int) -> float | int:
        """A two-decimal number inside the (possibly exclusive) bounds."""
        if _NUMERIC_LIMITS.isdisjoint(schema):
            return _plain_number(self.rng)
        low, high = _bounds(schema)
        lo = low[0] if low else (min(high[0] - 100, 0.0) if high else 0.0)
        hi = high[0] if high else lo + 100.0
        step = schema.get("multipleOf")
        if isinstance(step, (int, float)) and step > 0:
            first, last = math.ceil(lo / step), math.floor(hi / step)
            if low and low[1] and _is_multiple(lo, step):
                first += 1
            if high and high[1] and _is_multiple(hi, step):
                last -= 1
            k = first if first > last else self.rng.randint(first, last)
            digits = max(0, -math.floor(math.log10(step))) if step < 1 else 0
            value = round(k * step, digits + 2)
            return int(value) if float(value).is_integer() else value
        if lo > hi:
            return lo
        for _ in range(8):
            value = round(self.rng.uniform(lo, hi), 2)
            if _within(value, low, high):
                return value
        return (lo + hi) / 2

    def sample_string(self, schema: dict[str, Any], depth: int) -> str:
        """A format-shaped, pattern-matching or plain word, fitted to the length bounds."""
        min_len = int(schema.get("minLength", 0))
        max_len = schema.get("maxLength")
        fmt = schema.get("format")
        pattern = schema.get("pattern")
        maker = _FORMATS.get(fmt) if isinstance(fmt, str) else None
        if maker is not None:
            return maker(self.rng)
        if isinstance(pattern, str):
            found = self.from_pattern(pattern, min_len, max_len)
            if found is not None:
                return found
        value = _plain_word(self.rng)
        if len(value) < min_len:
            value += "x" * (min_len - len(value))
        if isinstance(max_len, int) and len(value) > max_len:
            value = value[:max_len]
        return value

    def from_pattern(self, pattern: str, min_len: int, max_len: Any) -> str | None:
        """Generate a string matching ``pattern`` (and the length bounds when possible)."""
        try:
            compiled = re.compile(pattern)
            tree = _sre_parse.parse(pattern)
        except (re.error, TypeError, ValueError, OverflowError):
            return None
        fallback: str | None = None
        for spread in (2, 0, 5, 12, max(min_len, 1), 64):
            for _ in range(4):
                text = _RegexWriter(self.rng, spread).write(tree)
                if text is None or not compiled.search(text):
                    continue
                if len(text) >= min_len and (not isinstance(max_len, int) or len(text) <= max_len):
                    return text
                fallback = fallback or text
        return fallback

    # -- containers ------------------------------------------------------------------------

    def sample_array(self, schema: dict[str, Any], depth: int) -> list[Any]:
        """Items (tuple ``prefixItems`` first) within the item-count bounds."""
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        if isinstance(items, list):  # draft-07 tuple form
            prefix, items = items, schema.get("additionalItems", False)
        prefix = prefix if isinstance(prefix, list) else []
        min_items = int(schema.get("minItems", 0))
        max_items = schema.get("maxItems")
        can_extend = items is not False
        if depth >= _SOFT_DEPTH:
            count = max(min_items, len(prefix) if min_items > 0 else 0)
        else:
            count = max(min_items, len(prefix), 1 + self.rng.randrange(2))
        if prefix and not can_extend:
            count = min(count, len(prefix))
        if isinstance(max_items, int):
            count = min(count, max_items)
        if prefix and count < len(prefix) and min_items >= len(prefix):
            count = len(prefix)
        result: list[Any] = []
        seen: set[str] = set()
        for index in range(count):
            sub = (
                prefix[index]
                if index < len(prefix)
                else (items if isinstance(items, (dict, bool)) else {})
            )
            value = self.sample(sub, depth + 1)
            if schema.get("uniqueItems"):
                for _ in range(16):
                    key = repr(value)
                    if key not in seen:
                        break
                    value = self.sample(sub, depth + 1)
                seen.add(repr(value))
            result.append(value)
        return result

    def sample_object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        """Required properties always, optional ones only near the root."""
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        required = schema.get("required")
        required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
        shallow = depth < _OPTIONAL_DEPTH
        below = depth + 1
        result: dict[str, Any] = {
            name: self.sample(sub, below)
            for name, sub in props.items()
            if shallow or name in required
        }
        for name in required:
            if name not in result:
                result[name] = self.sample({}, below)
        extra = schema.get("additionalProperties")
        min_props = int(schema.get("minProperties", 0))
        wanted = max(min_props, 1 if shallow and not props and isinstance(extra, dict) else 0)
        counter = 0
        while len(result) < wanted and extra is not False:
            counter += 1
            key = f"key{counter}"
            if key not in result:
                result[key] = self.sample(extra if isinstance(extra, dict) else {}, depth + 1)
        max_props = schema.get("maxProperties")
        if isinstance(max_props, int) and len(result) > max_props:
            keep = [*required, *[k for k in result if k not in required]][:max_props]
            result = {k: result[k] for k in keep if k in result}
        return result

    _handlers: ClassVar[dict[str, Callable[[_Sampler, dict[str, Any], int], Any]]] = {
        "null": sample_null,
        "boolean": sample_boolean,
        "integer": sample_integer,
        "number": sample_number,
        "string": sample_string,
        "array": sample_array,
        "object": sample_object,
    }


_BOUNDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_NUMERIC_LIMITS = _BOUNDS | {"multipleOf"}


def _bounds(
    schema: dict[str, Any],
) -> tuple[tuple[float, bool] | None, tuple[float, bool] | None]:
    """Lower and upper bounds as ``(value, exclusive)`` (draft-4 boolean forms included)."""
    low: tuple[float, bool] | None = None
    high: tuple[float, bool] | None = None
    if _BOUNDS.isdisjoint(schema):
        return None, None
    minimum, maximum = schema.get("minimum"), schema.get("maximum")
    xmin, xmax = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if _is_num(minimum):
        low = (float(minimum), xmin is True)
    if _is_num(xmin) and (low is None or xmin >= low[0]):
        low = (float(xmin), True)
    if _is_num(maximum):
        high = (float(maximum), xmax is True)
    if _is_num(xmax) and (high is None or xmax <= high[0]):
        high = (float(xmax), True)
    return low, high


def _is_num(value: Any) -> TypeGuard[float]:
    """True for a JSON number (``bool`` is an ``int`` subclass but not a JSON number)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _within(value: float, low: tuple[float, bool] | None, high: tuple[float, bool] | None) -> bool:
    """Whether ``value`` respects both bounds."""
    if low and (value < low[0] or (low[1] and value == low[0])):
        return False
    return not (high and (value > high[0] or (high[1] and value == high[0])))


def _is_multiple(value: float, step: float) -> bool:
    """A float-tolerant ``value % step == 0``."""
    quotient = value / step
    return abs(quotient - round(quotient)) < 1e-9


class _RegexWriter:
    """Writes one string matching a parsed regular expression (``re``'s own parse tree)."""

    _POOL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_- ."

    def __init__(self, rng: SplitMix, spread: int) -> None:
        self.rng = rng
        self.spread = spread
        self.groups: dict[int, str] = {}

    def write(self, tree: Any) -> str | None:
        """The generated string, or ``None`` for constructs the writer cannot produce."""
        try:
            return "".join(self.emit(tree))
        except _Unsupported:
            return None

    def emit(self, items: Any) -> list[str]:
        """Characters for a sequence of parsed regex items."""
        out: list[str] = []
        for op, arg in items:
            name = getattr(op, "name", str(op))
            if name == "LITERAL":
                out.append(chr(arg))
            elif name == "NOT_LITERAL":
                out.append(next(c for c in self._POOL if ord(c) != arg))
            elif name == "ANY":
                out.append(self._POOL[self.rng.randrange(26)])
            elif name == "IN":
                out.append(self.pick_in(arg))
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                low, high, sub = arg
                top = (
                    low + self.spread
                    if high >= _sre_parse.MAXREPEAT
                    else min(high, low + self.spread)
                )
                for _ in range(self.rng.randint(low, max(low, top))):
                    out.extend(self.emit(sub))
            elif name == "SUBPATTERN":
                group, sub = arg[0], arg[-1]
                text = "".join(self.emit(sub))
                if group is not None:
                    self.groups[group] = text
                out.append(text)
            elif name == "ATOMIC_GROUP":
                out.extend(self.emit(arg))
            elif name == "BRANCH":
                branches = arg[1]
                out.extend(self.emit(branches[self.rng.randrange(len(branches))]))
            elif name == "GROUPREF":
                out.append(self.groups.get(arg, ""))
            elif name == "CATEGORY":
                out.append(self.category(getattr(arg, "name", str(arg))))
            elif name == "AT":
                continue
            else:
                raise _Unsupported(name)
        return out

    def pick_in(self, members: Any) -> str:
        """One character from a ``[...]`` class (or outside it when negated)."""
        negate = bool(members) and getattr(members[0][0], "name", "") == "NEGATE"
        if negate:
            for char in self._POOL:
                if not self.member(members[1:], char):
                    return char
            raise _Unsupported("NEGATE")
        op, arg = members[self.rng.randrange(len(members))]
        name = getattr(op, "name", str(op))
        if name == "LITERAL":
            return chr(arg)
        if name == "RANGE":
            return chr(self.rng.randint(arg[0], arg[1]))
        if name == "CATEGORY":
            return self.category(getattr(arg, "name", str(arg)))
        raise _Unsupported(name)

    def member(self, members: Any, char: str) -> bool:
        """Whether ``char`` belongs to a parsed character class."""
        for op, arg in members:
            name = getattr(op, "name", str(op))
            if name == "LITERAL" and ord(char) == arg:
                return True
            if name == "RANGE" and arg[0] <= ord(char) <= arg[1]:
                return True
            if name == "CATEGORY" and re.fullmatch(
                _CATEGORY_RE.get(getattr(arg, "name", ""), "(?!)"), char
            ):
                return True
        return False

    def category(self, name: str) -> str:
        r"""A character of a ``\d``/``\w``/``\s`` style category."""
        if name == "CATEGORY_DIGIT":
            return str(self.rng.randrange(10))
        if name == "CATEGORY_SPACE":
            return " "
        if name == "CATEGORY_WORD":
            return self._POOL[self.rng.randrange(52)]
        if name == "CATEGORY_NOT_WORD":
            return "-"
        return "a"  # NOT_DIGIT, NOT_SPACE and line-break categories


_CATEGORY_RE = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}


class _Unsupported(Exception):
    """A regex construct the writer cannot produce (lookarounds, for instance)."""


def _uuid(rng: SplitMix) -> str:
    """A version-4 UUID drawn from the seeded source."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _day(rng: SplitMix) -> str:
    """An ISO date."""
    return f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _clock(rng: SplitMix) -> str:
    """An ISO time of day."""
    return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


_FORMATS: dict[str, Callable[[SplitMix], str]] = {
    "date-time": lambda rng: f"{_day(rng)}T{_clock(rng)}Z",
    "date": _day,
    "time": _clock,
    "duration": lambda rng: f"PT{rng.randint(1, 59)}M",
    "uuid": _uuid,
    "email": lambda rng: f"user{rng.randint(1, 99)}@example.com",
    "idn-email": lambda rng: f"user{rng.randint(1, 99)}@example.com",
    "uri": lambda rng: f"https://example.com/item/{rng.randint(1, 99)}",
    "url": lambda rng: f"https://example.com/item/{rng.randint(1, 99)}",
    "iri": lambda rng: f"https://example.com/item/{rng.randint(1, 99)}",
    "uri-reference": lambda rng: f"/item/{rng.randint(1, 99)}",
    "hostname": lambda rng: "example.com",
    "idn-hostname": lambda rng: "example.com",
    "ipv4": lambda rng: f"192.0.2.{rng.randint(1, 254)}",
    "ipv6": lambda rng: f"2001:db8::{rng.randint(1, 9999):x}",
    "ipvanyaddress": lambda rng: f"192.0.2.{rng.randint(1, 254)}",
    "ipvanyinterface": lambda rng: "192.0.2.1/24",
    "ipvanynetwork": lambda rng: "192.0.2.0/24",
    "ipv4network": lambda rng: "192.0.2.0/24",
    "ipv6network": lambda rng: "2001:db8::/32",
    "ipv4interface": lambda rng: "192.0.2.1/24",
    "ipv6interface": lambda rng: "2001:db8::1/64",
    "binary": lambda rng: _WORDS[rng.randrange(len(_WORDS))],
    "base64": lambda rng: "aGVsbG8=",
    "base64url": lambda rng: "aGVsbG8=",
    "password": lambda rng: "s3cret",
    "path": lambda rng: f"/tmp/item-{rng.randint(1, 99)}",
    "json-string": lambda rng: "{}",
    "text": lambda rng: _WORDS[rng.randrange(len(_WORDS))],
}
