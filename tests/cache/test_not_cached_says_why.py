"""A configured cache never does nothing in silence: a command whose requests are not cached
says why once, at WARNING, naming the fix (issue 26, item 3)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pytest

from alloy import command, use_config
from alloy.testing.emulator import Emulator, ReplyJson


@dataclass
class City:
    name: str
    country: str


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name.startswith("alloy")
        and record.levelno == logging.WARNING
        and "not cached" in record.getMessage()
    ]


def test_temperature_zero_on_a_model_that_takes_none_says_once_why_nothing_is_cached(
    emu: Emulator,
    cache_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("ALLOY_CACHE", str(cache_file))
    monkeypatch.setenv("ALLOY_TEMPERATURE", "0")
    emu.push("openai", *[ReplyJson({"name": "Paris", "country": "France"})] * 3)

    @command(output=City, model="openai:gpt-5-mini")
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    caplog.set_level(logging.DEBUG, logger="alloy")
    for _ in range(3):
        assert not capital.run("France").cached
    said = _warnings(caplog)
    assert len(said) == 1, said
    assert "capital" in said[0] and "openai:gpt-5-mini takes no temperature" in said[0]
    for fix in ("cache_all=True", "ALLOY_CACHE_ALL=1", "seed", "temperature=0"):
        assert fix in said[0]


def test_a_command_with_copies_and_many_rows_says_it_once(
    emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    emu.push("anthropic", *[ReplyJson({"name": "Paris", "country": "France"})] * 4)

    @command(output=City, model="anthropic:claude-sonnet-4-6")  # no temperature, no seed
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    with use_config(cache="memory"):
        capital("France")
        capital.with_options(max_tokens=500)("France")
        list(capital.map(["France", "France"]))
    said = _warnings(caplog)
    assert len(said) == 1 and "not repeatable (no temperature 0 and no seed)" in said[0]


def test_a_cached_command_and_one_without_a_cache_say_nothing(
    emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    emu.push("anthropic", *[ReplyJson({"name": "Paris", "country": "France"})] * 2)

    @command(output=City, model="anthropic:claude-sonnet-4-6", temperature=0)
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    @command(output=City, model="anthropic:claude-sonnet-4-6")
    def guess(country: str) -> str:
        return f"What is the capital of {country}?"

    guess("France")  # no cache: nothing to say
    with use_config(cache="memory"):
        capital("France")
        assert capital.run("France").cached
    assert _warnings(caplog) == []


def test_a_reply_that_cannot_be_stored_says_so_once(caplog: pytest.LogCaptureFixture) -> None:
    from alloy._types import Opaque, Response, Text
    from alloy.testing import FunctionModel, override_model

    def answer(request: object) -> Response:
        return Response((Opaque("trace", object()), Text("42")))

    @command(output=int, temperature=0)
    def number(question: str) -> str:
        return question

    with override_model(FunctionModel(answer)), use_config(cache="memory"):
        assert [number.run("How many?").cached for _ in range(3)] == [False] * 3
    said = _warnings(caplog) + [
        r.getMessage() for r in caplog.records if "is not stored" in r.getMessage()
    ]
    assert len(said) == 1 and "no JSON form" in said[0]
