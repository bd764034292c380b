"""Helpers shared by the cloud provider tests (Azure, Vertex AI, Claude on the clouds): a typed
and a text command, every call form against one emulator queue, and an Entra ID token
provider."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from alloy import command
from alloy.testing.emulator import ReplyJson, ReplyText


@dataclass
class Capital:
    city: str
    country: str


def capital_command(model: Any, **options: Any) -> Any:
    @command(output=Capital, model=model, **options)
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    return capital


def text_command(model: Any) -> Any:
    @command(model=model)
    def say(topic: str) -> str:
        return f"Say something about {topic}."

    return say


def streamed(model: Any, emu: Any, queue: str, text: str) -> None:
    """A text stream sync and async, both answered with ``text``."""
    emu.push(queue, ReplyText(text))
    assert "".join(text_command(model).stream("x")) == text

    async def collect() -> str:
        return "".join([chunk async for chunk in text_command(model).astream("x")])

    emu.push(queue, ReplyText(text))
    assert asyncio.run(collect()) == text


def all_forms(emu: Any, model: Any, queue: str) -> None:
    """A typed call sync and async, and a text stream sync and async, all answered (and the
    typed call priced)."""
    emu.push(queue, ReplyJson({"city": "Paris", "country": "France"}))
    result = capital_command(model).run("France")
    assert result.value == Capital("Paris", "France")
    assert result.cost is not None and result.cost > 0
    emu.push(queue, ReplyJson({"city": "Oslo", "country": "Norway"}))
    result = asyncio.run(capital_command(model).arun("Norway"))
    assert result.value == Capital("Oslo", "Norway")
    streamed(model, emu, queue, "Streams from the cloud.")


class Tokens:
    """A token provider handing out a new token per call, like azure.identity's."""

    def __init__(self) -> None:
        self.issued: list[str] = []

    def __call__(self) -> str:
        token = f"entra-token-{len(self.issued)}-abcdefghijklmnop"
        self.issued.append(token)
        return token
