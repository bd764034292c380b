"""Find the JSON in a free-text reply, for models that cannot enforce a schema natively.

Tried in order: the whole text, fenced code blocks (```json or untagged), then bracket-balanced
``{...}``/``[...]`` spans in the prose (looking inside a span that is not JSON itself). Reasoning
blocks (``<think>...</think>``) are ignored. Objects win over arrays, since every schema alloy
sends has an object at its root (so a citation like ``[1]`` is not a candidate). Python-style
literals (single quotes, ``True``, trailing commas) are accepted as a last resort. Several
*different* candidates are an error rather than a guess.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from ._output import InvalidOutput

_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(
    r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)"
    r"(?:\n[ \t]{0,3}(?P=fence)[`~]*[ \t]*(?:$|\n)|\Z)",
    re.DOTALL | re.MULTILINE,
)
_JSON_TAGS = frozenset({"", "json", "jsonc", "json5", "javascript", "js"})
_CLOSE = {"{": "}", "[": "]"}
ASK = "answer with the JSON value only"


def extract_json(text: str) -> str:
    """Return the one JSON value in ``text`` as a string, or raise InvalidOutput."""
    text = _REASONING.sub("", text).strip().lstrip("\ufeff")
    whole = _load(text)
    if isinstance(whole, (dict, list)):
        return text
    if isinstance(whole, str) and isinstance(_load(whole.strip()), dict):
        return whole.strip()  # the JSON was sent as a JSON string

    fenced = [m.group("body") for m in _FENCE.finditer(text) if _tag(m) in _JSON_TAGS]
    candidates = [c for c in (b.strip() for b in fenced) if _is_container(c)]
    broken = [b.strip() for b in fenced]
    if not candidates:
        spans, python, invalid = _scan(text)
        candidates = spans or python
        broken = broken or invalid
    if any(c.startswith("{") for c in candidates):
        candidates = [c for c in candidates if c.startswith("{")]

    distinct = list(dict.fromkeys(json.dumps(json.loads(c), sort_keys=True) for c in candidates))
    if len(distinct) == 1:
        return candidates[0]
    if distinct:
        raise InvalidOutput(
            f"Found {len(distinct)} different JSON values in the model output",
            f"- the reply contains {len(distinct)} different JSON values; {ASK}, exactly one",
        )
    if not broken and 0 <= text.find("{") < text.rfind("}"):
        broken = [text[text.find("{") : text.rfind("}") + 1]]  # unbalanced: show the parse error
    raise InvalidOutput("No JSON found in the model output", _why_not(broken, bool(fenced)))


def _tag(match: re.Match[str]) -> str:
    return match.group("lang").lower()


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _is_container(text: str) -> bool:
    return bool(text) and text[0] in "{[" and isinstance(_load(text), (dict, list))


def _scan(text: str) -> tuple[list[str], list[str], list[str]]:
    """Outermost bracket spans: (valid JSON, Python literals as JSON, JSON-looking but invalid).

    A span that is not JSON and does not even start like JSON (``{Here is the answer: {...}}``)
    is looked inside; one that starts like JSON is reported as broken, not searched for parts.
    """
    found: list[str] = []
    python: list[str] = []
    invalid: list[str] = []
    covered = -1
    for start, end in _pairs(text):
        if start <= covered:
            continue
        span = text[start : end + 1]
        if _is_container(span):
            found.append(span)
        elif (literal := _from_python(span)) is not None:
            python.append(literal)
        elif _looks_like_json(span):
            invalid.append(span)
        else:
            continue
        covered = end
    return found, python, invalid


def _pairs(text: str) -> list[tuple[int, int]]:
    """Matching ``{}``/``[]`` index pairs in one pass, skipping string contents, by start."""
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if stack and (ch == '"' or (ch == "'" and _in_python_string_position(text, i))):
            close = _string_end(text, i)
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


def _string_end(text: str, start: int) -> int | None:
    """Index of the quote closing the string opened at ``start`` (on the same line), or None."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote:
            return i
        if ch == "\n":
            return None
        i += 1
    return None


def _looks_like_json(span: str) -> bool:
    inner = span[1:].lstrip()
    return bool(inner) and (inner[0] in "\"{[]}'" or (span[0] == "[" and inner[0] in "-0123456789"))


def _in_python_string_position(text: str, i: int) -> bool:
    """A single quote opens a string only where a value or key may start (not in "don't")."""
    before = text[:i].rstrip()
    return bool(before) and before[-1] in "{[,:"


def _from_python(span: str) -> str | None:
    """A Python literal (``{'a': True,}``) holding only JSON types, as JSON text."""
    if not span or span[0] not in "{[":
        return None
    try:
        value = ast.literal_eval(span)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(value, (dict, list)) or not _json_only(value):
        return None
    return json.dumps(value, ensure_ascii=False)


def _json_only(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_only(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_only(v) for v in value)
    return value is None or isinstance(value, (str, int, float, bool))


def _why_not(broken: list[str], fenced: bool) -> str:
    """The most useful reason, for the model, that no JSON was found."""
    for attempt in broken:
        if not _looks_like_json(attempt):
            continue
        try:
            json.loads(attempt)
        except json.JSONDecodeError as exc:
            where = "the code block" if fenced else "the JSON in the reply"
            return (
                f"- {where} is not valid JSON: {exc.msg} at line {exc.lineno}, column "
                f"{exc.colno}; {ASK}"
            )
    return f"- the reply contains no JSON value; {ASK}"
