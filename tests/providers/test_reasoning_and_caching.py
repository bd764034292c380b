"""``reasoning_effort``, ``prompt_cache``, ``prompt_cache_key`` and ``cached_content`` on the wire.

Each adapter's body carries exactly the fields the option maps to, each field validated against
the SDK's own request types (``typing.get_type_hints`` of its TypedDicts and models), and a
value the provider cannot take is a ConfigurationError before anything is sent.
"""

from __future__ import annotations

import json
from typing import Any, get_type_hints

import pytest
from pydantic import TypeAdapter

from alloy import ConfigurationError
from alloy._types import (
    Capabilities,
    ModelSettings,
    ModelTurn,
    OutputSpec,
    Request,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserTurn,
)
from alloy.providers import anthropic, gemini, ollama, openai_chat, openai_responses

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
FORECAST = ToolDefinition("forecast", "The forecast for a city.", SCHEMA)
CAPS = Capabilities(native_schema=True, tools=True, strict_tools=True)


def request(*messages: Any, **settings: Any) -> Request:
    tools = settings.pop("tools", ())
    output = settings.pop("output", None)
    system = settings.pop("system", None)
    return Request(
        model="m",
        messages=messages or (UserTurn("Weather in Paris?"),),
        system=system,
        tools=tools,
        output=output,
        settings=ModelSettings(**settings),
    )


def sdk_accepts(params: type, body: dict[str, Any], *fields: str) -> None:
    """Each of ``fields`` is a parameter of the SDK's request type, and its value validates."""
    hints = get_type_hints(params)
    for name in fields:
        assert name in hints, f"{params.__name__} has no {name}"
        TypeAdapter(hints[name]).validate_python(body[name])


def block_accepted(params: type, block: dict[str, Any]) -> None:
    """Every key of ``block`` is a field of the SDK's TypedDict ``params``, and it validates
    (TypedDict validation alone would let unknown keys through)."""
    assert set(block) <= set(get_type_hints(params)), set(block) - set(get_type_hints(params))
    TypeAdapter(params).validate_python(block)


def cache_marks(value: Any) -> int:
    """How many ``cache_control`` breakpoints a body holds."""
    return json.dumps(value).count('"cache_control"')


# -- Anthropic -----------------------------------------------------------------------------------


def anthropic_params() -> type:
    from anthropic.types.message_create_params import MessageCreateParamsBase

    return MessageCreateParamsBase


def test_anthropic_effort_level_is_output_config_effort_beside_the_format() -> None:
    spec = OutputSpec("weather", SCHEMA, mode="native")
    body = anthropic.build(request(output=spec, reasoning_effort="high"), "claude-opus-4-6", CAPS)
    assert body["output_config"]["effort"] == "high"
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert "thinking" not in body and body["max_tokens"] == anthropic.DEFAULT_MAX_TOKENS
    sdk_accepts(anthropic_params(), body, "output_config")


def test_anthropic_budget_is_extended_thinking_with_room_for_the_answer() -> None:
    body = anthropic.build(request(reasoning_effort=2048), "claude-sonnet-4-5", CAPS)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] == 2048 + anthropic.DEFAULT_MAX_TOKENS
    assert "output_config" not in body
    sdk_accepts(anthropic_params(), body, "thinking", "max_tokens")
    kept = anthropic.build(request(reasoning_effort=2048, max_tokens=9000), "claude-x", CAPS)
    assert kept["max_tokens"] == 9000


def test_anthropic_thinking_budget_unforces_the_output_tool() -> None:
    spec = OutputSpec("weather", SCHEMA, mode="tool")
    body = anthropic.build(request(output=spec, reasoning_effort=1024), "claude-x", CAPS)
    assert body["tool_choice"] == {"type": "auto"}  # the API refuses a forced tool with thinking


@pytest.mark.parametrize("off", ["none", 0])
def test_anthropic_none_turns_thinking_off(off: str | int) -> None:
    body = anthropic.build(request(reasoning_effort=off), "claude-x", CAPS)
    assert body["thinking"] == {"type": "disabled"}
    sdk_accepts(anthropic_params(), body, "thinking")


