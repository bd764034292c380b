"""The Gemini adapter through the real google-genai SDK against the emulator, sync and async,
plus its pure parts (request building, response parsing) against captured and recorded bodies."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from pydantic import BaseModel

from alloy import command
from alloy._output import JsonOutput
from alloy._types import (
    Media,
    ModelSettings,
    ModelTurn,
    Opaque,
    OutputSpec,
    Request,
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
    ContentFilteredError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
    SchemaRejectedError,
    ServerError,
    TruncatedOutputError,
    UnreadableResponseError,
)
from alloy.providers._gemini_dialect import gemini_schema
from alloy.providers.gemini import (
    GeminiModel,
    build,
    capabilities_for,
    create,
    finish_reason,
    json_with_tools,
    parse,
    parse_body,
    tool_response,
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
    ReplyToolCall,
    ReplyToolCalls,
    SchemaRejected,
    Slow,
    StreamError,
    Unauthorized,
)
from alloy.testing.emulator._schema_rules import gemini_problem

from .output_types import City, Point, Trip

SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
CAPTURED = json.loads((SHARED / "sdk_captured" / "gemini.json").read_text())["cases"]
RECORDED = SHARED / "recorded" / "gemini"
MODEL = "gemini-3-flash"
OLD_MODEL = "gemini-2.5-flash"


# -- helpers -------------------------------------------------------------------------------------


def opts(emu: Emulator, model: str = MODEL, **extra: Any) -> dict[str, Any]:
    """Command options pointing the adapter at the emulator (explicit key and base URL)."""
    return {
        "model": f"gemini:{model}",
        "api_key": "test-key",
        "base_url": emu.gemini_base_url,
        **extra,
    }


def bodies(emu: Emulator) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests_for("gemini")]


def config(body: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = body.get("generationConfig", {})
    return found


# -- typed outputs, sync and async -----------------------------------------------------------------

OUTPUTS: list[tuple[Any, Any, Any]] = [
    (float, {"value": 21.5}, 21.5),
    (bool, {"value": True}, True),
    (Point, {"x": 1, "y": 2}, Point(1, 2)),
    (City, {"name": "Paris", "population": 2100000}, City(name="Paris", population=2100000)),
    (list[int], {"value": [1, 2, 3]}, [1, 2, 3]),
    (int | None, {"value": None}, None),
    (int | str, {"value": "seven"}, "seven"),
    (
        Trip,
        {"title": "t", "stops": [{"name": "Lyon", "population": 5}], "mode": "train", "note": None},
        Trip(title="t", stops=[City(name="Lyon", population=5)], mode="train", note=None),
    ),
]


@pytest.mark.parametrize(("output", "reply", "expected"), OUTPUTS, ids=lambda v: str(v)[:30])
def test_typed_outputs_use_native_json_schema(
    emu: Emulator, call: Any, output: Any, reply: Any, expected: Any
) -> None:
    emu.push("gemini", ReplyJson(reply))

    @command(output=output, **opts(emu))
    def ask(q: str) -> str:
        return q

    assert call(ask, "question") == expected
    cfg = config(emu.last_request("gemini").body)
    assert cfg["responseMimeType"] == "application/json"
    sent = cfg["responseJsonSchema"]
    assert "responseSchema" not in cfg
    assert gemini_problem(sent) is None
    assert sent == gemini_schema(ask.schema)


def test_default_answers_from_the_emulator_validate(emu: Emulator, call: Any) -> None:
    @command(output=Trip, **opts(emu))
    def plan(q: str) -> str:
        return q

    assert isinstance(call(plan, "a trip"), Trip)


def test_text_output_and_usage(emu: Emulator, run_result: Any) -> None:
    emu.push("gemini", ReplyText("Hello there"))

    @command(**opts(emu))
    def hello() -> str:
        return "Say hello"

    result = run_result(hello)
    assert result.value == "Hello there"
    assert result.usage.requests == 1
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert "generationConfig" not in emu.last_request("gemini").body


# -- tools ------------------------------------------------------------------------------------------


def weather(city: str) -> dict[str, Any]:
    """Current weather in a city."""
    return {"city": city, "temp_c": 21.5}


def forecast(city: str) -> list[int]:
    """Three-day forecast (a list result)."""
    return [20, 21, 22]


def humidity(city: str) -> int:
    """Humidity in percent (a scalar result)."""
    return 40


def broken(city: str) -> str:
    """Always fails."""
    raise RuntimeError("sensor offline")


def test_tool_round_trip_echoes_id_and_thought_signature(emu: Emulator, call: Any) -> None:
    signature = b"\x00\x01opaque-signature\xff"
    emu.push(
        "gemini",
        ReplyToolCalls(ReplyToolCall("weather", {"city": "Paris"}, id="fc_1", signature=signature)),
        ReplyJson({"value": 21.5}),
    )

    @command(output=float, tools=[weather], **opts(emu))
    def temp(city: str) -> str:
        return f"Temperature in {city}?"

    assert call(temp, "Paris") == 21.5
    first, second = bodies(emu)
    declaration = first["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "weather"
    assert declaration["parameters_json_schema"]["properties"]["city"] == {"type": "string"}
    model_turn, results = second["contents"][1], second["contents"][2]
    assert model_turn["role"] == "model"
    part = model_turn["parts"][0]
    assert part["functionCall"] == {"id": "fc_1", "name": "weather", "args": {"city": "Paris"}}
    assert base64.urlsafe_b64decode(part["thoughtSignature"]) == signature
    assert results == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "fc_1",
                    "name": "weather",
                    "response": {"city": "Paris", "temp_c": 21.5},
                }
            }
        ],
    }


def test_parallel_calls_and_non_object_results(emu: Emulator, call: Any) -> None:
    emu.push(
        "gemini",
        ReplyToolCalls(
            ("forecast", {"city": "Rome"}),
            ("humidity", {"city": "Rome"}),
            ("broken", {"city": "Rome"}),
        ),
        ReplyText("Warm and dry."),
    )

    @command(tools=[forecast, humidity, broken], **opts(emu))
    def report(city: str) -> str:
        return f"Weather report for {city}"

    assert call(report, "Rome") == "Warm and dry."
    second = bodies(emu)[1]
    calls = [p["functionCall"] for p in second["contents"][1]["parts"]]
    assert [c["id"] for c in calls] == ["call_0", "call_1", "call_2"]
    responses = [p["functionResponse"] for p in second["contents"][2]["parts"]]
    assert [r["id"] for r in responses] == ["call_0", "call_1", "call_2"]
    assert responses[0]["response"] == {"result": [20, 21, 22]}
    assert responses[1]["response"] == {"result": 40}
    assert set(responses[2]["response"]) == {"error"}
    assert "sensor offline" in responses[2]["response"]["error"]


def test_tool_response_wrapping() -> None:
    assert tool_response(ToolResult("c", "t", '{"a": 1}')) == {"a": 1}
    assert tool_response(ToolResult("c", "t", "[1, 2]")) == {"result": [1, 2]}
    assert tool_response(ToolResult("c", "t", "3")) == {"result": 3}
    assert tool_response(ToolResult("c", "t", "plain words")) == {"result": "plain words"}
    assert tool_response(ToolResult("c", "t", "Error: boom", is_error=True)) == {
        "error": "Error: boom"
    }


def test_auto_finalize_sends_one_more_turn_without_tools(emu: Emulator, call: Any) -> None:
    emu.push(
        "gemini",
        ReplyToolCalls(("weather", {"city": "Oslo"})),
        ReplyEmpty(),
        ReplyJson({"value": 3.0}),
    )

    @command(output=float, tools=[weather], **opts(emu))
    def temp(city: str) -> str:
        return f"Temperature in {city}?"

    assert call(temp, "Oslo") == 3.0
    first, second, third = bodies(emu)
    assert "tools" in first and "tools" in second
    assert "tools" not in third and "toolConfig" not in third
    # The empty model turn is not sent (Gemini rejects empty contents); the prompt says why.
    roles = [c["role"] for c in third["contents"]]
    assert roles == ["user", "model", "user", "user"]
    assert "final answer" in third["contents"][-1]["parts"][0]["text"]
    assert config(third)["responseMimeType"] == "application/json"


def test_forced_tool_output_mode(emu: Emulator, call: Any) -> None:
    @command(output=City, tools=[weather], output_mode="tool", **opts(emu))
    def biggest(country: str) -> str:
        return f"Largest city in {country}?"

    assert isinstance(call(biggest, "France"), City)
    body = emu.last_request("gemini").body
    calling = body["toolConfig"]["functionCallingConfig"]
    assert calling["mode"] == "ANY"
    assert calling["allowedFunctionNames"] == ["City", "weather"]
    names = [d["name"] for d in body["tools"][0]["functionDeclarations"]]
    assert names == ["weather", "City"]
    assert "responseMimeType" not in config(body)


def test_reask_after_invalid_forced_output_answers_the_call(emu: Emulator, call: Any) -> None:
    emu.push(
        "gemini",
        ReplyToolCalls(ReplyToolCall("City", {"name": "Lyon"}, id="out_1")),
        ReplyToolCalls(("City", {"name": "Lyon", "population": 5})),
    )

    @command(output=City, output_mode="tool", **opts(emu))
    def biggest(country: str) -> str:
        return f"Largest city in {country}?"

    assert call(biggest, "France") == City(name="Lyon", population=5)
    second = bodies(emu)[1]
    assert second["contents"][1]["parts"][0]["functionCall"]["id"] == "out_1"
    reask = second["contents"][2]
    assert reask["role"] == "user" and len(reask["parts"]) == 1
    response = reask["parts"][0]["functionResponse"]
    assert (response["id"], response["name"]) == ("out_1", "City")
    assert "population" in response["response"]["error"]


def test_gemini_2_native_output_with_tools_goes_as_a_function(emu: Emulator, call: Any) -> None:
    """Gemini 2.x rejects JSON mode next to function declarations; the answer comes back through
    an output function instead and is read as the native answer's text."""
    emu.push(
        "gemini",
        ReplyToolCalls(("weather", {"city": "Nice"})),
        ReplyToolCalls(("float", {"value": 19.0})),
    )

    @command(output=float, tools=[weather], **opts(emu, OLD_MODEL))
    def temp(city: str) -> str:
        return f"Temperature in {city}?"

    result = temp.run("Nice") if call.mode == "sync" else asyncio.run(temp.arun("Nice"))
    assert result.value == 19.0
    first, second = bodies(emu)
    for body in (first, second):
        assert "responseMimeType" not in config(body)
        assert body["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"] == [
            "float",
            "weather",
        ]
    final_turn = result.transcript.messages[-1]
    assert isinstance(final_turn, ModelTurn)
    assert final_turn.parts == (Text('{"value": 19.0}'),)


