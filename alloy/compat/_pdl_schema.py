"""Parse a ragit PDL schema string into an alloy output type (see :mod:`alloy.compat.pdl`)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pydantic import Field

from .._output import JsonOutput, OutputType
from ..checks import Length, ValidRange, checked, checked_output_for
from ..checks._plan import annotated, make_typeddict
from ..checks._spec import unknown
from ..errors import ConfigurationError
from ..formats import BoundedText, Code, TaskList, YesNo
from ._shared import MAX_DEPTH, TypeNames, excerpt, open_json, surrogate_at, too_deep

__all__ = ["load_schema"]

_SPACE = re.compile(r"\s*")
_TOKEN = re.compile(
    r"(?P<num>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|(?P<ident>[A-Za-z_][\w-]*)"
    r"|(?P<str>\"[^\"]*\"|'[^']*')|(?P<punct>[{}\[\]:,])"
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
#: A line that is a PDL turn separator: the text is a whole document, not a schema string.
_TURN_LINE = re.compile(
    r"^[ \t]*<\|(?:user|system|assistant|schema|reasoning)\|>[ \t]*$", re.M | re.I
)
_BOUNDS = {"min": "min", "len_min": "min", "max": "max", "len_max": "max"}
_TEXTUAL = ("yesno", "code", "tasklist")


@dataclass
class _Schema:
    kind: str
    at: int  # where in the schema string it starts, for error messages
    min: float | None = None
    max: float | None = None
    item: _Schema | None = None
    fields: dict[str, _Schema] = field(default_factory=dict)


class _Token(NamedTuple):
    kind: str  # num, ident, str or punct
    text: str
    at: int


class _Parser:
    def __init__(self, text: str, strict: bool) -> None:
        self.text = text
        self.strict = strict
        bad = surrogate_at(text)
        if bad is not None:
            raise self.error(f"a lone surrogate {text[bad]!r} is not valid text", bad)
        self.tokens = list(self._tokenize())
        self.i = 0
        self.depth = 0  # containers around the schema being read

    def _tokenize(self) -> Iterator[_Token]:
        pos = self._skip_space(0)
        while pos < len(self.text):
            match = _TOKEN.match(self.text, pos)
            if match is None:
                raise self.error(f"unexpected character {self.text[pos]!r}", pos)
            kind = match.lastgroup or ""
            value = match.group(kind)
            yield _Token(kind, value[1:-1] if kind == "str" else value, pos)
            pos = self._skip_space(match.end())

    def _skip_space(self, pos: int) -> int:
        match = _SPACE.match(self.text, pos)
        return match.end() if match else pos

    def error(self, problem: str, at: int | None = None) -> ConfigurationError:
        """A ConfigurationError naming the schema, the problem and where (``at``, an index)."""
        where = "" if at is None else f" (at character {at + 1})"
        if at is not None and at >= len(self.text):
            where = " (at the end)"
        return ConfigurationError(f"Invalid PDL schema {excerpt(self.text)}: {problem}{where}")

    def peek(self) -> _Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def at_punct(self, punct: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "punct" and token.text == punct

    def take(self, punct: str | None = None) -> _Token:
        token = self.peek()
        if token is None:
            expected = f"; expected {punct!r}" if punct else ""
            raise self.error(f"unexpected end{expected}", len(self.text))
        if punct is not None and (token.kind, token.text) != ("punct", punct):
            raise self.error(f"expected {punct!r}, got {token.text!r}", token.at)
        self.i += 1
        return token

    def schema(self) -> _Schema:
        token = self.take()
        if token.kind == "ident":
            name = _TYPES.get(token.text.lower())
            if name is None:
                unknown(
                    f"Unsupported PDL type {token.text!r}",
                    strict=self.strict,
                    fallback="treated as str",
                )
                name = "str"
            node = _Schema(name, token.at)
        elif (token.kind, token.text) in (("punct", "{"), ("punct", "[")):
            node = self.container(token)
        else:
            raise self.error(f"unexpected {token.text!r}", token.at)
        if self.at_punct("{"):
            self.constraint(node)
        return node

    def container(self, opening: _Token) -> _Schema:
        """An object (``{key: T, ...}``) or array (``[T]``) opened by ``opening``."""
        if self.depth >= MAX_DEPTH:
            raise self.error(too_deep(), opening.at)
        self.depth += 1
        if opening.text == "{":
            node = _Schema("object", opening.at, fields=self.fields())
        else:
            item = None if self.at_punct("]") else self.schema()
            self.take("]")
            node = _Schema("array", opening.at, item=item)
        self.depth -= 1
        return node

    def fields(self) -> dict[str, _Schema]:
        fields: dict[str, _Schema] = {}
        while not self.at_punct("}"):
            token = self.take()
            key = token.text
            if token.kind not in ("ident", "str"):
                raise self.error(f"expected a key, got {key!r}", token.at)
            if key in fields:
                raise self.error(f"duplicate key {key!r}", token.at)
            self.take(":")
            fields[key] = self.schema()
            if self.at_punct(","):
                self.take(",")
            elif not self.at_punct("}"):
                raise self.error(f"expected ',' or '}}' after {key!r}", self._here())
        self.take("}")
        return fields

    def constraint(self, node: _Schema) -> None:
        self.take("{")
        while not self.at_punct("}"):
            key = self.take()
            self.take(":")
            bound = _BOUNDS.get(key.text)
            value = self.number(key.text)
            if bound is None:
                unknown(f"Unknown PDL constraint {key.text!r}", strict=self.strict)
            elif getattr(node, bound) is not None:
                raise self.error(f"constraint {key.text!r} appears more than once", key.at)
            else:
                setattr(node, bound, value)
            if self.at_punct(","):
                self.take(",")
        self.take("}")

    def number(self, key: str) -> float:
        """A constraint's value: a finite number (an int when written without . or e)."""
        token = self.take()
        if token.kind != "num":
            raise self.error(f"constraint {key!r} needs a number, got {token.text!r}", token.at)
        if re.search(r"[.eE]", token.text):
            value = float(token.text)
        elif len(token.text) > 1000:  # Python refuses to read ints of more than 4300 digits
            raise self.error(f"constraint {key!r} has too many digits", token.at)
        else:
            value = int(token.text)
        if not math.isfinite(value):
            raise self.error(
                f"constraint {key!r} must be a finite number, got {token.text}", token.at
            )
        return value

    def _here(self) -> int:
        token = self.peek()
        return token.at if token is not None else len(self.text)


