"""Text that cannot be sent: lone surrogates.

A Python ``str`` may hold code points U+D800..U+DFFF, which UTF-8 cannot encode; they come from
bytes decoded with ``errors="surrogateescape"`` (``os.environ``, ``sys.argv``, file names on
POSIX). Sent to a provider, such text fails inside the SDK with a raw ``UnicodeEncodeError``, so
the caller's own text is refused up front and text the model will read is repaired.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .errors import ConfigurationError

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: How to get rid of them, for error messages.
SURROGATE_ADVICE = (
    "it usually comes from bytes decoded with errors='surrogateescape' (os.environ, sys.argv, "
    "file names); decode those bytes with errors='replace' instead"
)


def lone_surrogate_at(text: str) -> int | None:
    """The index of the first lone surrogate in ``text``, or None when it encodes as UTF-8."""
    if text.isascii():  # the common case, answered without a scan
        return None
    found = _LONE_SURROGATE.search(text)
    return found.start() if found else None


def replace_lone_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, the replacement character."""
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)


def sendable(text: str, where: str) -> str:
    """``text`` itself, or a ConfigurationError naming ``where`` when it holds a lone surrogate."""
    if text.isascii():  # the usual prompt, answered without a scan
        return text
    index = lone_surrogate_at(text)
    if index is None:
        return text
    raise ConfigurationError(
        f"{where} has a lone surrogate ({text[index]!r}) at index {index}, "
        f"which cannot be sent as UTF-8: {SURROGATE_ADVICE}"
    )


def sendable_value(value: Any, where: str) -> None:
    """Every string in ``value`` (a JSON-like value: tool arguments, a provider's opaque data)
    checked by :func:`sendable`. Walked with a stack, so deep nesting is no RecursionError."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            sendable(item, where)
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
