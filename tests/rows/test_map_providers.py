"""A run over rows through every provider's real SDK, and per-row semantics: the response cache
and rails apply to each row exactly as to a single call."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from alloy import RailBlocked, command, use_config
from alloy.rails import blocklist
from alloy.testing.emulator import Emulator, ReplyJson

from ..conftest import Call

MODELS = {
    "openai": ("openai", "openai:gpt-4o-mini"),
    "openai-chat": ("openai", "openai-chat:gpt-4o-mini"),
    "anthropic": ("anthropic", "anthropic:claude-sonnet-4-6"),
    "gemini": ("gemini", "gemini:gemini-2.5-flash"),
    "ollama": ("ollama", "ollama:llama3.2"),
}


@dataclass
class City:
    name: str
    country: str


@pytest.mark.parametrize("provider", MODELS)
def test_every_provider_through_its_sdk(provider: str, emu: Emulator, run_map: Call) -> None:
    wire, model = MODELS[provider]
    emu.push(wire, *(ReplyJson({"name": f"City {i}", "country": "X"}) for i in range(6)))

    @command(output=City, model=model)
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    rows = run_map(capital, [f"country {i}" for i in range(6)], concurrency=1)
    assert [row.value for row in rows] == [City(f"City {i}", "X") for i in range(6)]
    assert len(emu.requests_for(wire)) == 6


def test_the_response_cache_answers_repeated_rows(
    emu: Emulator, run_map: Call, tmp_path: Path
) -> None:
    @command(output=City, model="openai-chat:gpt-4o-mini", temperature=0)
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    with use_config(cache=str(tmp_path / "replies.sqlite")):
        first = run_map(capital, ["France", "Peru", "France"], concurrency=1)
        again = run_map(capital, ["France", "Peru"], concurrency=1)
    assert len(emu.requests_for("openai")) == 2  # the repeated row was a hit already
    assert first[2].usage.cache_hits == 1 and first[2].value == first[0].value
    assert all(row.usage.cache_hits == 1 and row.usage.requests == 0 for row in again)
    assert again.summary.usage.requests == 0


def test_rails_block_their_rows_only(emu: Emulator, run_map: Call) -> None:
    @command(
        output=City,
        model="anthropic:claude-sonnet-4-6",
        rails=blocklist(["password"], kinds=("input",)),
    )
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    rows = run_map(capital, ["France", "my password", "Peru"], concurrency=2)
    assert [row.ok for row in rows] == [True, False, True]
    assert isinstance(rows[1].error, RailBlocked)
    assert len(emu.requests_for("anthropic")) == 2  # the blocked row never reached the model


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic", "gemini"])
def test_a_run_over_rows_and_a_single_call_share_cache_entries(
    provider: str, emu: Emulator, run_map: Call, tmp_path: Path
) -> None:
    """A run paces the calls that miss, beneath the cache: its requests keep the keys a single
    call gives them (the wire body and the endpoint), so either finds what the other stored."""
    wire, model = MODELS[provider]
    emu.push(wire, ReplyJson({"name": "Paris", "country": "France"}))
    emu.push(wire, ReplyJson({"name": "Lima", "country": "Peru"}))

    @command(output=City, model=model, temperature=0)
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    with use_config(cache=str(tmp_path / "replies.sqlite")):
        assert capital("France") == City("Paris", "France")
        rows = run_map(capital, ["France", "Peru"], concurrency=1)
        assert capital.run("Peru").cached
    assert [row.usage.cache_hits for row in rows] == [1, 0]
    assert len(emu.requests_for(wire)) == 2
