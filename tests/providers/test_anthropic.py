"""The Anthropic adapter's pure parts: request building, response and stream parsing, error
mapping and capabilities, checked against the captured SDK requests and the recorded bodies."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anthropic
import httpx2
import pytest
from pydantic import BaseModel, Field, create_model

from alloy import command
from alloy._output import JsonOutput
from alloy._types import (
    FINALIZE_SCHEMA_PROMPT,
    Media,
    ModelSettings,
    ModelTurn,
    Opaque,
    OutputSpec,
    Request,
    RetryPrompt,
    Text,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserTurn,
)
from alloy.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
    RefusalError,
    SchemaRejectedError,
    ServerError,
    TruncatedOutputError,
    UnreadableResponseError,
)
from alloy.providers._anthropic_dialect import anthropic_schema
from alloy.providers.anthropic import (
    DEFAULT_MAX_TOKENS,
    AnthropicModel,
    StreamParser,
    build,
    build_messages,
    capabilities_for,
    parse,
    sdk_kwargs,
    supports_native_output,
)
from alloy.testing.emulator import (
    CutStream,
    Disconnect,
    Emulator,
    HttpError,
    Overloaded,
    RateLimited,
    ReplyEmpty,
    ReplyJson,
    ReplyMaxTokens,
    ReplyRaw,
    ReplyRefusal,
    ReplyText,
    ReplyToolCalls,
    SchemaRejected,
    Slow,
    StreamError,
    Unauthorized,
)
from alloy.testing.emulator._schema_rules import anthropic_problem

from ..conftest import Call
from .planned import as_planned

# The SDK warns on every call to a model it lists as deprecated (claude-sonnet-4-5, the model
# of the captured requests); that is the SDK talking to users, not a test problem.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
CAPTURED = json.loads((SHARED / "sdk_captured" / "anthropic.json").read_text())["cases"]
RECORDED = SHARED / "recorded" / "anthropic"
MODEL = "claude-sonnet-4-5"
CAPS = capabilities_for(MODEL)


def recorded(name: str) -> list[dict[str, Any]]:
    interactions: list[dict[str, Any]] = json.loads((RECORDED / name).read_text())["interactions"]
    return interactions


def captured_body(case: str) -> dict[str, Any]:
    requests = CAPTURED[case]["requests"]
    first = requests[0] if isinstance(requests, list) else requests
    body: dict[str, Any] = first["body"]
    return body


def user(*parts: Any) -> UserTurn:
    return UserTurn(tuple(Text(p) if isinstance(p, str) else p for p in parts))


def request(*messages: Any, **kwargs: Any) -> Request:
    settings = kwargs.pop("settings", ModelSettings(max_tokens=256))
    return as_planned(
        Request(model=f"anthropic:{MODEL}", messages=messages, settings=settings, **kwargs)
    )


# -- structure comparison with the captured SDK requests -----------------------------------

SCHEMA_KEYS = {"schema", "input_schema"}


def shape(value: Any) -> Any:
    """Keys and nesting only; schemas are compared on their own; nulls are SDK echo artefacts."""
    if isinstance(value, dict):
        return {
            k: ("<schema>" if k in SCHEMA_KEYS else shape(v))
            for k, v in value.items()
            if v is not None
        }
    if isinstance(value, list):
        return [shape(v) for v in value]
    return type(value).__name__


def schemas(value: Any) -> list[Any]:
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k in SCHEMA_KEYS]
        return found + [s for k, v in value.items() if k not in SCHEMA_KEYS for s in schemas(v)]
    if isinstance(value, list):
        return [s for v in value for s in schemas(v)]
    return []


def assert_matches_captured(body: dict[str, Any], case: str, *, same_schemas: bool = True) -> None:
    """Same keys and nesting as the SDK's request; schemas are the dialect of the SDK's ones."""
    expected = captured_body(case)
    assert shape(body) == shape(expected)
    for ours, theirs in zip(schemas(body), schemas(expected), strict=True):
        assert anthropic_problem(ours) is None
        if same_schemas:
            assert ours == anthropic_schema(theirs)


WEATHER = captured_body("messages.structured_raw")["output_config"]["format"]["schema"]
TOOL_SCHEMA = captured_body("messages.tool")["tools"][0]["input_schema"]
GET_WEATHER = ToolDefinition("get_weather", "Get current weather", TOOL_SCHEMA, strict=True)


def test_text_matches_captured() -> None:
    body = build(request(user("Say hello")), MODEL, CAPS)
    assert body == captured_body("messages.text")


def test_native_structured_output_matches_captured() -> None:
    spec = OutputSpec("weather", WEATHER, mode="native")
    body = build(request(user("Weather in Paris?"), output=spec), MODEL, CAPS)
    assert_matches_captured(body, "messages.structured_raw")
    # messages.parse() sends the dialect of a pydantic model's schema: same place, same shape.
    assert_matches_captured(body, "messages.structured_parse", same_schemas=False)


def test_tool_matches_captured() -> None:
    body = build(request(user("Weather in Paris?"), tools=(GET_WEATHER,)), MODEL, CAPS)
    assert_matches_captured(body, "messages.tool")
    assert body["tools"][0]["strict"] is True


def test_forced_output_tool_matches_captured() -> None:
    spec = OutputSpec("get_weather", TOOL_SCHEMA, mode="tool")
    body = build(request(user("Weather in Paris?"), output=spec), MODEL, CAPS)
    assert_matches_captured(body, "messages.forced_tool")
    assert body["tool_choice"] == {"type": "tool", "name": "get_weather"}


def test_tool_round_trip_matches_captured() -> None:
    expected = captured_body("messages.tool_final")
    use = expected["messages"][1]["content"][0]
    messages = (
        user("Weather in Paris?"),
        ModelTurn((ToolCall(use["id"], "get_weather", use["input"]),)),
        UserTurn((ToolResult(use["id"], "get_weather", '{"temp_c": 21.5}'),)),
    )
    body = build(request(*messages, tools=(GET_WEATHER,)), MODEL, CAPS)
    assert_matches_captured(body, "messages.tool_final")
    assert body["messages"][1:] == [
        {"role": "assistant", "content": [{k: v for k, v in use.items() if v is not None}]},
        expected["messages"][2],
    ]


@pytest.mark.parametrize(
    ("case", "tools"), [("messages.stream", ()), ("messages.stream_tool", (GET_WEATHER,))]
)
def test_stream_matches_captured(case: str, tools: tuple[ToolDefinition, ...]) -> None:
    model = AnthropicModel(MODEL, api_key="k")
    req = request(user("Say hello"), tools=tools)
    kwargs = model._arguments(model.build(req, stream=True), req)
    assert kwargs["stream"] is True
    assert_matches_captured({k: v for k, v in kwargs.items() if k != "extra_body"}, case)


# -- settings ------------------------------------------------------------------------------


def test_settings_reach_the_body_and_the_sdk_kwargs() -> None:
    settings = ModelSettings(
        temperature=0.2,
        max_tokens=99,
        timeout=7.5,
        extra={"top_k": 5, "metadata": {"user_id": "u1"}, "output_config": {"effort": "low"}},
    )
    spec = OutputSpec("weather", WEATHER, mode="native")
    req = request(user("hi"), system="be brief", output=spec, settings=settings)
    body = build(req, MODEL, CAPS)
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 99
    assert body["system"] == "be brief"
    assert body["top_k"] == 5
    # extra_json merges one level deep: the schema format stays next to the effort.
    assert body["output_config"]["effort"] == "low"
    assert body["output_config"]["format"]["type"] == "json_schema"
    model = AnthropicModel(MODEL, api_key="k")
    kwargs = model._arguments(model.build(req, stream=False), req)
    assert kwargs["timeout"] == 7.5
    assert kwargs["extra_body"] == {"temperature": 0.2, "top_k": 5}
    assert kwargs["metadata"] == {"user_id": "u1"}
    assert "temperature" not in {k for k in kwargs if k != "extra_body"}


def test_max_tokens_defaults_deliberately(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="alloy"):
        body = build(request(user("hi"), settings=ModelSettings()), MODEL, CAPS)
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS == 4096
    assert "default 4096" in caplog.text


def test_sdk_kwargs_split() -> None:
    kwargs = sdk_kwargs({"model": "m", "messages": [], "max_tokens": 1, "temperature": 0})
    assert kwargs == {
        "model": "m",
        "messages": [],
        "max_tokens": 1,
        "extra_body": {"temperature": 0},
    }


# -- output modes and tool choice ----------------------------------------------------------


def test_tool_mode_with_user_tools_uses_any() -> None:
    spec = OutputSpec("Answer", {"type": "object", "properties": {}}, mode="tool")
    body = build(request(user("q"), tools=(GET_WEATHER,), output=spec), MODEL, CAPS)
    assert [t["name"] for t in body["tools"]] == ["get_weather", "Answer"]
    assert body["tool_choice"] == {"type": "any"}


@pytest.mark.parametrize("kind", ["enabled", "adaptive"])
def test_thinking_never_forces_tool_choice(kind: str, caplog: pytest.LogCaptureFixture) -> None:
    thinking = {"type": kind, "budget_tokens": 1024} if kind == "enabled" else {"type": kind}
    spec = OutputSpec("Answer", {"type": "object", "properties": {}}, mode="tool")
    settings = ModelSettings(max_tokens=2048, extra={"thinking": thinking})
    with caplog.at_level(logging.DEBUG, logger="alloy"):
        body = build(request(user("q"), output=spec, settings=settings), MODEL, CAPS)
    assert body["tool_choice"] == {"type": "auto"}
    assert body["thinking"] == thinking
    assert "thinking is on" in caplog.text
    kwargs = sdk_kwargs(body)
    assert kwargs["thinking"] == thinking


def test_thinking_disabled_still_forces() -> None:
    spec = OutputSpec("Answer", {"type": "object", "properties": {}}, mode="tool")
    settings = ModelSettings(extra={"thinking": {"type": "disabled"}})
    body = build(request(user("q"), output=spec, settings=settings), MODEL, CAPS)
    assert body["tool_choice"] == {"type": "tool", "name": "Answer"}


def test_prompt_mode_sends_nothing_special() -> None:
    spec = OutputSpec("Answer", {"type": "object", "properties": {}}, mode="prompt")
    body = build(request(user("q"), output=spec), MODEL, CAPS)
    assert "output_config" not in body and "tools" not in body and "tool_choice" not in body


def test_strict_only_where_the_model_has_strict_tools() -> None:
    loose = ToolDefinition(
        "t",
        "d",
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}},
        strict=False,
    )
    body = build(request(user("q"), tools=(GET_WEATHER, loose)), MODEL, CAPS)
    assert body["tools"][0]["strict"] is True
    assert "strict" not in body["tools"][1]
    # Non-strict tools keep the full schema, constraints included.
    assert body["tools"][1]["input_schema"]["properties"]["n"]["minimum"] == 1
    old = capabilities_for("claude-3-5-sonnet-latest")
    body = build(request(user("q"), tools=(GET_WEATHER,)), "claude-3-5-sonnet-latest", old)
    assert "strict" not in body["tools"][0]
    assert body["tools"][0]["input_schema"] == TOOL_SCHEMA


# -- conversations ---------------------------------------------------------------------------


def tool_history() -> tuple[Any, ...]:
    return (
        user("q"),
        ModelTurn(
            (
                Text("Let me check."),
                ToolCall("toolu_1", "get_weather", {"city": "Paris"}),
                ToolCall("toolu_2", "get_time", {}),
            )
        ),
        UserTurn(
            (
                ToolResult("toolu_1", "get_weather", "21C"),
                ToolResult("toolu_2", "get_time", "boom", is_error=True),
            )
        ),
    )


def test_parallel_tool_results_go_back_in_one_user_message() -> None:
    body = build(request(*tool_history(), tools=(GET_WEATHER,)), MODEL, CAPS)
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},
    ]
    assert body["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "21C"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "boom", "is_error": True},
        ],
    }


def test_finalize_turn_keeps_the_history_valid() -> None:
    """No tools offered, empty model turn, finalize prompt: still a valid Messages request."""
    messages = (*tool_history(), ModelTurn(()), user(FINALIZE_SCHEMA_PROMPT))
    spec = OutputSpec("weather", WEATHER, mode="native")
    body = build(request(*messages, output=spec), MODEL, CAPS)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user"]
    last = body["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text"]
    assert last[-1]["text"] == FINALIZE_SCHEMA_PROMPT
    # Tool blocks need tool definitions; none may be called.
    assert [t["name"] for t in body["tools"]] == ["get_weather", "get_time"]
    assert body["tool_choice"] == {"type": "none"}


def test_finalize_turn_in_tool_mode_forces_the_output_tool() -> None:
    messages = (*tool_history(), ModelTurn(()), user(FINALIZE_SCHEMA_PROMPT))
    spec = OutputSpec("Answer", {"type": "object", "properties": {}}, mode="tool")
    body = build(request(*messages, output=spec), MODEL, CAPS)
    assert [t["name"] for t in body["tools"]] == ["Answer"]
    assert body["tool_choice"] == {"type": "tool", "name": "Answer"}


def test_reask_after_an_output_tool_call_answers_the_tool_use() -> None:
    spec = OutputSpec("Answer", {"type": "object", "properties": {}}, mode="tool")
    messages = (
        user("q"),
        ModelTurn((ToolCall("toolu_9", "Answer", {"x": 1}),)),
        UserTurn((RetryPrompt("- x: bad"),)),
    )
    body = build(request(*messages, output=spec), MODEL, CAPS)
    result = body["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_9"
    assert result["is_error"] is True
    assert "- x: bad" in result["content"] and "Answer again" in result["content"]


def test_reask_in_native_mode_is_user_text() -> None:
    messages = (user("q"), ModelTurn((Text("{}"),)), UserTurn((RetryPrompt("- bad"),)))
    body = build(request(*messages), MODEL, CAPS)
    assert body["messages"][2]["content"].startswith("Your previous answer was not valid:\n- bad")


def test_media_and_opaque_parts() -> None:
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    messages = (
        user(
            "look",
            Media("image", "image/png", data="aGk="),
            Media("pdf", "application/pdf", url="https://x/y.pdf"),
        ),
        ModelTurn(
            (Opaque("anthropic", thinking), Opaque("openai", {"x": 1}), ToolCall("t1", "f", {}))
        ),
        UserTurn((ToolResult("t1", "f", "ok"),)),
    )
    body = build(
        request(*messages, tools=(ToolDefinition("f", "", {"type": "object", "properties": {}}),)),
        MODEL,
        CAPS,
    )
    assert body["messages"][0]["content"][1:] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}},
        {"type": "document", "source": {"type": "url", "url": "https://x/y.pdf"}},
    ]
    assert body["messages"][1]["content"][0] == thinking
    assert len(body["messages"][1]["content"]) == 2  # other providers' opaque data is not sent


# -- parsing recorded bodies -----------------------------------------------------------------


class City(BaseModel):
    city: str
    country: str
    population: int


class CityLocation(BaseModel):
    city: str
    country: str


def test_recorded_structured_output_parses() -> None:
    (exchange,) = recorded("structured_output_no_tools.json")
    response = parse(exchange["response"]["body"])
    assert JsonOutput(City).parse(response.text) == City(
        city="London", country="United Kingdom", population=9002488
    )
    assert response.finish_reason == "stop"
    assert response.usage.input_tokens == 196 and response.usage.output_tokens == 19
    assert response.usage.requests == 1


def test_recorded_strict_tool_then_structured_output() -> None:
    first, second = recorded("strict_tool_plus_structured_output.json")
    calls = parse(first["response"]["body"])
    assert calls.finish_reason == "tool_calls"
    assert [(c.id, c.name, dict(c.args)) for c in calls.tool_calls] == [
        ("toolu_01PPTvKs3rE6VohQPGEwqsTZ", "lookup_country", {"city": "Paris"})
    ]
    final = parse(second["response"]["body"])
    assert JsonOutput(City).parse(final.text).country == "France"


def test_recorded_forced_output_tool() -> None:
    first, second = recorded("tool_use_round_trip_forced_output_tool.json")
    assert [c.name for c in parse(first["response"]["body"]).tool_calls] == ["get_user_country"]
    (answer,) = parse(second["response"]["body"]).tool_calls
    assert answer.name == "final_result"
    assert JsonOutput(CityLocation).parse(json.dumps(dict(answer.args))) == CityLocation(
        city="Mexico City", country="Mexico"
    )


def test_recorded_stream_parses() -> None:
    (exchange,) = recorded("stream_text.json")
    parser = StreamParser()
    deltas = [d for event in exchange["response"]["sse_events"] for d in parser.feed(event["data"])]
    assert parser.finished
    assert [getattr(d, "text", None) for d in deltas] == ["2"]
    response = parser.response()
    assert response.text == "2" and response.finish_reason == "stop"
    assert response.usage.input_tokens == 20 and response.usage.output_tokens == 5


def test_parse_usage_cache_thinking_and_refusal() -> None:
    body = {
        "id": "msg_1",
        "model": MODEL,
        "content": [
            {"type": "thinking", "thinking": "…", "signature": "s"},
            {"type": "text", "text": "I can't help with that."},
        ],
        "stop_reason": "refusal",
        "stop_details": {"type": "refusal", "category": "cyber", "explanation": "nope"},
        "usage": {
            "input_tokens": 10,
            "cache_creation_input_tokens": 5,
            "cache_read_input_tokens": 100,
            "output_tokens": 30,
            "output_tokens_details": {"thinking_tokens": 12},
        },
    }
    response = parse(body)
    assert response.finish_reason == "refusal"
    assert response.refusal == "I can't help with that."
    assert response.parts[0] == Opaque(
        "anthropic", {"type": "thinking", "thinking": "…", "signature": "s"}
    )
    usage = response.usage
    assert (
        usage.input_tokens,
        usage.cached_tokens,
        usage.cache_write_tokens,
        usage.output_tokens,
        usage.reasoning_tokens,
    ) == (115, 100, 5, 30, 12)


@pytest.mark.parametrize(
    ("stop", "finish"),
    [
        ("end_turn", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("stop_sequence", "stop"),
        ("model_context_window_exceeded", "length"),
        ("refusal", "refusal"),
    ],
)
def test_finish_reasons(stop: str, finish: str) -> None:
    response = parse(
        {
            "content": [{"type": "text", "text": "x"}],
            "stop_reason": stop,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )
    assert response.finish_reason == finish


def test_stream_parser_tool_calls_and_thinking() -> None:
    events = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "model": MODEL,
                "usage": {"input_tokens": 9, "cache_read_input_tokens": 3, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "let me"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "SIG"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_a", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": ""},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"a": '},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "1}"},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_b", "name": "g", "input": {}},
        },
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 40, "output_tokens_details": {"thinking_tokens": 7}},
        },
        {"type": "message_stop"},
    ]
    parser = StreamParser()
    for event in events:
        parser.feed(event)
    response = parser.response()
    assert response.finish_reason == "tool_calls"
    assert [(c.id, c.name, dict(c.args)) for c in response.tool_calls] == [
        ("toolu_a", "f", {"a": 1}),
        ("toolu_b", "g", {}),
    ]
    assert response.parts[0] == Opaque(
        "anthropic", {"type": "thinking", "thinking": "let me", "signature": "SIG"}
    )
    assert (
        response.usage.input_tokens,
        response.usage.cached_tokens,
        response.usage.output_tokens,
        response.usage.reasoning_tokens,
    ) == (12, 3, 40, 7)


# -- capabilities ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model_id",
    [
        "claude-sonnet-4-5",
        "claude-sonnet-4-5-20250929",
        "claude-opus-4-1",
        "claude-opus-4-1-20250805",
        "claude-opus-4-5",
        "claude-opus-4-6",
        "claude-haiku-4-5",
        "claude-sonnet-4-6",
        "claude-opus-5",
        "claude-sonnet-5",
        "claude-future-model",
        "my-proxy-model",
    ],
)
def test_native_for_current_models(model_id: str) -> None:
    caps = capabilities_for(model_id)
    assert supports_native_output(model_id)
    assert caps.native_schema and caps.strict_tools and caps.tools
    assert caps.default_output_mode() == "native"


@pytest.mark.parametrize(
    "model_id",
    [
        "claude-3-5-sonnet-latest",
        "claude-3-7-sonnet-20250219",
        "claude-3-opus-20240229",
        "claude-3-haiku-20240307",
        "claude-3-5-haiku-latest",
        "claude-sonnet-4-20250514",
        "claude-opus-4-0",
        "claude-2.1",
        "claude-instant-1.2",
    ],
)
def test_forced_tool_for_older_models(model_id: str) -> None:
    caps = capabilities_for(model_id)
    assert not caps.native_schema and not caps.strict_tools and caps.tools
    assert caps.default_output_mode() == "tool"


# -- error mapping -----------------------------------------------------------------------------


def status_exc(
    cls: type[Exception], status: int, body: Any, headers: dict[str, str] | None = None
) -> Any:
    response = httpx2.Response(
        status,
        headers={"request-id": "req_1", **(headers or {})},
        request=httpx2.Request("POST", "http://test/v1/messages"),
    )
    return cls(f"Error code: {status}", response=response, body=body)  # type: ignore[call-arg]


def envelope(kind: str, message: str, code: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"type": kind, "message": message}
    if code:
        error["details"] = {"error_code": code}
    return {"type": "error", "error": error}


MODEL_OBJ = AnthropicModel(MODEL, api_key="sk-ant-secret-key-123456")


def test_rate_limit_with_retry_after_ms() -> None:
    exc = status_exc(
        anthropic.RateLimitError,
        429,
        envelope("rate_limit_error", "slow down"),
        {"retry-after-ms": "25", "retry-after": "3"},
    )
    error = MODEL_OBJ.map_error(exc)
    assert isinstance(error, RateLimitError) and error.transient
    assert error.retry_after == pytest.approx(0.025)
    assert error.request_id == "req_1" and error.status_code == 429


def test_rate_limit_with_retry_after_seconds() -> None:
    exc = status_exc(
        anthropic.RateLimitError, 429, envelope("rate_limit_error", "slow"), {"retry-after": "2"}
    )
    error = MODEL_OBJ.map_error(exc)
    assert error is not None and error.retry_after == 2.0


def test_spend_limit_is_a_rate_limit_that_is_not_retried() -> None:
    exc = status_exc(
        anthropic.EnforcedSpendLimitReachedError,
        429,
        envelope("rate_limit_error", "spend limit", "enforced_spend_limit_reached"),
    )
    error = MODEL_OBJ.map_error(exc)
    assert isinstance(error, RateLimitError)
    assert error.transient is False
    assert RateLimitError.transient is True  # the class is untouched


@pytest.mark.parametrize(
    ("cls", "status", "kind", "expected", "transient"),
    [
        (anthropic.AuthenticationError, 401, "authentication_error", AuthenticationError, False),
        (anthropic.PermissionDeniedError, 403, "permission_error", AuthenticationError, False),
        (anthropic.BadRequestError, 400, "invalid_request_error", BadRequestError, False),
        (anthropic.NotFoundError, 404, "not_found_error", BadRequestError, False),
        (anthropic.InternalServerError, 500, "api_error", ServerError, True),
        (anthropic.ServiceUnavailableError, 503, "api_error", ServerError, True),
        (anthropic.OverloadedError, 529, "overloaded_error", ServerError, True),
    ],
)
def test_status_errors(
    cls: Any, status: int, kind: str, expected: type[Exception], transient: bool
) -> None:
    error = MODEL_OBJ.map_error(status_exc(cls, status, envelope(kind, "it failed")))
    assert type(error) is expected
    assert error is not None and error.transient is transient and error.status_code == status


@pytest.mark.parametrize(
    "message",
    [
        "output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false",
        "The compiled grammar is too large, which would cause performance issues. Simplify your tool schemas or reduce the number of strict tools.",
        "tools.0.custom.input_schema: For 'integer' type, property 'minimum' is not supported",
    ],
)
def test_schema_rejections(message: str) -> None:
    error = MODEL_OBJ.map_error(
        status_exc(anthropic.BadRequestError, 400, envelope("invalid_request_error", message))
    )
    assert isinstance(error, SchemaRejectedError) and not error.transient


def test_in_stream_error_event_is_a_transient_server_error() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    error = MODEL_OBJ.map_error(status_exc(anthropic.APIStatusError, 200, body))
    assert isinstance(error, ServerError) and error.transient
    assert "overloaded_error" in str(error)


def test_timeouts_and_connection_errors() -> None:
    req = httpx2.Request("POST", "http://test/v1/messages")
    assert isinstance(MODEL_OBJ.map_error(anthropic.APITimeoutError(req)), ProviderTimeoutError)
    assert isinstance(
        MODEL_OBJ.map_error(anthropic.APIConnectionError(request=req)), ProviderConnectionError
    )
    assert isinstance(
        MODEL_OBJ.map_error(httpx2.RemoteProtocolError("peer closed connection")),
        ProviderConnectionError,
    )
    assert isinstance(MODEL_OBJ.map_error(httpx2.ReadTimeout("slow")), ProviderTimeoutError)
    assert MODEL_OBJ.map_error(KeyError("x")) is None


def test_the_key_never_reaches_a_message() -> None:
    exc = status_exc(
        anthropic.AuthenticationError,
        401,
        envelope("authentication_error", "invalid x-api-key sk-ant-secret-key-123456"),
    )
    error = MODEL_OBJ.map_error(exc)
    assert error is not None and "sk-ant-secret-key-123456" not in str(error)


# =============================================================================================
# Through the real SDK against the emulator, sync and async
# =============================================================================================
M = f"anthropic:{MODEL}"


def bodies(emu: Emulator) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests_for("anthropic")]


@dataclass
class Invoice:
    vendor: str
    total: float
    lines: list[str]


class Address(BaseModel):
    street: str
    city: str


class Person(BaseModel):
    name: str
    age: int = Field(ge=0, le=150)
    address: Address
    tags: list[str]
    nickname: str | None = None


@pytest.mark.parametrize(
    ("tp", "wire", "expected"),
    [
        (float, {"value": 3.5}, 3.5),
        (bool, {"value": True}, True),
        (Invoice, {"vendor": "ACME", "total": 9.5, "lines": ["a"]}, Invoice("ACME", 9.5, ["a"])),
        (
            City,
            {"city": "Oslo", "country": "Norway", "population": 700000},
            City(city="Oslo", country="Norway", population=700000),
        ),
        (list[int], {"value": [1, 2, 3]}, [1, 2, 3]),
        (int | None, {"value": None}, None),
        (int | str, {"value": "seven"}, "seven"),
        (Literal["yes", "no"], {"value": "no"}, "no"),
        (
            Person,
            {
                "name": "Ada",
                "age": 36,
                "address": {"street": "1 Main", "city": "London"},
                "tags": [],
                "nickname": None,
            },
            Person(name="Ada", age=36, address=Address(street="1 Main", city="London"), tags=[]),
        ),
    ],
    ids=[
        "float",
        "bool",
        "dataclass",
        "pydantic",
        "list",
        "optional",
        "union",
        "literal",
        "nested",
    ],
)
def test_typed_outputs_native(emu: Emulator, call: Call, tp: Any, wire: Any, expected: Any) -> None:
    @command(output=tp, model=M)
    def ask(q: str) -> str:
        return q

    emu.push("anthropic", ReplyJson(wire))
    assert call(ask, "question") == expected
    (body,) = bodies(emu)
    fmt = body["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    assert fmt["schema"] == anthropic_schema(JsonOutput(tp).schema)
    assert "tools" not in body and "tool_choice" not in body


def test_constraints_left_out_of_the_wire_are_still_enforced_locally(
    emu: Emulator, call: Call
) -> None:
    @command(output=Person, model=M)
    def who(q: str) -> str:
        return q

    bad = {
        "name": "Old",
        "age": 200,
        "address": {"street": "s", "city": "c"},
        "tags": [],
        "nickname": None,
    }
    good = {**bad, "age": 99}
    emu.push("anthropic", ReplyJson(bad), ReplyJson(good))
    assert call(who, "q").age == 99
    first, second = bodies(emu)
    age = first["output_config"]["format"]["schema"]["properties"]["age"]
    assert "maximum" not in age and "{maximum: 150" in age["description"].replace(
        "minimum: 0, ", ""
    )
    reask = second["messages"][-1]
    assert reask["role"] == "user" and "age" in reask["content"]


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: 21C"


def get_time(city: str) -> str:
    """Local time in a city."""
    return f"{city}: 12:00"


def test_tool_round_trip_single(emu: Emulator, call: Call) -> None:
    @command(output=float, model=M, tools=[get_weather])
    def temp(city: str) -> str:
        return f"Temperature in {city}?"

    emu.push(
        "anthropic",
        ReplyToolCalls(("get_weather", {"city": "Paris"}), text="Let me check."),
        ReplyJson({"value": 21.0}),
    )
    assert call(temp, "Paris") == 21.0
    first, second = bodies(emu)
    assert first["tools"][0]["name"] == "get_weather" and first["tools"][0]["strict"] is True
    assert "tool_choice" not in first
    assistant, results = second["messages"][1:]
    assert [b["type"] for b in assistant["content"]] == ["text", "tool_use"]
    use = assistant["content"][1]
    assert results["content"] == [
        {"type": "tool_result", "tool_use_id": use["id"], "content": "Paris: 21C"}
    ]
    assert second["output_config"] == first["output_config"]


def test_parallel_tool_calls_return_in_one_user_message(emu: Emulator, call: Call) -> None:
    @command(output=str, model=M, tools=[get_weather, get_time])
    def plan(city: str) -> str:
        return city

    emu.push(
        "anthropic",
        ReplyToolCalls(
            ("get_weather", {"city": "Paris"}),
            ("get_time", {"city": "Rome"}),
            ("get_weather", {"city": "Oslo"}),
        ),
        ReplyJson({"value": "done"}),
    )
    assert call(plan, "x") == "done"
    second = bodies(emu)[1]
    uses = [b for b in second["messages"][1]["content"] if b["type"] == "tool_use"]
    (results_message,) = second["messages"][2:]
    results = results_message["content"]
    assert len(uses) == 3 and [r["tool_use_id"] for r in results] == [u["id"] for u in uses]
    assert [r["content"] for r in results] == ["Paris: 21C", "Rome: 12:00", "Oslo: 21C"]


def test_failed_tool_is_an_error_result(emu: Emulator, call: Call) -> None:
    def explode(x: int) -> int:
        """Always fails."""
        raise RuntimeError("kaboom")

    @command(output=int, model=M, tools=[explode])
    def run(q: str) -> str:
        return q

    emu.push("anthropic", ReplyToolCalls(("explode", {"x": 1})), ReplyJson({"value": 0}))
    assert call(run, "q") == 0
    result = bodies(emu)[1]["messages"][2]["content"][0]
    assert result["is_error"] is True and "kaboom" in result["content"]


def test_auto_finalize_after_tools(emu: Emulator, call: Call) -> None:
    @command(output=City, model=M, tools=[get_weather])
    def city(q: str) -> str:
        return q

    emu.push(
        "anthropic",
        ReplyToolCalls(("get_weather", {"city": "Oslo"})),
        ReplyEmpty(),
        ReplyJson({"city": "Oslo", "country": "Norway", "population": 1}),
    )
    assert call(city, "q").city == "Oslo"
    final = bodies(emu)[2]
    # Valid for the API: tool blocks still have tool definitions, none may be called, the empty
    # assistant turn is gone and the roles alternate.
    assert [m["role"] for m in final["messages"]] == ["user", "assistant", "user"]
    assert [t["name"] for t in final["tools"]] == ["get_weather"] and "strict" not in final[
        "tools"
    ][0]
    assert final["tool_choice"] == {"type": "none"}
    assert final["messages"][-1]["content"][-1]["text"] == FINALIZE_SCHEMA_PROMPT
    assert "output_config" in final


def test_stream_text(emu: Emulator, stream: Any) -> None:
    @command(model=M)
    def chat(q: str) -> str:
        return q

    text = "Streaming from the emulator, in several pieces."
    emu.push("anthropic", ReplyText(text))
    chunks = stream(chat, "hi")
    assert len(chunks) > 1 and "".join(chunks) == text
    assert bodies(emu)[0]["stream"] is True


def test_stream_with_tools(emu: Emulator, stream: Any) -> None:
    @command(model=M, tools=[get_weather, get_time])
    def chat(q: str) -> str:
        return q

    emu.push(
        "anthropic",
        ReplyToolCalls(
            ("get_weather", {"city": "Paris"}), ("get_time", {"city": "Paris"}), text="Checking. "
        ),
        ReplyText("It is sunny and noon in Paris."),
    )
    assert "".join(stream(chat, "hi")) == "Checking. It is sunny and noon in Paris."
    first, second = bodies(emu)
    assert first["stream"] is True and second["stream"] is True
    uses = [b for b in second["messages"][1]["content"] if b["type"] == "tool_use"]
    assert [u["input"] for u in uses] == [{"city": "Paris"}, {"city": "Paris"}]
    assert [r["content"] for r in second["messages"][2]["content"]] == [
        "Paris: 21C",
        "Paris: 12:00",
    ]


# -- settings on the wire -------------------------------------------------------------------


@pytest.fixture
def wire(emu: Emulator, call: Call) -> Any:
    """Run a text command with options; return the recorded request."""

    def run(**options: Any) -> Any:
        @command(model=M, **options)
        def chat(q: str) -> str:
            return q

        emu.push("anthropic", ReplyText("ok"))
        assert call(chat, "hi") == "ok"
        return emu.last_request("anthropic")

    return run


def test_temperature_reaches_the_wire(wire: Any) -> None:
    assert wire(temperature=0.3).body["temperature"] == 0.3


def test_max_tokens_reaches_the_wire(wire: Any) -> None:
    assert wire(max_tokens=123).body["max_tokens"] == 123


def test_default_max_tokens_on_the_wire(wire: Any) -> None:
    assert wire().body["max_tokens"] == DEFAULT_MAX_TOKENS


def test_system_reaches_the_wire(wire: Any) -> None:
    assert wire(system="Be brief.").body["system"] == "Be brief."


def test_timeout_reaches_the_wire(wire: Any) -> None:
    assert wire(timeout=12.5).header("x-stainless-read-timeout") == "12.5"


def test_extra_json_reaches_the_wire(wire: Any) -> None:
    body = wire(
        extra_json={"top_k": 3, "metadata": {"user_id": "u-1"}, "stop_sequences": ["END"]}
    ).body
    assert (body["top_k"], body["metadata"], body["stop_sequences"]) == (
        3,
        {"user_id": "u-1"},
        ["END"],
    )


def test_sdk_retries_are_off_and_auth_is_bearer(wire: Any) -> None:
    request = wire()
    assert request.retry_count == 0
    assert request.header("authorization") == "Bearer alloy-emulator-key"
    assert request.path == "/v1/messages"


def test_large_max_tokens_streams_internally(emu: Emulator, call: Call) -> None:
    """The SDK refuses a non-streamed call that may take over ten minutes: alloy streams it."""

    @command(output=float, model=M, max_tokens=64000)
    def big(q: str) -> str:
        return q

    emu.push("anthropic", ReplyJson({"value": 1.5}))
    assert call(big, "q") == 1.5
    body = emu.last_request("anthropic").body
    assert body["stream"] is True and body["max_tokens"] == 64000


@pytest.mark.parametrize("emu", [{"ANTHROPIC_API_KEY": None}], indirect=True, ids=["no-key"])
def test_options_key_and_base_url(emu: Emulator, call: Call) -> None:
    @command(model=M, api_key="sk-ant-option-key-000000", base_url=emu.anthropic_base_url)
    def chat(q: str) -> str:
        return q

    emu.push("anthropic", ReplyText("hi"))
    assert call(chat, "q") == "hi"
    assert (
        emu.last_request("anthropic").header("authorization") == "Bearer sk-ant-option-key-000000"
    )


@pytest.mark.parametrize("emu", [{"ANTHROPIC_API_KEY": None}], indirect=True, ids=["no-key"])
def test_missing_key_is_a_configuration_error(emu: Emulator, call: Call) -> None:
    @command(model=M, base_url=emu.anthropic_base_url)
    def chat(q: str) -> str:
        return q

    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        call(chat, "q")
    assert emu.requests_for("anthropic") == []


# -- forced-tool mode and thinking -------------------------------------------------------------

OLD = "anthropic:claude-3-5-sonnet-latest"


def test_old_models_use_a_forced_output_tool(emu: Emulator, call: Call) -> None:
    @command(output=Person, model=OLD)
    def who(q: str) -> str:
        return q

    value = {
        "name": "Ada",
        "age": 36,
        "address": {"street": "s", "city": "c"},
        "tags": ["x"],
        "nickname": None,
    }
    emu.push("anthropic", ReplyToolCalls(("Person", value)))
    assert call(who, "q") == Person(**value)
    (body,) = bodies(emu)
    assert "output_config" not in body
    assert body["tool_choice"] == {"type": "tool", "name": "Person"}
    (tool,) = body["tools"]
    # No strict tool use on claude-3: the full schema goes, constraints included.
    assert "strict" not in tool and tool["input_schema"]["properties"]["age"]["maximum"] == 150


def test_forced_tool_with_user_tools_then_reask(emu: Emulator, call: Call) -> None:
    @command(output=Person, model=OLD, tools=[get_weather])
    def who(q: str) -> str:
        return q

    good = {
        "name": "Ada",
        "age": 36,
        "address": {"street": "s", "city": "c"},
        "tags": [],
        "nickname": None,
    }
    emu.push(
        "anthropic",
        ReplyToolCalls(("get_weather", {"city": "Oslo"})),
        ReplyToolCalls(("Person", {**good, "age": -1})),
        ReplyToolCalls(("Person", good)),
    )
    assert call(who, "q").name == "Ada"
    first, _, third = bodies(emu)
    assert first["tool_choice"] == {"type": "any"}
    assert [t["name"] for t in first["tools"]] == ["get_weather", "Person"]
    # The invalid output-tool call is answered by the re-ask as its tool_result.
    answer = third["messages"][-1]["content"][0]
    invalid_use = third["messages"][-2]["content"][-1]
    assert answer["type"] == "tool_result" and answer["tool_use_id"] == invalid_use["id"]
    assert answer["is_error"] is True and "age" in answer["content"]


def test_thinking_never_forces_tool_choice_on_the_wire(emu: Emulator, call: Call) -> None:
    thinking = {"type": "enabled", "budget_tokens": 1024}

    @command(
        output=Invoice,
        model="anthropic:claude-3-7-sonnet-20250219",
        max_tokens=2048,
        extra_json={"thinking": thinking},
    )
    def invoice(q: str) -> str:
        return q

    emu.push("anthropic", ReplyToolCalls(("Invoice", {"vendor": "V", "total": 1.0, "lines": []})))
    assert call(invoice, "q") == Invoice("V", 1.0, [])
    body = emu.last_request("anthropic").body
    assert body["thinking"] == thinking
    assert body["tool_choice"] == {"type": "auto"}


# -- faults ------------------------------------------------------------------------------------


def failing(emu: Emulator, *items: Any, retries: int = 2, **options: Any) -> Any:
    emu.push("anthropic", *items)

    @command(output=float, model=M, retries=retries, **options)
    def number(q: str) -> str:
        return q

    return number


def test_429_is_retried_honouring_retry_after(
    emu: Emulator, call: Call, sleeps: list[float]
) -> None:
    cmd = failing(emu, RateLimited(retry_after_ms=40), ReplyJson({"value": 2.0}))
    assert call(cmd, "q") == 2.0
    assert len(bodies(emu)) == 2
    assert [r.retry_count for r in emu.requests_for("anthropic")] == [
        0,
        0,
    ]  # the engine retried, not the SDK
    assert sleeps == [pytest.approx(0.04)]


def test_429_retry_after_reaches_the_error(emu: Emulator, call: Call) -> None:
    cmd = failing(emu, RateLimited(retry_after_ms=None, retry_after=3), retries=0)
    with pytest.raises(RateLimitError) as info:
        call(cmd, "q")
    assert info.value.retry_after == 3.0 and info.value.status_code == 429


@pytest.mark.parametrize(
    "fault",
    [
        HttpError(500, retry_after_ms=1),
        HttpError(503, retry_after_ms=1),
        Overloaded(retry_after_ms=1),
    ],
    ids=["500", "503", "529"],
)
def test_server_errors_are_retried(emu: Emulator, call: Call, fault: Any) -> None:
    cmd = failing(emu, fault, fault, ReplyJson({"value": 4.0}))
    assert call(cmd, "q") == 4.0
    assert len(bodies(emu)) == 3


def test_server_errors_exhaust_retries(emu: Emulator, call: Call) -> None:
    cmd = failing(emu, *[Overloaded(retry_after_ms=1)] * 2, retries=1)
    with pytest.raises(ServerError) as info:
        call(cmd, "q")
    assert info.value.status_code == 529 and info.value.attempts == 2


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (HttpError(400, "messages: bad"), BadRequestError),
        (Unauthorized(), AuthenticationError),
        (HttpError(403), AuthenticationError),
        (SchemaRejected(), SchemaRejectedError),
    ],
    ids=["400", "401", "403", "schema"],
)
def test_client_errors_are_not_retried(
    emu: Emulator, call: Call, fault: Any, error: type[Exception]
) -> None:
    cmd = failing(emu, fault, ReplyJson({"value": 1.0}))
    with pytest.raises(error) as info:
        call(cmd, "q")
    assert type(info.value) is error
    assert len(bodies(emu)) == 1


def test_grammar_too_large_is_schema_rejected(emu: Emulator, call: Call) -> None:
    message = "The compiled grammar is too large, which would cause performance issues. Simplify your tool schemas or reduce the number of strict tools."
    cmd = failing(emu, HttpError(400, message))
    with pytest.raises(SchemaRejectedError, match="grammar"):
        call(cmd, "q")


def test_spend_limit_is_not_retried(emu: Emulator, call: Call) -> None:
    body = {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "spend limit reached",
            "details": {"error_code": "enforced_spend_limit_reached"},
        },
        "request_id": "req_x",
    }
    cmd = failing(emu, ReplyRaw.json(body, status=429), ReplyJson({"value": 1.0}))
    with pytest.raises(RateLimitError) as info:
        call(cmd, "q")
    assert info.value.transient is False
    assert len(bodies(emu)) == 1


def test_timeout(emu: Emulator, call: Call) -> None:
    cmd = failing(emu, Slow(1.0), retries=0, timeout=0.2)
    with pytest.raises(ProviderTimeoutError):
        call(cmd, "q")


def test_dropped_connection(emu: Emulator, call: Call) -> None:
    cmd = failing(emu, Disconnect(), retries=0)
    with pytest.raises(ProviderConnectionError):
        call(cmd, "q")


def test_dropped_connection_is_retried(emu: Emulator, call: Call, sleeps: list[float]) -> None:
    cmd = failing(emu, Disconnect(), ReplyJson({"value": 8.0}))
    assert call(cmd, "q") == 8.0


def test_cut_body(emu: Emulator, call: Call) -> None:
    cmd = failing(emu, CutStream(reply=ReplyJson({"value": 1.0})), retries=0)
    with pytest.raises(ProviderConnectionError):
        call(cmd, "q")


def chat_command(retries: int) -> Any:
    @command(model=M, retries=retries)
    def chat(q: str) -> str:
        return q

    return chat


def test_cut_stream(emu: Emulator, stream: Any) -> None:
    emu.push(
        "anthropic",
        CutStream(after=4, reply=ReplyText("a long answer that will be cut off part way")),
    )
    with pytest.raises(ProviderConnectionError):
        stream(chat_command(0), "q")


def test_stream_error_event(emu: Emulator, stream: Any) -> None:
    emu.push(
        "anthropic", StreamError(after=3, reply=ReplyText("a long answer interrupted by an error"))
    )
    with pytest.raises(ServerError, match="overloaded_error") as info:
        stream(chat_command(0), "q")
    assert info.value.transient


def test_stream_error_event_is_retried(emu: Emulator, stream: Any, sleeps: list[float]) -> None:
    emu.push("anthropic", StreamError(after=1, reply=ReplyText("x")), ReplyText("recovered"))
    assert "".join(stream(chat_command(1), "q")).endswith("recovered")


# -- recorded exchanges, replayed through the SDK ------------------------------------------------


def test_replay_structured_output(emu: Emulator, call: Call) -> None:
    @command(output=City, model=M)
    def tell(q: str) -> str:
        return q

    emu.replay(RECORDED / "structured_output_no_tools.json")
    assert call(tell, "Tell me about London") == City(
        city="London", country="United Kingdom", population=9002488
    )


def test_replay_strict_tool_then_structured_output(emu: Emulator, call: Call) -> None:
    def lookup_country(city: str) -> str:
        """Country of a city."""
        return "France"

    @command(output=City, model=M, tools=[lookup_country])
    def details(q: str) -> str:
        return q

    emu.replay(RECORDED / "strict_tool_plus_structured_output.json")
    result = call(details, "Give me details about Paris")
    assert result == City(city="Paris", country="France", population=2161000)
    second = bodies(emu)[1]
    assert second["messages"][1]["content"][0]["id"] == "toolu_01PPTvKs3rE6VohQPGEwqsTZ"
    assert second["messages"][2]["content"][0]["content"] == "France"


def test_replay_forced_output_tool(emu: Emulator, call: Call) -> None:
    final_result = create_model("final_result", city=(str, ...), country=(str, ...))

    def get_user_country() -> str:
        """The user's country."""
        return "Mexico"

    @command(output=final_result, model=M, output_mode="tool", tools=[get_user_country])
    def largest(q: str) -> str:
        return q

    emu.replay(RECORDED / "tool_use_round_trip_forced_output_tool.json")
    value = call(largest, "What is the largest city in the user country?")
    assert (value.city, value.country) == ("Mexico City", "Mexico")
    first = bodies(emu)[0]
    assert first["tool_choice"] == {"type": "any"}