def test_gemini_2_without_tools_uses_json_mode(emu: Emulator, call: Any) -> None:
    @command(output=float, **opts(emu, OLD_MODEL))
    def temp(city: str) -> str:
        return city

    call(temp, "x")
    assert config(emu.last_request("gemini").body)["responseMimeType"] == "application/json"


# -- streaming ---------------------------------------------------------------------------------------


def test_stream_text(emu: Emulator, stream: Any) -> None:
    emu.push("gemini", ReplyText("The quick brown fox jumps over the lazy dog."))

    @command(**opts(emu))
    def story() -> str:
        return "Tell me"

    chunks = stream(story)
    assert len(chunks) > 1
    assert "".join(chunks) == "The quick brown fox jumps over the lazy dog."
    assert emu.last_request("gemini").path.endswith(":streamGenerateContent")
    assert emu.last_request("gemini").query == {"alt": ["sse"]}


def test_stream_with_tools_runs_the_loop(emu: Emulator, stream: Any) -> None:
    emu.push(
        "gemini",
        ReplyToolCalls(("weather", {"city": "Bern"})),
        ReplyText("It is 21.5 degrees in Bern."),
    )

    @command(tools=[weather], **opts(emu))
    def report(city: str) -> str:
        return f"Weather in {city}?"

    assert "".join(stream(report, "Bern")) == "It is 21.5 degrees in Bern."
    second = bodies(emu)[1]
    assert second["contents"][2]["parts"][0]["functionResponse"]["response"]["temp_c"] == 21.5