def load_schema(schema: str, *, strict: bool = True) -> OutputType:
    """The output type a PDL schema string describes."""
    parser = _Parser(schema, strict)
    if not parser.tokens:
        raise parser.error("it is empty")
    node = parser.schema()
    extra = parser.peek()
    if extra is not None:
        raise parser.error(f"unexpected {extra.text!r} after the schema", extra.at)
    return _Builder(parser).output(node)


class _Builder:
    def __init__(self, parser: _Parser) -> None:
        self.parser = parser
        self.names = TypeNames()

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
                "valid as the whole schema",
                node.at,
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
            if node.item is None:  # ``[]``: items of any type (ragit's schema tests)
                return annotated(open_json(list, None), tuple(self.length(node)))
            item: Any = self.type(node.item, f"{where}[]")
            return annotated(
                list[item], (*self.schema_bounds(node, "minItems", "maxItems"), *self.length(node))
            )
        fields = {
            key: self.type(child, f"{where}.{key}" if where else key)
            for key, child in node.fields.items()
        }
        if not fields:
            raise self.parser.error("an object needs at least one key", node.at)
        name = "".join(p[:1].upper() + p[1:] for p in re.split(r"\W+", where) if p) or "PdlObject"
        return make_typeddict(self.names.unique(name), fields)

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
            raise self.parser.error(f"{node.kind} takes no min/max constraint", node.at)


def _bounded(node: _Schema) -> bool:
    return node.min is not None or node.max is not None


def _count(bound: float | None, which: str) -> int | None:
    """A length bound: a whole, non-negative number."""
    if bound is None:
        return None
    if bound != int(bound) or bound < 0:
        raise ConfigurationError(f"A length {which} must be a whole number >= 0, got {bound}")
    return int(bound)