def test_replay_stream_text(emu: Emulator, stream: Any) -> None:
    @command(model=M)
    def add(q: str) -> str:
        return q

    emu.replay(RECORDED / "stream_text.json")
    assert stream(add, "What is 1+1?") == ["2"]


# -- what goes through the SDK matches the captured SDK requests ---------------------------------


def test_wire_bodies_match_captured(emu: Emulator) -> None:
    @command(model=M, max_tokens=256)
    def hello(q: str) -> str:
        return q

    emu.push("anthropic", ReplyText("hi"))
    hello("Say hello")
    assert emu.last_request("anthropic").body == captured_body("messages.text")
    list(hello.stream("Say hello"))
    assert shape(emu.last_request("anthropic").body) == shape(captured_body("messages.stream"))

    def get_weather(city: str, unit: Literal["c", "f"]) -> str:
        """Get current weather"""
        return "21.5"

    @command(model=M, max_tokens=256, tools=[get_weather])
    def weather(q: str) -> str:
        return q

    emu.push(
        "anthropic",
        ReplyToolCalls(("get_weather", {"city": "Paris", "unit": "c"})),
        ReplyText("21.5C"),
    )
    weather("Weather in Paris?")
    first, second = (r.body for r in emu.requests_for("anthropic")[-2:])
    assert shape(first) == shape(captured_body("messages.tool"))
    assert shape(second) == shape(captured_body("messages.tool_final"))


