"""Find the JSON in a free-text reply, for models that cannot enforce a schema natively.

Tried in order: the whole text, a fenced ```json block, then balanced ``{...}``/``[...]`` spans.
Several *different* candidates are an error rather than a guess.
"""

from __future__ import annotations

import json
import re

from ._output import InvalidOutput

_FENCED = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)\n?```", re.DOTALL)


def extract_json(text: str) -> str:
    """Return the one JSON value in ``text`` as a string, or raise InvalidOutput."""
    stripped = text.strip()
    if _is_json(stripped):
        return stripped
    fenced = [block.strip() for block in _FENCED.findall(text) if _is_json(block.strip())]
    candidates = fenced or [span for span in _balanced_spans(text) if _is_json(span)]
    distinct = list(dict.fromkeys(json.dumps(json.loads(c), sort_keys=True) for c in candidates))
    if len(distinct) == 1:
        return candidates[0]
    if not distinct:
        raise InvalidOutput(
            "No JSON found in the model output",
            "- the reply contains no JSON value; answer with the JSON object only",
        )
    raise InvalidOutput(
        f"Found {len(distinct)} different JSON values in the model output",
        f"- the reply contains {len(distinct)} different JSON values; answer with exactly one",
    )


def _is_json(text: str) -> bool:
    if not text or text[0] not in "{[":
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _balanced_spans(text: str) -> list[str]:
    """Top-level ``{...}`` and ``[...]`` spans, respecting strings and escapes."""
    spans: list[str] = []
    depth = 0
    start = -1
    in_string = False
    escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"' and depth > 0:
            in_string = True
        elif ch in "{[":
            if depth == 0:
                start = i
            depth += 1
        elif ch in "}]" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans
