"""The rate limits a provider states in its reply headers ride on the values: the adapters read
them onto each Response (whole or streamed) and each ProviderError, through the real SDKs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from alloy._types import (
    Done,
    RateLimits,
    Request,
    Response,
    StreamEvent,
    Text,
    UserTurn,
    Window,
)
from alloy.errors import RateLimitError
from alloy.providers import get_model
from alloy.rows import PacedModel, Pacer
from alloy.testing.emulator import Emulator

STATING = [
    ("openai", "openai-chat:gpt-4o-mini"),
    ("openai", "openai:gpt-4o-mini"),
    ("anthropic", "anthropic:claude-sonnet-4-6"),
]


def a_request() -> Request:
    return Request("m", (UserTurn(Text("hi")),))


def last(events: Iterator[StreamEvent]) -> Response:
    *_, done = events
    assert isinstance(done, Done)
    return done.response


async def alast(events: AsyncIterator[StreamEvent]) -> Response:
    done = [event async for event in events][-1]
    assert isinstance(done, Done)
    return done.response


def every_way(model: Any) -> list[Response]:
    return [
        model.request(a_request()),
        asyncio.run(model.arequest(a_request())),
        last(model.stream(a_request())),
        asyncio.run(alast(model.astream(a_request()))),
    ]


@pytest.mark.parametrize(("wire", "name"), STATING)
def test_every_reply_carries_the_limits_its_headers_state(
    wire: str, name: str, emu: Emulator
) -> None:
    emu.rate_limit(wire, rpm=6000, tpm=2_000_000)  # type: ignore[arg-type]

    for response in every_way(get_model(name)):
        stated = response.rate_limits
        assert stated is not None, response
        assert (stated.requests.limit, stated.tokens.limit) == (6000, 2_000_000)
        assert stated.requests.remaining is not None and stated.requests.remaining < 6000


@pytest.mark.parametrize(("wire", "name"), STATING)
def test_a_429_carries_the_limits_its_headers_state(wire: str, name: str, emu: Emulator) -> None:
    emu.rate_limit(wire, rpm=60)  # one request a second: the second at once is refused
    model = get_model(name)
    model.request(a_request())

    with pytest.raises(RateLimitError) as refused:
        model.request(a_request())

    stated = refused.value.rate_limits
    assert stated is not None and stated.requests.limit == 60
    assert refused.value.retry_after is not None


@pytest.mark.parametrize("name", ["gemini:gemini-2.5-flash", "openai:gpt-4o-mini"])
def test_a_reply_that_states_no_limits_carries_none(name: str, emu: Emulator) -> None:
    """Gemini states none; nor does a server given no limits (the emulator by default)."""
    emu.rate_limit("gemini", rpm=6000)

    assert all(response.rate_limits is None for response in every_way(get_model(name)))


def test_the_limits_are_not_part_of_what_makes_two_replies_equal() -> None:
    stated = RateLimits(Window(60, 59, 1.0), Window())
    assert Response((Text("a"),), rate_limits=stated) == Response((Text("a"),))


class Stating:
    """A model whose replies, or 429s, state 120 requests a minute with none left."""

    name = "fake:stating"
    capabilities: Any = None
    stated = RateLimits(Window(120, 0, 0.5), Window())

    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse

    def request(self, request: Request) -> Response:
        if self.refuse:
            raise RateLimitError("slow down", rate_limits=self.stated, retry_after=999)
        return Response((Text("ok"),), rate_limits=self.stated)


@pytest.mark.parametrize("refuse", [False, True], ids=["reply", "429"])
def test_the_pacer_learns_the_limits_from_the_reply_or_the_error(refuse: bool) -> None:
    pacer = Pacer(clock=lambda: 1000.0)
    paced = PacedModel(Stating(refuse), pacer)

    if refuse:
        with pytest.raises(RateLimitError):  # a pause that long is not waited out here
            paced.request(a_request())
    else:
        paced.request(a_request())

    assert pacer.limits == (120, None) and not pacer.probing
    assert pacer.requests is not None and pacer.requests.level <= 0  # none left, it said