def test_cut_stream_is_a_connection_error(emu: Emulator, stream: Any) -> None:
    emu.push("gemini", CutStream(after=1, reply=ReplyText("a long answer that is cut off midway")))

    @command(retries=0, **opts(emu))
    def story() -> str:
        return "Tell me"

    with pytest.raises(ProviderConnectionError):
        stream(story)


def test_error_inside_stream_is_retried(emu: Emulator, stream: Any) -> None:
    emu.push("gemini", StreamError(after=0), ReplyText("Recovered fine."))

    @command(retries=1, **opts(emu))
    def story() -> str:
        return "Tell me"

    assert "".join(stream(story)) == "Recovered fine."
    assert len(bodies(emu)) == 2


def test_error_inside_stream_without_retries(emu: Emulator, stream: Any) -> None:
    emu.push("gemini", StreamError(after=1, reply=ReplyText("Some text that breaks off")))

    @command(retries=0, **opts(emu))
    def story() -> str:
        return "Tell me"

    with pytest.raises(ServerError):
        stream(story)


# -- faults -----------------------------------------------------------------------------------------


def test_rate_limit_is_retried_after_retry_info(emu: Emulator, call: Any) -> None:
    emu.push("gemini", RateLimited(retry_after=0.01), ReplyJson({"value": 1.0}))

    @command(output=float, retries=2, **opts(emu))
    def one() -> str:
        return "one"

    assert call(one) == 1.0
    assert len(bodies(emu)) == 2


def test_rate_limit_carries_retry_after(emu: Emulator, call: Any) -> None:
    emu.push("gemini", RateLimited(retry_after=7))

    @command(output=float, retries=0, **opts(emu))
    def one() -> str:
        return "one"

    with pytest.raises(RateLimitError) as info:
        call(one)
    assert info.value.retry_after == 7.0
    assert info.value.status_code == 429


@pytest.mark.parametrize(
    "fault",
    [Overloaded(retry_after_ms=1), HttpError(500, retry_after_ms=1), HttpError(504)],
    ids=["503", "500", "504-backoff"],
)
def test_server_errors_are_retried(emu: Emulator, call: Any, fault: Any) -> None:
    emu.push("gemini", fault, ReplyJson({"value": 2.0}))

    @command(output=float, retries=1, **opts(emu))
    def two() -> str:
        return "two"

    assert call(two) == 2.0
    assert len(bodies(emu)) == 2


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (HttpError(400), BadRequestError),
        (Unauthorized(), AuthenticationError),
        (HttpError(403), AuthenticationError),
        (SchemaRejected(), SchemaRejectedError),
    ],
    ids=["400", "401", "403", "schema"],
)
def test_client_errors_are_not_retried(emu: Emulator, call: Any, fault: Any, error: type) -> None:
    emu.push("gemini", fault, ReplyJson({"value": 2.0}))

    @command(output=float, retries=3, **opts(emu))
    def two() -> str:
        return "two"

    with pytest.raises(error) as info:
        call(two)
    assert len(bodies(emu)) == 1
    assert info.value.attempts == 1
    assert "test-key" not in str(info.value)