@pytest.mark.parametrize(
    ("effort", "max_tokens", "message"),
    [
        ("minimal", None, "takes none, low, medium, high, xhigh or max"),
        (512, None, "at least 1024 tokens"),
        (4096, 4096, "leaves no room for an answer"),
    ],
)
def test_anthropic_refuses_what_it_cannot_take(
    effort: str | int, max_tokens: int | None, message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        anthropic.build(request(reasoning_effort=effort, max_tokens=max_tokens), "claude-x", CAPS)


def test_anthropic_prompt_cache_marks_the_last_tool_the_system_and_the_last_block() -> None:
    spec = OutputSpec("weather", SCHEMA, mode="tool")
    req = request(output=spec, tools=(FORECAST,), system="You forecast weather.", prompt_cache=True)
    body = anthropic.build(req, "claude-x", CAPS)
    ephemeral = {"type": "ephemeral"}
    # The output tool is the last tool: the schema is cached with the tools.
    assert [t["name"] for t in body["tools"]] == ["forecast", "weather"]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][-1]["cache_control"] == ephemeral
    assert body["system"] == [
        {"type": "text", "text": "You forecast weather.", "cache_control": ephemeral}
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Weather in Paris?", "cache_control": ephemeral}],
        }
    ]
    assert cache_marks(body) == 3  # of the four breakpoints the API allows
    from anthropic.types import TextBlockParam, ToolParam

    block_accepted(ToolParam, body["tools"][-1])
    block_accepted(TextBlockParam, body["system"][0])
    block_accepted(TextBlockParam, body["messages"][0]["content"][0])


def test_anthropic_prompt_cache_marks_a_tool_round_at_its_last_result() -> None:
    messages = (
        UserTurn("Weather in Paris?"),
        ModelTurn(ToolCall("toolu_1", "forecast", {"city": "Paris"})),
        UserTurn(ToolResult("toolu_1", "forecast", "sunny")),
    )
    body = anthropic.build(request(*messages, prompt_cache=True), "claude-x", CAPS)
    last = body["messages"][-1]["content"][-1]
    assert last["type"] == "tool_result" and last["cache_control"] == {"type": "ephemeral"}
    from anthropic.types import ToolResultBlockParam

    block_accepted(ToolResultBlockParam, last)
    assert cache_marks(body) == 2  # no system prompt; the tools named in the history are stubs
    assert cache_marks(body["messages"][:-1]) == 0


def test_anthropic_without_prompt_cache_sends_no_breakpoint() -> None:
    req = request(tools=(FORECAST,), system="You forecast weather.")
    body = anthropic.build(req, "claude-x", CAPS)
    assert cache_marks(body) == 0 and body["system"] == "You forecast weather."


@pytest.mark.parametrize(
    ("option", "value"), [("prompt_cache_key", "tenant-1"), ("cached_content", "cachedContents/a")]
)
def test_anthropic_refuses_other_providers_cache_names(option: str, value: str) -> None:
    with pytest.raises(ConfigurationError, match=f"cannot take {option}="):
        anthropic.build(request(**{option: value}), "claude-x", CAPS)


# -- OpenAI Responses and Chat Completions --------------------------------------------------------


def responses_params() -> type:
    from openai.types.responses.response_create_params import ResponseCreateParamsBase

    return ResponseCreateParamsBase


def chat_params() -> type:
    from openai.types.chat.completion_create_params import CompletionCreateParamsBase

    return CompletionCreateParamsBase


@pytest.mark.parametrize("effort", ["none", "minimal", "low", "medium", "high", "xhigh", "max"])
def test_openai_effort_levels_go_as_they_are(effort: str) -> None:
    """A later GPT-5 release (or another server's model) is sent any level: it decides."""
    req = request(reasoning_effort=effort, prompt_cache_key="tenant-1")
    body = openai_responses.build(req, "gpt-5.2")
    assert body["reasoning"] == {"effort": effort}
    assert body["prompt_cache_key"] == "tenant-1"
    sdk_accepts(responses_params(), body, "reasoning", "prompt_cache_key")
    chat = openai_chat.build(req, "gpt-5.2")
    assert chat["reasoning_effort"] == effort and chat["prompt_cache_key"] == "tenant-1"
    sdk_accepts(chat_params(), chat, "reasoning_effort", "prompt_cache_key")


def test_openai_sends_nothing_for_prompt_cache_alone() -> None:
    plain = openai_responses.build(request(), "gpt-5-mini")
    assert openai_responses.build(request(prompt_cache=True), "gpt-5-mini") == plain
    assert openai_chat.build(request(prompt_cache=True), "gpt-5-mini") == openai_chat.build(
        request(), "gpt-5-mini"
    )
    assert "reasoning" not in plain and "prompt_cache_key" not in plain


