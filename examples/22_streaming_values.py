"""Typed values while they stream: a record filled in as the model writes it, then list items
one by one, started over when the model has to answer again. In a terminal the card is redrawn
in place; piped, each change is a new line."""

import sys
from dataclasses import dataclass
from typing import Annotated, Any

from alloy import command, streaming
from alloy.streaming import Restart


@dataclass
class Contact:
    name: Annotated[str, streaming.not_null]  # no card until the name is there
    company: str
    bio: Annotated[str, streaming.grow]  # shown while it is written
    tags: list[str]


@command(output=Contact)
def contact_card(notes: str) -> str:
    return f"Make a contact card from these notes: {notes}"


def card(data: dict[str, Any], writing: tuple[Any, ...]) -> str:
    """One line per field; the field being written gets a cursor."""
    rows = []
    for field in ("name", "company", "bio", "tags"):
        value = data.get(field, "")
        shown = ", ".join(value) if isinstance(value, list) else str(value)
        cursor = "▌" if writing[:1] == (field,) else ""
        rows.append(f"  {field:>8}: {shown}{cursor}")
    return "\n".join(rows)


live = sys.stdout.isatty()
drawn = 0
for partial in contact_card.stream_partial("Ada Lovelace, analyst at the Analytical Engine Co."):
    if partial.data is None:  # nothing yet, or a re-asked answer starting over
        continue
    text = card(partial.data, partial.open_path)
    if live and drawn:
        sys.stdout.write(f"\x1b[{drawn}F\x1b[J")  # back to the card's first line, clear below
    print(text if live else text.replace("\n", " |"), flush=True)
    drawn = text.count("\n") + 1
print("final:", partial.value)


@dataclass
class Step:
    title: str
    minutes: int


@command(output=list[Step])
def recipe(dish: str) -> str:
    return f"List the steps to cook {dish}, with the minutes each takes."


shown: list[Step] = []


def start_over(restart: Restart) -> None:
    """A re-asked answer: the steps shown so far were not kept."""
    del shown[-restart.discarded :]
    print(f"(the model answers again: attempt {restart.attempt})")


steps = recipe.stream_items("pancakes").on_restart(start_over)
for step in steps:  # each step as soon as it is complete and valid
    shown.append(step)
    print(f"step {len(shown)} (attempt {steps.attempt}): {step.title}, {step.minutes} min")