# -- finish reasons, usage, thinking blocks, client reuse ----------------------------------------


def test_refusal_becomes_its_error(emu: Emulator, call: Call) -> None:
    emu.push("anthropic", ReplyRefusal("I can't help with that."))
    with pytest.raises(RefusalError, match="can't help"):
        call(failing(emu), "q")


def test_max_tokens_becomes_truncation(emu: Emulator, call: Call) -> None:
    emu.push("anthropic", ReplyMaxTokens('{"value": 1'))
    with pytest.raises(TruncatedOutputError):
        call(failing(emu), "q")


def test_usage_is_summed_over_turns(emu: Emulator, run_result: Call) -> None:
    @command(output=float, model=M, tools=[get_weather])
    def temp(q: str) -> str:
        return q

    emu.push(
        "anthropic", ReplyToolCalls(("get_weather", {"city": "Oslo"})), ReplyJson({"value": 1.0})
    )
    usage = run_result(temp, "q").usage
    assert usage.requests == 2 and usage.input_tokens > 0 and usage.output_tokens > 0


def thinking_then_tool() -> dict[str, Any]:
    return {
        "id": "msg_01think",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [
            {"type": "thinking", "thinking": "I should look it up.", "signature": "EqQBCgIYAhIM"},
            {
                "type": "tool_use",
                "id": "toolu_01think",
                "name": "get_weather",
                "input": {"city": "Oslo"},
            },
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 20,
            "output_tokens_details": {"thinking_tokens": 8},
        },
    }


