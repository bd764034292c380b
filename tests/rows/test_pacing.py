"""Pacing: calls keep to the requests and tokens per minute the provider states (or the options
give), a 429 pauses the whole run, and a binding limit is used well with next to no 429s."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from alloy import command
from alloy._types import ModelSettings, Request, Response, Text, Usage, UserTurn
from alloy.errors import RateLimitError
from alloy.providers._ratelimits import duration, rate_limits
from alloy.rows import Pacer
from alloy.rows._pacer import Ticket
from alloy.testing.emulator import Emulator

from ..conftest import Call


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def a_request(text: str = "x" * 400, max_tokens: int | None = None) -> Request:
    return Request("m", (UserTurn(Text(text)),), settings=ModelSettings(max_tokens=max_tokens))


def test_durations_as_openai_writes_them() -> None:
    assert duration("1s") == 1.0
    assert duration("6m0s") == 360.0
    assert duration("1h2m3s") == 3723.0
    assert duration("120ms") == pytest.approx(0.12)
    assert duration("0.5s") == 0.5
    for bad in ("", "soon", "5", "1s2", "-1s", None):
        assert duration(bad) is None


def test_both_header_families_read_into_one_shape() -> None:
    openai = rate_limits(
        {
            "x-ratelimit-limit-requests": "5000",
            "x-ratelimit-remaining-requests": "4999",
            "x-ratelimit-reset-requests": "12ms",
            "x-ratelimit-limit-tokens": "160000",
            "x-ratelimit-remaining-tokens": "159976",
            "x-ratelimit-reset-tokens": "9ms",
        }
    )
    assert (openai.requests.limit, openai.requests.remaining) == (5000, 4999)
    assert openai.requests.reset == pytest.approx(0.012)
    assert (openai.tokens.limit, openai.tokens.remaining) == (160000, 159976)
    now = datetime(2025, 8, 21, 12, 40, 58, tzinfo=timezone.utc)
    anthropic = rate_limits(
        {
            "anthropic-ratelimit-requests-limit": "1000",
            "anthropic-ratelimit-requests-remaining": "999",
            "anthropic-ratelimit-requests-reset": "2025-08-21T12:40:59Z",
            "anthropic-ratelimit-tokens-limit": "96000",
            "anthropic-ratelimit-tokens-remaining": "96000",
            "anthropic-ratelimit-tokens-reset": (now + timedelta(seconds=2)).isoformat(),
        },
        now,
    )
    assert (anthropic.requests.limit, anthropic.requests.remaining) == (1000, 999)
    assert anthropic.requests.reset == 1.0 and anthropic.tokens.reset == 2.0
    assert not rate_limits({"x-ratelimit-limit-requests": "lots"}).known
    assert not rate_limits({}).known


def test_a_pacer_lets_a_seconds_worth_through_then_the_rate() -> None:
    clock = Clock()
    pacer = Pacer(rpm=600, clock=clock)  # 10 a second, 8 at once
    taken = 0
    while pacer._take(1) == 0:
        taken += 1
    assert taken == 8
    wait = pacer._take(1)
    assert wait == pytest.approx(1 / (10 * 0.97))  # the next one, at the rate aimed for
    clock.now += wait
    assert pacer._take(1) == 0


def test_tokens_are_reserved_then_settled_with_the_real_usage() -> None:
    clock = Clock()
    pacer = Pacer(tpm=6000, clock=clock)  # 100 tokens a second
    request = a_request("y" * 200, max_tokens=20)  # ~50 in, 20 out
    assert pacer.estimate(request) == pytest.approx(70)
    assert pacer._take(70) == 0
    assert pacer._take(60) > 0  # 80 - 70 = 10 left: not enough for another
    pacer.settle(
        Ticket(70.0), Response((Text("ok"),), usage=Usage(input_tokens=10, output_tokens=5))
    )
    assert pacer._take(60) == 0  # the 55 tokens not used came back: 65 left


def test_limits_are_learned_from_headers_and_pulled_down_by_what_is_left() -> None:
    clock = Clock()
    pacer = Pacer(clock=clock)
    assert pacer.probing and pacer.limits == (None, None)
    assert pacer._take(10) == 0
    assert pacer._take(10) == -1  # one call at a time until a reply states the limits
    pacer.observe(
        rate_limits(
            {
                "x-ratelimit-limit-requests": "120",
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-limit-tokens": "60000",
                "x-ratelimit-remaining-tokens": "500",
            }
        )
    )
    assert not pacer.probing and pacer.limits == (120, 60000)
    assert pacer._take(10) > 0  # the provider has none left: wait, though the bucket was full


def test_options_fix_the_limits_whatever_the_headers_say() -> None:
    pacer = Pacer(rpm=60, clock=Clock())
    pacer.observe(
        rate_limits({"x-ratelimit-limit-requests": "5000", "x-ratelimit-limit-tokens": "100"})
    )
    assert pacer.limits == (60, 100)  # tokens were not given: learned


def test_a_429_pauses_every_call_for_its_retry_after() -> None:
    clock = Clock()
    pacer = Pacer(rpm=6000, clock=clock)
    pacer.rate_limited(RateLimitError("slow down", retry_after=2.0))
    assert pacer._take(1) == pytest.approx(2.0)
    clock.now += 2.0
    assert pacer._take(1) == 0
    assert pacer.stats.rate_limited == 1


def test_a_provider_without_rate_headers_is_not_waited_on() -> None:
    pacer = Pacer(clock=Clock())
    assert pacer._take(1) == 0
    pacer.settle(Ticket(1.0), Response((Text("ok"),)))
    assert not pacer.probing
    assert all(pacer._take(1) == 0 for _ in range(100))


@pytest.mark.parametrize(
    ("wire", "model"),
    [
        ("openai", "openai-chat:gpt-4o-mini"),
        ("openai", "openai:gpt-4o-mini"),
        ("anthropic", "anthropic:claude-sonnet-4-6"),
    ],
)
def test_a_binding_limit_through_the_real_sdk_meets_almost_no_429(
    wire: str, model: str, emu: Emulator, run_map: Call
) -> None:
    """The run learns the limits from the headers and keeps to them: of 100 rows against 3,000
    requests a minute (50 a second), a few at most meet a 429 (jitter on a busy machine can
    bunch requests; ``make bench`` holds the 1% target over 10,000 rows)."""
    limits = emu.rate_limit(wire, rpm=3000, tpm=2_000_000)  # type: ignore[arg-type]

    @command(output=int, model=model)
    def count(word: str) -> str:
        return f"How many letters in {word}?"

    rows = run_map(count, [f"w{i}" for i in range(100)], concurrency=16)
    assert all(row.ok for row in rows)
    assert limits.admitted == 100
    assert limits.refused <= 3
    assert rows.summary.limits == {model: (3000, 2_000_000)}
    assert rows.summary.rate_limited == limits.refused


def test_options_pace_a_provider_that_states_no_limits(emu: Emulator, run_map: Call) -> None:
    limits = emu.rate_limit("gemini", rpm=1200)

    @command(output=int, model="gemini:gemini-2.5-flash")
    def count(word: str) -> str:
        return f"How many letters in {word}?"

    rows = run_map(count, [f"w{i}" for i in range(60)], concurrency=16, rpm=1200)
    assert all(row.ok for row in rows)
    assert limits.refused <= 3
    assert rows.summary.limits == {"gemini:gemini-2.5-flash": (1200, None)}


def test_429s_are_waited_out_and_every_row_still_lands(emu: Emulator, run_map: Call) -> None:
    """Unpaced (the provider states nothing and no option is given), a tight limit answers
    429s; the run waits each one out and no row is lost. (Twenty rows, eight at once, meet the
    limit's ten at once in well under the second its refill takes, even on a busy machine; each
    429 is waited out for a backoff, so more rows only add seconds.)"""
    limits = emu.rate_limit("ollama", rpm=600)

    @command(output=int, model="ollama:llama3.2", retries=8)
    def count(word: str) -> str:
        return f"How many letters in {word}?"

    rows = run_map(count, [f"w{i}" for i in range(20)], concurrency=8)
    assert all(row.ok for row in rows)
    assert limits.refused > 0 and rows.summary.rate_limited == limits.refused