@pytest.mark.parametrize("build", [openai_responses.build, openai_chat.build])
@pytest.mark.parametrize(
    ("model", "settings", "message"),
    [
        (
            "gpt-5-mini",
            {"reasoning_effort": 2048},
            r"\(GPT-5\) takes minimal, low, medium or high$",
        ),
        (
            "gpt-5-mini",
            {"reasoning_effort": "none"},
            r"\(GPT-5\) takes minimal, low, medium or high",
        ),
        ("o3", {"reasoning_effort": "minimal"}, r"o3 \(o-series\) takes low, medium or high"),
        ("gpt-4o", {"reasoning_effort": "low"}, "gpt-4o .* takes no reasoning_effort"),
        ("gpt-5-chat-latest", {"reasoning_effort": "low"}, "takes no reasoning_effort"),
        ("gpt-5-mini", {"cached_content": "cachedContents/a"}, "Gemini context cache"),
    ],
)
def test_openai_refuses_what_it_cannot_take(
    build: Any, model: str, settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        build(request(**settings), model)


def test_openai_compatible_servers_get_the_level_for_any_other_model() -> None:
    body = openai_chat.build(request(reasoning_effort="high"), "qwen3:8b")
    assert body["reasoning_effort"] == "high"


# -- Gemini ---------------------------------------------------------------------------------------


def gemini_config(model: str, **settings: Any) -> dict[str, Any]:
    from google.genai import types

    config = gemini.config_dict(request(**settings), model)
    types.GenerateContentConfig.model_validate(config)  # extra="forbid": every key is the SDK's
    return config


@pytest.mark.parametrize(
    ("effort", "budget"), [("none", 0), ("low", 1024), ("medium", 8192), ("high", 24576)]
)
def test_gemini_2_5_takes_levels_as_budgets(effort: str, budget: int) -> None:
    config = gemini_config("gemini-2.5-flash", reasoning_effort=effort)
    assert config["thinking_config"] == {"thinking_budget": budget}
    if effort == "none":  # 0 is "none", where a family takes that
        assert gemini_config("gemini-2.5-flash", reasoning_effort=0) == config


@pytest.mark.parametrize("effort", ["minimal", "low", "medium", "high", "xhigh"])
def test_gemini_3_takes_levels_as_thinking_levels(effort: str) -> None:
    config = gemini_config("gemini-3-pro-preview", reasoning_effort=effort)
    assert config["thinking_config"] == {"thinking_level": effort.upper()}


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-flash"])
def test_gemini_budgets_are_thinking_budgets(model: str) -> None:
    config = gemini_config(model, reasoning_effort=4096)
    assert config["thinking_config"] == {"thinking_budget": 4096}


@pytest.mark.parametrize(
    ("model", "effort", "message"),
    [
        ("gemini-2.0-flash", "low", "which do not think"),
        ("gemini-1.5-pro", 1024, "which do not think"),
        ("gemini-2.5-pro", "xhigh", r"takes low, medium or high, or a thinking budget of 128 to"),
        ("gemini-2.5-pro", "none", "Gemini 2.5 Pro, which always thinks"),
        ("gemini-2.5-pro", 0, "Gemini 2.5 Pro, which always thinks"),
        ("gemini-2.5-flash", 30000, "a thinking budget of 1 to 24576 tokens"),
        ("gemini-3-pro-preview", "none", "which always think"),
        ("gemini-3-pro-preview", 0, "which always think"),
        ("gemini-3-flash", 0, "which always think"),
        ("gemini-3-pro-preview", "max", "minimal, low, medium, high or xhigh"),
    ],
)
def test_gemini_refuses_what_the_model_cannot_take(
    model: str, effort: str | int, message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        gemini.config_dict(request(reasoning_effort=effort), model)


def test_gemini_cached_content_is_sent_by_name() -> None:
    spec = OutputSpec("weather", SCHEMA, mode="native")
    config = gemini_config("gemini-2.5-flash", output=spec, cached_content="cachedContents/abc")
    assert config["cached_content"] == "cachedContents/abc"
    assert config["response_mime_type"] == "application/json"  # a schema may stand beside it
    assert "prompt_cache" not in json.dumps(gemini_config("gemini-2.5-flash", prompt_cache=True))


@pytest.mark.parametrize(
    ("settings", "refused"),
    [
        ({"system": "Be brief."}, "system_instruction"),
        ({"tools": (FORECAST,)}, "tools"),
        ({"output": OutputSpec("weather", SCHEMA, mode="tool")}, "tools, tool_config"),
    ],
)
def test_gemini_refuses_a_system_prompt_or_tools_beside_cached_content(
    settings: dict[str, Any], refused: str
) -> None:
    with pytest.raises(ConfigurationError, match=f"refuses {refused} beside cached_content"):
        gemini.config_dict(request(cached_content="cachedContents/abc", **settings), "gemini-3")


def test_gemini_refuses_openais_cache_key() -> None:
    with pytest.raises(ConfigurationError, match="OpenAI's routing hint"):
        gemini.config_dict(request(prompt_cache_key="tenant-1"), "gemini-2.5-flash")


# -- Ollama ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("effort", "think"), [("none", False), ("low", "low"), ("medium", "medium"), ("high", "high")]
)
def test_ollama_effort_is_think(effort: str, think: bool | str) -> None:
    from ollama._types import ChatRequest

    body = ollama.build(request(reasoning_effort=effort), "gpt-oss:20b")
    assert body["think"] == think
    assert ChatRequest.model_validate(body).think == think
    assert "think" not in ollama.build(request(prompt_cache=True), "gpt-oss:20b")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"reasoning_effort": 2048}, "no budgets.* takes none, low, medium or high"),
        ({"reasoning_effort": "xhigh"}, "takes none, low, medium or high"),
        ({"prompt_cache_key": "tenant-1"}, "OpenAI's routing hint"),
        ({"cached_content": "cachedContents/a"}, "Gemini context cache"),
    ],
)
def test_ollama_refuses_what_it_cannot_take(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        ollama.build(request(**settings), "llama3.2")


# -- one table per provider, checked one way ------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "effort", "sent"),
    [
        ("claude-opus-4-5", "high", {"output_config": {"effort": "high"}}),
        ("claude-sonnet-4-6", "max", {"output_config": {"effort": "max"}}),
        ("claude-sonnet-4-5", 2048, {"thinking": {"type": "enabled", "budget_tokens": 2048}}),
        ("claude-3-7-sonnet-latest", "none", {"thinking": {"type": "disabled"}}),
        ("claude-opus-4-1", 0, {"thinking": {"type": "disabled"}}),
    ],
)
def test_anthropic_sends_what_the_model_family_takes(
    model: str, effort: str | int, sent: dict[str, Any]
) -> None:
    body = anthropic.build(request(reasoning_effort=effort), model, CAPS)
    assert {key: body[key] for key in sent} == sent


