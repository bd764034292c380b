"""AWS Bedrock Converse (``bedrock:``): the adapter's pure parts, the emulator's Converse wire
(event-stream framing included), and typed calls through the real boto3 client pointed at the
emulator with ``endpoint_url`` (a Bedrock API key by default; SigV4 with dummy credentials where
a test says so, with instance metadata off so botocore never probes it)."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from dataclasses import dataclass
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer

from alloy import command
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
    CommandError,
    ConfigurationError,
    ProviderConnectionError,
    RateLimitError,
    RefusalError,
    SchemaRejectedError,
    ServerError,
    TruncatedOutputError,
)
from alloy.pricing import price_for
from alloy.providers import bedrock, providers
from alloy.providers.bedrock import (
    StreamParser,
    base_model_id,
    build,
    capabilities_for,
    parse,
    sdk_params,
)
from alloy.testing.emulator import (
    Emulator,
    HttpError,
    RateLimited,
    ReplyJson,
    ReplyMaxTokens,
    ReplyRaw,
    ReplyRefusal,
    ReplyText,
    ReplyToolCalls,
    StreamError,
    Unauthorized,
)
from alloy.testing.emulator._app import App
from alloy.testing.emulator._bedrock import event
from alloy.testing.emulator._eventstream import message
from alloy.testing.emulator._http import Incoming

from ..conftest import Call
from .planned import as_planned

CLAUDE = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
NOVA = "amazon.nova-lite-v1:0"
M = f"bedrock:{CLAUDE}"
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
    "required": ["city", "country"],
    "additionalProperties": False,
}
WEATHER_TOOL = ToolDefinition(
    "get_weather",
    "Current weather",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    strict=True,
)


@dataclass
class Capital:
    city: str
    country: str


def user(*parts: Any) -> UserTurn:
    return UserTurn(tuple(Text(p) if isinstance(p, str) else p for p in parts))


def request(*messages: Any, model: str = CLAUDE, **kwargs: Any) -> Request:
    settings = kwargs.pop("settings", ModelSettings())
    return as_planned(
        Request(model=f"bedrock:{model}", messages=messages, settings=settings, **kwargs)
    )


def body_for(req: Request, model: str = CLAUDE) -> dict[str, Any]:
    return build(req, model, capabilities_for(model))


def bodies(emu: Emulator) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests if r.provider == "bedrock"]


# -- model ids, capabilities, prices ---------------------------------------------------------


@pytest.mark.parametrize(
    ("model_id", "base"),
    [
        ("us.anthropic.claude-haiku-4-5-20251001-v1:0", "anthropic.claude-haiku-4-5"),
        ("global.anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-sonnet-4-5"),
        ("eu.anthropic.claude-3-7-sonnet-20250219-v1:0", "anthropic.claude-3-7-sonnet"),
        ("anthropic.claude-3-haiku-20240307-v1:0", "anthropic.claude-3-haiku"),
        ("amazon.nova-lite-v1:0", "amazon.nova-lite"),
        ("apac.amazon.nova-pro-v1:0", "amazon.nova-pro"),
        ("meta.llama3-3-70b-instruct-v1:0", "meta.llama3-3-70b-instruct"),
        (
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0",
            "anthropic.claude-haiku-4-5",
        ),
        (
            "arn:aws:bedrock:us-west-2::foundation-model/anthropic.claude-sonnet-4-20250514-v1:0",
            "anthropic.claude-sonnet-4",
        ),
    ],
)
def test_model_ids_are_normalised_for_family_and_price(model_id: str, base: str) -> None:
    assert base_model_id(model_id) == base


@pytest.mark.parametrize(
    ("model_id", "native"),
    [
        (CLAUDE, True),
        ("global.anthropic.claude-sonnet-4-5-20250929-v1:0", True),
        # Bedrock lists structured outputs from Claude 4.5 on (Anthropic's API from 4.1).
        ("anthropic.claude-opus-4-1-20250805-v1:0", False),
        ("us.anthropic.claude-sonnet-4-20250514-v1:0", False),
        ("anthropic.claude-3-haiku-20240307-v1:0", False),
        (NOVA, False),
        ("meta.llama3-3-70b-instruct-v1:0", False),
    ],
)
def test_claude_with_structured_outputs_is_native_and_other_families_use_a_tool(
    model_id: str, native: bool
) -> None:
    caps = capabilities_for(model_id)
    assert caps.native_schema is native and caps.strict_tools is native and caps.tools


@pytest.mark.parametrize("model_id", providers()["bedrock"].example_models)
def test_every_example_model_has_a_price(model_id: str) -> None:
    assert price_for(f"bedrock:{model_id}") is not None


def test_regional_profiles_of_claude_4_5_cost_ten_percent_more_than_global() -> None:
    regional = price_for(f"bedrock:{CLAUDE}")
    world = price_for("bedrock:global.anthropic.claude-haiku-4-5-20251001-v1:0")
    assert regional is not None and world is not None
    assert world.input == 1.0 and regional.input == pytest.approx(1.1)


# -- request building ------------------------------------------------------------------------


def test_native_output_sends_text_format_with_the_schema_as_a_json_string() -> None:
    spec = OutputSpec("Capital", SCHEMA, mode="native")
    body = body_for(request(user("Capital of France?"), output=spec, system="Be brief."))
    fmt = body["outputConfig"]["textFormat"]
    assert fmt["type"] == "json_schema"
    definition = fmt["structure"]["jsonSchema"]
    assert definition["name"] == "Capital" and json.loads(definition["schema"]) == SCHEMA
    assert body["system"] == [{"text": "Be brief."}]
    assert body["messages"] == [{"role": "user", "content": [{"text": "Capital of France?"}]}]
    assert "toolConfig" not in body


def test_tool_mode_forces_the_output_tool() -> None:
    spec = OutputSpec("Capital", SCHEMA, mode="tool")
    body = body_for(request(user("hi"), output=spec, model=NOVA), NOVA)
    config = body["toolConfig"]
    assert config["toolChoice"] == {"tool": {"name": "Capital"}}
    assert config["tools"][0]["toolSpec"]["name"] == "Capital"
    assert "strict" not in config["tools"][0]["toolSpec"]  # Nova has no strict tools


def test_tool_mode_on_a_model_without_named_tool_choice_forces_the_output_tool_with_any() -> None:
    # Converse documents a named toolChoice for Claude and Nova only; with the output tool
    # alone, ``any`` forces it.
    llama = "meta.llama3-3-70b-instruct-v1:0"
    spec = OutputSpec("Capital", SCHEMA, mode="tool")
    body = body_for(request(user("hi"), output=spec, model=llama), llama)
    assert body["toolConfig"]["toolChoice"] == {"any": {}}
    assert [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]] == ["Capital"]


def test_tool_mode_with_the_commands_tools_asks_for_any_tool() -> None:
    spec = OutputSpec("Capital", SCHEMA, mode="tool")
    body = body_for(request(user("hi"), output=spec, tools=(WEATHER_TOOL,)))
    assert body["toolConfig"]["toolChoice"] == {"any": {}}
    names = [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]]
    assert names == ["get_weather", "Capital"]
    assert body["toolConfig"]["tools"][0]["toolSpec"]["strict"] is True


@pytest.mark.parametrize(
    ("choice", "sent"),
    [("required", {"any": {}}), ("get_weather", {"tool": {"name": "get_weather"}})],
)
def test_forced_tool_use(choice: str, sent: dict[str, Any]) -> None:
    body = body_for(request(user("hi"), tools=(WEATHER_TOOL,), tool_choice=choice))
    assert body["toolConfig"]["toolChoice"] == sent


def test_settings_reach_inference_config() -> None:
    settings = ModelSettings(max_tokens=123, temperature=0.2)
    body = body_for(request(user("hi"), settings=settings))
    assert body["inferenceConfig"] == {"maxTokens": 123, "temperature": 0.2}


def test_reasoning_effort_is_refused_with_the_way_to_send_thinking() -> None:
    with pytest.raises(ConfigurationError, match="additionalModelRequestFields"):
        body_for(request(user("hi"), settings=ModelSettings(reasoning_effort="high")))


def test_prompt_cache_puts_cache_points_after_tools_system_and_the_last_message() -> None:
    settings = ModelSettings(prompt_cache=True)
    body = body_for(request(user("hi"), system="sys", tools=(WEATHER_TOOL,), settings=settings))
    point = {"cachePoint": {"type": "default"}}
    assert body["toolConfig"]["tools"][-1] == point
    assert body["system"][-1] == point
    assert body["messages"][-1]["content"][-1] == point


def test_a_tool_round_trip_and_a_reask_keep_the_conversation_valid() -> None:
    call = ToolCall("tooluse_1", "get_weather", {"city": "Paris"})
    messages = (
        user("Weather?"),
        ModelTurn((Text("Checking."), call)),
        UserTurn((ToolResult("tooluse_1", "get_weather", "21C"),)),
        ModelTurn((ToolCall("tooluse_2", "Capital", {"city": 1}),)),
        UserTurn((RetryPrompt("city must be a string"),)),
    )
    body = body_for(request(*messages))
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    assert body["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "21C"}]}}
    ]
    reask = body["messages"][4]["content"][0]["toolResult"]
    assert reask["toolUseId"] == "tooluse_2" and reask["status"] == "error"
    # No tools offered now, yet the history holds tool blocks: they are declared as stubs.
    stubs = [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]]
    assert stubs == ["get_weather", "Capital"] and "toolChoice" not in body["toolConfig"]


def test_media_go_as_bytes_and_reasoning_is_sent_back() -> None:
    png = base64.b64encode(b"\x89PNG fake").decode()
    reasoning = {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "s"}}}
    messages = (
        user("Look", Media("image", "image/png", data=png)),
        ModelTurn((Opaque("bedrock", reasoning), Text("A picture."))),
        user("And this?", Media("document", "application/pdf", data=png)),
    )
    body = body_for(request(*messages))
    json.dumps(body)  # the body stays JSON (the cache keys it); bytes are made for boto3 only
    params = sdk_params(body)
    image = params["messages"][0]["content"][1]["image"]
    assert image == {"format": "png", "source": {"bytes": b"\x89PNG fake"}}
    assert params["messages"][1]["content"][0] == reasoning
    assert params["messages"][2]["content"][1]["document"]["format"] == "pdf"


def test_media_by_url_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="inline"):
        body_for(request(user("Look", Media("image", "image/png", url="https://x/y.png"))))


# -- reading replies -------------------------------------------------------------------------


def reply(*content: Any, stop: str = "end_turn", **usage: int) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": list(content)}},
        "stopReason": stop,
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15, **usage},
    }


def test_usage_counts_cache_reads_and_writes_as_input() -> None:
    response = parse(reply({"text": "hi"}, cacheReadInputTokens=100, cacheWriteInputTokens=20))
    usage = response.usage
    assert usage.input_tokens == 130 and usage.cached_tokens == 100
    assert usage.cache_write_tokens == 20 and usage.output_tokens == 5


@pytest.mark.parametrize(
    ("stop", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("guardrail_intervened", "refusal"),
        ("content_filtered", "content_filter"),
    ],
)
def test_stop_reasons(stop: str, finish: str) -> None:
    assert parse(reply({"text": "x"}, stop=stop)).finish_reason == finish


def test_a_guardrail_is_a_refusal_with_its_text() -> None:
    response = parse(reply({"text": "Sorry, blocked."}, stop="guardrail_intervened"))
    assert response.refusal == "Sorry, blocked."


def test_tool_use_and_reasoning_blocks_are_read() -> None:
    reasoning = {"reasoningContent": {"reasoningText": {"text": "t", "signature": "s"}}}
    use = {"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {"city": "Paris"}}}
    response = parse(reply(reasoning, use, stop="tool_use"))
    assert response.tool_calls == (ToolCall("t1", "get_weather", {"city": "Paris"}),)
    assert Opaque("bedrock", reasoning) in response.parts


def test_a_reply_without_an_output_message_is_refused() -> None:
    with pytest.raises(ValueError, match="output"):
        parse({"ResponseMetadata": {}})


def test_the_stream_parser_folds_text_tools_and_usage() -> None:
    parser = StreamParser()
    events = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hel"}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "lo"}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 1,
                "start": {"toolUse": {"toolUseId": "t1", "name": "get_weather"}},
            }
        },
        {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"ci'}}}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 1,
                "delta": {"toolUse": {"input": 'ty":"P"}'}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 1}},
        {"messageStop": {"stopReason": "tool_use"}},
        {"metadata": {"usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}}},
    ]
    deltas = [d for e in events for d in parser.feed(e)]
    assert len(deltas) == 5
    response = parser.response()
    assert response.text == "Hello" and response.finish_reason == "tool_calls"
    assert response.tool_calls == (ToolCall("t1", "get_weather", {"city": "P"}),)
    assert response.usage.input_tokens == 3 and response.usage.output_tokens == 4


def test_a_stream_without_its_metadata_event_was_cut() -> None:
    parser = StreamParser()
    parser.feed({"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hel"}}})
    with pytest.raises(ProviderConnectionError):
        parser.response()


# -- the emulator's wire -----------------------------------------------------------------------


def test_event_messages_pass_botocores_checksums() -> None:
    buffer = EventStreamBuffer()
    buffer.add_data(event("messageStart", {"role": "assistant"}))
    buffer.add_data(message({":message-type": "exception"}, b'{"message":"x"}'))
    first, second = list(buffer)
    assert first.headers[":event-type"] == "messageStart"
    assert json.loads(first.payload) == {"role": "assistant"}
    assert second.headers[":message-type"] == "exception"


def converse(app: App, body: dict[str, Any], model: str = CLAUDE) -> tuple[int, Any]:
    incoming = Incoming(
        "POST",
        f"/model/{model}/converse",
        {},
        {"authorization": "Bearer test-key-0123456789"},
        json.dumps(body).encode(),
    )
    outcome: Any = app.handle(incoming)
    return outcome.status, json.loads(outcome.body)


HI = [{"role": "user", "content": [{"text": "hi"}]}]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"messages": HI, "temperature": 0.5}, "extraneous key [temperature]"),
        ({"messages": [{"role": "assistant", "content": [{"text": "x"}]}]}, "start with a user"),
        ({"messages": HI + HI}, "alternate"),
        ({"messages": [{"role": "user", "content": [{"text": "  "}]}]}, "is blank"),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"toolResult": {"toolUseId": "a", "content": []}}]}
                ]
            },
            "toolConfig field must be defined",
        ),
        (
            {
                "messages": HI,
                "toolConfig": {
                    "tools": [{"toolSpec": {"name": "a", "inputSchema": {"json": {}}}}],
                    "toolChoice": {"tool": {"name": "b"}},
                },
            },
            "toolChoice",
        ),
        (
            {
                "messages": HI,
                "outputConfig": {
                    "textFormat": {
                        "type": "json_schema",
                        "structure": {"jsonSchema": {"schema": {}}},
                    }
                },
            },
            "must be a string",
        ),
    ],
)
def test_the_emulator_refuses_what_converse_refuses(body: dict[str, Any], message: str) -> None:
    status, answer = converse(App(), body)
    assert status == 400 and message in answer["message"]


def test_the_emulator_refuses_a_schema_bedrock_rejects() -> None:
    loose = {"type": "object", "properties": {"a": {"type": "string"}}}  # no additionalProperties
    fmt = {"type": "json_schema", "structure": {"jsonSchema": {"schema": json.dumps(loose)}}}
    status, answer = converse(App(), {"messages": HI, "outputConfig": {"textFormat": fmt}})
    assert status == 400 and "additionalProperties" in answer["message"]


# -- through boto3 and the emulator ------------------------------------------------------------


def capital_command(model: str = M, **options: Any) -> Any:
    @command(output=Capital, model=model, **options)
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    return capital


def test_a_typed_call_sends_native_structured_output(emu: Emulator, call: Call) -> None:
    emu.push("bedrock", ReplyJson({"city": "Paris", "country": "France"}))
    assert call(capital_command(), "France") == Capital("Paris", "France")
    sent = emu.requests[-1]
    assert sent.path == f"/model/{CLAUDE}/converse"
    assert sent.header("authorization") == "Bearer alloy-emulator-key"
    assert json.loads(sent.body["outputConfig"]["textFormat"]["structure"]["jsonSchema"]["schema"])


def test_a_model_without_structured_outputs_answers_through_a_forced_tool(
    emu: Emulator, call: Call
) -> None:
    assert isinstance(call(capital_command(f"bedrock:{NOVA}"), "France"), Capital)
    body = bodies(emu)[0]
    assert body["toolConfig"]["toolChoice"] == {"tool": {"name": "Capital"}}
    assert "outputConfig" not in body


def get_weather(city: str) -> str:
    """Current weather in a city."""
    return f"{city}: 21C"


def test_a_tool_round_trip(emu: Emulator, call: Call) -> None:
    @command(output=float, model=M, tools=[get_weather])
    def temp(city: str) -> str:
        return f"Temperature in {city}?"

    emu.push(
        "bedrock",
        ReplyToolCalls(("get_weather", {"city": "Paris"}), text="Checking."),
        ReplyJson({"value": 21.0}),
    )
    assert call(temp, "Paris") == 21.0
    first, second = bodies(emu)
    assert first["toolConfig"]["tools"][0]["toolSpec"]["name"] == "get_weather"
    result = second["messages"][2]["content"][0]["toolResult"]
    assert result["content"] == [{"text": "Paris: 21C"}]


def test_text_streams_through_the_event_stream(emu: Emulator, stream: Any) -> None:
    @command(model=M)
    def chat(q: str) -> str:
        return q

    text = "Streaming from the emulator, in several pieces."
    emu.push("bedrock", ReplyText(text))
    chunks = stream(chat, "hi")
    assert len(chunks) > 1 and "".join(chunks) == text
    assert emu.requests[-1].path == f"/model/{CLAUDE}/converse-stream"


def test_typed_partials_stream(emu: Emulator) -> None:
    emu.push("bedrock", ReplyJson({"city": "Paris", "country": "France"}))
    partials = list(capital_command().stream_partial("France"))
    assert len(partials) > 2 and partials[-1].complete
    assert partials[-1].data == {"city": "Paris", "country": "France"}


def test_a_typed_async_stream_of_a_tool_mode_model(emu: Emulator) -> None:
    async def collect() -> list[Any]:
        cmd = capital_command(f"bedrock:{NOVA}")
        return [p async for p in cmd.astream_partial("France")]

    partials = asyncio.run(collect())
    assert partials[-1].complete
    assert bodies(emu)[0]["toolConfig"]["toolChoice"] == {"tool": {"name": "Capital"}}


def test_the_result_has_usage_and_a_cost(emu: Emulator) -> None:
    result = capital_command().run("France")
    assert result.usage.input_tokens > 0 and result.cost is not None and result.cost > 0
    assert result.model == M


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (HttpError(400), BadRequestError),
        (Unauthorized(), AuthenticationError),
        (HttpError(403), AuthenticationError),
        (HttpError(500), ServerError),
        (ReplyMaxTokens(), TruncatedOutputError),
        (ReplyRefusal(), RefusalError),
    ],
)
def test_errors_and_stop_reasons_map_to_alloys(emu: Emulator, fault: Any, error: Any) -> None:
    emu.push("bedrock", fault)
    with pytest.raises(CommandError) as caught:
        capital_command(retries=0)("France")
    assert isinstance(caught.value, error)


def test_a_schema_bedrock_rejects_is_a_schema_rejection(emu: Emulator) -> None:
    emu.push("bedrock", HttpError(400, message="The provided JSON schema is not supported."))
    with pytest.raises(SchemaRejectedError):
        capital_command(retries=0)("France")


def test_throttling_is_a_rate_limit_that_is_retried(emu: Emulator, sleeps: list[float]) -> None:
    emu.push("bedrock", RateLimited(), ReplyJson({"city": "Paris", "country": "France"}))
    assert capital_command(retries=1)("France") == Capital("Paris", "France")
    assert len(sleeps) == 1
    emu.push("bedrock", RateLimited())
    with pytest.raises(RateLimitError):
        capital_command(retries=0)("France")


def test_an_exception_inside_a_stream_is_a_transient_server_error(emu: Emulator) -> None:
    @command(model=M, retries=0)
    def chat(q: str) -> str:
        return q

    emu.push("bedrock", StreamError(after=2, reply=ReplyText("a long answer " * 4)))
    with pytest.raises(ServerError) as caught:
        "".join(chat.stream("hi"))
    assert caught.value.transient


@pytest.fixture
def sigv4(emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Emulator:
    """Dummy AWS credentials, no Bedrock API key, no files or instance metadata to read."""
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLEKEY123456")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-access-key-0123456789abcdef")
    return emu


def test_the_aws_credential_chain_signs_with_sigv4_for_the_region(
    sigv4: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    assert isinstance(capital_command()("France"), Capital)
    auth = sigv4.requests[-1].header("authorization") or ""
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIAEXAMPLEKEY123456/")
    assert "/eu-west-3/bedrock/aws4_request" in auth


def test_the_region_option_wins(sigv4: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    model = bedrock.create(CLAUDE, base_url=sigv4.url, region="ap-south-1")
    assert isinstance(capital_command(model)("France"), Capital)
    assert "/ap-south-1/bedrock/" in (sigv4.requests[-1].header("authorization") or "")


def test_a_secret_the_chain_resolved_never_reaches_an_error(sigv4: Emulator) -> None:
    secret = "secret-access-key-0123456789abcdef"
    sigv4.push("bedrock", HttpError(400, message=f"bad signature for {secret}"))
    with pytest.raises(BadRequestError) as caught:
        capital_command(retries=0)("France")
    assert secret not in str(caught.value) and "***" in str(caught.value)


def test_no_credentials_at_all_is_a_configuration_error(
    sigv4: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(ConfigurationError, match="AWS_BEARER_TOKEN_BEDROCK"):
        capital_command(retries=0)("France")
    assert not sigv4.requests


def test_no_region_and_no_endpoint_is_a_configuration_error(
    sigv4: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError, match="AWS_REGION"):
        capital_command(retries=0)("France")


def test_botocores_debug_records_show_no_credential(
    sigv4: Emulator, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    token = "session-token-0123456789abcdefghij"
    monkeypatch.setenv("AWS_SESSION_TOKEN", token)
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    caplog.set_level(logging.DEBUG)
    sigv4.push("bedrock", HttpError(400, message=f"token {token} refused"))
    with pytest.raises(BadRequestError):
        capital_command(retries=0)("France")
    records = [r.getMessage() for r in caplog.records]
    assert any(r.name.startswith("botocore") for r in caplog.records)
    assert sigv4.requests[-1].header("x-amz-security-token") == token
    for text in records:
        assert token not in text and "secret-access-key-0123456789abcdef" not in text


EXPIRED = ReplyRaw(
    403,
    b'{"message":"The security token included in the request is expired"}',
    headers=(("x-amzn-ErrorType", "ExpiredTokenException"),),
)


def test_expired_credentials_are_read_again_once_without_a_retry(
    sigv4: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    sigv4.push("bedrock", EXPIRED, ReplyJson({"city": "Paris", "country": "France"}))
    assert capital_command(retries=0)("France") == Capital("Paris", "France")
    assert len(sigv4.requests) == 2
    sigv4.push("bedrock", EXPIRED, EXPIRED)
    with pytest.raises(AuthenticationError):
        capital_command(retries=0)("France")
    assert len(sigv4.requests) == 4


def test_a_401_reads_the_credential_chain_again_once_without_a_retry(
    sigv4: Emulator, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    sigv4.push("bedrock", ReplyJson({"city": "Paris", "country": "France"}))
    assert capital_command(retries=0)("France") == Capital("Paris", "France")
    rotated = "rotated-secret-0123456789abcdefghij"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAROTATEDKEY654321")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", rotated)
    caplog.set_level(logging.DEBUG)
    sigv4.push("bedrock", Unauthorized(), ReplyJson({"city": "Oslo", "country": "Norway"}))

    assert capital_command(retries=0)("Norway") == Capital("Oslo", "Norway")

    signed = [r.header("authorization") or "" for r in sigv4.requests]
    assert len(signed) == 3 and "Credential=AKIAEXAMPLEKEY123456/" in signed[1]
    assert "Credential=AKIAROTATEDKEY654321/" in signed[2]
    assert all(rotated not in r.getMessage() for r in caplog.records)
    sigv4.push("bedrock", Unauthorized(), Unauthorized())
    with pytest.raises(AuthenticationError) as raised:
        capital_command(retries=0)("France")
    assert len(sigv4.requests) == 5 and rotated not in str(raised.value)


def test_a_bedrock_api_key_is_not_refreshed(emu: Emulator) -> None:
    emu.push("bedrock", EXPIRED)
    with pytest.raises(AuthenticationError):
        capital_command(retries=0)("France")
    assert len(emu.requests) == 1
