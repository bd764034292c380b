"""Commands the MCP tests serve (in memory, over stdio and over Streamable HTTP)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from alloy import command, tool
from alloy.rails import Block, input_rail


class Mood(enum.Enum):
    CALM = "calm"
    ANGRY = "angry"


@dataclass
class Review:
    """A typed answer."""

    title: str
    stars: int
    mood: Mood


@input_rail
def no_passwords(text: str) -> Block | None:
    return Block("the prompt mentions a password") if "password" in text.lower() else None


@tool
def stock(product: str) -> int:
    """How many of a product are in stock."""
    return 3


@command(output=Review, retries=0)
def review(product: str, strict: bool = False, limit: int = 5) -> str:
    """Review a product.

    Args:
        product: What to review.
    """
    return f"Review {product} (strict={strict}, at most {limit} stars)"


@command(retries=0)
def echo(name: str) -> str:
    """Repeat a name back."""
    return f"Say exactly: {name}"


@command(output=list[int], retries=0)
def count(n: int) -> str:
    """Count from 1 to n."""
    return f"Count to {n}"


@command(output=int, tools=[stock], retries=0)
def in_stock(product: str) -> str:
    """How many of a product are in stock, asked of the stock tool."""
    return f"How many {product}?"


@command(rails=[no_passwords], retries=0)
def guarded(text: str) -> str:
    """A text command with an input rail."""
    return f"Repeat: {text}"