@pytest.mark.parametrize(
    ("model", "effort", "message"),
    [
        ("claude-sonnet-4-5", "high", r"\(Claude 3\.7 to Sonnet and Haiku 4\.5: .*\) takes none"),
        ("claude-haiku-4-5-20251001", "low", "extended thinking, no effort levels"),
        ("claude-opus-4-1", "medium", "takes none .* or a thinking budget of at least 1024"),
        ("claude-3-5-sonnet-20241022", 2048, "Claude 3.5 and older, which do not think"),
        ("claude-3-haiku-20240307", "none", "takes no reasoning_effort"),
    ],
)
def test_anthropic_refuses_what_the_model_family_cannot_take(
    model: str, effort: str | int, message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        anthropic.build(request(reasoning_effort=effort), model, CAPS)


def test_every_provider_checks_reasoning_effort_through_one_table() -> None:
    from alloy.providers import _efforts

    cases = [
        (_efforts.OPENAI, lambda e: openai_responses.build(request(reasoning_effort=e), "o3")),
        (_efforts.OPENAI, lambda e: openai_chat.build(request(reasoning_effort=e), "o3")),
        (_efforts.ANTHROPIC, lambda e: anthropic.build(request(reasoning_effort=e), "c", CAPS)),
        (_efforts.GEMINI, lambda e: gemini.config_dict(request(reasoning_effort=e), "gemini-3")),
        (_efforts.OLLAMA, lambda e: ollama.build(request(reasoning_effort=e), "qwen3")),
    ]
    for table, build in cases:
        assert table.families[-1].matches("any-model-id-at-all")
        with pytest.raises(ConfigurationError) as info:
            build(-5)
        assert str(info.value).startswith(f"{table.provider} cannot take reasoning_effort=-5: ")
        assert " takes " in str(info.value)
