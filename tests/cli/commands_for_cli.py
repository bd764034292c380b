"""Small commands for the ``alloy`` command-line tests (run on the offline model)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from alloy import command


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclass
class Point:
    x: int
    y: int


@dataclass
class Summary:
    """A typed result the offline model fills in."""

    title: str
    words: int
    tags: list[str]


@command(output=Summary)
def summarize(text: str, max_words: int = 50) -> str:
    """Summarize a text.

    Args:
        text: The text to summarize.
        max_words: Upper bound on the summary's length.
    """
    return f"Summarize in at most {max_words} words:\n{text}"


@command(output=int)
def add(a: int, b: int) -> str:
    return f"What is {a} + {b}?"


@command
def echo(
    text: str,
    times: int = 1,
    loud: bool = False,
    color: Color = Color.RED,
    ratio: float = 0.5,
    tags: list[str] | None = None,
    point: Point | None = None,
) -> str:
    """Say something back; the arguments land in the prompt so tests can see them."""
    return f"text={text} times={times} loud={loud} color={color.value} ratio={ratio} tags={tags} point={point}"


@command(output=bool)
async def is_long(text: str) -> str:
    return f"Is this long? {text}"


@command
def broken(text: str) -> str:
    raise ValueError("the prompt function failed")


def not_a_command(text: str) -> str:
    return text
