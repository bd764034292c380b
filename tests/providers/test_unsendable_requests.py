"""A failure before anything is sent is not the provider's fault: a request body the SDK cannot
send (nested too deeply for it, or holding text no UTF-8 can hold) is a ConfigurationError,
raised before sending and never retried, not a retried "reply alloy could not read"."""

from __future__ import annotations

from typing import Any

import pytest

from alloy import Assistant, ConfigurationError, User, command
from alloy._types import ToolCall, ToolResult
from alloy.providers import get_model
from alloy.providers._base import unsendable
from alloy.testing.emulator import Emulator

from ..conftest import Call
from ..hardening.conftest import PROVIDERS


def nested(levels: int) -> dict[str, Any]:
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(levels - 1):
        inner["a"] = {}
        inner = inner["a"]
    return deep


@pytest.mark.parametrize("provider", ["gemini", "anthropic", "ollama"])
def test_tool_arguments_too_deep_to_send_are_refused_before_sending(
    emu: Emulator, call: Call, provider: str
) -> None:
    model = PROVIDERS[provider][0]

    @command(model=model, retries=3)
    def ask(q: str) -> str:
        return q

    history = [
        User("x"),
        Assistant(ToolCall("c1", "look", nested(600))),
        User(ToolResult("c1", "look", "r")),
    ]
    before = len(emu.requests)
    with pytest.raises(ConfigurationError, match=r"nests deeper than .* nothing was sent"):
        call(ask, "hi", history=history)
    assert len(emu.requests) == before


def test_the_limit_counts_levels_of_objects_and_arrays() -> None:
    assert unsendable({"a": nested(9)}, 10) is None
    assert "deeper than 10 levels" in (unsendable({"a": [nested(9)]}, 10) or "")
    assert unsendable({"text": "caf\udce9"}, 10) == (
        "text has a lone surrogate (text no UTF-8 can hold)"
    )
    assert unsendable({"messages": [{"content": ["ok", "\ud800"]}]}, 10) == (
        "messages.0.content.1 has a lone surrogate (text no UTF-8 can hold)"
    )
    assert unsendable({"x": "naïve ☃", "y": [1, None, 2.5]}, 10) is None


@pytest.mark.parametrize(
    "fault",
    [
        RecursionError("too deep"),
        UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"),
    ],
)
def test_what_the_sdk_raises_while_encoding_is_not_sent_and_not_retried(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, fault: Exception
) -> None:
    model = get_model(PROVIDERS["anthropic"][0])
    sent: list[Any] = []

    def send(*args: Any) -> Any:
        sent.append(args)
        raise fault

    monkeypatch.setattr(model, "send", send)

    @command(model=model, retries=3)
    def ask(q: str) -> str:
        return q

    with pytest.raises(ConfigurationError, match="could not encode the request") as info:
        ask("hi")
    assert len(sent) == 1
    assert info.value.__cause__ is None and info.value.__context__ is None
