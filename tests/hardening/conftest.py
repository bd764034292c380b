"""What the hardening tests share: the providers as alloy names them, and a command per form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from alloy import command
from alloy.providers import providers

#: alloy provider -> (model string, the emulator queue serving it, the SDK's key variable), for
#: every provider the emulator speaks to, from its descriptor (its first example model).
PROVIDERS: dict[str, tuple[str, str, str]] = {
    p.name: (f"{p.name}:{p.example_models[0]}", p.wire, p.key_env[0])
    for p in providers().values()
    if p.wire is not None
}
FORMS = ("call", "acall", "stream", "astream")
STREAMED = ("stream", "astream")


@dataclass
class Weather:
    city: str
    temp_c: float


def weather_command(form: str, **options: Any) -> Any:
    """A command asking for the weather: text for the streamed forms, a Weather otherwise."""
    if form in STREAMED:

        @command(**options)
        def text(city: str) -> str:
            return f"Weather in {city}?"

        return text

    @command(output=Weather, **options)
    def typed(city: str) -> str:
        return f"Weather in {city}?"

    return typed
