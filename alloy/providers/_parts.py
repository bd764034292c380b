"""What every adapter's message builder shares: the error for a part in the wrong turn.

Builders match a turn's parts exhaustively (``match`` with ``assert_never``), so a new kind of
``Part`` is a type error in every adapter until each says how it goes on its wire. A part that
cannot stand where it is (a tool call in the user's turn, an image in the model's) is the
caller's mistake, made in a conversation history they passed.
"""

from __future__ import annotations

from .._types import Part
from ..errors import ConfigurationError


def misplaced(part: Part, turn: str) -> ConfigurationError:
    """The error for ``part`` found in a ``turn`` ("user" or "model") that cannot hold it."""
    return ConfigurationError(
        f"A {turn} turn cannot hold a {type(part).__name__} part: a conversation passed to a "
        "model must keep tool calls and model text in model turns, and prompts, media, tool "
        "results and re-asks in user turns"
    )
