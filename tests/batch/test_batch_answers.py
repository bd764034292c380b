"""Batch answers alloy cannot read cost only their own row a call online: a 200 answer with
nothing in it, and a line of a results file that does not parse."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from alloy import command
from alloy.testing.emulator import Emulator, ReplyRaw

MODELS = {
    "openai-chat": ("openai", "openai-chat:gpt-4o-mini"),
    "openai": ("openai", "openai:gpt-4o-mini"),
    "anthropic": ("anthropic", "anthropic:claude-sonnet-4-6"),
    "gemini": ("gemini", "gemini:gemini-2.5-flash"),
}

#: A 200 answer with no output in it: no ``choices``, ``output``, ``content`` or ``candidates``.
EMPTY = {
    "openai-chat": {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini"},
    "openai": {"id": "resp_1", "object": "response", "model": "gpt-4o-mini", "status": "completed"},
    "anthropic": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
    },
    "gemini": {"modelVersion": "gemini-2.5-flash", "responseId": "r1"},
}


@dataclass
class City:
    name: str
    country: str


def capital_on(model: str) -> Any:
    @command(output=City, model=model)
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    return capital


def batch(cmd: Any, rows: Any, **options: Any) -> list[Any]:
    return list(cmd.map(rows, mode="batch", poll_interval=0, progress=False, **options))


def online_calls(emu: Emulator, wire: str) -> int:
    return len([r for r in emu.requests_for(wire) if r.api and "batch" not in r.api])


@pytest.mark.parametrize("provider", MODELS)
def test_an_answer_with_no_output_is_asked_online(provider: str, emu: Emulator) -> None:
    wire, model = MODELS[provider]
    emu.push(wire, ReplyRaw.json(EMPTY[provider]))
    found = batch(capital_on(model), ["France", "Peru"])
    assert all(row.ok for row in found), [row.error for row in found if not row.ok]
    assert online_calls(emu, wire) == 1  # only the row whose answer was empty
