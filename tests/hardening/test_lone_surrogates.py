"""A lone surrogate anywhere in what a call sends is the caller's mistake, refused before anything
is sent, on every provider: a ConfigurationError naming the message and part, not a retried
"reply alloy could not read (UnicodeEncodeError...)" from inside the SDK.

The prompt text itself is covered in tests/core/test_commands.py; here are the conversations:
``history=``, prompt functions that return messages (alloy's or role dicts), and worked
examples given as User turns.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from alloy import Assistant, ConfigurationError, System, User, command
from alloy._types import ToolCall, ToolResult
from alloy.testing.emulator import Emulator

from .conftest import PROVIDERS

BAD = "caf\udce9"  # what os.environ holds for Latin-1 bytes decoded with surrogateescape

#: Where the surrogate is -> (history=, the prompt function's messages, examples=), and what the
#: error must say.
PLACES: dict[str, tuple[Any, Any, Any, str]] = {
    "history, a user turn": (
        [User("hello"), Assistant("hi"), User(BAD)],
        None,
        None,
        "ask: history=, message 2, part 0 has a lone surrogate ('\\udce9') at index 3",
    ),
    "history, an assistant turn": (
        [User("hello"), Assistant("fine", BAD)],
        None,
        None,
        "ask: history=, message 1, part 1 has a lone surrogate",
    ),
    "history, a role dict": (
        [{"role": "user", "content": [{"type": "text", "text": BAD}]}],
        None,
        None,
        "ask: history=, message 0, part 0 has a lone surrogate",
    ),
    "history, tool call arguments": (
        [User("x"), Assistant(ToolCall("c1", "look", {"q": {"deep": [BAD]}})), User("y")],
        None,
        None,
        "ask: history=, message 1, part 0 (a tool call) has a lone surrogate",
    ),
    "history, a tool result": (
        [User("x"), Assistant(ToolCall("c1", "look", {})), User(ToolResult("c1", "look", BAD))],
        None,
        None,
        "ask: history=, message 2, part 0 (a tool result) has a lone surrogate",
    ),
    "history, a system message": (
        [System(BAD), User("x"), Assistant("y")],
        None,
        None,
        "ask: history=, message 0 has a lone surrogate",
    ),
    "returned messages, the system message": (
        None,
        [System(BAD), User("x")],
        None,
        "ask's conversation, message 0 has a lone surrogate",
    ),
    "returned messages, the last user turn": (
        None,
        [System("Be brief."), User("x", BAD)],
        None,
        "ask's conversation, message 1, part 1 has a lone surrogate",
    ),
    "a returned User turn": (None, User(BAD), None, "ask's prompt, message 0, part 0"),
    "returned role dicts": (
        None,
        [{"role": "system", "content": "ok"}, {"role": "user", "content": BAD}],
        None,
        "ask's conversation, message 1, part 0 has a lone surrogate",
    ),
    "a worked example given as a User turn": (
        None,
        None,
        [(User(BAD), "an answer")],
        "ask: example 0, part 0 has a lone surrogate",
    ),
}


def make_command(model: str, prompt: Any, examples: Any) -> Any:
    @command(model=model, retries=3, examples=examples)
    def ask(question: str) -> Any:
        return prompt if prompt is not None else question

    ask.__qualname__ = "ask"
    return ask


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_lone_surrogate_in_a_conversation_is_refused_naming_where(
    provider: str, place: str, emu: Emulator
) -> None:
    history, prompt, examples, where = PLACES[place]
    ask = make_command(PROVIDERS[provider][0], prompt, examples)
    options = {} if history is None else {"history": history}

    async def in_async() -> Any:
        return await ask.acall("a question", **options)

    for run in (lambda: ask("a question", **options), lambda: asyncio.run(in_async())):
        with pytest.raises(ConfigurationError) as info:
            run()
        assert where in str(info.value), str(info.value)
        assert "errors='replace'" in str(info.value)
    assert emu.requests == []  # refused before anything was sent, and never retried