def test_thinking_blocks_are_echoed_with_the_tool_use(emu: Emulator, run_result: Call) -> None:
    thinking = {"type": "enabled", "budget_tokens": 1024}

    @command(
        output=float,
        model=M,
        tools=[get_weather],
        max_tokens=2048,
        extra_json={"thinking": thinking},
    )
    def temp(q: str) -> str:
        return q

    emu.push("anthropic", ReplyRaw.json(thinking_then_tool()), ReplyJson({"value": 2.0}))
    result = run_result(temp, "q")
    assert result.value == 2.0 and result.usage.reasoning_tokens == 8
    assistant = bodies(emu)[1]["messages"][1]["content"]
    assert assistant[0] == {
        "type": "thinking",
        "thinking": "I should look it up.",
        "signature": "EqQBCgIYAhIM",
    }
    assert assistant[1]["type"] == "tool_use" and assistant[1]["id"] == "toolu_01think"


def test_clients_are_built_once(emu: Emulator) -> None:
    from alloy.providers import get_model

    @command(model=M)
    def chat(q: str) -> str:
        return q

    emu.push("anthropic", ReplyText("a"), ReplyText("b"))
    model = get_model(M)
    assert isinstance(model, AnthropicModel)
    assert chat("1") == "a"
    client = model.client()
    assert chat("2") == "b"
    assert model.client() is client and get_model(M) is model
    assert client.max_retries == 0


