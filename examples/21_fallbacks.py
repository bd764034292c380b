"""Fallback models: when a provider keeps failing, the next model takes the call over.

The provider emulator plays the providers here (the real SDKs, no network): OpenAI fails, so
Anthropic answers, with a schema and request of its own.
"""

import os
from dataclasses import dataclass

from alloy import CommandError, command
from alloy.events import FellBack, subscribe
from alloy.testing.emulator import Emulator, HttpError, Overloaded, ReplyJson, ReplyRefusal


@dataclass
class City:
    name: str
    country: str


with Emulator() as emu:
    os.environ.update(emu.env())  # every SDK in this process talks to the emulator

    @command(
        output=City,
        model="openai:gpt-5-mini",
        fallback=["anthropic:claude-sonnet-4-6", "gemini:gemini-2.5-flash"],
        retries=0,
    )
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    stop = subscribe(
        lambda e: print(f"  {e.from_model} failed ({type(e.error).__name__}), on to {e.to_model}"),
        FellBack,
    )

    emu.push("openai", HttpError(503))
    emu.push("anthropic", ReplyJson({"name": "Paris", "country": "France"}))
    result = capital.run("France")
    print(result.value, "answered by", result.model)

    # Every model down: the last error is raised, each earlier one is its __cause__.
    emu.push("openai", HttpError(500))
    emu.push("anthropic", Overloaded())
    emu.push("gemini", HttpError(503))
    try:
        capital("Spain")
    except CommandError as error:
        print(f"{type(error).__name__}; before it: {type(error.__cause__).__name__}")

    # A refusal is an answer, not an outage: no fallback is asked.
    emu.reset()
    emu.push("openai", ReplyRefusal())
    try:
        capital("Atlantis")
    except CommandError as error:
        print(f"{type(error).__name__}, fallbacks asked: {len(emu.requests_for('anthropic'))}")
    stop()
