"""One nesting limit for the JSON a model sends, the same on every Python version.

``json.loads`` recurses once per level, and where it gives up depends on the interpreter: on
3.10-3.12 a RecursionError comes a little under the recursion limit (1000 levels), on 3.13 only
from the C stack, tens of thousands of levels down. pydantic refuses JSON deeper than ~200
levels in any case. alloy refuses JSON nested deeper than :data:`MAX_NESTING` before loading
it, with the RecursionError its readers already turn into "nested too deeply", so what a model
and a caller are told does not change with the Python alloy runs on.
"""

from __future__ import annotations

import re

__all__ = ["MAX_NESTING", "check_nesting"]

#: Levels of ``[``/``{`` a JSON text may open; deeper is refused.
MAX_NESTING = 500
#: A JSON string (escapes included) or one bracket: brackets inside strings do not nest.
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def check_nesting(text: str) -> None:
    """Raise RecursionError when ``text`` opens more than :data:`MAX_NESTING` brackets at once.

    A text with fewer brackets than the limit in all is let through after two counts; only
    one with more is scanned.
    """
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token == "[" or token == "{":
            depth += 1
            if depth > MAX_NESTING:
                raise RecursionError(f"JSON nested deeper than {MAX_NESTING} levels")
        elif token == "]" or token == "}":
            depth -= 1
