"""Find the JSON in a free-text reply, for models that cannot enforce a schema natively.

Tried in order: the whole text, fenced code blocks (```json or untagged, by CommonMark's fence
rules), then bracket-balanced ``{...}``/``[...]`` spans in the prose (looking inside a span that
does not even start like JSON), then, for a number or a boolean answer, its literal in the prose
(``The answer is 7.``). Reasoning blocks (``<think>...</think>``) are ignored. What counts as a
candidate follows the schema the reply answers: an object (or a ``{"value": ...}`` envelope),
an array, a scalar; objects win over arrays when both may answer, so a citation like ``[1]`` is
not taken for an object's answer. Python-style literals (single quotes, ``True``, trailing
commas) are accepted as a last resort. Several *different* candidates are an error rather than
a guess.

Replies are untrusted input, so every step takes time linear in the reply (each character is
parsed as JSON at most once), and JSON nested too deeply to load is an InvalidOutput like any
other unreadable reply, never a RecursionError.
"""

from __future__ import annotations

import ast
import json
import re
from bisect import bisect_left
from collections.abc import Mapping
from typing import Any

from ._nesting import check_nesting
from ._output import InvalidOutput

_REASONING_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE | re.ASCII)
_REASONING_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE | re.ASCII)
_JSON_TAGS = frozenset({"", "json", "jsonc", "json5", "javascript", "js"})
_CLOSE = {"{": "}", "[": "]"}
_SPACE = " \t\r\n\f\v"
_STRING_PREFIX = re.compile(r"[rRuU][\"']")  # {u'a': 1}, a Python string with a prefix
_WORD_VALUE = re.compile(r"(?:true|false|null|True|False|None|NaN|Infinity)\b")
ASK = "answer with the JSON value only"


def extract_json(text: str, schema: Mapping[str, Any] | None = None) -> str:
    """Return the one JSON value in ``text`` that may answer ``schema`` as a string, or raise
    InvalidOutput. Without a schema, an object or an array answers."""
    kinds = answer_kinds(schema)
    text = _without_reasoning(text).strip().lstrip("\ufeff")
    whole = _load(text, _MISSING)
    if whole is not _MISSING and _kind(whole) in kinds:
        return text
    if isinstance(whole, str) and isinstance(_load(whole.strip()), dict) and "object" in kinds:
        return whole.strip()  # the JSON was sent as a JSON string

    from .formats import code_blocks  # a reply that is JSON as it stands never loads formats

    fenced = [body.strip() for tag, body in code_blocks(text) if tag.lower() in _JSON_TAGS]
    candidates = [
        (body, value)
        for body in fenced
        if (value := _load(body, _MISSING)) is not _MISSING and _kind(value) in kinds
    ]
    broken = fenced
    if not candidates:
        spans, python, invalid = _scan(text)
        candidates = [(c, v) for c, v in spans or python if _kind(v) in kinds]
        broken = broken or invalid
    if not candidates and kinds & _SCALARS:
        candidates = _literals(text, kinds)
    if any(c.startswith("{") for c, _ in candidates):
        candidates = [(c, v) for c, v in candidates if c.startswith("{")]

    distinct = list(dict.fromkeys(_fingerprint(c, v) for c, v in candidates))
    if len(distinct) == 1:
        return candidates[0][0]
    if distinct:
        raise InvalidOutput(
            f"Found {len(distinct)} different JSON values in the model output",
            f"- the reply contains {len(distinct)} different JSON values; {ASK}, exactly one",
        )
    if "integer" in kinds and "number" not in kinds and _literals(text, {"number"}):
        raise InvalidOutput(
            "Found only a fractional number in the model output",
            f"- the reply has a number with a fraction, but the answer is a whole number; {ASK}",
        )
    if not broken and 0 <= text.find("{") < text.rfind("}"):
        broken = [text[text.find("{") : text.rfind("}") + 1]]  # unbalanced: show the parse error
    wanted = "JSON value" if schema is None else _wanted(kinds)
    # A number or a boolean is looked for as a literal in the prose too, so the error names
    # what was missing, as the re-ask does, rather than JSON (which ``maybe`` never claimed).
    missing = "JSON" if wanted.startswith("JSON") else wanted
    raise InvalidOutput(
        f"No {missing} found in the model output", _why_not(broken, bool(fenced), wanted)
    )


#: Scalar kinds whose literal may be read out of prose.
_SCALARS = frozenset({"integer", "number", "boolean"})
_MISSING: Any = object()
#: A number standing alone: not part of a word, a version, a date, a time or a grouped number.
_NUMBER = re.compile(
    r"(?<![\w.,:/\-])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.,:/\-]\d)(?!\w)", re.ASCII
)
_BOOLEAN = re.compile(r"\b(?:true|false)\b", re.IGNORECASE)


