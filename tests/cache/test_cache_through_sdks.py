"""The response cache through every real SDK to the emulator: whole, async and streamed calls
are answered from the store the second time, with no request reaching the provider."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from alloy import CacheMissError, command, events, use_config
from alloy.testing.emulator import Emulator, ReplyJson, ReplyText, ReplyToolCalls

from ..conftest import Call
from ..hardening.conftest import PROVIDERS as ALL_PROVIDERS

#: Every wire API, on models that take a temperature (OpenAI's reasoning models drop it, so
#: their requests are not repeatable: see the test of that below).
PROVIDERS = {**ALL_PROVIDERS, "openai": ("openai:gpt-4.1-mini", *ALL_PROVIDERS["openai"][1:])}
CANARY_KEY = "sk-canary-0a1b2c3d4e5f6a7b8c9d"


@dataclass
class Weather:
    city: str
    temp_c: float


def weather(model: str, **options: Any) -> Any:
    @command(output=Weather, model=model, temperature=0, **options)
    def forecast(city: str) -> str:
        return f"Weather in {city}?"

    return forecast


def chat(model: str, **options: Any) -> Any:
    @command(model=model, temperature=0, **options)
    def say(line: str) -> str:
        return line

    return say


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_repeated_call_is_answered_from_the_cache(
    provider: str, emu: Emulator, run_result: Call, cache_file: Path
) -> None:
    model, queue, _ = PROVIDERS[provider]
    emu.push(queue, ReplyJson({"city": "Paris", "temp_c": 21}))
    with use_config(cache=str(cache_file)):
        first = run_result(weather(model), "Paris")
        second = run_result(weather(model), "Paris")
    assert first.value == second.value == Weather("Paris", 21)
    assert len(emu.requests_for(queue)) == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.usage.input_tokens == second.usage.output_tokens == 0
    assert second.usage.requests == 0 and second.usage.cache_hits == 1
    assert second.cost in (None, 0)


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_stream_replays_as_the_same_chunks(
    provider: str, emu: Emulator, stream: Call, cache_file: Path
) -> None:
    model, queue, _ = PROVIDERS[provider]
    emu.split_streams(3)
    emu.push(queue, ReplyText("The quick brown fox jumps over the lazy dog"))
    with use_config(cache=f"sqlite:///{cache_file}"):
        first = stream(chat(model), "Tell me")
        second = stream(chat(model), "Tell me")
    assert len(first) > 3
    assert second == first
    assert len(emu.requests_for(queue)) == 1


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_tool_rounds_are_cached_per_turn_and_the_tool_still_runs(
    provider: str, emu: Emulator, run_result: Call
) -> None:
    model, queue, _ = PROVIDERS[provider]
    ran: list[str] = []

    def look_up(city: str) -> str:
        """Today's weather in a city."""
        ran.append(city)
        return f"sunny in {city}, 21 C"

    emu.push(
        queue,
        ReplyToolCalls(("look_up", {"city": "Paris"})),
        ReplyJson({"city": "Paris", "temp_c": 21}),
    )
    with use_config(cache="memory"):
        first = run_result(weather(model, tools=[look_up]), "Paris")
        second = run_result(weather(model, tools=[look_up]), "Paris")
    assert first.value == second.value
    assert len(emu.requests_for(queue)) == 2  # both turns of the first call, none of the second
    assert ran == ["Paris", "Paris"]  # the tool has side effects: it runs on every call
    assert second.cached and len(second.transcript.turn_usage) == 2


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_only_repeatable_requests_are_cached_unless_asked(
    provider: str, emu: Emulator, cache_file: Path
) -> None:
    model, queue, _ = PROVIDERS[provider]

    @command(output=Weather, model=model)  # no temperature: the provider's default
    def forecast(city: str) -> str:
        return f"Weather in {city}?"

    emu.push(queue, *[ReplyJson({"city": "Oslo", "temp_c": 2})] * 4)
    with use_config(cache=str(cache_file)):
        forecast("Oslo")
        forecast("Oslo")
        assert len(emu.requests_for(queue)) == 2
        with use_config(cache_all=True):
            forecast("Oslo")
            assert forecast.run("Oslo").cached
    assert len(emu.requests_for(queue)) == 3


def test_a_temperature_the_model_does_not_take_makes_nothing_repeatable(emu: Emulator) -> None:
    model, queue, _ = ALL_PROVIDERS["openai"]  # a reasoning model: temperature is left out
    emu.push(queue, *[ReplyJson({"city": "Oslo", "temp_c": 2})] * 3)
    with use_config(cache="memory"):
        weather(model)("Oslo")
        assert not weather(model).run("Oslo").cached
        with use_config(cache_all=True):
            weather(model)("Oslo")
            assert weather(model).run("Oslo").cached
    assert len(emu.requests_for(queue)) == 3


