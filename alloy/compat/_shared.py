"""What both spec loaders need to stay safe on hostile specs: a nesting limit, type names that
stay unique cheaply, and short excerpts and positions for error messages.

A spec is configuration, so every problem in one is a ConfigurationError that says where it is;
an over-deep or over-long spec must fail fast, not exhaust the stack or the clock. Both specs
also allow a container whose contents they leave open (:func:`open_json`).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

#: How deep objects and arrays may nest in a spec. Real specs use a handful of levels; a deeper
#: one would only exhaust the stack, here or in pydantic's schema builder.
MAX_DEPTH = 32


class TypeNames:
    """Unique class names for the types a spec builds: ``Person``, ``Person2``, ``Person3``...

    The next number is remembered per name, so many fields named alike cost linear time instead
    of trying every taken number again for each new one.
    """

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.next_number: dict[str, int] = {}

    def unique(self, name: str) -> str:
        candidate, n = name, self.next_number.get(name, 1)
        if n > 1:
            candidate = f"{name}{n}"
        while candidate in self.taken:
            n += 1
            candidate = f"{name}{n}"
        self.taken.add(candidate)
        self.next_number[name] = n + 1
        return candidate


def excerpt(text: str, limit: int = 60) -> str:
    """``text`` quoted, cut to about ``limit`` characters so an error message stays readable."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}..."


def surrogate_at(text: str) -> int | None:
    """The index of the first lone surrogate in ``text`` (not valid Unicode text), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def too_deep() -> str:
    """The problem with a spec nested deeper than MAX_DEPTH, for an error message."""
    return f"nested more than {MAX_DEPTH} levels deep (the limit)"


# -- open values ----------------------------------------------------------------------------


def open_json(kind: type, description: str | None) -> Any:
    """An object (``kind`` dict) or array (``kind`` list) whose contents the spec leaves open
    (RAIL's ``<object/>``, PDL's ``[]``).

    No provider's strict mode can describe an open object, so the schema asks for the value as a
    JSON-encoded string; a reply may give that string or the value itself, and the Python value
    is the decoded one.
    """
    from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

    shape = "object" if kind is dict else "array"
    ask = f"A JSON {shape}, written as a JSON-encoded string."
    schema = {
        "type": "string",
        "contentMediaType": "application/json",
        "description": f"{description} ({ask})" if description else ask,
    }

    def decode(value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                raise ValueError(f"expected a JSON {shape} (as a JSON-encoded string)") from None
        if not isinstance(value, kind):
            raise ValueError(f"expected a JSON {shape}")
        return value

    tp = dict[str, Any] if kind is dict else list[Any]
    return Annotated[
        tp,
        BeforeValidator(decode),
        PlainSerializer(json.dumps, when_used="json"),
        WithJsonSchema(schema),
    ]