def answer_kinds(schema: Mapping[str, Any] | None) -> frozenset[str]:
    """The JSON kinds a reply may give for ``schema``: ``object``, ``array``, ``string``,
    ``integer``, ``number``, ``boolean`` or ``null``. A ``{"value": ...}`` envelope may also be
    answered with the bare value."""
    if schema is None:
        return frozenset({"object", "array"})
    kinds = set(_schema_kinds(schema, schema.get("$defs", {}), 0))
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and list(properties) == ["value"]:
        kinds |= _schema_kinds(properties["value"], schema.get("$defs", {}), 0)
    if "number" in kinds:
        kinds.add("integer")
    return frozenset(kinds)


_ALL_KINDS = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})


def _schema_kinds(schema: Any, defs: Mapping[str, Any], depth: int) -> set[str]:
    if not isinstance(schema, Mapping) or depth > 32:
        return set(_ALL_KINDS)
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _schema_kinds(defs.get(ref.removeprefix("#/$defs/")), defs, depth + 1)
    if schema.get("contentMediaType") == "application/json":
        return set(_ALL_KINDS)  # JSON asked for as an encoded string: any value may answer
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    options = [*schema.get("anyOf", []), *schema.get("oneOf", [])]
    if options:
        return set().union(*(_schema_kinds(o, defs, depth + 1) for o in options))
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list):
        return {_kind(v) for v in values}
    return set(_ALL_KINDS)


def _kind(value: Any) -> str:
    """The JSON kind of a loaded value (an integral float such as ``7.0`` is a number)."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string" if isinstance(value, str) else "null"


def _literals(text: str, kinds: frozenset[str] | set[str]) -> list[tuple[str, Any]]:
    """Number or boolean literals standing in the prose (``The answer is 7.``), as candidates."""
    found: list[tuple[str, Any]] = []
    if kinds & {"integer", "number"}:
        for match in _NUMBER.finditer(text):
            value = _load(match.group(), None)
            if value is not None and _kind(value) in kinds:
                found.append((match.group(), value))
    if "boolean" in kinds:
        found += [(m.group().lower(), m.group().lower() == "true") for m in _BOOLEAN.finditer(text)]
    return found


def _without_reasoning(text: str) -> str:
    """``text`` without its ``<think>...</think>`` blocks (each to the first closing tag of its
    name; an unclosed tag stays). Closing tags are found once, up front: searching onward from
    every unclosed tag would make a reply of many unclosed tags quadratic."""
    closes: dict[str, tuple[list[int], list[int]]] = {}
    for match in _REASONING_CLOSE.finditer(text):
        starts, ends = closes.setdefault(match.group(1).lower(), ([], []))
        starts.append(match.start())
        ends.append(match.end())
    if not closes:
        return text
    kept: list[str] = []
    position = 0
    for match in _REASONING_OPEN.finditer(text):
        starts, ends = closes.get(match.group(1).lower(), ([], []))
        k = bisect_left(starts, match.end())
        if match.start() < position or k == len(starts):
            continue
        kept.append(text[position : match.start()])
        position = ends[k]
    kept.append(text[position:])
    return "".join(kept)


def _load(text: str, default: Any = None) -> Any:
    """The JSON value of ``text``, or ``default`` (also when it is nested too deeply to load)."""
    try:
        check_nesting(text)
        return json.loads(text)
    except (ValueError, RecursionError):
        return default


def _container(text: str) -> Any:
    """The object or array ``text`` holds as a whole, or None."""
    value = _load(text) if text[:1] in ("{", "[") else None
    return value if isinstance(value, (dict, list)) else None


def _fingerprint(text: str, value: Any) -> str:
    """A key equal for equal JSON values, so the same value found twice is one candidate."""
    try:
        return json.dumps(value, sort_keys=True)
    except RecursionError:
        return text


def _scan(text: str) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]], list[str]]:
    """Outermost bracket spans: (valid JSON, Python literals as JSON, JSON-looking but invalid),
    the first two with their values.

    A span that does not start like a JSON or Python value (``{Here is the answer: {...}}``) is
    looked inside without being parsed. One that does is parsed and never looked inside: a
    broken one is reported, not searched for parts. So each character is parsed at most once,
    and prose braces nested deep cost linear time, not a parse per level.
    """
    found: list[tuple[str, Any]] = []
    python: list[tuple[str, Any]] = []
    invalid: list[str] = []
    covered = -1
    for start, end in _pairs(text):
        if start <= covered or not _starts_like_a_value(text, start):
            continue
        covered = end
        span = text[start : end + 1]
        if (value := _container(span)) is not None:
            found.append((span, value))
        elif (literal := _from_python(span)) is not None:
            python.append((json.dumps(literal, ensure_ascii=False), literal))
        elif _looks_like_json(span):
            invalid.append(span)
    return found, python, invalid


def _starts_like_a_value(text: str, start: int) -> bool:
    """Whether what follows the bracket at ``start`` could begin a JSON or Python literal."""
    i = start + 1
    while i < len(text) and text[i] in _SPACE:
        i += 1
    ahead = text[i : i + 1]
    if not ahead:
        return False
    if ahead in "\"'{[]}" or _STRING_PREFIX.match(text, i):
        return True
    if text[start] == "{":  # an object's keys are strings
        return False
    return ahead in "-+.0123456789" or _WORD_VALUE.match(text, i) is not None


def _pairs(text: str) -> list[tuple[int, int]]:
    """Matching ``{}``/``[]`` index pairs in one pass, skipping string contents, by start."""
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    strings = _Strings(text)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if stack and ch in "\"'":
            close = strings.end(i)
            if close is not None:
                i = close + 1
                continue
        elif ch in _CLOSE:
            stack.append(i)
        elif ch in "}]" and stack:
            start = stack.pop()
            if _CLOSE[text[start]] == ch:
                pairs.append((start, i))
            else:
                stack.clear()  # mismatched: the brackets so far were prose
        i += 1
    pairs.sort()
    return pairs


class _Strings:
    """Where the string literals in ``text`` end, found in linear time overall."""

    def __init__(self, text: str) -> None:
        self.text = text
        # For each quote character, the index an unclosed string reached: a later quote before
        # it was escaped inside that string, so a string opened there cannot close either.
        self.unclosed = {'"': -1, "'": -1}

    def end(self, start: int) -> int | None:
        """Index of the quote closing the string opened at ``start`` (on its line), or None.

        A single quote opens a string only where a value or key may start (not in "don't").
        """
        quote = self.text[start]
        if start < self.unclosed[quote]:
            return None
        if quote == "'" and not self._value_may_start(start):
            return None
        close, reached = _string_end(self.text, start)
        if close is None:
            self.unclosed[quote] = reached
        return close

    def _value_may_start(self, i: int) -> bool:
        # Walks back over the blanks before this quote only: they end at the previous quote at
        # the latest, so no blank is walked twice.
        i -= 1
        while i >= 0 and self.text[i].isspace():
            i -= 1
        return i >= 0 and self.text[i] in "{[,:"


def _string_end(text: str, start: int) -> tuple[int | None, int]:
    """(index of the closing quote or None, index the scan reached) for the string at ``start``."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote:
            return i, i
        if ch == "\n":
            return None, i
        i += 1
    return None, i


