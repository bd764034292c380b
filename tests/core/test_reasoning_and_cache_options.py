"""The reasoning and prompt-cache options reach every request, from every configuration layer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import alloy
from alloy import command, configure, use_config
from alloy._types import ModelSettings, Request
from alloy.testing import FunctionModel

from ..conftest import Call

OPTIONS: dict[str, Any] = {
    "reasoning_effort": "high",
    "prompt_cache": True,
    "prompt_cache_key": "tenant-42",
    "cached_content": "cachedContents/abc123",
}
VARIABLES = {
    "ALLOY_REASONING_EFFORT": "high",
    "ALLOY_PROMPT_CACHE": "true",
    "ALLOY_PROMPT_CACHE_KEY": "tenant-42",
    "ALLOY_CACHED_CONTENT": "cachedContents/abc123",
}


def recording() -> tuple[FunctionModel, list[Request]]:
    seen: list[Request] = []

    def reply(request: Request) -> str:
        seen.append(request)
        return '{"value": 1}'

    return FunctionModel(reply), seen


def wanted(settings: ModelSettings) -> dict[str, Any]:
    return {name: getattr(settings, name) for name in OPTIONS}


@contextmanager
def through_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    for name, value in VARIABLES.items():
        monkeypatch.setenv(name, value)
    yield {}


@contextmanager
def through_configure(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    configure(**OPTIONS)
    yield {}


@contextmanager
def through_use_config(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    with use_config(**OPTIONS):
        yield {}


@contextmanager
def through_the_decorator(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    yield {"decorator": OPTIONS}


@contextmanager
def through_with_options(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    yield {"call": OPTIONS}


LAYERS: dict[str, Callable[[pytest.MonkeyPatch], Any]] = {
    "env": through_env,
    "configure": through_configure,
    "use_config": through_use_config,
    "decorator": through_the_decorator,
    "with_options": through_with_options,
}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_every_layer_reaches_the_request_settings(
    layer: str, monkeypatch: pytest.MonkeyPatch, call: Call
) -> None:
    model, seen = recording()
    with LAYERS[layer](monkeypatch) as where:

        @command(output=int, model=model, **where.get("decorator", {}))
        def number() -> str:
            return "a number"

        cmd = number.with_options(**where["call"]) if "call" in where else number
        assert call(cmd) == 1
    assert wanted(seen[0].settings) == OPTIONS


def test_a_budget_in_tokens_and_the_defaults(call: Call) -> None:
    model, seen = recording()

    @command(output=int, model=model)
    def number() -> str:
        return "a number"

    call(number)
    assert wanted(seen[0].settings) == {
        "reasoning_effort": None,
        "prompt_cache": False,
        "prompt_cache_key": None,
        "cached_content": None,
    }
    call(number.with_options(reasoning_effort=4096, prompt_cache=False))
    assert seen[1].settings.reasoning_effort == 4096 and seen[1].settings.prompt_cache is False


def test_a_higher_layer_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    model, seen = recording()
    monkeypatch.setenv("ALLOY_REASONING_EFFORT", "low")
    monkeypatch.setenv("ALLOY_PROMPT_CACHE_KEY", "from-env")

    @command(output=int, model=model, reasoning_effort="medium")
    def number() -> str:
        return "a number"

    number()
    number.with_options(reasoning_effort=2048, prompt_cache_key="per-call")()
    assert [r.settings.reasoning_effort for r in seen] == ["medium", 2048]
    assert [r.settings.prompt_cache_key for r in seen] == ["from-env", "per-call"]


@pytest.mark.parametrize(
    ("option", "value", "why"),
    [
        ("reasoning_effort", "extreme", "'none', 'minimal', 'low', 'medium', 'high', 'xhigh'"),
        ("reasoning_effort", -5, "a thinking budget must not be negative"),
        ("prompt_cache_key", "x" * 65, "1 to 64 printable characters"),
        ("cached_content", "my cache", "printable ASCII, no spaces"),
        ("prompt_cache", "sometimes", "prompt_cache"),
    ],
)
def test_bad_values_are_refused_where_they_are_written(option: str, value: Any, why: str) -> None:
    with pytest.raises(alloy.ConfigurationError, match=why) as info:
        command(output=int, **{option: value})(lambda: "x")
    assert f"option {option!r} in @command" in str(info.value)
