"""Commands and rail configs the server tests serve (on the emulator or the offline model)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from alloy import command
from alloy.rails import Block, input_rail, output_rail, tool_rail
from alloy.serve import RailConfig

#: What the blocking output rails stop; no byte of it may leave the server.
CANARY = "CANARY-7f3a9c"


class Mood(enum.Enum):
    CALM = "calm"
    ANGRY = "angry"


@dataclass
class Review:
    """A typed answer."""

    title: str
    stars: int
    mood: Mood


@output_rail
def no_canary(value: object) -> Block | None:
    return Block("the answer holds the canary") if CANARY in str(value) else None


@input_rail
def no_passwords(text: str) -> Block | None:
    return Block("the prompt mentions a password") if "password" in text.lower() else None


@tool_rail
def no_deletes(call: object, result: object) -> Block | dict[str, object] | None:
    name = getattr(call, "name", "")
    if result is None and name == "delete_file":
        return Block("deleting files is not allowed")
    return None


@command(retries=0)
def echo(name: str) -> str:
    """Repeat a name back."""
    return f"Say exactly: {name}"


@command(output=Review, retries=0)
def review(product: str, strict: bool = False, limit: int = 5) -> str:
    """Review a product.

    Args:
        product: What to review.
    """
    return f"Review {product} (strict={strict}, at most {limit} stars)"


@command(rails=[no_canary, no_passwords], retries=0)
def guarded(text: str) -> str:
    """A text command with an input and an output rail."""
    return f"Repeat: {text}"


@command(output=Review, rails=[no_canary], retries=0)
def guarded_review(product: str) -> str:
    """A typed command with an output rail."""
    return f"Review {product}"


support = RailConfig("support", rails=[no_canary, no_passwords, no_deletes])
open_chat = RailConfig("open")
