"""What the cache stores: only replies the call accepted, keyed by the endpoint too, turned on
from every configuration layer and served from every kind of store, through the real SDKs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from alloy import ParseError, ProviderError, command, configure, events, use_config
from alloy.testing.emulator import CutStream, Emulator, ReplyJson, ReplyText, ReplyToolCalls

from ..conftest import Call
from .test_cache_through_sdks import PROVIDERS, Weather, chat, weather


@dataclass
class Reading:
    city: str
    temp_c: float


def reading(model: str, **options: Any) -> Any:
    @command(output=Reading, model=model, temperature=0, **options)
    def read(city: str) -> str:
        return f"Weather in {city}?"

    return read


# -- only accepted replies ---------------------------------------------------------------------


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_call_that_failed_validation_stores_nothing(
    provider: str, emu: Emulator, call: Call, cache_file: Path
) -> None:
    model, queue, _ = PROVIDERS[provider]
    emu.push(
        queue,
        ReplyJson({"city": "Paris", "temp_c": "hot"}),  # not a number: ParseError, no re-ask
        ReplyJson({"city": "Paris", "temp_c": 21}),
    )
    read = reading(model, max_reasks=0)
    with use_config(cache=str(cache_file)):
        with pytest.raises(ParseError):
            call(read, "Paris")
        assert call(read, "Paris") == Reading("Paris", 21)  # asked again, not failed again
        assert read.run("Paris").cached  # the valid reply was stored
    assert len(emu.requests_for(queue)) == 2


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_the_invalid_reply_of_a_re_asked_turn_is_not_served_on_the_next_run(
    provider: str, emu: Emulator, run_result: Call
) -> None:
    model, queue, _ = PROVIDERS[provider]
    emu.push(
        queue,
        ReplyJson({"city": "Rome", "temp_c": "hot"}),
        ReplyJson({"city": "Rome", "temp_c": 30}),  # the re-ask's answer
        ReplyJson({"city": "Rome", "temp_c": 31}),  # the next run's first turn, asked again
    )
    with use_config(cache="memory"):
        first = run_result(reading(model), "Rome")
        second = run_result(reading(model), "Rome")
    assert (first.value.temp_c, len(first.transcript.turn_usage)) == (30, 2)
    assert (second.value.temp_c, len(second.transcript.turn_usage)) == (31, 1)
    assert not second.cached
    assert len(emu.requests_for(queue)) == 3


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_typed_stream_whose_value_failed_is_not_stored(provider: str, emu: Emulator) -> None:
    model, queue, _ = PROVIDERS[provider]
    emu.split_streams(3)
    emu.push(
        queue,
        ReplyJson({"city": "Oslo", "temp_c": "cold"}),
        ReplyJson({"city": "Oslo", "temp_c": 2}),
    )
    read = reading(model, max_reasks=0)
    with use_config(cache="memory"):
        with pytest.raises(ParseError):
            list(read.stream_partial("Oslo"))
        assert list(read.stream_partial("Oslo"))[-1].value == Reading("Oslo", 2)
        assert list(read.stream_partial("Oslo"))[-1].value == Reading("Oslo", 2)  # a hit
    assert len(emu.requests_for(queue)) == 2


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_stream_that_fails_mid_way_is_not_stored(provider: str, emu: Emulator) -> None:
    model, queue, _ = PROVIDERS[provider]
    emu.split_streams(4)
    text = "one two three four five six seven eight"
    emu.push(queue, CutStream(after=3, reply=ReplyText(text)), ReplyText(text))
    say = chat(model, retries=0)
    with use_config(cache="memory"):
        with pytest.raises(ProviderError):
            list(say.stream("Count"))
        assert "".join(say.stream("Count")) == text
        assert "".join(say.stream("Count")) == text
    assert len(emu.requests_for(queue)) == 2


def test_a_reply_cut_off_at_the_token_limit_is_not_stored(emu: Emulator) -> None:
    from alloy import TruncatedOutputError
    from alloy.testing.emulator import ReplyMaxTokens

    model, queue, _ = PROVIDERS["anthropic"]
    emu.push(queue, ReplyMaxTokens(), ReplyJson({"city": "Lima", "temp_c": 18}))
    with use_config(cache="memory"):
        with pytest.raises(TruncatedOutputError):
            reading(model)("Lima")
        assert reading(model)("Lima") == Reading("Lima", 18)
    assert len(emu.requests_for(queue)) == 2


def test_a_tool_round_is_stored_once_the_engine_goes_on_from_it(emu: Emulator) -> None:
    model, queue, _ = PROVIDERS["openai-chat"]

    def look_up(city: str) -> str:
        """Today's weather in a city."""
        return f"sunny in {city}"

    emu.push(
        queue,
        ReplyToolCalls(("look_up", {"city": "Oslo"})),
        ReplyJson({"city": "Oslo", "temp_c": "cold"}),  # the final answer fails: nothing of it
        ReplyJson({"city": "Oslo", "temp_c": 3}),
    )
    read = reading(model, tools=[look_up], max_reasks=0)
    with use_config(cache="memory"):
        with pytest.raises(ParseError):
            read("Oslo")
        result = read.run("Oslo")  # the tool turn is a hit, the final turn is asked again
    assert result.value == Reading("Oslo", 3)
    assert [usage.cache_hits for usage in result.transcript.turn_usage] == [1, 0]
    assert len(emu.requests_for(queue)) == 3