def _looks_like_json(span: str) -> bool:
    inner = span[1:].lstrip()
    return bool(inner) and (inner[0] in "\"{[]}'" or (span[0] == "[" and inner[0] in "-0123456789"))


def _from_python(span: str) -> Any:
    """The value of a Python literal (``{'a': True,}``) holding only JSON types, or None."""
    if not span or span[0] not in "{[":
        return None
    try:
        value = ast.literal_eval(span)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(value, (dict, list)) or not _json_only(value):
        return None
    return value


def _json_only(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_only(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_only(v) for v in value)
    return value is None or isinstance(value, (str, int, float, bool))


def _why_not(broken: list[str], fenced: bool, wanted: str) -> str:
    """The most useful reason, for the model, that no answer was found."""
    where = "the code block" if fenced else "the JSON in the reply"
    for attempt in broken:
        if not _looks_like_json(attempt):
            continue
        try:
            check_nesting(attempt)
            json.loads(attempt)
        except json.JSONDecodeError as exc:
            return (
                f"- {where} is not valid JSON: {exc.msg} at line {exc.lineno}, column "
                f"{exc.colno}; {ASK}"
            )
        except RecursionError:
            return f"- {where} is nested too deeply to read; {ASK}, with less nesting"
    return f"- the reply contains no {wanted}; {ASK}"


def _wanted(kinds: frozenset[str]) -> str:
    """What a re-ask calls the answer it did not find (an envelope's object left out)."""
    return _WANTED.get(kinds - {"object"} if len(kinds) > 1 else kinds, "JSON value")


#: What the re-ask calls the answer it did not find, by the kinds that may answer.
_WANTED = {
    frozenset({"object"}): "JSON object",
    frozenset({"array"}): "JSON array",
    frozenset({"integer"}): "whole number",
    frozenset({"integer", "number"}): "number",
    frozenset({"boolean"}): "true or false",
}
