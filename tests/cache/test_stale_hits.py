"""A cached reply that fails validation falls through to the provider (issue 27, item 15): the
hit is dropped, the same request is asked fresh, and a good fresh reply replaces the entry.
Before, with ``max_reasks=0`` such a reply failed every run from the store, and the provider
was never asked."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, field_validator

from alloy import ParseError, command, use_config
from alloy.testing.emulator import Emulator, ReplyJson

from ..conftest import Call
from ..hardening.conftest import PROVIDERS

MODEL, QUEUE, _ = PROVIDERS["anthropic"]


def reading(strict: bool | Callable[[], bool], **options: Any) -> Any:
    """A command whose output type refuses more than 50 degrees when ``strict`` (or, given a
    function, whenever it says so): the same schema, so the same cache key, either way."""

    class Reading(BaseModel):
        city: str
        temp_c: float

        @field_validator("temp_c")
        @classmethod
        def plausible(cls, value: float) -> float:
            if (strict() if callable(strict) else strict) and value > 50:
                raise ValueError("no city is that hot")
            return value

    @command(output=Reading, model=MODEL, temperature=0, max_reasks=0, **options)
    def read(city: str) -> str:
        return f"Weather in {city}?"

    return read


def test_a_cached_reply_that_fails_validation_is_asked_again_and_replaced(
    emu: Emulator, call: Call, cache_file: Path
) -> None:
    emu.push(
        QUEUE, ReplyJson({"city": "Rome", "temp_c": 99}), ReplyJson({"city": "Rome", "temp_c": 30})
    )
    with use_config(cache=str(cache_file)):
        assert call(reading(strict=False), "Rome").temp_c == 99
        assert call(reading(strict=True), "Rome").temp_c == 30  # the hit refused: asked fresh
        again = reading(strict=True).run("Rome")
    assert again.cached and again.value.temp_c == 30  # the fresh reply replaced the entry
    sent = emu.requests_for(QUEUE)
    assert len(sent) == 2 and sent[0].body == sent[1].body  # the same request, not a re-ask


def test_a_streamed_hit_that_fails_validation_streams_the_fresh_reply(emu: Emulator) -> None:
    emu.push(
        QUEUE, ReplyJson({"city": "Rome", "temp_c": 99}), ReplyJson({"city": "Rome", "temp_c": 30})
    )
    with use_config(cache="memory"):
        first = list(reading(strict=False).stream_partial("Rome"))
        partials = list(reading(strict=True).stream_partial("Rome"))
    assert first[-1].data["temp_c"] == 99
    assert partials[-1].data["temp_c"] == 30 and partials[-1].attempt == 2  # started over
    assert len(emu.requests_for(QUEUE)) == 2


def test_a_fresh_reply_that_fails_too_is_the_providers_error(emu: Emulator) -> None:
    emu.push(QUEUE, *[ReplyJson({"city": "Rome", "temp_c": 99})] * 2)
    with use_config(cache="memory"):
        reading(strict=False)("Rome")
        with pytest.raises(ParseError) as failed:
            reading(strict=True)("Rome")
    assert "response cache" not in str(failed.value)
    assert len(emu.requests_for(QUEUE)) == 2


def test_in_replay_mode_the_error_says_the_reply_came_from_the_cache(
    emu: Emulator, cache_file: Path
) -> None:
    emu.push(QUEUE, ReplyJson({"city": "Rome", "temp_c": 99}))
    with use_config(cache=str(cache_file), cache_mode="record"):
        reading(strict=False)("Rome")
    replay = use_config(cache=str(cache_file), cache_mode="replay")
    with replay, pytest.raises(ParseError, match="this reply came from the response cache"):
        reading(strict=True)("Rome")
    assert len(emu.requests_for(QUEUE)) == 1


def test_a_hit_handed_out_again_and_again_is_still_asked_fresh_when_refused(
    emu: Emulator,
) -> None:
    """A command answering the same request from the cache again hands out the reply it made
    for the last hit, not a copy: refusing it still sends the request to the provider."""
    strict = [False]
    read = reading(lambda: strict[0], cache="memory")
    emu.push(
        QUEUE, ReplyJson({"city": "Rome", "temp_c": 99}), ReplyJson({"city": "Rome", "temp_c": 30})
    )
    hits = [read.run("Rome") for _ in range(3)]
    assert [hit.cached for hit in hits] == [False, True, True]
    strict[0] = True
    assert read("Rome").temp_c == 30
    assert read.run("Rome").cached and len(emu.requests_for(QUEUE)) == 2