def test_invalid_key_is_an_authentication_error(emu: Emulator, call: Any) -> None:
    body = {
        "error": {
            "code": 400,
            "message": "API key not valid. Please pass a valid API key.",
            "status": "INVALID_ARGUMENT",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}
            ],
        }
    }
    emu.push("gemini", ReplyRaw.json(body, status=400))

    @command(output=float, retries=3, **opts(emu))
    def two() -> str:
        return "two"

    with pytest.raises(AuthenticationError):
        call(two)
    assert len(bodies(emu)) == 1


def test_timeout(emu: Emulator, call: Any) -> None:
    emu.push("gemini", Slow(1.0))

    @command(output=float, retries=0, timeout=0.2, **opts(emu))
    def slow() -> str:
        return "slow"

    with pytest.raises(ProviderTimeoutError) as info:
        call(slow)
    # google-genai sends through httpx2 (installed here), whose timeout is mapped; the SDK's
    # exception is not chained (its request carries the key).
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_dropped_connection(emu: Emulator, call: Any) -> None:
    emu.push("gemini", Disconnect())

    @command(output=float, retries=0, **opts(emu))
    def dropped() -> str:
        return "dropped"

    with pytest.raises(ProviderConnectionError) as info:
        call(dropped)
    assert "RemoteProtocolError" in str(info.value)
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_dropped_connection_is_retried(emu: Emulator, call: Any) -> None:
    emu.push("gemini", Disconnect(), ReplyJson({"value": 5.0}))

    @command(output=float, retries=1, **opts(emu))
    def dropped() -> str:
        return "dropped"

    assert call(dropped) == 5.0


def test_refused_connection(call: Any) -> None:
    @command(
        output=float, retries=0, model=f"gemini:{MODEL}", api_key="k", base_url="http://127.0.0.1:9"
    )
    def nowhere() -> str:
        return "x"

    with pytest.raises(ProviderConnectionError):
        call(nowhere)


@pytest.mark.parametrize(
    ("exc", "error"),
    [
        (httpx.ConnectError("refused"), ProviderConnectionError),
        (httpx.ReadTimeout("slow"), ProviderTimeoutError),
        (httpx2.ConnectTimeout("slow"), ProviderTimeoutError),
        (httpx2.ReadError("reset"), ProviderConnectionError),
        (ConnectionResetError("reset"), ProviderConnectionError),
    ],
    ids=str,
)
def test_transport_errors_of_either_http_library(exc: Exception, error: type) -> None:
    """GOOGLE_GENAI_HTTP_CLIENT=httpx switches the SDK to classic httpx: both are mapped."""
    mapped = create(MODEL, api_key="k").map_error(exc)
    assert isinstance(mapped, error) and mapped.transient


def test_api_errors_by_code() -> None:
    from google.genai import errors

    model = create(MODEL, api_key="secret-key")
    body = {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}
    mapped = model.map_error(errors.ServerError(503, body))
    assert isinstance(mapped, ServerError) and mapped.status_code == 503
    body = {"error": {"code": 400, "message": "bad secret-key", "status": "INVALID_ARGUMENT"}}
    mapped = model.map_error(errors.ClientError(400, body))
    assert isinstance(mapped, BadRequestError) and "secret-key" not in str(mapped)
    assert model.map_error(ValueError("not ours")) is None


def test_truncation_and_content_filter(emu: Emulator, call: Any) -> None:
    emu.push("gemini", ReplyMaxTokens('{"value": '), ReplyRefusal())

    @command(output=float, **opts(emu))
    def one() -> str:
        return "one"

    with pytest.raises(TruncatedOutputError):
        call(one)
    with pytest.raises(ContentFilteredError):
        call(one)


def test_prompt_block_is_content_filter() -> None:
    response = parse_body({"promptFeedback": {"blockReason": "SAFETY"}})
    assert response.finish_reason == "content_filter"
    assert response.provider_details["block_reason"] == "SAFETY"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"),
        ("BLOCKLIST", "content_filter"),
        ("SPII", "content_filter"),
        ("RECITATION", "content_filter"),
        ("MALFORMED_FUNCTION_CALL", "stop"),
        (None, "stop"),
    ],
)
def test_finish_reasons(raw: str | None, expected: str) -> None:
    assert finish_reason(raw) == expected


# -- settings, keys and URLs -------------------------------------------------------------------------


def test_settings_reach_the_wire(emu: Emulator, call: Any) -> None:
    emu.push("gemini", ReplyJson({"value": 1.0}))

    @command(
        output=float,
        temperature=0.3,
        max_tokens=77,
        system="Be brief.",
        timeout=12.5,
        extra_json={"generationConfig": {"topK": 7}, "labels": {"team": "a"}},
        **opts(emu),
    )
    def one() -> str:
        return "one"

    call(one)
    request = emu.last_request("gemini")
    body = request.body
    assert config(body)["temperature"] == 0.3
    assert config(body)["maxOutputTokens"] == 77
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}], "role": "user"}
    assert request.header("x-server-timeout") == "13"  # 12.5 s -> 12500 ms, sent in seconds
    assert config(body)["topK"] == 7
    assert config(body)["responseMimeType"] == "application/json"  # merged, not replaced
    assert body["labels"] == {"team": "a"}


