"""What the ``serve`` suite's server serves: one typed command, one rail config without rails
and the same config with one cheap synchronous rail (the built-in blocklist, on the input), all
on OpenAI Chat Completions (the emulator, through the variables the suite sets)."""

from __future__ import annotations

from dataclasses import dataclass

from alloy import command
from alloy.rails import blocklist
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
# One rail: the blocklist's input rail alone (it makes one rail per kind asked for).
bench_rail = RailConfig(
    "bench-rail", rails=blocklist(words=["casino"], kinds=("input",)), model=MODEL
)