def test_a_seed_makes_a_request_repeatable(emu: Emulator) -> None:
    model, queue, _ = PROVIDERS["openai-chat"]

    @command(output=Weather, model=model, extra_json={"seed": 7})
    def forecast(city: str) -> str:
        return f"Weather in {city}?"

    emu.push(queue, ReplyJson({"city": "Oslo", "temp_c": 2}))
    with use_config(cache="memory"):
        forecast("Oslo")
        assert forecast.run("Oslo").cached
    assert len(emu.requests_for(queue)) == 1


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_hit_is_validated_again_against_the_current_type(
    provider: str, emu: Emulator, call: Call
) -> None:
    """The store holds the reply, not the value: a type that now refuses it re-asks."""
    from pydantic import BaseModel, field_validator

    model, queue, _ = PROVIDERS[provider]

    def make(strict: bool) -> Any:
        class Reading(BaseModel):
            city: str
            temp_c: float

            @field_validator("temp_c")
            @classmethod
            def plausible(cls, value: float) -> float:
                if strict and value > 50:
                    raise ValueError("no city is that hot")
                return value

        @command(output=Reading, model=model, temperature=0)
        def read(city: str) -> str:
            return f"Weather in {city}?"

        return read

    emu.push(
        queue, ReplyJson({"city": "Rome", "temp_c": 99}), ReplyJson({"city": "Rome", "temp_c": 30})
    )
    with use_config(cache="memory"):
        assert call(make(strict=False), "Rome").temp_c == 99
        assert call(make(strict=True), "Rome").temp_c == 30  # same key; the hit fails, re-asked
    assert len(emu.requests_for(queue)) == 2


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_replay_mode_makes_no_request_and_names_what_is_missing(
    provider: str, emu: Emulator, call: Call, cache_file: Path
) -> None:
    model, queue, _ = PROVIDERS[provider]
    emu.push(queue, ReplyJson({"city": "Paris", "temp_c": 21}))
    with use_config(cache=str(cache_file), cache_mode="record"):
        call(weather(model), "Paris")
    with use_config(cache=str(cache_file), cache_mode="replay"):
        assert call(weather(model), "Paris") == Weather("Paris", 21)
        with pytest.raises(CacheMissError) as missing:
            call(weather(model), "Lima")
    assert "Weather in Lima?" in str(missing.value)
    assert missing.value.key in str(missing.value) and missing.value.model == model
    assert len(emu.requests_for(queue)) == 1


def test_replay_mode_replays_requests_that_are_not_repeatable(
    emu: Emulator, cache_file: Path
) -> None:
    model, queue, _ = PROVIDERS["anthropic"]

    @command(output=Weather, model=model)
    def forecast(city: str) -> str:
        return f"Weather in {city}?"

    emu.push(queue, ReplyJson({"city": "Paris", "temp_c": 21}))
    with use_config(cache=str(cache_file), cache_mode="record"):
        forecast("Paris")
    with use_config(cache=str(cache_file), cache_mode="replay"):
        assert forecast("Paris") == Weather("Paris", 21)
    assert len(emu.requests_for(queue)) == 1


def test_record_mode_refreshes_entries(emu: Emulator, cache_file: Path) -> None:
    model, queue, _ = PROVIDERS["openai"]
    emu.push(
        queue,
        ReplyJson({"city": "Paris", "temp_c": 21}),
        ReplyJson({"city": "Paris", "temp_c": 25}),
    )
    with use_config(cache=str(cache_file)):
        weather(model)("Paris")
    with use_config(cache=str(cache_file), cache_mode="record"):
        assert weather(model)("Paris").temp_c == 25
    with use_config(cache=str(cache_file)):
        assert weather(model)("Paris").temp_c == 25
    assert len(emu.requests_for(queue)) == 2


@pytest.mark.parametrize("emu", [{"OPENAI_API_KEY": CANARY_KEY}], indirect=True)
def test_no_key_is_written_to_the_store(emu: Emulator, cache_file: Path) -> None:
    model, queue, _ = PROVIDERS["openai"]
    emu.push(queue, ReplyJson({"city": "Paris", "temp_c": 21}), ReplyText("Plain words"))
    with use_config(cache=str(cache_file)):
        weather(model)("Paris")
        list(chat(model, api_key=CANARY_KEY).stream("Talk"))
    stored = b"".join(path.read_bytes() for path in cache_file.parent.iterdir())
    assert b"Paris" in stored
    assert CANARY_KEY.encode() not in stored


def test_an_unfinished_stream_is_not_stored(emu: Emulator) -> None:
    model, queue, _ = PROVIDERS["anthropic"]
    emu.split_streams(2)
    emu.push(
        queue, ReplyText("one two three four five six"), ReplyText("one two three four five six")
    )
    say = chat(model)
    with use_config(cache="memory"):
        chunks = say.stream("Count")
        next(chunks)
        chunks.close()
        assert len(list(say.stream("Count"))) > 1
        assert len(list(say.stream("Count"))) > 1
    assert len(emu.requests_for(queue)) == 2


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_typed_partials_replay_from_the_cache(provider: str, emu: Emulator) -> None:
    model, queue, _ = PROVIDERS[provider]
    emu.split_streams(4)
    emu.push(queue, ReplyJson({"city": "Paris", "temp_c": 21}))
    forecast = weather(model)

    async def partials() -> list[Any]:
        return [p.data async for p in forecast.astream_partial("Paris")]

    with use_config(cache="memory"):
        first = [p.data for p in forecast.stream_partial("Paris")]
        second = asyncio.run(partials())
    assert second == first and len(first) > 1
    assert len(emu.requests_for(queue)) == 1


def test_a_hit_shows_on_the_model_response_event(emu: Emulator) -> None:
    model, queue, _ = PROVIDERS["gemini"]
    emu.push(queue, ReplyJson({"city": "Paris", "temp_c": 21}))
    seen: list[bool] = []
    forecast = weather(model)
    forecast.subscribe(lambda event: seen.append(event.cached), events.ModelResponse)
    with use_config(cache="memory"):
        forecast("Paris")
        forecast("Paris")
    assert seen == [False, True]