def test_timeout_is_sent_in_milliseconds() -> None:
    request = Request(
        model="gemini:x",
        messages=(UserTurn((Text("hi"),)),),
        settings=ModelSettings(timeout=2.5),
    )
    assert build(request, MODEL)["config"]["http_options"] == {"timeout": 2500}


def test_env_vars_configure_key_and_base_url(emu: Emulator, call: Any) -> None:
    emu.push("gemini", ReplyJson({"value": 4.0}))

    @command(output=float, model=f"gemini:{MODEL}")
    def four() -> str:
        return "four"

    assert call(four) == 4.0
    assert emu.last_request("gemini").header("x-goog-api-key") == "alloy-emulator-key"


@pytest.mark.parametrize("emu", [{"GEMINI_API_KEY": None}], indirect=True, ids=["no-key"])
def test_google_api_key_env(emu: Emulator, call: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    emu.push("gemini", ReplyJson({"value": 4.0}))

    @command(output=float, model=f"gemini:{MODEL}")
    def four() -> str:
        return "four"

    assert call(four) == 4.0
    assert emu.last_request("gemini").header("x-goog-api-key") == "google-key"


def test_missing_key_is_a_configuration_error(call: Any) -> None:
    @command(output=float, model=f"gemini:{MODEL}")
    def four() -> str:
        return "four"

    with pytest.raises(ConfigurationError, match="GEMINI_API_KEY"):
        call(four)


def test_client_is_built_once_and_reused(emu: Emulator) -> None:
    model = create(MODEL, api_key="k", base_url=emu.gemini_base_url)
    assert model.client() is model.client()
    request = Request(model="gemini:x", messages=(UserTurn((Text("hi"),)),))
    model.request(request)
    model.request(request)

    async def twice() -> None:
        first = model.aclient()
        await model.arequest(request)
        assert model.aclient() is first

    asyncio.run(twice())


def test_capabilities() -> None:
    caps = capabilities_for(MODEL)
    assert (caps.native_schema, caps.tools, caps.strict_tools) == (True, True, False)
    assert isinstance(create("", api_key="k"), GeminiModel)
    assert json_with_tools("gemini-3-pro") and json_with_tools("gemini-flash-latest")
    assert not json_with_tools("gemini-2.5-flash") and not json_with_tools(
        "models/gemini-2.0-flash"
    )


# -- recorded exchanges ------------------------------------------------------------------------------


def recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RECORDED / name).read_text())
    return data


class CityLocation(BaseModel):
    city: str
    country: str


def test_recorded_structured_output_replays(emu: Emulator, call: Any) -> None:
    emu.replay(RECORDED / "structured_output_response_json_schema.json")

    @command(output=CityLocation, **opts(emu, "gemini-2.0-flash"))
    def largest(country: str) -> str:
        return f"What is the largest city in {country}?"

    assert call(largest, "Mexico") == CityLocation(city="Mexico City", country="Mexico")
    body = recorded("structured_output_response_json_schema.json")["interactions"][0]
    parsed = parse_body(body["response"]["body"])
    assert CityLocation.model_validate_json(parsed.text).city == "Mexico City"
    assert parsed.usage.input_tokens == 8 and parsed.usage.output_tokens == 20


class final_result(BaseModel):  # named as the recording's output function
    city: str
    country: str


def test_recorded_forced_output_tool_replays(emu: Emulator, call: Any) -> None:
    emu.replay(RECORDED / "function_call_round_trip_forced_output_tool.json")

    def get_user_country() -> str:
        """The user's country."""
        return "Mexico"

    @command(
        output=final_result,
        tools=[get_user_country],
        output_mode="tool",
        **opts(emu, "gemini-2.0-flash"),
    )
    def largest() -> str:
        return "What is the largest city in the user country?"

    assert call(largest) == final_result(city="Mexico City", country="Mexico")
    second = bodies(emu)[1]
    assert second["contents"][2]["parts"][0]["functionResponse"]["response"] == {"result": "Mexico"}
    turns = recorded("function_call_round_trip_forced_output_tool.json")["interactions"]
    first_reply = parse_body(turns[0]["response"]["body"])
    assert [(c.name, dict(c.args)) for c in first_reply.tool_calls] == [("get_user_country", {})]
    assert first_reply.finish_reason == "tool_calls"
    second_reply = parse_body(turns[1]["response"]["body"])
    assert [(c.name, dict(c.args)) for c in second_reply.tool_calls] == [
        ("final_result", {"city": "Mexico City", "country": "Mexico"})
    ]


def test_recorded_stream_replays(emu: Emulator, stream: Any) -> None:
    emu.replay(RECORDED / "stream_text.json")

    @command(**opts(emu, "gemini-2.0-flash-exp"))
    def capital() -> str:
        return "What is the capital of France?"

    assert "".join(stream(capital)) == "The capital of France is Paris.\n"


# -- what is sent matches what the SDK sends for the same case ------------------------------------

SCHEMA_KEYS = {"responseJsonSchema", "parameters_json_schema"}


def shape(value: Any) -> Any:
    """Keys and nesting; schemas compared separately; ``id`` keys (which alloy always sends so
    results pair with calls, even when the model gave none) are set aside."""
    if isinstance(value, dict):
        return {
            k: ("<schema>" if k in SCHEMA_KEYS else shape(v)) for k, v in value.items() if k != "id"
        }
    if isinstance(value, list):
        return [shape(v) for v in value]
    return type(value).__name__


