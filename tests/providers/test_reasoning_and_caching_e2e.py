"""Reasoning effort and prompt caching through commands, the real SDKs and the emulator, for the
five wire APIs and both drivers: what reaches the wire, cached tokens in ``Usage``, and what
they take off ``Result.cost``."""

from __future__ import annotations

from typing import Any

import pytest
from google import genai

from alloy import ConfigurationError, command
from alloy._types import Usage
from alloy.pricing import cost, price_for
from alloy.testing.emulator import Emulator, ReplyJson, ReplyText

from ..conftest import Call

#: A model per provider that takes a reasoning effort, and the emulator queue it answers from.
MODELS = {
    "openai": ("openai:gpt-5-mini", "openai"),
    "openai-chat": ("openai-chat:gpt-5-mini", "openai"),
    "anthropic": ("anthropic:claude-sonnet-4-6", "anthropic"),
    "gemini": ("gemini:gemini-2.5-flash", "gemini"),
    "ollama": ("ollama:gpt-oss:20b", "ollama"),
}
#: Where ``reasoning_effort="low"`` lands in each wire body.
EFFORT_ON_THE_WIRE = {
    "openai": lambda body: body["reasoning"] == {"effort": "low"},
    "openai-chat": lambda body: body["reasoning_effort"] == "low",
    "anthropic": lambda body: body["output_config"]["effort"] == "low",
    # google-genai copies thinking_config as given (proto JSON takes either spelling).
    "gemini": lambda body: (
        body["generationConfig"]["thinkingConfig"]
        in ({"thinking_budget": 1024}, {"thinkingBudget": 1024})
    ),
    "ollama": lambda body: body["think"] == "low",
}
SYSTEM = "You are a careful analyst of weather reports. " * 30


def number(model: str, **options: Any) -> Any:
    @command(output=int, model=model, **options)
    def count(question: str) -> str:
        return question

    return count


def chat(model: str, **options: Any) -> Any:
    @command(model=model, **options)
    def say(line: str) -> str:
        return line

    return say


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_reasoning_effort_reaches_every_wire(
    provider: str, emu: Emulator, run_result: Call
) -> None:
    model, queue = MODELS[provider]
    emu.push(queue, ReplyJson({"value": 4}))
    result = run_result(number(model, reasoning_effort="low"), "2+2?")
    assert result.value == 4
    assert EFFORT_ON_THE_WIRE[provider](emu.last_request(queue).body)


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_reasoning_effort_reaches_every_wire_when_streamed(
    provider: str, emu: Emulator, stream: Call
) -> None:
    model, queue = MODELS[provider]
    emu.push(queue, ReplyText("Four."))
    assert "".join(stream(chat(model, reasoning_effort="low"), "2+2?")) == "Four."
    assert EFFORT_ON_THE_WIRE[provider](emu.last_request(queue).body)


@pytest.mark.parametrize(
    ("provider", "options", "refused"),
    [
        ("openai", {"reasoning_effort": 2048}, r"gpt-5-mini \(GPT-5\) takes minimal, low"),
        ("openai-chat", {"cached_content": "cachedContents/abc"}, "Gemini context cache"),
        ("anthropic", {"prompt_cache_key": "tenant-1"}, "OpenAI's routing hint"),
        ("anthropic", {"reasoning_effort": "minimal"}, "takes none, low, medium, high"),
        ("gemini", {"prompt_cache_key": "tenant-1"}, "OpenAI's routing hint"),
        ("gemini", {"cached_content": "cachedContents/abc", "system": "Hi"}, "beside cached"),
        ("ollama", {"reasoning_effort": 1024}, "no budgets"),
    ],
)
def test_what_a_provider_cannot_take_is_refused_before_sending(
    provider: str, options: dict[str, Any], refused: str, emu: Emulator, run_result: Call
) -> None:
    model, _ = MODELS[provider]
    with pytest.raises(ConfigurationError, match=refused):
        run_result(number(model, **options), "2+2?")
    assert emu.requests == []


# -- cached tokens and cost ---------------------------------------------------------------------


def uncached(usage: Usage) -> Usage:
    return Usage(usage.input_tokens, usage.output_tokens, requests=usage.requests)


def test_anthropic_breakpoints_write_then_read_and_the_cost_follows(
    emu: Emulator, run_result: Call
) -> None:
    model, queue = MODELS["anthropic"]
    ask = number(model, system=SYSTEM, prompt_cache=True)
    emu.push(queue, ReplyJson({"value": 1}), ReplyJson({"value": 2}))
    first = run_result(ask, "How many reports?")
    second = run_result(ask, "How many storms?")
    body = emu.last_request(queue).body
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert first.usage.cache_write_tokens > 0 and first.usage.cached_tokens == 0
    # The second call reads the tools and system prompt the first one wrote.
    assert second.usage.cached_tokens > 0 and second.usage.cached_tokens <= (
        first.usage.cache_write_tokens
    )
    price = price_for(model)
    assert price is not None and price.cache_write is not None
    assert first.cost == cost(first.usage, model) > cost(uncached(first.usage), model)
    assert second.cost == cost(second.usage, model) < cost(uncached(second.usage), model)


@pytest.mark.parametrize("provider", ["openai", "openai-chat"])
def test_openai_prompt_cache_key_reads_the_prefix_and_lowers_the_cost(
    provider: str, emu: Emulator, run_result: Call
) -> None:
    model, queue = MODELS[provider]
    ask = number(model, system=SYSTEM, prompt_cache_key="reports")
    emu.push(queue, ReplyJson({"value": 1}), ReplyJson({"value": 1}))
    first = run_result(ask, "How many reports?")
    second = run_result(ask, "How many reports?")
    assert emu.last_request(queue).body["prompt_cache_key"] == "reports"
    assert first.usage.cached_tokens == 0
    assert 0 < second.usage.cached_tokens <= second.usage.input_tokens
    assert second.cost == cost(second.usage, model) < cost(uncached(second.usage), model)


def test_gemini_cached_content_is_read_and_priced_at_the_cached_rate(
    emu: Emulator, run_result: Call
) -> None:
    client = genai.Client(api_key="gm-test", http_options={"base_url": emu.gemini_base_url})
    cache = client.caches.create(
        model="gemini-2.5-flash",
        config={"contents": ["Weather reports. " * 200], "system_instruction": SYSTEM},
    )
    model, queue = MODELS["gemini"]
    emu.push(queue, ReplyJson({"value": 7}))
    result = run_result(number(model, cached_content=cache.name), "How many reports?")
    assert result.value == 7
    assert emu.last_request(queue).body["cachedContent"] == cache.name
    assert result.usage.cached_tokens == cache.usage_metadata.total_token_count
    assert result.cost == cost(result.usage, model) < cost(uncached(result.usage), model)


def test_prompt_cache_is_accepted_where_the_provider_caches_by_itself(
    emu: Emulator, run_result: Call
) -> None:
    for provider in ("openai", "gemini", "ollama"):
        model, queue = MODELS[provider]
        emu.push(queue, ReplyJson({"value": 1}))
        result = run_result(number(model, prompt_cache=True), "1?")
        assert result.value == 1 and result.usage.cached_tokens == 0
        assert "cache_control" not in str(emu.last_request(queue).body)
