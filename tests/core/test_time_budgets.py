"""Time budgets of a call through the real drivers: the deadline against a provider's retry hint
(through the OpenAI SDK and the emulator) and per-tool timeouts.

No test asserts how long something took; hangs are guarded by pytest-timeout and thread joins.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from alloy import RateLimitError, command
from alloy.providers import clear_model_cache
from alloy.testing.emulator import Emulator, Json, RateLimited

from ..conftest import Call


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator() as emu:
        yield emu


@pytest.fixture
def emu(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    """The module's emulator, reset, with the OpenAI SDK pointed at it through its variables."""
    emulator.reset()
    monkeypatch.setenv("OPENAI_BASE_URL", emulator.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-emulator")
    clear_model_cache()
    yield emulator
    clear_model_cache()


@command(output=float, model="openai:gpt-5-mini", timeout=0.5)
def price(text: str) -> str:
    return f"The price in {text}?"


@pytest.mark.timeout(10)  # without the deadline this call slept 2 x 60 s
def test_a_retry_hint_longer_than_the_deadline_fails_fast(emu: Emulator, call: Call) -> None:
    emu.push("openai", RateLimited(retry_after=300, retry_after_ms=None), Json({"value": 1.5}))
    with pytest.raises(RateLimitError) as info:
        call(price, "x")
    assert info.value.retry_after == 300
    assert info.value.attempts == 1
    assert len(emu.requests_for("openai")) == 1
    assert len(emu.pending("openai")) == 1  # the answer was never asked for


def test_a_retry_hint_within_the_deadline_is_waited_for(emu: Emulator, call: Call) -> None:
    emu.push("openai", RateLimited(retry_after_ms=1), Json({"value": 1.5}))
    assert call(price, "x") == 1.5
    assert len(emu.requests_for("openai")) == 2
