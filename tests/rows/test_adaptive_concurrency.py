"""Adaptive concurrency: a run against a provider that states no limits finds them by its 429s
(fewer calls at once after each, one more after a window of answers) and sends every 429'd call
again once its ``retry-after`` has passed, so no row is lost to them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from alloy import command
from alloy._types import Done, ModelSettings, Request, Response, StreamEvent, Text, UserTurn
from alloy.errors import RateLimitError
from alloy.rows import PacedModel, Pacer
from alloy.rows._concurrency import AdaptiveConcurrency
from alloy.rows._pacer import LONGEST_PAUSE, RATE_LIMIT_RESENDS
from alloy.testing.emulator import Emulator

from ..conftest import Call


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_limit_halves_on_a_429_and_grows_by_one_after_a_window_of_answers() -> None:
    clock = Clock()
    limit = AdaptiveConcurrency(16, clock)
    assert limit.limit == 16 and limit.allows(15) and not limit.allows(16)
    assert limit.rate_limited(sent=clock.now)
    assert limit.limit == 8
    clock.now += 1
    assert limit.rate_limited(sent=clock.now)
    assert limit.limit == 4
    for _ in range(3):
        limit.succeeded()
    assert limit.limit == 4  # a window is a limit's worth of answers
    limit.succeeded()
    assert limit.limit == 5
    for _ in range(5):
        limit.succeeded()
    assert limit.limit == 6


def test_a_burst_of_429s_from_one_moment_halves_the_limit_once() -> None:
    clock = Clock()
    limit = AdaptiveConcurrency(16, clock)
    sent = clock.now
    clock.now += 0.5
    assert limit.rate_limited(sent)
    assert [limit.rate_limited(sent) for _ in range(15)] == [False] * 15  # already cut for
    assert limit.limit == 8 and limit.cuts == 1
    clock.now += 0.5
    assert limit.rate_limited(sent=clock.now)  # sent after the cut: the new limit is too many
    assert limit.limit == 4 and limit.cuts == 2


def test_the_limit_stays_between_one_and_the_concurrency_asked_for() -> None:
    clock = Clock()
    limit = AdaptiveConcurrency(3, clock)
    for _ in range(100):
        limit.succeeded()
    assert limit.limit == 3
    for _ in range(10):
        clock.now += 1
        limit.rate_limited(sent=clock.now)
    assert limit.limit == 1 and limit.allows(0) and not limit.allows(1)
    limit.succeeded()
    assert limit.limit == 2
    with pytest.raises(ValueError):
        AdaptiveConcurrency(0)


def test_a_pacer_lets_out_no_more_calls_than_its_adaptive_limit() -> None:
    clock = Clock()
    pacer = Pacer(learn=False, clock=clock, concurrency=4)
    assert [pacer._take(1) for _ in range(5)] == [0, 0, 0, 0, -1.0]  # -1: wait for a call
    pacer.rate_limited(RateLimitError("slow down", retry_after=0.0), sent=clock.now)
    assert pacer.concurrency is not None and pacer.concurrency.limit == 2
    pacer.in_flight = 1
    assert pacer._take(1) == 0 and pacer._take(1) == -1.0
    assert Pacer(learn=False, clock=clock).concurrency is None  # not bounded unless asked


def test_a_429_without_retry_after_pauses_for_a_backoff_that_an_answer_resets() -> None:
    clock = Clock()
    pacer = Pacer(learn=False, clock=clock)
    pauses = []
    for _ in range(3):
        pacer.rate_limited(RateLimitError("slow down"))
        pauses.append(pacer._take(1))
        clock.now += pauses[-1]
    assert pauses == [0.5, 1.0, 2.0]
    pacer.settle(pacer.acquire_sync(a_request()), Response((Text("ok"),)))
    pacer.rate_limited(RateLimitError("slow down"))
    assert pacer._take(1) == 0.5


def a_request(timeout: float | None = None) -> Request:
    return Request("m", (UserTurn(Text("hi")),), settings=ModelSettings(timeout=timeout))


class Refusing:
    """A model that answers 429 ``refusals`` times (each taking ``seconds`` of the clock),
    then answers; it keeps the requests it was sent."""

    name = "fake:model"
    capabilities: Any = None

    def __init__(self, clock: Clock, refusals: int, error: RateLimitError | None = None) -> None:
        self.clock = clock
        self.refusals = refusals
        self.error = error or RateLimitError("slow down", retry_after=0.0)
        self.sent: list[Request] = []

    def _answer(self, request: Request) -> Response:
        self.sent.append(request)
        self.clock.now += 1.0
        if len(self.sent) <= self.refusals:
            raise self.error
        return Response((Text("ok"),))

    def request(self, request: Request) -> Response:
        return self._answer(request)

    async def arequest(self, request: Request) -> Response:
        return self._answer(request)

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        yield Done(self._answer(request))

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        yield Done(self._answer(request))


def paced_call(model: PacedModel, way: str, request: Request) -> Response:
    """One call of ``model`` the ``way`` named (whole or streamed, blocking or async)."""

    async def streamed() -> list[StreamEvent]:
        return [event async for event in model.astream(request)]

    if way == "request":
        return model.request(request)
    if way == "arequest":
        return asyncio.run(model.arequest(request))
    events = list(model.stream(request)) if way == "stream" else asyncio.run(streamed())
    done = events[-1]
    assert isinstance(done, Done)
    return done.response


WAYS = ["request", "arequest", "stream", "astream"]


@pytest.mark.parametrize("way", WAYS)
def test_a_429d_call_is_sent_again_until_it_is_answered(way: str) -> None:
    clock = Clock()
    pacer = Pacer(learn=False, clock=clock, concurrency=8)
    model = Refusing(clock, refusals=5)
    response = paced_call(PacedModel(model, pacer), way, a_request())
    assert response.text == "ok" and len(model.sent) == 6
    assert pacer.stats.rate_limited == 5 and pacer.in_flight == 0
    assert pacer.concurrency is not None
    assert pacer.concurrency.cuts == 3 and pacer.concurrency.limit == 2  # 8, 4, 2, 1; answered


@pytest.mark.parametrize("way", WAYS)
def test_429s_beyond_the_allowance_are_the_calls_error(way: str) -> None:
    clock = Clock()
    model = Refusing(clock, refusals=RATE_LIMIT_RESENDS + 1)
    with pytest.raises(RateLimitError):
        paced_call(PacedModel(model, Pacer(learn=False, clock=clock)), way, a_request())
    assert len(model.sent) == RATE_LIMIT_RESENDS + 1


@pytest.mark.parametrize(
    "error",
    [
        RateLimitError("over quota for the day", retry_after=LONGEST_PAUSE + 1),
        RateLimitError("you exceeded your current quota"),
    ],
    ids=["a quota's long wait", "no credit"],
)
def test_a_429_that_waiting_will_not_mend_is_not_sent_again(error: RateLimitError) -> None:
    error.transient = error.retry_after is not None  # "no credit" is not transient
    clock = Clock()
    model = Refusing(clock, refusals=1, error=error)
    with pytest.raises(RateLimitError):
        PacedModel(model, Pacer(learn=False, clock=clock)).request(a_request())
    assert len(model.sent) == 1


def test_a_call_is_sent_again_only_within_its_timeout_and_with_what_is_left_of_it() -> None:
    """Counted from the first 429 (waiting for the pacer before the first send is pacing)."""
    clock = Clock()
    model = Refusing(clock, refusals=5)  # each answer takes a second of the clock
    with pytest.raises(RateLimitError):
        PacedModel(model, Pacer(learn=False, clock=clock)).request(a_request(timeout=2.5))
    assert [r.settings.timeout for r in model.sent] == [2.5, 2.5, 1.5, 0.5]


def test_a_call_is_not_sent_again_when_the_pause_outlasts_its_timeout() -> None:
    clock = Clock()
    model = Refusing(clock, refusals=1, error=RateLimitError("slow down", retry_after=3.0))
    with pytest.raises(RateLimitError):
        PacedModel(model, Pacer(learn=False, clock=clock)).request(a_request(timeout=2.5))
    assert len(model.sent) == 1


@pytest.mark.fuzz
def test_a_provider_that_states_no_limits_loses_no_rows_to_its_429s(
    emu: Emulator, run_map: Call, fuzz_scale: int
) -> None:
    """Gemini states no limits and no ``rpm=`` is given: 16 calls at once meet 429s from a
    limit that holds 10; the run cuts its calls at once, waits each 429 out and sends it again,
    and every row lands with the command's default retries. 30 rows in the suite, 300 under
    ``make fuzz``."""
    limits = emu.rate_limit("gemini", rpm=600)

    @command(output=int, model="gemini:gemini-2.5-flash")
    def count(word: str) -> str:
        return f"How many letters in {word}?"

    words = [f"w{i}" for i in range(30 if fuzz_scale == 1 else 300)]
    rows = run_map(count, words, concurrency=16)
    failed = [(row.index, row.error) for row in rows if not row.ok]
    assert not failed
    assert limits.admitted == len(words) and limits.refused > 0
    assert rows.summary.rate_limited == limits.refused
    assert all(row.attempts == 1 for row in rows)  # the 429s were the pacer's, not retries