# -- the endpoint is part of the key -----------------------------------------------------------


def test_two_endpoints_serving_one_model_name_do_not_share_entries(emu: Emulator) -> None:
    model, queue, _ = PROVIDERS["openai-chat"]
    emu.push(queue, ReplyJson({"city": "Paris", "temp_c": 21}))
    with Emulator() as other:
        other.push(queue, ReplyJson({"city": "Paris", "temp_c": 5}))
        here, there = weather(model), weather(model, base_url=other.openai_base_url)
        with use_config(cache="memory"):
            assert here("Paris").temp_c == 21
            assert there("Paris").temp_c == 5  # another server: not the first one's entry
            assert (here.run("Paris").value.temp_c, there.run("Paris").value.temp_c) == (21, 5)
            assert here.run("Paris").cached and there.run("Paris").cached
        assert len(other.requests_for(queue)) == 1
    assert len(emu.requests_for(queue)) == 1


# -- every configuration layer, and a priced hit -------------------------------------------------


@pytest.mark.parametrize("layer", ["decorator", "configure", "environment"])
def test_every_layer_turns_the_cache_on_for_a_real_call(
    layer: str, emu: Emulator, cache_file: Path, monkeypatch: pytest.MonkeyPatch, call: Call
) -> None:
    model, queue, _ = PROVIDERS["anthropic"]
    emu.push(queue, ReplyJson({"city": "Paris", "temp_c": 21}))
    if layer == "decorator":
        forecast = weather(model, cache=str(cache_file))
    else:
        forecast = weather(model)
        if layer == "configure":
            configure(cache=f"sqlite:///{cache_file}")
        else:
            monkeypatch.setenv("ALLOY_CACHE", str(cache_file))
    assert call(forecast, "Paris") == call(forecast, "Paris") == Weather("Paris", 21)
    assert forecast.run("Paris").cached
    assert len(emu.requests_for(queue)) == 1
    assert cache_file.exists()


def test_a_priced_hit_costs_exactly_nothing(emu: Emulator) -> None:
    model, queue, _ = PROVIDERS["openai-chat"]
    emu.push(queue, ReplyJson({"city": "Paris", "temp_c": 21}))
    with use_config(cache="memory"):
        first = weather(model).run("Paris")
        second = weather(model).run("Paris")
    assert first.cost is not None and first.cost > 0
    assert second.cached and second.cost == 0.0


# -- through a real Redis server -----------------------------------------------------------------


def test_a_call_is_answered_from_a_real_redis_server(emu: Emulator, redis_url: str) -> None:
    import redis

    from alloy.cache._redis import PREFIX

    model, queue, _ = PROVIDERS["gemini"]
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    emu.push(queue, ReplyJson({"city": "Paris", "temp_c": 21}))
    seen: list[str | None] = []
    forecast = weather(model)
    forecast.subscribe(lambda event: seen.append(event.cache), events.ModelResponse)
    with use_config(cache=redis_url, cache_ttl=60):
        first = forecast.run("Paris")
        second = forecast.run("Paris")
    assert first.value == second.value == Weather("Paris", 21)
    assert (first.cached, second.cached) == (False, True) and seen == ["miss", "hit"]
    assert len(emu.requests_for(queue)) == 1
    keys = client.keys(PREFIX + "*")
    assert len(keys) == 1 and 0 < client.pttl(keys[0]) <= 60_000
    client.close()
