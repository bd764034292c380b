"""Reasoning effort and provider prompt caching: one option each, mapped per provider.

The provider emulator plays OpenAI, Anthropic and Gemini here (the real SDKs, no network), and
keeps prompt caches the way the providers report them. `reasoning_effort` is a level or a
thinking budget in tokens; `prompt_cache=True` asks the provider to cache the stable start of
the prompt (Anthropic's cache_control breakpoints), and `prompt_cache_key` routes OpenAI
requests that share a prefix to the same cache. Cached input shows in `usage` and costs less.
"""

import os
from dataclasses import dataclass

from alloy import ConfigurationError, command, tool
from alloy.testing.emulator import Emulator, ReplyJson, ReplyToolCalls


@dataclass
class Verdict:
    valid: bool
    reason: str


@tool
def clause(number: int) -> str:
    """The text of a clause of the contract."""
    return "The tenant may end the lease with one month's notice."


CONTRACT = "You review rental contracts against the tenancy rules below.\n" + "Rule. " * 400

with Emulator() as emu:
    os.environ.update(emu.env())  # every SDK in this process talks to the emulator

    # -- reasoning effort: one option, each provider's own field --------------------------------
    @command(output=Verdict, model="anthropic:claude-sonnet-4-6", reasoning_effort=4096)
    def review(question: str) -> str:
        return question

    emu.push("anthropic", ReplyJson({"valid": True, "reason": "notice is allowed"}))
    print(review("Can the tenant leave early?"))
    body = emu.last_request("anthropic").body
    print("anthropic:", body["thinking"], "max_tokens", body["max_tokens"])

    emu.push("openai", ReplyJson({"valid": True, "reason": "notice is allowed"}))
    review.with_options(model="openai:gpt-5-mini", reasoning_effort="low")("Again?")
    print("openai:", emu.last_request("openai").body["reasoning"])

    emu.push("gemini", ReplyJson({"valid": True, "reason": "notice is allowed"}))
    review.with_options(model="gemini:gemini-2.5-flash", reasoning_effort="medium")("Again?")
    thinking = emu.last_request("gemini").body["generationConfig"]["thinkingConfig"]
    print("gemini 2.5:", thinking)

    try:  # a value the provider cannot take is refused before anything is sent
        review.with_options(model="openai:gpt-5-mini", reasoning_effort=2048)("Again?")
    except ConfigurationError as refused:
        print("refused:", str(refused).split(";")[0])

    # -- prompt caching: the long system prompt and the tools are read back from the cache ---
    @command(
        output=Verdict,
        model="anthropic:claude-sonnet-4-6",
        system=CONTRACT,
        tools=[clause],
        prompt_cache=True,
    )
    def check(question: str) -> str:
        return question

    emu.push(
        "anthropic",
        ReplyToolCalls(("clause", {"number": 4})),
        ReplyJson({"valid": True, "reason": "clause 4 allows it"}),
        ReplyJson({"valid": False, "reason": "no clause allows it"}),
    )
    first = check.run("Does clause 4 allow leaving early?")  # a tool round: two requests
    second = check.run("May the tenant sublet?")  # same tools and system prompt
    for name, result in (("first", first), ("second", second)):
        usage = result.usage
        print(
            f"{name}: {usage.input_tokens} input tokens, {usage.cache_write_tokens} written to "
            f"the cache, {usage.cached_tokens} read from it, cost ${result.cost:.6f}"
        )
    assert first.usage.cache_write_tokens > 0 and second.usage.cached_tokens > 0

    # OpenAI caches long prompts by itself; a key routes the same prefix to the same cache.
    keyed = check.with_options(model="openai:gpt-5-mini", prompt_cache_key="contracts")
    emu.push("openai", *(ReplyJson({"valid": True, "reason": "allowed"}),) * 2)
    keyed.run("May the tenant paint the walls?")
    again = keyed.run("May the tenant paint the walls?")
    print("openai cached tokens on the second call:", again.usage.cached_tokens)
    assert again.usage.cached_tokens > 0
