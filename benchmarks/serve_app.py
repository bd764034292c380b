"""What the ``serve`` suite's server serves: one typed command and one rail config without
rails, both on OpenAI Chat Completions (the emulator, through the variables the suite sets)."""

from __future__ import annotations

from dataclasses import dataclass

from alloy import command
from alloy.serve import RailConfig

MODEL = "openai-chat:gpt-4o-mini"


@dataclass
class Greeting:
    name: str
    text: str


@command(output=Greeting, model=MODEL, temperature=0)
def greet(name: str) -> str:
    """Greet someone."""
    return f"Greet {name} warmly."


bench = RailConfig("bench", model=MODEL)
