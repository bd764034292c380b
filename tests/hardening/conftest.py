"""What the hardening tests share: the providers as alloy names them, and the emulator."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from alloy import command
from alloy.testing.emulator import SDK_ENV_PREFIXES, Emulator

#: alloy provider -> (model string, the emulator queue serving it, the SDK's key variable)
PROVIDERS: dict[str, tuple[str, str, str]] = {
    "openai": ("openai:gpt-4o-mini", "openai", "OPENAI_API_KEY"),
    "openai-chat": ("openai-chat:gpt-4o-mini", "openai", "OPENAI_API_KEY"),
    "anthropic": ("anthropic:claude-sonnet-4-6", "anthropic", "ANTHROPIC_API_KEY"),
    "gemini": ("gemini:gemini-2.5-flash", "gemini", "GEMINI_API_KEY"),
    "ollama": ("ollama:llama3.2", "ollama", "OLLAMA_API_KEY"),
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


@pytest.fixture(scope="package")
def emulator() -> Iterator[Emulator]:
    with Emulator() as emu:
        yield emu


@pytest.fixture
def emu(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    """The emulator, reset, with every SDK pointed at it and no key in the environment."""
    emulator.reset()
    for name in list(os.environ):
        if name.startswith(SDK_ENV_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    for name, value in emulator.env().items():
        if not name.endswith("_API_KEY"):
            monkeypatch.setenv(name, value)
    yield emulator
    emulator.reset()
