"""Load a ragit PDL schema string as an alloy output type.

::

    load_pdl("[{name: str, age: int {min: 0}}]{min: 3, max: 3}")  # exactly three people
    load_pdl("str {min: 100}")   # the whole reply, at least 100 characters
    load_pdl("yesno")            # a bool from yes/no

Types: ``str``/``string``, ``int``/``integer``, ``float``/``number``, ``bool``/``boolean``,
``[T]`` arrays, ``{key: T, ...}`` objects, and at the top level only the non-JSON ``yesno``,
``code`` and ``tasklist``. A ``{min: n, max: n}`` constraint (``len_min``/``len_max`` too)
bounds a number's value, a string's or code's length in characters, an array's items or a task
list's tasks; bounds may be negative or fractional. Constraint failures are re-asked, as ragit
re-prompts. Unknown types are errors unless ``strict=False`` (then strings, with a warning).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from .._output import JsonOutput, OutputType
from ..checks import Length, ValidRange, checked, checked_output_for
from ..checks._plan import annotated, make_typeddict
from ..checks._spec import unknown
from ..errors import ConfigurationError
from ..formats import BoundedText, Code, TaskList, YesNo

__all__ = ["load_pdl"]

_TOKEN = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|(?P<ident>[A-Za-z_][\w-]*)"
    r"|(?P<str>\"[^\"]*\"|'[^']*')|(?P<punct>[{}\[\]:,]))"
)
_TYPES = {
    "str": "str",
    "string": "str",
    "int": "int",
    "integer": "int",
    "float": "float",
    "number": "float",
    "bool": "bool",
    "boolean": "bool",
    "yesno": "yesno",
    "code": "code",
    "tasklist": "tasklist",
}
_BOUNDS = {"min": "min", "len_min": "min", "max": "max", "len_max": "max"}
_TEXTUAL = ("yesno", "code", "tasklist")


@dataclass
class _Schema:
    kind: str
    min: float | None = None
    max: float | None = None
    item: _Schema | None = None
    fields: dict[str, _Schema] = field(default_factory=dict)


class _Parser:
    def __init__(self, text: str, strict: bool) -> None:
        self.text = text
        self.strict = strict
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            if not text[pos:].strip():
                break
            match = _TOKEN.match(text, pos)
            if not match or match.end() == pos:
                raise self.error(f"unexpected character {text[pos:].lstrip()[:1]!r}")
            kind = match.lastgroup or ""
            value = match.group(kind)
            self.tokens.append((kind, value[1:-1] if kind == "str" else value))
            pos = match.end()
        self.i = 0

    def error(self, problem: str) -> ConfigurationError:
        return ConfigurationError(f"Invalid PDL schema {self.text!r}: {problem}")

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, punct: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise self.error("unexpected end" + (f"; expected {punct!r}" if punct else ""))
        if punct is not None and token != ("punct", punct):
            raise self.error(f"expected {punct!r}, got {token[1]!r}")
        self.i += 1
        return token

    def schema(self) -> _Schema:
        kind, value = self.take()
        if kind == "ident":
            name = _TYPES.get(value.lower())
            if name is None:
                unknown(
                    f"Unsupported PDL type {value!r}", strict=self.strict, fallback="treated as str"
                )
                name = "str"
            node = _Schema(name)
        elif (kind, value) == ("punct", "{"):
            node = _Schema("object", fields=self.fields())
        elif (kind, value) == ("punct", "["):
            item = None if self.peek() == ("punct", "]") else self.schema()
            self.take("]")
            node = _Schema("array", item=item)
        else:
            raise self.error(f"unexpected {value!r}")
        if self.peek() == ("punct", "{"):
            self.constraint(node)
        return node

    def fields(self) -> dict[str, _Schema]:
        fields: dict[str, _Schema] = {}
        while self.peek() != ("punct", "}"):
            kind, key = self.take()
            if kind not in ("ident", "str"):
                raise self.error(f"expected a key, got {key!r}")
            if key in fields:
                raise self.error(f"duplicate key {key!r}")
            self.take(":")
            fields[key] = self.schema()
            if self.peek() == ("punct", ","):
                self.take(",")
            elif self.peek() != ("punct", "}"):
                raise self.error(f"expected ',' or '}}' after {key!r}")
        self.take("}")
        return fields

    def constraint(self, node: _Schema) -> None:
        self.take("{")
        while self.peek() != ("punct", "}"):
            _, key = self.take()
            self.take(":")
            kind, raw = self.take()
            if kind != "num":
                raise self.error(f"constraint {key!r} needs a number, got {raw!r}")
            bound = _BOUNDS.get(key)
            if bound is None:
                unknown(f"Unknown PDL constraint {key!r}", strict=self.strict)
            elif getattr(node, bound) is not None:
                raise self.error(f"constraint {key!r} appears more than once")
            else:
                setattr(node, bound, float(raw) if re.search(r"[.eE]", raw) else int(raw))
            if self.peek() == ("punct", ","):
                self.take(",")
        self.take("}")


def load_pdl(schema: str, *, strict: bool = True) -> OutputType:
    """The output type a PDL schema string describes."""
    parser = _Parser(schema, strict)
    if not parser.tokens:
        raise parser.error("it is empty")
    node = parser.schema()
    if parser.peek() is not None:
        raise parser.error(f"unexpected {parser.peek()[1]!r} after the schema")  # type: ignore[index]
    return _Builder(parser).output(node)


class _Builder:
    def __init__(self, parser: _Parser) -> None:
        self.parser = parser
        self.names: set[str] = set()

    def output(self, node: _Schema) -> OutputType:
        if node.kind == "str":
            return BoundedText(_count(node.min, "min"), _count(node.max, "max"))
        if node.kind == "yesno":
            self.no_bounds(node)
            return YesNo()
        if node.kind in ("code", "tasklist"):
            fmt: OutputType = Code() if node.kind == "code" else TaskList()
            return checked(fmt, *self.length(node)) if _bounded(node) else fmt
        tp = self.type(node, "")
        return checked_output_for(tp) or JsonOutput(tp)

    def type(self, node: _Schema, where: str) -> Any:
        if node.kind in _TEXTUAL:
            raise self.parser.error(
                f"{node.kind} cannot be mixed with JSON (at {where or 'the root'}); it is only "
                "valid as the whole schema"
            )
        if node.kind == "str":
            return annotated(
                str, (*self.schema_bounds(node, "minLength", "maxLength"), *self.length(node))
            )
        if node.kind in ("int", "float"):
            base = int if node.kind == "int" else float
            bounds = (ValidRange(node.min, node.max, on_fail="reask"),) if _bounded(node) else ()
            return annotated(base, (*self.schema_bounds(node, "minimum", "maximum"), *bounds))
        if node.kind == "bool":
            self.no_bounds(node)
            return bool
        if node.kind == "array":
            if node.item is None:
                unknown(
                    f"PDL array without an item type at {where or 'the root'}",
                    strict=self.parser.strict,
                    fallback="treated as [str]",
                )
                item: Any = str
            else:
                item = self.type(node.item, f"{where}[]")
            return annotated(
                list[item], (*self.schema_bounds(node, "minItems", "maxItems"), *self.length(node))
            )
        fields = {
            key: self.type(child, f"{where}.{key}" if where else key)
            for key, child in node.fields.items()
        }
        if not fields:
            raise self.parser.error("an object needs at least one key")
        name = "".join(p[:1].upper() + p[1:] for p in re.split(r"\W+", where) if p) or "PdlObject"
        return make_typeddict(self.unique(name), fields)

    def length(self, node: _Schema) -> list[Length]:
        if not _bounded(node):
            return []
        return [Length(_count(node.min, "min"), _count(node.max, "max"), on_fail="reask")]

    def schema_bounds(self, node: _Schema, low: str, high: str) -> tuple[Any, ...]:
        """The bounds as JSON Schema keywords, so providers that can enforce them natively do.

        Only the schema carries them; the local check stays the criterion, with its own message.
        """
        whole = low != "minimum"  # lengths are counts; numeric bounds may be fractional
        keywords: dict[str, Any] = {
            key: _count(bound, key) if whole else bound
            for key, bound in ((low, node.min), (high, node.max))
            if bound is not None
        }
        return (Field(json_schema_extra=keywords),) if keywords else ()

    def no_bounds(self, node: _Schema) -> None:
        if _bounded(node):
            raise self.parser.error(f"{node.kind} takes no min/max constraint")

    def unique(self, name: str) -> str:
        candidate, n = name, 1
        while candidate in self.names:
            n += 1
            candidate = f"{name}{n}"
        self.names.add(candidate)
        return candidate


def _bounded(node: _Schema) -> bool:
    return node.min is not None or node.max is not None


def _count(bound: float | None, which: str) -> int | None:
    """A length bound: a whole, non-negative number."""
    if bound is None:
        return None
    if bound != int(bound) or bound < 0:
        raise ConfigurationError(f"A length {which} must be a whole number >= 0, got {bound}")
    return int(bound)
