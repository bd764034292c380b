"""The emulator's prompt caches, through the real SDKs: what a request reads and writes shows
in its usage, as each provider reports it; reset forgets everything."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors

from alloy.testing.emulator import Emulator

USER = [{"role": "user", "content": "Weather in Paris?"}]
SYSTEM = "You forecast the weather. " * 40
EPHEMERAL = {"type": "ephemeral"}


async def run(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@pytest.fixture(params=["sync", "async"])
def claude(request: pytest.FixtureRequest, alloy_emulator: Emulator) -> Iterator[Any]:
    cls = anthropic.Anthropic if request.param == "sync" else anthropic.AsyncAnthropic
    yield cls(base_url=alloy_emulator.anthropic_base_url, api_key="sk-ant-test", max_retries=0)


@pytest.fixture(params=["sync", "async"])
def gpt(request: pytest.FixtureRequest, alloy_emulator: Emulator) -> Iterator[Any]:
    cls = openai.OpenAI if request.param == "sync" else openai.AsyncOpenAI
    yield cls(base_url=alloy_emulator.openai_base_url, api_key="sk-test", max_retries=0)


@pytest.fixture(params=["sync", "async"])
def gemini_models(request: pytest.FixtureRequest, alloy_emulator: Emulator) -> Iterator[Any]:
    client = genai.Client(
        api_key="gm-test", http_options={"base_url": alloy_emulator.gemini_base_url}
    )
    yield client.aio if request.param == "async" else client


# -- Anthropic: breakpoints ----------------------------------------------------------------------


async def test_anthropic_writes_at_a_breakpoint_then_reads_it(
    claude: Any, alloy_emulator: Emulator
) -> None:
    system = [{"type": "text", "text": SYSTEM, "cache_control": EPHEMERAL}]

    async def ask(question: str) -> Any:
        messages = [{"role": "user", "content": question}]
        reply = await run(
            claude.messages.create(
                model="claude-haiku-4-5", max_tokens=64, system=system, messages=messages
            )
        )
        return reply.usage

    first = await ask("Weather in Paris?")
    assert first.cache_read_input_tokens == 0 and first.cache_creation_input_tokens > 0
    assert first.cache_creation.ephemeral_5m_input_tokens == first.cache_creation_input_tokens
    second = await ask("And in Lyon?")  # the same system prompt, another question
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0 and second.input_tokens > 0
    alloy_emulator.reset()
    assert (await ask("And in Lyon?")).cache_read_input_tokens == 0


async def test_anthropic_reads_an_earlier_breakpoint_after_the_conversation_grows(
    claude: Any,
) -> None:
    """The breakpoint moves to the newest block each turn; the prefix cached at the old one is
    still read, and only what follows it is written."""
    first_turn = [
        {"role": "user", "content": [{"type": "text", "text": "Hi", "cache_control": EPHEMERAL}]}
    ]
    first = await run(claude.messages.create(model="claude-x", max_tokens=64, messages=first_turn))
    later_turns = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "The weather?", "cache_control": EPHEMERAL}],
        },
    ]
    second = await run(
        claude.messages.create(model="claude-x", max_tokens=64, messages=later_turns)
    )
    written = first.usage.cache_creation_input_tokens
    assert second.usage.cache_read_input_tokens == written
    assert second.usage.cache_creation_input_tokens > 0
    streamed = await run(
        claude.messages.create(model="claude-x", max_tokens=64, messages=later_turns, stream=True)
    )
    events = [e async for e in streamed] if hasattr(streamed, "__aiter__") else list(streamed)
    start = events[0].message.usage
    assert start.cache_read_input_tokens == written + second.usage.cache_creation_input_tokens


async def test_anthropic_refuses_a_fifth_breakpoint(claude: Any) -> None:
    marked = [{"type": "text", "text": f"part {i}", "cache_control": EPHEMERAL} for i in range(5)]
    with pytest.raises(anthropic.BadRequestError, match="A maximum of 4 blocks"):
        await run(
            claude.messages.create(model="claude-x", max_tokens=64, messages=USER, system=marked)
        )


# -- OpenAI: prefixes under a prompt_cache_key ---------------------------------------------------


async def test_openai_responses_reads_a_prefix_under_the_same_key(gpt: Any) -> None:
    async def ask(**extra: Any) -> Any:
        reply = await run(
            gpt.responses.create(model="gpt-5-mini", instructions=SYSTEM, input=USER, **extra)
        )
        return reply.usage

    assert (await ask(prompt_cache_key="t1")).input_tokens_details.cached_tokens == 0
    again = await ask(prompt_cache_key="t1")
    assert 0 < again.input_tokens_details.cached_tokens <= again.input_tokens
    assert again.input_tokens_details.cache_write_tokens == 0
    assert (await ask(prompt_cache_key="t2")).input_tokens_details.cached_tokens == 0
    assert (await ask()).input_tokens_details.cached_tokens == 0  # no key: nothing cached


async def test_openai_chat_reads_a_prefix_under_the_same_key(gpt: Any) -> None:
    messages = [{"role": "system", "content": SYSTEM}, *USER]
    usages = [
        (
            await run(
                gpt.chat.completions.create(
                    model="gpt-5-mini", messages=messages, prompt_cache_key="t1"
                )
            )
        ).usage
        for _ in range(2)
    ]
    assert usages[0].prompt_tokens_details.cached_tokens == 0
    assert 0 < usages[1].prompt_tokens_details.cached_tokens <= usages[1].prompt_tokens


async def test_openai_refuses_a_key_over_64_characters(gpt: Any) -> None:
    with pytest.raises(openai.BadRequestError, match="string too long") as info:
        await run(gpt.responses.create(model="gpt-5-mini", input="hi", prompt_cache_key="k" * 65))
    assert info.value.param == "prompt_cache_key"


# -- Gemini: named caches ------------------------------------------------------------------------


async def test_gemini_cached_content_counts_in_the_usage(
    gemini_models: Any, alloy_emulator: Emulator
) -> None:
    cache = await run(
        gemini_models.caches.create(
            model="gemini-2.5-flash",
            config={"contents": ["A long report. " * 100], "system_instruction": "Be brief."},
        )
    )
    assert cache.name.startswith("cachedContents/") and cache.usage_metadata.total_token_count
    created = alloy_emulator.last_request("gemini")
    assert created.path.endswith("/cachedContents") and created.body["model"].endswith("flash")
    reply = await run(
        gemini_models.models.generate_content(
            model="gemini-2.5-flash",
            contents="Summarise it.",
            config={"cached_content": cache.name},
        )
    )
    usage = reply.usage_metadata
    assert usage.cached_content_token_count == cache.usage_metadata.total_token_count
    assert usage.prompt_token_count > usage.cached_content_token_count
    assert alloy_emulator.last_request("gemini").body["cachedContent"] == cache.name


async def test_gemini_refuses_an_unknown_cache_and_what_belongs_in_one(
    gemini_models: Any,
) -> None:
    with pytest.raises(genai_errors.ClientError) as info:
        await run(
            gemini_models.models.generate_content(
                model="gemini-2.5-flash", contents="hi", config={"cached_content": "nope"}
            )
        )
    assert info.value.code == 403
    cache = await run(gemini_models.caches.create(model="gemini-2.5-flash", config={}))
    with pytest.raises(genai_errors.ClientError, match="CachedContent can not be used") as info:
        await run(
            gemini_models.models.generate_content(
                model="gemini-2.5-flash",
                contents="hi",
                config={"cached_content": cache.name, "system_instruction": "Be brief."},
            )
        )
    assert info.value.code == 400


async def test_gemini_refuses_a_thinking_budget_beside_a_level(gemini_models: Any) -> None:
    thinking = {"thinking_budget": 1024, "thinking_level": "LOW"}
    with pytest.raises(genai_errors.ClientError, match="Only one of thinking_budget"):
        await run(
            gemini_models.models.generate_content(
                model="gemini-3-flash", contents="hi", config={"thinking_config": thinking}
            )
        )
