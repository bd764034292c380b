"""A whole (not streamed) OpenAI request is posted as alloy built it: the SDK's ``create()``
walk of the body against its parameter types, which changes nothing in a body of plain JSON
and was the largest part of the SDK's work on a request, is skipped. The body the server gets
and the answer are those of before; a streamed request still goes through ``create()``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from alloy import command
from alloy.testing.emulator import Emulator, ReplyText

WIRES = {
    "openai-chat:gpt-4o-mini": "openai.resources.chat.completions.completions",
    "openai:gpt-4o-mini": "openai.resources.responses.responses",
}


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each body the SDK walked against its parameter types, on either wire API."""
    import importlib

    walked: list[str] = []
    for module_name in WIRES.values():
        module = importlib.import_module(module_name)
        for name in ("maybe_transform", "async_maybe_transform"):
            real = getattr(module, name)

            def counting(*args: Any, _real: Any = real, _name: str = name) -> Any:
                walked.append(_name)
                return _real(*args)

            monkeypatch.setattr(module, name, counting)
    return walked


@pytest.mark.parametrize("model", list(WIRES))
@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_whole_request_is_posted_without_the_sdks_walk(
    emu: Emulator, walks: list[str], model: str, asynchronous: bool
) -> None:
    @command(model=model, temperature=0.5, max_tokens=40)
    def greet(name: str) -> str:
        return f"Greet {name}."

    emu.push("openai", ReplyText("Hello, Ada."))
    answer = asyncio.run(greet.acall("Ada")) if asynchronous else greet("Ada")
    assert answer == "Hello, Ada."
    body = emu.last_request("openai").body
    assert body["model"] == "gpt-4o-mini"
    assert body["temperature"] == 0.5
    assert "Greet Ada." in str(body)
    assert walks == []


def test_a_streamed_request_still_goes_through_create(emu: Emulator, walks: list[str]) -> None:
    @command(model="openai-chat:gpt-4o-mini")
    def greet(name: str) -> str:
        return f"Greet {name}."

    emu.push("openai", ReplyText("Hello, Ada."))
    assert "".join(greet.stream("Ada")) == "Hello, Ada."
    assert walks
