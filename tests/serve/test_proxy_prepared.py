"""The usual proxied request (no options, tools or response format of its own) is prepared
once per RailConfig and reused, but never past a change it was resolved from: a listener
subscribed, or the configuration changed, between two requests."""

from __future__ import annotations

from typing import Any

import pytest

import alloy
from alloy import events as ev
from alloy.serve import RailConfig, _proxy
from alloy.testing.emulator import ReplyText

from .conftest import Start
from .test_openai import MESSAGES, client


@pytest.fixture
def prepared(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Each call the proxy prepared."""
    made: list[Any] = []
    real = _proxy.prepare

    def counting(*args: Any, **kwargs: Any) -> Any:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(_proxy, "prepare", counting)
    return made


@pytest.mark.parametrize("stream", [False, True])
def test_the_usual_request_is_prepared_once(
    start: Start, on_emulator: Any, prepared: list[Any], stream: bool
) -> None:
    url = start({"open": RailConfig("open")})
    for text in ("One.", "Two.", "Three."):
        on_emulator.push("openai", ReplyText(text))
        client(url).chat.completions.create(model="open", messages=MESSAGES, stream=stream)
    assert len(prepared) == 1


def test_a_request_with_options_of_its_own_is_prepared_for_itself(
    start: Start, on_emulator: Any, prepared: list[Any]
) -> None:
    url = start({"open": RailConfig("open")})
    for _ in range(2):
        on_emulator.push("openai", ReplyText("Hi."))
        client(url).chat.completions.create(model="open", messages=MESSAGES, temperature=0.5)
    assert len(prepared) == 2


def test_a_listener_subscribed_between_requests_is_told(start: Start, on_emulator: Any) -> None:
    url = start({"open": RailConfig("open")})
    on_emulator.push("openai", ReplyText("Before."), ReplyText("After."))
    client(url).chat.completions.create(model="open", messages=MESSAGES)
    seen: list[ev.Event] = []
    stop = ev.subscribe(seen.append)
    try:
        client(url).chat.completions.create(model="open", messages=MESSAGES)
    finally:
        stop()
    assert any(isinstance(event, ev.CommandFinished) for event in seen)


def test_configure_between_requests_holds_for_the_next(start: Start, on_emulator: Any) -> None:
    url = start({"open": RailConfig("open")})
    on_emulator.push("openai", ReplyText("Before."), ReplyText("After."))
    client(url).chat.completions.create(model="open", messages=MESSAGES)
    alloy.configure(max_tokens=77)
    client(url).chat.completions.create(model="open", messages=MESSAGES)
    first, second = (request.body for request in on_emulator.requests)
    assert first.get("max_output_tokens") != 77
    assert second["max_output_tokens"] == 77
