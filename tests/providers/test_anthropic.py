"""The Anthropic adapter's pure parts: request building, response and stream parsing, error
mapping and capabilities, checked against the captured SDK requests and the recorded bodies."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from pydantic import BaseModel

from alloy._engine import FINALIZE_SCHEMA_PROMPT
from alloy._output import JsonOutput
from alloy._types import (
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
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
    SchemaRejectedError,
    ServerError,
)
from alloy.providers._anthropic_dialect import anthropic_schema
from alloy.providers.anthropic import (
    DEFAULT_MAX_TOKENS,
    AnthropicModel,
    StreamParser,
    build,
    capabilities_for,
    parse,
    sdk_kwargs,
    supports_native_output,
)
from alloy.testing.emulator._schema_rules import anthropic_problem

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
    return Request(model=f"anthropic:{MODEL}", messages=messages, settings=settings, **kwargs)


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
    kwargs = model._kwargs(request(user("Say hello"), tools=tools), stream=True)
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
    kwargs = AnthropicModel(MODEL, api_key="k")._kwargs(req, stream=False)
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
        usage.output_tokens,
        usage.reasoning_tokens,
    ) == (115, 100, 30, 12)


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
    assert caps.native_schema and caps.strict_tools and caps.tools and caps.streaming
    assert caps.default_output_mode() == "native" and caps.dialect == "anthropic"


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