def test_a_content_block_without_a_type_is_an_unreadable_reply(emu: Emulator, call: Call) -> None:
    reply = thinking_then_tool()
    reply["content"][0] = {"thinking": "no type here"}
    emu.push("anthropic", ReplyRaw.json(reply), ReplyJson({"value": 2.0}))

    @command(output=float, model=M, tools=[get_weather], retries=0)
    def temp(q: str) -> str:
        return q

    with pytest.raises(UnreadableResponseError, match="content block 0 has no 'type'"):
        call(temp, "q")
    assert len(bodies(emu)) == 1


def test_a_streamed_content_block_without_a_type_is_an_unreadable_reply(emu: Emulator) -> None:
    parser = StreamParser()
    with pytest.raises(UnreadableResponseError, match="content block 0 has no 'type'"):
        parser.feed({"type": "content_block_start", "index": 0, "content_block": {"text": ""}})


def test_blank_text_is_not_sent_and_nothing_left_is_a_configuration_error() -> None:
    history = (user("Hi"), ModelTurn((Text("  \n"),)), user("  ", "And now?"))
    texts = [{"type": "text", "text": "Hi"}, {"type": "text", "text": "And now?"}]
    assert build_messages(history) == [{"role": "user", "content": texts}]
    with pytest.raises(ConfigurationError, match="nothing to send"):
        build_messages((user("   "),))
    assert "system" not in build(request(user("Hi"), system="  "), MODEL, CAPS)


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t"])
def test_an_empty_prompt_is_refused_before_sending(emu: Emulator, prompt: str) -> None:
    @command(model=M, retries=3)
    def ask(q: str) -> str:
        return q

    with pytest.raises(ConfigurationError, match="nothing to send"):
        ask(prompt)
    assert bodies(emu) == []


def test_alloys_conversations_pass_the_checks_the_api_makes(emu: Emulator) -> None:
    """A tool round, a re-ask of an invalid forced output call (Claude 4.0: tool mode) and
    blank text in the history: every body alloy sends passes the emulator's copy of the API's
    message rules (a test that passes here passes against the provider)."""
    from alloy import Assistant, User
    from alloy.testing.emulator._anthropic import check_messages

    emu.push(
        "anthropic",
        ReplyToolCalls(("get_weather", {"city": "Oslo"}), text="Let me check."),
        ReplyToolCalls(("float", {"value": "warm"})),  # invalid: re-asked as the call's result
        ReplyToolCalls(("float", {"value": 21.0})),
    )

    @command(output=float, model="anthropic:claude-sonnet-4-0", tools=[get_weather], retries=0)
    def temp(city: str) -> str:
        return f"Temperature in {city}?"

    history = [User("Hi"), Assistant("Hello."), User("  \n", "Weather please.")]
    assert temp("Oslo", history=history) == 21.0
    sent = bodies(emu)
    assert len(sent) == 3
    for body in sent:
        check_messages(body["messages"])
