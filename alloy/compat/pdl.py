"""Load a ragit PDL schema string as an alloy output type.

::

    load_pdl("[{name: str, age: int {min: 0}}]{min: 3, max: 3}")  # exactly three people
    load_pdl("str {min: 100}")   # the whole reply, at least 100 characters
    load_pdl("yesno")            # a bool from yes/no

Types: ``str``/``string``, ``int``/``integer``, ``float``/``number``, ``bool``/``boolean``,
``[T]`` arrays, ``[]`` arrays of anything, ``{key: T, ...}`` objects, and at the top level only
the non-JSON ``yesno``, ``code`` and ``tasklist``. A ``{min: n, max: n}`` constraint
(``len_min``/``len_max`` too) bounds a number's value, a string's or code's length in
characters, an array's items or a task list's tasks. Unlike ragit, number bounds may be
negative or fractional. Constraint failures are re-asked, as ragit re-prompts. Unknown types
are errors unless ``strict=False`` (then strings, with a warning). A whole PDL document (turns
and a ``<|schema|>`` turn) is read with :func:`~alloy.compat.read_pdl`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .._output import OutputType
from ._pdl_schema import load_schema
from .pdl_document import read_pdl

__all__ = ["load_pdl"]

#: A line that is a PDL turn separator: the text is a whole document, not a schema string.
_TURN_LINE = re.compile(
    r"^[ \t]*<\|(?:user|system|assistant|schema|reasoning)\|>[ \t]*$", re.M | re.I
)


def load_pdl(
    schema: str, *, strict: bool = True, context: Mapping[str, Any] | None = None
) -> OutputType:
    """The output type a PDL schema string describes, or a whole PDL document's ``<|schema|>``
    turn (see :func:`~alloy.compat.read_pdl`, which ``context`` is passed to)."""
    if _TURN_LINE.search(schema):
        return read_pdl(schema, context, strict=strict).output
    return load_schema(schema, strict=strict)