def captured(case: str) -> dict[str, Any]:
    requests = CAPTURED[case]["requests"]
    body: dict[str, Any] = (requests[0] if isinstance(requests, list) else requests)["body"]
    return body


WEATHER_SCHEMA = captured("structured_json_schema")["generationConfig"]["responseJsonSchema"]
TOOL = captured("tool_parameters_json_schema")["tools"][0]["functionDeclarations"][0]
TOOL_DEF = ToolDefinition(TOOL["name"], TOOL["description"], TOOL["parameters_json_schema"])


def send(emu: Emulator, request: Request, *, stream: bool = False) -> dict[str, Any]:
    model = create("gemini-2.5-flash", api_key="k", base_url=emu.gemini_base_url)
    if stream:
        list(model.stream(request))
    else:
        model.request(request)
    body: dict[str, Any] = emu.last_request("gemini").body
    return body


def user(text: str) -> UserTurn:
    return UserTurn((Text(text),))


@pytest.mark.parametrize(
    ("case", "request_", "streamed"),
    [
        ("text", Request(model="m", messages=(user("Say hello"),)), False),
        (
            "structured_json_schema",
            Request(
                model="m",
                messages=(user("Weather in Paris?"),),
                output=OutputSpec("weather", WEATHER_SCHEMA),
            ),
            False,
        ),
        (
            "tool_parameters_json_schema",
            Request(model="m", messages=(user("Weather in Paris?"),), tools=(TOOL_DEF,)),
            False,
        ),
        (
            "tool_final",
            Request(
                model="m",
                messages=(
                    user("Weather in Paris?"),
                    ModelTurn((ToolCall("c1", "get_weather", {"city": "Paris", "unit": "c"}),)),
                    UserTurn((ToolResult("c1", "get_weather", '{"temp_c": 21.5}'),)),
                ),
                tools=(TOOL_DEF,),
            ),
            False,
        ),
        ("stream", Request(model="m", messages=(user("Say hello"),)), True),
        (
            "stream_tool",
            Request(model="m", messages=(user("Weather?"),), tools=(TOOL_DEF,)),
            True,
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_sent_body_matches_captured_sdk_request(
    emu: Emulator, case: str, request_: Request, streamed: bool
) -> None:
    body = send(emu, request_, stream=streamed)
    expected = captured(case)
    assert shape(body) == shape(expected)
    assert emu.last_request("gemini").path == CAPTURED[case]["requests"]["path"]
    if "generationConfig" in expected and "responseJsonSchema" in expected["generationConfig"]:
        assert (
            config(body)["responseJsonSchema"] == expected["generationConfig"]["responseJsonSchema"]
        )
    if "tools" in expected:
        assert body["tools"] == expected["tools"]


def test_tool_final_echoes_ids_on_both_sides(emu: Emulator) -> None:
    request = Request(
        model="m",
        messages=(
            user("Weather in Paris?"),
            ModelTurn(
                (
                    Opaque("gemini", {"thought_signature": "c2ln", "call_id": "c1"}),
                    ToolCall("c1", "get_weather", {"city": "Paris", "unit": "c"}),
                )
            ),
            UserTurn((ToolResult("c1", "get_weather", '{"temp_c": 21.5}'),)),
        ),
        tools=(TOOL_DEF,),
    )
    body = send(emu, request)
    call_part = body["contents"][1]["parts"][0]
    assert call_part["functionCall"]["id"] == "c1"
    assert base64.urlsafe_b64decode(call_part["thoughtSignature"]) == b"sig"
    assert body["contents"][2]["parts"][0]["functionResponse"]["id"] == "c1"


def test_text_signature_is_echoed_on_the_text_part(emu: Emulator) -> None:
    request = Request(
        model="m",
        messages=(
            user("hi"),
            ModelTurn((Opaque("gemini", {"thought_signature": "c2ln"}), Text("hello"))),
            user("again"),
        ),
    )
    parts = send(emu, request)["contents"][1]["parts"]
    assert len(parts) == 1 and parts[0]["text"] == "hello"
    assert base64.urlsafe_b64decode(parts[0]["thoughtSignature"]) == b"sig"


def test_thought_signature_parsed_into_opaque_parts() -> None:
    body = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "thinking...", "thought": True},
                        {
                            "functionCall": {"id": "x9", "name": "f", "args": {"a": 1}},
                            "thoughtSignature": "c2lnbmF0dXJl",
                        },
                    ],
                },
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 10,
            "candidatesTokenCount": 5,
            "thoughtsTokenCount": 7,
            "cachedContentTokenCount": 4,
        },
    }
    response = parse_body(body)
    assert response.text == ""  # thought summaries are not the answer
    assert response.tool_calls == (ToolCall("x9", "f", {"a": 1}),)
    assert (
        Opaque("gemini", {"thought_signature": "c2lnbmF0dXJl", "call_id": "x9"}) in response.parts
    )
    assert response.finish_reason == "tool_calls"
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cached_tokens) == (10, 12, 4)
    assert usage.reasoning_tokens == 7 and usage.requests == 1


