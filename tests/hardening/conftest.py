"""What the hardening tests share: the providers as alloy names them, and the emulator."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from alloy import command
from alloy.providers import providers
from alloy.testing.emulator import SDK_ENV_PREFIXES, Emulator

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