def test_media_parts() -> None:
    request = Request(
        model="m",
        messages=(
            UserTurn(
                (
                    Text("describe"),
                    Media("image", "image/png", data=base64.b64encode(b"png-bytes").decode()),
                    Media("pdf", "application/pdf", url="https://example.com/a.pdf"),
                )
            ),
        ),
    )
    from google.genai import types

    (turn,) = build(request, MODEL)["contents"]
    parts = types.Content.model_validate(turn).parts
    assert parts is not None
    assert parts[1].inline_data.data == b"png-bytes"
    assert parts[1].inline_data.mime_type == "image/png"
    assert parts[2].file_data.file_uri == "https://example.com/a.pdf"


def test_a_prompt_of_one_text_is_passed_as_that_string() -> None:
    request = Request(model="m", messages=(user("x"),))
    model = create(MODEL, api_key="k")
    assert model.sdk_arguments(model.build(request, stream=False))["contents"] == "x"


def test_another_single_turn_is_passed_as_one_content() -> None:
    request = Request(model="m", messages=(UserTurn((Text("x"), Text("y"))),))
    model = create(MODEL, api_key="k")
    single = model.sdk_arguments(model.build(request, stream=False))["contents"]
    assert single.role == "user" and [p.text for p in single.parts] == ["x", "y"]


def test_a_lone_text_and_its_content_send_the_same_body(emu: Emulator) -> None:
    """The string form is only cheaper for the SDK: what reaches the server is the same."""
    from google import genai

    emu.push("gemini", ReplyText("a"), ReplyText("b"))
    client = genai.Client()
    request = Request(model="m", messages=(user("Say hi"),))
    arguments = create(MODEL, api_key="k").sdk_arguments(build(request, MODEL))
    assert arguments["contents"] == "Say hi"
    client.models.generate_content(**arguments)
    client.models.generate_content(model=MODEL, contents=build(request, MODEL)["contents"])
    first, second = emu.requests_for("gemini")
    assert first.body == second.body


def test_a_conversation_is_passed_as_content_dicts() -> None:
    """Dicts cost google-genai a fifth of what Content objects do in a list (see build())."""
    from google.genai import types

    call = ToolCall("c1", "lookup", {"q": "x"})
    request = Request(
        model="m",
        messages=(
            user("x"),
            ModelTurn((call,)),
            UserTurn((ToolResult("c1", "lookup", '{"hits": 2}'),)),
        ),
    )
    items = build(request, MODEL)["contents"]
    assert all(isinstance(item, dict) for item in items)
    turns = [types.Content.model_validate(item) for item in items]
    assert [t.role for t in turns] == ["user", "model", "user"]
    assert turns[1].parts[0].function_call.args == {"q": "x"}
    assert turns[2].parts[0].function_response.response == {"hits": 2}


def test_the_request_is_plain_json_and_its_config_object_is_made_at_send_time() -> None:
    """SDK objects are made only at send time, from JSON that round-trips unchanged."""
    import json

    from google.genai import types

    from alloy.providers.gemini import GeminiModel

    request = Request(model="m", messages=(user("x"),), tools=(TOOL_DEF,))
    body = build(request, MODEL)
    assert json.loads(json.dumps(body)) == body
    model = GeminiModel(MODEL)
    timed = {**body, "config": {**body["config"], "http_options": {"timeout": 1500}}}
    config = model.sdk_arguments(timed)["config"]
    assert isinstance(config, types.GenerateContentConfig)
    assert config.http_options.timeout == 1500 and config.tools


def test_automatic_function_calling_is_off() -> None:
    request = Request(model="m", messages=(user("x"),), tools=(TOOL_DEF,))
    cfg = build(request, MODEL)["config"]
    assert cfg["automatic_function_calling"] == {"disable": True}
    assert "response_schema" not in cfg


def test_dialect_schema_for_recursive_output_passes_rules() -> None:
    class Node(BaseModel):
        value: int
        children: list[Node]

    schema = JsonOutput(Node).schema
    request = Request(model="m", messages=(user("x"),), output=OutputSpec("Node", schema))
    sent = build(request, MODEL)["config"]["response_json_schema"]
    assert gemini_problem(sent) is None
    assert "$defs" in sent


# -- whole replies read as wire JSON -------------------------------------------------------------

WIRE_REPLIES = [
    {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "thinking", "thought": True},
                        {"text": "Hello "},
                        {"text": "there", "thoughtSignature": "c2ln"},
                        {"functionCall": {"name": "f", "args": {"a": [1, 2.5]}}},
                        {
                            "functionCall": {"id": "x", "name": "g", "args": {}},
                            "thoughtSignature": "YWJj",
                        },
                    ],
                },
                "finishReason": "STOP",
            }
        ],
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r-1",
        "usageMetadata": {
            "promptTokenCount": 10,
            "toolUsePromptTokenCount": 2,
            "candidatesTokenCount": 5,
            "thoughtsTokenCount": 7,
            "cachedContentTokenCount": 4,
        },
    },
    {"candidates": [{"content": {"parts": [{"text": "cut"}]}, "finishReason": "MAX_TOKENS"}]},
    {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}},
    {"candidates": [{"content": {"parts": [{"functionCall": {"name": "Out", "args": {"v": 1}}}]}}]},
    {},
]


@pytest.mark.parametrize("body", WIRE_REPLIES)
@pytest.mark.parametrize("output_tool", [None, "Out"])
def test_a_wire_reply_reads_as_the_sdks_object_of_it_does(
    body: dict[str, Any], output_tool: str | None
) -> None:
    from google.genai import types

    sdk_object = types.GenerateContentResponse.model_validate(body)
    assert parse_body(body, output_tool=output_tool) == parse(sdk_object, output_tool=output_tool)


@pytest.mark.parametrize("path", sorted(RECORDED.glob("*.json")), ids=lambda p: p.stem)
def test_recorded_whole_replies_read_as_the_sdks_objects_of_them_do(path: Path) -> None:
    from google.genai import types

    for turn in json.loads(path.read_text())["interactions"]:
        body = turn["response"].get("body")  # a stream's chunks have other readers
        if isinstance(body, dict):
            sdk_object = types.GenerateContentResponse.model_validate(body)
            assert parse_body(body) == parse(sdk_object)


def test_a_typed_calls_body_is_what_the_sdk_sends_for_it(emu: Emulator) -> None:
    """The reply is asked for as the HTTP body (should_return_http_response), which the SDK
    keeps to itself: the request on the wire is the one its own call sends."""
    from google import genai
    from google.genai import types

    paris = {"city": "Paris", "country": "France"}
    emu.push("gemini", ReplyJson(paris), ReplyJson(paris))

    @command(output=CityLocation, model=f"gemini:{MODEL}")
    def city() -> str:
        return "A city?"

    assert city().city == "Paris"
    schema = emu.last_request("gemini").body["generationConfig"]["responseJsonSchema"]
    client = genai.Client()  # kept: a client collected mid-call closes its connections
    client.models.generate_content(
        model=MODEL,
        contents="A city?",
        config=types.GenerateContentConfig(
            response_mime_type="application/json", response_json_schema=schema
        ),
    )
    ours, theirs = emu.requests_for("gemini")
    assert (ours.path, ours.body) == (theirs.path, theirs.body)


def test_a_call_without_a_config_sends_no_empty_generation_config(emu: Emulator) -> None:
    emu.push("gemini", ReplyText("hi"))

    @command(model=f"gemini:{MODEL}")
    def hello() -> str:
        return "Say hi."

    assert hello() == "hi"
    assert "generationConfig" not in emu.last_request("gemini").body


class _Answer:
    """What ``generate_content`` returns when asked for the HTTP body."""

    def __init__(self, body: str) -> None:
        self.sdk_http_response = type("HttpResponse", (), {"body": body})()


class _Models:
    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.calls: list[dict[str, Any]] = []

    def generate_content(self, **arguments: Any) -> Any:
        self.calls.append(arguments)
        return self.answers.pop(0)


def _client(models: _Models) -> Any:
    client = type("Client", (), {})()
    client.models = models
    return client


def test_a_generation_the_server_continues_is_followed_and_joined() -> None:
    """Asked for the HTTP body, google-genai does not follow a continuation token: the adapter
    resumes from it through the SDK's own call, which follows any further ones, and joins the
    hops as the SDK would (parts in order, token counts summed, the last finish reason)."""
    from google.genai import types

    first = {
        "candidates": [
            {
                "content": {"parts": [{"text": '{"city": "Pa'}]},
                "finishReason": "CONTINUATION",
                "continuationToken": base64.b64encode(b"tok-1").decode(),
            }
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 3},
        "modelVersion": "gemini-2.5-flash",
    }
    rest = types.GenerateContentResponse.model_validate(
        {
            "candidates": [{"content": {"parts": [{"text": 'ris"}'}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2},
            "modelVersion": "gemini-2.5-flash",
            "responseId": "r-2",
        }
    )
    models = _Models(_Answer(json.dumps(first)), rest)
    model = create(MODEL, api_key="k")
    spec = OutputSpec("City", {"type": "object", "properties": {"city": {"type": "string"}}})
    request = Request(model=f"gemini:{MODEL}", messages=(user("A city?"),), output=spec)
    reply = model.send(_client(models), model.build(request, stream=False), request)
    response = model.parse(reply, request)
    asked, resumed = models.calls
    assert asked["config"].should_return_http_response is True
    assert resumed["config"].continuation_token == b"tok-1"
    assert not resumed["config"].should_return_http_response
    assert resumed["contents"] == asked["contents"] == "A city?"
    assert response.text == '{"city": "Paris"}'
    assert response.parts == (Text('{"city": "Pa'), Text('ris"}'))
    assert (response.usage.input_tokens, response.usage.output_tokens) == (20, 5)
    assert (response.finish_reason, response.response_id) == ("stop", "r-2")


def test_a_whole_reply_that_is_not_json_is_unreadable() -> None:
    models = _Models(_Answer("<html>busy</html>"))
    model = create(MODEL, api_key="k")
    spec = OutputSpec("City", {"type": "object", "properties": {"city": {"type": "string"}}})
    request = Request(model=f"gemini:{MODEL}", messages=(user("A city?"),), output=spec)
    with pytest.raises(UnreadableResponseError, match=r"could not read .*<html>busy"):
        model.call(model.send, _client(models), model.build(request, stream=False), request)
